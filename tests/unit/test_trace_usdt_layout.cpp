// The fast USDT path reads the backend's probe arguments from fixed registers: the backend's
// notes must all say so, and a library whose notes say otherwise is refused for USDT (the
// collector then traces it through entry/return probes).
#include "collector/collector.h"
#include "collector/elf_symbols.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using fgtrace::ElfSymbols;

TEST_CASE("usdt: every probe site of the built backend keeps its arguments in the fixed registers", "[trace][usdt]") {
  const ElfSymbols elf(std::string(FAKEGPU_TEST_LIBDIR) + "/libcudart.so.13");
  auto probes = elf.usdt_probes("fakegpu");
  std::sort(probes.begin(), probes.end());
  CHECK(probes == std::vector<std::string>{"alloc", "ctx_switch", "free", "implicit_free"});
  for (const char* name : {"alloc", "free", "implicit_free"})
    for (const auto& args : elf.usdt_arguments("fakegpu", name)) CHECK(args == "8@%rdi 8@%rsi 8@%rdx");
  CHECK(elf.usdt_arguments("fakegpu", "ctx_switch") == std::vector<std::string>{"8@%rdi 8@%rsi"});
  CHECK(elf.usdt_arguments("fakegpu", "alloc").size() >= 3);  // the API's allocation paths
  CHECK(fgtrace::usdt_layout_problem(elf).empty());
}

TEST_CASE("usdt: a library whose probe arguments are elsewhere is refused, naming the probe", "[trace][usdt]") {
  const ElfSymbols elf(FG_SDT_FIXTURE);
  REQUIRE(elf.usdt_probes("fakegpu") == std::vector<std::string>{"alloc"});
  const auto args = elf.usdt_arguments("fakegpu", "alloc");
  REQUIRE(args.size() == 1);
  CHECK(args[0].find("@$4096") != std::string::npos);  // a constant, not a register
  CHECK(fgtrace::usdt_layout_problem(elf) == "its USDT probe fakegpu:alloc has arguments \"" + args[0] +
                                                 "\", not \"8@%rdi 8@%rsi 8@%rdx\" (a backend of another version)");
}
