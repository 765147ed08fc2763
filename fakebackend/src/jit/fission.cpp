// SPDX-License-Identifier: Apache-2.0
#include "jit/fission.h"

#include "jit/env.h"
#include "jit/thread_nest.h"
#include "kernels/abi.h"
#include "kernels/jit_api.h"
#include "kernels/matrix.h"

#include <llvm/ADT/BitVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace fg::jit {
namespace {

using namespace llvm;

// Where the threads of a pass go next, beyond the region numbers: they returned (the block's
// `next`), they left the region (a warp's `next`).
constexpr uint32_t kLeft = 0xffffffffu;
constexpr uint32_t kReturned = 0xfffffffeu;
constexpr uint32_t kUnset = 0xfffffffdu;  // no thread of the region has recorded yet

// Warps in the largest block the split function handles (the executor runs larger as fibers).
constexpr uint32_t kWarps = kernels::kSplitMaxThreads / 32;

struct Failure {
  std::string why;
};

// The warp operations, as the thread function calls them and as the split function lowers them.
enum class WarpOp { Shfl, Vote, Match, Redux, Sync, Active, Mma };

bool warp_op_of(StringRef name, WarpOp* op) {
  static const std::pair<const char*, WarpOp> ops[] = {
      {"fg_rt_shfl", WarpOp::Shfl},   {"fg_rt_vote", WarpOp::Vote},     {"fg_rt_match", WarpOp::Match},
      {"fg_rt_redux", WarpOp::Redux}, {"fg_rt_warpsync", WarpOp::Sync}, {"fg_rt_activemask", WarpOp::Active},
      {"fg_rt_mma", WarpOp::Mma}};
  for (const auto& [n, o] : ops)
    if (name == n) {
      *op = o;
      return true;
    }
  return false;
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
      WarpOp op;
      if (callee->getName() == "fg_rt_barrier" || warp_op_of(callee->getName(), &op)) return true;
      if (!callee->isDeclaration() && meets(callee, seen)) return true;
    }
  return false;
}

class Splitter {
 public:
  Splitter(Function* thread, Function* block, StructType* env_type)
      : thread_(thread),
        F_(block),
        M_(block->getParent()),
        env_ty_(env_type),
        C_(block->getContext()),
        DL_(M_->getDataLayout()),
        i32_(Type::getInt32Ty(C_)),
        i64_(Type::getInt64Ty(C_)),
        i8_(Type::getInt8Ty(C_)) {}

  // On failure the block function's partial body goes first: it may still use the copy's values.
  ~Splitter() {
    if (!done_) F_->deleteBody();
    if (T_) T_->eraseFromParent();
    for (Function* p : placeholders_)
      if (p->use_empty()) p->eraseFromParent();
  }

  void run() {
    ValueToValueMapTy vm;
    T_ = CloneFunction(thread_, vm);
    T_->setName("fg.fission.work");
    find_meetings();
    rewrite_warp_ops();
    rewrite_reductions();
    promote();
    find_uniform();
    split_barriers();
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
  unsigned warp_points() const { return static_cast<unsigned>(markers_.size()); }

 private:
  // A stack slot of the thread function, kept per thread in BlockEnv::context: its array
  // starts at context + threads * offset, thread t's element at t * stride.
  struct Slot {
    AllocaInst* alloca = nullptr;
    bool scalar = false;  // only loaded and stored whole: a private copy per pass
    // A scalar whose value every thread of the block computes the same (find_uniform): one
    // home for the block, read before a pass and written after it, not one per thread.
    bool uniform = false;
    uint64_t offset = 0, stride = 0;
    Value* base = nullptr;  // in the block function's entry
  };

  // Code reached from `start` (the entry, the successor of a barrier or of a warp operation's
  // marker) up to the next barriers (and markers: `exits`).
  struct Part {
    BasicBlock* start = nullptr;
    std::vector<BasicBlock*> blocks;  // start first
    std::vector<BasicBlock*> exits;
  };

  struct Region {
    Part whole;                                  // up to the next barriers, through the warp operations' markers
    std::vector<Part> parts;                     // split at the markers too; empty: the region has none
    std::map<BasicBlock*, uint32_t> part_after;  // marker → the part after it
  };

  // One loop over threads: all of the block's for a region without warp operations, the lanes
  // of one warp for a part of a region with them.
  struct Pass {
    Value *x = nullptr, *y = nullptr, *z = nullptr, *lid = nullptr, *lid64 = nullptr;
    Value *lane = nullptr, *warp_base = nullptr, *live = nullptr;  // the thread's warp
    BasicBlock* body = nullptr;                                    // a thread's turn begins here (falls into the code)
    BasicBlock* latch = nullptr;                                   // and ends here
    BasicBlock* before = nullptr;  // runs once before the first thread's turn (ends in its branch)
    BasicBlock* after = nullptr;   // and once after the last (code goes at its beginning)
    Value* part_next = nullptr;    // where its warp records the part it runs next (null: no parts)
    bool left_preset = false;      // part_next already says kLeft: only warp operations record
    std::string tag;
  };

  // ---- the working copy -------------------------------------------------------------------
  void find_meetings() {
    std::set<Function*> seen = {T_};
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb) {
        auto* call = dyn_cast<CallInst>(&i);
        if (!call) continue;
        Function* callee = call->getCalledFunction();
        if (!callee) throw Failure{"an indirect call"};
        const StringRef name = callee->getName();
        WarpOp op;
        if (name == "fg_rt_barrier") {
          auto* count = dyn_cast<ConstantInt>(call->getArgOperand(2));
          auto* kind = dyn_cast<ConstantInt>(call->getArgOperand(3));
          using kernels::BarrierKind;
          const auto k = kind ? static_cast<BarrierKind>(kind->getZExtValue()) : BarrierKind::Arrive;
          if (!count || !count->isZero() || (k != BarrierKind::Sync && !reduction(k)))
            throw Failure{"a barrier other than bar.sync or bar.red for the whole block"};
          if (reduction(k)) reductions_.push_back({call, k});
          barrier_calls_.push_back(call);
        } else if (warp_op_of(name, &op)) {
          warp_calls_.push_back({call, op});
        } else if (!callee->isDeclaration() && meets(callee, seen)) {
          throw Failure{"a called function meets other threads"};
        }
      }
  }

  Function* placeholder(const char* name, Type* ret, std::vector<Type*> args) {
    Function* f = M_->getFunction(name);
    if (!f) {
      f = Function::Create(FunctionType::get(ret, args, false), Function::ExternalLinkage, name, M_);
      placeholders_.push_back(f);
    }
    return f;
  }

  // A block of its own before `at` (an empty one, `marker`), whose successor starts a part.
  BasicBlock* mark_before(Instruction* at) {
    BasicBlock* marker = at->getParent()->splitBasicBlock(at, "warp");
    marker->splitBasicBlock(at, "after.warp");
    markers_.insert(marker);
    return marker;
  }

  // Each warp operation of the thread function becomes: the lane's operand stored in an
  // exchange slot (an array per warp once in the context), a marker (the lanes of the warp
  // meet there), and a placeholder that the split function lowers to reading the warp's array.
  // Out-parameters become stores of the placeholder's high half, so that their slots promote.
  void rewrite_warp_ops() {
    Type* i32p = PointerType::getUnqual(i32_);
    Type* i64p = PointerType::getUnqual(i64_);
    IRBuilder<> eb(&T_->getEntryBlock(), T_->getEntryBlock().begin());
    for (auto [call, op] : warp_calls_) {
      IRBuilder<> b(call);
      auto exchange = [&](Value* v) {
        AllocaInst* slot = eb.CreateAlloca(v->getType(), nullptr, "exchange");
        b.CreateStore(v, slot);
        return slot;
      };
      auto split_result = [&](Value* packed, Value* out) {
        Value* r = b.CreateTrunc(packed, i32_);
        b.CreateStore(b.CreateTrunc(b.CreateLShr(packed, 32), i32_), out);
        return r;
      };
      Value* result = nullptr;
      Instruction* first = nullptr;  // the placeholder: the part after the marker starts there
      switch (op) {
        case WarpOp::Shfl: {  // (env, mode, value, b, c, mask, valid*)
          Value* x = exchange(call->getArgOperand(2));
          auto* p = b.CreateCall(
              placeholder("fg.warp.shfl", i64_, {i32p, i32_, i32_, i32_, i32_}),
              {x, call->getArgOperand(1), call->getArgOperand(3), call->getArgOperand(4), call->getArgOperand(5)});
          first = p;
          result = split_result(p, call->getArgOperand(6));
          break;
        }
        case WarpOp::Vote: {  // (env, mode, pred, mask)
          Value* x = exchange(call->getArgOperand(2));
          auto* p = b.CreateCall(placeholder("fg.warp.vote", i32_, {i32p, i32_, i32_}),
                                 {x, call->getArgOperand(1), call->getArgOperand(3)});
          first = p;
          result = p;
          break;
        }
        case WarpOp::Match: {  // (env, all, value, mask, pred*)
          Value* x = exchange(call->getArgOperand(2));
          auto* p = b.CreateCall(placeholder("fg.warp.match", i64_, {i64p, i32_, i32_}),
                                 {x, call->getArgOperand(1), call->getArgOperand(3)});
          first = p;
          result = split_result(p, call->getArgOperand(4));
          break;
        }
        case WarpOp::Redux: {  // (env, op, value, mask, signed)
          Value* x = exchange(call->getArgOperand(2));
          auto* p = b.CreateCall(placeholder("fg.warp.redux", i32_, {i32p, i32_, i32_, i32_}),
                                 {x, call->getArgOperand(1), call->getArgOperand(3), call->getArgOperand(4)});
          first = p;
          result = p;
          break;
        }
        case WarpOp::Mma: {  // (env, op, in, out): the lane's words are its exchange; its result goes to out
          const auto op = kernels::matrix::Op::unpack(
              static_cast<uint32_t>(cast<ConstantInt>(call->getArgOperand(1))->getZExtValue()));
          Type* in_ty = ArrayType::get(i32_, op.in_words());
          Type* d_ty = ArrayType::get(i32_, op.out_words());
          Value* x = exchange(
              b.CreateLoad(in_ty, b.CreateBitCast(call->getArgOperand(2), PointerType::getUnqual(in_ty))));
          const std::string name = "fg.warp.mma." + std::to_string(op.pack());
          auto* p = b.CreateCall(placeholder(name.c_str(), d_ty, {x->getType(), i32_}), {x, call->getArgOperand(1)});
          first = p;
          b.CreateStore(p, b.CreateBitCast(call->getArgOperand(3), PointerType::getUnqual(d_ty)));
          break;
        }
        case WarpOp::Sync: first = call->getNextNode(); break;
        case WarpOp::Active:  // no meeting: the lanes of the warp all run it
          result = b.CreateCall(placeholder("fg.warp.active", i32_, {}), {});
          break;
      }
      if (result) call->replaceAllUsesWith(result);
      call->eraseFromParent();
      if (first) mark_before(first);
    }
  }

  static bool reduction(kernels::BarrierKind k) {
    return k == kernels::BarrierKind::RedPopc || k == kernels::BarrierKind::RedAnd || k == kernels::BarrierKind::RedOr;
  }

  // bar.red: each thread's predicate goes into a block-wide accumulator before the barrier (a
  // placeholder the passes lower), and its result is read after it; the barrier itself becomes
  // a plain one. Between the regions the accumulators' totals become the results and the
  // accumulators start again (build_region's dispatch).
  void rewrite_reductions() {
    for (size_t k = 0; k < reductions_.size(); ++k) {
      CallInst* call = reductions_[k].first;
      IRBuilder<> b(call);
      b.CreateCall(placeholder("fg.red.add", Type::getVoidTy(C_), {i32_, i32_}),
                   {b.getInt32(static_cast<uint32_t>(k)), call->getArgOperand(4)});
      IRBuilder<> a(call->getNextNode());
      Value* result = a.CreateCall(placeholder("fg.red.result", i32_, {i32_}), {a.getInt32(static_cast<uint32_t>(k))});
      call->replaceAllUsesWith(result);
      call->setArgOperand(3, b.getInt32(static_cast<uint32_t>(kernels::BarrierKind::Sync)));
      call->setArgOperand(4, b.getInt32(1));
    }
  }

  // The registers (allocas the generator made) become SSA values.
  void promote() {
    DominatorTree dt(*T_);
    std::vector<AllocaInst*> promotable;
    for (Instruction& i : T_->getEntryBlock())
      if (auto* a = dyn_cast<AllocaInst>(&i); a && isAllocaPromotable(a)) promotable.push_back(a);
    if (!promotable.empty()) PromoteMemToReg(promotable, dt);
  }

  // Whether the threads that reach `b` stop there because their block aborts (a fault).
  static bool aborts(const BasicBlock* b) {
    const Instruction* t = b->getTerminator();
    return t && t->getMetadata(kAbortEdge);
  }

  // The successors of `b` that threads which go on running take.
  static SmallVector<BasicBlock*, 4> running_successors(BasicBlock* b) {
    SmallVector<BasicBlock*, 4> out;
    for (BasicBlock* s : successors(b))
      if (!aborts(s) && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    return out;
  }

  // Each block's immediate post-dominator over the edges running threads take (a fault's edge
  // would make every checked access a branch whose paths never meet again); null: none.
  std::map<const BasicBlock*, BasicBlock*> running_post_dominators() {
    std::vector<BasicBlock*> blocks;
    std::map<const BasicBlock*, unsigned> index;
    for (BasicBlock& bb : *T_) {
      index[&bb] = static_cast<unsigned>(blocks.size());
      blocks.push_back(&bb);
    }
    const unsigned n = static_cast<unsigned>(blocks.size());
    std::vector<BitVector> pdom(n, BitVector(n, true));
    std::vector<SmallVector<BasicBlock*, 4>> succ(n);
    for (unsigned i = 0; i < n; ++i) {
      succ[i] = running_successors(blocks[i]);
      if (succ[i].empty()) {
        pdom[i].reset();
        pdom[i].set(i);
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (unsigned i = n; i-- > 0;) {
        if (succ[i].empty()) continue;
        BitVector meet(n, true);
        for (BasicBlock* s : succ[i]) meet &= pdom[index[s]];
        meet.set(i);
        if (meet != pdom[i]) {
          pdom[i] = std::move(meet);
          changed = true;
        }
      }
    }
    // Post-dominators form a chain: the nearest is post-dominated by all the others.
    std::map<const BasicBlock*, BasicBlock*> ipdom;
    for (unsigned i = 0; i < n; ++i) {
      int best = -1;
      unsigned best_count = 0;
      for (int j = pdom[i].find_first(); j >= 0; j = pdom[i].find_next(j)) {
        if (static_cast<unsigned>(j) == i) continue;
        const unsigned c = static_cast<unsigned>(pdom[j].count());
        if (best < 0 || c > best_count) best = j, best_count = c;
      }
      ipdom[blocks[i]] = best < 0 ? nullptr : blocks[best];
    }
    return ipdom;
  }

  // The block-uniform values of the working copy (in SSA form): those every thread of the block
  // computes the same, from the environment, the parameters and constants by arithmetic, in
  // code all threads run together. A branch on a value that is not uniform makes everything
  // up to where its paths meet again (its immediate post-dominator) vary, and the phis there;
  // that covers values carried out of a loop that threads leave at different trips. Calls
  // (but intrinsics that touch no memory), loads that are not invariant, stack slots and
  // %tid vary. Edges into a fault's exit are no branches here: the block stops there.
  void find_uniform() {
    const std::map<const BasicBlock*, BasicBlock*> ipdom = running_post_dominators();
    SmallPtrSet<const Value*, 32> varying;
    SmallPtrSet<const BasicBlock*, 32> divergent, joins;
    SmallPtrSet<const Instruction*, 16> divergent_branches;
    for (Argument& a : T_->args())
      if (a.getArgNo() != 0) varying.insert(&a);
    auto uniform_operands = [&](const Instruction& i) {
      for (const Value* op : i.operands())
        if (varying.count(op)) return false;
      return true;
    };
    auto uniform = [&](const Instruction& i) {
      if (divergent.count(i.getParent())) return false;
      if (auto* phi = dyn_cast<PHINode>(&i)) return !joins.count(phi->getParent()) && uniform_operands(i);
      if (auto* l = dyn_cast<LoadInst>(&i))
        return l->hasMetadata(LLVMContext::MD_invariant_load) && l->isSimple() && uniform_operands(i);
      if (auto* c = dyn_cast<IntrinsicInst>(&i)) return c->doesNotAccessMemory() && uniform_operands(i);
      if (auto* c = dyn_cast<CallInst>(&i);
          c && c->getCalledFunction() && c->getCalledFunction()->getName() == "fg.red.result")
        return true;  // a bar.red's result: the same in every thread
      if (isa<BinaryOperator>(i) || isa<CastInst>(i) || isa<CmpInst>(i) || isa<SelectInst>(i) ||
          isa<GetElementPtrInst>(i) || isa<UnaryOperator>(i) || isa<ExtractValueInst>(i) || isa<InsertValueInst>(i) ||
          isa<FreezeInst>(i))
        return uniform_operands(i);
      return false;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (BasicBlock& bb : *T_)
        for (Instruction& i : bb)
          if (!varying.count(&i) && !uniform(i)) {
            varying.insert(&i);
            changed = true;
          }
      for (BasicBlock& bb : *T_) {
        Instruction* t = bb.getTerminator();
        if (!t || divergent_branches.count(t)) continue;
        const SmallVector<BasicBlock*, 4> next = running_successors(&bb);
        if (next.size() < 2) continue;
        Value* cond = nullptr;
        if (auto* br = dyn_cast<BranchInst>(t)) cond = br->getCondition();
        if (auto* sw = dyn_cast<SwitchInst>(t)) cond = sw->getCondition();
        if (cond && !varying.count(cond) && !divergent.count(&bb)) continue;
        divergent_branches.insert(t);
        changed = true;
        BasicBlock* join = ipdom.at(&bb);
        if (join) joins.insert(join);
        SmallVector<BasicBlock*, 16> work(next.begin(), next.end());
        while (!work.empty()) {
          BasicBlock* b = work.pop_back_val();
          if (b == join || !divergent.insert(b).second) continue;
          for (BasicBlock* s : running_successors(b)) work.push_back(s);
        }
      }
    }
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb)
        if (!varying.count(&i) && !i.getType()->isVoidTy()) uniform_.insert(&i);
  }

  // Each barrier call alone in a block, whose one successor starts a region.
  void split_barriers() {
    for (CallInst* call : barrier_calls_) {
      BasicBlock* bar = call->getParent()->splitBasicBlock(call, "barrier");
      bar->splitBasicBlock(call->getNextNode(), "after.barrier");
      barrier_blocks_.push_back(bar);
      barrier_set_.insert(bar);
    }
  }

  bool is_split(BasicBlock* b) const { return barrier_set_.count(b) || markers_.count(b); }

  // Whether `def` is live on entry to a barrier or marker: some use is reached from one
  // without passing the definition.
  bool live_across(Instruction& def) {
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
      if (is_split(b)) return true;
      for (BasicBlock* p : predecessors(b))
        if (p != home && seen.insert(p).second) work.push_back(p);
    }
    return false;
  }

  // Whether `v` can be computed again anywhere from the thread's coordinates, the block's
  // environment and constants: pure arithmetic over them and invariant loads (BlockEnv's
  // fields, the kernel's parameters), at most `budget` instructions.
  bool recomputable(Value* v, int& budget) {
    if (isa<Constant>(v) || isa<Argument>(v)) return true;
    auto* i = dyn_cast<Instruction>(v);
    if (!i || --budget < 0) return false;
    if (auto* l = dyn_cast<LoadInst>(i)) {
      if (!l->hasMetadata(LLVMContext::MD_invariant_load) || !l->isSimple()) return false;
    } else if (!isa<BinaryOperator>(i) && !isa<CastInst>(i) && !isa<CmpInst>(i) && !isa<SelectInst>(i) &&
               !isa<GetElementPtrInst>(i) && !isa<UnaryOperator>(i)) {
      return false;
    }
    for (Value* op : i->operands())
      if (!recomputable(op, budget)) return false;
    return true;
  }

  // A copy of recomputable `v`'s computation before `at`.
  Value* recompute(Value* v, Instruction* at) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i) return v;
    Instruction* copy = i->clone();
    for (unsigned k = 0; k < copy->getNumOperands(); ++k) copy->setOperand(k, recompute(i->getOperand(k), at));
    copy->insertBefore(at);
    return copy;
  }

  // Values live across a split: recomputed where used when that is cheap (addresses made of
  // the thread's index, the parameters), else kept in a stack slot (which becomes per-thread
  // storage in the context).
  void demote() {
    std::vector<Instruction*> crossing;
    for (BasicBlock& bb : *T_)
      for (Instruction& i : bb)
        if (!isa<AllocaInst>(i) && !i.getType()->isVoidTy() && !i.use_empty() && live_across(i)) crossing.push_back(&i);
    for (Instruction* i : crossing) {
      int budget = 16;
      if (!recomputable(i, budget)) {
        const bool uniform = uniform_.count(i) > 0;
        AllocaInst* slot = DemoteRegToStack(*i);
        if (uniform && slot) uniform_slots_.insert(slot);
        continue;
      }
      std::vector<Use*> away;
      for (Use& u : i->uses()) {
        auto* user = cast<Instruction>(u.getUser());
        auto* phi = dyn_cast<PHINode>(user);
        if ((phi ? phi->getIncomingBlock(u) : user->getParent()) != i->getParent()) away.push_back(&u);
      }
      std::map<std::pair<PHINode*, BasicBlock*>, Value*> edge;  // one copy per edge into a phi
      for (Use* u : away) {
        auto* user = cast<Instruction>(u->getUser());
        auto* phi = dyn_cast<PHINode>(user);
        if (!phi) {
          u->set(recompute(i, user));
          continue;
        }
        BasicBlock* from = phi->getIncomingBlock(*u);
        Value*& copy = edge[{phi, from}];
        if (!copy) copy = recompute(i, from->getTerminator());
        u->set(copy);
      }
    }
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
        s.uniform = s.scalar && uniform_slots_.count(a);
        const auto bits = a->getAllocationSizeInBits(DL_);
        if (!bits) throw Failure{"a stack slot of unknown size"};
        s.stride = alignTo(std::max<uint64_t>(*bits / 8, 1), align);
        s.offset = alignTo(context_bytes_, std::max<uint64_t>(align, 16));
        context_bytes_ = s.offset + s.stride;
        slot_of_[a] = slots_.size();
        slots_.push_back(s);
      }
  }

  // The blocks reached from `start` without entering a block `stop` accepts.
  template <typename Stop>
  Part reach(BasicBlock* start, Stop stop) {
    Part p;
    p.start = start;
    SmallPtrSet<BasicBlock*, 32> seen = {start};
    p.blocks.push_back(start);
    for (size_t i = 0; i < p.blocks.size(); ++i)
      for (BasicBlock* s : successors(p.blocks[i])) {
        if (!seen.insert(s).second) continue;
        (stop(s) ? p.exits : p.blocks).push_back(s);
      }
    return p;
  }

  void form_regions() {
    std::vector<BasicBlock*> starts = {&T_->getEntryBlock()};
    for (BasicBlock* b : barrier_blocks_) {
      region_after_[b] = static_cast<uint32_t>(starts.size());
      starts.push_back(b->getSingleSuccessor());
    }
    for (BasicBlock* start : starts) {
      Region r;
      r.whole = reach(start, [&](BasicBlock* b) { return barrier_set_.count(b) > 0; });
      std::vector<BasicBlock*> part_starts;
      for (BasicBlock* b : r.whole.blocks)
        if (markers_.count(b)) {
          r.part_after[b] = static_cast<uint32_t>(part_starts.size() + 1);
          part_starts.push_back(b->getSingleSuccessor());
        }
      if (!part_starts.empty()) {
        part_starts.insert(part_starts.begin(), start);
        for (BasicBlock* s : part_starts) r.parts.push_back(reach(s, [&](BasicBlock* b) { return is_split(b); }));
      }
      regions_.push_back(std::move(r));
    }
    keep_warp_state_per_thread();
  }

  // A uniform slot has one home for the block, which holds every thread's value because all
  // threads of a pass compute the same one. The parts after warp operations run one warp at a
  // time: a slot such a part stores (a loop counter around a shuffle) would start the next warp
  // from the last warp's final value. Those slots are kept per thread.
  void keep_warp_state_per_thread() {
    std::set<BasicBlock*> in_warp_parts;
    for (const Region& r : regions_)
      for (size_t k = 1; k < r.parts.size(); ++k)
        in_warp_parts.insert(r.parts[k].blocks.begin(), r.parts[k].blocks.end());
    for (Slot& s : slots_) {
      if (!s.uniform) continue;
      for (User* u : s.alloca->users())
        if (auto* st = dyn_cast<StoreInst>(u); st && in_warp_parts.count(st->getParent())) {
          s.uniform = false;
          break;
        }
    }
  }

  // ---- the block function -----------------------------------------------------------------
  Value* env_dim(IRBuilder<>& b, unsigned i) {
    Value* arr = b.CreateStructGEP(env_ty_, env_, kNtid);
    return b.CreateLoad(i32_, b.CreateConstInBoundsGEP2_32(ArrayType::get(i32_, 3), arr, 0, i));
  }

  // The lanes of the warp starting at `base` that exist (a block's last warp may be partial).
  Value* live_lanes(IRBuilder<>& b, Value* base) {
    Value* lanes = b.CreateSub(threads32_, base);
    Value* partial = b.CreateSub(b.CreateShl(b.getInt32(1), lanes), b.getInt32(1));
    return b.CreateSelect(b.CreateICmpUGE(lanes, b.getInt32(32)), b.getInt32(~0u), partial);
  }

  // A load or store of a scalar slot's home in the context: in an alias scope of its own, which
  // the kernel's accesses are marked not to alias (nothing else holds those addresses), so the
  // optimiser may drop a store of a value just loaded from there.
  template <typename I>
  I* in_context(I* access) {
    access->setMetadata(LLVMContext::MD_alias_scope, context_scope_);
    return access;
  }

  void build() {
    {
      MDBuilder mdb(C_);
      MDNode* domain = mdb.createAnonymousAliasScopeDomain("fg.context");
      context_scope_ = MDNode::get(C_, {mdb.createAnonymousAliasScope(domain, "fg.slots")});
    }
    env_ = F_->getArg(0);
    BasicBlock* entry = BasicBlock::Create(C_, "entry", F_);
    IRBuilder<> b(entry);
    for (unsigned i = 0; i < 3; ++i) n_[i] = env_dim(b, i);
    threads32_ = b.CreateMul(n_[0], b.CreateMul(n_[1], n_[2]), "threads");
    Value* threads = b.CreateZExt(threads32_, i64_);
    Value* context = b.CreateLoad(Type::getInt8PtrTy(C_), b.CreateStructGEP(env_ty_, env_, kContext), "context");
    for (Slot& s : slots_) s.base = b.CreateGEP(i8_, context, b.CreateMul(threads, b.getInt64(s.offset)));
    next_ = b.CreateAlloca(i32_, nullptr, "next");
    next_lane_ = b.CreateAlloca(i32_, nullptr, "next.part");
    warp_next_ = b.CreateAlloca(ArrayType::get(i32_, kWarps), nullptr, "next.part.of.warp");
    entry_ = entry;
    for (auto& [call, kind] : reductions_) {
      (void)call;
      AllocaInst* acc = b.CreateAlloca(i32_, nullptr, "red.acc");
      AllocaInst* res = b.CreateAlloca(i32_, nullptr, "red.result");
      b.CreateStore(b.getInt32(identity(kind)), acc);
      b.CreateStore(b.getInt32(identity(kind)), res);
      red_vars_.push_back({acc, res, kind});
    }
    for (size_t r = 0; r < regions_.size(); ++r)
      region_entry_.push_back(BasicBlock::Create(C_, "region" + std::to_string(r), F_));
    b.CreateBr(region_entry_[0]);
    returned_ = BasicBlock::Create(C_, "return", F_);
    IRBuilder<>(returned_).CreateRetVoid();
    diverged_ = BasicBlock::Create(C_, "diverged", F_);
    {
      IRBuilder<> d(diverged_);
      FunctionCallee fault = M_->getOrInsertFunction(
          "fg_rt_fault", FunctionType::get(Type::getVoidTy(C_), {env_->getType(), i32_, i64_}, false));
      d.CreateCall(fault, {env_, d.getInt32(static_cast<uint32_t>(kernels::Fault::Trap)), d.getInt64(0)});
      d.CreateBr(returned_);
    }
    for (size_t r = 0; r < regions_.size(); ++r) build_region(r);
  }

  // A loop over all the block's threads (z, y, x; x fastest) at `entry`, running `part`; after
  // the last thread it goes to `done`. `part_next`: where a warp records the part it runs next
  // (null: the code has no warp operations).
  // Returns the block that goes to `done`.
  BasicBlock* block_pass(BasicBlock* entry, BasicBlock* done, const Part& part, const Region& region,
                         const std::string& tag, std::set<uint32_t>& targets, Value* warp_next,
                         std::set<uint32_t>* parts) {
    BasicBlock* after = BasicBlock::Create(C_, "pass.done" + tag, F_);
    const ThreadNest t = thread_nest(F_, entry, n_, after, tag);
    IRBuilder<> b(t.body);
    Pass p;
    p.x = t.x, p.y = t.y, p.z = t.z;
    p.lid = b.CreateAdd(t.row, t.x, "linear");
    p.lid64 = b.CreateZExt(p.lid, i64_);
    p.lane = b.CreateAnd(p.lid, 31);
    p.warp_base = b.CreateAnd(p.lid, ~31u);
    p.live = live_lanes(b, p.warp_base);
    if (warp_next) {
      p.part_next = b.CreateInBoundsGEP(ArrayType::get(i32_, kWarps), warp_next,
                                        {b.getInt32(0), b.CreateLShr(p.lid, 5)});
      p.left_preset = true;
    }
    p.body = t.body;
    p.latch = t.latch;
    p.before = entry;
    p.after = after;
    p.tag = tag;
    emit_pass(p, part, region, targets, parts);
    IRBuilder<>(after).CreateBr(done);
    return after;
  }

  // Region r: its code up to the first warp operations (all of it when it has none) as one loop
  // over the block's threads; then each warp that reached a warp operation runs the parts after
  // it, one at a time, as loops over its lanes; then a jump to the region the threads' barrier
  // leads to. (Between barriers a GPU may run warps in any order: this is one of them.)
  void build_region(size_t r) {
    const Region& region = regions_[r];
    const std::string tag = ".r" + std::to_string(r);
    std::set<uint32_t> targets;
    BasicBlock* dispatch = BasicBlock::Create(C_, "dispatch" + tag, F_);
    IRBuilder<>(region_entry_[r]).CreateStore(ConstantInt::get(i32_, kUnset), next_);
    if (region.parts.empty()) {
      block_pass(region_entry_[r], dispatch, region.whole, region, tag, targets, nullptr, nullptr);
    } else {
      BasicBlock* wh = BasicBlock::Create(C_, "warp" + tag, F_);
      BasicBlock* ws = BasicBlock::Create(C_, "warp.parts" + tag, F_);
      BasicBlock* wl = BasicBlock::Create(C_, "warp.next" + tag, F_);
      std::set<uint32_t> first_parts;
      // Every warp leaves the region after the first part unless a lane reaches a warp operation.
      IRBuilder<>(region_entry_[r]).CreateMemSet(warp_next_, ConstantInt::get(i8_, 0xff), kWarps * 4, MaybeAlign(4));
      BasicBlock* from = block_pass(region_entry_[r], wh, region.parts[0], region, tag + ".p0", targets, warp_next_,
                                    &first_parts);
      IRBuilder<> b(wh);
      PHINode* w = b.CreatePHI(i32_, 2, "warp");
      w->addIncoming(b.getInt32(0), from);
      Value* first = b.CreateLoad(i32_,
                                  b.CreateInBoundsGEP(warp_next_->getAllocatedType(), warp_next_, {b.getInt32(0), w}));
      b.CreateCondBr(b.CreateICmpEQ(first, b.getInt32(kLeft)), wl, ws);
      // A warp with parts to run: its first lane's coordinates, then the parts over its lanes.
      b.SetInsertPoint(ws);
      Value* base = b.CreateShl(w, 5, "warp.base");
      Value* left = b.CreateSub(threads32_, base);
      Value* lanes = b.CreateSelect(b.CreateICmpUGE(left, b.getInt32(32)), b.getInt32(32), left, "lanes");
      Value* live = live_lanes(b, base);
      Value* x0 = b.CreateURem(base, n_[0]);
      Value* row0 = b.CreateUDiv(base, n_[0]);
      Value* y0 = b.CreateURem(row0, n_[1]);
      Value* z0 = b.CreateUDiv(row0, n_[1]);
      std::vector<BasicBlock*> part_entry = {nullptr};
      for (size_t k = 1; k < region.parts.size(); ++k)
        part_entry.push_back(BasicBlock::Create(C_, "part" + std::to_string(k) + tag, F_));
      SwitchInst* to_part = b.CreateSwitch(first, wl, static_cast<unsigned>(first_parts.size()));
      for (uint32_t t : first_parts) to_part->addCase(b.getInt32(t), part_entry[t]);
      for (size_t k = 1; k < region.parts.size(); ++k) {
        const std::string ptag = tag + ".p" + std::to_string(k);
        BasicBlock* lh = BasicBlock::Create(C_, "lane" + ptag, F_);
        BasicBlock* ll = BasicBlock::Create(C_, "lane.next" + ptag, F_);
        BasicBlock* after = BasicBlock::Create(C_, "lanes.done" + ptag, F_);
        b.SetInsertPoint(part_entry[k]);
        b.CreateBr(lh);
        b.SetInsertPoint(lh);
        PHINode* l = b.CreatePHI(i32_, 2, "lane");
        PHINode* x = b.CreatePHI(i32_, 2, "tx");
        PHINode* y = b.CreatePHI(i32_, 2, "ty");
        PHINode* z = b.CreatePHI(i32_, 2, "tz");
        l->addIncoming(b.getInt32(0), part_entry[k]);
        x->addIncoming(x0, part_entry[k]);
        y->addIncoming(y0, part_entry[k]);
        z->addIncoming(z0, part_entry[k]);
        Pass p;
        p.x = x, p.y = y, p.z = z;
        p.lid = b.CreateAdd(base, l, "linear");
        p.lid64 = b.CreateZExt(p.lid, i64_);
        p.lane = l;
        p.warp_base = base;
        p.live = live;
        p.part_next = next_lane_;
        p.body = lh;
        p.latch = ll;
        p.before = part_entry[k];
        p.after = after;
        p.tag = ptag;
        std::set<uint32_t> next_parts;
        emit_pass(p, region.parts[k], region, targets, &next_parts);
        // The next lane: x, then y, then z.
        b.SetInsertPoint(ll);
        Value* l1 = b.CreateAdd(l, b.getInt32(1));
        Value* xi = b.CreateAdd(x, b.getInt32(1));
        Value* wrap_x = b.CreateICmpEQ(xi, n_[0]);
        Value* yi = b.CreateAdd(y, b.CreateZExt(wrap_x, i32_));
        Value* wrap_y = b.CreateICmpEQ(yi, n_[1]);
        l->addIncoming(l1, ll);
        x->addIncoming(b.CreateSelect(wrap_x, b.getInt32(0), xi), ll);
        y->addIncoming(b.CreateSelect(wrap_y, b.getInt32(0), yi), ll);
        z->addIncoming(b.CreateAdd(z, b.CreateZExt(wrap_y, i32_)), ll);
        b.CreateCondBr(b.CreateICmpULT(l1, lanes), lh, after);
        b.SetInsertPoint(after);
        SwitchInst* sw = b.CreateSwitch(b.CreateLoad(i32_, next_lane_), wl, static_cast<unsigned>(next_parts.size()));
        for (uint32_t t : next_parts) sw->addCase(b.getInt32(t), part_entry[t]);
      }
      b.SetInsertPoint(wl);
      Value* w1 = b.CreateAdd(w, b.getInt32(1));
      w->addIncoming(w1, wl);
      b.CreateCondBr(b.CreateICmpULT(b.CreateShl(w1, 5), threads32_), wh, dispatch);
    }
    IRBuilder<> b(dispatch);
    for (const RedVars& v : red_vars_) {  // the barrier's totals become its results
      b.CreateStore(b.CreateLoad(i32_, v.acc), v.result);
      b.CreateStore(b.getInt32(identity(v.kind)), v.acc);
    }
    SwitchInst* sw = b.CreateSwitch(b.CreateLoad(i32_, next_), returned_, static_cast<unsigned>(targets.size()));
    for (uint32_t t : targets)
      if (t != kReturned) sw->addCase(b.getInt32(t), region_entry_[t]);
  }

  // A thread (or lane) of pass `p` records where it goes next: the block's region (`block`, or
  // none), its warp's part (`part`, or none); all must agree with the first thread's choice
  // (the first of the region to record, lane 0 of the warp).
  void record_next(IRBuilder<>& e, const Pass& p, const uint32_t* block, const uint32_t* part) {
    Value* agrees = e.getTrue();
    auto record = [&](Value* var, uint32_t id, Value* first) {
      Value* prev = e.CreateLoad(i32_, var);
      e.CreateStore(e.getInt32(id), var);
      if (!first) first = e.CreateICmpEQ(prev, e.getInt32(kUnset));
      agrees = e.CreateAnd(agrees, e.CreateOr(first, e.CreateICmpEQ(prev, e.getInt32(id))));
    };
    if (block) record(next_, *block, nullptr);
    if (part) record(p.part_next, *part, e.CreateICmpEQ(p.lane, e.getInt32(0)));
    e.CreateCondBr(agrees, p.latch, diverged_);
  }

  // The code of `part` cloned as the body of pass `p`; the regions and parts its threads may
  // go to next are added to `targets` and `parts` (null: a pass over the whole region).
  void emit_pass(Pass& p, const Part& part, const Region& region, std::set<uint32_t>& targets,
                 std::set<uint32_t>* parts) {
    IRBuilder<> b(p.body);
    ValueToValueMapTy vm;
    vm[T_->getArg(0)] = env_;
    vm[T_->getArg(1)] = p.x;
    vm[T_->getArg(2)] = p.y;
    vm[T_->getArg(3)] = p.z;

    // The slots this code touches: each thread's in its home in the context, a uniform
    // scalar as a private copy of the block's one value.
    std::set<BasicBlock*> in_part(part.blocks.begin(), part.blocks.end());
    struct Copy {  // a uniform slot's private copy, and where the pass's last thread leaves it
      AllocaInst* priv;
      AllocaInst* last;
    };
    std::vector<Copy> write_back;
    IRBuilder<> eb(entry_, entry_->begin());
    std::map<AllocaInst*, Value*> slot_values;
    std::set<const AllocaInst*> direct;  // scalar slots accessed in their homes
    for (Slot& s : slots_) {
      bool used = false, stored = false;
      for (User* u : s.alloca->users()) {
        auto* ui = cast<Instruction>(u);
        if (!in_part.count(ui->getParent())) continue;
        used = true;
        stored |= isa<StoreInst>(ui);
      }
      if (!used) continue;
      if (s.uniform) {
        // Read once before the pass; each thread starts from that value and, all computing the
        // same, leaves what the next pass reads (the last thread's copy, written after the pass).
        Type* ty = s.alloca->getAllocatedType();
        IRBuilder<> pre(p.before->getTerminator());
        IRBuilder<> post(p.after, p.after->getFirstInsertionPt());
        Value* home = pre.CreateBitCast(s.base, s.alloca->getType());
        Value* start = in_context(pre.CreateLoad(ty, home));
        AllocaInst* priv = eb.CreateAlloca(ty, nullptr, s.alloca->getName() + p.tag);
        b.CreateStore(start, priv);
        slot_values[s.alloca] = priv;
        if (stored) {
          AllocaInst* last = eb.CreateAlloca(ty, nullptr, s.alloca->getName() + ".last" + p.tag);
          pre.CreateStore(start, last);
          write_back.push_back({priv, last});
          in_context(post.CreateStore(post.CreateLoad(ty, last), post.CreateBitCast(s.base, s.alloca->getType())));
        }
        continue;
      }
      Value* home = b.CreateBitCast(b.CreateGEP(i8_, s.base, b.CreateMul(p.lid64, b.getInt64(s.stride))),
                                    s.alloca->getType());
      if (!s.scalar) {
        slot_values[s.alloca] = home;
        continue;
      }
      // A thread's own value: read and written in its home where the code does, in the
      // context's alias scope (threads that take a path without it do not touch it).
      slot_values[s.alloca] = home;
      direct.insert(s.alloca);
    }
    for (auto& [a, v] : slot_values) vm[a] = v;

    // The exits: a barrier (to the region after it), a marker (to the part after it), return.
    for (BasicBlock* x : part.exits) {
      BasicBlock* e = BasicBlock::Create(C_, "leave" + p.tag, F_);
      IRBuilder<> xb(e);
      for (const Copy& c : write_back) xb.CreateStore(xb.CreateLoad(c.priv->getAllocatedType(), c.priv), c.last);
      if (barrier_set_.count(x)) {
        const uint32_t to = region_after_.at(x);
        targets.insert(to);
        record_next(xb, p, &to, p.part_next && !p.left_preset ? &kLeft : nullptr);
      } else {
        const uint32_t to = region.part_after.at(x);
        parts->insert(to);
        record_next(xb, p, nullptr, &to);
      }
      vm[x] = e;
    }
    BasicBlock* returns = BasicBlock::Create(C_, "returned" + p.tag, F_);
    {
      // A thread that faulted stops the block.
      BasicBlock* finished = BasicBlock::Create(C_, "finished" + p.tag, F_);
      IRBuilder<> rb(returns);
      Value* abort = rb.CreateLoad(i32_, rb.CreateStructGEP(env_ty_, env_, kAbort));
      rb.CreateCondBr(rb.CreateICmpNE(abort, rb.getInt32(0)), returned_, finished);
      rb.SetInsertPoint(finished);
      record_next(rb, p, &kReturned, p.part_next && !p.left_preset ? &kLeft : nullptr);
    }

    SmallVector<BasicBlock*, 32> clones;
    for (BasicBlock* bb : part.blocks) {
      BasicBlock* c = CloneBasicBlock(bb, vm, p.tag, F_);
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
    // The warp operations' placeholders, with the exchange slot each reads, before remapping.
    std::vector<std::pair<CallInst*, AllocaInst*>> warp_ops;
    for (BasicBlock* c : clones)
      for (Instruction& i : *c)
        if (auto* call = dyn_cast<CallInst>(&i);
            call && call->getCalledFunction() && call->getCalledFunction()->getName().startswith("fg.warp."))
          warp_ops.push_back({call, call->arg_size() ? dyn_cast<AllocaInst>(call->getArgOperand(0)) : nullptr});
    std::set<Instruction*> home_accesses;
    for (BasicBlock* c : clones)
      for (Instruction& i : *c) {
        Value* ptr = nullptr;
        if (auto* l = dyn_cast<LoadInst>(&i)) ptr = l->getPointerOperand();
        if (auto* st = dyn_cast<StoreInst>(&i)) ptr = st->getPointerOperand();
        if (auto* a = dyn_cast_or_null<AllocaInst>(ptr); a && direct.count(a)) home_accesses.insert(&i);
      }
    remapInstructionsInBlocks(clones, vm);
    for (Instruction* i : home_accesses) i->setMetadata(LLVMContext::MD_alias_scope, context_scope_);
    b.CreateBr(cast<BasicBlock>(vm[part.start]));
    bool any_return = false;
    for (BasicBlock* c : clones) {
      if (auto* ret = dyn_cast<ReturnInst>(c->getTerminator())) {
        ret->eraseFromParent();
        BranchInst::Create(returns, c);
        any_return = true;
      }
      // Edges from code outside the part (before a barrier or marker) are not taken here.
      for (PHINode& phi : c->phis())
        for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
          if (phi.getIncomingBlock(i)->getParent() != F_) phi.removeIncomingValue(i, false);
    }
    if (any_return) {
      targets.insert(kReturned);
    } else {
      BasicBlock* finished = returns->getTerminator()->getSuccessor(1);
      returns->eraseFromParent();
      finished->eraseFromParent();
    }
    for (auto [call, slot] : warp_ops) lower_warp_op(p, call, slot);
    lower_reductions(clones);
    // The kernel's own accesses never touch the scalar slots' homes.
    for (BasicBlock* c : clones)
      for (Instruction& i : *c)
        if (i.mayReadOrWriteMemory() && !home_accesses.count(&i))
          i.setMetadata(LLVMContext::MD_noalias,
                        MDNode::concatenate(i.getMetadata(LLVMContext::MD_noalias), context_scope_));
    for (BasicBlock* c : clones)
      for (Instruction& i : *c)
        for (Value* op : i.operands()) {
          const Function* owner = nullptr;
          if (auto* oi = dyn_cast<Instruction>(op)) owner = oi->getFunction();
          if (auto* oa = dyn_cast<Argument>(op)) owner = oa->getParent();
          if (auto* ob = dyn_cast<BasicBlock>(op)) owner = ob->getParent();
          if (owner && owner != F_) throw Failure{"a value crosses a barrier without being split"};
        }
  }

  static uint32_t identity(kernels::BarrierKind k) { return k == kernels::BarrierKind::RedAnd ? 1u : 0u; }

  // bar.red's placeholders in a pass's code: a thread adds its predicate to the accumulator;
  // after the barrier it reads the total.
  void lower_reductions(const SmallVectorImpl<BasicBlock*>& clones) {
    std::vector<CallInst*> calls;
    for (BasicBlock* c : clones)
      for (Instruction& i : *c)
        if (auto* call = dyn_cast<CallInst>(&i);
            call && call->getCalledFunction() && call->getCalledFunction()->getName().startswith("fg.red."))
          calls.push_back(call);
    for (CallInst* call : calls) {
      IRBuilder<> b(call);
      const RedVars& v = red_vars_.at(cast<ConstantInt>(call->getArgOperand(0))->getZExtValue());
      if (call->getCalledFunction()->getName() == "fg.red.result") {
        call->replaceAllUsesWith(b.CreateLoad(i32_, v.result));
      } else {
        Value* bit = b.CreateZExt(b.CreateICmpNE(call->getArgOperand(1), b.getInt32(0)), i32_);
        Value* acc = b.CreateLoad(i32_, v.acc);
        Value* next = v.kind == kernels::BarrierKind::RedPopc  ? b.CreateAdd(acc, bit)
                      : v.kind == kernels::BarrierKind::RedAnd ? b.CreateAnd(acc, bit)
                                                               : b.CreateOr(acc, bit);
        b.CreateStore(next, v.acc);
      }
      call->eraseFromParent();
    }
  }

  // A warp operation of a lane whose warp's lanes have all stored their operands in `slot`'s
  // array: its result, computed where the placeholder `call` stood.
  void lower_warp_op(const Pass& p, CallInst* call, AllocaInst* slot) {
    IRBuilder<> b(call);
    const StringRef name = call->getCalledFunction()->getName();
    Value* result = nullptr;
    if (name == "fg.warp.active") {
      result = p.live;
    } else {
      if (!slot || !slot_of_.count(slot)) throw Failure{"a warp operation without its exchange slot"};
      const Slot& s = slots_[slot_of_.at(slot)];
      Type* elem = slot->getAllocatedType();
      // The warp's array as its lanes left it at the marker, copied before the first lane's
      // turn: a lane that reaches the same operation again (a loop) stores its next operand
      // before the later lanes have read this one. Lane k's operand at lanes[k].
      IRBuilder<> pre(p.before->getTerminator());
      Value* warp_lanes = pre.CreateSub(threads32_, p.warp_base);
      warp_lanes = pre.CreateSelect(pre.CreateICmpUGE(warp_lanes, pre.getInt32(32)), pre.getInt32(32), warp_lanes);
      AllocaInst* snapshot = IRBuilder<>(entry_, entry_->begin())
                                 .CreateAlloca(ArrayType::get(i8_, 32 * s.stride), nullptr, "warp.operands" + p.tag);
      snapshot->setAlignment(Align(16));
      // No alias scope on the copy: it writes the snapshot, which the lanes' reads (marked not
      // to alias the context's homes) must see.
      pre.CreateMemCpy(
          snapshot, Align(16),
          pre.CreateGEP(i8_, s.base, pre.CreateMul(pre.CreateZExt(p.warp_base, i64_), pre.getInt64(s.stride))),
          MaybeAlign(1), pre.CreateMul(pre.CreateZExt(warp_lanes, i64_), pre.getInt64(s.stride)));
      Value* lanes = b.CreateBitCast(snapshot, PointerType::getUnqual(elem));
      auto group = [&](Value* mask) {
        return b.CreateAnd(b.CreateOr(mask, b.CreateShl(b.getInt32(1), p.lane)), p.live);
      };
      auto runtime = [&](const char* fn, Type* ret, std::vector<Type*> args) {
        return M_->getOrInsertFunction(fn, FunctionType::get(ret, args, false));
      };
      if (name == "fg.warp.shfl") {  // (exchange, mode, b, c, mask), the PTX ISA's shfl.sync
        Value* mode = call->getArgOperand(1);
        Value* bl = b.CreateAnd(call->getArgOperand(2), 31);
        Value* c = call->getArgOperand(3);
        Value* clamp = b.CreateAnd(c, 31);
        Value* seg = b.CreateAnd(b.CreateLShr(c, 8), 31);
        Value* max_lane = b.CreateOr(b.CreateAnd(p.lane, seg), b.CreateAnd(clamp, b.CreateNot(seg)));
        Value* min_lane = b.CreateAnd(p.lane, seg);
        using kernels::ShflMode;
        auto is = [&](ShflMode m) { return b.CreateICmpEQ(mode, b.getInt32(static_cast<uint32_t>(m))); };
        Value* up = b.CreateSub(p.lane, bl);
        Value* down = b.CreateAdd(p.lane, bl);
        Value* bfly = b.CreateXor(p.lane, bl);
        Value* idx = b.CreateOr(min_lane, b.CreateAnd(bl, b.CreateNot(seg)));
        Value* j = b.CreateSelect(
            is(ShflMode::Up), up,
            b.CreateSelect(is(ShflMode::Down), down, b.CreateSelect(is(ShflMode::Bfly), bfly, idx)));
        Value* ok = b.CreateSelect(is(ShflMode::Up), b.CreateICmpSGE(up, max_lane), b.CreateICmpSLE(j, max_lane));
        Value* in_warp = b.CreateICmpULT(j, b.getInt32(32));  // also false for a negative up
        Value* from = b.CreateSelect(b.CreateAnd(ok, in_warp), j, p.lane);
        Value* member = b.CreateTrunc(b.CreateLShr(group(call->getArgOperand(4)), from), Type::getInt1Ty(C_));
        Value* src = b.CreateSelect(member, from, p.lane);
        Value* v = b.CreateLoad(elem, b.CreateGEP(elem, lanes, b.CreateZExt(src, i64_)));
        result = b.CreateOr(b.CreateZExt(v, i64_), b.CreateShl(b.CreateZExt(ok, i64_), 32));
      } else if (name == "fg.warp.vote") {  // (exchange, mode, mask)
        result = b.CreateCall(runtime("fg_rt_warp_vote", i32_, {i32_, lanes->getType(), i32_}),
                              {call->getArgOperand(1), lanes, group(call->getArgOperand(2))});
      } else if (name == "fg.warp.match") {  // (exchange, all, mask)
        result = b.CreateCall(runtime("fg_rt_warp_match", i64_, {i32_, lanes->getType(), i32_, i32_}),
                              {call->getArgOperand(1), lanes, p.lane, group(call->getArgOperand(2))});
      } else if (name == "fg.warp.redux") {  // (exchange, op, mask, signed)
        result = b.CreateCall(runtime("fg_rt_warp_redux", i32_, {i32_, lanes->getType(), i32_, i32_}),
                              {call->getArgOperand(1), lanes, group(call->getArgOperand(2)), call->getArgOperand(3)});
      } else if (name.startswith("fg.warp.mma.")) {  // (exchange, op)
        Type* d_ty = call->getType();
        AllocaInst* d = IRBuilder<>(entry_, entry_->begin()).CreateAlloca(d_ty, nullptr, "mma.d" + p.tag);
        Type* i32p = PointerType::getUnqual(i32_);
        b.CreateCall(
            runtime("fg_rt_warp_mma", Type::getVoidTy(C_), {i32_, i8_->getPointerTo(), i64_, i32_, i32_, i32p}),
            {call->getArgOperand(1), b.CreateBitCast(lanes, i8_->getPointerTo()), b.getInt64(s.stride), p.lane,
             group(b.getInt32(0xffffffffu)), b.CreateBitCast(d, i32p)});
        result = b.CreateLoad(d_ty, d);
      } else {
        throw Failure{"an unknown warp operation"};
      }
    }
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
  }

  Function* thread_;
  Function* F_;
  Module* M_;
  StructType* env_ty_;
  LLVMContext& C_;
  const DataLayout& DL_;
  Type *i32_, *i64_, *i8_;
  Function* T_ = nullptr;  // the working copy of the thread function
  bool done_ = false;
  std::vector<Function*> placeholders_;
  std::vector<CallInst*> barrier_calls_;
  std::vector<std::pair<CallInst*, kernels::BarrierKind>> reductions_;  // bar.red's barriers
  struct RedVars {
    AllocaInst *acc, *result;
    kernels::BarrierKind kind;
  };
  std::vector<RedVars> red_vars_;  // per bar.red, in the block function's entry
  std::vector<std::pair<CallInst*, WarpOp>> warp_calls_;
  std::vector<BasicBlock*> barrier_blocks_;
  std::set<BasicBlock*> barrier_set_, markers_;
  std::map<BasicBlock*, uint32_t> region_after_;  // barrier block → the region after it
  std::vector<Slot> slots_;
  std::map<AllocaInst*, size_t> slot_of_;
  std::set<const Instruction*> uniform_;  // find_uniform's block-uniform values
  std::set<const AllocaInst*> uniform_slots_;
  uint64_t context_bytes_ = 0;
  std::vector<Region> regions_;
  // The block function's parts.
  Value* env_ = nullptr;
  Value* n_[3] = {};
  Value* threads32_ = nullptr;
  AllocaInst* next_ = nullptr;       // the region to run next (kReturned: none)
  AllocaInst* next_lane_ = nullptr;  // the part the warp runs next (kLeft: the region is done)
  AllocaInst* warp_next_ = nullptr;  // the same for each warp after a region's first part
  BasicBlock* entry_ = nullptr;
  BasicBlock* returned_ = nullptr;
  BasicBlock* diverged_ = nullptr;
  std::vector<BasicBlock*> region_entry_;
  MDNode* context_scope_ = nullptr;  // the scalar slots' alias scope (a list of one)
};

}  // namespace

bool split_at_barriers(Function* thread, Function* block, StructType* env_type, uint64_t* context_bytes,
                       unsigned* barriers, unsigned* warp_points, std::string* why) {
  try {
    Splitter s(thread, block, env_type);
    s.run();
    *context_bytes = s.context_bytes();
    *barriers = s.barriers();
    *warp_points = s.warp_points();
    return true;
  } catch (const Failure& f) {
    *why = f.why;
  }
  return false;
}

}  // namespace fg::jit
