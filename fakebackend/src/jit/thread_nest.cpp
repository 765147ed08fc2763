// SPDX-License-Identifier: Apache-2.0
#include "jit/thread_nest.h"

namespace fg::jit {

using namespace llvm;

ThreadNest thread_nest(Function* f, BasicBlock* entry, Value* const n[3], BasicBlock* after, const std::string& tag) {
  LLVMContext& c = f->getContext();
  Type* i32 = Type::getInt32Ty(c);
  BasicBlock* zh = BasicBlock::Create(c, "z" + tag, f);
  BasicBlock* yh = BasicBlock::Create(c, "y" + tag, f);
  BasicBlock* xh = BasicBlock::Create(c, "x" + tag, f);
  BasicBlock* xl = BasicBlock::Create(c, "x.next" + tag, f);
  BasicBlock* yl = BasicBlock::Create(c, "y.next" + tag, f);
  BasicBlock* zl = BasicBlock::Create(c, "z.next" + tag, f);
  ThreadNest t;
  IRBuilder<> b(entry);
  b.CreateBr(zh);
  b.SetInsertPoint(zh);
  t.z = b.CreatePHI(i32, 2, "tz");
  t.z->addIncoming(b.getInt32(0), entry);
  b.CreateBr(yh);
  b.SetInsertPoint(yh);
  t.y = b.CreatePHI(i32, 2, "ty");
  t.y->addIncoming(b.getInt32(0), zh);
  t.row = b.CreateMul(b.CreateAdd(b.CreateMul(t.z, n[1]), t.y), n[0]);
  b.CreateBr(xh);
  b.SetInsertPoint(xh);
  t.x = b.CreatePHI(i32, 2, "tx");
  t.x->addIncoming(b.getInt32(0), yh);
  t.body = xh;
  t.latch = xl;
  b.SetInsertPoint(xl);
  Value* x1 = b.CreateAdd(t.x, b.getInt32(1));
  t.x->addIncoming(x1, xl);
  b.CreateCondBr(b.CreateICmpULT(x1, n[0]), xh, yl);
  b.SetInsertPoint(yl);
  Value* y1 = b.CreateAdd(t.y, b.getInt32(1));
  t.y->addIncoming(y1, yl);
  b.CreateCondBr(b.CreateICmpULT(y1, n[1]), yh, zl);
  b.SetInsertPoint(zl);
  Value* z1 = b.CreateAdd(t.z, b.getInt32(1));
  t.z->addIncoming(z1, zl);
  b.CreateCondBr(b.CreateICmpULT(z1, n[2]), zh, after);
  return t;
}

}  // namespace fg::jit
