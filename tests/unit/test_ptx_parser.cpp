// SPDX-License-Identifier: Apache-2.0
// The PTX parser (kernels/ptx.h): declarations, operands, scopes and errors on small texts, and
// every fixture nvcc 13.0 made (tests/unit/fixtures/ptx), whole and truncated.
#include "kernels/ptx.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace fg::ptx;
using Kind = Operand::Kind;

namespace {

constexpr const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

Module must_parse(const std::string& text) {
  ParseError e;
  auto m = parse(text, &e);
  INFO(e.message);
  REQUIRE(m.has_value());
  return std::move(*m);
}

// The one function of a module made of the header and `text`.
Function one_function(const std::string& text) {
  Module m = must_parse(kHeader + text);
  REQUIRE(m.functions.size() == 1);
  return std::move(m.functions[0]);
}

// The instructions of a kernel whose body is `body`.
std::vector<Instruction> insns(const std::string& body) {
  Function f = one_function(".visible .entry k()\n{\n" + body + "\n}\n");
  std::vector<Instruction> out;
  for (Statement& s : f.body)
    if (s.kind == Statement::Kind::Instruction) out.push_back(std::move(s.insn));
  return out;
}

Instruction one_insn(const std::string& line) {
  auto v = insns(line);
  REQUIRE(v.size() == 1);
  return std::move(v[0]);
}

ParseError must_fail(const std::string& text) {
  ParseError e;
  auto m = parse(text, &e);
  REQUIRE_FALSE(m.has_value());
  INFO(e.message);
  CHECK(e.line > 0);
  CHECK(e.column > 0);
  // The message starts with where it happened.
  CHECK(e.message.rfind("line " + std::to_string(e.line) + ", column " + std::to_string(e.column) + ": ", 0) == 0);
  return e;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> fixtures() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(FAKEGPU_SOURCE_DIR "/tests/unit/fixtures/ptx"))
    if (e.path().extension() == ".ptx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

const Variable* local(const Function& f, const std::string& name) {
  for (const Variable& v : f.locals)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

TEST_CASE("PTX types: names, sizes and the model's helpers", "[ptx]") {
  CHECK(type_from_name("u32") == Type::U32);
  CHECK(type_from_name(".f16x2") == Type::F16x2);
  CHECK(type_from_name("bf16x2") == Type::BF16x2);
  CHECK(type_from_name("pred") == Type::Pred);
  CHECK(type_from_name("b128") == Type::B128);
  CHECK(type_from_name("global") == Type::None);
  CHECK(type_from_name("") == Type::None);
  CHECK(type_from_name(".") == Type::None);
  CHECK(type_name(Type::S64) == "s64");
  CHECK(type_name(Type::TF32) == "tf32");
  CHECK(type_name(Type::None).empty());
  CHECK(type_size(Type::Pred) == 1);
  CHECK(type_size(Type::B128) == 16);
  CHECK(type_size(Type::F16) == 2);
  CHECK(type_size(Type::BF16x2) == 4);
  CHECK(type_size(Type::F64) == 8);
  CHECK(type_size(Type::None) == 0);

  Variable v;
  v.type = Type::F32;
  CHECK(v.elements() == 1);
  CHECK(v.bytes() == 4);
  v.vector = 4;
  v.dims = {3, 2};
  CHECK(v.elements() == 24);
  CHECK(v.bytes() == 96);
  v.dims = {1ull << 40, 1ull << 40};  // saturates instead of wrapping
  CHECK(v.bytes() == UINT64_MAX);

  Param p;
  p.type = Type::B8;
  p.array = 4104;
  CHECK(p.bytes() == 4104);
  p.array = 0;
  p.type = Type::U64;
  CHECK(p.bytes() == 8);

  Instruction in;
  in.mods = {"sync", "ballot"};
  CHECK(in.has_mod("ballot"));
  CHECK_FALSE(in.has_mod("any"));
}

TEST_CASE("PTX module header: version, target list and address size", "[ptx]") {
  Module m = must_parse(
      "//\n// Generated\n//\n\n.version 8.7\n.target sm_90a, texmode_independent, debug\n"
      ".address_size 32\n");
  CHECK(m.version_major == 8);
  CHECK(m.version_minor == 7);
  CHECK(m.target == "sm_90a");
  CHECK(m.target_options == std::vector<std::string>{"texmode_independent", "debug"});
  CHECK(m.address_size == 32);
  CHECK(m.functions.empty());
  CHECK(m.globals.empty());

  Module empty = must_parse("");
  CHECK(empty.address_size == 64);
  CHECK(empty.target.empty());
}

TEST_CASE("PTX module variables: spaces, alignment, arrays and initialisers", "[ptx]") {
  Module m = must_parse(std::string(kHeader) +
                        ".global .align 4 .u32 g_counter = 42;\n"
                        ".global .align 4 .s32 v[3] = {1, -2, 0x10};\n"
                        ".const .align 4 .f32 scale[3] = {0f3FA00000, 0fC0800000, 2.5};\n"
                        ".const .align 8 .f64 pi = 0d400921FB54442D18;\n"
                        ".global .f64 tenth = 0.1;\n"
                        ".global .align 2 .f16 h = 1.5;\n"
                        ".global .f32 huge[2] = {1e300, 0dFFEFFFFFFFFFFFFF};\n"
                        ".global .bf16 bh[3] = {1.5, -2, 0f3F808000};\n"
                        ".global .align 1 .b8 bytes[4] = {255, -1, 7};\n"
                        ".visible .global .align 4 .b32 grid[2][3] = {{1, 2, 3}, {4, 5, 6}};\n"
                        ".global .align 16 .v4 .f32 vec = {0f3F800000, 0f40000000, 0f40400000, 0f40800000};\n"
                        ".global .align 4 .u32 sized[] = {1, 2, 3, 4, 5};\n"
                        ".global .align 1 .b8 $str[6] = {104, 101, 108, 108, 111};\n"
                        ".global .align 8 .u64 table_ptr = generic(v)+8;\n"
                        ".global .align 8 .u64 greeting = generic($str);\n"
                        ".global .align 8 .u64 ops[2] = {k, v+4};\n"
                        ".extern .shared .align 16 .b8 dyn[];\n"
                        ".weak .global .align 4 .u32 weakling;\n"
                        ".common .global .align 4 .u32 common_one;\n"
                        ".shared .align 4 .b8 tile[1024];\n"
                        ".local .align 8 .b8 depot[24];\n"
                        ".global .attribute(.managed) .align 4 .u32 managed_one;\n"
                        ".global .texref tex_a;\n"
                        ".global .surfref surf_a;\n"
                        ".global .samplerref samp = { addr_mode_0 = wrap, filter_mode = linear };\n"
                        ".tex .u64 tex_b;\n"
                        ".entry k() { ret; }\n");
  REQUIRE(m.globals.size() == 26);

  const Variable* c = m.find_global("g_counter");
  REQUIRE(c);
  CHECK(c->space == Space::Global);
  CHECK(c->type == Type::U32);
  CHECK(c->align == 4);
  CHECK(c->linkage == Linkage::Internal);
  CHECK_FALSE(c->is_array);
  CHECK(c->has_init);
  REQUIRE(c->init.size() == 1);
  CHECK(c->init[0].bits == 42);
  CHECK(c->line == 4);

  const Variable* v = m.find_global("v");
  REQUIRE(v);
  CHECK(v->dims == std::vector<uint64_t>{3});
  REQUIRE(v->init.size() == 3);
  CHECK(v->init[1].bits == 0xFFFFFFFEu);  // -2 as 32 bits
  CHECK(v->init[2].bits == 16);
  CHECK(v->bytes() == 12);

  const Variable* s = m.find_global("scale");
  REQUIRE(s);
  CHECK(s->space == Space::Const);
  REQUIRE(s->init.size() == 3);
  CHECK(s->init[0].bits == 0x3FA00000);
  CHECK(s->init[1].bits == 0xC0800000);
  CHECK(s->init[2].bits == std::bit_cast<uint32_t>(2.5f));

  CHECK(m.find_global("pi")->init[0].bits == 0x400921FB54442D18ull);
  CHECK(m.find_global("tenth")->init[0].bits == std::bit_cast<uint64_t>(0.1));
  CHECK(m.find_global("h")->init[0].bits == 0x3E00);  // binary16 1.5
  const Variable* huge = m.find_global("huge");       // f64 values beyond f32's range: infinities
  REQUIRE(huge->init.size() == 2);
  CHECK(huge->init[0].bits == 0x7F800000);
  CHECK(huge->init[1].bits == 0xFF800000);
  const Variable* bh = m.find_global("bh");
  REQUIRE(bh->init.size() == 3);
  CHECK(bh->init[0].bits == 0x3FC0);
  CHECK(bh->init[1].bits == 0xC000);
  CHECK(bh->init[2].bits == 0x3F80);  // 1.00390625 rounds to even: 1.0

  const Variable* b = m.find_global("bytes");
  REQUIRE(b->init.size() == 3);
  CHECK(b->init[0].bits == 255);
  CHECK(b->init[1].bits == 255);
  CHECK(b->init[2].bits == 7);
  CHECK(b->elements() == 4);

  const Variable* g = m.find_global("grid");
  CHECK(g->linkage == Linkage::Visible);
  CHECK(g->dims == std::vector<uint64_t>{2, 3});
  REQUIRE(g->init.size() == 6);
  CHECK(g->init[5].bits == 6);
  CHECK(g->bytes() == 24);

  const Variable* vec = m.find_global("vec");
  CHECK(vec->vector == 4);
  CHECK(vec->align == 16);
  CHECK(vec->bytes() == 16);
  REQUIRE(vec->init.size() == 4);
  CHECK(vec->init[3].bits == 0x40800000);

  const Variable* sized = m.find_global("sized");
  CHECK(sized->dims == std::vector<uint64_t>{5});  // sized by its initialiser
  CHECK(sized->bytes() == 20);

  const Variable* tp = m.find_global("table_ptr");
  REQUIRE(tp->init.size() == 1);
  CHECK(tp->init[0].symbol == "v");
  CHECK(tp->init[0].offset == 8);
  CHECK(m.find_global("greeting")->init[0].symbol == "$str");
  CHECK(m.find_global("greeting")->init[0].offset == 0);
  const Variable* ops = m.find_global("ops");
  REQUIRE(ops->init.size() == 2);
  CHECK(ops->init[0].symbol == "k");
  CHECK(ops->init[1].symbol == "v");
  CHECK(ops->init[1].offset == 4);

  const Variable* dyn = m.find_global("dyn");
  CHECK(dyn->space == Space::Shared);
  CHECK(dyn->linkage == Linkage::Extern);
  CHECK(dyn->is_array);
  CHECK(dyn->dims == std::vector<uint64_t>{0});
  CHECK(dyn->bytes() == 0);
  CHECK_FALSE(dyn->has_init);

  CHECK(m.find_global("weakling")->linkage == Linkage::Weak);
  CHECK(m.find_global("common_one")->linkage == Linkage::Common);
  CHECK(m.find_global("tile")->space == Space::Shared);
  CHECK(m.find_global("depot")->space == Space::Local);
  CHECK(m.find_global("managed_one")->type == Type::U32);
  for (const char* t : {"tex_a", "surf_a", "samp"}) {
    INFO(t);
    REQUIRE(m.find_global(t));
    CHECK(m.find_global(t)->space == Space::Tex);
    CHECK(m.find_global(t)->type == Type::None);
    CHECK_FALSE(m.find_global(t)->has_init);
  }
  CHECK(m.find_global("tex_b")->space == Space::Tex);
  CHECK(m.find_global("tex_b")->type == Type::U64);
  CHECK(m.find_global("nothing") == nullptr);
}

TEST_CASE("PTX functions: parameters, returns, declarations and performance directives", "[ptx]") {
  Module m = must_parse(std::string(kHeader) +
                        ".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n"
                        "\t.param .b64 vprintf_param_1\n)\n;\n"
                        ".extern .func __assertfail(.param .b64 a) .noreturn;\n"
                        ".func (.param .align 16 .b8 ret[32]) pair(.reg .b32 x)\n{\n\tret;\n}\n"
                        ".visible .entry kern(\n"
                        "\t.param .align 8 .b8 kern_param_0[4104],\n"
                        "\t.param .u64 .ptr .global .align 4 kern_param_1,\n"
                        "\t.param .u64 .ptr .align 1 kern_param_2,\n"
                        "\t.param .f32 kern_param_3\n)\n"
                        ".maxntid 256\n.minnctapersm 2\n.pragma \"nounroll\";\n{\n\tret;\n}\n"
                        ".entry req() .reqntid 32, 4 .maxnreg 64 .maxclusterrank 8 .explicitcluster\n"
                        ".reqnctapercluster 2, 1, 1\n{\n\texit;\n}\n"
                        ".func pair(.reg .b32 x);\n"
                        ".weak .func weakf() { ret; }\n");
  REQUIRE(m.functions.size() == 7);

  const Function& vp = m.functions[0];
  CHECK(vp.name == "vprintf");
  CHECK_FALSE(vp.entry);
  CHECK(vp.linkage == Linkage::Extern);
  CHECK_FALSE(vp.has_body);
  REQUIRE(vp.returns.size() == 1);
  CHECK(vp.returns[0].name == "func_retval0");
  CHECK(vp.returns[0].type == Type::B32);
  CHECK(vp.returns[0].space == Space::Param);
  REQUIRE(vp.params.size() == 2);
  CHECK(vp.params[1].name == "vprintf_param_1");
  CHECK(vp.params[1].type == Type::B64);
  CHECK(vp.line == 4);

  CHECK(m.functions[1].noreturn);
  CHECK(m.functions[1].name == "__assertfail");

  const Function* pair = m.find_function("pair");
  REQUIRE(pair);
  CHECK(pair->has_body);  // the definition, though a declaration follows
  CHECK(pair == &m.functions[2]);
  REQUIRE(pair->returns.size() == 1);
  CHECK(pair->returns[0].align == 16);
  CHECK(pair->returns[0].array == 32);
  CHECK(pair->returns[0].bytes() == 32);
  REQUIRE(pair->params.size() == 1);
  CHECK(pair->params[0].space == Space::Reg);
  CHECK(pair->params[0].type == Type::B32);

  const Function& k = m.functions[3];
  CHECK(k.entry);
  CHECK(k.linkage == Linkage::Visible);
  REQUIRE(k.params.size() == 4);
  CHECK(k.params[0].align == 8);
  CHECK(k.params[0].type == Type::B8);
  CHECK(k.params[0].array == 4104);
  CHECK(k.params[0].bytes() == 4104);
  CHECK(k.params[1].type == Type::U64);
  CHECK(k.params[1].ptr_space == Space::Global);
  CHECK(k.params[1].ptr_align == 4);
  CHECK(k.params[1].align == 0);
  CHECK(k.params[2].ptr_space == Space::Generic);
  CHECK(k.params[2].ptr_align == 1);
  CHECK(k.params[3].ptr_space == Space::None);
  CHECK(k.params[3].type == Type::F32);
  CHECK(k.maxntid[0] == 256);
  CHECK(k.maxntid[1] == 1);
  CHECK(k.maxntid[2] == 1);
  CHECK(k.minnctapersm == 2);
  CHECK(k.reqntid[0] == 0);
  CHECK(k.has_body);

  const Function& r = m.functions[4];
  CHECK(r.linkage == Linkage::Internal);
  CHECK(r.reqntid[0] == 32);
  CHECK(r.reqntid[1] == 4);
  CHECK(r.reqntid[2] == 1);
  CHECK(r.maxnreg == 64);
  CHECK(r.maxclusterrank == 8);
  CHECK(r.reqnctapercluster[0] == 2);
  CHECK(r.reqnctapercluster[1] == 1);
  CHECK(r.maxntid[0] == 0);

  CHECK_FALSE(m.functions[5].has_body);
  CHECK(m.functions[6].linkage == Linkage::Weak);
  CHECK(m.find_function("missing") == nullptr);
}

TEST_CASE("PTX register declarations: ranges expand, lists and scalars are kept", "[ptx]") {
  Function f = one_function(
      ".visible .entry k()\n{\n\t.reg .pred \t%p<3>;\n\t.reg .b32 \t%r<4>;\n\t.reg .b64 %rd<1>;\n"
      "\t.reg .u32 %a0, %a1;\n\t.reg .f32 %single;\n\t.reg .v2 .f32 %vv;\n"
      "\t.local .align 8 .b8 \t__local_depot0[24];\n\t.shared .align 4 .u32 s_count;\n\tret;\n}\n");
  std::vector<std::string> names;
  for (const Variable& v : f.locals) names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"%p0", "%p1", "%p2", "%r0", "%r1", "%r2", "%r3", "%rd0", "%a0", "%a1",
                                          "%single", "%vv", "__local_depot0", "s_count"});
  CHECK(f.locals[0].space == Space::Reg);
  CHECK(f.locals[0].type == Type::Pred);
  CHECK(f.locals[6].type == Type::B32);
  CHECK(f.locals[7].type == Type::B64);
  CHECK(f.locals[8].type == Type::U32);
  CHECK(f.locals[11].vector == 2);
  CHECK(f.locals[12].space == Space::Local);
  CHECK(f.locals[12].bytes() == 24);
  CHECK(f.locals[12].align == 8);
  CHECK(f.locals[13].space == Space::Shared);
}

TEST_CASE("PTX operands: registers, immediates, addresses, vectors, pairs and predicates", "[ptx]") {
  auto v = insns(
      "\t.reg .pred %p<2>;\n"
      "\tmov.u32 \t%r1, %tid.x;\n"                                        // 0
      "\tadd.s32 %r2, %r1, -1;\n"                                         // 1
      "\tmov.b32 %r3, 0xFFFFFFFF;\n"                                      // 2
      "\tmov.b32 %r3, 017;\n"                                             // 3
      "\tmov.b32 %r3, 0b101;\n"                                           // 4
      "\tmov.b32 %r3, 42U;\n"                                             // 5
      "\tmov.f32 %f1, 0f3F800000;\n"                                      // 6
      "\tmov.f64 %fd1, 0dBFF0000000000000;\n"                             // 7
      "\tmov.f64 %fd1, 1.5e-3;\n"                                         // 8
      "\tmov.f32 %f1, -0f3F800000;\n"                                     // 9
      "\tld.global.nc.v4.f32 {%f1, %f2, _, %f4}, [%rd1+16];\n"            // 10
      "\tst.shared.u32 [%r5+-4], %r1;\n"                                  // 11
      "\tld.param.u64 %rd1, [k_param_0];\n"                               // 12
      "\tld.const.f32 %f1, [c_tab+12];\n"                                 // 13
      "\tld.global.u32 %r1, [64];\n"                                      // 14
      "\tshfl.sync.down.b32 \t%r4|%p1, %r2, 16, 31, -1;\n"                // 15
      "\t@%p1 bra \t$L__BB0_2;\n"                                         // 16
      "\t@!%p1 bra.uni $L__BB0_3;\n"                                      // 17
      "\tand.pred %p2, %p1, !%p0;\n"                                      // 18
      "\tmov.u64 %rd2, table+8;\n"                                        // 19
      "\tmov.b64 {%r1, %r2}, %rd1;\n"                                     // 20
      "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex_a, {%f5, %f6}];\n"  // 21
      "\tmov.u64 %rd3, generic(c_tab);\n"                                 // 22
      "\tret;\n"                                                          // 23
      "$L__BB0_2:\n$L__BB0_3:\n\texit;");
  REQUIRE(v.size() == 25);

  CHECK(v[0].ops[1].kind == Kind::Reg);
  CHECK(v[0].ops[1].name == "%tid.x");
  CHECK(v[1].ops[2].kind == Kind::Imm);
  CHECK(v[1].ops[2].imm == -1);
  CHECK(v[2].ops[1].imm == 0xFFFFFFFF);
  CHECK(v[3].ops[1].imm == 15);
  CHECK(v[4].ops[1].imm == 5);
  CHECK(v[5].ops[1].imm == 42);
  CHECK(v[6].ops[1].kind == Kind::FImm);
  CHECK(v[6].ops[1].fbits == 0x3F800000);
  CHECK_FALSE(v[6].ops[1].fdouble);
  CHECK(v[7].ops[1].fbits == 0xBFF0000000000000ull);
  CHECK(v[7].ops[1].fdouble);
  CHECK(v[8].ops[1].kind == Kind::FImm);
  CHECK(v[8].ops[1].fdouble);
  CHECK(v[8].ops[1].fbits == std::bit_cast<uint64_t>(1.5e-3));
  CHECK(v[9].ops[1].fbits == 0xBF800000);

  const Operand& vec = v[10].ops[0];
  CHECK(vec.kind == Kind::Vector);
  REQUIRE(vec.elems.size() == 4);
  CHECK(vec.elems[0].name == "%f1");
  CHECK(vec.elems[2].kind == Kind::Sink);
  CHECK(vec.elems[3].name == "%f4");
  const Operand& a = v[10].ops[1];
  CHECK(a.kind == Kind::Address);
  REQUIRE(a.elems.size() == 1);
  CHECK(a.elems[0].kind == Kind::Reg);
  CHECK(a.elems[0].name == "%rd1");
  CHECK(a.imm == 16);
  CHECK(v[10].mods == std::vector<std::string>{"global", "nc", "v4"});
  CHECK(v[10].types == std::vector<Type>{Type::F32});

  CHECK(v[11].ops[0].imm == -4);
  CHECK(v[11].ops[0].elems[0].name == "%r5");
  CHECK(v[12].ops[1].elems[0].kind == Kind::Symbol);
  CHECK(v[12].ops[1].elems[0].name == "k_param_0");
  CHECK(v[12].ops[1].imm == 0);
  CHECK(v[13].ops[1].elems[0].name == "c_tab");
  CHECK(v[13].ops[1].imm == 12);
  CHECK(v[14].ops[1].kind == Kind::Address);
  CHECK(v[14].ops[1].elems.empty());
  CHECK(v[14].ops[1].imm == 64);

  const Operand& pair = v[15].ops[0];
  CHECK(pair.kind == Kind::Pair);
  REQUIRE(pair.elems.size() == 2);
  CHECK(pair.elems[0].name == "%r4");
  CHECK(pair.elems[1].name == "%p1");
  REQUIRE(v[15].ops.size() == 5);
  CHECK(v[15].ops[4].imm == -1);

  CHECK(v[16].guard == "%p1");
  CHECK_FALSE(v[16].guard_negated);
  CHECK(v[16].opcode == "bra");
  CHECK(v[16].ops[0].kind == Kind::Label);
  CHECK(v[16].ops[0].name == "$L__BB0_2");
  CHECK(v[17].guard_negated);
  CHECK(v[17].mods == std::vector<std::string>{"uni"});
  CHECK(v[17].ops[0].kind == Kind::Label);

  CHECK_FALSE(v[18].ops[1].negate);
  CHECK(v[18].ops[2].negate);
  CHECK(v[18].ops[2].name == "%p0");
  CHECK(v[18].types == std::vector<Type>{Type::Pred});

  CHECK(v[19].ops[1].kind == Kind::Symbol);
  CHECK(v[19].ops[1].name == "table");
  CHECK(v[19].ops[1].imm == 8);
  CHECK(v[20].ops[0].kind == Kind::Vector);
  CHECK(v[20].ops[0].elems.size() == 2);

  const Operand& t = v[21].ops[1];
  REQUIRE(t.elems.size() == 2);
  CHECK(t.elems[0].kind == Kind::Symbol);
  CHECK(t.elems[0].name == "tex_a");
  CHECK(t.elems[1].kind == Kind::Vector);
  CHECK(t.elems[1].elems.size() == 2);
  CHECK(v[21].mods == std::vector<std::string>{"2d", "v4"});
  CHECK(v[21].types == std::vector<Type>{Type::F32, Type::F32});

  CHECK(v[22].ops[1].kind == Kind::Symbol);
  CHECK(v[22].ops[1].name == "c_tab");
  CHECK(v[23].opcode == "ret");
  CHECK(v[23].ops.empty());
  CHECK(v[24].opcode == "exit");
  CHECK(v[0].line == 7);  // header (3), .entry, '{', .reg
}

TEST_CASE("PTX opcodes: modifiers are split from types", "[ptx]") {
  struct Case {
    const char* text;
    const char* opcode;
    std::vector<std::string> mods;
    std::vector<Type> types;
  };
  const std::vector<Case> cases = {
      {"ld.global.nc.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];", "ld", {"global", "nc", "v4"}, {Type::F32}},
      {"setp.lt.and.s32 %p1, %r1, %r2, %p2;", "setp", {"lt", "and"}, {Type::S32}},
      {"cvt.rn.sat.f16.f32 %rs1, %f1;", "cvt", {"rn", "sat"}, {Type::F16, Type::F32}},
      {"atom.global.add.release.gpu.u32 %r1, [%rd1], 1;", "atom", {"global", "add", "release", "gpu"}, {Type::U32}},
      {"shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, -1;", "shfl", {"sync", "down"}, {Type::B32}},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
       "{%f5,%f6,%f7,%f8};",
       "mma",
       {"sync", "aligned", "m16n8k16", "row", "col"},
       {Type::F32, Type::F16, Type::F16, Type::F32}},
      {"vote.ballot.sync.b32 %r1, %p1, -1;", "vote", {"ballot", "sync"}, {Type::B32}},
      {"fma.rn.f16x2 %r1, %r2, %r3, %r4;", "fma", {"rn"}, {Type::F16x2}},
      {"cvt.rn.bf16x2.f32 %r1, %f1, %f2;", "cvt", {"rn"}, {Type::BF16x2, Type::F32}},
      {"ld.volatile.shared.b128 %rq1, [%r1];", "ld", {"volatile", "shared"}, {Type::B128}},
      {"bar.sync 0;", "bar", {"sync"}, {}},
      {"mul.wide.s32 %rd1, %r1, 4;", "mul", {"wide"}, {Type::S32}},
      {"cp.async.ca.shared.global [%r1], [%rd1], 16;", "cp", {"async", "ca", "shared", "global"}, {}},
      {"rcp.approx.ftz.f64 %fd1, %fd2;", "rcp", {"approx", "ftz"}, {Type::F64}},
      {"trap;", "trap", {}, {}},
      {"ld.global.L1::no_allocate.v2.u32 {%r1,%r2}, [%rd1];", "ld", {"global", "L1::no_allocate", "v2"}, {Type::U32}},
      {"mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;",
       "mbarrier",
       {"try_wait", "parity", "shared::cta"},
       {Type::B64}},
      {"cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16;",
       "cp",
       {"async", "cg", "shared", "global", "L2::128B"},
       {}},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    Instruction in = one_insn(std::string("\t") + c.text);
    CHECK(in.opcode == c.opcode);
    CHECK(in.mods == c.mods);
    CHECK(in.types == c.types);
  }
}

TEST_CASE("PTX call: returns, target, arguments and prototype in fixed places", "[ptx]") {
  Function f = one_function(
      ".visible .entry k()\n{\n"
      "\t{ // callseq 0, 0\n\t.param .b64 param0;\n\t.param .b64 param1;\n\t.param .b32 retval0;\n"
      "\tcall.uni (retval0), \n\tvprintf, \n\t(\n\tparam0, \n\tparam1\n\t);\n\t} // callseq 0\n"
      "\t{\n\t.param .b32 param0;\n\tcall fn, (param0);\n\t}\n"
      "\t{\n\t.param .b32 param0;\n\t.param .b32 retval0;\n"
      "\tprototype_2 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
      "\tcall (retval0), %rd5, (param0), prototype_2;\n\t}\n"
      "\tcall.uni noargs, ();\n"
      "\tcall.uni bare;\n"
      "\tcall.uni (retval0), ret_only, ();\n"
      "\tret;\n}\n");
  std::vector<const Statement*> calls;
  const Statement* proto = nullptr;
  for (const Statement& s : f.body) {
    if (s.kind == Statement::Kind::Instruction && s.insn.opcode == "call") calls.push_back(&s);
    if (s.kind == Statement::Kind::Prototype) proto = &s;
  }
  REQUIRE(calls.size() == 6);

  const Instruction& printf_call = calls[0]->insn;
  CHECK(printf_call.mods == std::vector<std::string>{"uni"});
  REQUIRE(printf_call.ops.size() == 3);
  CHECK(printf_call.ops[0].kind == Kind::Vector);
  REQUIRE(printf_call.ops[0].elems.size() == 1);
  CHECK(printf_call.ops[0].elems[0].name == "retval0$1");
  CHECK(printf_call.ops[1].kind == Kind::Symbol);
  CHECK(printf_call.ops[1].name == "vprintf");
  REQUIRE(printf_call.ops[2].elems.size() == 2);
  CHECK(printf_call.ops[2].elems[0].name == "param0$1");
  CHECK(printf_call.ops[2].elems[1].name == "param1$1");
  CHECK(printf_call.line == 10);

  const Instruction& no_ret = calls[1]->insn;
  REQUIRE(no_ret.ops.size() == 3);
  CHECK(no_ret.ops[0].elems.empty());
  CHECK(no_ret.ops[1].name == "fn");
  REQUIRE(no_ret.ops[2].elems.size() == 1);
  CHECK(no_ret.ops[2].elems[0].name == "param0$2");

  REQUIRE(proto);
  CHECK(proto->label == "prototype_2$3");
  REQUIRE(proto->proto_returns.size() == 1);
  CHECK(proto->proto_returns[0].type == Type::B32);
  CHECK(proto->proto_returns[0].name == "_");
  REQUIRE(proto->proto_params.size() == 1);
  const Instruction& indirect = calls[2]->insn;
  REQUIRE(indirect.ops.size() == 4);
  CHECK(indirect.ops[0].elems[0].name == "retval0$3");
  CHECK(indirect.ops[1].kind == Kind::Reg);
  CHECK(indirect.ops[1].name == "%rd5");
  CHECK(indirect.ops[2].elems[0].name == "param0$3");
  CHECK(indirect.ops[3].kind == Kind::Label);
  CHECK(indirect.ops[3].name == "prototype_2$3");

  for (int k : {3, 4}) {
    const Instruction& in = calls[k]->insn;
    REQUIRE(in.ops.size() == 3);
    CHECK(in.ops[0].elems.empty());
    CHECK(in.ops[2].kind == Kind::Vector);
    CHECK(in.ops[2].elems.empty());
  }
  CHECK(calls[3]->insn.ops[1].name == "noargs");
  CHECK(calls[4]->insn.ops[1].name == "bare");
  // Outside any scope retval0 is no declared name: a symbol as written.
  CHECK(calls[5]->insn.ops[0].elems[0].name == "retval0");
}

TEST_CASE("PTX scopes: inner declarations are renamed name$N, lookups find the innermost", "[ptx]") {
  Function f = one_function(
      ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\t.reg .b32 keep;\n"
      "\t{\n\t.reg .b32 %r1;\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n"
      "\t\t{\n\t\t.reg .pred p;\n\t\tsetp.ne.s32 p, %r1, 0;\n\t\t@p bra DONE;\n\t\t@!p mov.b32 %r2, keep;\n\t\t}\n"
      "\tmov.b32 %r2, %r1;\n\t}\n"
      "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r1;\n\t}\n"
      "\tmov.b32 %r1, keep;\nDONE:\n\tret;\n}\n");
  std::vector<std::string> names;
  for (const Variable& v : f.locals) names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"%r0", "%r1", "%r2", "keep", "%r1$1", "param0$1", "p$2", "param0$3"});
  CHECK(local(f, "param0$3")->space == Space::Param);

  std::vector<const Instruction*> in;
  for (const Statement& s : f.body)
    if (s.kind == Statement::Kind::Instruction) in.push_back(&s.insn);
  REQUIRE(in.size() == 8);
  CHECK(in[0]->ops[0].elems[0].name == "param0$1");
  CHECK(in[0]->ops[0].elems[0].kind == Kind::Symbol);
  CHECK(in[0]->ops[1].name == "%r1$1");
  CHECK(in[1]->ops[0].name == "p$2");
  CHECK(in[1]->ops[0].kind == Kind::Reg);  // a register without '%'
  CHECK(in[1]->ops[1].name == "%r1$1");    // found in the enclosing scope
  CHECK(in[2]->guard == "p$2");
  CHECK(in[2]->ops[0].kind == Kind::Label);
  CHECK(in[2]->ops[0].name == "DONE");
  CHECK(in[3]->guard == "p$2");
  CHECK(in[3]->guard_negated);
  CHECK(in[3]->ops[0].name == "%r2");
  CHECK(in[3]->ops[1].kind == Kind::Reg);  // `keep` is a register of the function's scope
  CHECK(in[3]->ops[1].name == "keep");
  CHECK(in[4]->ops[1].name == "%r1$1");
  CHECK(in[5]->ops[0].elems[0].name == "param0$3");  // the sibling scope's own param0
  CHECK(in[5]->ops[1].name == "%r1");                // the outer %r1 again
  CHECK(in[6]->ops[0].name == "%r1");
  CHECK(in[6]->ops[1].kind == Kind::Reg);
  CHECK(f.body.size() == 9);
  CHECK(f.body[7].kind == Statement::Kind::Label);
  CHECK(f.body[7].label == "DONE");
}

TEST_CASE("PTX scopes: labels of inner scopes are renamed, forward branches find them", "[ptx]") {
  // libcu++'s barrier wait, inlined twice: each copy declares the same labels.
  const std::string wait =
      "\t{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\tmbarrier.try_wait.parity.shared.b64 P1, [%r1], %r2;\n"
      "\t@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}\n";
  Function f = one_function(".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n" + wait + "\tmov.b32 %r1, {%r2, %r2};\n" +
                            wait + "\tbra.uni DONE;\nDONE:\n\tret;\n}\n");
  std::vector<std::string> labels, targets;
  for (const Statement& s : f.body) {
    if (s.kind == Statement::Kind::Label) labels.push_back(s.label);
    if (s.kind == Statement::Kind::Instruction && s.insn.opcode == "bra") {
      REQUIRE(s.insn.ops.size() == 1);
      CHECK(s.insn.ops[0].kind == Kind::Label);
      targets.push_back(s.insn.ops[0].name);
    }
  }
  CHECK(labels == std::vector<std::string>{"LAB_WAIT$1", "DONE$1", "LAB_WAIT$2", "DONE$2", "DONE"});
  CHECK(targets == std::vector<std::string>{"DONE$1", "LAB_WAIT$1", "DONE$2", "LAB_WAIT$2", "DONE"});
  CHECK(local(f, "P1$1"));
  CHECK(local(f, "P1$2"));
}

TEST_CASE("PTX debug information and pragmas are skipped", "[ptx]") {
  Module m = must_parse(
      ".version 9.0\n.target sm_80, debug\n.address_size 64\n"
      "\t.file\t1 \"/src/k.cu\"\n"
      ".pragma \"used_bytes_mask 15\";\n"
      ".visible .entry k()\n{\n$L__func_begin0:\n\t.loc\t1 5 0\n\t.pragma \"nounroll\";\n"
      "\t.loc 1 7 3, function_name $L__info_string0, inlined_at 1 5 3\n\tret;\n$L__func_end0:\n}\n"
      "\t.section\t.debug_info\n\t{\n.b32 120\n.b8 2\n$L__info_string0:\n.b8 95,0\n\t}\n"
      "\t.section\t.debug_abbrev\t{\n.b8 1\n\t}\n");
  CHECK(m.target_options == std::vector<std::string>{"debug"});
  REQUIRE(m.functions.size() == 1);
  const Function& f = m.functions[0];
  REQUIRE(f.body.size() == 3);
  CHECK(f.body[0].label == "$L__func_begin0");
  CHECK(f.body[1].insn.opcode == "ret");
  CHECK(f.body[1].insn.line == 12);
  CHECK(f.body[2].label == "$L__func_end0");
}

TEST_CASE("PTX errors say where and what was expected", "[ptx]") {
  struct Case {
    std::string text;
    uint32_t line, column;
    std::string message;  // a part of it
  };
  const std::string h = kHeader;  // 3 lines
  const std::vector<Case> cases = {
      {h + ".entry k()\n{\n\tadd.s32 %r1, %r2\n}\n", 7, 1, "expected ';' after the operands of 'add.s32', found '}'"},
      {h + ".entry k()\n{\n\tret;\n", 5, 1, "expected '}' to close the body of 'k'"},
      {h + ".entry k()\n{\n\tmov.f32 %f1, 0f3F80;\n}\n", 6, 15, "a 0f float literal has 8 hexadecimal digits"},
      {h + ".entry k()\n{\n\tmov.u32 %r1, #3;\n}\n", 6, 15, "unexpected '#'"},
      {h + ".entry k()\n{\n\t.reg .b32 %r<>;\n}\n", 6, 15, "expected a register count after '<', found '>'"},
      {h + ".entry k()\n{\n\t.reg %r1;\n}\n", 6, 7, "expected a type (.u32, .b8, …) in this declaration, found '%r1'"},
      {".version 9\n", 1, 10, "expected a version of the form MAJOR.MINOR"},
      {h + ".entry k()\n{\n\tld.u32 %r1, [%rd1+4;\n}\n", 6, 21, "expected ']' to close the address of 'ld.u32'"},
      {h + "/* open\n comment\n", 4, 1, "expected '*/' to close this comment"},
      {h + ".pragma \"nounroll;\n", 4, 9, "expected '\"' to close this string"},
      {h + ".foo 1;\n", 4, 1, "expected a declaration (.entry, .func, .global, .const, .shared, .local, .tex)"},
      {h + ".entry k()\n{\n\tmov.u64 %rd1, 0x1ffffffffffffffff;\n}\n", 6, 16, "does not fit in 64 bits"},
      {h + ".global .align 3 .u32 x;\n", 4, 9, "expected a power of two after '.align'"},
      {h + "add.s32 %r1, %r2, 1;\n", 4, 1, "expected a directive"},
      {h + ".global .u32 x = {1, 2;\n", 4, 23, "expected '}' or ',' in the initialiser"},
      {h + ".entry k(.param .u32 a\n{\n}\n", 5, 1, "expected ')' or ',' after a parameter"},
      {h + ".entry k()\n{\n\tcall.uni (r), ;\n}\n", 6, 16, "expected the function 'call' calls"},
      {h + ".entry k()\n{\n\t.reg .b32 %r<70000>;\n}\n", 6, 15, "too large"},
      {h + ".global .u32 a .u64;\n", 4, 16, "expected ';' after the declaration of 'a', found '.u64'"},
      {h + ".global .u32 ;\n", 4, 14, "expected a name in this declaration, found ';'"},
      {h + ".entry k()\n{\n\t@!5 bra L;\n}\n", 6, 4, "expected a predicate register after '@', found '5'"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const ParseError e = must_fail(c.text);
    INFO(e.message);
    CHECK(e.line == c.line);
    CHECK(e.column == c.column);
    CHECK(e.message.find(c.message) != std::string::npos);
  }
  // A message quotes at most 40 characters of what it found, however long the token.
  const ParseError long_token = must_fail(h + std::string(100000, 'x') + ";\n");
  CHECK(long_token.message.size() < 200);
  CHECK(long_token.message.find("xxxxxxxxxx…'") != std::string::npos);
  // No ParseError to fill: still no crash.
  CHECK_FALSE(parse(".version", nullptr).has_value());
}

TEST_CASE("PTX limits: runaway nesting and register counts are refused, not followed", "[ptx]") {
  const std::string h = kHeader;
  const ParseError scopes = must_fail(h + ".entry k()\n{\n" + std::string(300, '{') + std::string(301, '}'));
  CHECK(scopes.message.find("nested scopes") != std::string::npos);
  const ParseError init = must_fail(h + ".global .u32 x[1] = " + std::string(100, '{') + "1" + std::string(100, '}') +
                                    ";");
  CHECK(init.message.find("nested braces") != std::string::npos);
  const ParseError bang = must_fail(h + ".entry k()\n{\n\tnot.pred %p1, " + std::string(50, '!') + "%p2;\n}\n");
  CHECK(bang.message.find("nest at most") != std::string::npos);
  std::string regs = h + ".entry k()\n{\n";
  for (int k = 0; k < 9; ++k) regs += "\t.reg .b32 %r" + std::to_string(k) + "_<65536>;\n";
  const ParseError many = must_fail(regs + "}\n");
  CHECK(many.line == 14);  // the ninth range passes 2^19
  CHECK(many.message.find("registers in a module") != std::string::npos);
  // Sixty-five thousand registers are fine.
  Function f = one_function(".entry k()\n{\n\t.reg .b32 %r<65536>;\n\tret;\n}\n");
  CHECK(f.locals.size() == 65536);
  CHECK(f.locals.back().name == "%r65535");
}

TEST_CASE("PTX fixtures from nvcc 13.0 parse, with every call laid out", "[ptx]") {
  struct Expect {
    size_t functions, entries, instructions, calls;
  };
  // Checked against grep over the .ptx files (multi-line calls and inline-asm `{ … }` lines aside).
  const std::map<std::string, Expect> expected = {
      {"atomics_debug_sm80.ptx", {77, 1, 525, 53}},
      {"atomics_sm80.ptx", {1, 1, 77, 0}},
      {"atomics_sm90.ptx", {1, 1, 77, 0}},
      {"blockreduce_sm80.ptx", {1, 1, 55, 0}},
      {"blockreduce_sm90.ptx", {1, 1, 55, 0}},
      {"calls_sm80.ptx", {9, 2, 102, 6}},
      {"calls_sm90.ptx", {9, 2, 102, 6}},
      {"cluster_sm90.ptx", {3, 3, 43, 0}},
      {"coop_sm80.ptx", {1, 1, 111, 0}},
      {"coop_sm90.ptx", {1, 1, 111, 0}},
      {"math_sm80.ptx", {8, 6, 669, 1}},
      {"math_sm90.ptx", {8, 6, 668, 1}},
      {"printf_sm80.ptx", {3, 1, 59, 4}},
      {"printf_sm90.ptx", {3, 1, 59, 4}},
      {"rdc_a_sm80.ptx", {2, 1, 15, 1}},
      {"rdc_b_sm80.ptx", {1, 0, 6, 0}},
      {"reduce_lineinfo_sm80.ptx", {2, 2, 138, 0}},
      {"reduce_sm80.ptx", {2, 2, 138, 0}},
      {"reduce_sm90.ptx", {2, 2, 138, 0}},
      {"sgemm_sm80.ptx", {3, 3, 273, 0}},
      {"sgemm_sm90.ptx", {3, 3, 273, 0}},
      {"thrust_reduce_sm80.ptx", {7, 7, 3263, 0}},
  };
  const auto files = fixtures();
  REQUIRE(files.size() == expected.size());
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    INFO(name);
    const std::string text = read_file(path);
    ParseError e;
    auto m = parse(text, &e);
    INFO(e.message);
    REQUIRE(m.has_value());
    CHECK(m->version_major == 9);
    CHECK(m->address_size == 64);
    CHECK(m->target == (name.find("sm90") != std::string::npos ? "sm_90" : "sm_80"));
    Expect got{m->functions.size(), 0, 0, 0};
    for (const Function& f : m->functions) {
      got.entries += f.entry;
      // A function declared without a body is defined later, or elsewhere (.extern).
      if (!f.has_body && f.linkage != Linkage::Extern) CHECK(m->find_function(f.name)->has_body);
      for (const Statement& s : f.body) {
        if (s.kind != Statement::Kind::Instruction) continue;
        ++got.instructions;
        const Instruction& in = s.insn;
        CHECK_FALSE(in.opcode.empty());
        CHECK(in.line > 0);
        if (in.opcode != "call") continue;
        ++got.calls;
        REQUIRE(in.ops.size() >= 3);
        REQUIRE(in.ops.size() <= 4);
        CHECK(in.ops[0].kind == Kind::Vector);
        CHECK((in.ops[1].kind == Kind::Symbol || in.ops[1].kind == Kind::Reg));
        CHECK(in.ops[2].kind == Kind::Vector);
        // A direct call names a function of the module; an indirect one has its prototype.
        if (in.ops[1].kind == Kind::Symbol) {
          CHECK(m->find_function(in.ops[1].name) != nullptr);
        } else {
          REQUIRE(in.ops.size() == 4);
          CHECK(in.ops[3].kind == Kind::Label);
        }
        for (const Operand& a : in.ops[2].elems) CHECK(a.name.find('$') != std::string::npos);  // scoped params
      }
    }
    const auto it = expected.find(name);
    REQUIRE(it != expected.end());
    CHECK(got.functions == it->second.functions);
    CHECK(got.entries == it->second.entries);
    CHECK(got.instructions == it->second.instructions);
    CHECK(got.calls == it->second.calls);
  }
}

TEST_CASE("PTX fixtures: what the compiler wrote arrives in the model", "[ptx]") {
  const std::string dir = FAKEGPU_SOURCE_DIR "/tests/unit/fixtures/ptx/";
  Module calls = must_parse(read_file(dir + "calls_sm80.ptx"));
  const Function* by_value = calls.find_function("_Z8by_value3BigPi");
  REQUIRE(by_value);
  REQUIRE(by_value->params.size() == 2);
  CHECK(by_value->params[0].bytes() == 4104);  // struct Big by value
  CHECK(by_value->params[0].align == 8);
  const Variable* table_ptr = calls.find_global("table_ptr");
  REQUIRE(table_ptr);
  REQUIRE(table_ptr->init.size() == 1);
  CHECK(table_ptr->init[0].symbol == "table");
  CHECK(table_ptr->init[0].offset == 8);
  const Variable* ops = calls.find_global("ops");
  REQUIRE(ops->init.size() == 2);
  CHECK(ops->init[0].symbol == "_Z5twicei");
  CHECK(ops->init[1].symbol == "_Z6squarei");
  const Variable* table = calls.find_global("table");
  CHECK(table->bytes() == 16);
  CHECK(table->init.size() == 13);  // nvcc leaves out the trailing zeros
  CHECK(calls.find_global("pi_c")->init[0].bits == 0x400921FB54442D18ull);
  const Function* malloc_decl = calls.find_function("malloc");
  REQUIRE(malloc_decl);
  CHECK(malloc_decl->linkage == Linkage::Extern);
  CHECK_FALSE(malloc_decl->has_body);
  const Function* fib = calls.find_function("_Z3fibi");
  REQUIRE(fib);
  size_t recursive = 0;
  for (const Statement& s : fib->body)
    if (s.kind == Statement::Kind::Instruction && s.insn.opcode == "call" && s.insn.ops[1].name == "_Z3fibi")
      ++recursive;
  CHECK(recursive == 2);

  Module sgemm = must_parse(read_file(dir + "sgemm_sm80.ptx"));
  const Function* tiled = sgemm.find_function("_Z11sgemm_tilediPKfS0_Pf");
  REQUIRE(tiled);
  CHECK(tiled->maxntid[0] == 256);
  CHECK(tiled->minnctapersm == 2);
  const Variable* dyn = sgemm.find_global("buf");
  REQUIRE(dyn);
  CHECK(dyn->linkage == Linkage::Extern);
  CHECK(dyn->space == Space::Shared);
  CHECK(dyn->dims == std::vector<uint64_t>{0});

  Module cluster = must_parse(read_file(dir + "cluster_sm90.ptx"));
  const Function* cs = cluster.find_function("_Z11cluster_sumPi");
  REQUIRE(cs);
  CHECK(cs->reqnctapercluster[0] == 2);
  CHECK(cs->maxntid[0] == 128);
  CHECK(cluster.find_function("_Z7boundedPf")->maxclusterrank == 4);
  CHECK(cluster.find_function("_Z6cappedPf")->maxnreg == 32);

  Module rdc = must_parse(read_file(dir + "rdc_a_sm80.ptx"));
  const Function* scale_by = rdc.find_function("_Z8scale_byii");
  REQUIRE(scale_by);
  CHECK(scale_by->linkage == Linkage::Extern);
  CHECK_FALSE(scale_by->has_body);
  CHECK(rdc.find_global("shared_total")->linkage == Linkage::Extern);
}

TEST_CASE("PTX fixtures cut at every 97th byte: an answer each time, never a crash", "[ptx]") {
  for (const auto& path : fixtures()) {
    INFO(path.filename().string());
    const std::string text = read_file(path);
    size_t failures = 0;
    for (size_t n = 0; n < text.size(); n += 97) {
      ParseError e;
      auto m = parse(std::string_view(text).substr(0, n), &e);
      if (!m) {
        ++failures;
        INFO(n);
        REQUIRE(e.line > 0);
        REQUIRE_FALSE(e.message.empty());
      }
    }
    CHECK(failures > 0);  // most cuts fall inside a function
  }
}

TEST_CASE("PTX linking (nvcc -rdc): externs resolve across units, internal names stay apart", "[ptx]") {
  // Unit a: the kernel, calling b's function and reading b's variable; both units have an
  // internal helper and string constant of the same names, as nvcc's math helpers and $str do.
  const std::string a = std::string(kHeader) + R"(
.extern .func (.param .b32 r) scale(.param .b32 x);
.extern .global .align 4 .u32 bias;
.global .align 1 .b8 $str[2] = {97, 0};
.func (.param .b32 r) helper(.param .b32 x) { ret; }
.visible .entry k(.param .u64 p) {
  .reg .b64 %rd<3>;
  mov.u64 %rd1, $str;
  mov.u64 %rd2, bias;
  ret;
}
)";
  const std::string b = std::string(kHeader) + R"(
.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);
.visible .global .align 4 .u32 bias = 100;
.global .align 1 .b8 $str[2] = {98, 0};
.func (.param .b32 r) helper(.param .b32 x) { ret; }
.visible .func (.param .b32 r) scale(.param .b32 x) {
  .reg .b64 %rd<2>;
  mov.u64 %rd1, $str;
  ret;
}
)";
  std::vector<Module> units;
  units.push_back(must_parse(a));
  units.push_back(must_parse(b));
  std::string error;
  std::optional<Module> m = link(std::move(units), &error);
  INFO(error);
  REQUIRE(m.has_value());
  // One definition each of scale and bias; the helpers and strings kept apart.
  const Function* scale = m->find_function("scale");
  REQUIRE(scale);
  CHECK(scale->has_body);
  CHECK(std::count_if(m->functions.begin(), m->functions.end(), [](const Function& f) { return f.name == "scale"; }) ==
        1);
  REQUIRE(m->find_global("bias"));
  CHECK(m->find_global("bias")->linkage == Linkage::Visible);
  CHECK(m->find_global("bias")->init.size() == 1);
  REQUIRE(m->find_global("$str"));
  REQUIRE(m->find_global("$str$unit1"));
  CHECK(m->find_global("$str")->init.at(0).bits == 97);
  CHECK(m->find_global("$str$unit1")->init.at(0).bits == 98);
  REQUIRE(m->find_function("helper"));
  REQUIRE(m->find_function("helper$unit1"));
  // b's function reads its own string; a's kernel its own.
  CHECK(scale->body.at(0).insn.ops.at(1).name == "$str$unit1");
  CHECK(m->find_function("k")->body.at(0).insn.ops.at(1).name == "$str");
  // A runtime function declared only: kept as a declaration.
  REQUIRE(m->find_function("vprintf"));
  CHECK_FALSE(m->find_function("vprintf")->has_body);

  SECTION("a name defined visibly in two units is refused") {
    std::vector<Module> twice;
    twice.push_back(must_parse(b));
    twice.push_back(must_parse(b));
    std::string why;
    CHECK_FALSE(link(std::move(twice), &why).has_value());
    CHECK(why == "function scale is defined in two translation units");
  }

  SECTION("what each unit defines and uses but only declares") {
    const Symbols sa = symbols(must_parse(a));
    REQUIRE(sa.defined.size() == 1);
    CHECK(sa.defined[0].name == "k");                         // a kernel; the internal helper and $str are not external
    CHECK(sa.undefined == std::vector<std::string>{"bias"});  // scale is declared but not called
    const Symbols sb = symbols(must_parse(b));
    REQUIRE(sb.defined.size() == 2);
    CHECK(sb.defined[0].name == "scale");
    CHECK(sb.defined[1].name == "bias");
    CHECK_FALSE(sb.defined[1].weak);
    CHECK(sb.undefined.empty());  // vprintf declared, never called
  }
}

TEST_CASE("PTX linking: a strong definition wins over weak ones, internal names yield to external ones", "[ptx]") {
  // nvcc -rdc gives inline functions and template instances .weak linkage in every unit that
  // uses them; a unit's internal name may also be another unit's external one.
  const std::string weak_unit = std::string(kHeader) + R"(
.weak .func (.param .b32 r) inl(.param .b32 x) { .reg .b32 %r<2>; mov.u32 %r1, 1; st.param.b32 [r], %r1; ret; }
.weak .global .align 4 .u32 w = 1;
.func (.param .b32 r) shared_name(.param .b32 x) { ret; }
.visible .entry k(.param .u64 p) {
  .reg .b64 %rd<3>;
  mov.u64 %rd1, shared_name;
  mov.u64 %rd2, w;
  ret;
}
)";
  const std::string weak_only = std::string(kHeader) + R"(
.weak .func (.param .b32 r) inl(.param .b32 x) { .reg .b32 %r<2>; mov.u32 %r1, 3; st.param.b32 [r], %r1; ret; }
.weak .global .align 4 .u32 w = 3;
)";
  const std::string strong_unit = std::string(kHeader) + R"(
.visible .func (.param .b32 r) inl(.param .b32 x) { .reg .b32 %r<2>; mov.u32 %r1, 2; st.param.b32 [r], %r1; ret; }
.visible .global .align 4 .u32 w = 2;
.visible .func (.param .b32 r) shared_name(.param .b32 x) { ret; }
)";
  std::vector<Module> units;
  units.push_back(must_parse(weak_unit));
  units.push_back(must_parse(weak_only));
  units.push_back(must_parse(strong_unit));
  std::string error;
  std::optional<Module> m = link(std::move(units), &error);
  INFO(error);
  REQUIRE(m.has_value());
  CHECK(std::count_if(m->functions.begin(), m->functions.end(), [](const Function& f) { return f.name == "inl"; }) ==
        1);
  CHECK(m->find_function("inl")->linkage == Linkage::Visible);
  REQUIRE(m->find_global("w"));
  CHECK(m->find_global("w")->init.at(0).bits == 2);
  // The first unit's internal shared_name is renamed: the external one keeps the name.
  REQUIRE(m->find_function("shared_name$unit0"));
  CHECK(m->find_function("shared_name")->linkage == Linkage::Visible);
  CHECK(m->find_function("k")->body.at(0).insn.ops.at(1).name == "shared_name$unit0");
  CHECK(m->find_function("k")->body.at(1).insn.ops.at(1).name == "w");
  const Symbols s = symbols(must_parse(weak_unit));
  REQUIRE(s.defined.size() == 3);
  CHECK(s.defined[0].name == "inl");
  CHECK(s.defined[0].weak);
  CHECK(s.defined[1].name == "k");
  CHECK(s.defined[2].name == "w");
  CHECK(s.defined[2].weak);
}
