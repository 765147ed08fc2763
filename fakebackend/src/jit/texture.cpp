// SPDX-License-Identifier: Apache-2.0
#include "jit/texture.h"

#include "jit/errors.h"

#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace fg::jit::texture {
namespace {

using namespace llvm;
using kernels::SurfMode;
using kernels::TexGeom;
using kernels::TexQuery;
using ptx::Operand;
using PType = ptx::Type;

Function* runtime(IRBuilder<>& b, const char* name, Type* ret, std::vector<Type*> args) {
  Module* m = b.GetInsertBlock()->getModule();
  if (Function* f = m->getFunction(name)) return f;
  return Function::Create(FunctionType::get(ret, args, false), Function::ExternalLinkage, name, m);
}

// A buffer of `n` words of `bits` bits in the function's entry block (no stack growth in loops).
AllocaInst* buffer(IRBuilder<>& b, unsigned bits, unsigned n) {
  Function* f = b.GetInsertBlock()->getParent();
  IRBuilder<> eb(&f->getEntryBlock(), f->getEntryBlock().begin());
  AllocaInst* a = eb.CreateAlloca(ArrayType::get(b.getIntNTy(bits), n));
  a->setAlignment(Align(16));
  return a;
}

// Word i of a buffer.
Value* word(IRBuilder<>& b, AllocaInst* buf, unsigned i) {
  return b.CreateConstInBoundsGEP2_32(buf->getAllocatedType(), buf, 0, i);
}

std::string mods_of(const ptx::Instruction& in) {
  std::string s = in.opcode;
  for (const std::string& m : in.mods) s += "." + m;
  return s;
}

TexGeom geometry(const ptx::Instruction& in) {
  for (const std::string& m : in.mods) {
    if (m == "1d") return TexGeom::D1;
    if (m == "2d") return TexGeom::D2;
    if (m == "3d") return TexGeom::D3;
    if (m == "a1d") return TexGeom::A1;
    if (m == "a2d") return TexGeom::A2;
    if (m == "cube" || m == "acube" || m == "2dms" || m == "a2dms")
      unsupported("uses " + mods_of(in) + " (cube map and multisample textures)");
  }
  malformed(in, "no geometry (.1d, .2d, .3d, .a1d, .a2d)");
}

// The object handle of `[handle, …]`: a register holding a texture or surface object.
Value* handle_of(Access& io, const Operand& addr, const ptx::Instruction& in) {
  if (addr.kind != Operand::Kind::Address || addr.elems.empty()) malformed(in, "expected [handle, {coordinates}]");
  const Operand& h = addr.elems[0];
  if (h.kind != Operand::Kind::Reg)
    unsupported("uses " + in.opcode + " on a texture or surface reference (" + h.name + "), not an object");
  return io.read(h, PType::U64, in);
}

// The coordinate vector of `[handle, {…}]` as four raw 32-bit words in a buffer.
AllocaInst* coordinates(IRBuilder<>& b, Access& io, const Operand& addr, const ptx::Instruction& in) {
  if (addr.elems.size() != 2) malformed(in, "expected [handle, {coordinates}]");
  const Operand& c = addr.elems[1];
  std::vector<const Operand*> parts;
  if (c.kind == Operand::Kind::Vector) {
    for (const Operand& e : c.elems) parts.push_back(&e);
  } else {
    parts.push_back(&c);
  }
  if (parts.empty() || parts.size() > 4) malformed(in, "1 to 4 coordinates");
  AllocaInst* buf = buffer(b, 32, 4);
  for (unsigned i = 0; i < 4; ++i) {
    Value* v = i < parts.size() && parts[i]->kind != Operand::Kind::Sink ? io.read(*parts[i], PType::B32, in)
                                                                         : b.getInt32(0);
    b.CreateStore(v, word(b, buf, i));
  }
  return buf;
}

// The destination vector of a tex/tld4 (`{d0, d1, d2, d3}`, or `{…}|p`).
const Operand& results(IRBuilder<>& b, Access& io, const ptx::Instruction& in) {
  const Operand& d = in.ops.at(0);
  if (d.kind == Operand::Kind::Pair) {
    // The texel is resident: the fake has no sparse textures.
    if (d.elems.size() == 2) io.write(d.elems[1], PType::Pred, b.getTrue(), in);
    return d.elems.at(0);
  }
  return d;
}

void tex(IRBuilder<>& b, Access& io, const ptx::Instruction& in) {
  const bool gather = in.opcode == "tld4";
  if (in.types.size() != 2) malformed(in, "expected a result and a coordinate type");
  const PType dt = in.types[0], ct = in.types[1];
  if (!in.has_mod("v4") || (dt != PType::F32 && dt != PType::S32 && dt != PType::U32))
    unsupported("uses " + mods_of(in) + "." + std::string(ptx::type_name(dt)) + " (only .v4 of f32, s32, u32)");
  if (ct != PType::F32 && ct != PType::S32) malformed(in, "coordinates are .f32 or .s32");
  // tex.level's level and tex.grad's gradients choose a mipmap level: arrays have one.
  const size_t extra = in.has_mod("level") ? 1 : in.has_mod("grad") ? 2 : 0;
  if (in.ops.size() != 2 + extra) unsupported("uses " + mods_of(in) + " with a texel offset or a depth comparison");
  uint32_t op = static_cast<uint32_t>(geometry(in));
  if (ct == PType::S32) op |= kernels::kTexIntCoords;
  if (gather) {
    static const char* kComponents[4] = {"r", "g", "b", "a"};
    uint32_t comp = 0;
    for (uint32_t i = 0; i < 4; ++i)
      if (in.has_mod(kComponents[i])) comp = i + 1;
    if (comp == 0) malformed(in, "tld4 names no component (.r, .g, .b, .a)");
    if (ct != PType::F32) malformed(in, "tld4 takes .f32 coordinates");
    op |= comp << kernels::kTexGatherShift;
  }
  const Operand& addr = in.ops.at(1);
  Value* h = handle_of(io, addr, in);
  AllocaInst* coords = coordinates(b, io, addr, in);
  AllocaInst* out = buffer(b, 32, 4);
  Type* i32p = PointerType::getUnqual(b.getInt32Ty());
  Value* env = io.env();
  Value* r = b.CreateCall(
      runtime(b, "fg_rt_tex", b.getInt32Ty(), {env->getType(), b.getInt64Ty(), b.getInt32Ty(), i32p, i32p}),
      {env, h, b.getInt32(op), b.CreateBitCast(word(b, coords, 0), i32p), b.CreateBitCast(word(b, out, 0), i32p)});
  io.stop_unless(b.CreateICmpNE(r, b.getInt32(0)));
  const Operand& d = results(b, io, in);
  if (d.kind != Operand::Kind::Vector || d.elems.size() != 4) malformed(in, "expected four results {…}");
  for (unsigned i = 0; i < 4; ++i) io.write(d.elems[i], PType::B32, b.CreateLoad(b.getInt32Ty(), word(b, out, i)), in);
}

void surface(IRBuilder<>& b, Access& io, const ptx::Instruction& in) {
  const bool store = in.opcode == "sust";
  if (!in.has_mod("b")) unsupported("uses " + mods_of(in) + " (formatted surface access)");
  if (in.types.size() != 1) malformed(in, "expected one type");
  const PType t = in.types[0];
  const unsigned size = ptx::type_size(t);
  if (t != PType::B8 && t != PType::B16 && t != PType::B32 && t != PType::B64) malformed(in, "expected .b8 … .b64");
  const unsigned n = in.has_mod("v4") ? 4 : in.has_mod("v2") ? 2 : 1;
  const SurfMode mode = in.has_mod("clamp") ? SurfMode::Clamp : in.has_mod("zero") ? SurfMode::Zero : SurfMode::Trap;
  const uint32_t op = static_cast<uint32_t>(geometry(in)) | static_cast<uint32_t>(mode) << kernels::kSurfModeShift |
                      (store ? kernels::kSurfStore : 0) | (size * n) << kernels::kSurfBytesShift;
  const Operand& addr = in.ops.at(store ? 0 : 1);
  const Operand& data = in.ops.at(store ? 1 : 0);
  std::vector<const Operand*> parts;
  if (data.kind == Operand::Kind::Vector) {
    for (const Operand& e : data.elems) parts.push_back(&e);
  } else {
    parts.push_back(&data);
  }
  if (parts.size() != n) malformed(in, "expected " + std::to_string(n) + " values");
  Value* h = handle_of(io, addr, in);
  AllocaInst* coords = coordinates(b, io, addr, in);
  AllocaInst* buf = buffer(b, size * 8, 4);
  if (store)
    for (unsigned i = 0; i < n; ++i) b.CreateStore(io.read(*parts[i], t, in), word(b, buf, i));
  Type* i32p = PointerType::getUnqual(b.getInt32Ty());
  Value* env = io.env();
  Value* r = b.CreateCall(runtime(b, "fg_rt_surf", b.getInt32Ty(),
                                  {env->getType(), b.getInt64Ty(), b.getInt32Ty(), i32p, b.getInt8PtrTy()}),
                          {env, h, b.getInt32(op), b.CreateBitCast(word(b, coords, 0), i32p),
                           b.CreateBitCast(word(b, buf, 0), b.getInt8PtrTy())});
  io.stop_unless(b.CreateICmpNE(r, b.getInt32(0)));
  if (!store)
    for (unsigned i = 0; i < n; ++i) io.write(*parts[i], t, b.CreateLoad(b.getIntNTy(size * 8), word(b, buf, i)), in);
}

void query(IRBuilder<>& b, Access& io, const ptx::Instruction& in) {
  const bool surf = in.opcode == "suq";
  static const std::pair<const char*, TexQuery> kQueries[] = {
      {"width", TexQuery::Width},
      {"height", TexQuery::Height},
      {"depth", TexQuery::Depth},
      {"normalized_coords", TexQuery::NormalizedCoords},
      {"filter_mode", TexQuery::FilterMode},
      {"addr_mode_0", TexQuery::AddrMode0},
      {"addr_mode_1", TexQuery::AddrMode1},
      {"addr_mode_2", TexQuery::AddrMode2},
      {"array_size", TexQuery::ArraySize},
      {"num_mipmap_levels", TexQuery::NumMipmapLevels},
      {"num_samples", TexQuery::NumSamples},
  };
  int what = -1;
  for (const auto& [name, q] : kQueries)
    if (in.has_mod(name)) what = static_cast<int>(q);
  if (what < 0 || (surf && what > static_cast<int>(TexQuery::Depth) && what != static_cast<int>(TexQuery::ArraySize)))
    unsupported("uses " + mods_of(in) + " (a channel or layout query)");
  Value* h = handle_of(io, in.ops.at(1), in);
  AllocaInst* out = buffer(b, 32, 1);
  Type* i32p = PointerType::getUnqual(b.getInt32Ty());
  Value* env = io.env();
  Value* r = b.CreateCall(
      runtime(b, "fg_rt_texq", b.getInt32Ty(), {env->getType(), b.getInt64Ty(), b.getInt32Ty(), b.getInt32Ty(), i32p}),
      {env, h, b.getInt32(static_cast<uint32_t>(what)), b.getInt32(surf ? 1 : 0),
       b.CreateBitCast(word(b, out, 0), i32p)});
  io.stop_unless(b.CreateICmpNE(r, b.getInt32(0)));
  io.write(in.ops.at(0), PType::B32, b.CreateLoad(b.getInt32Ty(), word(b, out, 0)), in);
}

}  // namespace

bool handles(const ptx::Instruction& in) {
  const std::string& op = in.opcode;
  return op == "tex" || op == "tld4" || op == "txq" || op == "suld" || op == "sust" || op == "suq";
}

void lower(IRBuilder<>& b, Access& io, const ptx::Instruction& in) {
  const std::string& op = in.opcode;
  if (op == "tex" || op == "tld4") return tex(b, io, in);
  if (op == "suld" || op == "sust") return surface(b, io, in);
  return query(b, io, in);
}

}  // namespace fg::jit::texture
