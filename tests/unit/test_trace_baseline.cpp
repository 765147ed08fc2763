// SPDX-License-Identifier: Apache-2.0
// fakegpu-trace's reading of the backend's device ledger (collector/baseline.cpp): which
// fake GPUs exist, what every live process holds on them, and which ledger numbers them
// when several do. A process that died without cleaning up leaves its slot marked ready
// until some backend process reaps it; the collector must not count it as live.
#include "collector/baseline.h"
#include "core/ledger.h"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace lg = fg::ledger;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

std::array<uint8_t, 16> uuid_of(uint8_t last) {
  std::array<uint8_t, 16> u{};
  u[0] = 0xfa;
  u[15] = last;
  return u;
}

// A scratch directory standing in for /dev/shm, removed at the end.
struct ShmDir {
  fs::path dir;
  ShmDir() {
    std::string tmpl = (fs::temp_directory_path() / "fgtrace-baseline-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
  }
  ~ShmDir() { fs::remove_all(dir); }
  std::string ledger(const std::string& user) const {
    return (dir / ("fakegpu-" + user + ".v" + std::to_string(lg::kVersion) + ".ledger")).string();
  }
};

// `n` processes that each book `bytes` on device `uuid` (ordinal 0) in the ledger at `path`,
// all alive at once (so none reaps another), then die without releasing their slots.
void leave_crashed_processes(const std::string& path, int n, uint8_t uuid, uint64_t bytes) {
  int ready[2], go[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(go) == 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(ready[0]);
      ::close(go[1]);
      int rc = 1;
      try {
        auto* l = new lg::Ledger(path, false);  // never destroyed: the slot stays ready
        const auto u = uuid_of(uuid);
        const uint32_t dev = l->register_device(u.data(), 80 * kGiB, "Fake Crashed GPU", 0);
        rc = l->reserve(dev, lg::kDevice, bytes) ? 0 : 2;
      } catch (...) {}
      char c = static_cast<char>(rc);
      (void)!::write(ready[1], &c, 1);
      (void)!::read(go[0], &c, 1);  // EOF once the parent has seen every child ready
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  ::close(ready[1]);
  ::close(go[0]);
  for (int i = 0; i < n; ++i) {
    char c = 1;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    REQUIRE(c == 0);
  }
  ::close(go[1]);
  ::close(ready[0]);
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
}

}  // namespace

TEST_CASE("baseline: a crashed process's slot is not live: its bytes are not in use", "[trace][baseline]") {
  ShmDir shm;
  leave_crashed_processes(shm.ledger("crashed"), 1, 0x01, 3 * kGiB);
  const auto devices = fgtrace::backend_devices({}, shm.dir.string());
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].ordinal == 0);
  CHECK(devices[0].uuid == "GPU-fa000000-0000-0000-0000-000000000001");
  CHECK(devices[0].name == "Fake Crashed GPU");
  CHECK(devices[0].total == 80 * kGiB);
  CHECK(devices[0].used == 0);
}

TEST_CASE("baseline: an ordinal comes from the ledger of running processes, not of crashed ones", "[trace][baseline]") {
  ShmDir shm;
  // Ledger A: two processes booked on their device 0, then died.
  leave_crashed_processes(shm.ledger("a"), 2, 0x0a, kGiB);
  // Ledger B: this process runs and holds 2 MiB on its device 0.
  lg::Ledger b(shm.ledger("b"), false);
  const auto u = uuid_of(0x0b);
  const uint32_t dev = b.register_device(u.data(), 40 * kGiB, "Fake Running GPU", 0);
  REQUIRE(b.reserve(dev, lg::kDevice, 2u << 20));

  const auto devices = fgtrace::backend_devices({}, shm.dir.string());
  REQUIRE(devices.size() == 1);  // one device per ordinal
  CHECK(devices[0].ordinal == 0);
  CHECK(devices[0].uuid == "GPU-fa000000-0000-0000-0000-00000000000b");
  CHECK(devices[0].name == "Fake Running GPU");
  CHECK(devices[0].used == (2u << 20));
  b.release(dev, lg::kDevice, 2u << 20);
}
