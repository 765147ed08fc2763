// SPDX-License-Identifier: Apache-2.0
// What a running process already holds, from the fake backend's shared device ledger: the
// baseline `attach` starts from, so a process that allocated before the probes existed
// shows its true usage (exact tracking follows from there).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fgtrace {

struct BaselineEntry {
  int32_t device;  // the ordinal the process uses for it
  uint32_t kind;   // 0 device, 1 managed, 2 pinned host (enum fg_mem_kind)
  uint64_t bytes;
};

// The process's books in the ledger its environment selects (FAKEGPU_LEDGER, else the
// default path for its user), or nullopt when it uses none the collector can read (not a
// fake-backend process, FAKEGPU_ISOLATED, or an unreadable or foreign ledger file).
std::optional<std::vector<BaselineEntry>> backend_baseline(int pid);

// A fake GPU as the backend's shared device ledgers describe it (what its NVML reports):
// the host-wide ledgers in `shm_dir` (fakegpu-*.v<N>.ledger) and those the given processes
// use. One device per ordinal: where ledgers number devices alike, the one with the most live
// processes wins. A process counts as live while it runs (a crashed one's slot does not).
struct BackendDevice {
  int32_t ordinal = -1;  // as the processes using it number it (none: its ledger position)
  std::string uuid;      // "GPU-…"
  std::string name;
  uint64_t total = 0;
  uint64_t used = 0;  // device + managed bytes of every live process
};
// by_pid (optional): each given process's devices as its own ledger describes them (the
// capacity the process itself sees, whichever ledger wins an ordinal host-wide).
std::vector<BackendDevice> backend_devices(const std::vector<int>& pids, const std::string& shm_dir = "/dev/shm",
                                           std::map<int, std::vector<BackendDevice>>* by_pid = nullptr);

// Where the fake backend's arena of device memory for each device begins in process pid
// (its "/memfd:fakegpu-device-N" mapping in /proc/PID/maps; see fakebackend/src/core/memory.h),
// by device. Empty for a process that has none (yet) or is gone.
std::map<int32_t, uint64_t> device_arenas(int pid);

}  // namespace fgtrace
