// SPDX-License-Identifier: Apache-2.0
// Whether a process that registered in the device ledger still runs: shared by the backend
// (reclaiming dead processes' slots) and fakegpu-trace (which reads the ledger but does not
// link the backend), so both judge a slot the same way.
#pragma once
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace fg::ledger {

// Starting time of a process (clock ticks since boot, /proc/PID/stat field 22); 0 if it
// does not exist or is exiting.
inline uint64_t process_start_time(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // comm may contain spaces and parentheses: fields resume after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  // Field 3 (state) follows; starttime is field 22. A zombie (Z) or dying (X) process
  // has closed its files — the real driver has freed its memory by then — so it counts
  // as gone even before its parent reaps it.
  if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) return 0;
  int field = 2;
  for (++p; *p && field < 22; ++p)
    if (*p == ' ') ++field;
  return std::strtoull(p, nullptr, 10);
}

// The process `pid` that started at `start_time` still runs (a reused pid does not count).
inline bool process_alive(int pid, uint64_t start_time) noexcept {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const uint64_t st = process_start_time(pid);
  return st != 0 && st == start_time;
}

}  // namespace fg::ledger
