// SPDX-License-Identifier: Apache-2.0
// fakegpu-trace: system-wide, per-process GPU memory books from eBPF probes on the CUDA
// libraries (the fake backend's USDT probes, or entry/return probes on any CUDA library).
// A thin main: argument parsing and exit codes; the work is in collector/ and core/.
#include "collector/collector.h"
#include "collector/errors.h"
#include "collector/ring_reader.h"
#include "session/session.h"
#include "core/render.h"
#include "server/server.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace {

using fgtrace::TraceError;
using fgtrace::TraceOptions;

constexpr const char* kExitCodes =
    "Exit status: 0 ok; 2 bad arguments; 10 not privileged (run with sudo); 11 the kernel lacks a feature (see "
    "`fakegpu-trace check`); 12 PID gone or no CUDA library found; 13 tracing failed.\n"
    "run: the command's status, or 3 a GPU's peak went over --max-peak, 4 a process leaked with --fail-on-leak, "
    "5 events were lost while a threshold was set, 6 the OOM risk reached --fail-on-oom-risk; 125 fakegpu-trace "
    "failed, 126 the command cannot be executed, 127 the command was not found.\n"
    "OOM risk (T = --oom-threshold, u = usage %, e = forecast seconds until full): critical u >= (100+T)/2 or "
    "e <= 60; high u >= T or e <= 300; medium u >= 0.8*T or e <= 1800; else low. e comes from a least-squares fit "
    "over --oom-window and counts when its confidence (R^2 x min(1, (samples-2)/8)) is >= 0.5.\n"
    "Environment: FAKEGPU_TRACE_DEBUG=1 shows libbpf's log.";

void on_signal(int) { fgtrace::request_stop(); }

// A number of seconds above 0 and at most `most`: nan, inf and the like are refused (CLI11's
// PositiveNumber lets nan through).
CLI::Validator seconds(double most) {
  return CLI::Validator(
      [most](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > most) {
          char range[64];
          std::snprintf(range, sizeof range, "%g", most);
          return "'" + text + "' is not a number of seconds above 0 and at most " + range;
        }
        return {};
      },
      "SEC");
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

std::vector<int> parse_pids(const std::vector<std::string>& items) {
  std::vector<int> out;
  for (const std::string& item : items) {
    std::stringstream ss(item);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      char* end = nullptr;
      const long v = std::strtol(tok.c_str(), &end, 10);
      if (tok.empty() || !end || *end || v <= 0 || v > 4194304)
        throw CLI::ValidationError("-p", "\"" + tok + "\" is not a process id (use -p 1234 or -p 1234,5678)");
      out.push_back(static_cast<int>(v));
    }
  }
  return out;
}

uint64_t parse_size_option(const std::string& name, const std::string& text) {
  std::string err;
  auto v = fgtrace::parse_size(text, &err);
  if (!v) throw CLI::ValidationError(name, err);
  return *v;
}

// A finite number in [lo, hi] (lo excluded when open_lo) for option `name`, else a message
// that names the option, the input and the expected form (CLI11 would accept "nan" or "inf").
double parse_number_option(const std::string& name, const std::string& text, double lo, double hi, bool open_lo,
                           const std::string& form) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v > hi || (open_lo ? v <= lo : v < lo))
    throw CLI::ValidationError(name, "'" + text + "' is not " + form);
  return v;
}

// --leak-rate: a size per minute ("10MiB", "10MiB/min", "512K/min").
uint64_t parse_rate_option(const std::string& text) {
  std::string t = text;
  constexpr std::string_view kPerMin = "/min";
  if (t.size() > kPerMin.size() && t.compare(t.size() - kPerMin.size(), kPerMin.size(), kPerMin) == 0)
    t.resize(t.size() - kPerMin.size());
  std::string err;
  auto v = fgtrace::parse_size(t, &err);
  if (!v || *v == 0)
    throw CLI::ValidationError(
        "--leak-rate", (v ? "'" + text + "' is zero" : err) + " (a growth per minute, e.g. --leak-rate 10MiB/min)");
  return *v;
}

// A bearer token file: its first line, without surrounding blanks; refused when empty.
std::string read_token(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  const auto b = line.find_first_not_of(" \t\r");
  const auto e = line.find_last_not_of(" \t\r");
  const std::string token = b == std::string::npos ? "" : line.substr(b, e - b + 1);
  if (!f && !f.eof()) throw CLI::ValidationError("--auth-token-file", "cannot read " + path);
  if (token.empty())
    throw CLI::ValidationError("--auth-token-file", path + " holds no token (its first line is empty)");
  return token;
}

// Common tracing options of attach, monitor and run.
struct Common {
  std::vector<std::string> libs;
  double interval = 1.0, duration = 0;
  bool json = false, uprobes_only = false, stacks = false, quiet = false, allow_remote = false;
  size_t top = 10, max_processes = 500;
  std::string listen, token_file;
  std::string ringbuf = "16MiB";
  uint32_t max_allocs = 1u << 18;
  uint32_t max_stacks = 16384;
  uint32_t latency_every = 8;
  std::string oom_threshold = "85", oom_window = "60", leak_age, leak_rate = "10MiB", history = "3600";
  bool no_analyses = false;
  void add(CLI::App* app, bool with_output) {
    app->add_option("--oom-threshold", oom_threshold,
                    "OOM risk: usage percentage (0-100] at which a device is at high risk (default 85)")
        ->type_name("PCT");
    app->add_option("--oom-window", oom_window,
                    "OOM forecast and growth: fit the last SEC seconds of refreshes (default 60)")
        ->type_name("SEC");
    app->add_option("--leak-age", leak_age,
                    "list outstanding allocations at least SEC seconds old, per process (by stack with --stacks)")
        ->type_name("SEC");
    app->add_option("--leak-rate", leak_rate,
                    "flag processes whose GPU memory grows at least SIZE per minute (e.g. 10MiB/min; default 10MiB)")
        ->type_name("SIZE");
    app->add_flag("--no-analyses", no_analyses, "books only: no forecast, leak-age, growth or fragmentation");
    app->add_option("--lib", libs, "also trace this CUDA library (libcudart, libcuda or the fake backend)")
        ->check(CLI::ExistingFile);
    if (with_output) {
      app->add_option("-i,--interval", interval, "refresh every SEC seconds")->check(seconds(3600));
      app->add_flag("-j,--json", json, "JSON lines instead of the table");
      app->add_flag("-q,--quiet", quiet, "print no table or JSON lines (with --listen: serve only)");
      app->add_option("--listen", listen,
                      "serve the dashboard, /metrics and the JSON API on HOST:PORT (e.g. 127.0.0.1:9400)");
      app->add_flag("--allow-remote", allow_remote, "let --listen bind an address other than loopback");
      app->add_option("--auth-token-file", token_file,
                      "require 'Authorization: Bearer TOKEN' (TOKEN: the file's first line)")
          ->check(CLI::ExistingFile);
      app->add_option("--history", history,
                      "with --listen: keep SEC seconds of refreshes for /api/v1/history and the page (default 3600)")
          ->type_name("SEC");
      app->add_option("--max-processes", max_processes,
                      "/metrics: processes with their own series (by usage), the rest summed as pid=\"other\"; 0: all");
    } else {
      app->add_option("-i,--interval", interval,
                      "sample the books for the OOM forecast and growth every SEC seconds (default 1)")
          ->check(seconds(3600));
    }
    app->add_option("-d,--duration", duration, "stop after SEC seconds")->check(seconds(1e9));
    app->add_flag("--uprobes-only", uprobes_only,
                  "trace the fake backend through entry/return probes too, not its USDT probes");
    app->add_option("--ringbuf-size", ringbuf,
                    "the BPF ring buffer's size (default 16MiB): a power of two and a multiple of the page size (" +
                        std::to_string(::sysconf(_SC_PAGESIZE) / 1024) +
                        "KiB here), up to 2GiB; a record takes 40 bytes, up to 80 when it carries a time, an error "
                        "status, a stack id or the process name");
    CLI::Option* stacks_flag = app->add_flag(
        "--stacks", stacks,
        "record each allocation's user stack; list the top stacks by outstanding (run: leaked) bytes");
    app->add_option("--top", top, "how many stacks --stacks lists")->check(CLI::Range(1, 1000));
    app->add_option("--max-stacks", max_stacks,
                    "distinct stacks --stacks keeps (a table of that many slots, rounded up to a power of two, "
                    "~0.5 KiB each, and 2 KiB more per stack seen; an allocation whose stack finds its slot taken is "
                    "counted in stacks_lost)")
        ->check(CLI::Range(1u, 1u << 18))
        ->needs(stacks_flag);
    app->add_option("--max-allocs", max_allocs,
                    "live allocations the entry/return probes can remember (rounded up to a power of two)")
        ->check(CLI::Range(16u, 1u << 24));
    app->add_option("--latency-every", latency_every,
                    "entry/return probes time a random 1 in N calls (counts stay exact; 1: time every call, "
                    "~50 ns more per call)")
        ->check(CLI::Range(1u, 1u << 20));
  }
  void apply(TraceOptions& o) const {
    o.libs = libs;
    o.interval_s = interval;
    o.duration_s = duration;
    o.json = json;
    o.uprobes_only = uprobes_only;
    o.ringbuf_bytes = parse_size_option("--ringbuf-size", ringbuf);
    if (const std::string p = fgtrace::ringbuf_size_problem(o.ringbuf_bytes,
                                                            static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
        !p.empty())
      throw CLI::ValidationError("--ringbuf-size", p);
    o.max_allocs = max_allocs;
    o.latency_every = latency_every;
    o.stacks = stacks;
    o.top_stacks = top;
    o.max_stacks = max_stacks;
    o.quiet = quiet;
    o.listen = listen;
    o.allow_remote = allow_remote;
    o.max_processes = max_processes;
    o.analyses = !no_analyses;
    o.analysis.oom_threshold_pct = parse_number_option("--oom-threshold", oom_threshold, 0, 100, true,
                                                       "a percentage in (0, 100], e.g. --oom-threshold 85");
    o.analysis.window_s = parse_number_option("--oom-window", oom_window, 0, 86400 * 7, true,
                                              "a number of seconds above 0 (at most a week), e.g. --oom-window 60");
    if (!leak_age.empty())
      o.analysis.leak_age_s = parse_number_option("--leak-age", leak_age, 0, 1e9, false,
                                                  "a number of seconds, 0 or more, e.g. --leak-age 60");
    o.analysis.leak_rate_bytes_per_min = parse_rate_option(leak_rate);
    o.history_s = parse_number_option("--history", history, 0, 86400 * 7, true,
                                      "a number of seconds above 0 (at most a week), e.g. --history 3600");
    if (!listen.empty()) {  // checked before any probe is attached
      std::string err;
      const auto addr = fgtrace::server::parse_listen_address(listen, &err);
      if (!addr) throw CLI::ValidationError("--listen", err);
      if (!addr->loopback && !allow_remote)
        throw CLI::ValidationError("--listen", listen +
                                                   " is not a loopback address: the server shows every traced "
                                                   "process to whoever connects; add --allow-remote (and "
                                                   "--auth-token-file) to serve it there");
    }
    if (!token_file.empty()) o.auth_token = read_token(token_file);
    if (!o.auth_token.empty() && o.listen.empty())
      throw CLI::ValidationError("--auth-token-file", "protects the server: give --listen HOST:PORT too");
  }
};

// The status of the first required item that fails (privileges come first), else 0.
int run_check() {
  int status = fgtrace::kExitOk;
  for (const auto& item : fgtrace::check_system()) {
    std::printf("%-52s %s  %s\n", item.what.c_str(),
                item.ok         ? "ok  "
                : item.required ? "FAIL"
                                : "note",
                item.detail.c_str());
    if (!item.ok && item.required && status == fgtrace::kExitOk) status = item.exit_status;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fakegpu-trace: per-process, per-device GPU memory books from eBPF probes on CUDA libraries",
               "fakegpu-trace"};
  app.require_subcommand(1);
  app.footer(std::string("Shown per process: live, peak and leaked bytes by device and memory kind; allocations, "
                         "frees and failed calls; API calls and their latency; copies by direction; kernel "
                         "launches by name, how many ran on the host CPU or were recorded, and their host time "
                         "(USDT); calls by calling library.\n\n"
                         "Examples:\n"
                         "  sudo fakegpu-trace attach -p 1234            live table of one process\n"
                         "  sudo fakegpu-trace monitor -j -i 5           every GPU process on the host, JSON lines\n"
                         "  sudo fakegpu-trace monitor -q --listen 127.0.0.1:9400   dashboard and /metrics\n"
                         "  sudo fakegpu-trace run --fail-on-leak --max-peak 8GiB -- pytest tests/gpu\n"
                         "  sudo fakegpu-trace run --stacks -- ./app      leaks by user stack in the summary\n"
                         "  sudo fakegpu-trace run --fail-on-oom-risk high -i 0.5 -- python train.py\n"
                         "  sudo fakegpu-trace attach -p 1234 --leak-age 300 --stacks   what it has held for 5 min\n"
                         "  fakegpu-trace check                          can this machine trace?\n\n") +
             kExitCodes);

  Common attach_opts, monitor_opts, run_opts;
  std::vector<std::string> pid_items;
  auto* attach = app.add_subcommand("attach", "trace running processes (and their children)");
  attach->add_option("-p,--pid", pid_items, "PID[,PID...]")->required();
  attach_opts.add(attach, true);

  auto* monitor = app.add_subcommand("monitor", "trace every process on the host that uses a CUDA library");
  monitor_opts.add(monitor, true);

  std::string max_peak, summary, timeline, html, fail_on_oom_risk;
  bool fail_on_leak = false;
  std::vector<std::string> command;
  auto* run = app.add_subcommand("run", "run a command and trace it and its descendants; print a JSON summary");
  run->add_option("--max-peak", max_peak, "fail (exit 3) if a GPU's peak goes over SIZE (e.g. 8GiB)");
  run->add_flag("--fail-on-leak", fail_on_leak, "fail (exit 4) if a process exits holding GPU memory");
  run->add_option("--fail-on-oom-risk", fail_on_oom_risk,
                  "fail (exit 6) if a device's or process's OOM risk reaches LEVEL (low, medium, high, critical) "
                  "at any refresh")
      ->type_name("LEVEL");
  run->add_option("--summary", summary, "also write the JSON summary to FILE");
  run->add_option("--timeline", timeline,
                  "write memory over time per device and process, OOM errors and leaks as a trace-event JSON "
                  "FILE (open it in ui.perfetto.dev or chrome://tracing)");
  run->add_option("--html", html,
                  "write a self-contained HTML page: verdict, memory over time per device and process, OOM "
                  "failures, books and top leaks");
  run_opts.add(run, false);
  run->add_option("command", command, "the command and its arguments (after --)")->required();
  run->prefix_command(false);

  auto* check = app.add_subcommand("check", "tell whether this machine can trace, and what to fix");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : fgtrace::kExitUsage;
  }

  if (check->parsed()) return run_check();

  TraceOptions opts;
  try {
    if (attach->parsed()) {
      opts.mode = TraceOptions::Mode::Attach;
      opts.pids = parse_pids(pid_items);
      attach_opts.apply(opts);
    } else if (monitor->parsed()) {
      opts.mode = TraceOptions::Mode::Monitor;
      monitor_opts.apply(opts);
    } else {
      opts.mode = TraceOptions::Mode::Run;
      run_opts.apply(opts);
      opts.command = command;
      opts.fail_on_leak = fail_on_leak;
      opts.summary_file = summary;
      opts.timeline_file = timeline;
      opts.html_file = html;
      if (!max_peak.empty()) opts.max_peak = parse_size_option("--max-peak", max_peak);
      if (!fail_on_oom_risk.empty()) {
        opts.fail_on_oom_risk = fgtrace::parse_risk_level(fail_on_oom_risk);
        if (!opts.fail_on_oom_risk)
          throw CLI::ValidationError(
              "--fail-on-oom-risk",
              "'" + fail_on_oom_risk + "' is not a risk level: use low, medium, high or critical");
        if (opts.analyses == false)
          throw CLI::ValidationError("--fail-on-oom-risk", "needs the analyses: drop --no-analyses");
      }
    }
  } catch (const CLI::Error& e) {
    std::fprintf(stderr, "fakegpu-trace: %s\n", e.what());
    return fgtrace::kExitUsage;
  }

  install_signals();
  try {
    return fgtrace::trace(opts, std::cout);
  } catch (const TraceError& e) {
    std::fprintf(stderr, "fakegpu-trace: %s\n", e.what());
    if (opts.mode == TraceOptions::Mode::Run && e.code != 126 && e.code != 127) return 125;
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fakegpu-trace: %s\n", e.what());
    return opts.mode == TraceOptions::Mode::Run ? 125 : fgtrace::kExitFailed;
  }
}
