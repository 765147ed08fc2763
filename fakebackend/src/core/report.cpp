// SPDX-License-Identifier: Apache-2.0
// The report at exit: fake_gpu_report.json, compatible with the FakeGPU seed guide
// (devices: name, uuid, total_memory, used_memory_peak, used_memory_current), plus
// outstanding allocations (leaks), call counts per API, kernel launches by name and
// coverage gaps (NOT_SUPPORTED stubs called, unresolved driver entry points) and the CUDA
// Runtimes that served the process (core/runtimes.h).
#include "common/calls.h"
#include "common/coverage.h"
#include "common/log.h"
#include "core/backend.h"
#include "core/runtimes.h"
#include "core/usdt.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace fg {
namespace {

// FAKEGPU_REPORT: unset → fake_gpu_report.json in the working directory; "off" → none;
// otherwise a path in which %p stands for the pid.
std::string report_path() {
  const char* v = std::getenv("FAKEGPU_REPORT");
  std::string p = v && *v ? v : "fake_gpu_report.json";
  if (p == "off" || p == "0" || p == "none") return {};
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '%' && i + 1 < p.size() && p[i + 1] == 'p') {
      out += std::to_string(::getpid());
      ++i;
    } else {
      out += p[i];
    }
  }
  return out;
}

const char* api_name(ApiOrigin a) {
  return a == ApiOrigin::Runtime ? "runtime" : a == ApiOrigin::Driver ? "driver" : "internal";
}

}  // namespace

void Backend::write_report() noexcept {
  try {
    // Whatever the process still holds is a leak: record it, then give it back to the host.
    std::vector<Allocation> live = live_allocations();
    std::sort(live.begin(), live.end(), [](const Allocation& a, const Allocation& b) { return a.base < b.base; });

    const std::string path = report_path();
    if (!path.empty()) {
      using nlohmann::json;
      json devices = json::array();
      for (auto& d : devices_) {
        devices.push_back({{"index", d->ordinal},
                           {"name", d->model.name},
                           {"uuid", d->model.uuid_str},
                           {"pci_bus_id", d->model.pci_bus_id},
                           {"total_memory", d->model.total_memory},
                           {"used_memory_peak", d->peak.load()},
                           {"used_memory_current", held(d.get())}});
      }
      json leaks = json::array();
      uint64_t leaked_bytes = 0;
      for (const Allocation& a : live) {
        leaks.push_back({{"ptr", a.base},
                         {"size", a.size},
                         {"device", a.device},
                         {"kind", to_string(a.kind)},
                         {"api", api_name(a.api)}});
        leaked_bytes += a.size;
      }
      json calls = json::object();
      const auto counts = calls::snapshot();
      bool fake_runtime_calls = false;
      for (size_t i = 0; i < kApiCount; ++i) {
        if (!counts[i]) continue;
        const ApiInfo& info = api_info(i);
        fake_runtime_calls = fake_runtime_calls || info.family == ApiFamily::Runtime;
        std::string name = info.legacy12 ? std::string(info.name) + "@libcudart.so.12" : info.name;
        calls[name] = counts[i];
      }
      json runtimes = json::array();
      for (const runtimes::Seen& r : runtimes::snapshot(fake_runtime_calls))
        runtimes.push_back({{"kind", r.kind}, {"object", r.object}});
      json kernels = json::object();
      for (const auto& l : launches()) kernels[l.kernel] = l.count;
      // What the executor did with each kernel: launches run (and their host time) or
      // recorded, with the reason it could not run.
      json executed = json::object();
      for (const kernels::KernelBooks& k : kernels::books()) {
        json entry = {{"ran", k.ran}, {"recorded", k.recorded}, {"host_ms", static_cast<double>(k.host_ns) / 1e6}};
        if (k.recorded) entry["reason"] = k.reason;
        executed[k.name] = entry;
      }
      const kernels::CompilerBooks compiled = kernels::compiler_books_now();
      const auto cov = coverage::snapshot();
      json report = {{"version", 1},
                     {"pid", ::getpid()},
                     {"devices", devices},
                     {"leaks", {{"count", live.size()}, {"bytes", leaked_bytes}, {"allocations", leaks}}},
                     {"calls", calls},
                     {"runtimes", runtimes},
                     {"kernel_launches", kernels},
                     {"kernels", executed},
                     {"coverage", {{"unsupported_calls", cov.stubs}, {"unresolved_entry_points", cov.unresolved}}}};
      if (compiled.compiled || compiled.loaded)
        report["kernel_compiler"] = {{"compiled", compiled.compiled}, {"loaded_from_cache", compiled.loaded}};
      const std::string text = report.dump(2) + "\n";
      // Atomic: write a temporary file next to the target, then rename over it.
      const std::string tmp = path + ".tmp." + std::to_string(::getpid());
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      bool ok = fd >= 0;
      for (size_t off = 0; ok && off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        off += n > 0 ? static_cast<size_t>(n) : 0;
      }
      if (fd >= 0) ok = (::close(fd) == 0) && ok;
      if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
      if (!ok) {
        FG_LOG(Warn, Core, "cannot write the report %s: %s (set FAKEGPU_REPORT to a writable path or off)",
               path.c_str(), std::strerror(errno));
        ::unlink(tmp.c_str());
      } else {
        FG_LOG(Info, Core, "report written to %s", path.c_str());
      }
    }
    {
      std::lock_guard lock(exit_mu_);
      for (const Allocation& a : live) {
        FG_USDT_IMPLICIT_FREE(a.device, a.base, a.size, static_cast<int>(a.kind), 2);
        exit_announced_.insert(a.base);
      }
    }
    exit_reported_.store(true, std::memory_order_release);
    ledger_->release_process();
  } catch (const std::exception& e) {
    FG_LOG(Warn, Core, "report failed: %s", e.what());
  }
}

}  // namespace fg
