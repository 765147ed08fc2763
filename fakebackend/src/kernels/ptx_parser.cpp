// SPDX-License-Identifier: Apache-2.0
// The PTX parser (ptx.h): a hand-written lexer and a recursive-descent parser over its tokens.
//
// Robustness: every loop consumes a token or ends, recursion is bounded (initialiser braces,
// operand nesting), scopes nest at most kMaxScopeDepth deep, and register ranges expand to at
// most kMaxRegisters names per module, so work and memory stay bounded in the text's length.
// Nothing throws but std::bad_alloc: numbers are decoded by hand and std::from_chars.
#include "kernels/half_bits.h"
#include "kernels/ptx.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fg::ptx {
namespace {

using kernels::to_half;

// A `%r<N>` range larger than this is refused, and so is a module declaring more registers in
// all: real kernels declare a few thousand, and a short text must not ask for gigabytes.
constexpr uint64_t kMaxRegisterRange = 1u << 16;
constexpr uint64_t kMaxRegisters = 1u << 19;
constexpr size_t kMaxScopeDepth = 256;          // nested `{ }` in one function body
constexpr int kMaxInitDepth = 32;               // nested braces in one initialiser
constexpr int kMaxOperandDepth = 3;             // `[tex, {…}]`, `!%p` inside an operand
constexpr uint64_t kMaxDimension = 1ull << 48;  // one array dimension

// ---- lexer ----------------------------------------------------------------------------------

enum class Tok : uint8_t { End, Ident, Directive, Number, String, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  uint32_t line = 1, col = 1;
};

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool is_follow(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

// Text quoted in a message, cut short: a token may be as long as the input.
std::string quoted(std::string_view t) {
  constexpr size_t kMax = 40;
  return "'" + std::string(t.substr(0, kMax)) + (t.size() > kMax ? "…'" : "'");
}

// Splits the text into tokens. An identifier keeps its dotted suffixes (`ld.global.u32`,
// `%tid.x`, `cp.async.cg.shared.global.L2::128B`); a directive is a dot and a name (`.reg`,
// `.u32`); a number runs over letters and dots (`0f3F800000`, `9.0`, `1.5e-3`, `42U`).
// Newlines only advance the line count.
bool lex(std::string_view s, std::vector<Token>& out, ParseError& err) {
  uint32_t line = 1;
  size_t line_start = 0, i = 0;
  const size_t n = s.size();
  auto col = [&](size_t at) { return static_cast<uint32_t>(at - line_start + 1); };
  auto fail = [&](size_t at, const std::string& msg) {
    err.line = line;
    err.column = col(at);
    err.message = "line " + std::to_string(line) + ", column " + std::to_string(err.column) + ": " + msg;
    return false;
  };
  out.reserve(n / 4 + 1);
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const size_t start = i;
      const uint32_t start_line = line;
      const size_t start_line_start = line_start;
      i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
        ++i;
      }
      if (i >= n) {
        line = start_line;
        line_start = start_line_start;
        return fail(start, "expected '*/' to close this comment");
      }
      i += 2;
      continue;
    }
    Token t;
    t.line = line;
    t.col = col(i);
    const size_t start = i;
    if (c == '"') {
      ++i;
      while (i < n && s[i] != '"' && s[i] != '\n') i += (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n') ? 2 : 1;
      if (i >= n || s[i] != '"') return fail(start, "expected '\"' to close this string");
      ++i;
      t.kind = Tok::String;
    } else if (c == '.' && i + 1 < n && is_follow(s[i + 1])) {
      ++i;
      while (i < n && is_follow(s[i])) ++i;
      t.kind = Tok::Directive;
    } else if (is_ident_start(c)) {
      ++i;
      for (;;) {
        while (i < n && is_follow(s[i])) ++i;
        if (i + 1 < n && s[i] == '.' && is_follow(s[i + 1])) {
          ++i;
          continue;
        }
        // Qualifiers with a sub-part: `ld.global.L1::evict_last`, `mapa.shared::cluster`.
        if (i + 2 < n && s[i] == ':' && s[i + 1] == ':' && is_follow(s[i + 2])) {
          i += 2;
          continue;
        }
        break;
      }
      t.kind = Tok::Ident;
    } else if (is_digit(c)) {
      const bool hex = i + 1 < n && s[i] == '0' &&
                       (s[i + 1] == 'x' || s[i + 1] == 'X' || s[i + 1] == 'f' || s[i + 1] == 'F' || s[i + 1] == 'd' ||
                        s[i + 1] == 'D');
      for (;;) {
        while (i < n && (is_follow(s[i]) || s[i] == '.')) ++i;
        // A decimal exponent's sign: 1.5e-3.
        if (!hex && i + 1 < n && (s[i - 1] == 'e' || s[i - 1] == 'E') && (s[i] == '+' || s[i] == '-') &&
            is_digit(s[i + 1])) {
          ++i;
          continue;
        }
        break;
      }
      t.kind = Tok::Number;
    } else if (std::strchr(",;:()[]{}<>+-@!|=", c) != nullptr && c != '\0') {
      ++i;
      t.kind = Tok::Punct;
    } else {
      return fail(start, "unexpected " + describe_char(c));
    }
    t.text = s.substr(start, i - start);
    out.push_back(t);
  }
  Token end;
  end.kind = Tok::End;
  end.line = line;
  end.col = col(n);
  out.push_back(end);
  return true;
}

// ---- numbers --------------------------------------------------------------------------------

// A decoded numeric literal.
struct Number {
  bool is_float = false;
  bool fdouble = false;  // float: written for f64 (0d… or decimal)
  uint64_t bits = 0;     // integer: two's-complement value; float: the bits of its width
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes a number token; false (with `why`) when it is not a PTX literal or overflows 64 bits.
bool decode_number(std::string_view t, Number& out, std::string& why) {
  out = Number{};
  if (t.size() >= 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) {
    const bool dbl = t[1] == 'd' || t[1] == 'D';
    const size_t digits = dbl ? 16 : 8;
    if (t.size() != 2 + digits) {
      why = dbl ? "a 0d float literal has 16 hexadecimal digits" : "a 0f float literal has 8 hexadecimal digits";
      return false;
    }
    uint64_t v = 0;
    for (size_t k = 2; k < t.size(); ++k) {
      const int h = hex_value(t[k]);
      if (h < 0) {
        why = "a float literal has only hexadecimal digits after 0f/0d";
        return false;
      }
      v = (v << 4) | static_cast<uint64_t>(h);
    }
    out.is_float = true;
    out.fdouble = dbl;
    out.bits = v;
    return true;
  }
  std::string_view body = t;
  if (!body.empty() && (body.back() == 'U' || body.back() == 'u')) body.remove_suffix(1);
  unsigned base = 10;
  if (body.size() >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    base = 16;
    body.remove_prefix(2);
  } else if (body.size() >= 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) {
    base = 2;
    body.remove_prefix(2);
  } else if (body.find_first_of(".eE") != std::string_view::npos) {
    // A decimal float literal, read as f64.
    double d = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), d);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
      why = quoted(t) + " is not a number";
      return false;
    }
    out.is_float = true;
    out.fdouble = true;
    out.bits = std::bit_cast<uint64_t>(d);
    return true;
  } else if (body.size() >= 2 && body[0] == '0') {
    base = 8;
    body.remove_prefix(1);
  }
  if (body.empty()) {
    why = quoted(t) + " has no digits";
    return false;
  }
  uint64_t v = 0;
  for (char c : body) {
    const int h = hex_value(c);
    if (h < 0 || static_cast<unsigned>(h) >= base) {
      why = quoted(t) + " is not a number";
      return false;
    }
    if (v > (UINT64_MAX - static_cast<uint64_t>(h)) / base) {
      why = quoted(t) + " does not fit in 64 bits";
      return false;
    }
    v = v * base + static_cast<uint64_t>(h);
  }
  out.bits = v;
  return true;
}

// bfloat16 bits of `f`, rounded to nearest even.
uint16_t to_bfloat(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

uint64_t mask_to(Type t, uint64_t v) {
  const unsigned size = type_size(t);
  return size >= 8 || size == 0 ? v : v & ((uint64_t{1} << (size * 8)) - 1);
}

bool is_float_type(Type t) {
  return t == Type::F16 || t == Type::BF16 || t == Type::F32 || t == Type::F64 || t == Type::TF32;
}

// `d` as a float; beyond float's range it is an infinity (a cast would be undefined there).
float narrow(double d) {
  if (d > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  if (d < -std::numeric_limits<float>::max()) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(d);
}

// The raw bits a literal stores in a variable of type `t`.
uint64_t literal_bits(Type t, const Number& num) {
  if (!is_float_type(t)) return mask_to(t, num.bits);
  double value;
  if (num.is_float) {
    value = num.fdouble ? std::bit_cast<double>(num.bits) : std::bit_cast<float>(static_cast<uint32_t>(num.bits));
  } else {
    value = static_cast<double>(static_cast<int64_t>(num.bits));
  }
  switch (t) {
    case Type::F64: return std::bit_cast<uint64_t>(value);
    case Type::F16: return to_half(narrow(value));
    case Type::BF16: return to_bfloat(narrow(value));
    default: return std::bit_cast<uint32_t>(narrow(value));
  }
}

// ---- parser ---------------------------------------------------------------------------------

Space space_of(std::string_view d) {
  if (d == ".reg") return Space::Reg;
  if (d == ".sreg") return Space::Sreg;
  if (d == ".const") return Space::Const;
  if (d == ".global") return Space::Global;
  if (d == ".local") return Space::Local;
  if (d == ".param") return Space::Param;
  if (d == ".shared") return Space::Shared;
  if (d == ".tex") return Space::Tex;
  return Space::None;
}

class Parser {
 public:
  explicit Parser(std::vector<Token>&& toks) : toks_(std::move(toks)) {}

  bool parse_module(Module& m);
  const ParseError& error() const { return err_; }

 private:
  // A name declared in a function body: what operands call it, and whether it is a register.
  struct Decl {
    std::string name;
    bool reg = false;
  };
  struct Scope {
    uint32_t number = 0;
    std::unordered_map<std::string, Decl> names;
  };

  const Token& peek(size_t k = 0) const {
    const size_t at = pos_ + k;
    return at < toks_.size() ? toks_[at] : toks_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool at_end() const { return peek().kind == Tok::End; }
  bool is_punct(char c, size_t k = 0) const {
    const Token& t = peek(k);
    return t.kind == Tok::Punct && t.text[0] == c;
  }
  bool is_dir(std::string_view d, size_t k = 0) const {
    const Token& t = peek(k);
    return t.kind == Tok::Directive && t.text == d;
  }
  bool accept_punct(char c) {
    if (!is_punct(c)) return false;
    next();
    return true;
  }

  // Records the first error at `t` and answers false, so that callers `return fail(...)`.
  bool fail(const Token& t, const std::string& msg) {
    if (failed_) return false;
    failed_ = true;
    err_.line = t.line;
    err_.column = t.col;
    err_.message = "line " + std::to_string(t.line) + ", column " + std::to_string(t.col) + ": " + msg;
    return false;
  }
  // "expected X, found Y" at the next token.
  bool expected(const std::string& what) {
    const Token& t = peek();
    const std::string found = t.kind == Tok::End ? "the end of the text" : quoted(t.text);
    return fail(t, "expected " + what + ", found " + found);
  }
  bool expect_punct(char c, const std::string& context) {
    if (accept_punct(c)) return true;
    return expected(std::string("'") + c + "' " + context);
  }

  bool parse_uint(uint64_t& v, const std::string& what, uint64_t max = UINT64_MAX);
  bool parse_u32(uint32_t& v, const std::string& what) {
    uint64_t x = 0;
    if (!parse_uint(x, what, UINT32_MAX)) return false;
    v = static_cast<uint32_t>(x);
    return true;
  }
  bool parse_number(Number& num, bool& negative, const std::string& what);

  bool skip_line();
  bool skip_statement();
  bool skip_balanced(char open, char close);

  bool parse_version(Module& m);
  bool parse_target(Module& m);
  bool parse_toplevel(Module& m);
  bool parse_variables(Linkage linkage, std::vector<Variable>& out, bool in_body);
  bool parse_initializer(Variable& v, int depth);
  bool parse_init_element(Variable& v);
  bool parse_param(Param& p, bool allow_unnamed);
  bool parse_param_list(std::vector<Param>& out, bool allow_unnamed, const std::string& context);
  bool parse_function(Module& m, Linkage linkage);
  bool parse_perf_directives(Function& f);
  bool parse_body(Function& f);
  void collect_scoped_labels();
  bool parse_prototype(Statement& st);
  bool parse_instruction(Function& f);
  bool parse_call(Instruction& in);
  bool parse_operand(Operand& op, bool allow_vector, const std::string& context, int depth = 0);
  bool parse_address(Operand& op, const std::string& context, int depth);
  bool parse_offset(int64_t& offset);

  // Declares `name` in the current scope; answers the name operands will use.
  std::string declare(std::string_view name, bool reg);
  Decl resolve(std::string_view name) const;

  std::vector<Token> toks_;
  size_t pos_ = 0;
  ParseError err_;
  bool failed_ = false;
  uint64_t registers_ = 0;
  std::vector<Scope> scopes_;  // empty outside function bodies
  // The labels each inner scope of the current body declares, by the index of its '{' token:
  // a branch may name a label written further down its scope.
  std::unordered_map<size_t, std::vector<std::string_view>> scope_labels_;
  uint32_t scope_count_ = 0;
};

bool Parser::parse_uint(uint64_t& v, const std::string& what, uint64_t max) {
  const Token& t = peek();
  if (t.kind != Tok::Number) return expected(what);
  Number num;
  std::string why;
  if (!decode_number(t.text, num, why)) return fail(t, "expected " + what + ": " + why);
  if (num.is_float) return fail(t, "expected " + what + ", found the float " + quoted(t.text));
  if (num.bits > max) return fail(t, "expected " + what + ", found " + quoted(t.text) + " (too large)");
  v = num.bits;
  next();
  return true;
}

bool Parser::parse_number(Number& num, bool& negative, const std::string& what) {
  negative = false;
  while (is_punct('-') || is_punct('+')) {
    if (next().text[0] == '-') negative = !negative;
  }
  const Token& t = peek();
  if (t.kind != Tok::Number) return expected(what);
  std::string why;
  if (!decode_number(t.text, num, why)) return fail(t, "expected " + what + ": " + why);
  next();
  if (negative) {
    if (!num.is_float) {
      num.bits = 0 - num.bits;
    } else {
      num.bits ^= num.fdouble ? (uint64_t{1} << 63) : (uint64_t{1} << 31);
    }
  }
  return true;
}

// `.loc` / `.file` carry their operands on their own line, without a semicolon.
bool Parser::skip_line() {
  const uint32_t line = next().line;
  while (!at_end() && peek().line == line) next();
  return true;
}

bool Parser::skip_statement() {
  const Token& start = next();
  while (!at_end() && !is_punct(';')) {
    if (is_punct('{') || is_punct('}')) return fail(start, "expected ';' to end " + quoted(start.text));
    next();
  }
  return expect_punct(';', "to end " + quoted(start.text));
}

// Skips from the opening `open` (the next token) to its matching `close`.
bool Parser::skip_balanced(char open, char close) {
  const Token& start = peek();
  if (!accept_punct(open)) return expected(std::string("'") + open + "'");
  uint64_t depth = 1;
  while (depth > 0) {
    if (at_end()) return fail(start, std::string("expected '") + close + "' to match this '" + open + "'");
    if (is_punct(open)) ++depth;
    if (is_punct(close)) --depth;
    next();
  }
  return true;
}

bool Parser::parse_module(Module& m) {
  while (!at_end()) {
    const Token& t = peek();
    if (t.kind != Tok::Directive) return expected("a directive (.version, .target, .entry, .func, .global …)");
    bool ok;
    if (t.text == ".version") {
      ok = parse_version(m);
    } else if (t.text == ".target") {
      ok = parse_target(m);
    } else if (t.text == ".address_size") {
      next();
      ok = parse_u32(m.address_size, "an address size (32 or 64) after '.address_size'");
      if (ok && m.address_size != 32 && m.address_size != 64) ok = fail(t, "expected an address size of 32 or 64");
    } else if (t.text == ".file" || t.text == ".loc") {
      ok = skip_line();
    } else if (t.text == ".section") {
      // DWARF sections (-G): data for debuggers, nothing the executor runs.
      next();
      if (peek().kind == Tok::Directive || peek().kind == Tok::Ident) next();
      ok = is_punct('{') ? skip_balanced('{', '}') : expected("'{' after the section name");
    } else if (t.text == ".pragma") {
      ok = skip_statement();
    } else {
      ok = parse_toplevel(m);
    }
    if (!ok) return false;
  }
  return true;
}

bool Parser::parse_version(Module& m) {
  next();
  const Token& t = peek();
  if (t.kind != Tok::Number) return expected("a version (such as 8.7) after '.version'");
  const std::string_view v = t.text;
  const size_t dot = v.find('.');
  uint32_t major = 0, minor = 0;
  const auto r1 = std::from_chars(v.data(), v.data() + (dot == std::string_view::npos ? v.size() : dot), major);
  bool ok = r1.ec == std::errc() && dot != std::string_view::npos && r1.ptr == v.data() + dot;
  if (ok) {
    const auto r2 = std::from_chars(v.data() + dot + 1, v.data() + v.size(), minor);
    ok = r2.ec == std::errc() && r2.ptr == v.data() + v.size() && dot + 1 < v.size();
  }
  if (!ok) return fail(t, "expected a version of the form MAJOR.MINOR after '.version', found " + quoted(v));
  m.version_major = major;
  m.version_minor = minor;
  next();
  return true;
}

bool Parser::parse_target(Module& m) {
  const uint32_t line = next().line;
  bool first = true;
  for (;;) {
    const Token& t = peek();
    if (t.kind != Tok::Ident) return expected("a target name (such as sm_80) after '.target'");
    if (first) {
      m.target = std::string(t.text);
    } else {
      m.target_options.emplace_back(t.text);
    }
    first = false;
    next();
    // The list ends at the line's end: .target takes no semicolon.
    if (!is_punct(',') || peek().line != line) break;
    next();
  }
  return true;
}

bool Parser::parse_toplevel(Module& m) {
  Linkage linkage = Linkage::Internal;
  for (;;) {
    const Token& t = peek();
    if (t.kind != Tok::Directive) break;
    if (t.text == ".visible") {
      linkage = Linkage::Visible;
    } else if (t.text == ".extern") {
      linkage = Linkage::Extern;
    } else if (t.text == ".weak") {
      linkage = Linkage::Weak;
    } else if (t.text == ".common") {
      linkage = Linkage::Common;
    } else {
      break;
    }
    next();
  }
  const Token& t = peek();
  if (t.kind == Tok::Directive && (t.text == ".entry" || t.text == ".func")) return parse_function(m, linkage);
  if (t.kind == Tok::Directive) {
    const Space sp = space_of(t.text);
    if (sp == Space::Global || sp == Space::Const || sp == Space::Shared || sp == Space::Local || sp == Space::Tex ||
        t.text == ".align")
      return parse_variables(linkage, m.globals, false);
  }
  return expected("a declaration (.entry, .func, .global, .const, .shared, .local, .tex)");
}

std::string Parser::declare(std::string_view name, bool reg) {
  if (scopes_.empty()) return std::string(name);
  Scope& s = scopes_.back();
  Decl d;
  d.reg = reg;
  if (s.number == 0) {
    // The function's own scope keeps names; only registers without '%' need remembering,
    // so that operands naming them are registers rather than symbols.
    d.name = std::string(name);
    if (reg && name[0] != '%') s.names[d.name] = d;
    return d.name;
  }
  d.name = std::string(name) + "$" + std::to_string(s.number);
  s.names[std::string(name)] = d;
  return d.name;
}

Parser::Decl Parser::resolve(std::string_view name) const {
  const std::string key(name);
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    if (it->names.empty()) continue;
    const auto f = it->names.find(key);
    if (f != it->names.end()) return f->second;
  }
  Decl d;
  d.name = std::string(name);
  d.reg = !name.empty() && name[0] == '%';
  return d;
}

// A declaration statement: `.global .align 4 .b8 x[16] = {…};`, `.reg .b32 %r<9>;`,
// `.reg .u32 %r0, %r1;`, `.extern .shared .align 16 .b8 dyn[];`, `.global .texref t;`.
bool Parser::parse_variables(Linkage linkage, std::vector<Variable>& out, bool in_body) {
  const Token& first = peek();
  Variable proto;
  proto.linkage = linkage;
  proto.line = first.line;
  bool sampler = false;
  while (peek().kind == Tok::Directive) {
    const Token& t = peek();
    const Space sp = space_of(t.text);
    const Type ty = type_from_name(t.text);
    if (sp != Space::None) {
      if (proto.space != Space::None)
        return fail(t, "expected one state space, found a second (" + quoted(t.text) + ")");
      proto.space = sp;
      next();
    } else if (t.text == ".align") {
      next();
      if (!parse_u32(proto.align, "an alignment after '.align'")) return false;
      if (proto.align == 0 || (proto.align & (proto.align - 1)) != 0)
        return fail(t, "expected a power of two after '.align'");
    } else if (t.text == ".v2" || t.text == ".v4" || t.text == ".v8") {
      proto.vector = static_cast<uint32_t>(t.text[2] - '0');
      next();
    } else if (ty != Type::None) {
      if (proto.type != Type::None) return fail(t, "expected one type, found a second (" + quoted(t.text) + ")");
      proto.type = ty;
      next();
    } else if (t.text == ".texref" || t.text == ".surfref" || t.text == ".samplerref") {
      // Texture, surface and sampler references: opaque handles the generator binds.
      proto.space = Space::Tex;
      sampler = t.text == ".samplerref";
      next();
    } else if (t.text == ".attribute") {
      next();
      if (!is_punct('(')) return expected("'(' after '.attribute'");
      if (!skip_balanced('(', ')')) return false;
    } else if (t.text == ".ptr") {
      next();
    } else {
      return fail(t, "expected a state space, type, '.align' or a name in this declaration, found " + quoted(t.text));
    }
  }
  if (proto.space == Space::None) return fail(first, "expected a state space (.global, .reg, …) in this declaration");
  if (proto.type == Type::None && proto.space != Space::Tex)
    return expected("a type (.u32, .b8, …) in this declaration");
  if (!in_body && (proto.space == Space::Reg || proto.space == Space::Param))
    return fail(first, "expected a module-scope state space (.reg and .param belong in functions)");
  const bool reg = proto.space == Space::Reg;
  for (;;) {
    const Token& name = peek();
    if (name.kind != Tok::Ident || name.text == "_") return expected("a name in this declaration");
    next();
    if (is_punct('<')) {
      // %r<N>: the registers %r0 … %r{N-1}.
      next();
      uint64_t count = 0;
      if (!parse_uint(count, "a register count after '<'", kMaxRegisterRange)) return false;
      if (!expect_punct('>', "after the register count")) return false;
      registers_ += count;
      if (registers_ > kMaxRegisters)
        return fail(name, "expected at most " + std::to_string(kMaxRegisters) + " registers in a module");
      for (uint64_t k = 0; k < count; ++k) {
        Variable v = proto;
        v.name = declare(std::string(name.text) + std::to_string(k), reg);
        out.push_back(std::move(v));
      }
    } else {
      Variable v = proto;
      while (is_punct('[')) {
        next();
        v.is_array = true;
        uint64_t dim = 0;
        if (!is_punct(']') && !parse_uint(dim, "an array dimension", kMaxDimension)) return false;
        v.dims.push_back(dim);
        if (!expect_punct(']', "after the array dimension")) return false;
      }
      if (reg && ++registers_ > kMaxRegisters)
        return fail(name, "expected at most " + std::to_string(kMaxRegisters) + " registers in a module");
      if (is_punct('=')) {
        next();
        if (sampler) {
          if (!is_punct('{')) return expected("'{' after '=' of a .samplerref");
          if (!skip_balanced('{', '}')) return false;
        } else {
          v.has_init = true;
          if (!parse_initializer(v, 0)) return false;
          // An unsized outer dimension takes its size from the initialiser.
          if (v.is_array && v.dims[0] == 0) {
            uint64_t inner = v.vector;
            for (size_t k = 1; k < v.dims.size(); ++k) inner *= v.dims[k] == 0 ? 1 : v.dims[k];
            if (inner == 0) inner = 1;
            v.dims[0] = (v.init.size() + inner - 1) / inner;
          }
        }
      }
      v.name = declare(name.text, reg);
      out.push_back(std::move(v));
    }
    if (is_punct(',')) {
      next();
      continue;
    }
    return expect_punct(';', "after the declaration of " + quoted(name.text));
  }
}

bool Parser::parse_initializer(Variable& v, int depth) {
  if (!is_punct('{')) return parse_init_element(v);
  if (depth >= kMaxInitDepth)
    return fail(peek(), "expected at most " + std::to_string(kMaxInitDepth) + " nested braces in an initialiser");
  next();
  if (accept_punct('}')) return true;
  for (;;) {
    if (!parse_initializer(v, depth + 1)) return false;
    if (accept_punct(',')) continue;
    return expect_punct('}', "or ',' in the initialiser");
  }
}

// One element: a number, `sym`, `sym+N`, `generic(sym)` or `generic(sym)+N`.
bool Parser::parse_init_element(Variable& v) {
  Variable::Init e;
  const Token& t = peek();
  if (t.kind == Tok::Ident) {
    if (t.text == "generic" && is_punct('(', 1)) {
      next();
      next();
      if (peek().kind != Tok::Ident) return expected("a symbol inside 'generic(…)'");
      e.symbol = std::string(next().text);
      if (!expect_punct(')', "after the symbol of 'generic(…)'")) return false;
    } else {
      e.symbol = std::string(next().text);
    }
    if (is_punct('+') || is_punct('-')) {
      if (!parse_offset(e.offset)) return false;
    }
    v.init.push_back(std::move(e));
    return true;
  }
  Number num;
  bool negative = false;
  if (!parse_number(num, negative, "a value (a number, a symbol or '{') in the initialiser")) return false;
  e.bits = literal_bits(v.type, num);
  v.init.push_back(std::move(e));
  return true;
}

// `+N`, `-N`, `+-N` after a base; adds to `offset` (wrapping, as addresses do).
bool Parser::parse_offset(int64_t& offset) {
  while (is_punct('+') || is_punct('-')) {
    Number num;
    bool negative = false;
    if (!parse_number(num, negative, "an integer offset")) return false;
    if (num.is_float) return fail(peek(), "expected an integer offset, found a float");
    offset = static_cast<int64_t>(static_cast<uint64_t>(offset) + num.bits);
  }
  return true;
}

// `.param .align 8 .b8 name[24]`, `.param .u64 .ptr .global .align 4 name`, `.reg .b32 r`;
// in a prototype the name is `_` (or absent).
bool Parser::parse_param(Param& p, bool allow_unnamed) {
  const Token& first = peek();
  if (first.kind != Tok::Directive || (first.text != ".param" && first.text != ".reg"))
    return expected("'.param' or '.reg' to begin a parameter");
  p.space = space_of(first.text);
  next();
  bool after_ptr = false;
  while (peek().kind == Tok::Directive) {
    const Token& t = peek();
    const Type ty = type_from_name(t.text);
    if (t.text == ".align") {
      next();
      uint32_t a = 0;
      if (!parse_u32(a, "an alignment after '.align'")) return false;
      (after_ptr ? p.ptr_align : p.align) = a;
    } else if (t.text == ".ptr") {
      after_ptr = true;
      p.ptr_space = Space::Generic;
      next();
    } else if (after_ptr && space_of(t.text) != Space::None) {
      p.ptr_space = space_of(t.text);
      next();
    } else if (ty != Type::None) {
      if (p.type != Type::None)
        return fail(t, "expected one type in a parameter, found a second (" + quoted(t.text) + ")");
      p.type = ty;
      next();
    } else if (t.text == ".attribute") {
      next();
      if (!skip_balanced('(', ')')) return false;
    } else if (t.text == ".texref" || t.text == ".surfref" || t.text == ".samplerref") {
      next();  // an opaque handle parameter (old texture API): 8 bytes
      p.type = Type::B64;
    } else {
      return fail(t, "expected a type, '.align' or '.ptr' in a parameter, found " + quoted(t.text));
    }
  }
  if (p.type == Type::None) return expected("a type in the parameter");
  const Token& name = peek();
  if (name.kind == Tok::Ident) {
    p.name = std::string(name.text);
    next();
  } else if (!allow_unnamed) {
    return expected("a parameter name");
  }
  if (is_punct('[')) {
    next();
    if (!is_punct(']') && !parse_uint(p.array, "an array size", kMaxDimension)) return false;
    if (!expect_punct(']', "after the array size")) return false;
  }
  return true;
}

bool Parser::parse_param_list(std::vector<Param>& out, bool allow_unnamed, const std::string& context) {
  if (!expect_punct('(', context)) return false;
  if (accept_punct(')')) return true;
  for (;;) {
    Param p;
    if (!parse_param(p, allow_unnamed)) return false;
    out.push_back(std::move(p));
    if (accept_punct(',')) continue;
    return expect_punct(')', "or ',' after a parameter");
  }
}

bool Parser::parse_function(Module& m, Linkage linkage) {
  Function f;
  const Token& kw = next();
  f.entry = kw.text == ".entry";
  f.linkage = linkage;
  f.line = kw.line;
  if (!f.entry && is_punct('(')) {
    if (!parse_param_list(f.returns, false, "to begin the return parameters")) return false;
  }
  const Token& name = peek();
  if (name.kind != Tok::Ident) return expected(std::string("a name after '") + std::string(kw.text) + "'");
  f.name = std::string(name.text);
  next();
  if (is_punct('(')) {
    if (!parse_param_list(f.params, false, "to begin the parameters of " + quoted(f.name))) return false;
  }
  if (!parse_perf_directives(f)) return false;
  if (accept_punct(';')) {
    m.functions.push_back(std::move(f));
    return true;
  }
  if (!is_punct('{')) return expected("'{' or ';' after the declaration of " + quoted(f.name));
  f.has_body = true;
  if (!parse_body(f)) return false;
  m.functions.push_back(std::move(f));
  return true;
}

bool Parser::parse_perf_directives(Function& f) {
  auto triple = [&](uint32_t(&out)[3], const std::string& what) {
    for (int k = 0; k < 3; ++k) out[k] = 1;  // omitted dimensions are 1
    for (int k = 0; k < 3; ++k) {
      if (!parse_u32(out[k], "a number after '" + what + "'")) return false;
      if (k == 2 || !is_punct(',')) break;
      next();
    }
    return true;
  };
  while (peek().kind == Tok::Directive) {
    const Token& t = peek();
    const std::string d(t.text);
    bool ok = true;
    if (d == ".maxntid") {
      next();
      ok = triple(f.maxntid, d);
    } else if (d == ".reqntid") {
      next();
      ok = triple(f.reqntid, d);
    } else if (d == ".reqnctapercluster") {
      next();
      ok = triple(f.reqnctapercluster, d);
    } else if (d == ".minnctapersm" || d == ".maxnctapersm") {
      next();
      uint32_t v = 0;
      ok = parse_u32(v, "a number after '" + d + "'");
      if (d == ".minnctapersm") f.minnctapersm = v;
    } else if (d == ".maxnreg") {
      next();
      ok = parse_u32(f.maxnreg, "a number after '.maxnreg'");
    } else if (d == ".maxclusterrank") {
      next();
      ok = parse_u32(f.maxclusterrank, "a number after '.maxclusterrank'");
    } else if (d == ".noreturn") {
      f.noreturn = true;
      next();
    } else if (d == ".explicitcluster" || d == ".blocksareclusters") {
      next();
    } else if (d == ".pragma") {
      ok = skip_statement();
    } else {
      return fail(t, "expected '{' or ';' after the declaration of " + quoted(f.name) + ", found " + quoted(d));
    }
    if (!ok) return false;
  }
  return true;
}

// Walks the body ahead of the parse (from its '{', bounded by the text) to find the labels of
// each inner scope. Only a '{' where a statement may begin opens a scope: vector operands and
// initialisers open theirs in the middle of a statement.
void Parser::collect_scoped_labels() {
  scope_labels_.clear();
  std::vector<size_t> open;  // '{' token indices of the scopes around; [0] is the body's
  size_t group = 0;          // braces of a vector or initialiser in the current statement
  bool start = true;         // at the beginning of a statement
  for (size_t i = pos_; i < toks_.size(); ++i) {
    const Token& t = toks_[i];
    if (t.kind == Tok::End) break;
    if (t.kind == Tok::Punct && t.text[0] == '{') {
      if (start && group == 0) {
        if (open.size() > kMaxScopeDepth) break;  // the parse reports it
        open.push_back(i);
      } else {
        ++group;
        start = false;
      }
      continue;
    }
    if (t.kind == Tok::Punct && t.text[0] == '}') {
      if (group > 0) {
        --group;
        continue;
      }
      if (open.empty()) break;
      open.pop_back();
      if (open.empty()) break;
      start = true;
      continue;
    }
    if (t.kind == Tok::Punct && t.text[0] == ';') {
      start = true;
      group = 0;
      continue;
    }
    if (start && t.kind == Tok::Directive && (t.text == ".loc" || t.text == ".file")) {
      while (i + 1 < toks_.size() && toks_[i + 1].kind != Tok::End && toks_[i + 1].line == t.line) ++i;
      continue;
    }
    if (start && t.kind == Tok::Ident && i + 1 < toks_.size() && toks_[i + 1].kind == Tok::Punct &&
        toks_[i + 1].text[0] == ':') {
      const bool proto = i + 2 < toks_.size() && toks_[i + 2].kind == Tok::Directive &&
                         toks_[i + 2].text == ".callprototype";
      if (!proto && open.size() > 1) scope_labels_[open.back()].push_back(t.text);
      ++i;  // the ':'; a statement follows
      continue;
    }
    start = false;
  }
}

bool Parser::parse_body(Function& f) {
  collect_scoped_labels();
  const Token& open = next();  // '{'
  scopes_.clear();
  scopes_.push_back(Scope{});
  scope_count_ = 0;
  while (!scopes_.empty()) {
    const Token& t = peek();
    if (t.kind == Tok::End) return fail(open, "expected '}' to close the body of " + quoted(f.name));
    if (t.kind == Tok::Punct) {
      const char c = t.text[0];
      if (c == '{') {
        if (scopes_.size() >= kMaxScopeDepth)
          return fail(t, "expected at most " + std::to_string(kMaxScopeDepth) + " nested scopes");
        const size_t at = pos_;
        next();
        Scope s;
        s.number = ++scope_count_;
        scopes_.push_back(std::move(s));
        const auto labels = scope_labels_.find(at);
        if (labels != scope_labels_.end())
          for (std::string_view l : labels->second) declare(l, false);
        continue;
      }
      if (c == '}') {
        next();
        scopes_.pop_back();
        continue;
      }
      if (c == ';') {
        next();
        continue;
      }
      if (c == '@') {
        if (!parse_instruction(f)) return false;
        continue;
      }
      return expected("an instruction, a label or a declaration");
    }
    if (t.kind == Tok::Directive) {
      const Space sp = space_of(t.text);
      bool ok;
      if (sp == Space::Reg || sp == Space::Param || sp == Space::Local || sp == Space::Shared || sp == Space::Const ||
          sp == Space::Global || sp == Space::Tex) {
        ok = parse_variables(Linkage::Internal, f.locals, true);
      } else if (t.text == ".pragma") {
        ok = skip_statement();
      } else if (t.text == ".loc" || t.text == ".file") {
        ok = skip_line();
      } else {
        return expected("an instruction, a label or a declaration");
      }
      if (!ok) return false;
      continue;
    }
    if (t.kind == Tok::Ident && is_punct(':', 1)) {
      Statement st;
      st.label = std::string(t.text);
      next();
      next();
      if (is_dir(".callprototype")) {
        st.kind = Statement::Kind::Prototype;
        st.label = declare(st.label, false);
        if (!parse_prototype(st)) return false;
      } else {
        st.kind = Statement::Kind::Label;
        st.label = declare(st.label, false);
      }
      f.body.push_back(std::move(st));
      continue;
    }
    if (t.kind == Tok::Ident) {
      if (!parse_instruction(f)) return false;
      continue;
    }
    return expected("an instruction, a label or a declaration");
  }
  return true;
}

// `.callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _) [.noreturn];`
bool Parser::parse_prototype(Statement& st) {
  next();  // .callprototype
  if (is_punct('(')) {
    if (!parse_param_list(st.proto_returns, true, "to begin the prototype's returns")) return false;
  }
  if (peek().kind != Tok::Ident || peek().text != "_") return expected("'_' in place of the prototype's function name");
  next();
  if (is_punct('(')) {
    if (!parse_param_list(st.proto_params, true, "to begin the prototype's parameters")) return false;
  }
  while (is_dir(".noreturn") || is_dir(".abi_preserve") || is_dir(".abi_preserve_control")) {
    next();
    if (peek().kind == Tok::Number) next();
  }
  return expect_punct(';', "after the prototype " + quoted(st.label));
}

bool Parser::parse_instruction(Function& f) {
  Statement st;
  Instruction& in = st.insn;
  in.line = peek().line;
  if (accept_punct('@')) {
    if (accept_punct('!')) in.guard_negated = true;
    if (peek().kind != Tok::Ident) return expected("a predicate register after '@'");
    in.guard = resolve(next().text).name;
  }
  const Token& op = peek();
  if (op.kind != Tok::Ident) return expected("an instruction");
  next();
  // Split `ld.global.nc.v4.f32`: the opcode, then types and modifiers.
  const std::string_view text = op.text;
  size_t dot = text.find('.');
  in.opcode = std::string(text.substr(0, dot));
  while (dot != std::string_view::npos) {
    const size_t from = dot + 1;
    dot = text.find('.', from);
    const std::string_view part = text.substr(from,
                                              dot == std::string_view::npos ? std::string_view::npos : dot - from);
    const Type ty = type_from_name(part);
    if (ty != Type::None) {
      in.types.push_back(ty);
    } else {
      in.mods.emplace_back(part);
    }
  }
  // Operands may carry their own dotted parts, which the lexer glues on: `bar.sync 0` is fine,
  // but `mov.u32 %r1, %tid.x` keeps `%tid.x` whole (a special register and its component).
  const std::string context = "of " + quoted(text);
  if (in.opcode == "call") {
    if (!parse_call(in)) return false;
  } else if (!accept_punct(';')) {
    for (;;) {
      Operand o;
      if (!parse_operand(o, true, context)) return false;
      in.ops.push_back(std::move(o));
      if (accept_punct(',')) continue;
      if (!expect_punct(';', "after the operands " + context)) return false;
      break;
    }
  }
  // Branch targets are labels.
  if ((in.opcode == "bra" || in.opcode == "brx") && !in.ops.empty()) {
    Operand& target = in.ops.back();
    if (target.kind == Operand::Kind::Symbol && target.imm == 0) target.kind = Operand::Kind::Label;
  }
  f.body.push_back(std::move(st));
  return true;
}

// `call[.uni] [(ret, …),] target[, (arg, …)][, proto];` → {returns, target, args[, proto]}.
bool Parser::parse_call(Instruction& in) {
  auto list = [&](Operand& out, const std::string& what) {
    out.kind = Operand::Kind::Vector;
    next();  // '('
    if (accept_punct(')')) return true;
    for (;;) {
      Operand o;
      if (!parse_operand(o, false, what)) return false;
      out.elems.push_back(std::move(o));
      if (accept_punct(',')) continue;
      return expect_punct(')', "or ',' in " + what);
    }
  };
  Operand returns, target, args;
  returns.kind = args.kind = Operand::Kind::Vector;
  if (is_punct('(')) {
    if (!list(returns, "the return list of 'call'")) return false;
    if (!expect_punct(',', "after the return list of 'call'")) return false;
  }
  if (peek().kind != Tok::Ident) return expected("the function 'call' calls");
  const Decl d = resolve(next().text);
  target.kind = d.reg ? Operand::Kind::Reg : Operand::Kind::Symbol;
  target.name = d.name;
  in.ops.push_back(std::move(returns));
  in.ops.push_back(std::move(target));
  bool have_proto = false;
  Operand proto;
  if (accept_punct(',')) {
    if (is_punct('(')) {
      if (!list(args, "the argument list of 'call'")) return false;
      if (accept_punct(',')) have_proto = true;
    } else {
      have_proto = true;
    }
    if (have_proto) {
      if (peek().kind != Tok::Ident) return expected("a prototype or a label list after the arguments of 'call'");
      proto.kind = Operand::Kind::Label;
      proto.name = resolve(next().text).name;
    }
  }
  in.ops.push_back(std::move(args));
  if (have_proto) in.ops.push_back(std::move(proto));
  return expect_punct(';', "after the operands of 'call'");
}

bool Parser::parse_operand(Operand& op, bool allow_vector, const std::string& context, int depth) {
  // Operands nest only a little (`[t, {…}]`, `{…}`, `!%p`): deeper text is not PTX.
  if (depth > kMaxOperandDepth)
    return expected("a simpler operand (operands nest at most " + std::to_string(kMaxOperandDepth) + " deep) " +
                    context);
  if (accept_punct('!')) {
    if (!parse_operand(op, false, context, depth + 1)) return false;
    op.negate = !op.negate;
    return true;
  }
  const Token& t = peek();
  if (t.kind == Tok::Punct && t.text[0] == '{') {
    if (!allow_vector) return expected("an operand (vectors do not nest) " + context);
    next();
    op.kind = Operand::Kind::Vector;
    for (;;) {
      Operand e;
      if (!parse_operand(e, false, context, depth + 1)) return false;
      op.elems.push_back(std::move(e));
      if (accept_punct(',')) continue;
      if (!expect_punct('}', "or ',' in a vector operand " + context)) return false;
      break;
    }
  } else if (t.kind == Tok::Punct && t.text[0] == '[') {
    if (!parse_address(op, context, depth)) return false;
  } else if (t.kind == Tok::Number || (t.kind == Tok::Punct && (t.text[0] == '-' || t.text[0] == '+'))) {
    Number num;
    bool negative = false;
    if (!parse_number(num, negative, "an operand " + context)) return false;
    if (num.is_float) {
      op.kind = Operand::Kind::FImm;
      op.fbits = num.bits;
      op.fdouble = num.fdouble;
    } else {
      op.kind = Operand::Kind::Imm;
      op.imm = static_cast<int64_t>(num.bits);
    }
  } else if (t.kind == Tok::Ident) {
    if (t.text == "_") {
      next();
      op.kind = Operand::Kind::Sink;
    } else if (t.text == "generic" && is_punct('(', 1)) {
      next();
      next();
      if (peek().kind != Tok::Ident) return expected("a symbol inside 'generic(…)'");
      op.kind = Operand::Kind::Symbol;
      op.name = resolve(next().text).name;
      if (!expect_punct(')', "after the symbol of 'generic(…)'")) return false;
      if ((is_punct('+') || is_punct('-')) && !parse_offset(op.imm)) return false;
    } else {
      const Decl d = resolve(next().text);
      op.name = d.name;
      if (d.reg) {
        op.kind = Operand::Kind::Reg;
      } else {
        op.kind = Operand::Kind::Symbol;
        if ((is_punct('+') || is_punct('-')) && !parse_offset(op.imm)) return false;
      }
    }
  } else {
    return expected("an operand " + context);
  }
  if (is_punct('|')) {
    // d|p: a value and a predicate, both written by the instruction.
    next();
    Operand pred;
    if (peek().kind != Tok::Ident) return expected("a predicate register after '|'");
    const Decl d = resolve(next().text);
    pred.kind = d.reg ? Operand::Kind::Reg : Operand::Kind::Symbol;
    pred.name = d.name;
    Operand pair;
    pair.kind = Operand::Kind::Pair;
    pair.elems.push_back(std::move(op));
    pair.elems.push_back(std::move(pred));
    op = std::move(pair);
  }
  return true;
}

// `[%rd1]`, `[%rd1+8]`, `[%rd1+-8]`, `[sym]`, `[sym+4]`, `[64]`, and the texture forms
// `[tex, {%f1, %f2}]` / `[tex, sampler, {…}]` (the further operands follow the base in elems).
bool Parser::parse_address(Operand& op, const std::string& context, int depth) {
  next();  // '['
  op.kind = Operand::Kind::Address;
  const Token& t = peek();
  if (t.kind == Tok::Ident) {
    Operand base;
    const Decl d = resolve(next().text);
    base.kind = d.reg ? Operand::Kind::Reg : Operand::Kind::Symbol;
    base.name = d.name;
    op.elems.push_back(std::move(base));
    if ((is_punct('+') || is_punct('-')) && !parse_offset(op.imm)) return false;
    while (accept_punct(',')) {
      Operand e;
      if (!parse_operand(e, true, context, depth + 1)) return false;
      op.elems.push_back(std::move(e));
    }
  } else if (t.kind == Tok::Number || is_punct('-') || is_punct('+')) {
    Number num;
    bool negative = false;
    if (!parse_number(num, negative, "an address " + context)) return false;
    if (num.is_float) return fail(t, "expected an integer address " + context + ", found a float");
    op.imm = static_cast<int64_t>(num.bits);
  } else {
    return expected("a register, a symbol or a number inside '[' " + context);
  }
  return expect_punct(']', "to close the address " + context);
}

}  // namespace

std::optional<Module> parse(std::string_view text, ParseError* error) {
  ParseError local;
  ParseError& err = error ? *error : local;
  err = ParseError{};
  std::vector<Token> toks;
  if (!lex(text, toks, err)) return std::nullopt;
  Parser p(std::move(toks));
  Module m;
  if (!p.parse_module(m)) {
    err = p.error();
    return std::nullopt;
  }
  return m;
}

}  // namespace fg::ptx
