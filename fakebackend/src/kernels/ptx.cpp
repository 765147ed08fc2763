// SPDX-License-Identifier: Apache-2.0
// The small helpers of the PTX module model (ptx.h); the parser is ptx_parser.cpp.
#include "kernels/ptx.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

namespace fg::ptx {
namespace {

struct TypeInfo {
  Type type;
  std::string_view name;
  unsigned size;
};

constexpr std::array<TypeInfo, 22> kTypes{{
    {Type::None, "", 0},       {Type::Pred, "pred", 1}, {Type::B8, "b8", 1},         {Type::B16, "b16", 2},
    {Type::B32, "b32", 4},     {Type::B64, "b64", 8},   {Type::B128, "b128", 16},    {Type::U8, "u8", 1},
    {Type::U16, "u16", 2},     {Type::U32, "u32", 4},   {Type::U64, "u64", 8},       {Type::S8, "s8", 1},
    {Type::S16, "s16", 2},     {Type::S32, "s32", 4},   {Type::S64, "s64", 8},       {Type::F16, "f16", 2},
    {Type::F16x2, "f16x2", 4}, {Type::BF16, "bf16", 2}, {Type::BF16x2, "bf16x2", 4}, {Type::TF32, "tf32", 4},
    {Type::F32, "f32", 4},     {Type::F64, "f64", 8},
}};

// a × b, saturating at the largest uint64_t: sizes of absurd declarations stay absurd
// instead of wrapping to something small.
uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}

}  // namespace

unsigned type_size(Type t) noexcept {
  const auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].size : 0;
}

Type type_from_name(std::string_view s) noexcept {
  if (!s.empty() && s.front() == '.') s.remove_prefix(1);
  if (s.empty()) return Type::None;
  for (const TypeInfo& t : kTypes)
    if (t.name == s) return t.type;
  return Type::None;
}

std::string_view type_name(Type t) noexcept {
  const auto i = static_cast<size_t>(t);
  return i < kTypes.size() ? kTypes[i].name : std::string_view();
}

bool Instruction::has_mod(std::string_view m) const noexcept {
  for (const std::string& x : mods)
    if (x == m) return true;
  return false;
}

uint64_t Variable::elements() const noexcept {
  uint64_t n = vector;
  for (uint64_t d : dims) n = mul_sat(n, d);
  return n;
}

uint64_t Variable::bytes() const noexcept { return mul_sat(elements(), type_size(type)); }

uint64_t Param::bytes() const noexcept { return array ? mul_sat(array, type_size(type)) : type_size(type); }

const Function* Module::find_function(std::string_view name) const noexcept {
  const Function* declared = nullptr;
  for (const Function& f : functions) {
    if (f.name != name) continue;
    if (f.has_body) return &f;
    if (!declared) declared = &f;
  }
  return declared;
}

std::string unit_local_name(std::string_view name, size_t unit) {
  return std::string(name) + "$unit" + std::to_string(unit);
}

namespace {
// Names of external linkage a unit defines: kernels, functions with a body and variables that
// are neither internal nor .extern.
bool external_function(const Function& f) { return f.has_body && (f.entry || f.linkage != Linkage::Internal); }
bool external_variable(const Variable& v) { return v.linkage != Linkage::Internal && v.linkage != Linkage::Extern; }
bool weak(Linkage l) { return l == Linkage::Weak || l == Linkage::Common; }

// Calls fn(name) for every symbol a function body or an initializer names.
template <class F>
void each_use(const Module& m, F&& fn) {
  auto operand = [&](auto& self, const Operand& o) -> void {
    if (o.kind == Operand::Kind::Symbol) fn(o.name);
    for (const Operand& e : o.elems) self(self, e);
  };
  auto inits = [&](const Variable& v) {
    for (const Variable::Init& i : v.init)
      if (!i.symbol.empty()) fn(i.symbol);
  };
  for (const Variable& v : m.globals) inits(v);
  for (const Function& f : m.functions) {
    for (const Variable& v : f.locals) inits(v);
    for (const Statement& s : f.body)
      if (s.kind == Statement::Kind::Instruction)
        for (const Operand& o : s.insn.ops) operand(operand, o);
  }
}

// Gives unit `u`'s internal names (those `only` holds, when given) a suffix of their own,
// everywhere they are used. Kernels keep their names: they are external whatever the PTX says.
void rename_internal(Module& m, size_t u, const std::set<std::string>* only = nullptr) {
  std::set<std::string> internal;
  auto consider = [&](const std::string& name) {
    if (!only || only->count(name)) internal.insert(name);
  };
  for (const Variable& v : m.globals)
    if (v.linkage == Linkage::Internal) consider(v.name);
  for (const Function& f : m.functions)
    if (f.linkage == Linkage::Internal && !f.entry) consider(f.name);
  if (internal.empty()) return;
  auto rename = [&](std::string& n) {
    if (internal.count(n)) n = unit_local_name(n, u);
  };
  auto operand = [&](auto& self, Operand& o) -> void {
    if (o.kind == Operand::Kind::Reg || o.kind == Operand::Kind::Symbol) rename(o.name);
    for (Operand& e : o.elems) self(self, e);
  };
  auto inits = [&](Variable& v) {
    for (Variable::Init& i : v.init)
      if (!i.symbol.empty()) rename(i.symbol);
  };
  for (Variable& v : m.globals) {
    rename(v.name);
    inits(v);
  }
  for (Function& f : m.functions) {
    rename(f.name);
    for (Variable& v : f.locals) inits(v);
    for (Statement& s : f.body)
      if (s.kind == Statement::Kind::Instruction)
        for (Operand& o : s.insn.ops) operand(operand, o);
  }
}
}  // namespace

Symbols symbols(const Module& m) {
  Symbols s;
  std::set<std::string> bodies, declared, defined_here;
  for (const Function& f : m.functions) {
    if (!f.has_body) continue;
    bodies.insert(f.name);
    if (external_function(f)) s.defined.push_back({f.name, weak(f.linkage)});
  }
  for (const Variable& v : m.globals) {
    if (v.linkage == Linkage::Extern) continue;
    defined_here.insert(v.name);
    if (external_variable(v)) s.defined.push_back({v.name, weak(v.linkage)});
  }
  for (const Function& f : m.functions)
    if (!f.has_body && !bodies.count(f.name)) declared.insert(f.name);
  for (const Variable& v : m.globals)
    if (v.linkage == Linkage::Extern && v.space != Space::Shared && !defined_here.count(v.name))
      declared.insert(v.name);
  std::set<std::string> listed;
  each_use(m, [&](const std::string& name) {
    if (declared.count(name) && listed.insert(name).second) s.undefined.push_back(name);
  });
  return s;
}

std::optional<Module> link(std::vector<Module> units, std::string* error) {
  if (units.empty()) {
    *error = "no PTX to link";
    return std::nullopt;
  }
  // The definition each external name resolves to: (unit, weak) of the one strong definition,
  // else of the first weak one.
  struct Choice {
    size_t unit;
    bool weak;
  };
  std::map<std::string, Choice> functions, variables;
  auto define = [&](std::map<std::string, Choice>& defs, const std::string& name, size_t u, bool is_weak,
                    const char* what) {
    auto [it, fresh] = defs.try_emplace(name, Choice{u, is_weak});
    if (fresh || is_weak) return true;
    if (it->second.weak) {
      it->second = {u, false};
      return true;
    }
    *error = std::string(what) + " " + name + " is defined in two translation units";
    return false;
  };
  std::set<std::string> external;
  for (size_t u = 0; u < units.size(); ++u) {
    for (const Function& f : units[u].functions)
      if (external_function(f)) {
        if (!define(functions, f.name, u, weak(f.linkage), "function")) return std::nullopt;
        if (u > 0) external.insert(f.name);
      }
    for (const Variable& v : units[u].globals)
      if (external_variable(v)) {
        if (!define(variables, v.name, u, weak(v.linkage), "variable")) return std::nullopt;
        if (u > 0) external.insert(v.name);
      }
  }
  // The first unit's internal names keep their spelling unless another unit defines the same
  // name externally; the other units' are always renamed.
  rename_internal(units[0], 0, &external);
  for (size_t u = 1; u < units.size(); ++u) rename_internal(units[u], u);
  Module out;
  out.version_major = units[0].version_major;
  out.version_minor = units[0].version_minor;
  out.target = units[0].target;
  out.target_options = units[0].target_options;
  out.address_size = units[0].address_size;
  // Declarations go where some unit defines the name (after the renaming); the others stay,
  // once, for the runtime to resolve (vprintf, malloc …).
  std::set<std::string> bodies, storage;
  for (const Module& m : units) {
    for (const Function& f : m.functions)
      if (f.has_body) bodies.insert(f.name);
    for (const Variable& v : m.globals)
      if (v.linkage != Linkage::Extern) storage.insert(v.name);
  }
  std::set<std::string> declared, placed;
  for (size_t u = 0; u < units.size(); ++u) {
    for (Function& f : units[u].functions) {
      if (f.has_body) {
        const auto chosen = functions.find(f.name);
        const bool mine = chosen == functions.end() || chosen->second.unit == u;  // internal, or the chosen one
        if (mine && placed.insert(f.name).second) out.functions.push_back(std::move(f));
      } else if (!bodies.count(f.name) && declared.insert(f.name).second) {
        out.functions.push_back(std::move(f));
      }
    }
    for (Variable& v : units[u].globals) {
      if (v.linkage != Linkage::Extern) {
        const auto chosen = variables.find(v.name);
        const bool mine = chosen == variables.end() || chosen->second.unit == u;
        if (mine && placed.insert(v.name).second) out.globals.push_back(std::move(v));
      } else if (!storage.count(v.name) && declared.insert(v.name).second) {
        out.globals.push_back(std::move(v));
      }
    }
  }
  return out;
}

const Variable* Module::find_global(std::string_view name) const noexcept {
  for (const Variable& v : globals)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace fg::ptx
