// SPDX-License-Identifier: Apache-2.0
// Unit tests: fakegpu-trace's renderers (table, JSON lines, CI summary), the verdict and its
// exit codes, and the size parser.
#include "trace_test_events.h"
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "../../userspace/core/render.h"

using namespace fgtrace;
using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;

using fgtrace::test::ev;

// Four processes: one traced from its start on two devices plus pinned host memory, one
// attached with a baseline, one that exited leaking, one first seen through an event.
AllocationLedger scenario() {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  l.apply(ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x1, 1536 * MiB));
  l.apply(ev(EventType::Alloc, 4242, 0, MemKind::Device, 0x2, 512 * MiB));
  l.apply(ev(EventType::Free, 4242, 0, MemKind::Device, 0x2, 512 * MiB));
  l.apply(ev(EventType::Alloc, 4242, -1, MemKind::Host, 0x3, 64 * MiB));
  fgtrace::test::add_attached(l);
  l.apply(ev(EventType::Alloc, 5000, 1, MemKind::Managed, 0x4, 256 * MiB));
  fgtrace::test::add_exited(l);
  l.apply(ev(EventType::Alloc, 7000, 0, MemKind::Device, 0x6, 1000, 60));
  fgtrace::test::add_activity(l, 4242, 3);
  l.record_call(6000, "cudaMalloc", 700, true);
  l.set_health({fgtrace::KernelHealth{.events = 9},
                {{"/opt/fakegpu/lib/libfake_gpu.so", "usdt"}, {"/usr/local/cuda/lib64/libcudart.so.13", "uprobe"}}});
  return l;
}

std::string size_error(const char* text) {
  std::string err;
  auto v = parse_size(text, &err);
  return v ? "<parsed " + std::to_string(*v) + ">" : err;
}

}  // namespace

TEST_CASE("render: human sizes", "[trace][render]") {
  CHECK(human_size(0) == "0 B");
  CHECK(human_size(1023) == "1023 B");
  CHECK(human_size(1024) == "1.0 KiB");
  CHECK(human_size(1536) == "1.5 KiB");
  CHECK(human_size(MiB - 1) == "1.0 MiB");  // never "1024.0 KiB"
  CHECK(human_size(1536 * MiB) == "1.5 GiB");
  CHECK(human_size(80 * GiB) == "80.0 GiB");
  CHECK(human_size(std::numeric_limits<uint64_t>::max()) == "16.0 EiB");
}

TEST_CASE("render: the live table, exactly", "[trace][render]") {
  AllocationLedger l = scenario();
  const std::string expected =
      "fakegpu-trace  2025-06-01 12:00:00  every 2s  4 processes (1 exited)\n"
      "\n"
      " DEV       LIVE        PEAK      LEAKED   PROCS\n"
      "   0    1.5 GiB     2.0 GiB         0 B       2\n"
      "   1    1.2 GiB     1.5 GiB   256.0 MiB       2\n"
      "GPUs    2.8 GiB     3.0 GiB   256.0 MiB       4\n"
      "host   64.0 MiB    64.0 MiB         0 B       1\n"
      "\n"
      "    PID COMMAND          DEV  KIND          LIVE        PEAK    ALLOCS     FREES  FAILED      LEAKED\n"
      "   4242 python3            0  device     1.5 GiB     2.0 GiB         2         1       0           -\n"
      "   4242 python3         host  host      64.0 MiB    64.0 MiB         1         0       0           -\n"
      "   5000 server             1  device     1.0 GiB     1.0 GiB*        0*        0*      1*          -\n"
      "   5000 server             1  managed  256.0 MiB   256.0 MiB*        1*        0*      0*          -\n"
      "   6000 leaky              1  device      exited   256.0 MiB         1         0       0   256.0 MiB\n"
      "   7000 -                  0  device      1000 B*     1000 B*        1*        0*      0*          -\n"
      "\n"
      "health: events 9; lost: ring-buffer drops 0, missing entry records 0, alloc map full 0, bad records 0, "
      "duplicate allocs 0, processes missed 0\n"
      "        unmatched frees 0 (kernel) 0 (ledger); frees of pre-attach allocations 0\n"
      "traced: /opt/fakegpu/lib/libfake_gpu.so (usdt), /usr/local/cuda/lib64/libcudart.so.13 (uprobe)\n"
      "* since attach: the process was running before tracing began; starred figures count only\n"
      "  what happened since. An unstarred LIVE includes what it held at attach (backend's ledger).\n";
  CHECK(render_table(l.snapshot(true), {"2025-06-01 12:00:00", 2.0}) == expected);
}

TEST_CASE("render: an empty table still shows health and what is traced; losses are flagged", "[trace][render]") {
  AllocationLedger l;
  Health h;
  h.events = 10;
  h.rb_drops = 3;
  h.unmatched_free = 1;
  l.set_health(h);
  CHECK_FALSE(l.consume("x", 1));
  const std::string expected =
      "fakegpu-trace  12:00:01  every 0.5s  0 processes\n"
      "\n"
      " DEV       LIVE        PEAK      LEAKED   PROCS\n"
      "GPUs        0 B         0 B         0 B       0\n"
      "\n"
      "    PID COMMAND          DEV  KIND          LIVE        PEAK    ALLOCS     FREES  FAILED      LEAKED\n"
      "        (no traced process yet)\n"
      "\n"
      "health (EVENTS LOST, figures may be incomplete): events 10; lost: ring-buffer drops 3, missing entry "
      "records 0, alloc map full 0, bad records 1, duplicate allocs 0, processes missed 0\n"
      "        unmatched frees 1 (kernel) 0 (ledger); frees of pre-attach allocations 0\n"
      "traced: no library attached\n";
  CHECK(render_table(l.snapshot(true), {"12:00:01", 0.5}) == expected);
}

TEST_CASE("render: a process with no memory books still gets a row", "[trace][render]") {
  AllocationLedger l;
  l.track_process(12, "idle", 1, 0, false);
  l.record_call(12, "cudaGetDeviceCount", 100, true);
  const std::string table = render_table(l.snapshot(true), {"t", 1});
  CHECK(
      table.find(
          "\n     12 idle               -  -              0 B         0 B         0         0       0           -\n") !=
      std::string::npos);
  CHECK(table.find("since attach") == std::string::npos);  // no star, no footnote
}

TEST_CASE("render: the kernels table: launches, ran, recorded, host time and mean", "[trace][render]") {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  l.track_process(5000, "recorder", 1, 0, false);
  l.set_kernel_totals(4242, {{"_Z5saxpyfPfS_", 7, 7, 0, 2'100'000}, {"empty", 3, 3, 0, 2400}});
  l.set_kernel_totals(5000, {{"_Z6reducePfi", 4, 0, 4, 0}});
  const std::string table = render_table(l.snapshot(true), {"t", 1});
  const std::string expected =
      "    PID COMMAND           LAUNCHES         RAN    RECORDED        HOST        MEAN   KERNEL\n"
      "   4242 python3                  7           7           0      2.1 ms    300.0 us   _Z5saxpyfPfS_\n"
      "   4242 python3                  3           3           0      2.4 us      800 ns   empty\n"
      "   5000 recorder                 4           0           4           -           -   _Z6reducePfi\n";
  INFO(table);
  CHECK(table.find("\n\n" + expected + "\n") != std::string::npos);
  const json j = json::parse(render_json_line(l.snapshot(true), "t"));
  CHECK(j["processes"][0]["kernels"][0] == json{{"name", "_Z5saxpyfPfS_"},
                                                {"launches", 7},
                                                {"ran", 7},
                                                {"recorded", 0},
                                                {"host_ns", 2'100'000},
                                                {"mean_host_ns", 300'000}});
  CHECK(j["processes"][1]["kernels"][0]["recorded"] == 4);
}

TEST_CASE("render: JSON lines carry the table's data", "[trace][render]") {
  AllocationLedger l = scenario();
  const std::string line = render_json_line(l.snapshot(true), "2025-06-01T12:00:00Z");
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line
  json j = json::parse(line);
  CHECK(j["time"] == "2025-06-01T12:00:00Z");
  CHECK(j["last_event_ns"] == 60);
  CHECK(j["total"]["live_bytes"] == 1536 * MiB + 1000 + 1 * GiB + 256 * MiB);
  CHECK(j["total"]["peak_bytes"] == 3 * GiB);
  CHECK(j["total"]["leaked_bytes"] == 256 * MiB);
  CHECK(j["total"]["leaked_allocs"] == 1);
  REQUIRE(j["devices"].size() == 3);
  CHECK(j["devices"][0]["device"] == -1);
  CHECK(j["devices"][2]["device"] == 1);
  CHECK(j["devices"][2]["peak_bytes"] == 1536 * MiB);
  CHECK(j["devices"][2]["failed_calls"] == 1);
  CHECK(j["devices"][2]["processes"] == 2);
  REQUIRE(j["processes"].size() == 4);
  const json& server = j["processes"][1];
  CHECK(server["pid"] == 5000);
  CHECK(server["state"] == "running");
  CHECK(server["since_attach"] == true);
  CHECK(server["baseline_known"] == true);
  CHECK(server["live_bytes"] == 1 * GiB + 256 * MiB);
  REQUIRE(server["books"].size() == 2);
  CHECK(server["books"][0]["kind"] == "device");
  CHECK(server["books"][0]["baseline_bytes"] == 1 * GiB);
  CHECK(server["books"][0]["failed_calls"] == 1);
  CHECK(server["books"][1]["kind"] == "managed");
  CHECK(server["books"][1]["outstanding_allocs"] == 1);
  const json& leaky = j["processes"][2];
  CHECK(leaky["state"] == "exited");
  CHECK(leaky["ppid"] == 4242);
  CHECK(leaky["books"][0]["leaked_bytes"] == 256 * MiB);
  CHECK(leaky["books"][0]["leaked_allocs"] == 1);
  CHECK(j["health"]["events_lost"] == false);
  CHECK(j["health"]["events"] == 9);
  CHECK(j["health"]["rb_drops"] == 0);
  CHECK(j["health"]["ledger"]["events"] == 9);
  CHECK(j["libraries"][1]["path"] == "/usr/local/cuda/lib64/libcudart.so.13");
  CHECK(j["libraries"][1]["mode"] == "uprobe");
  // Without exited processes.
  CHECK(json::parse(render_json_line(l.snapshot(false), "t"))["processes"].size() == 3);
}

TEST_CASE("render: the CI summary follows its schema", "[trace][render]") {
  AllocationLedger l = scenario();
  Snapshot s = l.snapshot(true);
  Verdict v = evaluate(s, std::nullopt, false);
  RunInfo run;
  run.command = {"python3", "train.py"};
  run.exit_status = 0;
  run.duration_s = 12.5;
  run.leaked_stacks = std::vector<StackReport>{{6000, "leaky", 3, 256 * MiB, 1, {"cudaMalloc", "main"}}};
  const std::string text = render_summary(s, run, v);
  REQUIRE(text.back() == '\n');
  json j = json::parse(text);

  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  // nlohmann::json sorts keys; the schema fixes the set.
  CHECK(keys == std::vector<std::string>{"analysis", "command", "command_exit_status", "drops", "duration_s",
                                         "leaked_stacks", "libraries", "processes", "schema", "total", "verdict"});
  CHECK(j["schema"] == "fakegpu-trace/summary/v1");
  CHECK(j["command"] == json::array({"python3", "train.py"}));
  CHECK(j["command_exit_status"] == 0);
  CHECK(j["duration_s"] == 12.5);
  CHECK(j["verdict"]["status"] == "ok");
  CHECK(j["verdict"]["exit_code"] == 0);
  CHECK(j["verdict"]["max_peak_bytes"].is_null());
  CHECK(j["verdict"]["fail_on_leak"] == false);
  CHECK(j["verdict"]["trustworthy"] == true);
  CHECK(j["verdict"]["reasons"].empty());

  const json& total = j["total"];
  CHECK(total["peak_bytes"] == 3 * GiB);
  CHECK(total["leaked_bytes"] == 256 * MiB);
  CHECK(total["leaked_allocs"] == 1);
  REQUIRE(total["devices"].size() == 3);
  CHECK(total["devices"][1] == json{{"device", 0},
                                    {"peak_bytes", 2 * GiB},
                                    {"allocs", 3},
                                    {"frees", 1},
                                    {"failed_calls", 0},
                                    {"leaked_bytes", 0},
                                    {"leaked_allocs", 0},
                                    {"processes", 2}});
  REQUIRE(total["calls"].size() == 1);
  CHECK(total["calls"][0] == json{{"func", "cudaMalloc"},
                                  {"calls", 3},
                                  {"errors", 1},
                                  {"timed", 3},
                                  {"total_ns", 4600},
                                  {"max_ns", 3000},
                                  {"log2_hist_ns", json{{"512", 2}, {"2048", 1}}}});
  CHECK(total["copies"]["HtoD"] == json{{"bytes", 4096}, {"count", 1}});
  CHECK(total["copies"]["DtoH"] == json{{"bytes", 0}, {"count", 0}});
  CHECK(total["copies"].size() == 5);
  CHECK(total["launches"] == 3);

  REQUIRE(j["processes"].size() == 4);
  const json& leaky = j["processes"][2];
  CHECK(leaky["pid"] == 6000);
  CHECK(leaky["state"] == "exited");
  CHECK(leaky["exit_event_seen"] == true);
  CHECK(leaky["peak_bytes"] == 256 * MiB);
  CHECK(leaky["leaked_bytes"] == 256 * MiB);
  CHECK(leaky["devices"] == json::array({json{{"device", 1},
                                              {"live_bytes", 0},
                                              {"peak_bytes", 256 * MiB},
                                              {"allocs", 1},
                                              {"frees", 0},
                                              {"failed_calls", 0},
                                              {"leaked_bytes", 256 * MiB},
                                              {"leaked_allocs", 1}}}));
  CHECK(leaky["calls"][0]["calls"] == 1);
  CHECK(j["processes"][0]["launches"] == 3);

  CHECK(j["drops"]["events_lost"] == false);
  CHECK(j["drops"]["rb_drops"] == 0);
  CHECK(j["drops"]["missing_entry"] == 0);
  CHECK(j["drops"]["alloc_map_full"] == 0);
  CHECK(j["drops"]["unmatched_free"] == 0);
  CHECK(j["drops"]["ledger"]["bad_records"] == 0);
  CHECK(j["libraries"][0] == json{{"path", "/opt/fakegpu/lib/libfake_gpu.so"}, {"mode", "usdt"}});
  CHECK(j["leaked_stacks"][0]["frames"] == json::array({"cudaMalloc", "main"}));

  // Without --stacks there is no stacks key; the keys keep the documented order.
  run.leaked_stacks.reset();
  const auto ordered = summary_json(s, run, v);
  std::vector<std::string> order;
  for (auto it = ordered.begin(); it != ordered.end(); ++it) order.push_back(it.key());
  CHECK(order == std::vector<std::string>{"schema", "command", "command_exit_status", "duration_s", "verdict", "total",
                                          "processes", "drops", "libraries", "analysis"});
}

TEST_CASE("verdict: exit codes for peak, leak and lost events", "[trace][render]") {
  AllocationLedger l = scenario();
  Snapshot s = l.snapshot(true);

  Verdict none = evaluate(s, std::nullopt, false);
  CHECK(none.code == 0);
  CHECK_FALSE(none.checked);
  CHECK(none.exit_status(0) == 0);
  CHECK(none.exit_status(7) == 7);  // the command's status passes through
  CHECK(std::string(none.status()) == "ok");

  Verdict fits = evaluate(s, 2 * GiB, false);  // device 0 peaked at exactly 2 GiB: not over
  CHECK(fits.code == 0);
  CHECK(fits.checked);
  CHECK(fits.reasons.empty());

  Verdict over = evaluate(s, 1536 * MiB, false);
  CHECK(over.code == kExitPeakExceeded);
  CHECK(over.code == 3);
  CHECK(over.exit_status(0) == 3);
  CHECK(over.exit_status(1) == 3);
  CHECK(std::string(over.status()) == "peak_exceeded");
  CHECK(over.reasons ==
        std::vector<std::string>{
            "device 0 peaked at 2.0 GiB (2147483648 bytes), over --max-peak 1.5 GiB (1610612736 bytes)"});

  Verdict leak = evaluate(s, std::nullopt, true);
  CHECK(leak.code == kExitLeaked);
  CHECK(leak.code == 4);
  CHECK(std::string(leak.status()) == "leaked");
  // Running processes hold memory; only the exited one leaked.
  CHECK(leak.reasons ==
        std::vector<std::string>{"pid 6000 (leaky) leaked 256.0 MiB (268435456 bytes) in 1 allocation on device 1"});

  Verdict both = evaluate(s, 1 * GiB, true);
  CHECK(both.code == kExitPeakExceeded);  // peak before leak
  CHECK(both.peak_exceeded);
  CHECK(both.leaked);
  CHECK(both.reasons.size() == 3);

  Health h;
  h.missing_entry = 2;
  l.set_health(h);
  Snapshot lossy = l.snapshot(true);
  Verdict lost = evaluate(lossy, 1 * GiB, true);
  CHECK(lost.code == kExitEventsLost);
  CHECK(lost.code == 5);
  CHECK(std::string(lost.status()) == "events_lost");
  CHECK(lost.reasons.back() ==
        "events were lost (ring-buffer drops 0, missing entry records 2, alloc map full 0, bad records 0, "
        "duplicate allocs 0, processes missed 0): the verdict cannot be trusted");
  // With no threshold asked for, lost events do not change the exit status; the summary says so.
  Verdict unchecked = evaluate(lossy, std::nullopt, false);
  CHECK(unchecked.code == 0);
  CHECK(unchecked.events_lost);
  RunInfo run;
  run.exit_status = 1;
  json j = summary_json(lossy, run, unchecked);
  CHECK(j["verdict"]["exit_code"] == 1);
  CHECK(j["verdict"]["trustworthy"] == false);
  CHECK(j["drops"]["events_lost"] == true);
  CHECK(j["drops"]["missing_entry"] == 2);

  // A clean run with thresholds kept.
  AllocationLedger clean;
  clean.track_process(1, "ok", 0, 0, false);
  clean.apply(ev(EventType::Alloc, 1, 0, MemKind::Device, 0x1, 100));
  clean.apply(ev(EventType::Free, 1, 0, MemKind::Device, 0x1, 100));
  clean.apply(ev(EventType::ProcExit, 1, -1, MemKind::Unknown, 0, 0));
  Verdict good = evaluate(clean.snapshot(true), 100, true);
  CHECK(good.code == 0);
  CHECK(good.exit_status(0) == 0);
  CHECK(good.reasons.empty());
}

TEST_CASE("sizes: --max-peak parsing", "[trace][render]") {
  CHECK(parse_size("512MiB") == 512 * MiB);
  CHECK(parse_size("2GiB") == 2 * GiB);
  CHECK(parse_size("1.5G") == 1536 * MiB);
  CHECK(parse_size("1073741824") == GiB);
  CHECK(parse_size("  1 KiB ") == 1024u);
  CHECK(parse_size("4k") == 4096u);
  CHECK(parse_size("2 Gi") == 2 * GiB);
  CHECK(parse_size("1kb") == 1000u);
  CHECK(parse_size("1.5GB") == 1500000000u);
  CHECK(parse_size("3TiB") == 3ull << 40);
  CHECK(parse_size("100b") == 100u);
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size(".5K") == 512u);
  CHECK(parse_size("0.1K") == 102u);  // whole bytes, rounded down
  CHECK(parse_size("18446744073709551615") == std::numeric_limits<uint64_t>::max());

  const std::string form =
      "expected a size such as 512MiB, 2GiB, 1.5G or 1073741824 (units: B, K/KiB, M/MiB, G/GiB, T/TiB = powers of "
      "1024; KB, MB, GB, TB = powers of 1000)";
  CHECK(size_error("") == "empty size: " + form);
  CHECK(size_error("   ") == "empty size: " + form);
  CHECK(size_error("-1G") == "negative size '-1G': " + form);
  CHECK(size_error("abc") == "not a size: 'abc': " + form);
  CHECK(size_error(".") == "not a size: '.': " + form);
  CHECK(size_error("1.5X") == "unknown unit 'X' in '1.5X': " + form);
  CHECK(size_error("1e9") == "unknown unit 'e9' in '1e9': " + form);
  CHECK(size_error("2 GiB extra") == "unknown unit 'GiB extra' in '2 GiB extra': " + form);
  CHECK(size_error("18446744073709551616") == "size '18446744073709551616' is too large (the most is 16 EiB - 1 byte)");
  CHECK(size_error("16777216TiB") == "size '16777216TiB' is too large (the most is 16 EiB - 1 byte)");
  CHECK_FALSE(parse_size("junk"));  // no error pointer: fine
}

TEST_CASE("render: a process name that is not UTF-8 is replaced, never thrown", "[trace][render]") {
  AllocationLedger l;
  l.track_process(77, std::string("bad\xff\xfename"), 1, 0, false);
  l.apply(ev(EventType::Alloc, 77, 0, MemKind::Device, 0x1, 4096));
  const std::string line = render_json_line(l.snapshot(true), "t");
  const json j = json::parse(line);
  CHECK(j["processes"][0]["comm"] == "bad\xef\xbf\xbd\xef\xbf\xbdname");  // U+FFFD twice
}
