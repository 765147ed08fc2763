// SPDX-License-Identifier: Apache-2.0
#include "collector/baseline.h"
#include "collector/unique_fd.h"

#include <fakegpu/ledger_format.h>  // the backend's ledger segment: the contract both sides build from

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace fgtrace {
namespace {

namespace lg = fg::ledger;

std::map<std::string, std::string> environ_of(int pid) {
  std::map<std::string, std::string> env;
  std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream in(all);
  std::string kv;
  while (std::getline(in, kv, '\0')) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

long uid_of(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Uid:", 0) == 0) return std::strtol(line.c_str() + 4, nullptr, 10);
  return -1;
}

}  // namespace

namespace {

// A backend ledger file mapped read-only, validated against the layout this build knows.
class MappedLedger {
 public:
  explicit MappedLedger(const std::string& path) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_size < static_cast<off_t>(sizeof(lg::Header))) return;
    void* base = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd.get(), 0);
    if (base == MAP_FAILED) return;
    size_ = static_cast<size_t>(st.st_size);
    base_ = static_cast<const char*>(base);
    valid_ = lg::header_valid(*reinterpret_cast<const lg::Header*>(base_), size_);
  }
  ~MappedLedger() {
    if (base_) ::munmap(const_cast<char*>(base_), size_);
  }
  MappedLedger(const MappedLedger&) = delete;
  MappedLedger& operator=(const MappedLedger&) = delete;

  bool valid() const { return valid_; }
  const lg::DeviceEntry& device(uint32_t i) const {
    return reinterpret_cast<const lg::DeviceEntry*>(base_ + lg::device_table_offset())[i];
  }
  uint32_t slots() const { return lg::slots_in_use(*reinterpret_cast<const lg::Header*>(base_)); }
  const lg::ProcSlot& slot(uint32_t i) const {
    return reinterpret_cast<const lg::ProcSlot*>(base_ + lg::proc_table_offset())[i];
  }
  // A ready slot of a process that still runs: a process that crashed (or called _exit)
  // leaves its slot ready until a backend process reaps it, and a reused pid is not it.
  static bool live(const lg::ProcSlot& s) {
    return lg::state_of(s.state.load(std::memory_order_acquire)) == lg::kReady &&
           lg::process_alive(s.pid, s.start_time);
  }
  static bool uses(const lg::ProcSlot& s, uint32_t d) {
    return (s.devices[d / 64].load(std::memory_order_relaxed) >> (d % 64)) & 1;
  }
  static uint64_t bytes(const lg::ProcSlot& s, uint32_t d, uint32_t k) {
    uint64_t b = 0;
    for (const auto& sh : s.shards) b += sh.used[d][k].load(std::memory_order_relaxed);
    return b;
  }

 private:
  const char* base_ = nullptr;
  size_t size_ = 0;
  bool valid_ = false;
};

// The ledger a process uses, as a path this process can open; empty for none (isolated).
std::string ledger_of(int pid) {
  const auto env = environ_of(pid);
  if (auto it = env.find("FAKEGPU_ISOLATED"); it != env.end() && !it->second.empty() && it->second != "0") return {};
  std::string path;
  if (auto it = env.find("FAKEGPU_LEDGER"); it != env.end() && !it->second.empty()) {
    path = it->second;
  } else {
    const long uid = uid_of(pid);
    if (uid < 0) return {};
    path = lg::default_path_for(static_cast<unsigned long>(uid));
  }
  // As the process sees it (it may live in another mount namespace).
  if (path[0] == '/') path = "/proc/" + std::to_string(pid) + "/root" + path;
  return path;
}

}  // namespace

std::optional<std::vector<BaselineEntry>> backend_baseline(int pid) {
  const std::string path = ledger_of(pid);
  if (path.empty()) return std::nullopt;
  MappedLedger l(path);
  if (!l.valid()) return std::nullopt;
  for (uint32_t i = 0; i < l.slots(); ++i) {
    const lg::ProcSlot& s = l.slot(i);
    if (s.pid != pid || !MappedLedger::live(s)) continue;
    std::vector<BaselineEntry> entries;
    for (uint32_t d = 0; d < lg::kMaxDevices; ++d) {
      if (!MappedLedger::uses(s, d)) continue;
      for (uint32_t k = 0; k < lg::kKinds; ++k) {
        const uint64_t bytes = MappedLedger::bytes(s, d, k);
        // Pinned host memory is booked under the process's first device in the ledger but
        // belongs to no device (-1), as the probes report it.
        const int32_t ordinal = k == lg::kHost ? -1 : s.ordinal[d];
        if (bytes) entries.push_back({ordinal, k, bytes});
      }
    }
    return entries;
  }
  return std::nullopt;
}

namespace {

// What backend_devices() keeps between calls (it runs at every refresh, from one thread):
// each process's ledger path (its environment does not change), and each ledger file mapped
// once (by device and inode: many /proc/PID/root/... paths name one file), so a refresh reads
// pages already mapped instead of mapping and faulting the whole file again.
struct DeviceReaderCache {
  std::map<int, std::string> ledger_by_pid;
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<MappedLedger>> ledgers;
};
DeviceReaderCache& reader_cache() {
  static DeviceReaderCache c;
  return c;
}

}  // namespace

std::map<int32_t, uint64_t> device_arenas(int pid) {
  std::map<int32_t, uint64_t> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  constexpr std::string_view kName = "/memfd:fakegpu-device-";
  while (std::getline(maps, line)) {
    const size_t at = line.find(kName);
    if (at == std::string::npos) continue;
    char* end = nullptr;
    const long dev = std::strtol(line.c_str() + at + kName.size(), &end, 10);
    const uint64_t begin = std::strtoull(line.c_str(), nullptr, 16);
    // The arena is one mapping; the lowest start wins should the kernel ever split it.
    if (end != line.c_str() + at + kName.size() && dev >= 0) {
      auto [it, fresh] = out.try_emplace(static_cast<int32_t>(dev), begin);
      if (!fresh) it->second = std::min(it->second, begin);
    }
  }
  return out;
}

std::vector<BackendDevice> backend_devices(const std::vector<int>& pids, const std::string& shm_dir,
                                           std::map<int, std::vector<BackendDevice>>* by_pid_out) {
  DeviceReaderCache& cache = reader_cache();
  std::set<std::string> paths;
  std::map<int, std::string> by_pid;
  for (int pid : pids) {
    auto it = cache.ledger_by_pid.find(pid);
    std::string p = it != cache.ledger_by_pid.end() ? it->second : ledger_of(pid);
    if (!p.empty()) paths.insert(p);
    by_pid[pid] = std::move(p);
  }
  cache.ledger_by_pid = std::move(by_pid);  // pids gone are forgotten
  if (DIR* d = ::opendir(shm_dir.c_str())) {
    const std::string suffix = ".v" + std::to_string(lg::kVersion) + ".ledger";
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("fakegpu-", 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        paths.insert(shm_dir + "/" + name);
    }
    ::closedir(d);
  }
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<MappedLedger>> live;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    const auto key = std::make_pair(st.st_dev, st.st_ino);
    if (live.count(key)) continue;
    auto it = cache.ledgers.find(key);
    std::unique_ptr<MappedLedger> l = it != cache.ledgers.end() ? std::move(it->second)
                                                                : std::make_unique<MappedLedger>(path);
    if (l->valid()) live[key] = std::move(l);
  }
  cache.ledgers = std::move(live);  // files gone (or replaced) are unmapped

  // Several ledgers (one per user, or FAKEGPU_LEDGER sandboxes) can number their devices
  // alike: each ordinal (and each UUID) is taken from the ledger with the most live processes.
  struct Read {
    size_t live = 0;
    std::vector<BackendDevice> devices;
    std::pair<dev_t, ino_t> key;
  };
  std::vector<Read> reads;
  for (const auto& [key, lp] : cache.ledgers) {
    const MappedLedger& l = *lp;
    Read r;
    r.key = key;
    std::vector<uint32_t> ready;
    for (uint32_t d = 0; d < lg::kMaxDevices; ++d)
      if (lg::state_of(l.device(d).state.load(std::memory_order_acquire)) == lg::kReady) ready.push_back(d);
    std::vector<uint64_t> used(lg::kMaxDevices, 0);
    std::vector<int32_t> ordinal(lg::kMaxDevices, -1);
    for (uint32_t i = 0; i < l.slots(); ++i) {
      const lg::ProcSlot& s = l.slot(i);
      if (!MappedLedger::live(s)) continue;
      ++r.live;
      for (uint32_t d : ready) {
        if (!MappedLedger::uses(s, d)) continue;
        used[d] += MappedLedger::bytes(s, d, lg::kDevice) + MappedLedger::bytes(s, d, lg::kManaged);
        if (ordinal[d] < 0 && s.ordinal[d] >= 0) ordinal[d] = s.ordinal[d];
      }
    }
    for (uint32_t d : ready) {
      const lg::DeviceEntry& e = l.device(d);
      BackendDevice dev;
      dev.uuid = lg::uuid_text(e.uuid);
      dev.name.assign(e.name, strnlen(e.name, sizeof e.name));
      dev.total = e.total;
      dev.used = used[d];
      dev.ordinal = ordinal[d] >= 0 ? ordinal[d] : static_cast<int32_t>(d);  // unused now: its table position
      r.devices.push_back(std::move(dev));
    }
    reads.push_back(std::move(r));
  }
  if (by_pid_out) {
    by_pid_out->clear();
    for (const auto& [pid, path] : cache.ledger_by_pid) {
      struct stat st {};
      if (path.empty() || ::stat(path.c_str(), &st) != 0) continue;
      for (const Read& r : reads)
        if (r.key == std::make_pair(st.st_dev, st.st_ino)) (*by_pid_out)[pid] = r.devices;
    }
  }
  std::stable_sort(reads.begin(), reads.end(), [](const Read& a, const Read& b) { return a.live > b.live; });
  std::map<std::string, BackendDevice> by_uuid;
  std::set<int32_t> ordinals;
  for (Read& r : reads)
    for (BackendDevice& dev : r.devices)
      if (!by_uuid.count(dev.uuid) && ordinals.insert(dev.ordinal).second) by_uuid.emplace(dev.uuid, std::move(dev));
  std::vector<BackendDevice> out;
  for (auto& [uuid, dev] : by_uuid) out.push_back(std::move(dev));
  std::sort(out.begin(), out.end(), [](const BackendDevice& a, const BackendDevice& b) {
    return a.ordinal != b.ordinal ? a.ordinal < b.ordinal : a.uuid < b.uuid;
  });
  return out;
}

}  // namespace fgtrace
