// SPDX-License-Identifier: Apache-2.0
// Unit tests: /metrics (userspace/server/metrics.h): the exact page for a small snapshot,
// folding beyond max_processes into pid="other", pid reuse, label escaping, the histogram's
// cumulative buckets, and promtool's verdict on a realistic page.
#include "trace_test_events.h"
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../../userspace/server/metrics.h"

using namespace fgtrace;
using namespace fgtrace::server;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

using fgtrace::test::ev;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Samples (not comments) whose line starts with `prefix`.
std::vector<std::string> samples(const std::string& page, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& l : lines_of(page))
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

bool has_line(const std::string& page, const std::string& line) {
  return page.find("\n" + line + "\n") != std::string::npos || page.rfind(line + "\n", 0) == 0;
}

}  // namespace

TEST_CASE("metrics: the page for a small snapshot, exactly", "[server][metrics]") {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  l.apply(ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x1, 3 * MiB));
  l.apply(ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x2, 1 * MiB));
  l.apply(ev(EventType::Free, 4242, 0, MemKind::Device, 0x2, 1 * MiB));
  l.apply(ev(EventType::AllocFail, 4242, 0, MemKind::Device, 0, 1ull << 40));
  // Calls of 900 ns (bucket [512, 1024): under le 1.024us) and 3000 ns (bucket [2048, 4096):
  // under le 4.096us).
  fgtrace::test::add_activity(l, 4242, 2);
  l.set_health({fgtrace::KernelHealth{.events = 7, .rb_drops = 1}, {{"/lib/libfake_gpu.so", "usdt"}}});
  MetricsOptions o;
  o.version = "1.2.3";
  o.scrape_duration_s = 0.0025;
  const std::string expected =
      "# HELP fakegpu_process_memory_bytes Memory a traced process holds now, by device and kind (0 once it exited).\n"
      "# TYPE fakegpu_process_memory_bytes gauge\n"
      "fakegpu_process_memory_bytes{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\",kind=\"device\"} "
      "3145728\n"
      "# HELP fakegpu_process_peak_memory_bytes High-water mark of a process's memory on a device since tracing began "
      "(all kinds).\n"
      "# TYPE fakegpu_process_peak_memory_bytes gauge\n"
      "fakegpu_process_peak_memory_bytes{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\"} 4194304\n"
      "# HELP fakegpu_process_allocations_total Successful allocations by a process on a device.\n"
      "# TYPE fakegpu_process_allocations_total counter\n"
      "fakegpu_process_allocations_total{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\"} 2\n"
      "# HELP fakegpu_process_frees_total Successful explicit frees by a process on a device.\n"
      "# TYPE fakegpu_process_frees_total counter\n"
      "fakegpu_process_frees_total{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\"} 1\n"
      "# HELP fakegpu_process_failed_calls_total Allocation and free calls of a process that returned an error.\n"
      "# TYPE fakegpu_process_failed_calls_total counter\n"
      "fakegpu_process_failed_calls_total{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\"} 1\n"
      "# HELP fakegpu_process_leaked_bytes Memory a process still held when it exited (or exec'd): its leak report.\n"
      "# TYPE fakegpu_process_leaked_bytes gauge\n"
      "fakegpu_process_leaked_bytes{pid=\"4242\",comm=\"python3\",device=\"0\",uuid=\"GPU-abc\"} 0\n"
      "# HELP fakegpu_device_memory_total_bytes Memory of the device.\n"
      "# TYPE fakegpu_device_memory_total_bytes gauge\n"
      "fakegpu_device_memory_total_bytes{device=\"0\",uuid=\"GPU-abc\",name=\"Fake GPU\"} 8589934592\n"
      "# HELP fakegpu_device_memory_used_bytes Memory in use on the device, by all processes.\n"
      "# TYPE fakegpu_device_memory_used_bytes gauge\n"
      "fakegpu_device_memory_used_bytes{device=\"0\",uuid=\"GPU-abc\",name=\"Fake GPU\"} 5368709120\n"
      "# HELP fakegpu_device_memory_free_bytes Memory free on the device.\n"
      "# TYPE fakegpu_device_memory_free_bytes gauge\n"
      "fakegpu_device_memory_free_bytes{device=\"0\",uuid=\"GPU-abc\",name=\"Fake GPU\"} 3221225472\n"
      "# HELP fakegpu_device_traced_memory_bytes Memory the traced processes hold now on the device (device=\"-1\": "
      "pinned host memory).\n"
      "# TYPE fakegpu_device_traced_memory_bytes gauge\n"
      "fakegpu_device_traced_memory_bytes{device=\"0\",uuid=\"GPU-abc\"} 3145728\n"
      "# HELP fakegpu_device_traced_peak_memory_bytes High-water mark of the traced processes' memory on the device "
      "since tracing began.\n"
      "# TYPE fakegpu_device_traced_peak_memory_bytes gauge\n"
      "fakegpu_device_traced_peak_memory_bytes{device=\"0\",uuid=\"GPU-abc\"} 4194304\n"
      "# HELP fakegpu_api_calls_total Calls of a traced CUDA API function.\n"
      "# TYPE fakegpu_api_calls_total counter\n"
      "fakegpu_api_calls_total{func=\"cudaMalloc\"} 2\n"
      "# HELP fakegpu_api_errors_total Calls of a traced CUDA API function that returned an error.\n"
      "# TYPE fakegpu_api_errors_total counter\n"
      "fakegpu_api_errors_total{func=\"cudaMalloc\"} 1\n"
      "# HELP fakegpu_api_call_duration_seconds Latency of traced CUDA API calls (log2 buckets, 1.024us to 8.6s).\n"
      "# TYPE fakegpu_api_call_duration_seconds histogram\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"1.024e-06\"} 1\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"2.048e-06\"} 1\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"4.096e-06\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"8.192e-06\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"1.6384e-05\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"3.2768e-05\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"6.5536e-05\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.000131072\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.000262144\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.000524288\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.001048576\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.002097152\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.004194304\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.008388608\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.016777216\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.033554432\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.067108864\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.134217728\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.268435456\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"0.536870912\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"1.073741824\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"2.147483648\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"4.294967296\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"8.589934592\"} 2\n"
      "fakegpu_api_call_duration_seconds_bucket{func=\"cudaMalloc\",le=\"+Inf\"} 2\n"
      "fakegpu_api_call_duration_seconds_sum{func=\"cudaMalloc\"} 3.9e-06\n"
      "fakegpu_api_call_duration_seconds_count{func=\"cudaMalloc\"} 2\n"
      "# HELP fakegpu_copy_bytes_total Bytes copied by cudaMemcpy-family calls, by direction.\n"
      "# TYPE fakegpu_copy_bytes_total counter\n"
      "fakegpu_copy_bytes_total{direction=\"HtoH\"} 0\n"
      "fakegpu_copy_bytes_total{direction=\"HtoD\"} 4096\n"
      "fakegpu_copy_bytes_total{direction=\"DtoH\"} 0\n"
      "fakegpu_copy_bytes_total{direction=\"DtoD\"} 0\n"
      "fakegpu_copy_bytes_total{direction=\"Default\"} 0\n"
      "# HELP fakegpu_copies_total cudaMemcpy-family calls, by direction.\n"
      "# TYPE fakegpu_copies_total counter\n"
      "fakegpu_copies_total{direction=\"HtoH\"} 0\n"
      "fakegpu_copies_total{direction=\"HtoD\"} 1\n"
      "fakegpu_copies_total{direction=\"DtoH\"} 0\n"
      "fakegpu_copies_total{direction=\"DtoD\"} 0\n"
      "fakegpu_copies_total{direction=\"Default\"} 0\n"
      "# HELP fakegpu_kernel_launches_total Kernel launches by the traced processes.\n"
      "# TYPE fakegpu_kernel_launches_total counter\n"
      "fakegpu_kernel_launches_total 2\n"
      "# HELP fakegpu_kernel_runs_total Kernel launches of the traced processes executed on the host CPU (USDT "
      "mode).\n"
      "# TYPE fakegpu_kernel_runs_total counter\n"
      "fakegpu_kernel_runs_total 0\n"
      "# HELP fakegpu_kernel_recorded_total Kernel launches of the traced processes recorded, not run (USDT mode).\n"
      "# TYPE fakegpu_kernel_recorded_total counter\n"
      "fakegpu_kernel_recorded_total 0\n"
      "# HELP fakegpu_kernel_host_seconds_total Host CPU time of the traced processes' executed kernel launches "
      "(USDT mode).\n"
      "# TYPE fakegpu_kernel_host_seconds_total counter\n"
      "fakegpu_kernel_host_seconds_total 0\n"
      "# HELP fakegpu_collector_events_total Events the BPF programs emitted.\n"
      "# TYPE fakegpu_collector_events_total counter\n"
      "fakegpu_collector_events_total 7\n"
      "# HELP fakegpu_collector_ringbuf_drops_total Events lost because the ring buffer was full.\n"
      "# TYPE fakegpu_collector_ringbuf_drops_total counter\n"
      "fakegpu_collector_ringbuf_drops_total 1\n"
      "# HELP fakegpu_collector_missing_entry_total Return probes that found no entry record (an event lost).\n"
      "# TYPE fakegpu_collector_missing_entry_total counter\n"
      "fakegpu_collector_missing_entry_total 0\n"
      "# HELP fakegpu_collector_unmatched_frees_total Frees of pointers the kernel never saw allocated.\n"
      "# TYPE fakegpu_collector_unmatched_frees_total counter\n"
      "fakegpu_collector_unmatched_frees_total 0\n"
      "# HELP fakegpu_collector_alloc_map_full_total Allocations, books or call counters the kernel could not store "
      "because its table was full.\n"
      "# TYPE fakegpu_collector_alloc_map_full_total counter\n"
      "fakegpu_collector_alloc_map_full_total 0\n"
      "# HELP fakegpu_collector_stacks_lost_total --stacks: allocations whose user stack the kernel could not store "
      "(booked, without a stack).\n"
      "# TYPE fakegpu_collector_stacks_lost_total counter\n"
      "fakegpu_collector_stacks_lost_total 0\n"
      "# HELP fakegpu_collector_attached_libraries CUDA libraries attached, by probe mode.\n"
      "# TYPE fakegpu_collector_attached_libraries gauge\n"
      "fakegpu_collector_attached_libraries{mode=\"uprobe\"} 0\n"
      "fakegpu_collector_attached_libraries{mode=\"usdt\"} 1\n"
      "# HELP fakegpu_collector_tracked_processes Processes in the books (exited ones until their time to live runs "
      "out).\n"
      "# TYPE fakegpu_collector_tracked_processes gauge\n"
      "fakegpu_collector_tracked_processes{state=\"running\"} 1\n"
      "fakegpu_collector_tracked_processes{state=\"exited\"} 0\n"
      "# HELP fakegpu_collector_folded_processes Processes summed into pid=\"other\" beyond the per-process series "
      "limit.\n"
      "# TYPE fakegpu_collector_folded_processes gauge\n"
      "fakegpu_collector_folded_processes 0\n"
      "# HELP fakegpu_collector_scrape_duration_seconds Time the previous /metrics render took.\n"
      "# TYPE fakegpu_collector_scrape_duration_seconds gauge\n"
      "fakegpu_collector_scrape_duration_seconds 0.0025\n"
      "# HELP fakegpu_build_info Always 1; the version of fakegpu-trace in a label.\n"
      "# TYPE fakegpu_build_info gauge\n"
      "fakegpu_build_info{version=\"1.2.3\"} 1\n";
  CHECK(render_metrics(l.snapshot(true), {{0, "GPU-abc", "Fake GPU", 8 * GiB, 5 * GiB}}, o) == expected);
}

TEST_CASE("metrics: an empty snapshot still has the collector's families", "[server][metrics]") {
  const std::string page = render_metrics(Snapshot{}, {}, MetricsOptions{});
  CHECK(page.find("fakegpu_process_") == std::string::npos);
  CHECK(page.find("fakegpu_device_") == std::string::npos);
  CHECK(page.find("fakegpu_api_") == std::string::npos);
  CHECK(page.find("scrape_duration") == std::string::npos);  // not measured yet
  CHECK(page.find("fakegpu_http_") == std::string::npos);    // no server rendered it
  CHECK(has_line(page, "fakegpu_collector_events_total 0"));
  CHECK(has_line(page, "fakegpu_build_info{version=\"" + std::string(build_version()) + "\"} 1"));
}

TEST_CASE("metrics: the HTTP server's own counters, when a server renders the page", "[server][metrics]") {
  MetricsOptions o;
  o.server = ServerStats{.connections_accepted = 310,
                         .connections_rejected = 2,
                         .connections_evicted = 270,
                         .connections_open = 40,
                         .streams_open = 8,
                         .streams_rejected = 3,
                         .streams_gone = 5,
                         .requests = 99,
                         .bad_requests = 4,
                         .timeouts = 6,
                         .idle_closed = 7,
                         .stream_frames_dropped = 11};
  const std::string page = render_metrics(Snapshot{}, {}, o);
  for (const char* line :
       {"# TYPE fakegpu_http_connections_accepted_total counter", "fakegpu_http_connections_accepted_total 310",
        "fakegpu_http_connections_rejected_total 2", "fakegpu_http_connections_evicted_total 270",
        "# TYPE fakegpu_http_connections_open gauge", "fakegpu_http_connections_open 40",
        "# TYPE fakegpu_http_streams_open gauge", "fakegpu_http_streams_open 8",
        "fakegpu_http_streams_rejected_total 3", "fakegpu_http_streams_gone_total 5", "fakegpu_http_requests_total 99",
        "fakegpu_http_bad_requests_total 4", "fakegpu_http_request_timeouts_total 6",
        "fakegpu_http_idle_closed_total 7", "fakegpu_http_stream_frames_dropped_total 11"})
    CHECK(has_line(page, line));
}

TEST_CASE("metrics: beyond max_processes the smallest processes are summed as pid=\"other\"", "[server][metrics]") {
  AllocationLedger l;
  // Ranked by live + peak: 30 (300 MiB), 20 (200 MiB), 10 and 40 (100 MiB each), 50 (exited).
  const struct {
    uint32_t pid;
    const char* comm;
    uint64_t bytes;
  } procs[] = {
      {10, "a", 100 * MiB}, {20, "b", 200 * MiB}, {30, "c", 300 * MiB}, {40, "d", 100 * MiB}, {50, "e", 1 * MiB}};
  uint64_t ptr = 0x1000;
  for (const auto& p : procs) {
    l.track_process(p.pid, p.comm, 1, 0, false);
    l.apply(ev(EventType::Alloc, p.pid, 0, MemKind::Device, ptr++, p.bytes));
    l.apply(ev(EventType::Alloc, p.pid, 1, MemKind::Managed, ptr++, 1 * MiB));
  }
  l.apply(ev(EventType::ProcExit, 50, -1, MemKind::Unknown, 0, 0, 9));
  MetricsOptions o;
  o.max_processes = 3;
  const std::string page = render_metrics(l.snapshot(true), {}, o);

  // Kept: 30, 20 and, of the tie at 100 MiB, the lower pid (10); in pid order, "other" last.
  CHECK(
      samples(page, "fakegpu_process_memory_bytes{") ==
      std::vector<std::string>{
          "fakegpu_process_memory_bytes{pid=\"10\",comm=\"a\",device=\"0\",uuid=\"\",kind=\"device\"} 104857600",
          "fakegpu_process_memory_bytes{pid=\"10\",comm=\"a\",device=\"1\",uuid=\"\",kind=\"managed\"} 1048576",
          "fakegpu_process_memory_bytes{pid=\"20\",comm=\"b\",device=\"0\",uuid=\"\",kind=\"device\"} 209715200",
          "fakegpu_process_memory_bytes{pid=\"20\",comm=\"b\",device=\"1\",uuid=\"\",kind=\"managed\"} 1048576",
          "fakegpu_process_memory_bytes{pid=\"30\",comm=\"c\",device=\"0\",uuid=\"\",kind=\"device\"} 314572800",
          "fakegpu_process_memory_bytes{pid=\"30\",comm=\"c\",device=\"1\",uuid=\"\",kind=\"managed\"} 1048576",
          // 40 (100 MiB + 1 MiB live) and 50 (exited: 0 live) summed.
          "fakegpu_process_memory_bytes{pid=\"other\",comm=\"other\",device=\"0\",uuid=\"\",kind=\"device\"} 104857600",
          "fakegpu_process_memory_bytes{pid=\"other\",comm=\"other\",device=\"1\",uuid=\"\",kind=\"managed\"} 1048576",
      });
  CHECK(samples(page, "fakegpu_process_leaked_bytes{pid=\"other\"") ==
        std::vector<std::string>{
            "fakegpu_process_leaked_bytes{pid=\"other\",comm=\"other\",device=\"0\",uuid=\"\"} 1048576",
            "fakegpu_process_leaked_bytes{pid=\"other\",comm=\"other\",device=\"1\",uuid=\"\"} 1048576",
        });
  CHECK(has_line(page, "fakegpu_process_allocations_total{pid=\"other\",comm=\"other\",device=\"0\",uuid=\"\"} 2"));
  CHECK(has_line(page, "fakegpu_collector_folded_processes 2"));
  CHECK(has_line(page, "fakegpu_collector_tracked_processes{state=\"running\"} 4"));
  CHECK(has_line(page, "fakegpu_collector_tracked_processes{state=\"exited\"} 1"));

  SECTION("0 means no limit") {
    o.max_processes = 0;
    const std::string all = render_metrics(l.snapshot(true), {}, o);
    CHECK(all.find("{pid=\"other\"") == std::string::npos);
    CHECK(samples(all, "fakegpu_process_memory_bytes{").size() == 10);
  }
}

TEST_CASE("metrics: a reused pid with the same comm is one series, never a duplicate", "[server][metrics]") {
  AllocationLedger l;
  l.track_process(77, "job", 1, 0, false);
  l.apply(ev(EventType::Alloc, 77, 0, MemKind::Device, 0x1, 5 * MiB));
  l.apply(ev(EventType::ProcExit, 77, -1, MemKind::Unknown, 0, 0, 5));
  l.track_process(77, "job", 1, 10, false);  // the pid comes back while the first is still shown
  l.apply(ev(EventType::Alloc, 77, 0, MemKind::Device, 0x2, 2 * MiB, 11));
  l.track_process(78, "other", 1, 0, false);
  const Snapshot snap = l.snapshot(true);
  REQUIRE(snap.processes.size() == 3);
  const std::string page = render_metrics(snap, {}, MetricsOptions{});
  CHECK(samples(page, "fakegpu_process_memory_bytes{") ==
        std::vector<std::string>{
            "fakegpu_process_memory_bytes{pid=\"77\",comm=\"job\",device=\"0\",uuid=\"\",kind=\"device\"} 2097152"});
  CHECK(has_line(page, "fakegpu_process_leaked_bytes{pid=\"77\",comm=\"job\",device=\"0\",uuid=\"\"} 5242880"));
  CHECK(has_line(page, "fakegpu_process_allocations_total{pid=\"77\",comm=\"job\",device=\"0\",uuid=\"\"} 2"));
  std::set<std::string> series;
  for (const std::string& line : lines_of(page)) {
    if (line.empty() || line[0] == '#') continue;
    CHECK(series.insert(line.substr(0, line.rfind(' '))).second);  // each label set once
  }
}

TEST_CASE("metrics: label values are escaped and made valid UTF-8", "[server][metrics]") {
  std::string out;
  append_label_value(out, "plain");
  CHECK(out == "plain");
  out.clear();
  append_label_value(out, "a\\b\"c\nd");
  CHECK(out == "a\\\\b\\\"c\\nd");
  out.clear();
  append_label_value(out, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80");  // é € 🚀 stay as they are
  CHECK(out == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80");
  out.clear();
  append_label_value(out, "x\xFFy\xC3");  // a stray byte, a truncated sequence
  CHECK(out == "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  out.clear();
  append_label_value(out, "\xED\xA0\x80");  // an encoded surrogate is not UTF-8
  CHECK(out == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");

  AllocationLedger l;
  l.track_process(9, "we\"ird\\na\nme", 1, 0, false);
  l.apply(ev(EventType::Alloc, 9, 0, MemKind::Device, 0x1, 4096));
  const std::string page = render_metrics(l.snapshot(true), {{0, "GPU-\"q\"", "Name\\With\nBreak", 1 * GiB, 0}},
                                          MetricsOptions{});
  CHECK(has_line(
      page,
      "fakegpu_process_memory_bytes{pid=\"9\",comm=\"we\\\"ird\\\\na\\nme\",device=\"0\",uuid=\"GPU-\\\"q\\\"\","
      "kind=\"device\"} 4096"));
  CHECK(has_line(page,
                 "fakegpu_device_memory_total_bytes{device=\"0\",uuid=\"GPU-\\\"q\\\"\",name=\"Name\\\\With\\nBreak\"} "
                 "1073741824"));
}

TEST_CASE("metrics: the latency histogram is cumulative, in seconds, with +Inf equal to _count", "[server][metrics]") {
  Snapshot s;
  CallStats c;
  c.func = "cuMemAlloc_v2";
  c.add(0, true);                 // bucket 0
  c.add(1023, true);              // bucket 9: [512, 1024) ns, under the first bound 1.024us
  c.add(1024, true);              // bucket 10: under 2.048us
  c.add(5000, false);             // bucket 12: under 8.192us
  c.add(8'000'000'000ull, true);  // bucket 32: [4.29, 8.59) s, under the last bound
  c.add(9'000'000'000ull, true);  // bucket 33: above every finite bound, only +Inf
  s.calls.push_back(c);
  const std::string page = render_metrics(s, {}, MetricsOptions{});
  const auto buckets = samples(page, "fakegpu_api_call_duration_seconds_bucket{");
  REQUIRE(buckets.size() == kLastLeLog2 - kFirstLeLog2 + 2);
  CHECK(buckets[0] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"1.024e-06\"} 2");
  CHECK(buckets[1] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"2.048e-06\"} 3");
  CHECK(buckets[2] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"4.096e-06\"} 3");
  CHECK(buckets[3] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"8.192e-06\"} 4");
  CHECK(buckets[22] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"4.294967296\"} 4");
  CHECK(buckets[23] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"8.589934592\"} 5");
  CHECK(buckets[24] == "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"+Inf\"} 6");
  uint64_t previous = 0;
  for (const std::string& b : buckets) {
    const uint64_t v = std::stoull(b.substr(b.rfind(' ') + 1));
    CHECK(v >= previous);
    previous = v;
  }
  CHECK(has_line(page, "fakegpu_api_call_duration_seconds_sum{func=\"cuMemAlloc_v2\"} 17.000007047"));
  CHECK(has_line(page, "fakegpu_api_call_duration_seconds_count{func=\"cuMemAlloc_v2\"} 6"));
  CHECK(has_line(page, "fakegpu_api_calls_total{func=\"cuMemAlloc_v2\"} 6"));
  CHECK(has_line(page, "fakegpu_api_errors_total{func=\"cuMemAlloc_v2\"} 1"));

  SECTION("sampled latency (--latency-every): the histogram counts the timed calls, calls_total all") {
    s.calls[0].calls += 10;  // untimed
    const std::string p2 = render_metrics(s, {}, MetricsOptions{});
    CHECK(has_line(p2, "fakegpu_api_call_duration_seconds_count{func=\"cuMemAlloc_v2\"} 6"));
    CHECK(has_line(p2, "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"+Inf\"} 6"));
    CHECK(has_line(p2, "fakegpu_api_calls_total{func=\"cuMemAlloc_v2\"} 16"));
  }
  SECTION("timed calls counted but the buckets read before them: +Inf still equals _count") {
    s.calls[0].timed += 3;
    const std::string p2 = render_metrics(s, {}, MetricsOptions{});
    CHECK(has_line(p2, "fakegpu_api_call_duration_seconds_bucket{func=\"cuMemAlloc_v2\",le=\"+Inf\"} 9"));
    CHECK(has_line(p2, "fakegpu_api_call_duration_seconds_count{func=\"cuMemAlloc_v2\"} 9"));
  }
}

TEST_CASE("metrics: a process's kernels: launches, runs, recorded launches and host seconds", "[server][metrics]") {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  l.record_launch(4242, 12);
  // Two loads of saxpy (two functions, one name: summed) and a kernel only recorded.
  l.set_kernel_totals(4242,
                      {{"saxpy", 4, 4, 0, 1'000'000}, {"_Z6reducePfi", 5, 0, 5, 0}, {"saxpy", 3, 2, 0, 250'000'000}});
  const std::string page = render_metrics(l.snapshot(true), {}, MetricsOptions{});
  const std::string labels = "{pid=\"4242\",comm=\"python3\",kernel=";
  CHECK(samples(page, "fakegpu_process_kernel_launches_total") ==
        std::vector<std::string>{"fakegpu_process_kernel_launches_total" + labels + "\"saxpy\"} 7",
                                 "fakegpu_process_kernel_launches_total" + labels + "\"_Z6reducePfi\"} 5"});
  CHECK(samples(page, "fakegpu_process_kernel_runs_total") ==
        std::vector<std::string>{"fakegpu_process_kernel_runs_total" + labels + "\"saxpy\"} 6",
                                 "fakegpu_process_kernel_runs_total" + labels + "\"_Z6reducePfi\"} 0"});
  CHECK(samples(page, "fakegpu_process_kernel_recorded_total") ==
        std::vector<std::string>{"fakegpu_process_kernel_recorded_total" + labels + "\"saxpy\"} 0",
                                 "fakegpu_process_kernel_recorded_total" + labels + "\"_Z6reducePfi\"} 5"});
  CHECK(samples(page, "fakegpu_process_kernel_host_seconds_total") ==
        std::vector<std::string>{"fakegpu_process_kernel_host_seconds_total" + labels + "\"saxpy\"} 0.251",
                                 "fakegpu_process_kernel_host_seconds_total" + labels + "\"_Z6reducePfi\"} 0"});
  CHECK(has_line(page, "# TYPE fakegpu_process_kernel_host_seconds_total counter"));
  CHECK(has_line(page, "fakegpu_kernel_launches_total 12"));
  CHECK(has_line(page, "fakegpu_kernel_runs_total 6"));
  CHECK(has_line(page, "fakegpu_kernel_recorded_total 5"));
  CHECK(has_line(page, "fakegpu_kernel_host_seconds_total 0.251"));
}

TEST_CASE("metrics: promtool accepts a realistic page with no lint warnings", "[server][metrics][promtool]") {
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (::access(kPromtool, X_OK) != 0) {
    WARN("SKIPPED: " << kPromtool << " not found (Debian package 'prometheus'); the page was not checked by promtool");
    return;
  }
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  l.apply(ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x1, 1536 * MiB));
  l.apply(ev(EventType::Alloc, 4242, -1, MemKind::Host, 0x2, 64 * MiB));
  fgtrace::test::add_attached(l, "serv\"er\\x\n");
  l.apply(ev(EventType::Alloc, 5000, 1, MemKind::Managed, 0x4, 256 * MiB));
  fgtrace::test::add_exited(l, "leaky\xFF");
  for (uint64_t ns : {700ull, 3000ull, 90'000ull, 2'000'000ull, 20'000'000'000ull}) {
    l.record_call(4242, "cudaMalloc", ns, ns != 3000);
    l.record_call(5000, "cuMemAlloc_v2", ns * 3, true);
  }
  l.record_copy(4242, CopyDirection::HtoD, 4096);
  l.record_launch(4242, 3);
  l.set_kernel_totals(4242, {{"_Z6reducePfi", 3, 2, 1, 1'500'000}});
  l.set_health({fgtrace::KernelHealth{.events = 9, .rb_drops = 2},
                {{"/opt/fakegpu/lib/libfake_gpu.so", "usdt"}, {"/usr/local/cuda/lib64/libcudart.so.13", "uprobe"}}});
  MetricsOptions o;
  o.max_processes = 2;  // with an "other" series
  o.scrape_duration_s = 0.000123;
  o.server = ServerStats{.connections_accepted = 3, .connections_open = 1, .requests = 5};
  const std::string page = render_metrics(
      l.snapshot(true),
      {{0, "GPU-11111111-2222-3333-4444-555555555555", "NVIDIA H100 80GB HBM3", 80 * GiB, 75 * GiB},
       {1, "GPU-66666666-7777-8888-9999-000000000000", "NVIDIA H100 80GB HBM3", 80 * GiB, 2 * GiB}},
      o);
  REQUIRE(page.find("{pid=\"other\"") != std::string::npos);
  CHECK(has_line(page,
                 "fakegpu_process_memory_bytes{pid=\"4242\",comm=\"python3\",device=\"-1\",uuid=\"\","
                 "kind=\"host\"} 67108864"));  // pinned host memory

  char path[] = "/tmp/fakegpu-metrics-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << page;
  const std::string cmd = std::string(kPromtool) + " check metrics < " + path + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string output;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  const int status = ::pclose(p);
  ::unlink(path);
  INFO("promtool said:\n" << output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(output.empty());  // lint problems are printed (one per line)
}
