// Per-API call counters. The trampolines (api_table.cpp) increment them: a plain
// increment in a per-thread block when the thread has one, else an atomic increment
// of the global array. Totals are exact either way.
#pragma once
#include "common/api_ids.h"

#include <array>
#include <cstdint>

extern "C" {
// Read by the trampolines; initial-exec so the access is two instructions.
[[gnu::visibility("hidden")]] extern __thread uint64_t* fg_tls_counts
    __attribute__((tls_model("initial-exec")));
[[gnu::visibility("hidden")]] extern uint64_t fg_global_counts[];
}

namespace fg::calls {

// Gives the calling thread its own counter block (idempotent, cheap after the first call).
void attach_thread() noexcept;

// Snapshot of all counters: global + live threads + exited threads.
std::array<uint64_t, kApiCount> snapshot();

}  // namespace fg::calls
