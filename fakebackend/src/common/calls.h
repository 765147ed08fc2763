// SPDX-License-Identifier: Apache-2.0
// Per-API call counters. The trampolines (api_table.cpp) increment them: a plain
// increment in a per-thread block when the thread has one, else an atomic increment
// of the global array. Totals are exact either way.
#pragma once
#include "common/api_ids.h"

#include <array>
#include <cstdint>

// The trampolines read their counter pointer with initial-exec TLS, which puts all of the
// library's (small) TLS in the static block; the hot thread_locals of the core use the same
// model (FG_TLS) and skip __tls_get_addr. Only our own variables: applying the model to the
// whole build would also bind libstdc++'s thread-locals that way, and a process that loads
// libstdc++ after us (Python) would then fail with "cannot allocate memory in static TLS".
#define FG_TLS [[gnu::tls_model("initial-exec")]]

extern "C" {
// Read by the trampolines; initial-exec so the access is two instructions.
[[gnu::visibility("hidden")]] extern __thread uint64_t* fg_tls_counts __attribute__((tls_model("initial-exec")));
[[gnu::visibility("hidden")]] extern uint64_t fg_global_counts[];
// The return address of the calling thread's latest API call from outside this library
// (the trampolines write it; calls the library makes to its own entry points leave it):
// the USDT probes pass it on, so fakegpu-trace can name the calling shared object.
[[gnu::visibility("hidden")]] extern __thread uintptr_t fg_tls_caller __attribute__((tls_model("initial-exec")));
}

namespace fg::calls {

void attach_thread_slow() noexcept;

// Gives the calling thread its own counter block (idempotent; one TLS load after the first).
inline void attach_thread() noexcept {
  if (!fg_tls_counts) attach_thread_slow();
}

// Snapshot of all counters: global + live threads + exited threads.
std::array<uint64_t, kApiCount> snapshot();

}  // namespace fg::calls
