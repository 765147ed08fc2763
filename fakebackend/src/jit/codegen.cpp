// SPDX-License-Identifier: Apache-2.0
#include "jit/codegen.h"

#include "jit/env.h"
#include "jit/errors.h"
#include "jit/fission.h"
#include "jit/half.h"
#include "jit/texture.h"
#include "jit/thread_nest.h"
#include "kernels/matrix.h"
#include "kernels/uniformity.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace fg::jit {
namespace {

using namespace llvm;
using ptx::Operand;
using ptx::Space;
using PType = ptx::Type;

bool is_float(PType t) {
  return t == PType::F16 || t == PType::BF16 || t == PType::F32 || t == PType::F64 || t == PType::TF32;
}
bool is_signed(PType t) { return t == PType::S8 || t == PType::S16 || t == PType::S32 || t == PType::S64; }
unsigned bits_of(PType t) { return t == PType::Pred ? 1 : ptx::type_size(t) * 8; }

// Whether `entry`, or a function it may call, reads an environment register (%envreg<n>):
// cooperative groups' grid workspace, which grid.sync() waits on.
bool reads_environment(const ptx::Module& m, const ptx::Function& entry) {
  auto reads = [](const Operand& op, const auto& self) -> bool {
    if (op.kind == Operand::Kind::Reg && op.name.compare(0, 7, "%envreg") == 0) return true;
    for (const Operand& e : op.elems)
      if (self(e, self)) return true;
    return false;
  };
  std::set<const ptx::Function*> seen;
  std::vector<const ptx::Function*> work = {&entry};
  while (!work.empty()) {
    const ptx::Function* f = work.back();
    work.pop_back();
    if (!seen.insert(f).second) continue;
    bool indirect = false;
    for (const ptx::Statement& s : f->body) {
      if (s.kind != ptx::Statement::Kind::Instruction) continue;
      for (const Operand& op : s.insn.ops)
        if (reads(op, reads)) return true;
      if (s.insn.opcode != "call" || s.insn.ops.size() < 2) continue;
      if (const ptx::Function* callee = m.find_function(s.insn.ops[1].name); callee && callee->has_body) {
        work.push_back(callee);
      } else if (s.insn.ops[1].kind == Operand::Kind::Reg) {
        indirect = true;
      }
    }
    if (indirect)  // a call through a pointer may reach any function
      for (const ptx::Function& g : m.functions)
        if (g.has_body) work.push_back(&g);
  }
  return false;
}

// Also the operand access of half.cpp's and texture.cpp's lowerings (texture::Access).
class Gen final : public texture::Access {
 public:
  Gen(LLVMContext& c, const kernels::CompileRequest& req, kernels::CompiledKernel* out)
      : C_(c), P_(*req.module), req_(req), out_(out), B_(c) {
    M_ = std::make_unique<Module>("fg_kernel", C_);
    i1_ = Type::getInt1Ty(C_);
    i8_ = Type::getInt8Ty(C_);
    i16_ = Type::getInt16Ty(C_);
    i32_ = Type::getInt32Ty(C_);
    i64_ = Type::getInt64Ty(C_);
    f32_ = Type::getFloatTy(C_);
    f64_ = Type::getDoubleTy(C_);
    i8p_ = PointerType::getUnqual(i8_);
    auto* range = StructType::create(C_, {i64_, i64_}, "fg.range");
    range_ty_ = range;
    env_ty_ = StructType::create(
        C_,
        {i8p_, i8p_, i64_, i8p_, i64_, ArrayType::get(i32_, 3), ArrayType::get(i32_, 3), ArrayType::get(i32_, 3), i32_,
         PointerType::getUnqual(range), i8p_, PointerType::getUnqual(i64_), i64_, ArrayType::get(i32_, 3), i32_, i8p_},
        "fg.env");
    envp_ = PointerType::getUnqual(env_ty_);
  }

  std::unique_ptr<Module> run() {
    const ptx::Function* entry = P_.find_function(req_.kernel);
    if (!entry || !entry->entry || !entry->has_body) {
      throw Malformed{"no kernel named '" + req_.kernel + "' in the module"};
    }
    out_->grid_sync = reads_environment(P_, *entry);
    yields_ = req_.cooperative || out_->grid_sync;
    layout_shared();
    Function* thread = declare(*entry);
    while (!pending_.empty()) {
      const ptx::Function* f = pending_.front();
      pending_.pop_front();
      define(*f);
    }
    if (!needs_fibers_ || !split_block(*entry, thread)) make_block_function(*entry, thread);
    make_thread_function(thread);
    out_->needs_fibers = needs_fibers_;
    out_->yields = yields_;
    out_->sites = sites_;
    out_->shared_static = shared_static_;
    out_->globals = globals_;
    std::string err;
    raw_string_ostream os(err);
    if (verifyModule(*M_, &os)) throw Malformed{"generated IR does not verify: " + os.str()};
    return std::move(M_);
  }

 private:
  // ---- module-level layout ----------------------------------------------------------------
  // Every .shared variable of the module (and of its functions) gets an offset up front; the
  // dynamic (extern, unsized) part follows the static ones.
  void layout_shared() {
    auto place = [&](const ptx::Variable& v) {
      if (v.space != Space::Shared) return;
      if (v.is_array && v.bytes() == 0) {  // extern .shared x[]: the dynamic part
        dynamic_shared_.insert(v.name);
        return;
      }
      const uint64_t align = std::max<uint64_t>(v.align ? v.align : ptx::type_size(v.type), 1);
      shared_static_ = (shared_static_ + align - 1) / align * align;
      shared_offset_[v.name] = shared_static_;
      shared_static_ += v.bytes();
    };
    for (const ptx::Variable& v : P_.globals) place(v);
    for (const ptx::Function& f : P_.functions)
      for (const ptx::Variable& v : f.locals) place(v);
    dynamic_offset_ = (shared_static_ + 15) / 16 * 16;
  }

  unsigned global_slot(const std::string& name) {
    auto it = global_index_.find(name);
    if (it != global_index_.end()) return it->second;
    const unsigned i = static_cast<unsigned>(globals_.size());
    globals_.push_back(name);
    global_index_[name] = i;
    return i;
  }

  // ---- functions --------------------------------------------------------------------------
  // Per-thread signature: (env, tid.x, tid.y, tid.z, return buffers…, parameter buffers…).
  FunctionType* thread_type(size_t returns, size_t params) {
    std::vector<Type*> args = {envp_, i32_, i32_, i32_};
    for (size_t i = 0; i < returns + params; ++i) args.push_back(i8p_);
    return FunctionType::get(Type::getVoidTy(C_), args, false);
  }

  Function* declare(const ptx::Function& f) {
    auto it = functions_.find(f.name);
    if (it != functions_.end()) return it->second;
    const ptx::Function* def = P_.find_function(f.name);
    if (!def || !def->has_body) {
      // CUDA's device runtime (cudadevrt): kernels launched from device code.
      if (f.name.rfind("__cuda_syscall_", 0) == 0 || f.name.rfind("cudaLaunchDevice", 0) == 0 ||
          f.name.rfind("cudaGetParameterBuffer", 0) == 0)
        unsupported("launches kernels from device code (dynamic parallelism: calls '" + f.name + "')");
      unsupported("calls '" + f.name + "', which no module loaded defines");
    }
    // A kernel's parameters come from the launch's block (BlockEnv::params); a function's
    // from its caller's buffers.
    Function* fn = Function::Create(
        def->entry ? thread_type(0, 0) : thread_type(def->returns.size(), def->params.size()),
        Function::InternalLinkage, "fg.thr." + def->name, M_.get());
    functions_[f.name] = fn;
    pending_.push_back(def);
    return fn;
  }

  Function* runtime(const char* name, Type* ret, std::vector<Type*> args) {
    if (Function* f = M_->getFunction(name)) return f;
    return Function::Create(FunctionType::get(ret, args, false), Function::ExternalLinkage, name, M_.get());
  }

  // ---- per-function state ----------------------------------------------------------------
  struct Reg {
    AllocaInst* slot;
    unsigned bits;
  };
  const ptx::Function* fn_ = nullptr;
  Function* llfn_ = nullptr;
  Value* env_ = nullptr;
  Value* tid_[3] = {};
  std::unordered_map<std::string, Reg> regs_;
  std::unordered_map<std::string, Value*> param_addr_;     // .param names → host address (i64)
  std::unordered_map<std::string, Value*> local_addr_;     // .local names → host address (i64)
  std::vector<std::pair<Value*, uint64_t>> local_ranges_;  // the function's .local variables: address, bytes
  std::unordered_map<std::string, BasicBlock*> labels_;
  BasicBlock* exit_ = nullptr;   // returns at once (a fault, ret, exit)
  AllocaInst* carry_ = nullptr;  // CC.CF, made on first use
  std::vector<std::string> call_returns_;

  void define(const ptx::Function& f) {
    fn_ = &f;
    llfn_ = functions_.at(f.name);
    regs_.clear();
    param_addr_.clear();
    local_addr_.clear();
    local_ranges_.clear();
    labels_.clear();
    carry_ = nullptr;
    BasicBlock* entry = BasicBlock::Create(C_, "entry", llfn_);
    B_.SetInsertPoint(entry);
    auto arg = llfn_->arg_begin();
    env_ = &*arg++;
    for (auto& t : tid_) t = &*arg++;
    if (f.entry) {
      uint64_t off = 0;
      Value* params = load_env(kParams, i8p_);
      for (const ptx::Param& p : f.params) {
        const uint64_t align = std::max<uint64_t>(p.align ? p.align : ptx::type_size(p.type), 1);
        off = (off + align - 1) / align * align;
        param_addr_[p.name] = B_.CreatePtrToInt(B_.CreateConstGEP1_64(i8_, params, off), i64_);
        off += p.bytes();
      }
    } else {
      for (const ptx::Param& p : f.returns) param_addr_[p.name] = B_.CreatePtrToInt(&*arg++, i64_);
      for (const ptx::Param& p : f.params) param_addr_[p.name] = B_.CreatePtrToInt(&*arg++, i64_);
    }
    for (const ptx::Variable& v : f.locals) declare_local(v);
    exit_ = BasicBlock::Create(C_, "exit", llfn_);
    for (const ptx::Statement& s : f.body)
      if (s.kind == ptx::Statement::Kind::Label) labels_[s.label] = BasicBlock::Create(C_, s.label, llfn_);
    for (const ptx::Statement& s : f.body) {
      if (s.kind == ptx::Statement::Kind::Label) {
        BasicBlock* bb = labels_[s.label];
        if (!B_.GetInsertBlock()->getTerminator()) B_.CreateBr(bb);
        B_.SetInsertPoint(bb);
      } else if (s.kind == ptx::Statement::Kind::Instruction) {
        if (B_.GetInsertBlock()->getTerminator()) {  // unreachable code after a branch
          B_.SetInsertPoint(BasicBlock::Create(C_, "dead", llfn_));
        }
        instruction(s.insn);
      }
    }
    if (!B_.GetInsertBlock()->getTerminator()) B_.CreateBr(exit_);
    B_.SetInsertPoint(exit_);
    B_.CreateRetVoid();
  }

  void declare_local(const ptx::Variable& v) {
    switch (v.space) {
      case Space::Reg: {
        const unsigned bits = bits_of(v.type);
        if (bits == 0) malformed_decl(v, "a register without a type");
        IRBuilder<> eb(&llfn_->getEntryBlock(), llfn_->getEntryBlock().begin());
        Type* ty = IntegerType::get(C_, bits * std::max<uint32_t>(v.vector, 1));
        regs_[v.name] = {eb.CreateAlloca(ty, nullptr, v.name), bits * std::max<uint32_t>(v.vector, 1)};
        return;
      }
      case Space::Local:
      case Space::Param: {  // a depot, or a call sequence's argument buffer
        IRBuilder<> eb(&llfn_->getEntryBlock(), llfn_->getEntryBlock().begin());
        const uint64_t bytes = std::max<uint64_t>(v.bytes(), 1);
        if (bytes > (1u << 20)) unsupported("declares " + std::to_string(bytes) + " bytes of local memory");
        AllocaInst* a = eb.CreateAlloca(ArrayType::get(i8_, bytes), nullptr, v.name);
        a->setAlignment(Align(std::max<uint32_t>(v.align ? v.align : 16, 16)));
        Value* addr = B_.CreatePtrToInt(a, i64_);
        (v.space == Space::Local ? local_addr_ : param_addr_)[v.name] = addr;
        if (v.space == Space::Local) local_ranges_.push_back({addr, bytes});
        return;
      }
      case Space::Shared: return;  // laid out with the module's
      default: unsupported("declares a function-scope variable in an unsupported state space");
    }
  }

  [[noreturn]] void malformed_decl(const ptx::Variable& v, const std::string& what) {
    throw Malformed{"line " + std::to_string(v.line) + ": " + v.name + ": " + what};
  }

  // ---- values -----------------------------------------------------------------------------
  // BlockEnv's fields but abort, the kernel's parameters and the variables' address table do
  // not change while a block runs: their loads are marked invariant, so that the optimiser
  // hoists them out of the loops over the threads.
  LoadInst* invariant(LoadInst* l) {
    l->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(C_, {}));
    return l;
  }
  Value* load_env(EnvField f, Type* ty) {
    LoadInst* l = B_.CreateLoad(ty, B_.CreateStructGEP(env_ty_, env_, f));
    return f == kAbort ? l : invariant(l);
  }
  Value* env_dim(EnvField f, int i) {
    Value* arr = B_.CreateStructGEP(env_ty_, env_, f);
    return invariant(B_.CreateLoad(i32_, B_.CreateConstInBoundsGEP2_32(ArrayType::get(i32_, 3), arr, 0, i)));
  }

  Type* value_type(PType t) {
    switch (t) {
      case PType::Pred: return i1_;
      case PType::F32: return f32_;
      case PType::F64: return f64_;
      case PType::F16: return Type::getHalfTy(C_);
      case PType::None: return i32_;
      default: return IntegerType::get(C_, bits_of(t));
    }
  }

  // Converts the raw register bits `v` (an integer) to a value of type `t`.
  Value* from_bits(Value* v, PType t) {
    Type* want = value_type(t);
    const unsigned want_bits = want->isIntegerTy() ? want->getIntegerBitWidth() : want->getPrimitiveSizeInBits();
    const unsigned have = v->getType()->getIntegerBitWidth();
    if (have > want_bits) v = B_.CreateTrunc(v, IntegerType::get(C_, want_bits));
    if (have < want_bits) {
      v = is_signed(t) ? B_.CreateSExt(v, IntegerType::get(C_, want_bits))
                       : B_.CreateZExt(v, IntegerType::get(C_, want_bits));
    }
    return want->isIntegerTy() ? v : B_.CreateBitCast(v, want);
  }
  // A value of any type as `bits` raw bits (sign-extended when `sign`).
  Value* to_bits(Value* v, unsigned bits, bool sign) {
    if (!v->getType()->isIntegerTy())
      v = B_.CreateBitCast(v, IntegerType::get(C_, v->getType()->getPrimitiveSizeInBits()));
    const unsigned have = v->getType()->getIntegerBitWidth();
    if (have > bits) return B_.CreateTrunc(v, IntegerType::get(C_, bits));
    if (have < bits)
      return sign ? B_.CreateSExt(v, IntegerType::get(C_, bits)) : B_.CreateZExt(v, IntegerType::get(C_, bits));
    return v;
  }

  Reg& reg(const std::string& name, const ptx::Instruction& in) {
    auto it = regs_.find(name);
    if (it == regs_.end()) malformed(in, "register " + name + " is not declared");
    return it->second;
  }

  Value* special(const std::string& name, const ptx::Instruction& in) {
    static const char* dims = "xyz";
    auto comp = [&](const char* base) -> int {
      const size_t n = std::strlen(base);
      if (name.size() == n + 2 && name.compare(0, n, base) == 0 && name[n] == '.') {
        const char* c = std::strchr(dims, name[n + 1]);
        if (c) return static_cast<int>(c - dims);
      }
      return -1;
    };
    if (int i = comp("%tid"); i >= 0) return tid_[i];
    if (int i = comp("%ntid"); i >= 0) return env_dim(kNtid, i);
    if (int i = comp("%ctaid"); i >= 0) return env_dim(kCtaid, i);
    if (int i = comp("%nctaid"); i >= 0) return env_dim(kNctaid, i);
    Value* linear = B_.CreateAdd(
        tid_[0], B_.CreateMul(env_dim(kNtid, 0), B_.CreateAdd(tid_[1], B_.CreateMul(env_dim(kNtid, 1), tid_[2]))));
    if (name == "%laneid") return B_.CreateAnd(linear, 31);
    if (name == "%warpid") return B_.CreateLShr(linear, 5);
    if (name == "%nwarpid") return B_.getInt32(64);
    if (name == "%smid") return B_.getInt32(0);
    if (name == "%nsmid") return B_.getInt32(1);
    if (name == "%gridid") return B_.getInt64(1);
    if (name == "%lanemask_eq" || name == "%lanemask_lt" || name == "%lanemask_le" || name == "%lanemask_gt" ||
        name == "%lanemask_ge") {
      Value* lane = B_.CreateAnd(linear, 31);
      Value* bit = B_.CreateShl(B_.getInt32(1), lane);
      if (name == "%lanemask_eq") return bit;
      Value* lt = B_.CreateSub(bit, B_.getInt32(1));
      if (name == "%lanemask_lt") return lt;
      if (name == "%lanemask_le") return B_.CreateOr(lt, bit);
      if (name == "%lanemask_ge") return B_.CreateNot(lt);
      return B_.CreateNot(B_.CreateOr(lt, bit));
    }
    if (name == "%clock" || name == "%clock64" || name == "%globaltimer" || name == "%globaltimer_lo") {
      Value* t = B_.CreateCall(runtime("fg_rt_clock", i64_, {envp_}), {env_});
      return name == "%clock" || name == "%globaltimer_lo" ? B_.CreateTrunc(t, i32_) : t;
    }
    if (name == "%dynamic_smem_size" || name == "%total_smem_size")
      return B_.CreateTrunc(load_env(kSharedBytes, i64_), i32_);
    // The driver's environment registers: %envreg1 and %envreg2 carry the high and the low
    // half of a cooperative launch's grid workspace (grid.sync()); the others read 0.
    if (name.compare(0, 7, "%envreg") == 0 && name.size() > 7 && name.size() <= 9 &&
        name.find_first_not_of("0123456789", 7) == std::string::npos && std::stoi(name.substr(7)) < 32) {
      const int n = std::stoi(name.substr(7));
      if (n != 1 && n != 2) return B_.getInt32(0);
      Value* ws = load_env(kGridWorkspace, i64_);
      return B_.CreateTrunc(n == 1 ? B_.CreateLShr(ws, 32) : ws, i32_);
    }
    // Thread-block clusters: without cluster dimensions every block is a cluster of one.
    auto cdim = [&](int i) {
      Value* d = env_dim(kClusterDim, i);
      return B_.CreateSelect(B_.CreateICmpEQ(d, B_.getInt32(0)), B_.getInt32(1), d);
    };
    if (int i = comp("%cluster_nctaid"); i >= 0) return cdim(i);
    if (int i = comp("%cluster_ctaid"); i >= 0) return B_.CreateURem(env_dim(kCtaid, i), cdim(i));
    if (int i = comp("%clusterid"); i >= 0) return B_.CreateUDiv(env_dim(kCtaid, i), cdim(i));
    if (int i = comp("%nclusterid"); i >= 0) return B_.CreateUDiv(env_dim(kNctaid, i), cdim(i));
    if (name == "%cluster_ctarank") {
      Value *x = B_.CreateURem(env_dim(kCtaid, 0), cdim(0)), *y = B_.CreateURem(env_dim(kCtaid, 1), cdim(1));
      Value* z = B_.CreateURem(env_dim(kCtaid, 2), cdim(2));
      return B_.CreateAdd(x, B_.CreateMul(cdim(0), B_.CreateAdd(y, B_.CreateMul(cdim(1), z))));
    }
    if (name == "%cluster_nctarank") return B_.CreateMul(cdim(0), B_.CreateMul(cdim(1), cdim(2)));
    if (name == "%is_explicit_cluster")
      return B_.CreateZExt(B_.CreateICmpNE(env_dim(kClusterDim, 0), B_.getInt32(0)), i32_);
    malformed(in, "unknown special register " + name);
  }

  // The address (i64) of a named symbol: a variable, a parameter or a function.
  Value* symbol_address(const std::string& name, const ptx::Instruction& in) {
    if (auto it = param_addr_.find(name); it != param_addr_.end()) return it->second;
    if (auto it = local_addr_.find(name); it != local_addr_.end()) return it->second;
    if (auto it = shared_offset_.find(name); it != shared_offset_.end()) return B_.getInt64(it->second);
    if (dynamic_shared_.count(name)) return B_.getInt64(dynamic_offset_);
    if (const ptx::Variable* g = P_.find_global(name)) {
      if (g->space == Space::Global || g->space == Space::Const) {
        Value* table = load_env(kGlobals, PointerType::getUnqual(i64_));
        return invariant(B_.CreateLoad(i64_, B_.CreateConstGEP1_32(i64_, table, global_slot(name))));
      }
      unsupported("uses " + name + ", a variable in an unsupported state space");
    }
    if (const ptx::Function* f = P_.find_function(name)) {
      const int64_t index = kernels::function_index(P_, name);
      if (index < 0) unsupported("takes the address of " + name + ", which no module loaded defines");
      declare(*f);
      return B_.getInt64(kernels::kFunctionTag + static_cast<uint64_t>(index));
    }
    if (name == "WARP_SZ") return B_.getInt64(32);
    malformed(in, "unknown symbol " + name);
  }

  // The value of operand `op` read as type `t`.
  Value* read(const Operand& op, PType t, const ptx::Instruction& in) override {
    Value* v = nullptr;
    switch (op.kind) {
      case Operand::Kind::Reg:
        if (op.name.size() > 1 && op.name[0] == '%' && !regs_.count(op.name)) {
          v = from_bits(to_bits(special(op.name, in), bits_of(t == PType::None ? PType::U32 : t), false), t);
        } else {
          Reg& r = reg(op.name, in);
          v = from_bits(B_.CreateLoad(IntegerType::get(C_, r.bits), r.slot), t);
        }
        break;
      case Operand::Kind::Imm:
        if (t == PType::Pred) {
          v = B_.getInt1(op.imm != 0);
        } else if (is_float(t)) {
          v = ConstantFP::get(value_type(t), static_cast<double>(op.imm));
        } else {
          v = ConstantInt::get(value_type(t), static_cast<uint64_t>(op.imm), is_signed(t));
        }
        break;
      case Operand::Kind::FImm: {
        double d;
        if (op.fdouble) {
          std::memcpy(&d, &op.fbits, 8);
        } else {
          float f;
          const uint32_t b = static_cast<uint32_t>(op.fbits);
          std::memcpy(&f, &b, 4);
          d = f;
        }
        if (is_float(t)) {
          v = ConstantFP::get(value_type(t), d);
        } else {  // raw bits into an integer-typed operation
          v = ConstantInt::get(value_type(t), op.fbits);
        }
        break;
      }
      case Operand::Kind::Symbol:
        v = symbol_address(op.name, in);
        if (op.imm) v = B_.CreateAdd(v, B_.getInt64(static_cast<uint64_t>(op.imm)));
        v = from_bits(v, t);
        break;
      case Operand::Kind::Vector: {  // packed into one wider value: {lo, hi}
        const unsigned part = bits_of(t) / static_cast<unsigned>(op.elems.size());
        Value* acc = ConstantInt::get(IntegerType::get(C_, bits_of(t)), 0);
        for (size_t i = 0; i < op.elems.size(); ++i) {
          Value* e = to_bits(read(op.elems[i], int_type(part), in), bits_of(t), false);
          acc = B_.CreateOr(acc, B_.CreateShl(e, static_cast<uint64_t>(i * part)));
        }
        v = from_bits(acc, t);
        break;
      }
      default: malformed(in, "an operand that is not a value");
    }
    if (op.negate) v = B_.CreateNot(v);
    return v;
  }

  static PType int_type(unsigned bits) {
    switch (bits) {
      case 1: return PType::Pred;
      case 8: return PType::B8;
      case 16: return PType::B16;
      case 32: return PType::B32;
      case 64: return PType::B64;
      default: return PType::B128;
    }
  }

  void write(const Operand& op, PType t, Value* v, const ptx::Instruction& in) override {
    if (op.kind == Operand::Kind::Sink) return;
    if (op.kind == Operand::Kind::Vector) {  // unpack: {lo, hi} = wide
      const unsigned total = v->getType()->isIntegerTy() ? v->getType()->getIntegerBitWidth()
                                                         : v->getType()->getPrimitiveSizeInBits();
      const unsigned part = total / static_cast<unsigned>(op.elems.size());
      Value* bits = to_bits(v, total, false);
      for (size_t i = 0; i < op.elems.size(); ++i) {
        Value* e = B_.CreateTrunc(B_.CreateLShr(bits, static_cast<uint64_t>(i * part)), IntegerType::get(C_, part));
        write(op.elems[i], int_type(part), e, in);
      }
      return;
    }
    if (op.kind != Operand::Kind::Reg) malformed(in, "the destination is not a register");
    Reg& r = reg(op.name, in);
    B_.CreateStore(to_bits(v, r.bits, is_signed(t)), r.slot);
  }

  // ---- memory -------------------------------------------------------------------------------
  Space space_of(const ptx::Instruction& in) {
    for (const std::string& m : in.mods) {
      if (m == "global") return Space::Global;
      if (m == "shared" || m == "shared::cta") return Space::Shared;
      if (m == "local") return Space::Local;
      if (m == "param") return Space::Param;
      if (m == "const") return Space::Const;
      if (m == "shared::cluster") unsupported("uses distributed shared memory (shared::cluster)");
    }
    return Space::Generic;
  }

  // The host address an access of `bytes` in `space` at `op` touches, checked: on a fault
  // the thread returns.
  Value* address(const Operand& op, Space space, uint64_t bytes, bool write, const ptx::Instruction& in) {
    return checked(raw_address(op, in), space, bytes, write);
  }

  // The address operand `op` as written (an offset for shared memory), unchecked.
  Value* raw_address(const Operand& op, const ptx::Instruction& in) {
    if (op.kind != Operand::Kind::Address) malformed(in, "expected an address [..]");
    Value* a;
    if (op.elems.empty()) {
      a = B_.getInt64(static_cast<uint64_t>(op.imm));
    } else {
      const Operand& base = op.elems[0];
      if (base.kind == Operand::Kind::Symbol ||
          (base.kind == Operand::Kind::Reg && !regs_.count(base.name) && base.name.size() > 0 && base.name[0] != '%')) {
        a = symbol_address(base.name, in);
      } else {
        a = read(base, PType::U64, in);  // a 32-bit register is zero-extended (shared offsets)
      }
      if (op.imm) a = B_.CreateAdd(a, B_.getInt64(static_cast<uint64_t>(op.imm)));
    }
    return a;
  }

  // The host address of an access of `bytes` in `space` at `a` (raw_address), checked.
  Value* checked(Value* a, Space space, uint64_t bytes, bool write) {
    if (space == Space::Shared) {
      // An offset into the block's shared memory.
      if (req_.check_memory) {
        Value* size = load_env(kSharedBytes, i64_);
        Value* bad = B_.CreateOr(B_.CreateICmpUGT(a, size),
                                 B_.CreateICmpUGT(B_.CreateAdd(a, B_.getInt64(bytes)), size));
        fault_if(bad, kernels::Fault::IllegalAddress, a);
        check_alignment(a, bytes);
      }
      return B_.CreateAdd(B_.CreatePtrToInt(load_env(kShared, i8p_), i64_), a);
    }
    if (space == Space::Local) {
      // A thread's local memory is its function's .local variables (nvcc's depot): an access
      // must lie inside one of them, as it must lie inside the thread's local window on a GPU.
      if (req_.check_memory) {
        Value* inside = B_.getFalse();
        Value* end = B_.CreateAdd(a, B_.getInt64(bytes));
        for (auto [base, size] : local_ranges_) {
          Value* in = B_.CreateAnd(B_.CreateICmpUGE(a, base),
                                   B_.CreateICmpULE(end, B_.CreateAdd(base, B_.getInt64(size))));
          inside = B_.CreateOr(inside, B_.CreateAnd(in, B_.CreateICmpUGE(end, a)));
        }
        fault_if(B_.CreateNot(inside), kernels::Fault::IllegalAddress, a);
        check_alignment(a, bytes);
      }
      return a;
    }
    if (space == Space::Param) return a;  // our own buffers
    if (req_.check_memory) {
      check_alignment(a, bytes);
      check_global(a, bytes, write);
    }
    return a;
  }

  void check_alignment(Value* a, uint64_t bytes) {
    if (bytes <= 1 || (bytes & (bytes - 1))) return;
    Value* bad = B_.CreateICmpNE(B_.CreateAnd(a, B_.getInt64(bytes - 1)), B_.getInt64(0));
    fault_if(bad, kernels::Fault::MisalignedAddress, a);
  }

  void fault_if(Value* bad, kernels::Fault f, Value* a) {
    BasicBlock* fail = BasicBlock::Create(C_, "fault", llfn_);
    BasicBlock* ok = BasicBlock::Create(C_, "ok", llfn_);
    B_.CreateCondBr(bad, fail, ok, weights(1, 1u << 20));
    B_.SetInsertPoint(fail);
    B_.CreateCall(runtime("fg_rt_fault", Type::getVoidTy(C_), {envp_, i32_, i64_}),
                  {env_, B_.getInt32(static_cast<uint32_t>(f)), a});
    abort_thread();
    B_.SetInsertPoint(ok);
  }

  // The block aborts (the runtime set BlockEnv::abort): this thread returns.
  void abort_thread() { B_.CreateBr(exit_)->setMetadata(kAbortEdge, MDNode::get(C_, {})); }

  // texture::Access: the block's environment, and stopping where a runtime call faulted.
  Value* env() override { return env_; }
  void stop_unless(Value* ok) override {
    BasicBlock* fail = BasicBlock::Create(C_, "faulted", llfn_);
    BasicBlock* cont = BasicBlock::Create(C_, "ok", llfn_);
    B_.CreateCondBr(ok, cont, fail, weights(1u << 20, 1));
    B_.SetInsertPoint(fail);
    abort_thread();
    B_.SetInsertPoint(cont);
  }

  // Branch weights (taken, not taken): checks' failure paths are cold.
  MDNode* weights(uint32_t taken, uint32_t not_taken) {
    return MDNode::get(C_, {MDString::get(C_, "branch_weights"), ConstantAsMetadata::get(B_.getInt32(taken)),
                            ConstantAsMetadata::get(B_.getInt32(not_taken))});
  }

  // A global or generic access: inside the range this site last hit (two compares), else
  // the executor looks the address up (and refills the site's range) or records the fault.
  void check_global(Value* a, uint64_t bytes, bool write) {
    const uint32_t site = sites_++;
    Value* cache = load_env(kSiteCache, PointerType::getUnqual(range_ty_));
    Value* entry = B_.CreateConstGEP1_32(range_ty_, cache, site);
    Value* lo = B_.CreateLoad(i64_, B_.CreateStructGEP(range_ty_, entry, 0));
    Value* hi = B_.CreateLoad(i64_, B_.CreateStructGEP(range_ty_, entry, 1));
    Value* end = B_.CreateAdd(a, B_.getInt64(bytes));
    Value* inside = B_.CreateAnd(B_.CreateICmpUGE(a, lo), B_.CreateICmpULE(end, hi));
    BasicBlock* slow = BasicBlock::Create(C_, "check", llfn_);
    BasicBlock* fail = BasicBlock::Create(C_, "illegal", llfn_);
    BasicBlock* ok = BasicBlock::Create(C_, "in", llfn_);
    B_.CreateCondBr(inside, ok, slow, weights(1u << 20, 1));
    B_.SetInsertPoint(slow);
    Value* r = B_.CreateCall(runtime("fg_rt_check", i32_, {envp_, i64_, i64_, i32_, i32_}),
                             {env_, a, B_.getInt64(bytes), B_.getInt32(site), B_.getInt32(write ? 1 : 0)});
    B_.CreateCondBr(B_.CreateICmpNE(r, B_.getInt32(0)), ok, fail);
    B_.SetInsertPoint(fail);
    abort_thread();
    B_.SetInsertPoint(ok);
  }

  Value* host_ptr(Value* a, Type* elem) { return B_.CreateIntToPtr(a, PointerType::getUnqual(elem)); }

  unsigned vector_of(const ptx::Instruction& in) {
    if (in.has_mod("v2")) return 2;
    if (in.has_mod("v4")) return 4;
    if (in.has_mod("v8")) return 8;
    return 1;
  }

  PType type0(const ptx::Instruction& in) {
    if (in.types.empty()) malformed(in, "no type");
    return in.types[0];
  }

  void ld(const ptx::Instruction& in) {
    const PType t = type0(in);
    const Space sp = space_of(in);
    const unsigned n = vector_of(in);
    const uint64_t size = ptx::type_size(t);
    Value* a = address(in.ops.at(1), sp, size * n, false, in);
    Type* ty = IntegerType::get(C_, static_cast<unsigned>(size * 8));
    const bool kernel_param = sp == Space::Param && fn_->entry && is_kernel_param(in.ops.at(1));
    auto load_one = [&](unsigned i) -> Value* {
      Value* p = host_ptr(B_.CreateAdd(a, B_.getInt64(i * size)), ty);
      LoadInst* l = B_.CreateLoad(ty, p);
      l->setAlignment(Align(size));
      if (kernel_param) invariant(l);
      if (in.has_mod("volatile") || in.has_mod("relaxed") || in.has_mod("acquire")) l->setVolatile(true);
      return from_bits(l, t);
    };
    if (n == 1) {
      write(in.ops.at(0), t, load_one(0), in);
    } else {
      const Operand& dst = in.ops.at(0);
      if (dst.kind != Operand::Kind::Vector || dst.elems.size() != n) malformed(in, "vector destination");
      for (unsigned i = 0; i < n; ++i) write(dst.elems[i], t, load_one(i), in);
    }
    if (yields_ && (sp == Space::Global || sp == Space::Generic) &&
        (in.has_mod("volatile") || in.has_mod("relaxed") || in.has_mod("acquire")))
      poll(a, kernels::PollKind::Load);
  }

  // Lets the block's other threads, and a cooperative grid's other blocks, run (fg_rt_poll):
  // after a read a spin loop may repeat until another block writes. Returns when the launch
  // stopped meanwhile.
  void poll(Value* addr, kernels::PollKind kind) {
    B_.CreateCall(runtime("fg_rt_poll", Type::getVoidTy(C_), {envp_, i64_, i32_}),
                  {env_, addr, B_.getInt32(static_cast<uint32_t>(kind))});
    BasicBlock* cont = BasicBlock::Create(C_, "polled", llfn_);
    B_.CreateCondBr(B_.CreateICmpNE(load_env(kAbort, i32_), B_.getInt32(0)), exit_, cont, weights(1, 1u << 20));
    B_.SetInsertPoint(cont);
  }

  // [param] or [param+8]: an address in the kernel's parameter block (not a call's buffers).
  bool is_kernel_param(const Operand& op) const {
    if (op.kind != Operand::Kind::Address || op.elems.empty() || regs_.count(op.elems[0].name)) return false;
    for (const ptx::Param& p : fn_->params)
      if (p.name == op.elems[0].name) return true;
    return false;
  }

  void st(const ptx::Instruction& in) {
    const PType t = type0(in);
    const Space sp = space_of(in);
    const unsigned n = vector_of(in);
    const uint64_t size = ptx::type_size(t);
    Value* a = address(in.ops.at(0), sp, size * n, true, in);
    Type* ty = IntegerType::get(C_, static_cast<unsigned>(size * 8));
    auto store_one = [&](unsigned i, const Operand& src) {
      Value* v = to_bits(read(src, t, in), static_cast<unsigned>(size * 8), false);
      StoreInst* s = B_.CreateStore(v, host_ptr(B_.CreateAdd(a, B_.getInt64(i * size)), ty));
      s->setAlignment(Align(size));
      if (in.has_mod("volatile") || in.has_mod("relaxed") || in.has_mod("release")) s->setVolatile(true);
    };
    if (n == 1) {
      store_one(0, in.ops.at(1));
      return;
    }
    const Operand& src = in.ops.at(1);
    if (src.kind != Operand::Kind::Vector || src.elems.size() != n) malformed(in, "vector source");
    for (unsigned i = 0; i < n; ++i) store_one(i, src.elems[i]);
  }

  // cp.async: the copy is made when it is issued, which is one of the orders a GPU may take
  // (it completes no later than the wait that covers it); commit_group, wait_group and
  // wait_all have nothing left to wait for.
  //   cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}
  // copies src-size bytes (cp-size when absent; none when the ignore-src predicate is true)
  // and fills the rest of cp-size with zeros.
  void async_copy(const ptx::Instruction& in) {
    if (!in.has_mod("async") || in.has_mod("bulk") || in.has_mod("mbarrier") || in.has_mod("reduce") ||
        in.has_mod("tensor"))
      unsupported("uses cp." + join_mods(in) + " (bulk and mbarrier-tracked copies)");
    if (in.has_mod("commit_group") || in.has_mod("wait_group") || in.has_mod("wait_all")) return;
    if (!in.has_mod("global") || !(in.has_mod("shared") || in.has_mod("shared::cta")))
      malformed(in, "cp.async copies from global to shared memory");
    const Operand& size_op = in.ops.at(2);
    if (size_op.kind != Operand::Kind::Imm || (size_op.imm != 4 && size_op.imm != 8 && size_op.imm != 16))
      malformed(in, "cp-size must be 4, 8 or 16");
    const uint64_t size = static_cast<uint64_t>(size_op.imm);
    Value* dst = address(in.ops.at(0), Space::Shared, size, true, in);
    Value* src = raw_address(in.ops.at(1), in);
    // How many bytes come from src: cp-size, or the src-size operand, or none when ignore-src.
    Value* n = B_.getInt64(size);
    if (in.ops.size() > 3 && in.ops[3].kind != Operand::Kind::Imm && regs_.count(in.ops[3].name) &&
        regs_.at(in.ops[3].name).bits == 1) {
      n = B_.CreateSelect(read(in.ops[3], PType::Pred, in), B_.getInt64(0), n);
    } else if (in.ops.size() > 3) {
      Value* given = B_.CreateZExt(read(in.ops[3], PType::U32, in), i64_);
      n = B_.CreateSelect(B_.CreateICmpULT(given, n), given, n);  // more than cp-size: cp-size
    }
    BasicBlock* whole = BasicBlock::Create(C_, "cp.whole", llfn_);
    BasicBlock* part = BasicBlock::Create(C_, "cp.part", llfn_);
    BasicBlock* done = BasicBlock::Create(C_, "cp.done", llfn_);
    B_.CreateCondBr(B_.CreateICmpEQ(n, B_.getInt64(size)), whole, part);
    B_.SetInsertPoint(whole);
    Value* from = checked(src, Space::Global, size, false);
    B_.CreateMemCpy(host_ptr(dst, i8_), Align(size), host_ptr(from, i8_), Align(size), size);
    B_.CreateBr(done);
    // Fewer bytes: only those are read (a copy at the end of an array reads no further).
    B_.SetInsertPoint(part);
    BasicBlock* some = BasicBlock::Create(C_, "cp.some", llfn_);
    BasicBlock* fill = BasicBlock::Create(C_, "cp.fill", llfn_);
    B_.CreateCondBr(B_.CreateICmpEQ(n, B_.getInt64(0)), fill, some);
    B_.SetInsertPoint(some);
    for (uint64_t k = 1; k < size; ++k) {  // byte k is read when n > k (byte 0: n > 0)
      if (k > 1) {
        BasicBlock* more = BasicBlock::Create(C_, "cp.byte", llfn_);
        B_.CreateCondBr(B_.CreateICmpUGT(n, B_.getInt64(k - 1)), more, fill);
        B_.SetInsertPoint(more);
      }
      Value* at = B_.CreateAdd(src, B_.getInt64(k - 1));
      Value* byte = B_.CreateLoad(i8_, host_ptr(checked(at, Space::Global, 1, false), i8_));
      B_.CreateStore(byte, host_ptr(B_.CreateAdd(dst, B_.getInt64(k - 1)), i8_));
    }
    B_.CreateBr(fill);
    B_.SetInsertPoint(fill);
    B_.CreateMemSet(host_ptr(B_.CreateAdd(dst, n), i8_), B_.getInt8(0), B_.CreateSub(B_.getInt64(size), n),
                    MaybeAlign(1));
    B_.CreateBr(done);
    B_.SetInsertPoint(done);
  }

  static std::string join_mods(const ptx::Instruction& in) {
    std::string s;
    for (const std::string& m : in.mods) s += (s.empty() ? "" : ".") + m;
    return s;
  }

  // ---- arithmetic ---------------------------------------------------------------------------
  Value* intrinsic(Intrinsic::ID id, std::vector<Value*> args) {
    return B_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }

  // Integer division and remainder as PTX defines them where x86 would trap: by zero the
  // quotient is all ones and the remainder the dividend; INT_MIN / -1 wraps.
  Value* safe_div(Value* a, Value* b, bool sign, bool rem) {
    Type* ty = a->getType();
    Value* zero = ConstantInt::get(ty, 0);
    Value* by_zero = B_.CreateICmpEQ(b, zero);
    Value* safe_b = B_.CreateSelect(by_zero, ConstantInt::get(ty, 1), b);
    if (sign) {
      const unsigned w = ty->getIntegerBitWidth();
      Value* overflow = B_.CreateAnd(B_.CreateICmpEQ(a, ConstantInt::get(ty, APInt::getSignedMinValue(w))),
                                     B_.CreateICmpEQ(safe_b, ConstantInt::getSigned(ty, -1)));
      safe_b = B_.CreateSelect(overflow, ConstantInt::get(ty, 1), safe_b);
      Value* q = rem ? B_.CreateSRem(a, safe_b) : B_.CreateSDiv(a, safe_b);
      q = B_.CreateSelect(overflow, rem ? zero : a, q);
      return B_.CreateSelect(by_zero, rem ? a : ConstantInt::getSigned(ty, -1), q);
    }
    Value* q = rem ? B_.CreateURem(a, safe_b) : B_.CreateUDiv(a, safe_b);
    return B_.CreateSelect(by_zero, rem ? a : ConstantInt::getSigned(ty, -1), q);
  }

  // Shifts saturate: by the width or more gives 0 (or the sign for shr.s).
  Value* shift(Value* a, Value* amount, bool left, bool sign) {
    Type* ty = a->getType();
    const unsigned w = ty->getIntegerBitWidth();
    Value* amt = B_.CreateZExtOrTrunc(amount, ty);
    if (amount->getType()->getIntegerBitWidth() > w) amt = B_.CreateTrunc(amount, ty);
    Value* wide = B_.CreateICmpUGE(B_.CreateZExt(amount, i64_), B_.getInt64(w));
    Value* clamped = B_.CreateSelect(wide, ConstantInt::get(ty, sign ? w - 1 : 0), amt);
    Value* r = left ? B_.CreateShl(a, clamped) : (sign ? B_.CreateAShr(a, clamped) : B_.CreateLShr(a, clamped));
    if (!sign) r = B_.CreateSelect(wide, ConstantInt::get(ty, 0), r);
    return r;
  }

  Value* mul_part(Value* a, Value* b, PType t, const ptx::Instruction& in, unsigned* out_bits) {
    const unsigned w = bits_of(t);
    const bool sign = is_signed(t);
    if (in.has_mod("wide")) {
      Type* wt = IntegerType::get(C_, 2 * w);
      *out_bits = 2 * w;
      return B_.CreateMul(sign ? B_.CreateSExt(a, wt) : B_.CreateZExt(a, wt),
                          sign ? B_.CreateSExt(b, wt) : B_.CreateZExt(b, wt));
    }
    *out_bits = w;
    if (in.has_mod("hi")) {
      Type* wt = IntegerType::get(C_, 2 * w);
      Value* p = B_.CreateMul(sign ? B_.CreateSExt(a, wt) : B_.CreateZExt(a, wt),
                              sign ? B_.CreateSExt(b, wt) : B_.CreateZExt(b, wt));
      return B_.CreateTrunc(B_.CreateLShr(p, w), a->getType());
    }
    return B_.CreateMul(a, b);  // .lo, or no modifier
  }

  PType wide_type(PType t) {
    switch (t) {
      case PType::S16: return PType::S32;
      case PType::S32: return PType::S64;
      case PType::U16: return PType::U32;
      case PType::U32: return PType::U64;
      default: return PType::B64;
    }
  }

  void arith(const ptx::Instruction& in) {
    const std::string& op = in.opcode;
    const PType t = type0(in);
    if (half::is_half(t))  // half.cpp lowers the rest (half::handles)
      unsupported(std::string("uses ") + op + "." + std::string(ptx::type_name(t)) + " (half precision)");
    const bool f = is_float(t);
    const bool sign = is_signed(t);
    auto a = [&] { return read(in.ops.at(1), t, in); };
    auto b = [&] { return read(in.ops.at(2), t, in); };
    if (f && (t == PType::F32 || t == PType::F64) && rounding(in) != kernels::Rounding::Nearest) return directed(in);
    Value* r = nullptr;
    if (!f && (in.has_mod("cc") || op == "addc" || op == "subc" || op == "madc")) return carry(in);
    if (op == "add" || op == "sub") {
      if (in.has_mod("sat") && !f) {  // add.sat.s32: clamped to the s32 range
        Value* x = a();
        Value* y = b();
        r = B_.CreateBinaryIntrinsic(op == "add" ? Intrinsic::sadd_sat : Intrinsic::ssub_sat, x, y);
        write(in.ops.at(0), t, r, in);
        return;
      }
      r = f ? (op == "add" ? B_.CreateFAdd(a(), b()) : B_.CreateFSub(a(), b()))
            : (op == "add" ? B_.CreateAdd(a(), b()) : B_.CreateSub(a(), b()));
      if (f && in.has_mod("sat")) r = saturate(r);
    } else if (op == "mul") {
      if (f) {
        r = B_.CreateFMul(a(), b());
        if (in.has_mod("sat")) r = saturate(r);
      } else {
        unsigned bits = 0;
        r = mul_part(a(), b(), t, in, &bits);
        write(in.ops.at(0), bits == bits_of(t) ? t : wide_type(t), r, in);
        return;
      }
    } else if (op == "mad" || op == "fma") {
      if (f) {
        r = intrinsic(Intrinsic::fma, {a(), b(), read(in.ops.at(3), t, in)});
        if (in.has_mod("sat")) r = saturate(r);
      } else {
        unsigned bits = 0;
        Value* p = mul_part(a(), b(), t, in, &bits);
        const PType rt = bits == bits_of(t) ? t : wide_type(t);
        r = B_.CreateAdd(p, read(in.ops.at(3), rt, in));
        write(in.ops.at(0), rt, r, in);
        return;
      }
    } else if (op == "div") {
      r = f ? B_.CreateFDiv(a(), b()) : safe_div(a(), b(), sign, false);
    } else if (op == "rem") {
      r = safe_div(a(), b(), sign, true);
    } else if (op == "min" || op == "max") {
      if (f) {
        r = intrinsic(op == "min" ? Intrinsic::minnum : Intrinsic::maxnum, {a(), b()});
      } else {
        Value* x = a();
        Value* y = b();
        Value* lt = sign ? B_.CreateICmpSLT(x, y) : B_.CreateICmpULT(x, y);
        r = op == "min" ? B_.CreateSelect(lt, x, y) : B_.CreateSelect(lt, y, x);
      }
    } else if (op == "neg") {
      r = f ? B_.CreateFNeg(a()) : B_.CreateNeg(a());
    } else if (op == "abs") {
      if (f) {
        r = intrinsic(Intrinsic::fabs, {a()});
      } else {
        Value* x = a();
        r = B_.CreateSelect(B_.CreateICmpSLT(x, ConstantInt::get(x->getType(), 0)), B_.CreateNeg(x), x);
      }
    } else if (op == "and" || op == "or" || op == "xor") {
      Value* x = a();
      Value* y = b();
      r = op == "and" ? B_.CreateAnd(x, y) : op == "or" ? B_.CreateOr(x, y) : B_.CreateXor(x, y);
    } else if (op == "not") {
      r = B_.CreateNot(a());
    } else if (op == "cnot") {
      Value* x = a();
      r = B_.CreateZExt(B_.CreateICmpEQ(x, ConstantInt::get(x->getType(), 0)), x->getType());
    } else if (op == "shl" || op == "shr") {
      r = shift(a(), read(in.ops.at(2), PType::U32, in), op == "shl", op == "shr" && sign);
    } else if (op == "rcp") {
      r = B_.CreateFDiv(ConstantFP::get(value_type(t), 1.0), a());
    } else if (op == "sqrt") {
      r = intrinsic(Intrinsic::sqrt, {a()});
    } else if (op == "rsqrt") {
      r = B_.CreateFDiv(ConstantFP::get(value_type(t), 1.0), intrinsic(Intrinsic::sqrt, {a()}));
    } else if (op == "ex2") {
      r = intrinsic(Intrinsic::exp2, {a()});
    } else if (op == "lg2") {
      r = intrinsic(Intrinsic::log2, {a()});
    } else if (op == "sin") {
      r = intrinsic(Intrinsic::sin, {a()});
    } else if (op == "cos") {
      r = intrinsic(Intrinsic::cos, {a()});
    } else if (op == "tanh" && t == PType::F32) {  // tanh.approx.f32: libm's, from the process
      r = B_.CreateCall(M_->getOrInsertFunction("tanhf", FunctionType::get(f32_, {f32_}, false)), {a()});
    } else if (op == "copysign") {
      r = intrinsic(Intrinsic::copysign, {b(), a()});  // copysign.f32 d, a, b: |b| with a's sign
    } else if (op == "popc" || op == "clz") {
      Value* x = a();
      r = op == "popc" ? intrinsic(Intrinsic::ctpop, {x})
                       : B_.CreateIntrinsic(Intrinsic::ctlz, {x->getType()}, {x, B_.getFalse()});
      write(in.ops.at(0), PType::U32, B_.CreateZExtOrTrunc(r, i32_), in);
      return;
    } else if (op == "brev") {
      r = intrinsic(Intrinsic::bitreverse, {a()});
    } else if (op == "sad") {  // c + |a - b|
      Value* x = a();
      Value* y = b();
      Value* lt = sign ? B_.CreateICmpSLT(x, y) : B_.CreateICmpULT(x, y);
      r = B_.CreateAdd(read(in.ops.at(3), t, in), B_.CreateSelect(lt, B_.CreateSub(y, x), B_.CreateSub(x, y)));
    } else if (op == "dp4a" || op == "dp2a") {
      // dp4a.atype.btype d, a, b, c: c + the products of a's and b's bytes (dp2a: a's
      // halves with two of b's bytes, .lo or .hi).
      if (in.types.size() != 2) malformed(in, "dp4a needs two types");
      const bool sa = is_signed(in.types[0]), sb = is_signed(in.types[1]);
      Value* x = read(in.ops.at(1), PType::B32, in);
      Value* y = read(in.ops.at(2), PType::B32, in);
      Value* acc = read(in.ops.at(3), PType::B32, in);
      const bool four = op == "dp4a";
      const unsigned base = !four && in.has_mod("hi") ? 2 : 0;
      for (unsigned i = 0; i < (four ? 4u : 2u); ++i) {
        Value* ea = four ? B_.CreateTrunc(B_.CreateLShr(x, 8 * i), i8_)
                         : B_.CreateTrunc(B_.CreateLShr(x, 16 * i), i16_);
        Value* eb = B_.CreateTrunc(B_.CreateLShr(y, 8 * (base + i)), i8_);
        Value* pa = sa ? B_.CreateSExt(ea, i32_) : B_.CreateZExt(ea, i32_);
        Value* pb = sb ? B_.CreateSExt(eb, i32_) : B_.CreateZExt(eb, i32_);
        acc = B_.CreateAdd(acc, B_.CreateMul(pa, pb));
      }
      write(in.ops.at(0), PType::B32, acc, in);
      return;
    } else if (op == "shf") {
      // shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the 64-bit {b, a} shifted by c, one half kept.
      Value* lo = read(in.ops.at(1), PType::B32, in);
      Value* hi = read(in.ops.at(2), PType::B32, in);
      Value* n = read(in.ops.at(3), PType::U32, in);
      const bool left = in.has_mod("l");
      if (in.has_mod("clamp")) {
        Value* big = B_.CreateICmpUGE(n, B_.getInt32(32));
        Value* fs = B_.CreateIntrinsic(left ? Intrinsic::fshl : Intrinsic::fshr, {i32_}, {hi, lo, n});
        r = B_.CreateSelect(big, left ? lo : hi, fs);
      } else {
        r = B_.CreateIntrinsic(left ? Intrinsic::fshl : Intrinsic::fshr, {i32_}, {hi, lo, n});
      }
      write(in.ops.at(0), PType::B32, r, in);
      return;
    } else {
      unsupported("uses " + op);
    }
    write(in.ops.at(0), t, r, in);
  }

  // Extended-precision arithmetic through the condition code's carry flag (CC.CF), one per
  // function: add.cc/addc, sub.cc/subc (a borrow), mad.cc/madc (.lo or .hi of the product).
  void carry(const ptx::Instruction& in) {
    const std::string& op = in.opcode;
    const PType t = type0(in);
    Type* ty = value_type(t);
    if (!carry_) {
      IRBuilder<> eb(&llfn_->getEntryBlock(), llfn_->getEntryBlock().begin());
      carry_ = eb.CreateAlloca(i1_, nullptr, "cc.cf");
      eb.CreateStore(eb.getFalse(), carry_);
    }
    const bool use_in = op == "addc" || op == "subc" || op == "madc";
    const bool set_out = in.has_mod("cc");
    Value* cf = B_.CreateZExt(B_.CreateLoad(i1_, carry_), ty);
    Value* a = read(in.ops.at(1), t, in);
    Value* b = read(in.ops.at(2), t, in);
    Value* r = nullptr;
    Value* out = nullptr;
    auto add = [&](Value* x, Value* y) {  // x + y (+ cf), with the carry out
      Value* s1 = B_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, x, y);
      Value* v = B_.CreateExtractValue(s1, 0);
      Value* c = B_.CreateExtractValue(s1, 1);
      if (use_in) {
        Value* s2 = B_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, v, cf);
        v = B_.CreateExtractValue(s2, 0);
        c = B_.CreateOr(c, B_.CreateExtractValue(s2, 1));
      }
      out = c;
      return v;
    };
    if (op == "add" || op == "addc") {
      r = add(a, b);
    } else if (op == "sub" || op == "subc") {
      Value* s1 = B_.CreateBinaryIntrinsic(Intrinsic::usub_with_overflow, a, b);
      Value* v = B_.CreateExtractValue(s1, 0);
      Value* c = B_.CreateExtractValue(s1, 1);
      if (use_in) {
        Value* s2 = B_.CreateBinaryIntrinsic(Intrinsic::usub_with_overflow, v, cf);
        v = B_.CreateExtractValue(s2, 0);
        c = B_.CreateOr(c, B_.CreateExtractValue(s2, 1));
      }
      r = v;
      out = c;
    } else {  // mad / madc: .lo or .hi of a * b, plus c
      unsigned bits = 0;
      Value* p = mul_part(a, b, t, in, &bits);
      r = add(p, read(in.ops.at(3), t, in));
    }
    if (set_out) B_.CreateStore(out, carry_);
    write(in.ops.at(0), t, r, in);
  }

  static kernels::Rounding rounding(const ptx::Instruction& in) {
    if (in.has_mod("rz")) return kernels::Rounding::Zero;
    if (in.has_mod("rm")) return kernels::Rounding::Down;
    if (in.has_mod("rp")) return kernels::Rounding::Up;
    return kernels::Rounding::Nearest;
  }

  // add/sub/mul/div/sqrt/fma/rcp with .rz/.rm/.rp: one call into the runtime, which sets the
  // host's rounding mode around the operation.
  void directed(const ptx::Instruction& in) {
    const std::string& op = in.opcode;
    const PType t = type0(in);
    using kernels::RoundedOp;
    RoundedOp ro;
    int args = 2;
    if (op == "add") {
      ro = RoundedOp::Add;
    } else if (op == "sub") {
      ro = RoundedOp::Sub;
    } else if (op == "mul") {
      ro = RoundedOp::Mul;
    } else if (op == "div") {
      ro = RoundedOp::Div;
    } else if (op == "sqrt") {
      ro = RoundedOp::Sqrt, args = 1;
    } else if (op == "rcp") {
      ro = RoundedOp::Rcp, args = 1;
    } else if (op == "fma" || op == "mad") {
      ro = RoundedOp::Fma, args = 3;
    } else {
      unsupported("uses " + op + " with a directed rounding modifier");
    }
    Type* ty = value_type(t);
    Value* zero = ConstantFP::get(ty, 0.0);
    Value* x = read(in.ops.at(1), t, in);
    Value* y = args > 1 ? read(in.ops.at(2), t, in) : zero;
    Value* z = args > 2 ? read(in.ops.at(3), t, in) : zero;
    const char* name = t == PType::F32 ? "fg_rt_f32" : "fg_rt_f64";
    Value* r = B_.CreateCall(
        runtime(name, ty, {i32_, i32_, ty, ty, ty}),
        {B_.getInt32(static_cast<uint32_t>(ro)), B_.getInt32(static_cast<uint32_t>(rounding(in))), x, y, z});
    if (in.has_mod("sat")) r = saturate(r);
    write(in.ops.at(0), t, r, in);
  }

  Value* saturate(Value* v) {
    // Clamp to [0, 1]; NaN becomes 0.
    Type* ty = v->getType();
    Value* lo = intrinsic(Intrinsic::maxnum, {v, ConstantFP::get(ty, 0.0)});
    return intrinsic(Intrinsic::minnum, {lo, ConstantFP::get(ty, 1.0)});
  }

  Value* compare(const std::string& cmp, Value* a, Value* b, PType t, const ptx::Instruction& in) {
    if (is_float(t)) {
      static const std::map<std::string, CmpInst::Predicate> fp = {
          {"eq", CmpInst::FCMP_OEQ},  {"ne", CmpInst::FCMP_ONE},  {"lt", CmpInst::FCMP_OLT},
          {"le", CmpInst::FCMP_OLE},  {"gt", CmpInst::FCMP_OGT},  {"ge", CmpInst::FCMP_OGE},
          {"equ", CmpInst::FCMP_UEQ}, {"neu", CmpInst::FCMP_UNE}, {"ltu", CmpInst::FCMP_ULT},
          {"leu", CmpInst::FCMP_ULE}, {"gtu", CmpInst::FCMP_UGT}, {"geu", CmpInst::FCMP_UGE},
          {"num", CmpInst::FCMP_ORD}, {"nan", CmpInst::FCMP_UNO}};
      auto it = fp.find(cmp);
      if (it == fp.end()) malformed(in, "unknown comparison " + cmp);
      return B_.CreateFCmp(it->second, a, b);
    }
    const bool sign = is_signed(t);
    static const std::map<std::string, std::pair<CmpInst::Predicate, CmpInst::Predicate>> ip = {
        {"eq", {CmpInst::ICMP_EQ, CmpInst::ICMP_EQ}},   {"ne", {CmpInst::ICMP_NE, CmpInst::ICMP_NE}},
        {"lt", {CmpInst::ICMP_SLT, CmpInst::ICMP_ULT}}, {"le", {CmpInst::ICMP_SLE, CmpInst::ICMP_ULE}},
        {"gt", {CmpInst::ICMP_SGT, CmpInst::ICMP_UGT}}, {"ge", {CmpInst::ICMP_SGE, CmpInst::ICMP_UGE}},
        {"lo", {CmpInst::ICMP_ULT, CmpInst::ICMP_ULT}}, {"ls", {CmpInst::ICMP_ULE, CmpInst::ICMP_ULE}},
        {"hi", {CmpInst::ICMP_UGT, CmpInst::ICMP_UGT}}, {"hs", {CmpInst::ICMP_UGE, CmpInst::ICMP_UGE}}};
    auto it = ip.find(cmp);
    if (it == ip.end()) malformed(in, "unknown comparison " + cmp);
    return B_.CreateICmp(sign ? it->second.first : it->second.second, a, b);
  }

  void setp(const ptx::Instruction& in) {
    const PType t = type0(in);
    if (in.mods.empty()) malformed(in, "no comparison");
    const std::string& cmp = in.mods[0];
    Value* c = compare(cmp, read(in.ops.at(1), t, in), read(in.ops.at(2), t, in), t, in);
    const Operand& d = in.ops.at(0);
    Value* nc = B_.CreateNot(c);
    if (in.mods.size() > 1) {  // setp.cmp.bop: p = cmp BOP c, q = !cmp BOP c
      const std::string& bop = in.mods[1];
      Value* x = read(in.ops.at(3), PType::Pred, in);
      auto combine = [&](Value* v) {
        return bop == "and" ? B_.CreateAnd(v, x) : bop == "or" ? B_.CreateOr(v, x) : B_.CreateXor(v, x);
      };
      c = combine(c);
      nc = combine(nc);
    }
    if (d.kind == Operand::Kind::Pair) {
      write(d.elems.at(0), PType::Pred, c, in);
      write(d.elems.at(1), PType::Pred, nc, in);
    } else {
      write(d, PType::Pred, c, in);
    }
  }

  // set.cmp{.bop}.dtype.stype d, a, b{, {!}c}: all ones (integer dtype) or 1.0f when true,
  // else 0 (half sources: half.cpp).
  void set(const ptx::Instruction& in) {
    if (in.types.size() != 2 || in.mods.empty())
      malformed(in, "set needs a comparison, a destination and a source type");
    const PType dt = in.types[0], st = in.types[1];
    Value* c = compare(in.mods[0], read(in.ops.at(1), st, in), read(in.ops.at(2), st, in), st, in);
    if (in.has_mod("and") || in.has_mod("or") || in.has_mod("xor")) {
      Value* x = read(in.ops.at(3), PType::Pred, in);
      c = in.has_mod("and") ? B_.CreateAnd(c, x) : in.has_mod("or") ? B_.CreateOr(c, x) : B_.CreateXor(c, x);
    }
    Type* ty = value_type(dt);
    Value* yes = dt == PType::F32 ? ConstantFP::get(ty, 1.0) : Constant::getAllOnesValue(ty);
    write(in.ops.at(0), dt, B_.CreateSelect(c, yes, Constant::getNullValue(ty)), in);
  }

  void selp(const ptx::Instruction& in) {
    const PType t = type0(in);
    Value* c = read(in.ops.at(3), PType::Pred, in);
    write(in.ops.at(0), t, B_.CreateSelect(c, read(in.ops.at(1), t, in), read(in.ops.at(2), t, in)), in);
  }

  // cvt.{rna,rn,rz}{.satfinite}.tf32.f32: the float rounded to tf32's 10 mantissa bits, in a
  // 32-bit register whose low 13 bits are zero (ties away from zero, to even, or toward zero);
  // a NaN becomes the canonical one, and .satfinite turns an infinity into the largest finite.
  void cvt_tf32(const ptx::Instruction& in) {
    Value* u = B_.CreateBitCast(read(in.ops.at(1), PType::F32, in), i32_);
    Value* r;
    if (in.has_mod("rz")) {
      r = u;
    } else if (in.has_mod("rn")) {
      r = B_.CreateAdd(u, B_.CreateAdd(B_.getInt32(0x0fff), B_.CreateAnd(B_.CreateLShr(u, 13), 1)));
    } else {
      r = B_.CreateAdd(u, B_.getInt32(0x1000));
    }
    r = B_.CreateAnd(r, B_.getInt32(~0x1fffu));
    if (in.has_mod("satfinite")) {
      Value* inf = B_.CreateICmpEQ(B_.CreateAnd(r, 0x7fffffffu), B_.getInt32(0x7f800000u));
      r = B_.CreateSelect(inf, B_.CreateOr(B_.CreateAnd(r, 0x80000000u), B_.getInt32(0x7f7fe000u)), r);
    }
    Value* nan = B_.CreateICmpUGT(B_.CreateAnd(u, 0x7fffffffu), B_.getInt32(0x7f800000u));
    write(in.ops.at(0), PType::B32, B_.CreateSelect(nan, B_.getInt32(0x7fffffffu), r), in);
  }

  void cvt(const ptx::Instruction& in) {
    if (in.types.size() != 2) malformed(in, "cvt needs a destination and a source type");
    const PType dt = in.types[0], st = in.types[1];
    if (half::is_half(dt) || half::is_half(st)) return half::cvt(B_, *this, in);
    if (dt == PType::TF32 && st == PType::F32) return cvt_tf32(in);
    if (dt == PType::TF32 || st == PType::TF32)
      unsupported("uses cvt." + std::string(ptx::type_name(dt)) + "." + std::string(ptx::type_name(st)));
    Value* v = read(in.ops.at(1), st, in);
    Value* r = nullptr;
    const bool sat = in.has_mod("sat");
    const kernels::Rounding mode = rounding(in);
    if (mode != kernels::Rounding::Nearest && (dt == PType::F32 || dt == PType::F64) &&
        (st == PType::F64 || (!is_float(st) && bits_of(st) >= 32))) {
      using kernels::Source;
      const Source from = st == PType::F64    ? Source::F64
                          : bits_of(st) == 32 ? (is_signed(st) ? Source::S32 : Source::U32)
                                              : (is_signed(st) ? Source::S64 : Source::U64);
      Value* bitsv = B_.CreateZExt(to_bits(v, bits_of(st), false), i64_);
      Value* rr = B_.CreateCall(
          runtime(dt == PType::F32 ? "fg_rt_cvt_f32" : "fg_rt_cvt_f64", value_type(dt), {i32_, i32_, i64_}),
          {B_.getInt32(static_cast<uint32_t>(mode)), B_.getInt32(static_cast<uint32_t>(from)), bitsv});
      if (sat) rr = saturate(rr);
      write(in.ops.at(0), dt, rr, in);
      return;
    }
    if (is_float(dt) && is_float(st)) {
      Type* to = value_type(dt);
      if (bits_of(dt) > bits_of(st)) {
        r = B_.CreateFPExt(v, to);
      } else if (bits_of(dt) < bits_of(st)) {
        r = B_.CreateFPTrunc(v, to);
      } else {
        r = half::round_integral(B_, v, in);
      }
      if (sat) r = saturate(r);
    } else if (is_float(dt)) {  // integer → float
      r = is_signed(st) ? B_.CreateSIToFP(v, value_type(dt)) : B_.CreateUIToFP(v, value_type(dt));
      if (sat) r = saturate(r);
    } else if (is_float(st)) {  // float → integer: rounded, saturating, NaN by PTX's rule
      r = half::float_to_int(B_, half::round_integral(B_, v, in), cast<IntegerType>(value_type(dt)), is_signed(dt),
                             st == PType::F64 || bits_of(dt) == 64);
    } else {  // integer → integer
      const unsigned db = bits_of(dt), sb = bits_of(st);
      if (sat && (is_signed(dt) != is_signed(st) || db < sb)) {
        r = int_saturate(v, st, dt);
      } else if (db < sb) {
        r = B_.CreateTrunc(v, value_type(dt));
      } else {
        r = is_signed(st) ? B_.CreateSExtOrTrunc(v, value_type(dt)) : B_.CreateZExtOrTrunc(v, value_type(dt));
      }
    }
    write(in.ops.at(0), dt, r, in);
  }

  Value* int_saturate(Value* v, PType st, PType dt) {
    // Clamp v (of type st) to dt's range, computed in 64+1 bits.
    Type* w = IntegerType::get(C_, 65);
    Value* x = is_signed(st) ? B_.CreateSExt(v, w) : B_.CreateZExt(v, w);
    const unsigned db = bits_of(dt);
    APInt lo = is_signed(dt) ? APInt::getSignedMinValue(db).sext(65) : APInt(65, 0);
    APInt hi = is_signed(dt) ? APInt::getSignedMaxValue(db).sext(65) : APInt::getMaxValue(db).zext(65);
    Value* lov = ConstantInt::get(w, lo);
    Value* hiv = ConstantInt::get(w, hi);
    x = B_.CreateSelect(B_.CreateICmpSLT(x, lov), lov, x);
    x = B_.CreateSelect(B_.CreateICmpSGT(x, hiv), hiv, x);
    return B_.CreateTrunc(x, value_type(dt));
  }

  void cvta(const ptx::Instruction& in) {
    const PType t = type0(in);
    Value* a = read(in.ops.at(1), PType::U64, in);
    const bool to = in.has_mod("to");
    Value* r = a;
    if (in.has_mod("shared")) {
      Value* base = B_.CreatePtrToInt(load_env(kShared, i8p_), i64_);
      r = to ? B_.CreateSub(a, base) : B_.CreateAdd(a, base);
    }
    // global, local, const, param: generic addresses are host addresses already.
    write(in.ops.at(0), t, B_.CreateZExtOrTrunc(r, value_type(t)), in);
  }

  void mov(const ptx::Instruction& in) {
    const PType t = type0(in);
    write(in.ops.at(0), t, read(in.ops.at(1), t, in), in);
  }

  // bfe / bfi / prmt / bfind: the bit-field helpers.
  void bits(const ptx::Instruction& in) {
    const PType t = type0(in);
    const std::string& op = in.opcode;
    const unsigned w = bits_of(t);
    Type* ty = value_type(t);
    if (op == "bfe") {
      Value* a = read(in.ops.at(1), t, in);
      Value* pos = B_.CreateZExt(B_.CreateAnd(read(in.ops.at(2), PType::U32, in), 0xff), i64_);
      Value* len = B_.CreateZExt(B_.CreateAnd(read(in.ops.at(3), PType::U32, in), 0xff), i64_);
      // Computed in 128 bits so that pos + len up to 510 never over-shifts.
      Type* w128 = IntegerType::get(C_, 128);
      Value* a128 = is_signed(t) ? B_.CreateSExt(a, w128) : B_.CreateZExt(a, w128);
      Value* shifted = B_.CreateLShr(
          a128, B_.CreateZExt(B_.CreateSelect(B_.CreateICmpUGT(pos, B_.getInt64(w)), B_.getInt64(w), pos), w128));
      Value* clen = B_.CreateSelect(B_.CreateICmpUGT(len, B_.getInt64(w)), B_.getInt64(w), len);
      Value* mask = B_.CreateSub(B_.CreateShl(ConstantInt::get(w128, 1), B_.CreateZExt(clen, w128)),
                                 ConstantInt::get(w128, 1));
      Value* field = B_.CreateAnd(shifted, mask);
      if (is_signed(t)) {  // sign-extend from bit len-1 (or the sign bit when past the end)
        Value* sbit_pos = B_.CreateSelect(B_.CreateICmpUGE(B_.CreateAdd(pos, clen), B_.getInt64(w)), B_.getInt64(w - 1),
                                          B_.CreateSub(B_.CreateAdd(pos, clen), B_.getInt64(1)));
        Value* sbit = B_.CreateAnd(B_.CreateLShr(a128, B_.CreateZExt(sbit_pos, w128)), ConstantInt::get(w128, 1));
        Value* ext = B_.CreateSelect(B_.CreateICmpNE(sbit, ConstantInt::get(w128, 0)),
                                     B_.CreateOr(field, B_.CreateNot(mask)), field);
        field = B_.CreateSelect(B_.CreateICmpEQ(clen, B_.getInt64(0)), ConstantInt::get(w128, 0), ext);
      }
      write(in.ops.at(0), t, B_.CreateTrunc(field, ty), in);
    } else if (op == "bfi") {
      Value* a = read(in.ops.at(1), t, in);
      Value* b = read(in.ops.at(2), t, in);
      Value* pos = B_.CreateZExt(B_.CreateAnd(read(in.ops.at(3), PType::U32, in), 0xff), i64_);
      Value* len = B_.CreateZExt(B_.CreateAnd(read(in.ops.at(4), PType::U32, in), 0xff), i64_);
      Type* w128 = IntegerType::get(C_, 128);
      Value* clen = B_.CreateSelect(B_.CreateICmpUGT(len, B_.getInt64(w)), B_.getInt64(w), len);
      Value* cpos = B_.CreateSelect(B_.CreateICmpUGT(pos, B_.getInt64(w)), B_.getInt64(w), pos);
      Value* mask = B_.CreateShl(
          B_.CreateSub(B_.CreateShl(ConstantInt::get(w128, 1), B_.CreateZExt(clen, w128)), ConstantInt::get(w128, 1)),
          B_.CreateZExt(cpos, w128));
      Value* ins = B_.CreateAnd(B_.CreateShl(B_.CreateZExt(a, w128), B_.CreateZExt(cpos, w128)), mask);
      Value* r = B_.CreateOr(B_.CreateAnd(B_.CreateZExt(b, w128), B_.CreateNot(mask)), ins);
      write(in.ops.at(0), t, B_.CreateTrunc(r, ty), in);
    } else if (op == "bfind") {
      Value* a = read(in.ops.at(1), t, in);
      Value* x = is_signed(t) ? B_.CreateSelect(B_.CreateICmpSLT(a, ConstantInt::get(ty, 0)), B_.CreateNot(a), a) : a;
      Value* lz = B_.CreateIntrinsic(Intrinsic::ctlz, {ty}, {x, B_.getFalse()});
      Value* r = B_.CreateSub(ConstantInt::get(ty, w - 1), lz);
      r = B_.CreateSelect(B_.CreateICmpEQ(x, ConstantInt::get(ty, 0)), ConstantInt::getSigned(ty, -1), r);
      if (in.has_mod("shiftamt"))
        r = B_.CreateSelect(B_.CreateICmpEQ(x, ConstantInt::get(ty, 0)), r,
                            B_.CreateSub(ConstantInt::get(ty, w - 1), r));
      write(in.ops.at(0), PType::U32, B_.CreateZExtOrTrunc(r, i32_), in);
    } else if (op == "prmt") {
      if (in.mods.size() > 0) unsupported("uses prmt." + in.mods[0]);
      Value* a = read(in.ops.at(1), PType::B32, in);
      Value* b = read(in.ops.at(2), PType::B32, in);
      Value* c = read(in.ops.at(3), PType::B32, in);
      Value* src = B_.CreateOr(B_.CreateZExt(a, i64_), B_.CreateShl(B_.CreateZExt(b, i64_), 32));
      Value* r = B_.getInt32(0);
      for (unsigned i = 0; i < 4; ++i) {
        Value* sel = B_.CreateAnd(B_.CreateLShr(c, 4 * i), 0xf);
        Value* idx = B_.CreateZExt(B_.CreateAnd(sel, 7), i64_);
        Value* byte = B_.CreateTrunc(B_.CreateLShr(src, B_.CreateMul(idx, B_.getInt64(8))), i8_);
        Value* msb = B_.CreateICmpNE(B_.CreateAnd(sel, 8), B_.getInt32(0));
        Value* fill = B_.CreateSelect(B_.CreateICmpSLT(byte, B_.getInt8(0)), B_.getInt8(0xff), B_.getInt8(0));
        byte = B_.CreateSelect(msb, fill, byte);
        r = B_.CreateOr(r, B_.CreateShl(B_.CreateZExt(byte, i32_), 8 * i));
      }
      write(in.ops.at(0), PType::B32, r, in);
    }
  }

  // ---- atomics ------------------------------------------------------------------------------
  void atom(const ptx::Instruction& in, bool reduction) {
    const PType t = type0(in);
    const Space sp = space_of(in);
    const uint64_t size = ptx::type_size(t);
    const size_t addr_op = reduction ? 0 : 1;
    Value* a = address(in.ops.at(addr_op), sp, size, true, in);
    Type* ty = value_type(t);
    Value* p = host_ptr(a, ty);
    Value* b = read(in.ops.at(addr_op + 1), t, in);
    static const char* kOps[] = {"add", "exch", "cas", "and", "or", "xor", "min", "max", "inc", "dec"};
    std::string op;
    for (const std::string& m : in.mods)
      for (const char* k : kOps)
        if (m == k) op = k;
    if (op.empty()) malformed(in, "no atomic operation");
    const auto order = AtomicOrdering::SequentiallyConsistent;
    Value* old = nullptr;
    if (op == "cas") {
      Value* c = read(in.ops.at(addr_op + 2), t, in);
      Type* it = IntegerType::get(C_, static_cast<unsigned>(size * 8));
      Value* pi = host_ptr(a, it);
      auto* x = B_.CreateAtomicCmpXchg(pi, to_bits(b, it->getIntegerBitWidth(), false),
                                       to_bits(c, it->getIntegerBitWidth(), false), MaybeAlign(size), order, order);
      old = from_bits(B_.CreateExtractValue(x, 0), t);
    } else if (op == "inc" || op == "dec") {
      // inc: old >= b ? 0 : old + 1; dec: (old == 0 || old > b) ? b : old - 1.
      old = cas_loop(p, ty, size, [&](Value* cur) {
        return op == "inc" ? B_.CreateSelect(B_.CreateICmpUGE(cur, b), ConstantInt::get(ty, 0),
                                             B_.CreateAdd(cur, ConstantInt::get(ty, 1)))
                           : B_.CreateSelect(
                                 B_.CreateOr(B_.CreateICmpEQ(cur, ConstantInt::get(ty, 0)), B_.CreateICmpUGT(cur, b)),
                                 b, B_.CreateSub(cur, ConstantInt::get(ty, 1)));
      });
    } else if (op == "add" && half::is_half(t)) {  // atom.add.noftz.{f16,bf16}{,x2}: half.cpp's add
      Type* it = IntegerType::get(C_, static_cast<unsigned>(size * 8));
      Value* y = to_bits(b, it->getIntegerBitWidth(), false);
      old = cas_loop(host_ptr(a, it), it, size, [&](Value* cur) { return half::add(B_, cur, y, t); });
    } else {
      AtomicRMWInst::BinOp k;
      const bool f = is_float(t);
      if (op == "add") {
        k = f ? AtomicRMWInst::FAdd : AtomicRMWInst::Add;
      } else if (op == "exch") {
        k = AtomicRMWInst::Xchg;
      } else if (op == "and") {
        k = AtomicRMWInst::And;
      } else if (op == "or") {
        k = AtomicRMWInst::Or;
      } else if (op == "xor") {
        k = AtomicRMWInst::Xor;
      } else if (f) {
        unsupported("uses atom." + op + " on floating point");
      } else if (op == "min") {
        k = is_signed(t) ? AtomicRMWInst::Min : AtomicRMWInst::UMin;
      } else {
        k = is_signed(t) ? AtomicRMWInst::Max : AtomicRMWInst::UMax;
      }
      if (k == AtomicRMWInst::Xchg && f) {
        Type* it = IntegerType::get(C_, static_cast<unsigned>(size * 8));
        old = from_bits(B_.CreateAtomicRMW(k, host_ptr(a, it), to_bits(b, it->getIntegerBitWidth(), false),
                                           MaybeAlign(size), order),
                        t);
      } else {
        old = B_.CreateAtomicRMW(k, p, b, MaybeAlign(size), order);
      }
    }
    if (reduction) return;
    write(in.ops.at(0), t, old, in);
    if (yields_ && (sp == Space::Global || sp == Space::Generic)) poll(a, kernels::PollKind::Update);
  }

  // The old value at p after an atomic update to next(old) (a compare-and-swap loop).
  Value* cas_loop(Value* p, Type* ty, uint64_t size, const std::function<Value*(Value*)>& next) {
    const auto order = AtomicOrdering::SequentiallyConsistent;
    BasicBlock* pre = B_.GetInsertBlock();
    BasicBlock* loop = BasicBlock::Create(C_, "atom.loop", llfn_);
    BasicBlock* done = BasicBlock::Create(C_, "atom.done", llfn_);
    LoadInst* first = B_.CreateLoad(ty, p);
    first->setAtomic(AtomicOrdering::Monotonic);
    first->setAlignment(Align(size));
    B_.CreateBr(loop);
    B_.SetInsertPoint(loop);
    PHINode* cur = B_.CreatePHI(ty, 2);
    cur->addIncoming(first, pre);
    auto* x = B_.CreateAtomicCmpXchg(p, cur, next(cur), MaybeAlign(size), order, order);
    Value* seen = B_.CreateExtractValue(x, 0);  // the old value when the swap succeeded
    cur->addIncoming(seen, loop);
    B_.CreateCondBr(B_.CreateExtractValue(x, 1), done, loop);
    B_.SetInsertPoint(done);
    return seen;
  }

  // ---- control ------------------------------------------------------------------------------
  void branch(const ptx::Instruction& in) {
    const Operand& target = in.ops.at(0);
    auto it = labels_.find(target.name);
    if (it == labels_.end()) malformed(in, "unknown label " + target.name);
    B_.CreateBr(it->second);
  }

  void call(const ptx::Instruction& in) {
    // ops: returns (Vector), target, arguments (Vector)[, prototype]
    if (in.ops.size() < 3) malformed(in, "call operands");
    const Operand& rets = in.ops[0];
    const Operand& target = in.ops[1];
    const Operand& args = in.ops[2];
    auto addr_of = [&](const Operand& o) -> Value* {
      if (o.kind != Operand::Kind::Reg && o.kind != Operand::Kind::Symbol) malformed(in, "call argument");
      auto it = param_addr_.find(o.name);
      if (it == param_addr_.end()) malformed(in, "call argument " + o.name + " is not a .param");
      return B_.CreateIntToPtr(it->second, i8p_);
    };
    auto load_param = [&](const Operand& o, Type* ty) {
      return B_.CreateLoad(ty, B_.CreateBitCast(addr_of(o), PointerType::getUnqual(ty)));
    };
    if (target.kind == Operand::Kind::Symbol || (target.kind == Operand::Kind::Reg && !regs_.count(target.name))) {
      const std::string& name = target.name;
      // The device runtime's functions, served by the executor.
      if (name == "vprintf") {
        Value* fmt = load_param(args.elems.at(0), i64_);
        Value* buf = load_param(args.elems.at(1), i64_);
        Value* r = B_.CreateCall(runtime("fg_rt_vprintf", i32_, {envp_, i64_, i64_}), {env_, fmt, buf});
        if (!rets.elems.empty())
          B_.CreateStore(r, B_.CreateBitCast(addr_of(rets.elems[0]), PointerType::getUnqual(i32_)));
        return;
      }
      if (name == "__assertfail") {
        Value* msg = load_param(args.elems.at(0), i64_);
        Value* file = load_param(args.elems.at(1), i64_);
        Value* line = load_param(args.elems.at(2), i32_);
        Value* func = load_param(args.elems.at(3), i64_);
        B_.CreateCall(runtime("fg_rt_assertfail", Type::getVoidTy(C_), {envp_, i64_, i64_, i32_, i64_}),
                      {env_, msg, file, line, func});
        abort_thread();
        B_.SetInsertPoint(BasicBlock::Create(C_, "after.assert", llfn_));
        return;
      }
      if (name == "malloc") {
        Value* n = load_param(args.elems.at(0), i64_);
        Value* r = B_.CreateCall(runtime("fg_rt_malloc", i64_, {envp_, i64_}), {env_, n});
        B_.CreateStore(r, B_.CreateBitCast(addr_of(rets.elems.at(0)), PointerType::getUnqual(i64_)));
        return;
      }
      if (name == "free") {
        Value* p = load_param(args.elems.at(0), i64_);
        B_.CreateCall(runtime("fg_rt_free", Type::getVoidTy(C_), {envp_, i64_}), {env_, p});
        return;
      }
      const ptx::Function* callee = P_.find_function(name);
      if (!callee) malformed(in, "call of unknown function " + name);
      if (callee->name.rfind("cudaGetParameterBuffer", 0) == 0 || callee->name.rfind("cudaLaunchDevice", 0) == 0)
        unsupported("launches kernels from device code (dynamic parallelism)");
      Function* fn = declare(*callee);
      std::vector<Value*> cargs = {env_, tid_[0], tid_[1], tid_[2]};
      for (const Operand& r : rets.elems) cargs.push_back(addr_of(r));
      for (const Operand& a : args.elems) cargs.push_back(addr_of(a));
      if (cargs.size() != fn->arg_size()) malformed(in, "call of " + name + " with the wrong number of arguments");
      B_.CreateCall(fn, cargs);
    } else {  // indirect: through a register holding a function's tag
      Value* p = read(target, PType::U64, in);
      std::vector<Value*> cargs = {env_, tid_[0], tid_[1], tid_[2]};
      for (const Operand& r : rets.elems) cargs.push_back(addr_of(r));
      for (const Operand& a : args.elems) cargs.push_back(addr_of(a));
      // Every defined function of this shape may be the target; anything else faults.
      BasicBlock* bad = BasicBlock::Create(C_, "bad.target", llfn_);
      BasicBlock* joined = BasicBlock::Create(C_, "after.indirect", llfn_);
      SwitchInst* sw = B_.CreateSwitch(p, bad);
      for (const ptx::Function& cand : P_.functions) {
        if (!cand.has_body || cand.entry || cand.returns.size() != rets.elems.size() ||
            cand.params.size() != args.elems.size())
          continue;
        Function* fn = declare(cand);
        BasicBlock* bb = BasicBlock::Create(C_, "call." + cand.name, llfn_);
        sw->addCase(B_.getInt64(kernels::kFunctionTag + static_cast<uint64_t>(kernels::function_index(P_, cand.name))),
                    bb);
        B_.SetInsertPoint(bb);
        B_.CreateCall(fn, cargs);
        B_.CreateBr(joined);
      }
      B_.SetInsertPoint(bad);
      B_.CreateCall(runtime("fg_rt_fault", Type::getVoidTy(C_), {envp_, i32_, i64_}),
                    {env_, B_.getInt32(static_cast<uint32_t>(kernels::Fault::IllegalAddress)), p});
      abort_thread();
      B_.SetInsertPoint(joined);
    }
    // A callee that faulted (or asserted) stops this thread too.
    Value* abort = load_env(kAbort, i32_);
    BasicBlock* cont = BasicBlock::Create(C_, "after.call", llfn_);
    BasicBlock* aborted = BasicBlock::Create(C_, "aborted", llfn_);
    B_.CreateCondBr(B_.CreateICmpNE(abort, B_.getInt32(0)), aborted, cont, weights(1, 1u << 20));
    B_.SetInsertPoint(aborted);
    abort_thread();
    B_.SetInsertPoint(cont);
  }

  void instruction(const ptx::Instruction& in) {
    BasicBlock* skip = nullptr;
    if (!in.guard.empty()) {
      Operand g;
      g.kind = Operand::Kind::Reg;
      g.name = in.guard;
      Value* c = read(g, PType::Pred, in);
      if (in.guard_negated) c = B_.CreateNot(c);
      BasicBlock* run = BasicBlock::Create(C_, "pred", llfn_);
      skip = BasicBlock::Create(C_, "cont", llfn_);
      B_.CreateCondBr(c, run, skip);
      B_.SetInsertPoint(run);
    }
    lower(in);
    if (skip) {
      if (!B_.GetInsertBlock()->getTerminator()) B_.CreateBr(skip);
      B_.SetInsertPoint(skip);
    }
  }

  void lower(const ptx::Instruction& in) {
    const std::string& op = in.opcode;
    if (half::handles(in)) return half::lower(B_, *this, in);
    if (op == "ld" || op == "ldu") return ld(in);
    if (op == "st") return st(in);
    if (op == "mov") return mov(in);
    if (op == "cvt") return cvt(in);
    if (op == "cvta") return cvta(in);
    if (op == "setp") return setp(in);
    if (op == "set") return set(in);
    if (op == "selp") return selp(in);
    if (op == "bra") return branch(in);
    if (op == "ret" || op == "exit") {
      B_.CreateBr(exit_);
      return;
    }
    if (op == "call") return call(in);
    if (op == "atom") return atom(in, false);
    if (op == "red") return atom(in, true);
    if (op == "membar" || op == "fence") {
      B_.CreateFence(AtomicOrdering::SequentiallyConsistent);
      return;
    }
    if (op == "nanosleep") {  // a back-off in a spin loop: others run meanwhile
      poll(B_.getInt64(0), kernels::PollKind::Sleep);
      return;
    }
    if (op == "brkpt" || op == "pmevent" || op == "prefetch" || op == "prefetchu") return;
    if (op == "trap") {
      B_.CreateCall(runtime("fg_rt_trap", Type::getVoidTy(C_), {envp_}), {env_});
      abort_thread();
      return;
    }
    if (op == "bfe" || op == "bfi" || op == "bfind" || op == "prmt") return bits(in);
    if (op == "bar" || op == "barrier") return barrier(in);
    if (op == "shfl" || op == "vote" || op == "match" || op == "redux" || op == "activemask") return warp(in);
    if (texture::handles(in)) return texture::lower(B_, *this, in);
    if (op == "sured") unsupported("uses " + op + " (surface reductions)");
    if (op == "mapa") return mapa(in);
    if (op == "wmma") return wmma(in);
    if (op == "mma") return mma_sync(in);
    if (op == "ldmatrix" || op == "stmatrix") return ldstmatrix(in);
    if (op == "cp") return async_copy(in);
    arith(in);
  }

  // ---- threads meeting: the fiber runtime (kernels/fiber.cpp) ------------------------------
  Value* mask_operand(const ptx::Instruction& in, size_t i) {
    return i < in.ops.size() ? read(in.ops[i], PType::B32, in) : B_.getInt32(0xffffffffu);
  }

  void barrier(const ptx::Instruction& in) {
    if (in.has_mod("cluster")) return cluster_barrier(in);
    needs_fibers_ = true;
    if (in.has_mod("warp")) {  // bar.warp.sync mask
      B_.CreateCall(runtime("fg_rt_warpsync", Type::getVoidTy(C_), {envp_, i32_}), {env_, mask_operand(in, 0)});
      return;
    }
    using kernels::BarrierKind;
    BarrierKind kind = BarrierKind::Sync;
    size_t first = 0;  // bar.red's destination comes first
    if (in.has_mod("arrive")) kind = BarrierKind::Arrive;
    if (in.has_mod("red")) {
      kind = in.has_mod("popc") ? BarrierKind::RedPopc : in.has_mod("and") ? BarrierKind::RedAnd : BarrierKind::RedOr;
      first = 1;
    }
    Value* id = read(in.ops.at(first), PType::U32, in);
    // bar.red: d, a{, b}, {!}c; otherwise a{, b}.
    const size_t rest = in.ops.size() - first;
    Value* count = B_.getInt32(0);
    Value* pred = B_.getInt32(1);
    if (kind >= BarrierKind::RedPopc) {
      if (rest == 3) count = read(in.ops.at(first + 1), PType::U32, in);
      pred = B_.CreateZExt(read(in.ops.back(), PType::Pred, in), i32_);
    } else if (rest >= 2) {
      count = read(in.ops.at(first + 1), PType::U32, in);
    }
    Value* r = barrier_call(id, count, kind, pred);
    if (kind == BarrierKind::RedPopc) write(in.ops.at(0), PType::U32, r, in);
    if (kind == BarrierKind::RedAnd || kind == BarrierKind::RedOr)
      write(in.ops.at(0), PType::Pred, B_.CreateICmpNE(r, B_.getInt32(0)), in);
  }

  // fg_rt_barrier: the threads meet at barrier `id` (`count` threads; 0: the block's).
  Value* barrier_call(Value* id, Value* count, kernels::BarrierKind kind, Value* pred) {
    return B_.CreateCall(runtime("fg_rt_barrier", i32_, {envp_, i32_, i32_, i32_, i32_}),
                         {env_, id, count, B_.getInt32(static_cast<uint32_t>(kind)), pred});
  }

  // barrier.cluster.wait: the block's threads meet, one of them waits until every block of the
  // cluster has arrived as often (fg_rt_cluster_sync), then the threads meet again. The arrive
  // half does nothing: its thread arrives when it waits, which orders at least as much (a
  // thread that between the two waits for another block's arrival would hang; none is known).
  void cluster_barrier(const ptx::Instruction& in) {
    if (in.has_mod("arrive")) return;
    out_->cluster_sync = true;
    needs_fibers_ = true;
    auto block_barrier = [&] {
      barrier_call(B_.getInt32(0), B_.getInt32(0), kernels::BarrierKind::Sync, B_.getInt32(1));
    };
    block_barrier();
    Value* first = B_.CreateICmpEQ(B_.CreateOr(tid_[0], B_.CreateOr(tid_[1], tid_[2])), B_.getInt32(0));
    BasicBlock* wait = BasicBlock::Create(C_, "cluster.wait", llfn_);
    BasicBlock* met = BasicBlock::Create(C_, "cluster.met", llfn_);
    B_.CreateCondBr(first, wait, met);
    B_.SetInsertPoint(wait);
    B_.CreateCall(runtime("fg_rt_cluster_sync", Type::getVoidTy(C_), {envp_}), {env_});
    B_.CreateBr(met);
    B_.SetInsertPoint(met);
    BasicBlock* cont = BasicBlock::Create(C_, "cluster.go", llfn_);
    B_.CreateCondBr(B_.CreateICmpNE(load_env(kAbort, i32_), B_.getInt32(0)), exit_, cont, weights(1, 1u << 20))
        ->setMetadata(kAbortEdge, MDNode::get(C_, {}));
    B_.SetInsertPoint(cont);
    block_barrier();
  }

  // mapa.u64 d, a, rank (generic addresses): a's place in the shared memory of the cluster's
  // block `rank` (fg_rt_mapa; an address outside the block's shared memory faults).
  void mapa(const ptx::Instruction& in) {
    if (in.has_mod("shared::cluster")) unsupported("uses mapa.shared::cluster (shared::cluster addresses)");
    out_->cluster_sync = true;
    Value* r = B_.CreateCall(runtime("fg_rt_mapa", i64_, {envp_, i64_, i32_}),
                             {env_, read(in.ops.at(1), PType::U64, in), read(in.ops.at(2), PType::U32, in)});
    stop_unless(B_.CreateICmpNE(r, B_.getInt64(0)));
    write(in.ops.at(0), PType::U64, r, in);
  }

  void warp(const ptx::Instruction& in) {
    needs_fibers_ = true;
    const std::string& op = in.opcode;
    if (op == "activemask") {
      Value* r = B_.CreateCall(runtime("fg_rt_activemask", i32_, {envp_, i32_}), {env_, B_.getInt32(active_sites_++)});
      write(in.ops.at(0), PType::B32, r, in);
      return;
    }
    if (op == "shfl") {
      using kernels::ShflMode;
      ShflMode mode = in.has_mod("up")     ? ShflMode::Up
                      : in.has_mod("down") ? ShflMode::Down
                      : in.has_mod("bfly") ? ShflMode::Bfly
                                           : ShflMode::Idx;
      Value* valid = entry_alloca(i32_);
      Value* r = B_.CreateCall(
          runtime("fg_rt_shfl", i32_, {envp_, i32_, i32_, i32_, i32_, i32_, PointerType::getUnqual(i32_)}),
          {env_, B_.getInt32(static_cast<uint32_t>(mode)), read(in.ops.at(1), PType::B32, in),
           read(in.ops.at(2), PType::B32, in), read(in.ops.at(3), PType::B32, in), mask_operand(in, 4), valid});
      const Operand& d = in.ops.at(0);
      if (d.kind == Operand::Kind::Pair) {
        write(d.elems.at(0), PType::B32, r, in);
        write(d.elems.at(1), PType::Pred, B_.CreateICmpNE(B_.CreateLoad(i32_, valid), B_.getInt32(0)), in);
      } else {
        write(d, PType::B32, r, in);
      }
      return;
    }
    if (op == "vote") {
      using kernels::VoteMode;
      VoteMode mode = in.has_mod("all")   ? VoteMode::All
                      : in.has_mod("any") ? VoteMode::Any
                      : in.has_mod("uni") ? VoteMode::Uni
                                          : VoteMode::Ballot;
      Value* p = B_.CreateZExt(read(in.ops.at(1), PType::Pred, in), i32_);
      Value* r = B_.CreateCall(runtime("fg_rt_vote", i32_, {envp_, i32_, i32_, i32_}),
                               {env_, B_.getInt32(static_cast<uint32_t>(mode)), p, mask_operand(in, 2)});
      if (mode == VoteMode::Ballot) {
        write(in.ops.at(0), PType::B32, r, in);
      } else {
        write(in.ops.at(0), PType::Pred, B_.CreateICmpNE(r, B_.getInt32(0)), in);
      }
      return;
    }
    if (op == "match") {
      const bool all = in.has_mod("all");
      const PType t = type0(in);
      Value* v = B_.CreateZExtOrTrunc(to_bits(read(in.ops.at(1), t, in), bits_of(t), false), i64_);
      Value* pred = entry_alloca(i32_);
      Value* r = B_.CreateCall(runtime("fg_rt_match", i32_, {envp_, i32_, i64_, i32_, PointerType::getUnqual(i32_)}),
                               {env_, B_.getInt32(all), v, mask_operand(in, 2), pred});
      const Operand& d = in.ops.at(0);
      if (d.kind == Operand::Kind::Pair) {
        write(d.elems.at(0), PType::B32, r, in);
        write(d.elems.at(1), PType::Pred, B_.CreateICmpNE(B_.CreateLoad(i32_, pred), B_.getInt32(0)), in);
      } else {
        write(d, PType::B32, r, in);
      }
      return;
    }
    // redux.sync.op.type d, a, membermask
    using kernels::ReduxOp;
    ReduxOp rop = in.has_mod("add")   ? ReduxOp::Add
                  : in.has_mod("min") ? ReduxOp::Min
                  : in.has_mod("max") ? ReduxOp::Max
                  : in.has_mod("and") ? ReduxOp::And
                  : in.has_mod("or")  ? ReduxOp::Or
                                      : ReduxOp::Xor;
    const PType t = type0(in);
    if (bits_of(t) != 32) unsupported("uses redux." + std::string(ptx::type_name(t)));
    Value* r = B_.CreateCall(runtime("fg_rt_redux", i32_, {envp_, i32_, i32_, i32_, i32_}),
                             {env_, B_.getInt32(static_cast<uint32_t>(rop)), read(in.ops.at(1), PType::B32, in),
                              mask_operand(in, 2), B_.getInt32(is_signed(t))});
    write(in.ops.at(0), t, r, in);
  }

  // ---- warp matrix operations (kernels/matrix.h) ---------------------------------------------
  static bool matrix_elem(PType t, kernels::matrix::Elem* e) {
    using kernels::matrix::Elem;
    switch (t) {
      case PType::F16: *e = Elem::F16; return true;
      case PType::BF16: *e = Elem::BF16; return true;
      case PType::TF32: *e = Elem::TF32; return true;
      case PType::F32: *e = Elem::F32; return true;
      case PType::F64: *e = Elem::F64; return true;
      case PType::S8: *e = Elem::S8; return true;
      case PType::U8: *e = Elem::U8; return true;
      case PType::S32: *e = Elem::S32; return true;
      default: return false;
    }
  }

  kernels::matrix::Fragment matrix_fragment(const ptx::Instruction& in, kernels::matrix::Role role, PType t,
                                            kernels::matrix::Layout layout = kernels::matrix::Layout::Wmma) {
    kernels::matrix::Shape shape;
    for (const std::string& m : in.mods)
      if (std::sscanf(m.c_str(), "m%un%uk%u", &shape.m, &shape.n, &shape.k) == 3) break;
    kernels::matrix::Elem e;
    kernels::matrix::Fragment f;
    const bool wmma = layout == kernels::matrix::Layout::Wmma;
    if (!matrix_elem(t, &e) ||
        !(wmma ? kernels::matrix::fragment(shape, role, e, &f) : kernels::matrix::mma_fragment(shape, role, e, &f)))
      unsupported(
          "uses " + in.opcode + " with m" + std::to_string(shape.m) + "n" + std::to_string(shape.n) + "k" +
          std::to_string(shape.k) + " ." + std::string(ptx::type_name(t)) +
          (wmma ? " (the executor runs wmma's f16, bf16, tf32, s8, u8 and f64 fragments)"
                : " (the executor runs mma.sync's m16n8k{4,8,16,32} f16, bf16, tf32, s8 and u8 and m8n8k4 f64)"));
    return f;
  }

  // wmma.load.{a,b,c} / wmma.store.d: each lane reads or writes its own elements (the fake's
  // layout, kernels/matrix.h) at [p] + (row-major: row × stride + col; col-major: col × stride
  // + row) elements, every access checked as ld/st check theirs.
  void wmma_memory(const ptx::Instruction& in, bool load) {
    using kernels::matrix::Role;
    const Role role = !load ? Role::C : in.has_mod("a") ? Role::A : in.has_mod("b") ? Role::B : Role::C;
    if (in.types.size() != 1) malformed(in, "one element type");
    const kernels::matrix::Fragment f = matrix_fragment(in, role, in.types[0]);
    const Operand& regs = in.ops.at(load ? 0 : 1);
    if (regs.kind != Operand::Kind::Vector || regs.elems.size() != f.regs)
      malformed(in, "a fragment of " + std::to_string(f.regs) + " registers");
    const bool col_major = in.has_mod("col");
    Value* stride = in.ops.size() > 2 ? B_.CreateZExt(read(in.ops[2], PType::U32, in), i64_)
                                      : B_.getInt64(col_major ? f.rows : f.cols);
    const Space sp = space_of(in);
    Value* base = raw_address(in.ops.at(load ? 1 : 0), in);
    Value* lane = special("%laneid", in);
    const unsigned eb = f.bytes(), per_reg = f.reg_bits / (eb * 8);
    Type* ety = IntegerType::get(C_, eb * 8);
    Type* rty = IntegerType::get(C_, f.reg_bits);
    const PType rt = f.reg_bits == 64 ? PType::B64 : PType::B32;
    auto address_of = [&](unsigned e) {
      Value* idx = B_.CreateURem(B_.CreateAdd(B_.CreateMul(lane, B_.getInt32(f.elements)), B_.getInt32(e)),
                                 B_.getInt32(f.rows * f.cols));
      Value* row = B_.CreateZExt(B_.CreateUDiv(idx, B_.getInt32(f.cols)), i64_);
      Value* col = B_.CreateZExt(B_.CreateURem(idx, B_.getInt32(f.cols)), i64_);
      Value* at = col_major ? B_.CreateAdd(B_.CreateMul(col, stride), row)
                            : B_.CreateAdd(B_.CreateMul(row, stride), col);
      return checked(B_.CreateAdd(base, B_.CreateMul(at, B_.getInt64(eb))), sp, eb, !load);
    };
    for (unsigned r = 0; r < f.regs; ++r) {
      if (load) {
        Value* reg = ConstantInt::get(rty, 0);
        for (unsigned j = 0; j < per_reg; ++j) {
          LoadInst* l = B_.CreateLoad(ety, host_ptr(address_of(r * per_reg + j), ety));
          l->setAlignment(Align(eb));
          reg = B_.CreateOr(reg, B_.CreateShl(B_.CreateZExt(l, rty), j * eb * 8));
        }
        write(regs.elems[r], rt, reg, in);
      } else {
        Value* reg = read(regs.elems[r], rt, in);
        for (unsigned j = 0; j < per_reg; ++j) {
          Value* v = B_.CreateTrunc(B_.CreateLShr(reg, j * eb * 8), ety);
          B_.CreateStore(v, host_ptr(address_of(r * per_reg + j), ety))->setAlignment(Align(eb));
        }
      }
    }
  }

  // The words of a fragment's registers (a 64-bit register as two words, low first).
  void fragment_words(const ptx::Instruction& in, const Operand& regs, unsigned n, unsigned reg_bits,
                      std::vector<Value*>* out) {
    if (regs.kind != Operand::Kind::Vector || regs.elems.size() != n)
      malformed(in, "a fragment of " + std::to_string(n) + " registers");
    for (const Operand& r : regs.elems) {
      if (reg_bits == 64) {
        Value* v = read(r, PType::B64, in);
        out->push_back(B_.CreateTrunc(v, i32_));
        out->push_back(B_.CreateTrunc(B_.CreateLShr(v, 32), i32_));
      } else {
        out->push_back(read(r, PType::B32, in));
      }
    }
  }

  void write_fragment(const ptx::Instruction& in, const Operand& regs, unsigned n, unsigned reg_bits,
                      const std::vector<Value*>& words) {
    if (regs.kind != Operand::Kind::Vector || regs.elems.size() != n)
      malformed(in, "a fragment of " + std::to_string(n) + " registers");
    for (unsigned r = 0; r < n; ++r) {
      if (reg_bits == 64) {
        Value *lo = B_.CreateZExt(words[2 * r], i64_), *hi = B_.CreateZExt(words[2 * r + 1], i64_);
        write(regs.elems[r], PType::B64, B_.CreateOr(lo, B_.CreateShl(hi, 32)), in);
      } else {
        write(regs.elems[r], PType::B32, words[r], in);
      }
    }
  }

  // The lanes of the warp meet for `op` (kernels/matrix.h): this lane gives `words`
  // (Op::in_words) and gets its result's (Op::out_words) once every lane has come (fg_rt_mma;
  // fission.cpp lowers it for blocks run as loops).
  std::vector<Value*> warp_matrix(const kernels::matrix::Op& op, const std::vector<Value*>& words) {
    AllocaInst* buf = cast<AllocaInst>(entry_alloca(ArrayType::get(i32_, op.in_words())));
    AllocaInst* obuf = cast<AllocaInst>(entry_alloca(ArrayType::get(i32_, op.out_words())));
    Value* in_at = B_.CreateBitCast(buf, PointerType::getUnqual(i32_));
    for (unsigned w = 0; w < words.size(); ++w) B_.CreateStore(words[w], B_.CreateConstGEP1_32(i32_, in_at, w));
    needs_fibers_ = true;
    Value* out_at = B_.CreateBitCast(obuf, PointerType::getUnqual(i32_));
    B_.CreateCall(runtime("fg_rt_mma", Type::getVoidTy(C_),
                          {envp_, i32_, PointerType::getUnqual(i32_), PointerType::getUnqual(i32_)}),
                  {env_, B_.getInt32(op.pack()), in_at, out_at});
    std::vector<Value*> out;
    for (unsigned w = 0; w < op.out_words(); ++w)
      out.push_back(B_.CreateLoad(i32_, B_.CreateConstGEP1_32(i32_, out_at, w)));
    return out;
  }

  // A product: d, a, b, c as the instruction names them (types dtype.ctype for f16 inputs, else
  // dtype.atype.btype.ctype).
  void matrix_product(const ptx::Instruction& in, kernels::matrix::Layout layout) {
    using kernels::matrix::Role;
    PType td, ta = PType::F16, tb = PType::F16, tc;
    if (in.types.size() == 2) {
      td = in.types[0], tc = in.types[1];
    } else if (in.types.size() == 4) {
      td = in.types[0], ta = in.types[1], tb = in.types[2], tc = in.types[3];
    } else {
      malformed(in, "the result's and accumulator's types (and the inputs')");
    }
    if (in.has_mod("rz") || in.has_mod("rm") || in.has_mod("rp"))
      unsupported("uses " + in.opcode + " with a directed rounding");
    const kernels::matrix::Fragment fa = matrix_fragment(in, Role::A, ta, layout),
                                    fb = matrix_fragment(in, Role::B, tb, layout),
                                    fc = matrix_fragment(in, Role::C, tc, layout),
                                    fd = matrix_fragment(in, Role::C, td, layout);
    kernels::matrix::Op op;
    op.layout = layout;
    op.shape = {fa.rows, fb.cols, fa.cols};
    op.a = fa.elem, op.b = fb.elem, op.c = fc.elem, op.d = fd.elem;
    op.satfinite = in.has_mod("satfinite");
    if (in.ops.size() != 4) malformed(in, "four fragments: d, a, b, c");
    std::vector<Value*> words;
    fragment_words(in, in.ops[1], fa.regs, fa.reg_bits, &words);
    fragment_words(in, in.ops[2], fb.regs, fb.reg_bits, &words);
    fragment_words(in, in.ops[3], fc.regs, fc.reg_bits, &words);
    write_fragment(in, in.ops[0], fd.regs, fd.reg_bits, warp_matrix(op, words));
  }

  // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype: the layouts need nothing, the
  // fragments hold the logical matrices (wmma_memory).
  void wmma(const ptx::Instruction& in) {
    if (in.has_mod("load")) return wmma_memory(in, true);
    if (in.has_mod("store")) return wmma_memory(in, false);
    if (!in.has_mod("mma")) unsupported("uses wmma." + (in.mods.empty() ? std::string() : in.mods[0]));
    matrix_product(in, kernels::matrix::Layout::Wmma);
  }

  // mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype: the PTX ISA's fragment layouts.
  void mma_sync(const ptx::Instruction& in) {
    if (!in.has_mod("sync")) unsupported("uses mma without .sync");
    for (const char* m : {"sp", "sp::ordered_metadata", "block_scale", "kind::f8f6f4", "kind::mxf8f6f4"})
      if (in.has_mod(m)) unsupported(std::string("uses mma.") + m);
    matrix_product(in, kernels::matrix::Layout::Mma);
  }

  // ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared}.b16 d, [p] and
  // stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared}.b16 [p], r: lanes 8i .. 8i+7 name the
  // 16-byte rows of matrix i. A lane that names a row reads (writes) it as ld (st) would, checked;
  // the rows then cross the warp as the fragments of mma.sync's 16-bit inputs.
  void ldstmatrix(const ptx::Instruction& in) {
    const bool load = in.opcode == "ldmatrix";
    if (!in.has_mod("m8n8") || in.types.size() != 1 || in.types[0] != PType::B16)
      unsupported("uses " + in.opcode + " other than .m8n8 .b16");
    kernels::matrix::Op op;
    op.kind = load ? kernels::matrix::Kind::LoadRows : kernels::matrix::Kind::StoreRows;
    op.count = in.has_mod("x4") ? 4 : in.has_mod("x2") ? 2 : 1;
    op.trans = in.has_mod("trans");
    const Space sp = space_of(in);
    const Operand& regs = in.ops.at(load ? 0 : 1);
    Value* lane = special("%laneid", in);
    Value* names_row = B_.CreateICmpULT(lane, B_.getInt32(8 * op.count));
    Value* row_at = raw_address(in.ops.at(load ? 1 : 0), in);
    // Only the lanes that name a row touch memory: the others' addresses are not read.
    BasicBlock* access = BasicBlock::Create(C_, "matrix.row", llfn_);
    BasicBlock* done = BasicBlock::Create(C_, "matrix.rows", llfn_);
    if (load) {
      BasicBlock* from = B_.GetInsertBlock();
      B_.CreateCondBr(names_row, access, done);
      B_.SetInsertPoint(access);
      Value* host = checked(row_at, sp, 16, false);
      std::vector<Value*> row;
      for (unsigned w = 0; w < 4; ++w) {
        LoadInst* l = B_.CreateLoad(i32_, host_ptr(B_.CreateAdd(host, B_.getInt64(4 * w)), i32_));
        l->setAlignment(Align(4));
        row.push_back(l);
      }
      BasicBlock* loaded = B_.GetInsertBlock();
      B_.CreateBr(done);
      B_.SetInsertPoint(done);
      std::vector<Value*> words;
      for (unsigned w = 0; w < 4; ++w) {
        PHINode* phi = B_.CreatePHI(i32_, 2);
        phi->addIncoming(B_.getInt32(0), from);
        phi->addIncoming(row[w], loaded);
        words.push_back(phi);
      }
      write_fragment(in, regs, op.count, 32, warp_matrix(op, words));
      return;
    }
    std::vector<Value*> words;
    fragment_words(in, regs, op.count, 32, &words);
    const std::vector<Value*> row = warp_matrix(op, words);
    B_.CreateCondBr(names_row, access, done);
    B_.SetInsertPoint(access);
    Value* host = checked(row_at, sp, 16, true);
    for (unsigned w = 0; w < 4; ++w)
      B_.CreateStore(row[w], host_ptr(B_.CreateAdd(host, B_.getInt64(4 * w)), i32_))->setAlignment(Align(4));
    B_.CreateBr(done);
    B_.SetInsertPoint(done);
  }

  Value* entry_alloca(Type* ty) {
    IRBuilder<> eb(&llfn_->getEntryBlock(), llfn_->getEntryBlock().begin());
    return eb.CreateAlloca(ty);
  }

  // The entry's thread function under a fixed name, for the fiber runtime.
  void make_thread_function(Function* thread) {
    Function* f = Function::Create(thread_type(0, 0), Function::ExternalLinkage, "fg_thread", M_.get());
    BasicBlock* bb = BasicBlock::Create(C_, "entry", f);
    IRBuilder<> b(bb);
    std::vector<Value*> args;
    for (auto& a : f->args()) args.push_back(&a);
    b.CreateCall(thread, args);
    b.CreateRetVoid();
  }

  // The kernel's block function when its threads meet only at barriers the whole block
  // reaches together: loops over the threads split at the barriers (fission.cpp). False, with
  // out_->meeting saying why, when the threads must run as fibers.
  bool split_block(const ptx::Function& entry, Function* thread) {
    const kernels::MeetingAnalysis a = kernels::analyze_meetings(P_, entry);
    if (!a.block_loops) {
      out_->meeting = "fibers: " + a.why;
      return false;
    }
    Function* blk = Function::Create(FunctionType::get(Type::getVoidTy(C_), {envp_}, false), Function::ExternalLinkage,
                                     "fg_block", M_.get());
    std::string why;
    uint64_t context = 0;
    unsigned barriers = 0, warp_points = 0;
    if (!split_at_barriers(thread, blk, env_ty_, &context, &barriers, &warp_points, &why)) {
      blk->eraseFromParent();
      out_->meeting = "fibers: " + why;
      return false;
    }
    needs_fibers_ = false;
    out_->split = true;
    out_->context_bytes = context;
    out_->loops_need_warp_rows = a.needs_warp_rows;
    out_->meeting = "loops split at " + std::to_string(barriers) + " barrier(s) and " + std::to_string(warp_points) +
                    " warp operation(s)" + (a.needs_warp_rows ? " (fibers for blocks whose warps span rows)" : "");
    return true;
  }

  // The kernel's block function: every thread of the block, x fastest, stopping at a fault.
  void make_block_function(const ptx::Function& entry, Function* thread) {
    (void)entry;
    Function* blk = Function::Create(FunctionType::get(Type::getVoidTy(C_), {envp_}, false), Function::ExternalLinkage,
                                     "fg_block", M_.get());
    Value* env = &*blk->arg_begin();
    BasicBlock* bb = BasicBlock::Create(C_, "entry", blk);
    B_.SetInsertPoint(bb);
    env_ = env;
    llfn_ = blk;
    Value* n[3] = {env_dim(kNtid, 0), env_dim(kNtid, 1), env_dim(kNtid, 2)};
    BasicBlock* done = BasicBlock::Create(C_, "done", blk);
    const ThreadNest t = thread_nest(blk, bb, n, done, "");
    B_.SetInsertPoint(t.body);
    B_.CreateCall(thread, {env, t.x, t.y, t.z});
    Value* failed = B_.CreateICmpNE(load_env(kAbort, i32_), B_.getInt32(0));
    B_.CreateCondBr(failed, done, t.latch);
    B_.SetInsertPoint(done);
    B_.CreateRetVoid();
    thread->addFnAttr(Attribute::AlwaysInline);
  }

  LLVMContext& C_;
  const ptx::Module& P_;
  const kernels::CompileRequest& req_;
  kernels::CompiledKernel* out_;
  IRBuilder<> B_;
  std::unique_ptr<Module> M_;
  Type *i1_, *i8_, *i16_, *i32_, *i64_, *f32_, *f64_;
  PointerType* i8p_;
  StructType* env_ty_;
  StructType* range_ty_;
  PointerType* envp_;
  std::unordered_map<std::string, Function*> functions_;
  std::deque<const ptx::Function*> pending_;
  std::unordered_map<std::string, uint64_t> shared_offset_;
  std::set<std::string> dynamic_shared_;
  uint64_t shared_static_ = 0, dynamic_offset_ = 0;
  std::vector<std::string> globals_;
  std::unordered_map<std::string, unsigned> global_index_;
  uint32_t sites_ = 0;
  uint32_t active_sites_ = 0;
  bool needs_fibers_ = false;
  bool yields_ = false;  // CompiledKernel::yields
};

}  // namespace

std::unique_ptr<llvm::Module> generate(llvm::LLVMContext& context, const kernels::CompileRequest& request,
                                       kernels::CompiledKernel* out, std::string* error) {
  try {
    Gen gen(context, request, out);
    return gen.run();
  } catch (const Unsupported& u) {
    out->unsupported = u.why;
  } catch (const Malformed& m) {
    *error = m.what;
  } catch (const std::out_of_range&) {
    *error = "an instruction with too few operands";
  }
  return nullptr;
}

}  // namespace fg::jit
