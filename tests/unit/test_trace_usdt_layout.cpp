// SPDX-License-Identifier: Apache-2.0
// The fast USDT path reads the backend's probe arguments from fixed registers: the backend's
// notes must all say so, and a library whose notes say otherwise is refused for USDT (the
// collector then traces it through entry/return probes).
#include "collector/collector.h"
#include "collector/elf_symbols.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

using fgtrace::ElfSymbols;

namespace {
// `n` bytes of file `path` at `offset`.
std::vector<unsigned char> bytes_at(const std::string& path, uint64_t offset, size_t n) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  std::vector<unsigned char> out(n);
  f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n));
  return f ? out : std::vector<unsigned char>{};
}
}  // namespace

TEST_CASE("usdt: every probe site of the built backend keeps its arguments in the fixed registers", "[trace][usdt]") {
  const ElfSymbols elf(std::string(FAKEGPU_TEST_LIBDIR) + "/libcudart.so.13");
  auto probes = elf.usdt_probes("fakegpu");
  std::sort(probes.begin(), probes.end());
  CHECK(probes == std::vector<std::string>{"alloc", "ctx_switch", "free", "implicit_free", "kernel_done", "launch"});
  for (const char* name : {"alloc", "free", "implicit_free", "kernel_done"})
    for (const auto& args : elf.usdt_arguments("fakegpu", name)) CHECK(args == "8@%rdi 8@%rsi 8@%rdx 8@%rcx");
  for (const auto& args : elf.usdt_arguments("fakegpu", "launch")) CHECK(args == "8@%rdi 8@%rsi 8@%rdx");
  // One site, or more where an optimized build inlines the function that fires it (Release).
  const auto ctx_switch = elf.usdt_arguments("fakegpu", "ctx_switch");
  CHECK_FALSE(ctx_switch.empty());
  for (const auto& args : ctx_switch) CHECK(args == "8@%rdi 8@%rsi");
  CHECK(elf.usdt_arguments("fakegpu", "alloc").size() >= 3);        // the API's allocation paths
  CHECK(elf.usdt_arguments("fakegpu", "kernel_done").size() >= 2);  // a launch run, a launch recorded
  CHECK(fgtrace::usdt_layout_problem(elf).empty());
}

TEST_CASE("usdt: a library whose probe arguments are elsewhere is refused, naming the probe", "[trace][usdt]") {
  const ElfSymbols elf(FG_SDT_FIXTURE);
  REQUIRE(elf.usdt_probes("fakegpu") == std::vector<std::string>{"alloc"});
  const auto args = elf.usdt_arguments("fakegpu", "alloc");
  REQUIRE(args.size() == 1);
  CHECK(args[0].find("@$4096") != std::string::npos);  // a constant, not a register
  CHECK(fgtrace::usdt_layout_problem(elf) ==
        "its USDT probe fakegpu:alloc has arguments \"" + args[0] +
            "\", not \"8@%rdi 8@%rsi 8@%rdx 8@%rcx\" (a backend of another version)");
}

TEST_CASE("usdt: each site's file offset is the backend's 5-byte NOP, with no semaphore", "[trace][usdt]") {
  const std::string lib = std::string(FAKEGPU_TEST_LIBDIR) + "/libcudart.so.13";
  const ElfSymbols elf(lib);
  const std::vector<unsigned char> nop5{0x0f, 0x1f, 0x44, 0x00, 0x00};
  for (const char* name : {"alloc", "free", "implicit_free", "ctx_switch", "launch", "kernel_done"}) {
    INFO("fakegpu:" << name);
    const auto sites = elf.usdt_sites("fakegpu", name);
    CHECK(sites.offsets.size() == elf.usdt_arguments("fakegpu", name).size());
    CHECK(sites.semaphores == std::vector<uint64_t>(sites.offsets.size(), 0));
    for (uint64_t off : sites.offsets) CHECK(bytes_at(lib, off, nop5.size()) == nop5);
  }
  CHECK(elf.usdt_sites("fakegpu", "no_such_probe").offsets.empty());
}

TEST_CASE("usdt: a probe's semaphore is given as the file offset of its counter", "[trace][usdt]") {
  const ElfSymbols elf(FG_SDT_FIXTURE);
  const auto sites = elf.usdt_sites("fixture", "sem");
  REQUIRE(sites.offsets.size() == 1);
  REQUIRE(sites.semaphores.size() == 1);
  CHECK(bytes_at(FG_SDT_FIXTURE, sites.offsets[0], 1) == std::vector<unsigned char>{0x90});           // sys/sdt.h's nop
  CHECK(bytes_at(FG_SDT_FIXTURE, sites.semaphores[0], 2) == std::vector<unsigned char>{0x47, 0x41});  // 0x4147
  CHECK(elf.usdt_sites("fakegpu", "alloc").semaphores == std::vector<uint64_t>{0});  // the probe without one
}
