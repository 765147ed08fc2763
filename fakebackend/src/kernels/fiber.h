// SPDX-License-Identifier: Apache-2.0
// Blocks whose threads meet (barriers, warp-wide operations): each CUDA thread runs as a fiber
// on the worker's OS thread, and a scheduler switches between them where a thread must wait
// for others. A switch is a hand-written x86-64 register swap (~20 ns), not swapcontext,
// which also saves the signal mask with a system call.
//
// Barriers count arrivals against the block's non-exited threads (or the count given), so
// `if (tid >= n) return; __syncthreads();` works as on a GPU. Warp operations wait for the
// non-exited lanes of their mask, so divergent shuffles over disjoint masks are legal.
// Threads that wait for what never comes (a barrier some threads skip) would hang a GPU;
// here the block stops and the launch fails (cudaErrorLaunchFailure) with a message.
#pragma once
#include "kernels/abi.h"

#include <cstdint>
#include <string>

namespace fg::kernels {

// Runs every thread of the block `env` describes as a fiber of `fn`. Returns false (and a
// message) when the threads deadlocked.
bool run_block_fibers(BlockEnv* env, ThreadFn fn, std::string* deadlock);

// The stack of the fiber running now on this thread, or of the thread itself: local memory
// reached through generic pointers lives there.
void current_stack(uint64_t* lo, uint64_t* hi);

}  // namespace fg::kernels
