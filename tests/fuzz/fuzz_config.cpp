// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for the backend's device configuration: the
// FAKEGPU_DEVICES spec, the FAKEGPU_CONFIG JSON and load_device_models, which reads the file
// FAKEGPU_CONFIG names (core/config.h). The contract checked: every input yields devices
// that satisfy the configuration's rules, or a ConfigError whose message says which variable
// it is about; any other exception, or a crash, is a finding.
//
// Input: the first byte picks the entry point (mod 3), the rest is its text:
//   0  parse_devices_spec(text)
//   1  parse_config_json(text, "fuzz.json")
//   2  load_device_models(A, B): text is "A\0B"; A (may be empty) is FAKEGPU_DEVICES, B the
//      contents of the file FAKEGPU_CONFIG names (a memfd; no B: unset).
#include "core/config.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: %s: %s\n", what, detail.c_str());
  std::abort();
}

// What every configured device list satisfies (config.h, device_model.h).
void check_devices(const std::vector<fg::DeviceModel>& devices) {
  if (devices.size() > static_cast<size_t>(fg::kMaxDevices)) fail("too many devices", std::to_string(devices.size()));
  std::set<std::string> uuids, buses;
  for (size_t i = 0; i < devices.size(); ++i) {
    const fg::DeviceModel& d = devices[i];
    if (d.index != static_cast<int>(i)) fail("index out of order", std::to_string(d.index));
    if (d.name.rfind(fg::kNamePrefix, 0) != 0 || d.name.size() > fg::kMaxNameLength) fail("bad name", d.name);
    for (unsigned char c : d.name)
      if (c < 0x20 || c == 0x7f) fail("control character in name", d.name);
    if (d.total_memory == 0 || d.total_memory > (1ull << 50)) fail("bad total_memory", std::to_string(d.total_memory));
    if (d.cc_major < 1 || d.cc_minor < 0 || d.sm_count < 1) fail("bad compute capability or SM count", d.name);
    if (d.uuid_str.size() != 40 || d.uuid_str.rfind("GPU-", 0) != 0) fail("bad uuid", d.uuid_str);
    if (!uuids.insert(d.uuid_str).second) fail("duplicate uuid", d.uuid_str);
    if (!buses.insert(d.pci_bus_id).second) fail("duplicate PCI bus id", d.pci_bus_id);
    if (d.power_min_limit_mw > d.power_limit_mw || d.power_limit_mw > d.power_max_limit_mw)
      fail("power limits out of order", d.name);
    if (d.clock_sm_mhz > d.max_clock_sm_mhz || d.pcie_cur_gen > d.pcie_max_gen)
      fail("clocks or PCIe out of order", d.name);
  }
}

void check_error(const fg::ConfigError& e) {
  const std::string_view m = e.what();
  if (!m.starts_with("FAKEGPU_DEVICES=") && !m.starts_with("FAKEGPU_CONFIG=") &&
      !m.starts_with("both FAKEGPU_DEVICES="))
    fail("error does not name its variable", std::string(m));
}

// The config text as a file FAKEGPU_CONFIG can name, without touching the disk.
class MemFile {
 public:
  explicit MemFile(std::string_view text) : fd_(::memfd_create("fuzz_config", MFD_CLOEXEC)) {
    if (fd_ < 0) fail("memfd_create", std::strerror(errno));
    if (!text.empty() && ::write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      fail("write", std::strerror(errno));
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  const char* path() const { return path_.c_str(); }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int mode = data[0] % 3;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (mode) {
      case 0: check_devices(fg::parse_devices_spec(text)); break;
      case 1: check_devices(fg::parse_config_json(text, "fuzz.json")); break;
      case 2: {
        const size_t nul = text.find('\0');
        const std::string devices = text.substr(0, nul);  // a variable's value ends at its NUL
        if (nul == std::string::npos) {
          check_devices(fg::load_device_models(devices.c_str(), nullptr));
        } else {
          MemFile file(std::string_view(text).substr(nul + 1));
          check_devices(fg::load_device_models(devices.c_str(), file.path()));
        }
        break;
      }
    }
  } catch (const fg::ConfigError& e) {
    check_error(e);
  } catch (const std::exception& e) {
    fail("an exception other than ConfigError", e.what());
  }
  return 0;
}
