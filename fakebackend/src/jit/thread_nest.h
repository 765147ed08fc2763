// SPDX-License-Identifier: Apache-2.0
// The loops over a block's threads that a block function runs (codegen.cpp's for blocks whose
// threads never meet, fission.cpp's for each pass between barriers): z, then y, then x fastest,
// as CUDA numbers a block's threads.
#pragma once
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <string>

namespace fg::jit {

struct ThreadNest {
  llvm::PHINode *x = nullptr, *y = nullptr, *z = nullptr;
  llvm::Value* row = nullptr;         // (z × n[1] + y) × n[0]: the linear index of (0, y, z)
  llvm::BasicBlock* body = nullptr;   // a thread's turn: starts here (x's header), insert after the PHIs
  llvm::BasicBlock* latch = nullptr;  // branch here when a thread's turn ends: the next thread
};

// The nest over n[0] × n[1] × n[2] threads in `f`, entered from `entry` (ended here with a branch
// into it) and left for `after` once the last thread's turn ends. Block names carry `tag`.
ThreadNest thread_nest(llvm::Function* f, llvm::BasicBlock* entry, llvm::Value* const n[3], llvm::BasicBlock* after,
                       const std::string& tag);

}  // namespace fg::jit
