// SPDX-License-Identifier: Apache-2.0
// PTX as the kernel executor reads it: a module parsed from the text nvcc, NVRTC or a program
// hands the driver, in a form the code generator walks without re-reading text.
//
// The parser (ptx_parser.cpp) resolves what is purely lexical so that the generator does not
// have to: nested `{ }` scopes are flattened (a name declared in an inner scope is renamed
// `name$N`, N the scope's number, so every register and local name in a function is unique),
// `%r<N>` register ranges are expanded, modifiers are split from types, and immediates are
// decoded. Scopes are numbered 1, 2, … in the order they open within a function (its body is
// scope 0, whose names stay as written); labels and `.callprototype` names are scoped like
// variables (inline asm such as libcu++'s barrier waits repeats `LAB_WAIT:` in every copy). It does not check semantics
// (operand types against the instruction, whether a register was declared): the generator does, and refuses what it
// does not understand.
//
// Names are kept as written, `%` included (`%r1`, `%tid.x`, `$L__BB0_2`, `_Z6kernelPf`).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fg::ptx {

// State spaces (PTX ISA 5.1).
enum class Space : uint8_t { None, Reg, Sreg, Const, Global, Local, Param, Shared, Tex, Generic };

// Fundamental types (PTX ISA 5.2). F16x2/BF16x2 are packed pairs in a .b32 register.
// clang-format off
enum class Type : uint8_t {
  None,
  Pred,
  B8,
  B16,
  B32,
  B64,
  B128,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  TF32,
  F32,
  F64,
};
// clang-format on

// Size in bytes of a value of `t` (Pred: 1; None: 0).
unsigned type_size(Type t) noexcept;
// ".u32" → Type::U32; Type::None when `s` names no type.
Type type_from_name(std::string_view s) noexcept;
std::string_view type_name(Type t) noexcept;  // "u32" (no dot)

enum class Linkage : uint8_t { Internal, Visible, Extern, Weak, Common };

// A value an instruction reads or writes.
struct Operand {
  enum class Kind : uint8_t {
    Reg,      // name: "%r1", "%tid.x" (special registers keep their component), "p" (inline asm)
    Imm,      // integer immediate: imm (hex, octal, binary and decimal; `U` suffix allowed)
    FImm,     // floating immediate: fbits holds the bits, fdouble says which width it was
              // written for (0f… / 0d… hexadecimal, or a decimal literal read as f64)
    Symbol,   // name of a variable or function (address-of), plus imm as an offset
    Address,  // [base + imm]: base is a Reg or Symbol operand in elems[0] (elems empty: [imm]);
              // texture and surface forms `[t, {%f1, %f2}]`, `[t, s, {…}]` carry their further
              // operands in elems[1…]
    Vector,   // {a, b, c, d}: elems (a `_` element is a Sink)
    Pair,     // d|p: elems[0] the value, elems[1] the predicate (shfl, setp with two results)
    Sink,     // `_`
    Label,    // a branch target: name
  };
  Kind kind = Kind::Reg;
  bool negate = false;  // `!%p` (predicate operands of and/or/xor/selp/setp's c)
  std::string name;
  int64_t imm = 0;
  uint64_t fbits = 0;
  bool fdouble = false;
  std::vector<Operand> elems;
};

// One instruction: `@%p add.s32 %r1, %r2, 4;`
struct Instruction {
  std::string guard;           // "%p1" (empty: unconditional)
  bool guard_negated = false;  // @!%p1
  std::string opcode;          // "add", "ld", "setp", "shfl", "call", …
  // Modifiers in the order written, without the dot and without the types: for
  // `ld.global.nc.v4.f32` {"global", "nc", "v4"}; for `setp.lt.s32` {"lt"}; for
  // `shfl.sync.down.b32` {"sync", "down"}. Compare as a set: CUB writes
  // `vote.ballot.sync.b32` where the compiler writes `vote.sync.ballot.b32`.
  std::vector<std::string> mods;
  // Type suffixes in the order written: `cvt.rn.f32.s32` {F32, S32}; `add.s32` {S32}.
  std::vector<Type> types;
  std::vector<Operand> ops;  // destination(s) first, as written
  // call only: `call.uni (retval0), fn, (param0, param1), proto;` → ops are
  // {returns (Vector), target (Symbol or Reg), arguments (Vector)[, prototype (Label)]}.
  uint32_t line = 0;  // 1-based line in the module text, for messages

  bool has_mod(std::string_view m) const noexcept;
};

// A declared variable or register.
struct Variable {
  Space space = Space::None;
  Type type = Type::None;
  Linkage linkage = Linkage::Internal;
  uint32_t align = 0;   // .align N (0: the type's natural alignment)
  uint32_t vector = 1;  // .v2 / .v4
  std::string name;
  // Array dimensions as written ([4][8] → {4, 8}); an unsized `[]` is 0 (extern shared:
  // the dynamic shared memory; an array sized by its initializer gets the size filled in).
  std::vector<uint64_t> dims;
  bool is_array = false;
  // The initial value, elements in order; each is raw little-endian bits of `type`, or
  // the address of a symbol (+ offset) for `generic(sym)` / `sym` elements.
  struct Init {
    uint64_t bits = 0;
    std::string symbol;  // non-empty: the address of this variable or function
    int64_t offset = 0;
  };
  // As written: nvcc leaves out trailing zeros (`.b8 t[16] = {1, 0, 0, 0, 2}`), so there may
  // be fewer elements than elements(); the rest are zero.
  std::vector<Init> init;
  bool has_init = false;
  uint32_t line = 0;

  uint64_t elements() const noexcept;  // product of dims × vector (1 for a scalar)
  uint64_t bytes() const noexcept;     // elements() × type_size(type)
};

// A parameter of an entry or function (`.param .u64 p`, `.param .align 8 .b8 s[24]`,
// `.reg .b32 r` in old-style functions, `.param .u64 .ptr .global .align 4 p`).
struct Param {
  Space space = Space::Param;
  Type type = Type::None;
  uint32_t align = 0;
  uint64_t array = 0;  // `.b8 name[N]`: N (0: not an array)
  std::string name;
  Space ptr_space = Space::None;  // `.ptr .global`: what the pointer points to
  uint32_t ptr_align = 0;

  uint64_t bytes() const noexcept;  // array ? array × size : size
};

// A statement of a function body, in order.
struct Statement {
  enum class Kind : uint8_t { Label, Instruction, Prototype };
  Kind kind = Kind::Instruction;
  std::string label;  // Label / Prototype: its name
  Instruction insn;   // Instruction
  // Prototype (`proto: .callprototype (.param .b32 _) _ (.param .b64 _);`): its signature.
  std::vector<Param> proto_returns, proto_params;
};

struct Function {
  bool entry = false;  // .entry (a kernel) vs .func
  Linkage linkage = Linkage::Internal;
  std::string name;
  std::vector<Param> returns;  // .func only
  std::vector<Param> params;
  bool noreturn = false;
  // Performance directives; 0 where absent.
  uint32_t maxntid[3] = {0, 0, 0}, reqntid[3] = {0, 0, 0};
  uint32_t minnctapersm = 0, maxnreg = 0, maxclusterrank = 0;
  uint32_t reqnctapercluster[3] = {0, 0, 0};
  bool has_body = false;         // false: a declaration (`.extern .func f(...)`, prototypes)
  std::vector<Variable> locals;  // .reg, .local, .shared, .param, .const declared in the body
  std::vector<Statement> body;
  uint32_t line = 0;
};

struct Module {
  uint32_t version_major = 0, version_minor = 0;  // .version 8.7
  std::string target;                             // "sm_80", "sm_90a" (first of the list)
  std::vector<std::string> target_options;        // the rest: "texmode_independent", "debug"
  uint32_t address_size = 64;
  std::vector<Variable> globals;    // .global, .const, .shared (module scope), .local, .tex …
  std::vector<Function> functions;  // in order; a function may be declared, then defined

  const Function* find_function(std::string_view name) const noexcept;  // the definition first
  const Variable* find_global(std::string_view name) const noexcept;
};

// Why text could not be parsed: the line (1-based), the column and what was expected.
struct ParseError {
  uint32_t line = 0, column = 0;
  std::string message;  // "line 12, column 5: expected ';' after the operands of 'add'"
};

// Links the PTX of separately compiled translation units (nvcc -rdc, cuLinkComplete) into one
// module: an .extern function or variable resolves to another unit's definition of external
// linkage (.visible, .weak, .common; kernels are always external), the one strong definition
// else the first weak one; each unit keeps its own internal names (string constants, static
// functions, math helpers), those of units after the first renamed apart (unit_local_name),
// and those of the first where another unit defines the same name externally. The first unit
// gives the version and target. Names declared and defined nowhere stay declarations (the
// device runtime's vprintf, malloc …). nullopt with *error set when a name has two strong
// definitions.
std::optional<Module> link(std::vector<Module> units, std::string* error);

// The name an internal symbol `name` of unit `unit` (0-based) has in a linked module.
std::string unit_local_name(std::string_view name, size_t unit);

// What a unit brings to a link and what it needs from the others.
struct Symbols {
  struct Definition {
    std::string name;
    bool weak = false;  // .weak or .common: another unit's strong definition wins
  };
  std::vector<Definition> defined;  // external linkage: kernels, functions with a body, variables
  // Names the unit uses (calls, operands, initializers) but only declares: .extern functions
  // and variables (not .extern .shared, the dynamic shared memory), in order of first use.
  std::vector<std::string> undefined;
};
Symbols symbols(const Module& m);

// Parses one PTX module. Bounded work and memory in the length of the text; never throws for
// bad input (the error says where and what), only std::bad_alloc.
std::optional<Module> parse(std::string_view text, ParseError* error);

}  // namespace fg::ptx
