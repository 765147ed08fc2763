// SPDX-License-Identifier: Apache-2.0
// Textures and surfaces for the kernel compiler: tex, tld4 and txq on texture objects, suld.b,
// sust.b and suq on surface objects, each lowered to one call of the executor's runtime
// functions (fg_rt_tex, fg_rt_surf, fg_rt_texq in kernels/abi.h), which sample in C++
// (kernels/textures.cpp). The operands travel through stack buffers of 32-bit words; a call
// that faulted stops the thread as any faulting access does.
#pragma once
#include "jit/half.h"
#include "kernels/ptx.h"

#include <llvm/IR/IRBuilder.h>

namespace fg::jit::texture {

// What the lowering needs of the generator beyond its operands: the running block's
// environment (BlockEnv*) and a way to stop the thread.
class Access : public half::Operands {
 public:
  virtual llvm::Value* env() = 0;
  // The thread returns (its block aborts) unless `ok` (an i1) holds.
  virtual void stop_unless(llvm::Value* ok) = 0;

 protected:
  ~Access() = default;
};

// tex, tld4, txq, suld, sust, suq.
bool handles(const ptx::Instruction& in);
// Lowers one of them; unsupported() for the forms the executor does not run (texture
// references, cube maps, multisample textures, formatted surface access, sured, texel
// offsets, channel queries).
void lower(llvm::IRBuilder<>& b, Access& io, const ptx::Instruction& in);

}  // namespace fg::jit::texture
