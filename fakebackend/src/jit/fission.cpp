// SPDX-License-Identifier: Apache-2.0
#include "jit/fission.h"

#include "jit/env.h"
#include "kernels/abi.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <map>
#include <set>
#include <vector>

namespace fg::jit {
namespace {

using namespace llvm;

// The value of the block function's `next` when the threads returned.
constexpr uint32_t kReturned = 0xffffffffu;

struct Failure {
  std::string why;
};

bool is_warp_call(StringRef name) {
  return name == "fg_rt_shfl" || name == "fg_rt_vote" || name == "fg_rt_match" || name == "fg_rt_redux" ||
         name == "fg_rt_activemask" || name == "fg_rt_warpsync";
}

// Whether `f` or a function it calls meets other threads.
bool meets(Function* f, std::set<Function*>& seen) {
  if (!seen.insert(f).second) return false;
  for (BasicBlock& bb : *f)
    for (Instruction& i : bb) {
      auto* call = dyn_cast<CallInst>(&i);
      if (!call) continue;
      Function* callee = call->getCalledFunction();
      if (!callee) return true;  // the generator makes no indirect calls; be safe
      if (callee->getName() == "fg_rt_barrier" || is_warp_call(callee->getName())) return true;
      if (!callee->isDeclaration() && meets(callee, seen)) return true;
    }
  return false;
}

class Splitter {
 public:
  Splitter(Function* thread, Function* block, StructType* env_type)
      : thread_(thread),
        F_(block),
        env_ty_(env_type),
        C_(block->getContext()),
        DL_(block->getParent()->getDataLayout()),
        i32_(Type::getInt32Ty(C_)),
        i64_(Type::getInt64Ty(C_)),
        i8_(Type::getInt8Ty(C_)) {}

  // On failure the block function's partial body goes first: it may still use the copy's values.
  ~Splitter() {
    if (!done_) F_->deleteBody();
    if (T_) T_->eraseFromParent();
  }

  void run() {
    ValueToValueMapTy vm;
    T_ = CloneFunction(thread_, vm);
    T_->setName("fg.fission.work");
    find_barriers();
    promote();
    split();
    demote();
    layout();
    form_regions();
    build();
    std::string err;
    raw_string_ostream os(err);
    if (verifyFunction(*F_, &os)) throw Failure{"the split function does not verify: " + os.str()};
    done_ = true;
  }

  uint64_t context_bytes() const { return context_bytes_; }
  unsigned barriers() const { return static_cast<unsigned>(barrier_blocks_.size()); }

 private:
  // A stack slot of the thread function, kept per thread in BlockEnv::context: its array
  // starts at context + threads * offset, thread t's element at t * stride.
  struct Slot {
    AllocaInst* alloca = nullptr;
    bool scalar = false;  // only loaded and stored whole: a private copy per region
    uint64_t offset = 0, stride = 0;
    Value* base = nullptr;  // in the block function's entry
  };

  // Code reached from `start` (the entry or a barrier's successor) up to the next barriers.
  struct Region {
    BasicBlock* start = nullptr;
    std::vector<BasicBlock*> blocks;  // start first
    std::vector<BasicBlock*> exits;   // the barrier blocks it reaches
  };

  void find_barriers() {
    std::set<Function*> seen = {T_};
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb) {
        auto* call = dyn_cast<CallInst>(&i);
        if (!call) continue;
        Function* callee = call->getCalledFunction();
        if (!callee) throw Failure{"an indirect call"};
        const StringRef name = callee->getName();
        if (name == "fg_rt_barrier") {
          auto* count = dyn_cast<ConstantInt>(call->getArgOperand(2));
          auto* kind = dyn_cast<ConstantInt>(call->getArgOperand(3));
          if (!count || !count->isZero() || !kind ||
              kind->getZExtValue() != static_cast<uint64_t>(kernels::BarrierKind::Sync) || !call->use_empty())
            throw Failure{"a barrier other than bar.sync for the whole block"};
          barrier_calls_.push_back(call);
        } else if (is_warp_call(name)) {
          throw Failure{"warp operations"};
        } else if (!callee->isDeclaration() && meets(callee, seen)) {
          throw Failure{"a called function meets other threads"};
        }
      }
    if (barrier_calls_.empty()) throw Failure{"no barrier"};
  }

  // The registers (allocas the generator made) become SSA values.
  void promote() {
    DominatorTree dt(*T_);
    std::vector<AllocaInst*> promotable;
    for (Instruction& i : T_->getEntryBlock())
      if (auto* a = dyn_cast<AllocaInst>(&i); a && isAllocaPromotable(a)) promotable.push_back(a);
    if (!promotable.empty()) PromoteMemToReg(promotable, dt);
  }

  // Each barrier call alone in a block, whose one successor starts a region.
  void split() {
    for (CallInst* call : barrier_calls_) {
      BasicBlock* bar = call->getParent()->splitBasicBlock(call, "barrier");
      bar->splitBasicBlock(call->getNextNode(), "after.barrier");
      barrier_blocks_.push_back(bar);
    }
  }

  // Whether `def` is live on entry to a barrier block: some use is reached from one without
  // passing the definition.
  bool live_across(Instruction& def, const SmallPtrSetImpl<BasicBlock*>& bars) {
    BasicBlock* home = def.getParent();
    SmallVector<BasicBlock*, 16> work;
    SmallPtrSet<BasicBlock*, 32> seen;
    for (Use& u : def.uses()) {
      auto* user = cast<Instruction>(u.getUser());
      BasicBlock* at = user->getParent();
      if (auto* phi = dyn_cast<PHINode>(user)) at = phi->getIncomingBlock(u);  // used at its end
      if (at != home && seen.insert(at).second) work.push_back(at);
    }
    while (!work.empty()) {
      BasicBlock* b = work.pop_back_val();
      if (bars.count(b)) return true;
      for (BasicBlock* p : predecessors(b))
        if (p != home && seen.insert(p).second) work.push_back(p);
    }
    return false;
  }

  void demote() {
    SmallPtrSet<BasicBlock*, 16> bars(barrier_blocks_.begin(), barrier_blocks_.end());
    std::vector<Instruction*> crossing;
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb)
        if (!isa<AllocaInst>(i) && !i.getType()->isVoidTy() && !i.use_empty() && live_across(i, bars))
          crossing.push_back(&i);
    for (Instruction* i : crossing) DemoteRegToStack(*i);
  }

  void layout() {
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb) {
        auto* a = dyn_cast<AllocaInst>(&i);
        if (!a) continue;
        if (&bb != &T_->getEntryBlock() || !a->isStaticAlloca()) throw Failure{"a stack allocation of varying size"};
        const uint64_t align = std::max<uint64_t>(a->getAlign().value(), 1);
        if (align > 64) throw Failure{"a stack slot aligned to more than 64 bytes"};
        Slot s;
        s.alloca = a;
        s.scalar = isAllocaPromotable(a);
        const auto bytes = a->getAllocationSizeInBits(DL_);
        if (!bytes) throw Failure{"a stack slot of unknown size"};
        s.stride = alignTo(std::max<uint64_t>(*bytes / 8, 1), align);
        s.offset = alignTo(context_bytes_, std::max<uint64_t>(align, 16));
        context_bytes_ = s.offset + s.stride;
        slots_.push_back(s);
      }
  }

  void form_regions() {
    SmallPtrSet<BasicBlock*, 16> bars(barrier_blocks_.begin(), barrier_blocks_.end());
    std::vector<BasicBlock*> starts = {&T_->getEntryBlock()};
    for (BasicBlock* b : barrier_blocks_) {
      region_after_[b] = static_cast<uint32_t>(starts.size());
      starts.push_back(b->getSingleSuccessor());
    }
    for (BasicBlock* start : starts) {
      Region r;
      r.start = start;
      SmallPtrSet<BasicBlock*, 32> seen = {start};
      r.blocks.push_back(start);
      for (size_t i = 0; i < r.blocks.size(); ++i)
        for (BasicBlock* s : successors(r.blocks[i])) {
          if (!seen.insert(s).second) continue;
          (bars.count(s) ? r.exits : r.blocks).push_back(s);
        }
      regions_.push_back(std::move(r));
    }
  }

  Value* env_dim(IRBuilder<>& b, unsigned i) {
    Value* arr = b.CreateStructGEP(env_ty_, env_, kNtid);
    return b.CreateLoad(i32_, b.CreateConstInBoundsGEP2_32(ArrayType::get(i32_, 3), arr, 0, i));
  }

  void build() {
    env_ = F_->getArg(0);
    BasicBlock* entry = BasicBlock::Create(C_, "entry", F_);
    IRBuilder<> b(entry);
    for (unsigned i = 0; i < 3; ++i) n_[i] = env_dim(b, i);
    Value* threads = b.CreateMul(b.CreateZExt(n_[0], i64_),
                                 b.CreateMul(b.CreateZExt(n_[1], i64_), b.CreateZExt(n_[2], i64_)));
    Value* context = b.CreateLoad(Type::getInt8PtrTy(C_), b.CreateStructGEP(env_ty_, env_, kContext), "context");
    for (Slot& s : slots_) s.base = b.CreateGEP(i8_, context, b.CreateMul(threads, b.getInt64(s.offset)));
    next_ = b.CreateAlloca(i32_, nullptr, "next");
    entry_ = entry;
    for (size_t r = 0; r < regions_.size(); ++r)
      region_entry_.push_back(BasicBlock::Create(C_, "region" + std::to_string(r), F_));
    b.CreateBr(region_entry_[0]);
    returned_ = BasicBlock::Create(C_, "return", F_);
    IRBuilder<>(returned_).CreateRetVoid();
    diverged_ = BasicBlock::Create(C_, "diverged", F_);
    {
      IRBuilder<> d(diverged_);
      FunctionCallee fault = F_->getParent()->getOrInsertFunction(
          "fg_rt_fault", FunctionType::get(Type::getVoidTy(C_), {env_->getType(), i32_, i64_}, false));
      d.CreateCall(fault, {env_, d.getInt32(static_cast<uint32_t>(kernels::Fault::Trap)), d.getInt64(0)});
      d.CreateBr(returned_);
    }
    for (size_t r = 0; r < regions_.size(); ++r) build_region(r);
  }

  // Region r as a loop over the block's threads (z, y, x; x fastest), then a jump to the
  // region its threads' barrier leads to.
  void build_region(size_t r) {
    const Region& region = regions_[r];
    const std::string tag = ".r" + std::to_string(r);
    BasicBlock* pre = region_entry_[r];
    BasicBlock* zh = BasicBlock::Create(C_, "z" + tag, F_);
    BasicBlock* yh = BasicBlock::Create(C_, "y" + tag, F_);
    BasicBlock* xh = BasicBlock::Create(C_, "x" + tag, F_);
    BasicBlock* xl = BasicBlock::Create(C_, "x.next" + tag, F_);
    BasicBlock* yl = BasicBlock::Create(C_, "y.next" + tag, F_);
    BasicBlock* zl = BasicBlock::Create(C_, "z.next" + tag, F_);
    BasicBlock* dispatch = BasicBlock::Create(C_, "dispatch" + tag, F_);
    IRBuilder<> b(pre);
    b.CreateBr(zh);
    b.SetInsertPoint(zh);
    PHINode* z = b.CreatePHI(i32_, 2, "tz");
    z->addIncoming(b.getInt32(0), pre);
    b.CreateBr(yh);
    b.SetInsertPoint(yh);
    PHINode* y = b.CreatePHI(i32_, 2, "ty");
    y->addIncoming(b.getInt32(0), zh);
    Value* row = b.CreateMul(b.CreateAdd(b.CreateMul(z, n_[1]), y), n_[0]);
    b.CreateBr(xh);
    b.SetInsertPoint(xh);
    PHINode* x = b.CreatePHI(i32_, 2, "tx");
    x->addIncoming(b.getInt32(0), yh);
    Value* lid = b.CreateAdd(row, x, "linear");
    Value* lid64 = b.CreateZExt(lid, i64_);

    ValueToValueMapTy vm;
    vm[T_->getArg(0)] = env_;
    vm[T_->getArg(1)] = x;
    vm[T_->getArg(2)] = y;
    vm[T_->getArg(3)] = z;

    // The slots this region touches: local memory in place, scalars as private copies.
    std::set<BasicBlock*> in_region(region.blocks.begin(), region.blocks.end());
    struct Copy {
      AllocaInst* priv;
      Value* home;
    };
    std::vector<Copy> write_back;
    IRBuilder<> eb(entry_, entry_->begin());
    for (Slot& s : slots_) {
      bool used = false, stored = false;
      for (User* u : s.alloca->users()) {
        auto* ui = cast<Instruction>(u);
        if (!in_region.count(ui->getParent())) continue;
        used = true;
        stored |= isa<StoreInst>(ui);
      }
      if (!used) continue;
      Value* home = b.CreateBitCast(b.CreateGEP(i8_, s.base, b.CreateMul(lid64, b.getInt64(s.stride))),
                                    s.alloca->getType());
      if (!s.scalar) {
        vm[s.alloca] = home;
        continue;
      }
      Type* ty = s.alloca->getAllocatedType();
      AllocaInst* priv = eb.CreateAlloca(ty, nullptr, s.alloca->getName() + tag);
      b.CreateStore(b.CreateLoad(ty, home), priv);
      vm[s.alloca] = priv;
      if (stored) write_back.push_back({priv, home});
    }

    // The region's exits: a barrier (to the region after it) or the function's return.
    auto record_next = [&](IRBuilder<>& e, uint32_t id) {
      Value* prev = e.CreateLoad(i32_, next_);
      e.CreateStore(e.getInt32(id), next_);
      Value* agrees = e.CreateOr(e.CreateICmpEQ(lid, e.getInt32(0)), e.CreateICmpEQ(prev, e.getInt32(id)));
      e.CreateCondBr(agrees, xl, diverged_);
    };
    std::set<uint32_t> targets;
    for (BasicBlock* bar : region.exits) {
      const uint32_t to = region_after_.at(bar);
      BasicBlock* e = BasicBlock::Create(C_, "to.region" + std::to_string(to) + tag, F_);
      IRBuilder<> eb2(e);
      for (const Copy& c : write_back) eb2.CreateStore(eb2.CreateLoad(c.priv->getAllocatedType(), c.priv), c.home);
      record_next(eb2, to);
      vm[bar] = e;
      targets.insert(to);
    }
    BasicBlock* returns = BasicBlock::Create(C_, "returned" + tag, F_);
    BasicBlock* finished = BasicBlock::Create(C_, "finished" + tag, F_);
    {
      // A thread that faulted stops the block.
      IRBuilder<> rb(returns);
      Value* abort = rb.CreateLoad(i32_, rb.CreateStructGEP(env_ty_, env_, kAbort));
      rb.CreateCondBr(rb.CreateICmpNE(abort, rb.getInt32(0)), returned_, finished);
      rb.SetInsertPoint(finished);
      record_next(rb, kReturned);
    }

    std::map<AllocaInst*, Value*> slot_values;
    for (Slot& s : slots_)
      if (auto it = vm.find(s.alloca); it != vm.end()) slot_values[s.alloca] = it->second;
    SmallVector<BasicBlock*, 32> clones;
    for (BasicBlock* bb : region.blocks) {
      BasicBlock* c = CloneBasicBlock(bb, vm, tag, F_);
      vm[bb] = c;
      clones.push_back(c);
    }
    // The slots' allocas (in the entry, region 0's start) were cloned too: not wanted.
    for (Slot& s : slots_) {
      auto it = vm.find(s.alloca);
      if (it == vm.end()) continue;
      if (auto* copy = dyn_cast<AllocaInst>(&*it->second); copy && copy->getFunction() == F_ && copy->use_empty())
        copy->eraseFromParent();
      vm.erase(s.alloca);
      if (auto v = slot_values.find(s.alloca); v != slot_values.end()) vm[s.alloca] = v->second;
    }
    remapInstructionsInBlocks(clones, vm);
    b.CreateBr(cast<BasicBlock>(vm[region.start]));
    bool any_return = false;
    for (BasicBlock* c : clones) {
      if (auto* ret = dyn_cast<ReturnInst>(c->getTerminator())) {
        ret->eraseFromParent();
        BranchInst::Create(returns, c);
        any_return = true;
      }
      // Edges from code outside the region (before an earlier barrier) are not taken here.
      for (PHINode& phi : c->phis())
        for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
          if (phi.getIncomingBlock(i)->getParent() != F_) phi.removeIncomingValue(i, false);
    }
    if (!any_return) {
      finished->eraseFromParent();
      returns->eraseFromParent();
    } else {
      targets.insert(kReturned);
    }
    for (BasicBlock* c : clones)
      for (Instruction& i : *c)
        for (Value* op : i.operands()) {
          const Function* owner = nullptr;
          if (auto* oi = dyn_cast<Instruction>(op)) owner = oi->getFunction();
          if (auto* oa = dyn_cast<Argument>(op)) owner = oa->getParent();
          if (auto* ob = dyn_cast<BasicBlock>(op)) owner = ob->getParent();
          if (owner && owner != F_) throw Failure{"a value crosses a barrier without being split"};
        }

    b.SetInsertPoint(xl);
    Value* x1 = b.CreateAdd(x, b.getInt32(1));
    x->addIncoming(x1, xl);
    b.CreateCondBr(b.CreateICmpULT(x1, n_[0]), xh, yl);
    b.SetInsertPoint(yl);
    Value* y1 = b.CreateAdd(y, b.getInt32(1));
    y->addIncoming(y1, yl);
    b.CreateCondBr(b.CreateICmpULT(y1, n_[1]), yh, zl);
    b.SetInsertPoint(zl);
    Value* z1 = b.CreateAdd(z, b.getInt32(1));
    z->addIncoming(z1, zl);
    b.CreateCondBr(b.CreateICmpULT(z1, n_[2]), zh, dispatch);
    b.SetInsertPoint(dispatch);
    SwitchInst* sw = b.CreateSwitch(b.CreateLoad(i32_, next_), returned_, static_cast<unsigned>(targets.size()));
    for (uint32_t t : targets)
      if (t != kReturned) sw->addCase(b.getInt32(t), region_entry_[t]);
  }

  Function* thread_;
  Function* F_;
  StructType* env_ty_;
  LLVMContext& C_;
  const DataLayout& DL_;
  Type *i32_, *i64_, *i8_;
  Function* T_ = nullptr;  // the working copy of the thread function
  bool done_ = false;
  std::vector<CallInst*> barrier_calls_;
  std::vector<BasicBlock*> barrier_blocks_;
  std::map<BasicBlock*, uint32_t> region_after_;  // barrier block → the region after it
  std::vector<Slot> slots_;
  uint64_t context_bytes_ = 0;
  std::vector<Region> regions_;
  // The block function's parts.
  Value* env_ = nullptr;
  Value* n_[3] = {};
  AllocaInst* next_ = nullptr;  // the region to run next (kReturned: none)
  BasicBlock* entry_ = nullptr;
  BasicBlock* returned_ = nullptr;
  BasicBlock* diverged_ = nullptr;
  std::vector<BasicBlock*> region_entry_;
};

}  // namespace

bool split_at_barriers(Function* thread, Function* block, StructType* env_type, uint64_t* context_bytes,
                       unsigned* barriers, std::string* why) {
  try {
    Splitter s(thread, block, env_type);
    s.run();
    *context_bytes = s.context_bytes();
    *barriers = s.barriers();
    return true;
  } catch (const Failure& f) {
    *why = f.why;
  }
  return false;
}

}  // namespace fg::jit
