// SPDX-License-Identifier: Apache-2.0
// Another process's file, reached the way the IPC handles of every family reach it: the
// exporter names one of its own descriptors (a memfd) in the handle, the opener opens
// /proc/PID/fd/FD. The exporter must still be the process that made the handle (its start
// time, so a reused pid does not count) and the opener needs the same rights over it as a
// debugger would (same user) — what the real driver's IPC needs too.
#pragma once
#include "fakegpu/ledger_format.h"  // process_alive

#include <cstdint>
#include <cstdio>
#include <fcntl.h>

namespace fg {

// A new read-write descriptor for descriptor `fd` of process `pid` started at `start_time`;
// -1 when that process is gone or the file cannot be opened (errno says why).
inline int open_peer_fd(int pid, uint64_t start_time, int fd) noexcept {
  if (pid <= 0 || fd < 0 || ledger::process_start_time(pid) != start_time) {
    errno = ESRCH;
    return -1;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
  return ::open(path, O_RDWR | O_CLOEXEC);
}

}  // namespace fg
