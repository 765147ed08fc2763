// SPDX-License-Identifier: Apache-2.0
// The generated code's view of kernels::BlockEnv (kernels/abi.h): its fields' numbers in the
// LLVM struct type codegen.cpp builds, shared with fission.cpp.
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
  kGridWorkspace
};

}  // namespace fg::jit
