// SPDX-License-Identifier: Apache-2.0
// The collector's one error type: thrown for conditions that stop a command, caught in
// main, which prints the message (naming the problem and the fix) and exits with the code.
#pragma once
#include <stdexcept>
#include <string>

namespace fgtrace {

// Exit codes of fakegpu-trace (documented in --help and the README).
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,         // bad arguments
  kExitPermission = 10,   // not privileged enough to load BPF programs
  kExitUnsupported = 11,  // the kernel lacks a feature (BTF, uprobes, ring buffer)
  kExitNotFound = 12,     // PID gone, or no CUDA library mapped / found
  kExitFailed = 13,       // anything else that stopped tracing
};

struct TraceError : std::runtime_error {
  explicit TraceError(const std::string& what, int code = kExitFailed) : std::runtime_error(what), code(code) {}
  int code;
};

}  // namespace fgtrace
