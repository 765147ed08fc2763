// SPDX-License-Identifier: Apache-2.0
#include "session/session.h"

#include "collector/baseline.h"
#include "collector/collector.h"
#include "collector/discovery.h"
#include "collector/errors.h"
#include "collector/functions.h"
#include "collector/ring_reader.h"
#include "collector/symbolizer.h"
#include "collector/unique_fd.h"
#include "core/html_report.h"
#include "core/ledger.h"
#include "core/render.h"
#include "core/stacks.h"
#include "core/timeline.h"
#include "server/server.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>

namespace fgtrace {
namespace {

std::atomic<bool> g_stop{false};

std::string wall_time() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

uint32_t ppid_of(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t rp = s.rfind(')');
  if (rp == std::string::npos) return 0;
  unsigned ppid = 0;
  char state = 0;
  std::sscanf(s.c_str() + rp + 1, " %c %u", &state, &ppid);
  return ppid;
}

// Running, not a zombie: a zombie has passed its exit tracepoint already.
bool process_alive(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t rp = s.rfind(')');
  if (rp == std::string::npos || rp + 2 >= s.size()) return false;
  const char state = s[rp + 2];
  return state != 'Z' && state != 'X';
}

// The command of `run`, started stopped at a gate until the probes are in place, as the
// user who invoked sudo (not root) when started through sudo.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int gate[2];
    int report[2];  // the exec error, if any, comes back through a close-on-exec pipe
    if (::pipe2(gate, O_CLOEXEC) != 0) throw TraceError(std::string("pipe: ") + std::strerror(errno));
    const UniqueFd gate_read(gate[0]);
    gate_.reset(gate[1]);
    if (::pipe2(report, O_CLOEXEC) != 0) throw TraceError(std::string("pipe: ") + std::strerror(errno));
    report_.reset(report[0]);
    const UniqueFd report_write(report[1]);
    pid_ = ::fork();
    if (pid_ < 0) throw TraceError(std::string("fork: ") + std::strerror(errno));
    if (pid_ == 0) {
      gate_.reset();  // the parent's ends
      report_.reset();
      char go = 0;
      while (::read(gate_read.get(), &go, 1) < 0 && errno == EINTR) {}
      if (go != 1) ::_exit(125);  // fakegpu-trace ended (killed) before its probes were in place
      drop_privileges();
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      const int e = errno;
      ssize_t w = ::write(report_write.get(), &e, sizeof e);
      (void)w;
      ::_exit(e == ENOENT ? 127 : 126);
    }
  }
  int pid() const { return pid_; }
  // Lets the command exec; returns its exec error (0 if it is running).
  int release() {
    char go = 1;
    ssize_t w = ::write(gate_.get(), &go, 1);
    (void)w;
    gate_.reset();
    int e = 0;
    const ssize_t n = ::read(report_.get(), &e, sizeof e);
    report_.reset();
    return n == sizeof e ? e : 0;
  }
  // Non-blocking: the command's exit status once it has ended (its code, or 128 + signal).
  std::optional<int> poll() {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r != pid_) return std::nullopt;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

 private:
  static void drop_privileges() {
    if (::geteuid() != 0) return;
    const char* uid_s = std::getenv("SUDO_UID");
    const char* gid_s = std::getenv("SUDO_GID");
    if (!uid_s || !gid_s) return;
    const uid_t uid = static_cast<uid_t>(std::strtoul(uid_s, nullptr, 10));
    const gid_t gid = static_cast<gid_t>(std::strtoul(gid_s, nullptr, 10));
    if (const passwd* pw = ::getpwuid(uid)) {
      ::initgroups(pw->pw_name, gid);
      ::setenv("HOME", pw->pw_dir, 1);
      ::setenv("USER", pw->pw_name, 1);
      ::setenv("LOGNAME", pw->pw_name, 1);
    } else {
      ::setgroups(0, nullptr);
    }
    if (::setgid(gid) != 0 || ::setuid(uid) != 0) {
      std::fprintf(stderr, "fakegpu-trace: cannot run the command as uid %u: %s\n", uid, std::strerror(errno));
      ::_exit(126);
    }
  }
  pid_t pid_ = -1;
  UniqueFd gate_, report_;  // the parent's ends of the two pipes
};

class Session {
 public:
  Session(const TraceOptions& opts, std::ostream& out)
      : opts_(opts),
        out_(out),
        collector_(collector_options(opts)),
        history_(server::history_samples_for(opts.history_s, opts.interval_s)) {
    if (opts.analyses) analyzer_.emplace(opts.analysis);
    // Opened before the command starts: a path that cannot be written fails the run at once.
    auto open = [](std::ofstream& f, const std::string& path, const char* what) {
      if (path.empty()) return;
      f.open(path, std::ios::trunc);
      if (!f) throw TraceError(std::string("cannot write the ") + what + " to " + path + ": " + std::strerror(errno));
    };
    open(timeline_out_, opts_.timeline_file, "timeline");
    open(html_out_, opts_.html_file, "HTML report");
    if (timeline_out_.is_open() || html_out_.is_open()) {
      timeline_.emplace();
      ledger_.set_observer(&*timeline_);
    }
  }

  int run() {
    std::optional<Child> child;
    switch (opts_.mode) {
      case TraceOptions::Mode::Attach: start_attach(); break;
      case TraceOptions::Mode::Monitor: start_monitor(); break;
      case TraceOptions::Mode::Run:
        child.emplace(opts_.command);
        start_run(child->pid());
        break;
    }
    start_server();
    announce_ready();
    const uint64_t start = monotonic_ns();
    if (child) {
      if (const int e = child->release()) {
        // The command could not be executed: nothing was traced.
        (void)child->poll();
        throw TraceError("cannot run " + opts_.command[0] + ": " + std::strerror(e), e == ENOENT ? 127 : 126);
      }
    }
    const uint64_t interval = static_cast<uint64_t>(opts_.interval_s * 1e9);
    uint64_t next_refresh = start + interval;
    std::optional<int> command_status;
    DrainPacer pacer;
    while (!g_stop.load()) {
      pacer.drained(static_cast<size_t>(collector_.poll(pacer.wait_ms(), sink_)));
      handle_untraced();
      const uint64_t now = monotonic_ns();
      if (child && !command_status) {
        command_status = child->poll();
        if (command_status) break;  // the command ended: take its last events below
      }
      if (opts_.duration_s > 0 && now - start >= static_cast<uint64_t>(opts_.duration_s * 1e9)) break;
      if (now >= next_refresh) {
        refresh(now);
        if (opts_.mode != TraceOptions::Mode::Run) render();
        next_refresh = now + interval;
      }
    }
    drain_delivered();  // everything the kernel has delivered so far, then the final books
    refresh(monotonic_ns());
    if (opts_.mode != TraceOptions::Mode::Run) {
      render();
      return kExitOk;
    }
    if (!command_status) {  // stopped by a signal or -d: the command keeps running on its own
      command_status = child->poll();
    }
    const Snapshot& snap = snap_;  // the final refresh's
    const Verdict verdict = evaluate(snap, opts_.max_peak, opts_.fail_on_leak, opts_.fail_on_oom_risk);
    RunInfo info;
    info.command = opts_.command;
    info.exit_status = command_status.value_or(0);
    info.duration_s = static_cast<double>(monotonic_ns() - start) / 1e9;
    info.max_peak = opts_.max_peak;
    info.fail_on_leak = opts_.fail_on_leak;
    info.fail_on_oom_risk = opts_.fail_on_oom_risk;
    if (opts_.stacks) info.leaked_stacks = top_stacks(snap, StackSet::Leaked, opts_.top_stacks, stack_text_);
    const std::string summary = render_summary(snap, info, verdict);
    out_ << summary << std::flush;
    if (!opts_.summary_file.empty()) {
      std::ofstream f(opts_.summary_file);
      f << summary;
      if (!f) throw TraceError("cannot write the summary to " + opts_.summary_file);
    }
    if (timeline_out_.is_open()) {
      timeline_->write(timeline_out_, snap);
      timeline_out_.close();
      if (!timeline_out_) throw TraceError("cannot write the timeline to " + opts_.timeline_file);
    }
    if (html_out_.is_open()) {
      write_html_report(html_out_, nlohmann::json::parse(summary), timeline_->series());
      html_out_.close();
      if (!html_out_) throw TraceError("cannot write the HTML report to " + opts_.html_file);
    }
    return verdict.exit_status(info.exit_status);
  }

 private:
  static CollectorOptions collector_options(const TraceOptions& o) {
    CollectorOptions c;
    c.filter_pids = o.mode != TraceOptions::Mode::Monitor;
    c.follow_children = true;  // fork and exec are followed in every mode
    c.ringbuf_bytes = o.ringbuf_bytes;
    c.max_allocs = o.max_allocs;
    c.latency_every = o.latency_every;
    c.force_uprobes = o.uprobes_only;
    c.stacks = o.stacks;
    c.max_stacks = o.max_stacks;
    return c;
  }

  // Attaches a library once; in monitor mode, processes already using a newly attached copy
  // were running before its probes: they are adopted with their baselines.
  bool attach(const std::string& path) {
    if (collector_.attached(path)) return false;
    const AttachedLibrary& lib = collector_.attach_library(path);
    if (opts_.stacks) symbolizer_.add_file(path);  // its frames are named after a process is gone
    if (!lib.usdt_problem.empty() && !opts_.uprobes_only)
      warn_once(path, path + ": " + lib.usdt_problem + ": traced through entry/return probes instead");
    return true;
  }

  // A process that was running before the probes: its true usage from the backend's ledger
  // when it has one, else figures since attach. The probes are live by now; allocations made
  // between attach and this read are both in the ledger and in events already delivered, so
  // the events are drained first and the baseline is what the ledger holds beyond them.
  // late: the process may be in the books already (a library it loaded was attached after
  // it started): its figures become "since attach", with what the ledger holds beyond them.
  void adopt_running(int pid, bool late = false) {
    if (seen_.count(pid) && !late) return;
    const bool known = !seen_.insert(pid).second;
    drain_delivered();
    if (!process_alive(pid)) return;  // it exited meanwhile: its exit record, if any, says so
    if (known && ledger_.running(static_cast<uint32_t>(pid)))
      ledger_.mark_since_attach(static_cast<uint32_t>(pid));
    else
      ledger_.track_process(static_cast<uint32_t>(pid), process_comm(pid), ppid_of(pid), monotonic_ns(), true);
    auto base = backend_baseline(pid);
    if (!base) return;
    std::map<std::pair<int32_t, int>, uint64_t> tracked;
    for (const auto& p : ledger_.snapshot(false).processes)
      if (p.pid == static_cast<uint32_t>(pid))
        for (const BookView& b : p.books) tracked[{b.device, static_cast<int>(b.kind)}] += b.live_bytes;
    for (const BaselineEntry& b : *base) {
      const uint64_t already = tracked[{b.device, static_cast<int>(b.kind)}];
      if (b.bytes > already)
        ledger_.set_baseline(static_cast<uint32_t>(pid), b.device, static_cast<MemKind>(b.kind), b.bytes - already);
    }
    ledger_.mark_baseline_known(static_cast<uint32_t>(pid));
  }

  // Processes on the host that map one of the attached libraries.
  void adopt_users_of_attached() {
    DIR* d = ::opendir("/proc");
    if (!d) return;
    std::vector<int> pids;
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (end && !*end && pid > 0 && pid != ::getpid()) pids.push_back(static_cast<int>(pid));
    }
    ::closedir(d);
    for (int pid : pids) {
      if (seen_.count(pid)) continue;
      for (const auto& l : cuda_libraries_of_quiet(pid))
        if (collector_.attached(l)) {
          adopt_running(pid);
          break;
        }
    }
  }

  void start_attach() {
    for (int pid : opts_.pids) {
      if (!process_exists(pid))
        throw TraceError("process " + std::to_string(pid) + " does not exist (check the PID with ps)", kExitNotFound);
      auto libs = cuda_libraries_of(pid);
      // A zombie maps nothing: it exited while we looked (before any probe was in place).
      if (libs.empty() && !process_alive(pid))
        throw TraceError("process " + std::to_string(pid) + " exited before its probes were in place: nothing to trace",
                         kExitNotFound);
      if (libs.empty() && opts_.libs.empty())
        throw TraceError("process " + std::to_string(pid) + " (" + process_comm(pid) +
                             ") maps no CUDA library (libcudart, libcuda or the fake backend); if it loads one later "
                             "or you know which it will use, name it with --lib PATH",
                         kExitNotFound);
      collector_.add_pid(static_cast<uint32_t>(pid));
      for (const auto& l : libs) attach(l);
    }
    for (const auto& l : opts_.libs) attach(l);
    // The baseline is read after the probes are live: what happens from here on is tracked.
    for (int pid : opts_.pids) adopt_running(pid);
    // A process that exited before its probes were in place has nothing to show.
    std::string gone;
    for (int pid : opts_.pids)
      if (!ledger_.knows(static_cast<uint32_t>(pid))) gone += (gone.empty() ? "" : ", ") + std::to_string(pid);
    if (gone.empty()) return;
    if (std::all_of(opts_.pids.begin(), opts_.pids.end(),
                    [this](int pid) { return !ledger_.knows(static_cast<uint32_t>(pid)); }))
      throw TraceError("process " + gone + " exited before its probes were in place: nothing to trace", kExitNotFound);
    std::fprintf(stderr, "fakegpu-trace: process %s exited before its probes were in place\n", gone.c_str());
  }

  void start_monitor() {
    for (const auto& l : default_libraries()) attach(l);
    for (const auto& l : opts_.libs) attach(l);
    rescan();
    adopt_users_of_attached();
    if (collector_.libraries().empty())
      std::fprintf(stderr,
                   "fakegpu-trace: no CUDA library found yet (no installed backend, none in ldconfig's cache, none "
                   "mapped): watching for processes that map one; name libraries with --lib PATH\n");
  }

  void start_run(int child_pid) {
    collector_.add_pid(static_cast<uint32_t>(child_pid));
    seen_.insert(child_pid);
    ledger_.track_process(static_cast<uint32_t>(child_pid), opts_.command[0], static_cast<uint32_t>(::getpid()),
                          monotonic_ns(), false);
    for (const auto& l : default_libraries()) attach(l);
    for (const auto& l : opts_.libs) attach(l);
  }

  // Newly appearing copies of the CUDA libraries, and processes already using them; attached
  // files rewritten in place get their probes again.
  void rescan() {
    std::vector<std::string> problems;
    for (const std::string& path : collector_.reattach_rewritten(&problems)) {
      std::fprintf(stderr, "fakegpu-trace: %s was rewritten in place; its probes are placed again from the new file\n",
                   path.c_str());
      if (opts_.stacks) symbolizer_.add_file(path);
    }
    for (const std::string& p : problems) warn_once(p, p);
    if (opts_.mode == TraceOptions::Mode::Monitor) {
      bool added = false;
      for (const auto& l : mapped_cuda_libraries()) {
        try {
          added |= attach(l);
        } catch (const TraceError& e) {
          warn_once(l, e.what());
        }
      }
      if (added) adopt_users_of_attached();
    } else {
      for (uint32_t pid : ledger_.running_pids())
        for (const auto& l : cuda_libraries_of_quiet(static_cast<int>(pid))) {
          try {
            attach(l);
          } catch (const TraceError& e) {
            warn_once(l, e.what());
          }
        }
    }
  }

  // Processes that loaded a CUDA library file not traced yet (bpf loader_state): the file is
  // attached now (from the path the loader opened, or the process's maps), a process still
  // running is adopted with its baseline, and one already gone without a traced call is
  // counted missed. A file that is no CUDA library is not traced, and its users are not missed.
  void handle_untraced() {
    for (const UntracedLoad& u : collector_.take_untraced()) {
      const int pid = static_cast<int>(u.tgid);
      if (not_cuda_.count({u.dev, u.ino})) continue;
      if (!collector_.attached_file(u.dev, u.ino)) {
        std::string path;
        const std::string via_root = "/proc/" + std::to_string(pid) + "/root" + u.path;
        for (const std::string& p : {u.path, via_root})
          if (path.empty() && !u.path.empty() && same_kernel_file(p, u.dev, u.ino)) path = p;
        if (path.empty())
          for (const std::string& p : cuda_libraries_of_quiet(pid))
            if (path.empty() && same_kernel_file(p, u.dev, u.ino)) path = p;
        if (!path.empty()) {
          if (collector_.attached(path)) {
            collector_.mark_attached_file(u.dev, u.ino);  // the same file through another mount
          } else {
            try {
              attach(path);
            } catch (const TraceError& e) {
              warn_once(path, e.what());
              if (e.code == kExitNotFound && !is_cuda_library(path)) {
                not_cuda_.insert({u.dev, u.ino});
                continue;
              }
            }
          }
        }
      }
      if (collector_.attached_file(u.dev, u.ino) && process_alive(pid)) {
        adopt_running(pid, /*late=*/true);
        continue;
      }
      if (ledger_.knows(u.tgid)) {  // its calls after the attach are booked
        ledger_.mark_since_attach(u.tgid);
        continue;
      }
      ++missed_count_;
      missed_.push_back({u.tgid, u.comm, u.path});
      if (missed_.size() > kMissedListed) missed_.erase(missed_.begin());
    }
  }

  static std::vector<std::string> cuda_libraries_of_quiet(int pid) {
    try {
      return cuda_libraries_of(pid);
    } catch (const TraceError&) {
      return {};
    }
  }

  // One line on stderr once every probe is live: scripts and tests wait for it instead of
  // sleeping, and the attach benchmark measures the time to it.
  void announce_ready() {
    size_t probes = 0;
    std::string libs;
    for (const auto& l : collector_.libraries()) {
      probes += l.probes;
      libs += (libs.empty() ? "" : ", ") + l.path + " (" + l.mode + ")";
    }
    std::fprintf(stderr, "fakegpu-trace: ready: %zu probe(s) on %zu librar%s%s%s\n", probes,
                 collector_.libraries().size(), collector_.libraries().size() == 1 ? "y" : "ies",
                 libs.empty() ? "" : ": ", libs.c_str());
    std::fflush(stderr);
  }

  void warn_once(const std::string& key, const std::string& what) {
    if (warned_.insert(key).second) std::fprintf(stderr, "fakegpu-trace: %s\n", what.c_str());
  }

  // Consumes every record the ring buffer holds now, without waiting.
  void drain_delivered() {
    while (collector_.poll(0, sink_) > 0) {}
  }

  // Kernel counters into the ledger; libraries newly mapped; exited processes' kernel
  // books dropped once their last figures are in.
  void refresh(uint64_t now) {
    // A process whose exit record was lost (ring buffer full) is gone all the same. One that
    // left /proc since the last drain committed its last records before it left (its exit
    // tracepoint runs first): drain once more, then what is still running in the books has
    // exited without its record.
    std::vector<uint32_t> gone;
    for (uint32_t pid : ledger_.running_pids())
      if (!process_alive(static_cast<int>(pid))) gone.push_back(pid);
    if (!gone.empty()) drain_delivered();
    for (uint32_t pid : gone)
      if (ledger_.running(pid)) {
        ledger_.process_exited(pid, now);
        exited_.push_back(pid);  // forgotten once its last kernel figures are in (below)
      }
    const auto funcs = traced_functions();
    for (const CallCount& c : collector_.calls()) {
      CallStats s;
      s.func = c.func < funcs.size() ? std::string(funcs[c.func].name) : "?";
      s.calls = c.calls;
      s.errors = c.fails;
      s.timed = c.timed;
      s.total_ns = c.total_ns;
      s.max_ns = c.max_ns;
      for (size_t i = 0; i < c.hist.size() && i < s.buckets.size(); ++i) s.buckets[i] = c.hist[i];
      ledger_.set_call_totals(c.tgid, s);
    }
    for (const CopyCount& c : collector_.copies())
      ledger_.set_copy_totals(c.tgid, static_cast<CopyDirection>(c.direction), c.bytes, c.count);
    for (const auto& [tgid, n] : collector_.launches()) ledger_.set_launch_totals(tgid, n);
    std::map<uint32_t, std::vector<KernelStats>> kernels;
    for (KernelLaunches& k : collector_.kernel_launches()) kernels[k.tgid].push_back(std::move(k.stats));
    for (auto& [tgid, list] : kernels) ledger_.set_kernel_totals(tgid, std::move(list));
    std::map<uint32_t, std::vector<CallerStats>> callers;
    for (const CallerCount& c : collector_.callers()) {
      const fg_caller_val& n = c.counts;
      callers[c.tgid].push_back(
          {caller_object(c.file), n.calls, n.failed, n.alloc_bytes, n.free_bytes, n.probed, n.timed, n.total_ns});
    }
    for (auto& [tgid, list] : callers) ledger_.set_caller_totals(tgid, std::move(list));
    handle_untraced();
    Health h{collector_.health(), {}};
    ledger_.set_missed({missed_count_ + h.untraced_lost, missed_, collector_.loader_problem()});
    ledger_.count_bad_records(collector_.take_bad_records());
    for (const auto& l : collector_.libraries()) h.libraries.push_back({l.path, l.mode});
    ledger_.set_health(h);
    // The in-kernel books: exact even when ring-buffer records were lost.
    std::map<uint32_t, std::vector<KernelBookView>> kbooks;
    for (const KernelBook& b : collector_.books()) {
      KernelBookView v;
      v.device = b.key.device;
      v.kind = static_cast<MemKind>(b.key.kind);
      v.alloc_calls = b.book.alloc_calls;
      v.alloc_bytes = b.book.alloc_bytes;
      v.free_calls = b.book.free_calls;
      v.free_bytes = b.book.free_bytes;
      v.implicit_free_bytes = b.book.implicit_free_bytes;
      v.live_bytes = b.book.live_bytes;
      v.peak_bytes = b.book.peak_bytes;
      v.failed_calls = b.book.failed_calls;
      kbooks[b.key.tgid].push_back(v);
    }
    for (auto& [pid, books] : kbooks)
      if (seen_.count(static_cast<int>(pid))) ledger_.set_kernel_books(pid, std::move(books));
    for (uint32_t pid : exited_) forget(pid);
    exited_.clear();
    rescan();
    ledger_.expire(now, static_cast<uint64_t>(opts_.exited_ttl_s * 1e9));
    snap_ = ledger_.snapshot(true);  // one per refresh: the server, the outputs and the verdict read it
    read_devices();
    if (analyzer_) snap_.analysis = analyzer_->update(ledger_, snap_, now, analysis_inputs());
    if (timeline_ && snap_.analysis)
      for (const DeviceAnalysis& d : snap_.analysis->devices)
        if (d.fragmentation)
          timeline_->fragmentation(snap_.analysis->as_of_ns, d.device, d.fragmentation->largest_free,
                                   d.fragmentation->ratio);
    publish();
  }

  // The devices as the backend's ledgers describe them, once per refresh (the analyses and
  // the server read them): host-wide, and as each traced process's own ledger has them.
  void read_devices() {
    std::vector<int> pids;
    for (uint32_t pid : ledger_.running_pids()) pids.push_back(static_cast<int>(pid));
    devices_ = backend_devices(pids, "/dev/shm", &devices_by_pid_);
  }

  AnalysisInputs analysis_inputs() {
    AnalysisInputs in;
    const auto capacity = [](const BackendDevice& d) { return DeviceCapacity{d.ordinal, d.total, d.used}; };
    // run traces one command (and its descendants): its devices are those of its own ledger,
    // whatever other ledgers on the host number alike. monitor and attach: the host's.
    // Once its processes have exited their devices stay those (with nothing in use), not the
    // host's.
    if (opts_.mode == TraceOptions::Mode::Run) {
      std::set<int32_t> seen;
      for (const auto& [pid, devs] : devices_by_pid_)
        for (const BackendDevice& d : devs)
          if (seen.insert(d.ordinal).second) run_devices_[d.ordinal] = capacity(d);
      for (auto& [ordinal, c] : run_devices_) {
        if (!seen.count(ordinal)) c.used = 0;
        in.devices.push_back(c);
      }
    }
    if (in.devices.empty()) {
      for (const BackendDevice& d : devices_) in.devices.push_back(capacity(d));
    }
    for (const auto& [pid, devs] : devices_by_pid_)
      for (const BackendDevice& d : devs) in.process_devices[static_cast<uint32_t>(pid)].push_back(capacity(d));
    // Arenas: /proc/PID/maps is read again only when a process holds memory on a device whose
    // arena it has not been seen with (a process that is not the fake backend's is read once
    // per new device, not at every refresh).
    for (const ProcessView& p : snap_.processes) {
      if (p.exited) continue;
      auto& checked = arenas_checked_[p.pid];
      bool read = false;
      for (const DeviceUsage& d : p.devices)
        if (d.device >= 0 && d.live_bytes > 0 && checked.insert(d.device).second) read = true;
      if (read) arenas_[p.pid] = device_arenas(static_cast<int>(p.pid));
      if (auto it = arenas_.find(p.pid); it != arenas_.end())
        for (const auto& [dev, begin] : it->second) in.arenas[{p.pid, dev}] = begin;
    }
    return in;
  }

  // The HTTP server (--listen): started once the probes are live, so its first state is real.
  void start_server() {
    if (opts_.listen.empty()) return;
    server::ServerOptions so;
    so.listen = opts_.listen;
    so.allow_non_loopback = opts_.allow_remote;
    so.auth_token = opts_.auth_token;
    so.metrics.max_processes = opts_.max_processes;
    std::string err;
    server_ = server::Server::start(so, &err);
    if (!server_) {
      if (err.find("loopback") != std::string::npos)
        err += " (add --allow-remote to bind it, and protect it with --auth-token-file)";
      throw TraceError("cannot serve on " + opts_.listen + ": " + err, kExitUsage);
    }
    snap_ = ledger_.snapshot(true);
    read_devices();
    publish();
    std::fprintf(stderr, "fakegpu-trace: serving http://%s/ (dashboard), /metrics, /api/v1/%s\n",
                 server_->address().c_str(), opts_.auth_token.empty() ? "" : " (bearer token required)");
  }

  // One immutable state per refresh for the server's readers: the books, the devices as the
  // backend's ledgers describe them (what its NVML reports), the stacks named so far.
  void publish() {
    if (!server_) return;
    auto st = std::make_shared<server::State>();
    st->snapshot = snap_;
    for (const BackendDevice& d : devices_) st->devices.push_back({d.ordinal, d.uuid, d.name, d.total, d.used});
    if (opts_.stacks) st->stack_frames = stack_frames_;
    st->time_unix_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    st->sequence = ++published_;
    st->interval_s = opts_.interval_s;
    // The history: this refresh's sample, then every kept one (shared, not copied).
    history_.append(std::make_shared<const server::HistorySample>(server::history_sample(*st)));
    st->history = history_.samples();
    st->history_s = opts_.history_s;
    st->history_max_samples = history_.max_samples();
    st->history_bytes = history_.memory_bytes();
    server_->publish(std::move(st));
  }

  void render() {
    if (opts_.quiet) return;
    const Snapshot& snap = snap_;
    if (opts_.json) {
      out_ << render_json_line(snap, wall_time()) << std::flush;
    } else {
      TableOptions t;
      t.time_text = wall_time();
      t.interval_s = opts_.interval_s;
      out_ << render_table(snap, t) << '\n';
      if (opts_.stacks) {
        out_ << render_stacks(top_stacks(snap, StackSet::Outstanding, opts_.top_stacks, stack_text_),
                              StackSet::Outstanding, snap.health.stacks_lost)
             << '\n';
        if (snap.analysis && opts_.analysis.leak_age_s)
          out_ << render_stacks(top_stacks(snap, StackSet::Aged, opts_.top_stacks, stack_text_), StackSet::Aged)
               << '\n';
      }
      out_ << std::flush;
    }
  }

  // An exited process's kernel books are given back, and its PID is new again: a process that
  // reuses it is tracked from its own first record (and seen_ stays as large as the processes
  // alive, not all there ever were).
  void forget(uint32_t pid) {
    collector_.forget(pid);
    arenas_.erase(pid);
    arenas_checked_.erase(pid);
    seen_.erase(static_cast<int>(pid));
    if (last_seen_ == pid) last_seen_ = 0;
  }

  // --stacks: a stack is symbolized when first seen, while its process is alive if the reader
  // keeps up (/proc/PID/maps goes with the process); the frames its maps cannot name are named
  // from the build ids the kernel took with the stack, in the files added to the symbolizer.
  void name_stacks(const fg_event& e) {
    if (e.type == FG_EV_PROC_EXIT) {  // every stack of it was named when first seen
      symbolizer_.forget(e.tgid);
      return;
    }
    if (e.type == FG_EV_PROC_EXEC) {  // a new image, and its program's file
      symbolizer_.forget(e.tgid);
      symbolizer_.add_file(program_file(e.tgid));
    }
    symbolizer_.prepare(e.tgid);  // its maps, read while it runs
    if (e.type == FG_EV_ALLOC && e.aux != 0) {
      const auto key = std::make_pair(e.tgid, static_cast<uint32_t>(e.aux - 1));
      if (!stack_frames_.count(key))
        stack_frames_[key] = symbolizer_.frames(e.tgid, collector_.stack(key.second),
                                                collector_.stack_files(key.second));
    }
  }

  // The file process tgid exec'd (while the programs were loaded), as a path the collector can
  // open: execve's argument, made absolute through the process's working directory when
  // relative (empty if that is gone).
  std::string program_file(uint32_t tgid) const {
    std::string path = collector_.exec_path(tgid);
    if (path.empty() || path[0] == '/') return path;
    char cwd[4096];
    const std::string link = "/proc/" + std::to_string(tgid) + "/cwd";
    const ssize_t n = ::readlink(link.c_str(), cwd, sizeof cwd - 1);
    return n > 0 ? std::string(cwd, static_cast<size_t>(n)) + "/" + path : std::string();
  }

  void on_event(const fg_event& e) {
    // A process first met through its events started after the probes were in place (the
    // ones running before were adopted when their library was attached): traced from its
    // first call, nothing to add.
    if (e.tgid != last_seen_ && !seen_.count(static_cast<int>(e.tgid))) {
      seen_.insert(static_cast<int>(e.tgid));
      if (e.type != FG_EV_PROC_EXIT) {
        std::string comm(e.comm, strnlen(e.comm, sizeof e.comm));
        if (comm.empty()) comm = process_comm(static_cast<int>(e.tgid));
        // The record names the parent where it is a process's first; /proc otherwise.
        const uint32_t ppid = e.ppid ? e.ppid : ppid_of(static_cast<int>(e.tgid));
        ledger_.track_process(e.tgid, comm, ppid, e.ts_ns, false);
        if (opts_.stacks && e.type != FG_EV_PROC_EXEC)  // it exec'd before its first call
          symbolizer_.add_file(program_file(e.tgid));
      }
    }
    if (e.type == FG_EV_PROC_FORK) seen_.insert(static_cast<int>(e.aux));
    if (opts_.stacks) name_stacks(e);
    ledger_.consume(e);
    if (e.type == FG_EV_PROC_EXIT) exited_.push_back(e.tgid);
    last_seen_ = e.tgid;  // in seen_ now (until forget()): the next record of it skips the lookup
  }

  const TraceOptions& opts_;
  std::ostream& out_;
  Collector collector_;
  AllocationLedger ledger_;
  std::set<int> seen_;
  uint32_t last_seen_ = 0;  // the last record's process (in seen_): most records follow one of theirs
  std::set<std::string> warned_;
  uint64_t missed_count_ = 0;                         // processes missed (handle_untraced)
  std::vector<MissedProcess> missed_;                 // the latest of them
  std::set<std::pair<uint64_t, uint64_t>> not_cuda_;  // (kernel dev, ino) of candidate names that are no CUDA library
  std::vector<uint32_t> exited_;
  std::optional<Timeline> timeline_;  // --timeline
  std::ofstream timeline_out_, html_out_;
  Snapshot snap_;  // the books as of the last refresh
  std::function<void(const fg_event&)> sink_ = [this](const fg_event& e) { on_event(e); };
  StackSymbolizer symbolizer_;
  std::unique_ptr<server::Server> server_;
  uint64_t published_ = 0;
  std::optional<Analyzer> analyzer_;                          // none with --no-analyses
  server::History history_;                                   // with --listen: the last --history seconds of refreshes
  std::vector<BackendDevice> devices_;                        // read_devices(): host-wide
  std::map<int, std::vector<BackendDevice>> devices_by_pid_;  // and per traced process
  std::map<int32_t, DeviceCapacity> run_devices_;             // run: the command's devices, as last read
  std::map<uint32_t, std::map<int32_t, uint64_t>> arenas_;    // pid -> device -> arena start
  std::map<uint32_t, std::set<int32_t>> arenas_checked_;      // devices /proc/PID/maps was read for
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::string>> stack_frames_;  // (pid, stack id)
  Symbolizer stack_text_ = [this](uint32_t pid, uint32_t id) -> std::vector<std::string> {
    auto it = stack_frames_.find({pid, id});
    return it != stack_frames_.end() ? it->second : std::vector<std::string>{};
  };
};

}  // namespace

void request_stop() noexcept { g_stop.store(true); }

int trace(const TraceOptions& opts, std::ostream& out) {
  g_stop.store(false);
  Session s(opts, out);
  return s.run();
}

}  // namespace fgtrace
