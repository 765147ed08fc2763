// SPDX-License-Identifier: Apache-2.0
// What the translator throws while generating (codegen.cpp, half.cpp); generate() catches
// both and reports them.
#pragma once
#include "kernels/ptx.h"

#include <string>
#include <utility>

namespace fg::jit {

// The kernel uses what the executor does not run (recorded, with the reason).
struct Unsupported {
  std::string why;
};
// The text is something the translator cannot make sense of.
struct Malformed {
  std::string what;
};

[[noreturn]] inline void unsupported(std::string why) { throw Unsupported{std::move(why)}; }
[[noreturn]] inline void malformed(const ptx::Instruction& in, const std::string& what) {
  throw Malformed{"line " + std::to_string(in.line) + ": " + in.opcode + ": " + what};
}

}  // namespace fg::jit
