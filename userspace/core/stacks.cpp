// SPDX-License-Identifier: Apache-2.0
#include "stacks.h"

#include <algorithm>
#include <tuple>

#include "analysis.h"
#include "render.h"

namespace fgtrace {

std::vector<StackReport> top_stacks(const Snapshot& snap, StackSet set, size_t n, const Symbolizer& symbolize) {
  std::vector<StackReport> all;
  for (const ProcessView& p : snap.processes) {
    const std::vector<StackUsage>* stacks = &p.outstanding_stacks;
    if (set == StackSet::Leaked) stacks = &p.leaked_stacks;
    if (set == StackSet::Aged) {
      const ProcessAnalysis* pa = snap.analysis ? snap.analysis->process(p.pid, p.start_ns) : nullptr;
      if (!pa || pa->exited) continue;  // an exited process's aged allocations are its leaks now
      stacks = &pa->aged_stacks;
    }
    for (const StackUsage& s : *stacks) all.push_back(StackReport{p.pid, p.comm, s.stack_id, s.bytes, s.allocs, {}});
  }
  auto before = [](const StackReport& a, const StackReport& b) {
    return std::tuple(b.bytes, b.allocs, a.pid, a.stack_id) < std::tuple(a.bytes, a.allocs, b.pid, b.stack_id);
  };
  const size_t keep = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), before);
  all.resize(keep);
  if (symbolize)
    for (StackReport& r : all) r.frames = symbolize(r.pid, r.stack_id);
  return all;
}

std::string render_stacks(const std::vector<StackReport>& stacks, StackSet set, uint64_t lost) {
  std::string out;
  const char* what = set == StackSet::Leaked ? "leaked" : set == StackSet::Aged ? "aged (--leak-age)" : "outstanding";
  if (stacks.empty()) {
    out = std::string("No ") + what + " allocations with a recorded stack.\n";
  } else {
    out = "Top " + std::to_string(stacks.size()) + " stacks by " + what + " bytes:\n";
    for (const StackReport& r : stacks) {
      out += "\t" + human_size(r.bytes) + " in " + std::to_string(r.allocs) +
             (r.allocs == 1 ? " allocation" : " allocations") + " from pid " + std::to_string(r.pid) + " (" + r.comm +
             "), stack " + std::to_string(r.stack_id) + ":\n";
      if (r.frames.empty()) out += "\t\t[not symbolized]\n";
      for (const std::string& f : r.frames) out += "\t\t" + f + "\n";
    }
  }
  if (lost != 0)
    out += std::to_string(lost) + (lost == 1 ? " allocation has" : " allocations have") +
           " no recorded stack: the kernel's stack table had no slot for it (a larger --max-stacks helps).\n";
  return out;
}

}  // namespace fgtrace
