// SPDX-License-Identifier: Apache-2.0
// The warp operations of blocks that run as loops over their threads (jit/fission.cpp, the
// runtime functions of kernels/abi.h): every lane of the warp has reached the operation and left
// its operand in the warp's array; these compute one lane's result from it, as the fiber
// runtime (fiber.cpp) computes them for lanes that wait for each other.
#include "kernels/abi.h"

#include <algorithm>
#include <cstdint>

using fg::kernels::ReduxOp;
using fg::kernels::VoteMode;

extern "C" uint32_t fg_rt_warp_vote(uint32_t mode, const uint32_t* preds, uint32_t group) {
  uint32_t ballot = 0;
  for (uint32_t k = 0; k < 32; ++k)
    if ((group >> k & 1) && preds[k]) ballot |= 1u << k;
  switch (static_cast<VoteMode>(mode)) {
    case VoteMode::All: return ballot == group;
    case VoteMode::Any: return ballot != 0;
    case VoteMode::Uni: return ballot == 0 || ballot == group;
    case VoteMode::Ballot: return ballot;
  }
  return 0;
}

extern "C" uint64_t fg_rt_warp_match(uint32_t all, const uint64_t* values, uint32_t lane, uint32_t group) {
  uint32_t same = 0;
  for (uint32_t k = 0; k < 32; ++k)
    if ((group >> k & 1) && values[k] == values[lane]) same |= 1u << k;
  if (!all) return same;
  return same == group ? (uint64_t{1} << 32 | group) : 0;
}

extern "C" uint32_t fg_rt_warp_redux(uint32_t op, const uint32_t* values, uint32_t group, uint32_t is_signed) {
  uint32_t acc = 0;
  bool first = true;
  for (uint32_t k = 0; k < 32; ++k) {
    if (!(group >> k & 1)) continue;
    const uint32_t v = values[k];
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (static_cast<ReduxOp>(op)) {
      case ReduxOp::Add: acc += v; break;
      case ReduxOp::And: acc &= v; break;
      case ReduxOp::Or: acc |= v; break;
      case ReduxOp::Xor: acc ^= v; break;
      case ReduxOp::Min:
        acc = is_signed ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                        : std::min(acc, v);
        break;
      case ReduxOp::Max:
        acc = is_signed ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                        : std::max(acc, v);
        break;
    }
  }
  return acc;
}
