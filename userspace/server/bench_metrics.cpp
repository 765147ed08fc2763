// SPDX-License-Identifier: Apache-2.0
// bench_metrics: how long /metrics takes to render for a large machine, 1,000 traced processes
// on 8 GPUs (two memory kinds each, 24 traced API functions), with every process given its own
// series (max_processes = 0). Goal: <= 20 ms. Prints the median of the runs and the page size.
// Then the server's history for that machine: the memory of a full ring (--history 3600 at
// -i 1), the time to take one sample and to render /api/v1/history as the page asks for it.
// Then the analyses' cost per refresh (Analyzer::update: fits, forecasts, --leak-age and
// fragmentation, which walk every outstanding allocation) for that many processes holding
// 262,144 allocations between them (--max-allocs' default): the collector's CPU for them is
// that time once per refresh, whatever the event rate.
//
//   build/bin/bench_metrics [processes] [devices] [runs]
//   build/bin/bench_metrics --serve [processes] [devices]
//       serves that synthetic state on a free loopback port for the page benchmark
//       (scripts/bench.sh loads /?bench=N in headless Chromium), prints
//       "serving http://ADDRESS/" and stops when its stdin closes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../core/analysis.h"
#include "api.h"
#include "history.h"
#include "metrics.h"
#include "server.h"

#include <iostream>
#include <memory>

using namespace fgtrace;
using namespace fgtrace::server;

namespace {

Snapshot synthetic(size_t processes, int devices) {
  Snapshot s;
  s.processes.reserve(processes);
  static const char* kFuncs[] = {"cudaMalloc",       "cudaFree",        "cudaMallocManaged", "cudaMallocHost",
                                 "cudaFreeHost",     "cudaMemcpy",      "cudaMemcpyAsync",   "cudaLaunchKernel",
                                 "cuMemAlloc_v2",    "cuMemFree_v2",    "cuMemCreate",       "cuMemRelease",
                                 "cuMemMap",         "cuMemUnmap",      "cudaMallocAsync",   "cudaFreeAsync",
                                 "cudaMallocPitch",  "cudaMalloc3D",    "cuMemAllocManaged", "cuMemHostAlloc",
                                 "cudaStreamCreate", "cudaDeviceReset", "cuCtxCreate_v2",    "cuCtxDestroy_v2"};
  for (size_t i = 0; i < processes; ++i) {
    ProcessView p;
    p.pid = static_cast<uint32_t>(10000 + i);
    p.ppid = 1;
    p.comm = "worker-" + std::to_string(i % 97);
    p.exited = i % 10 == 0;
    for (int d = 0; d < devices; ++d) {
      const uint64_t base = (i + 1) * 1048576ull * static_cast<uint64_t>(d + 1);
      for (MemKind k : {MemKind::Device, MemKind::Managed}) {
        BookView b;
        b.device = d;
        b.kind = k;
        b.live_bytes = p.exited ? 0 : base;
        b.peak_bytes = base * 2;
        b.allocs = 100 + i;
        b.frees = 90 + i;
        b.leaked_bytes = p.exited ? base : 0;
        p.books.push_back(b);
      }
      DeviceUsage u;
      u.device = d;
      u.live_bytes = p.exited ? 0 : 2 * base;
      u.peak_bytes = 4 * base;
      u.allocs = 200 + 2 * i;
      u.frees = 180 + 2 * i;
      u.failed = i % 3;
      u.leaked_bytes = p.exited ? 2 * base : 0;
      p.devices.push_back(u);
      p.live_bytes += u.live_bytes;
      p.peak_bytes += u.peak_bytes;
    }
    s.processes.push_back(std::move(p));
  }
  for (int d = 0; d < devices; ++d) s.devices.push_back({d, 1ull << 35, 1ull << 36, 0, 0, 0, 0, 0, 900});
  for (const char* f : kFuncs) {
    CallStats c;
    c.func = f;
    for (uint64_t ns = 500; ns < 4'000'000'000ull; ns = ns * 3 / 2 + 7) c.add(ns, ns % 5 != 0);
    s.calls.push_back(c);
  }
  s.health.events = 123456789;
  s.health.libraries = {{"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "uprobe"}, {"/opt/fakegpu/libfake_gpu.so", "usdt"}};
  return s;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The history of this machine: one sample per refresh for --history 3600 at -i 1.
void history_figures(const Snapshot& snap, const std::vector<DeviceInfo>& infos) {
  State st;
  st.snapshot = snap;
  st.devices = infos;
  History h(history_samples_for(3600, 1));
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < h.max_samples() + 100; ++i) {  // past the bound: the oldest go
    st.time_unix_ms = 1'000'000 + i * 1000;
    h.append(std::make_shared<const HistorySample>(history_sample(st)));
  }
  const double per_sample = ms_since(t0) / static_cast<double>(h.max_samples() + 100);
  st.history = h.samples();
  st.history_max_samples = h.max_samples();
  st.history_bytes = h.memory_bytes();
  t0 = std::chrono::steady_clock::now();
  const std::string body = dump_json(api_history(st, 0, 360));  // what the page asks for on load
  const double render = ms_since(t0);
  std::printf(
      "history: %zu samples, %.0f KiB (bound: --history 3600 at -i 1; %zu processes on %zu devices, %zu a "
      "device kept per sample); a sample takes %.3f ms; /api/v1/history?points=360: %.1f ms, %zu KiB\n",
      h.size(), static_cast<double>(h.memory_bytes()) / 1024.0, snap.processes.size(), infos.size(),
      kHistoryProcessesPerDevice, per_sample, render, body.size() / 1024);
}

// Analyzer::update on a ledger of `processes` processes holding `allocs` allocations in all,
// spread over the devices, with --leak-age and every process's arena known.
void analysis_figures(size_t processes, int devices, size_t allocs, int runs) {
  AllocationLedger ledger;
  AnalysisInputs in;
  const size_t per = std::max<size_t>(1, allocs / processes);
  for (size_t i = 0; i < processes; ++i) {
    const uint32_t pid = static_cast<uint32_t>(10000 + i);
    ledger.track_process(pid, "worker", 1, 0, false);
    for (int d = 0; d < devices; ++d) in.arenas[{pid, d}] = (0x7f00ull << 32) + (static_cast<uint64_t>(d) << 36);
    for (size_t k = 0; k < per; ++k) {
      Event e;
      e.type = EventType::Alloc;
      e.pid = e.tid = pid;
      e.device = static_cast<int32_t>(k % static_cast<size_t>(devices));
      e.kind = MemKind::Device;
      e.size = 1 << 20;
      e.ptr = in.arenas[{pid, e.device}] + (k / static_cast<size_t>(devices)) * (2 << 20);
      e.ts_ns = 1'000'000'000ull + k;
      ledger.apply(e);
    }
  }
  for (int d = 0; d < devices; ++d) in.devices.push_back({d, 80ull << 30, 40ull << 30});
  AnalysisOptions o;
  o.leak_age_s = 1;
  Analyzer an(o);
  const Snapshot snap = ledger.snapshot(true);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto a = an.update(ledger, snap, 10'000'000'000ull + static_cast<uint64_t>(r) * 1'000'000'000ull, in);
    ms.push_back(ms_since(t0));
  }
  const double first = ms.front();  // every allocation walked (books changed)
  std::sort(ms.begin(), ms.end());
  std::printf(
      "analyses: %zu processes x %d devices holding %zu allocations: %.2f ms per refresh while the books "
      "stay (median of %d; %.2f %% of one core at -i 1, at any event rate), %.2f ms when every process's "
      "books changed (all allocations walked)\n",
      processes, devices, per * processes, ms[ms.size() / 2], runs, ms[ms.size() / 2] / 10.0, first);
}

}  // namespace

// The page benchmark's server: the synthetic state, published once.
int serve(size_t processes, int devices) {
  ServerOptions so;
  so.listen = "127.0.0.1:0";
  std::string err;
  auto server = Server::start(so, &err);
  if (!server) {
    std::fprintf(stderr, "bench_metrics: %s\n", err.c_str());
    return 1;
  }
  auto st = std::make_shared<State>();
  st->snapshot = synthetic(processes, devices);
  for (int d = 0; d < devices; ++d)
    st->devices.push_back({d, "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(d), "NVIDIA H100 80GB HBM3",
                           80ull << 30, 40ull << 30});
  st->time_unix_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  st->sequence = 1;
  st->interval_s = 1.0;
  server->publish(st);
  std::printf("serving http://%s/\n", server->address().c_str());
  std::fflush(stdout);
  while (std::cin.get() != EOF) {}
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--serve")
    return serve(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 500, argc > 3 ? std::atoi(argv[3]) : 8);
  const size_t processes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
  const int devices = argc > 2 ? std::atoi(argv[2]) : 8;
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 51;

  const Snapshot snap = synthetic(processes, devices);
  std::vector<DeviceInfo> infos;
  for (int d = 0; d < devices; ++d)
    infos.push_back({d, "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(d), "NVIDIA H100 80GB HBM3",
                     80ull << 30, 40ull << 30});
  MetricsOptions opts;
  opts.max_processes = 0;  // every process its own series: the worst case
  opts.scrape_duration_s = 0.001;

  std::vector<double> ms;
  size_t page = 0, lines = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string out = render_metrics(snap, infos, opts);
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    page = out.size();
    if (r == 0) lines = static_cast<size_t>(std::count(out.begin(), out.end(), '\n'));
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  history_figures(snap, infos);
  analysis_figures(processes, devices, 262144, 15);
  std::printf(
      "render_metrics: %zu processes x %d devices: median %.2f ms (min %.2f, max %.2f, %d runs); "
      "page %zu bytes, %zu lines (goal: <= 20 ms)\n",
      processes, devices, median, ms.front(), ms.back(), runs, page, lines);
  return median <= 20.0 ? 0 : 1;
}
