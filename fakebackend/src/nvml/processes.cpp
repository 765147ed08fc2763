// SPDX-License-Identifier: Apache-2.0
// NVML process queries: running compute processes in the three ABIs (plain = v1 16-byte
// entries, _v2 and _v3 = 24-byte entries), graphics and MPS lists (always empty), the
// versioned RunningProcessDetailList, and per-process utilization samples.
//
// The list is host-wide: every live process holding fake memory on the device, from the
// shared ledger, with real PIDs. All list calls follow NVML's two-call pattern: a NULL buffer
// or a too small *count answers NVML_ERROR_INSUFFICIENT_SIZE with the count needed; no
// processes answers NVML_SUCCESS with a count of 0 (pynvml reads SUCCESS on the first call
// as "no processes").
#include "nvml/common.h"

#include <cstring>

using namespace fg::nvml;

namespace {

// Fills out[0..n) with fill(entry, process) under the two-call rules.
template <class Entry, class Fill>
nvmlReturn_t list_processes(nvmlDevice_t device, unsigned* count, Entry* out, bool compute, Fill fill) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    // Only compute contexts exist on a fake GPU: graphics and MPS lists are empty.
    std::vector<fg::ledger::ProcessUsage> procs;
    if (compute) procs = processes_of(h);
    const auto n = static_cast<unsigned>(procs.size());
    if (n == 0) {
      *count = 0;
      return NVML_SUCCESS;
    }
    if (!out || *count < n) {
      *count = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; ++i) {
      std::memset(&out[i], 0, sizeof out[i]);
      fill(out[i], procs[i]);
    }
    *count = n;
    return NVML_SUCCESS;
  });
}

void fill_v1(nvmlProcessInfo_v1_t& e, const fg::ledger::ProcessUsage& p) {
  e.pid = static_cast<unsigned>(p.pid);
  e.usedGpuMemory = used_gpu_memory(p);
}

template <class Entry>
void fill_v2(Entry& e, const fg::ledger::ProcessUsage& p) {
  e.pid = static_cast<unsigned>(p.pid);
  e.usedGpuMemory = used_gpu_memory(p);
  e.gpuInstanceId = kNoInstanceId;  // not a MIG instance
  e.computeInstanceId = kNoInstanceId;
}

}  // namespace

// ---- the three lists, in the three ABIs -------------------------------------------------------
// Compute: the ledger's processes. Graphics: always empty. MPS: always empty (no MPS server).
#define FG_PROCESS_LIST(Kind, compute)                                                   \
  extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGet##Kind##RunningProcesses(          \
      nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_v1_t* infos) {           \
    return list_processes(device, count, infos, compute, fill_v1);                       \
  }                                                                                      \
  extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGet##Kind##RunningProcesses_v2(       \
      nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_v2_t* infos) {           \
    return list_processes(device, count, infos, compute, fill_v2<nvmlProcessInfo_v2_t>); \
  }                                                                                      \
  extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGet##Kind##RunningProcesses_v3(       \
      nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos) {              \
    return list_processes(device, count, infos, compute, fill_v2<nvmlProcessInfo_t>);    \
  }
FG_PROCESS_LIST(Compute, true)
FG_PROCESS_LIST(Graphics, false)
FG_PROCESS_LIST(MPSCompute, false)
#undef FG_PROCESS_LIST

// ---- detail list (versioned) -------------------------------------------------------------------
// plist->version must be nvmlProcessDetailList_v1; mode selects compute / graphics / MPS.
// plist->numProcArrayEntries is the capacity of procArray in, the count out.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device,
                                                                             nvmlProcessDetailList_t* plist) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!plist) return NVML_ERROR_INVALID_ARGUMENT;
    if (plist->version != nvmlProcessDetailList_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (plist->mode > NVML_PROCESS_MODE_MPS) return NVML_ERROR_INVALID_ARGUMENT;
    std::vector<fg::ledger::ProcessUsage> procs;
    if (plist->mode == NVML_PROCESS_MODE_COMPUTE) procs = processes_of(h);
    const auto n = static_cast<unsigned>(procs.size());
    if (n == 0) {
      plist->numProcArrayEntries = 0;
      return NVML_SUCCESS;
    }
    if (!plist->procArray || plist->numProcArrayEntries < n) {
      plist->numProcArrayEntries = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; ++i) {
      nvmlProcessDetail_v1_t& e = plist->procArray[i];
      std::memset(&e, 0, sizeof e);
      e.pid = static_cast<unsigned>(procs[i].pid);
      e.usedGpuMemory = used_gpu_memory(procs[i]);
      e.gpuInstanceId = kNoInstanceId;
      e.computeInstanceId = kNoInstanceId;
      e.usedGpuCcProtectedMemory = 0;
    }
    plist->numProcArrayEntries = n;
    return NVML_SUCCESS;
  });
}

// ---- utilization samples -------------------------------------------------------------------------
// One sample per process holding memory, all 0 % (nothing executes), stamped now, so newer
// than any lastSeenTimeStamp a client passes. No process: NVML_ERROR_NOT_FOUND (no samples),
// as the real library answers for an idle GPU.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                                       nvmlProcessUtilizationSample_t* utilization,
                                                                       unsigned int* process_samples_count,
                                                                       unsigned long long last_seen_time_stamp) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    (void)last_seen_time_stamp;
    if (!process_samples_count) return NVML_ERROR_INVALID_ARGUMENT;
    const std::vector<fg::ledger::ProcessUsage> procs = processes_of(h);
    const auto n = static_cast<unsigned>(procs.size());
    if (n == 0) {
      *process_samples_count = 0;
      return NVML_ERROR_NOT_FOUND;
    }
    if (!utilization || *process_samples_count < n) {
      *process_samples_count = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    const auto now = static_cast<unsigned long long>(now_us());
    for (unsigned i = 0; i < n; ++i) {
      nvmlProcessUtilizationSample_t& s = utilization[i];
      std::memset(&s, 0, sizeof s);
      s.pid = static_cast<unsigned>(procs[i].pid);
      s.timeStamp = now;
    }
    *process_samples_count = n;
    return NVML_SUCCESS;
  });
}
