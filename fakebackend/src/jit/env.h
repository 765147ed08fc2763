// SPDX-License-Identifier: Apache-2.0
// The generated code's view of kernels::BlockEnv (kernels/abi.h): its fields' numbers in the
// LLVM struct type codegen.cpp builds, shared with fission.cpp; and the mark of the branches
// that stop a thread because its block aborts (a fault, a trap, an assertion).
#pragma once

namespace fg::jit {

enum EnvField : unsigned {
  kParams,
  kShared,
  kSharedBytes,
  kContext,
  kContextBytes,
  kNtid,
  kNctaid,
  kCtaid,
  kAbort,
  kSiteCache,
  kLaunch,
  kGlobals,
  kGridWorkspace,
  kClusterDim,
  kClusterSyncs,
  kCluster
};

// Metadata on a branch to the thread's exit taken only when the block aborts: its threads run
// no further, so analyses of how the surviving threads flow may ignore the edge.
inline constexpr const char* kAbortEdge = "fg.abort";

}  // namespace fg::jit
