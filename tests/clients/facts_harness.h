// SPDX-License-Identifier: Apache-2.0
// The harness of the facts programs (gpu_facts.cpp: the driver and NVML; rt_facts.cu: the
// runtime): "key=value" lines, and cases run in child processes so that a case that crashes
// or hangs a real driver is itself a fact ("crash:SIGSEGV", "hang") and the run goes on.
//
// The parent never touches CUDA: it forks a child, which sets up (its `setup`, given the
// first case it will run), runs cases in order and prints "@N" before case N. When the child
// dies, the parent prints what ended the case that was running and starts a new child after
// it. An `isolated` case (one that may leave its context unusable) ends its child, so the
// next case starts in a fresh process.
#pragma once
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace facts {

inline void fact(const std::string& key, const std::string& value) {
  std::printf("%s=%s\n", key.c_str(), value.c_str());
  std::fflush(stdout);
}

// Appends "key:value" to a fact made of several answers, comma-separated.
inline void append(std::string& list, const std::string& key, const std::string& value) {
  list += std::string(list.empty() ? "" : ",") + key + ":" + value;
}

// "a,b": a fact made of the two values one call answered.
template <typename A, typename B>
std::string pair(const A& a, const B& b) {
  return std::to_string(a) + "," + std::to_string(b);
}

// "BLOCKSxTHREADS:answer,..." over the grid shapes the occupancy cases ask about;
// `query(blocks, threads)` gives one answer.
template <typename Query>
std::string per_grid_shape(Query query) {
  std::string s;
  for (auto [blocks, threads] : {std::pair{1, 32}, {2, 128}, {4, 256}, {64, 1024}})
    append(s, std::to_string(blocks) + "x" + std::to_string(threads), query(blocks, threads));
  return s;
}

struct Case {
  const char* key;
  std::function<std::string()> run;
  bool isolated = false;  // leaves the context unusable: the next case gets a fresh process
};

// Sets up a fresh child before case `first`; false ends the run (the set-up failed).
using Setup = std::function<bool(size_t first)>;

inline const char* signal_name(int s) {
  switch (s) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    default: return "signal";
  }
}

[[noreturn]] inline void run_child(const std::vector<Case>& cases, size_t first, int out_fd, const Setup& setup) {
  dup2(out_fd, STDOUT_FILENO);
  if (!setup(first)) _exit(3);
  for (size_t i = first; i < cases.size(); ++i) {
    std::printf("@%zu\n", i);  // the case now running, for the parent
    std::fflush(stdout);
    fact("case." + std::string(cases[i].key), cases[i].run());
    if (cases[i].isolated) _exit(10);
  }
  _exit(0);
}

// Runs every case; 0 when all ran (crashes and hangs included), 1 when a set-up failed.
inline int run_cases(const std::vector<Case>& cases, const Setup& setup, int hang_ms = 20000) {
  size_t next = 0;
  for (;;) {
    int fds[2];
    if (pipe(fds) != 0) return 2;
    std::fflush(stdout);  // else the child inherits and re-sends what is still buffered
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      run_child(cases, next, fds[1], setup);
    }
    close(fds[1]);
    long running = -1;
    std::string buf;
    char chunk[4096];
    bool timed_out = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, hang_ms) == 0) {
        timed_out = true;
        kill(pid, SIGKILL);
        break;
      }
      const ssize_t n = read(fds[0], chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      for (size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
        const std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (!line.empty() && line[0] == '@') {
          running = std::atol(line.c_str() + 1);
        } else {
          std::printf("%s\n", line.c_str());
          if (line.rfind("case.", 0) == 0) running = -1;
        }
      }
    }
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    std::fflush(stdout);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) return 1;
    if (running >= 0) {  // the case that was running when the child ended ended it
      const std::string what = timed_out         ? "hang"
                               : WIFSIGNALED(st) ? std::string("crash:") + signal_name(WTERMSIG(st))
                                                 : "exit:" + std::to_string(WEXITSTATUS(st));
      std::printf("case.%s=%s\n", cases[static_cast<size_t>(running)].key, what.c_str());
      next = static_cast<size_t>(running) + 1;
    } else {  // an isolated case finished: go on after it
      size_t done = next;
      for (size_t i = next; i < cases.size(); ++i)
        if (cases[i].isolated) {
          done = i + 1;
          break;
        }
      if (done == next) return 1;
      next = done;
    }
    if (next >= cases.size()) return 0;
  }
}

}  // namespace facts
