// SPDX-License-Identifier: Apache-2.0
#include "kernels/uniformity.h"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <vector>

namespace fg::kernels {
namespace {

using ptx::Instruction;
using ptx::Operand;
using ptx::Statement;

// The analysis' lattice: Uniformity with two more points. None: no definition seen yet (the
// bottom). TidX: exactly %tid.x (possibly widened), which varies but compares with a multiple
// of 32 warp-uniformly. TidX joined with anything else varies.
enum class Val : uint8_t { None, Block, TidX, Warp, Varying };

Val join(Val a, Val b) {
  if (a == b || b == Val::None) return a;
  if (a == Val::None) return b;
  if (a == Val::TidX || b == Val::TidX) return Val::Varying;
  return std::max(a, b);
}

// TidX as an operand of arithmetic other than the few forms recognised below.
Val plain(Val v) { return v == Val::TidX ? Val::Varying : v; }

// A value `v` computed in code whose threads run together as `c` says (a guard, a control
// dependence): as uniform as both.
Val under(Val v, Val c) { return c == Val::Block || c == Val::None || v == Val::None ? v : join(plain(v), c); }

Uniformity exported(Val v) {
  switch (v) {
    case Val::None:
    case Val::Block: return Uniformity::Block;
    case Val::Warp: return Uniformity::Warp;
    default: return Uniformity::Varying;
  }
}

bool is_integer(ptx::Type t) {
  using T = ptx::Type;
  switch (t) {
    case T::B16:
    case T::B32:
    case T::B64:
    case T::U16:
    case T::U32:
    case T::U64:
    case T::S16:
    case T::S32:
    case T::S64: return true;
    default: return false;
  }
}

// The lanes of a warp meet there (wmma.mma, mma, ldmatrix, stmatrix: every lane's fragments or
// rows cross the warp; wmma's loads and stores are each lane's own).
bool is_warp_op(const Instruction& in) {
  const std::string& op = in.opcode;
  return op == "shfl" || op == "vote" || op == "match" || op == "redux" || op == "activemask" ||
         (op == "wmma" && in.has_mod("mma")) || op == "mma" || op == "ldmatrix" || op == "stmatrix";
}

bool is_barrier(const Instruction& in) { return in.opcode == "bar" || in.opcode == "barrier"; }

// Instructions whose first operand is not a register they write.
bool writes_no_register(const Instruction& in) {
  static const std::unordered_set<std::string> none = {
      "st",    "stu",   "red",   "bra",      "brx",        "ret",           "exit",      "membar",
      "fence", "trap",  "brkpt", "call",     "prefetch",   "prefetchu",     "nanosleep", "pmevent",
      "sust",  "sured", "cp",    "cp.async", "setmaxnreg", "griddepcontrol"};
  if (none.count(in.opcode)) return true;
  if (is_barrier(in)) return !in.has_mod("red");
  return false;
}

// A PTX function's control-flow graph: basic blocks of statements, a virtual exit node after
// them (the target of ret and exit, and of falling off the end).
struct Cfg {
  struct Block {
    size_t first = 0, last = 0;  // statements [first, last)
    std::vector<size_t> succ, pred;
    const Instruction* branch = nullptr;  // the last instruction when it is a conditional branch
    bool live = false;                    // reached from the entry
  };
  std::vector<Block> blocks;  // blocks.size() is the exit node
  std::string error;          // a branch to a label the function lacks
};

Cfg build_cfg(const ptx::Function& f) {
  Cfg g;
  const auto& body = f.body;
  auto ends_block = [](const Statement& s) {
    if (s.kind != Statement::Kind::Instruction) return false;
    const std::string& op = s.insn.opcode;
    return op == "bra" || op == "ret" || op == "exit";
  };
  std::vector<size_t> leaders = {0};
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].kind == Statement::Kind::Label && i != leaders.back()) leaders.push_back(i);
    if (ends_block(body[i]) && i + 1 < body.size()) leaders.push_back(i + 1);
  }
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  std::unordered_map<std::string, size_t> label_block;
  for (size_t b = 0; b < leaders.size(); ++b) {
    Cfg::Block blk;
    blk.first = leaders[b];
    blk.last = b + 1 < leaders.size() ? leaders[b + 1] : body.size();
    for (size_t i = blk.first; i < blk.last && body[i].kind == Statement::Kind::Label; ++i)
      label_block[body[i].label] = b;
    g.blocks.push_back(blk);
  }
  const size_t exit = g.blocks.size();
  for (size_t b = 0; b < g.blocks.size(); ++b) {
    Cfg::Block& blk = g.blocks[b];
    const size_t next = b + 1;  // the exit when b is the last block
    const Instruction* last = nullptr;
    for (size_t i = blk.first; i < blk.last; ++i)
      if (body[i].kind == Statement::Kind::Instruction) last = &body[i].insn;
    std::vector<size_t> succ;
    if (last && (last->opcode == "bra" || last->opcode == "ret" || last->opcode == "exit")) {
      if (last->opcode == "bra") {
        const std::string& target = last->ops.empty() ? std::string() : last->ops[0].name;
        auto it = label_block.find(target);
        if (it == label_block.end()) {
          g.error = "line " + std::to_string(last->line) + ": a branch to an unknown label";
          return g;
        }
        succ.push_back(it->second);
      } else {
        succ.push_back(exit);
      }
      if (!last->guard.empty()) succ.push_back(next);
    } else {
      succ.push_back(next);
    }
    std::sort(succ.begin(), succ.end());
    succ.erase(std::unique(succ.begin(), succ.end()), succ.end());
    if (succ.size() > 1) blk.branch = last;
    blk.succ = succ;
    for (size_t s : succ)
      if (s != exit) g.blocks[s].pred.push_back(b);
  }
  // Reached from the entry.
  if (!g.blocks.empty()) {
    std::vector<size_t> work = {0};
    g.blocks[0].live = true;
    while (!work.empty()) {
      const size_t b = work.back();
      work.pop_back();
      for (size_t s : g.blocks[b].succ)
        if (s != exit && !g.blocks[s].live) {
          g.blocks[s].live = true;
          work.push_back(s);
        }
    }
  }
  return g;
}

// Immediate post-dominators (Cooper, Harvey and Kennedy's iteration on the reversed graph).
// ipdom[exit] = exit; SIZE_MAX for blocks that never reach the exit.
std::vector<size_t> post_dominators(const Cfg& g) {
  const size_t n = g.blocks.size(), exit = n;
  std::vector<size_t> order;  // postorder of the reversed graph from the exit
  std::vector<size_t> number(n + 1, SIZE_MAX);
  {
    std::vector<std::pair<size_t, size_t>> stack;  // node, next predecessor to visit
    std::vector<bool> seen(n + 1, false);
    std::vector<size_t> exit_preds;
    for (size_t b = 0; b < n; ++b)
      for (size_t s : g.blocks[b].succ)
        if (s == exit) exit_preds.push_back(b);
    auto preds = [&](size_t v) -> const std::vector<size_t>& { return v == exit ? exit_preds : g.blocks[v].pred; };
    stack.push_back({exit, 0});
    seen[exit] = true;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      const auto& p = preds(v);
      if (i < p.size()) {
        const size_t w = p[i++];
        if (!seen[w]) {
          seen[w] = true;
          stack.push_back({w, 0});
        }
        continue;
      }
      number[v] = order.size();
      order.push_back(v);
      stack.pop_back();
    }
  }
  std::vector<size_t> ipdom(n + 1, SIZE_MAX);
  ipdom[exit] = exit;
  auto intersect = [&](size_t a, size_t b) {
    while (a != b) {
      while (number[a] < number[b]) a = ipdom[a];
      while (number[b] < number[a]) b = ipdom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = order.size(); k-- > 0;) {
      const size_t v = order[k];
      if (v == exit) continue;
      size_t best = SIZE_MAX;
      for (size_t s : g.blocks[v].succ) {
        if (ipdom[s] == SIZE_MAX) continue;
        best = best == SIZE_MAX ? s : intersect(s, best);
      }
      if (best != ipdom[v]) {
        ipdom[v] = best;
        changed = true;
      }
    }
  }
  return ipdom;
}

class Analysis {
 public:
  Analysis(const ptx::Module& m, const ptx::Function& f) : m_(m), f_(f) {
    for (const ptx::Variable& v : f.locals)
      if (v.space == ptx::Space::Reg) regs_[v.name] = Val::None;
    for (const ptx::Param& p : f.params) params_.insert(p.name);
  }

  MeetingAnalysis run() {
    MeetingAnalysis out;
    out.meets = function_meets(f_);
    Cfg g = build_cfg(f_);
    if (!g.error.empty()) return refuse(out, g.error);
    const size_t n = g.blocks.size();
    const std::vector<size_t> ipdom = post_dominators(g);
    // Control dependence: block v depends on the branch ending block a when v post-dominates
    // a successor of a but not a itself.
    std::vector<std::vector<size_t>> depends(n);
    for (size_t a = 0; a < n; ++a) {
      const Cfg::Block& blk = g.blocks[a];
      if (!blk.live) continue;
      if (ipdom[a] == SIZE_MAX)
        return refuse(out, "line " + std::to_string(first_line(g.blocks[a])) + ": a loop no thread leaves");
      if (!blk.branch) continue;
      for (size_t s : blk.succ)
        for (size_t r = s; r != ipdom[a] && r != n; r = ipdom[r]) depends[r].push_back(a);
    }
    // Fixpoint over the registers and the blocks' control uniformity (both only grow).
    std::vector<Val> control(n, Val::Block);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = 0; b < n; ++b) {
        if (!g.blocks[b].live) continue;
        Val c = Val::Block;
        for (size_t a : depends[b]) c = join(c, join(control[a], guard(*g.blocks[a].branch)));
        if (c != control[b]) {
          control[b] = c;
          changed = true;
        }
        for (size_t i = g.blocks[b].first; i < g.blocks[b].last; ++i) {
          const Statement& s = f_.body[i];
          if (s.kind != Statement::Kind::Instruction || writes_no_register(s.insn) || s.insn.ops.empty()) continue;
          const Val v = under(under(transfer(s.insn), guard(s.insn)), control[b]);
          changed |= define(s.insn.ops[0], v);
        }
      }
    }
    finish_registers(out);
    if (!out.meets) return out;
    // Where the threads meet.
    for (size_t b = 0; b < n; ++b) {
      if (!g.blocks[b].live) continue;
      for (size_t i = g.blocks[b].first; i < g.blocks[b].last; ++i) {
        const Statement& s = f_.body[i];
        if (s.kind != Statement::Kind::Instruction) continue;
        const Instruction& in = s.insn;
        const std::string at = "line " + std::to_string(in.line) + ": ";
        if (is_warp_op(in) || (is_barrier(in) && in.has_mod("warp"))) {
          const Val c = join(control[b], guard(in));
          if (c == Val::Varying)
            return refuse(out, at + in.opcode + " in code that not all lanes of a warp run together");
          if (c == Val::Warp) out.needs_warp_rows = true;
          continue;
        }
        if (is_barrier(in)) {
          if (in.has_mod("arrive"))
            return refuse(out, at + in.opcode + ".arrive (threads meet in other ways than at a barrier all wait at)");
          // bar.red d, a{, b}, {!}c: the destination first and the predicate last.
          const bool red = in.has_mod("red");
          const size_t first = red ? 1 : 0, plain_ops = red ? 3 : 1;
          if (in.ops.size() > plain_ops) return refuse(out, at + in.opcode + " with a thread count");
          if (in.ops.size() <= first) return refuse(out, at + in.opcode + " without a barrier number");
          if (join(control[b], guard(in)) != Val::Block || plain(value(in.ops[first])) != Val::Block)
            return refuse(out, at + in.opcode + " in code that not all threads of the block run together");
        }
        if (in.opcode == "call" && in.ops.size() >= 2) {
          const Operand& target = in.ops[1];
          if (regs_.count(target.name)) {
            for (const ptx::Function& fn : m_.functions)
              if (fn.has_body && function_meets(fn))
                return refuse(out, at + "an indirect call that may reach " + fn.name + ", whose threads meet");
          } else if (const ptx::Function* callee = m_.find_function(target.name);
                     callee && callee->has_body && function_meets(*callee)) {
            return refuse(out, at + "calls " + callee->name + ", which has barriers or warp operations");
          }
        }
      }
    }
    out.block_loops = true;
    return out;
  }

 private:
  static MeetingAnalysis& refuse(MeetingAnalysis& out, std::string why) {
    out.block_loops = false;
    out.needs_warp_rows = false;
    out.why = std::move(why);
    return out;
  }

  size_t first_line(const Cfg::Block& b) const {
    for (size_t i = b.first; i < b.last; ++i)
      if (f_.body[i].kind == Statement::Kind::Instruction) return f_.body[i].insn.line;
    return 0;
  }

  void finish_registers(MeetingAnalysis& out) const {
    for (const auto& [name, v] : regs_) out.registers[name] = exported(v);
  }

  // Whether `fn` (or what it calls) has barriers or warp operations.
  bool function_meets(const ptx::Function& fn) {
    if (auto it = meets_.find(fn.name); it != meets_.end()) return it->second;
    meets_[fn.name] = false;  // recursion: the cycle adds nothing
    bool meets = false;
    bool indirect = false;
    for (const Statement& s : fn.body) {
      if (s.kind != Statement::Kind::Instruction) continue;
      const Instruction& in = s.insn;
      if (is_barrier(in) || is_warp_op(in)) meets = true;
      if (in.opcode == "call" && in.ops.size() >= 2) {
        const Operand& target = in.ops[1];
        if (target.kind == Operand::Kind::Reg && target.name.size() > 0 && target.name[0] == '%') {
          indirect = true;
        } else if (const ptx::Function* callee = m_.find_function(target.name); callee && callee->has_body) {
          meets |= function_meets(*callee);
        }
      }
      if (meets) break;
    }
    if (!meets && indirect)
      for (const ptx::Function& other : m_.functions)
        if (other.has_body && &other != &fn && function_meets(other)) meets = true;
    meets_[fn.name] = meets;
    return meets;
  }

  static Val special(const std::string& name) {
    if (name == "%tid.x") return Val::TidX;
    if (name == "%tid.y" || name == "%tid.z" || name == "%warpid") return Val::Warp;
    static const std::unordered_set<std::string> block = {
        "%ntid.x",         "%ntid.y",   "%ntid.z",   "%ctaid.x",  "%ctaid.y",
        "%ctaid.z",        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%smid",
        "%nsmid",          "%gridid",   "%nwarpid",  "WARP_SZ",   "%dynamic_smem_size",
        "%total_smem_size"};
    // The driver's environment registers (a cooperative launch's grid workspace) are the
    // launch's.
    if (name.compare(0, 7, "%envreg") == 0) return Val::Block;
    return block.count(name) ? Val::Block : Val::Varying;
  }

  Val reg_value(const std::string& name) const {
    if (auto it = regs_.find(name); it != regs_.end()) return it->second == Val::None ? Val::Block : it->second;
    if (!name.empty() && name[0] == '%') return special(name);
    // A variable's, a parameter's or a function's name: its address.
    return Val::Block;
  }

  Val value(const Operand& op) const {
    switch (op.kind) {
      case Operand::Kind::Reg: return reg_value(op.name);
      case Operand::Kind::Address: return op.elems.empty() ? Val::Block : plain(value(op.elems[0]));
      case Operand::Kind::Vector:
      case Operand::Kind::Pair: {
        Val v = Val::Block;
        for (const Operand& e : op.elems) v = join(v, plain(value(e)));
        return v;
      }
      default: return Val::Block;
    }
  }

  Val guard(const Instruction& in) const { return in.guard.empty() ? Val::Block : plain(reg_value(in.guard)); }

  // Merges `v` into the registers `dst` names; true when one grew.
  bool define(const Operand& dst, Val v) {
    if (dst.kind == Operand::Kind::Vector || dst.kind == Operand::Kind::Pair) {
      bool grew = false;
      for (const Operand& e : dst.elems) grew |= define(e, plain(v));
      return grew;
    }
    if (dst.kind != Operand::Kind::Reg) return false;
    auto it = regs_.find(dst.name);
    if (it == regs_.end()) return false;
    const Val j = join(it->second, v);
    if (j == it->second) return false;
    it->second = j;
    return true;
  }

  static bool imm(const Operand& op, int64_t* k) {
    if (op.kind != Operand::Kind::Imm) return false;
    *k = op.imm;
    return true;
  }

  // The uniformity of what `in` writes (before its guard and control dependence).
  Val transfer(const Instruction& in) const {
    const std::string& op = in.opcode;
    auto sources = [&] {
      Val v = Val::Block;
      for (size_t i = 1; i < in.ops.size(); ++i) v = join(v, plain(value(in.ops[i])));
      return v;
    };
    if (op == "ld") {
      const Operand& a = in.ops.size() > 1 ? in.ops[1] : in.ops[0];
      const Operand* base = a.kind == Operand::Kind::Address && !a.elems.empty() ? &a.elems[0] : nullptr;
      // The kernel's parameters are the same for every thread and cannot be written.
      if (in.has_mod("param"))
        return base && !regs_.count(base->name) && params_.count(base->name) ? Val::Block : Val::Varying;
      // Constant memory does not change while the kernel runs.
      if (in.has_mod("const")) return sources();
      return Val::Varying;
    }
    if (op == "atom" || op == "ldu" || op == "shfl" || op == "match" || op == "wmma" || op == "mma" || op == "ldmatrix")
      return Val::Varying;
    // Texture and surface reads (and queries) are memory reads: they vary.
    if (op == "tex" || op == "tld4" || op == "txq" || op == "suld" || op == "suq") return Val::Varying;
    // A warp's lanes get the same vote, reduction and mask (when they name the same lanes).
    if (op == "vote" || op == "redux" || op == "activemask")
      return in.ops.size() > 2 ? join(Val::Warp, plain(value(in.ops[2]))) : Val::Warp;
    // bar.red d, a, {!}c: every thread of the barrier gets the same result, whatever each
    // contributed.
    if (is_barrier(in)) return in.ops.size() > 1 ? plain(value(in.ops[1])) : Val::Block;
    if (in.ops.size() < 2) return Val::Block;
    const Val a = value(in.ops[1]);
    if (op == "mov" && in.ops[0].kind == Operand::Kind::Reg) return a;
    if (op == "cvt" && a == Val::TidX && in.types.size() == 2 && is_integer(in.types[0]) && is_integer(in.types[1]))
      return a;
    int64_t k = 0;
    if (in.ops.size() >= 3) {
      const Val b = value(in.ops[2]);
      // tid.x / 32, tid.x >> 5, tid.x & ~31: the same in the lanes of a warp.
      if ((op == "shr" && a == Val::TidX && imm(in.ops[2], &k) && k >= 5) ||
          (op == "div" && a == Val::TidX && imm(in.ops[2], &k) && k > 0 && k % 32 == 0) ||
          (op == "and" && a == Val::TidX && imm(in.ops[2], &k) && (k & 31) == 0) ||
          (op == "and" && b == Val::TidX && imm(in.ops[1], &k) && (k & 31) == 0))
        return Val::Warp;
      // tid.x compared with a multiple of 32: the same in the lanes of a warp.
      if (op == "setp" && !in.mods.empty() && (a == Val::TidX) != (b == Val::TidX)) {
        std::string cmp = in.mods[0];
        const bool swapped = b == Val::TidX;
        if (imm(in.ops[swapped ? 1 : 2], &k)) {
          if (swapped) {  // k cmp x  ==  x cmp' k
            static const std::unordered_map<std::string, std::string> flip = {{"lt", "gt"}, {"gt", "lt"}, {"le", "ge"},
                                                                              {"ge", "le"}, {"lo", "hi"}, {"hi", "lo"},
                                                                              {"ls", "hs"}, {"hs", "ls"}};
            auto it = flip.find(cmp);
            cmp = it == flip.end() ? std::string() : it->second;
          }
          const bool below = cmp == "lt" || cmp == "ge" || cmp == "lo" || cmp == "hs";  // x < k
          const bool above = cmp == "gt" || cmp == "le" || cmp == "hi" || cmp == "ls";  // x <= k
          if ((below && k % 32 == 0) || (above && (k + 1) % 32 == 0)) {
            Val v = Val::Warp;
            for (size_t i = 3; i < in.ops.size(); ++i) v = join(v, plain(value(in.ops[i])));
            return v;
          }
        }
      }
    }
    return sources();
  }

  const ptx::Module& m_;
  const ptx::Function& f_;
  std::unordered_map<std::string, Val> regs_;
  std::unordered_set<std::string> params_;
  std::unordered_map<std::string, bool> meets_;
};

}  // namespace

MeetingAnalysis analyze_meetings(const ptx::Module& module, const ptx::Function& kernel) {
  return Analysis(module, kernel).run();
}

}  // namespace fg::kernels
