#include "collector/baseline.h"

#include "src/core/ledger.h"  // the backend's ledger layout (fakebackend/src/core)

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
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

std::optional<std::vector<BaselineEntry>> backend_baseline(int pid) {
  const auto env = environ_of(pid);
  if (auto it = env.find("FAKEGPU_ISOLATED"); it != env.end() && !it->second.empty() && it->second != "0")
    return std::nullopt;  // private devices: nothing host-wide to read
  std::string path;
  if (auto it = env.find("FAKEGPU_LEDGER"); it != env.end() && !it->second.empty()) {
    path = it->second;
  } else {
    const long uid = uid_of(pid);
    if (uid < 0) return std::nullopt;
    path = "/dev/shm/fakegpu-" + std::to_string(uid) + ".v" + std::to_string(lg::kVersion) + ".ledger";
  }
  // As the process sees it (it may live in another mount namespace).
  if (path[0] == '/') path = "/proc/" + std::to_string(pid) + "/root" + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(lg::Header))) {
    ::close(fd);
    return std::nullopt;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return std::nullopt;
  auto* hdr = static_cast<const lg::Header*>(base);
  std::optional<std::vector<BaselineEntry>> out;
  const bool valid = std::memcmp(hdr->magic, "FAKEGPU", 8) == 0 && hdr->version == lg::kVersion &&
                     hdr->file_size == size && hdr->max_procs == lg::kMaxProcs &&
                     hdr->proc_slot_size == sizeof(lg::ProcSlot) && hdr->device_entry_size == sizeof(lg::DeviceEntry);
  if (valid) {
    // Layout as the backend computes it: header, device table, then 4 KiB-aligned slots.
    const size_t dev_off = (sizeof(lg::Header) + 63) / 64 * 64;
    const size_t proc_off = (dev_off + sizeof(lg::DeviceEntry) * lg::kMaxDevices + 4095) / 4096 * 4096;
    auto* procs = reinterpret_cast<const lg::ProcSlot*>(static_cast<const char*>(base) + proc_off);
    for (uint32_t i = 0; i < lg::kMaxProcs && proc_off + sizeof(lg::ProcSlot) * (i + 1) <= size; ++i) {
      const lg::ProcSlot& s = procs[i];
      const uint64_t w = s.state.load(std::memory_order_acquire);
      if (lg::state_of(w) != lg::kReady || s.pid != pid) continue;
      std::vector<BaselineEntry> entries;
      for (uint32_t d = 0; d < lg::kMaxDevices; ++d) {
        if (!(s.devices[d / 64].load(std::memory_order_relaxed) & (1ull << (d % 64)))) continue;
        for (uint32_t k = 0; k < lg::kKinds; ++k) {
          uint64_t bytes = 0;
          for (const auto& sh : s.shards) bytes += sh.used[d][k].load(std::memory_order_relaxed);
          // Pinned host memory is booked under the process's first device in the ledger but
          // belongs to no device (-1), as the probes report it.
          const int32_t ordinal = k == lg::kHost ? -1 : s.ordinal[d];
          if (bytes) entries.push_back({ordinal, k, bytes});
        }
      }
      out = std::move(entries);
      break;
    }
  }
  ::munmap(base, size);
  return out;
}

}  // namespace fgtrace
