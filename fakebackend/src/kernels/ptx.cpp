// SPDX-License-Identifier: Apache-2.0
// The small helpers of the PTX module model (ptx.h); the parser is ptx_parser.cpp.
#include "kernels/ptx.h"

#include <array>
#include <cstdint>
#include <limits>
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

namespace {
// Gives unit `u`'s internal names a suffix of their own, everywhere they are used.
void rename_internal(Module& m, size_t u) {
  std::set<std::string> internal;
  for (const Variable& v : m.globals)
    if (v.linkage == Linkage::Internal) internal.insert(v.name);
  for (const Function& f : m.functions)
    if (f.linkage == Linkage::Internal) internal.insert(f.name);
  if (internal.empty()) return;
  const std::string suffix = "$unit" + std::to_string(u);
  auto rename = [&](std::string& n) {
    if (internal.count(n)) n += suffix;
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

std::optional<Module> link(std::vector<Module> units, std::string* error) {
  if (units.empty()) {
    *error = "no PTX to link";
    return std::nullopt;
  }
  for (size_t u = 1; u < units.size(); ++u) rename_internal(units[u], u);
  // The definitions: functions with a body, variables not declared .extern.
  std::set<std::string> functions, variables;
  for (const Module& m : units) {
    for (const Function& f : m.functions)
      if (f.has_body && !functions.insert(f.name).second && f.linkage != Linkage::Weak) {
        *error = "function " + f.name + " is defined in two translation units";
        return std::nullopt;
      }
    for (const Variable& v : m.globals)
      if (v.linkage != Linkage::Extern && !variables.insert(v.name).second && v.linkage != Linkage::Weak &&
          v.linkage != Linkage::Common) {
        *error = "variable " + v.name + " is defined in two translation units";
        return std::nullopt;
      }
  }
  Module out;
  out.version_major = units[0].version_major;
  out.version_minor = units[0].version_minor;
  out.target = units[0].target;
  out.target_options = units[0].target_options;
  out.address_size = units[0].address_size;
  std::set<std::string> declared, placed;
  for (Module& m : units) {
    for (Function& f : m.functions) {
      if (f.has_body) {
        if (placed.insert(f.name).second) out.functions.push_back(std::move(f));
      } else if (!functions.count(f.name) && declared.insert(f.name).second) {
        out.functions.push_back(std::move(f));  // resolved by the runtime (vprintf, malloc …)
      }
    }
    for (Variable& v : m.globals) {
      const bool definition = v.linkage != Linkage::Extern;
      if (definition ? placed.insert(v.name).second : !variables.count(v.name) && declared.insert(v.name).second)
        out.globals.push_back(std::move(v));
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
