// SPDX-License-Identifier: Apache-2.0
// Outstanding (or leaked) allocations grouped by user stack, memleak-style: the top N stacks
// by bytes. Symbolization is the collector's (libdwfl): it comes in as a callback, called only
// for the stacks that make the top N.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ledger.h"

namespace fgtrace {

// Frames of a user stack, innermost first ("cudaMalloc+0x1a [libfake_gpu.so]"). The pid is
// passed because user addresses mean something only in that process's address space.
// An empty result prints as unsymbolized.
using Symbolizer = std::function<std::vector<std::string>(uint32_t pid, uint32_t stack_id)>;

enum class StackSet {
  Outstanding,  // held now by running processes
  Leaked,       // still held when their process exited (or exec'd)
  Aged,         // held now and older than --leak-age (Snapshot::analysis; none without it)
};

struct StackReport {
  uint32_t pid = 0;
  std::string comm;
  uint32_t stack_id = 0;
  uint64_t bytes = 0;
  uint64_t allocs = 0;
  std::vector<std::string> frames;
};

// The n stacks with the most bytes (ties: more allocations, then pid, then stack id).
// Stacks are per process: the same id in two processes is two entries.
std::vector<StackReport> top_stacks(const Snapshot& snap, StackSet set, size_t n, const Symbolizer& symbolize = {});

// memleak's layout:
//   Top 2 stacks by outstanding bytes:
//           1.0 GiB in 4 allocations from pid 4242 (python3), stack 7:
//                   cudaMalloc+0x1a
//                   main+0x42
// `lost`: allocations whose stack the kernel could not store (Health::stacks_lost), said after.
std::string render_stacks(const std::vector<StackReport>& stacks, StackSet set, uint64_t lost = 0);

}  // namespace fgtrace
