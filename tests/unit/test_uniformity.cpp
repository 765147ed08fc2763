// SPDX-License-Identifier: Apache-2.0
// The uniformity analysis (kernels/uniformity.h): which registers are the same in all threads
// of a block or of a warp, and whether a kernel's barriers are all reached by the whole block
// together, so that it can run as thread loops split at them.
#include "kernels/uniformity.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace fg::kernels;

namespace {

struct Analysed {
  fg::ptx::Module module;
  MeetingAnalysis result;
};

// Parses a module with one kernel `k(.param .u32 n, .param .u64 p)` whose body is `body`
// (registers %r<20>, %rd<10>, %p<10>, %f<10> declared) and analyses it; `extra` goes before
// the kernel (functions it calls, variables).
Analysed analyse(const std::string& body, const std::string& extra = "") {
  const std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n" + extra +
                           ".visible .entry k(.param .u32 n, .param .u64 p)\n{\n"
                           ".reg .pred %p<10>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<10>;\n.reg .f32 %f<10>;\n" +
                           body + "\n}\n";
  fg::ptx::ParseError e;
  auto m = fg::ptx::parse(text, &e);
  INFO(e.message);
  REQUIRE(m.has_value());
  Analysed a{std::move(*m), {}};
  const fg::ptx::Function* k = a.module.find_function("k");
  REQUIRE(k);
  a.result = analyze_meetings(a.module, *k);
  return a;
}

Uniformity of(const Analysed& a, const std::string& reg) {
  auto it = a.result.registers.find(reg);
  REQUIRE(it != a.result.registers.end());
  return it->second;
}

}  // namespace

TEST_CASE("uniformity: sources of uniform, warp-uniform and varying values", "[uniformity]") {
  const auto a = analyse(R"(
  .const .u32 table[4];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.y;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mov.u32 %r5, %tid.x;
  mov.u32 %r6, %tid.y;
  shr.u32 %r7, %r5, 5;
  add.s32 %r8, %r5, %r1;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r9, [%rd1];
  ld.const.u32 %r10, [table+4];
  mov.u32 %r11, %laneid;
  atom.global.add.u32 %r12, [%rd1], 1;
  setp.lt.u32 %p1, %r5, 64;
  setp.gt.u32 %p2, %r5, 31;
  setp.lt.u32 %p3, %r5, 33;
  setp.eq.u32 %p4, %r5, 0;
  setp.lt.u32 %p5, %r1, %r4;
  shr.u32 %r13, %r5, 4;
  cvt.u64.u32 %rd2, %r5;
  setp.ge.u64 %p6, %rd2, 96;
  mov.u32 %r14, %warpid;
  ret;)");
  CHECK_FALSE(a.result.meets);
  CHECK(of(a, "%r1") == Uniformity::Block);    // a kernel parameter
  CHECK(of(a, "%r2") == Uniformity::Block);    // blockIdx
  CHECK(of(a, "%r3") == Uniformity::Block);    // blockDim
  CHECK(of(a, "%r4") == Uniformity::Block);    // arithmetic on uniform values
  CHECK(of(a, "%r5") == Uniformity::Varying);  // threadIdx.x
  CHECK(of(a, "%r6") == Uniformity::Warp);     // threadIdx.y
  CHECK(of(a, "%r7") == Uniformity::Warp);     // threadIdx.x / 32
  CHECK(of(a, "%r8") == Uniformity::Varying);
  CHECK(of(a, "%rd1") == Uniformity::Block);
  CHECK(of(a, "%r9") == Uniformity::Varying);  // a global load, even at a uniform address
  CHECK(of(a, "%r10") == Uniformity::Block);   // constant memory at a uniform address
  CHECK(of(a, "%r11") == Uniformity::Varying);
  CHECK(of(a, "%r12") == Uniformity::Varying);
  CHECK(of(a, "%p1") == Uniformity::Warp);  // threadIdx.x < 64
  CHECK(of(a, "%p2") == Uniformity::Warp);  // threadIdx.x > 31
  CHECK(of(a, "%p3") == Uniformity::Varying);
  CHECK(of(a, "%p4") == Uniformity::Varying);
  CHECK(of(a, "%p5") == Uniformity::Block);
  CHECK(of(a, "%r13") == Uniformity::Varying);  // threadIdx.x / 16 splits a warp
  CHECK(of(a, "%p6") == Uniformity::Warp);      // widened threadIdx.x >= 96
  CHECK(of(a, "%r14") == Uniformity::Warp);
}

TEST_CASE("uniformity: registers written in code only some threads run vary", "[uniformity]") {
  const auto a = analyse(R"(
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bra $L1;
  mov.u32 %r3, 1;
$L1:
  setp.lt.u32 %p2, %r2, 5;
  @%p2 bra $L2;
  mov.u32 %r4, 1;
$L2:
  @%p1 mov.u32 %r5, 7;
  @%p2 mov.u32 %r6, 7;
  mov.u32 %r7, 0;
$L3:
  add.s32 %r7, %r7, 1;
  setp.lt.u32 %p3, %r7, %r1;
  @%p3 bra $L3;
  mov.u32 %r8, 0;
$L4:
  add.s32 %r8, %r8, 1;
  setp.lt.u32 %p4, %r8, %r2;
  @%p4 bra $L4;
  ret;)");
  CHECK(of(a, "%r3") == Uniformity::Varying);  // under a varying branch
  CHECK(of(a, "%r4") == Uniformity::Block);    // under a uniform one
  CHECK(of(a, "%r5") == Uniformity::Varying);  // under a varying guard
  CHECK(of(a, "%r6") == Uniformity::Block);
  CHECK(of(a, "%r7") == Uniformity::Varying);  // a loop with a varying trip count
  CHECK(of(a, "%r8") == Uniformity::Block);
}

TEST_CASE("uniformity: texture and surface reads vary, even at uniform coordinates", "[uniformity]") {
  const auto a = analyse(R"(
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.b32 %f1, 0f3F000000;
  tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}];
  tex.1d.v4.s32.s32 {%r2, %r3, %r4, %r5}, [%rd1, {%r1}];
  tld4.r.2d.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd1, {%f1, %f1}];
  suld.b.2d.b32.trap {%r6}, [%rd1, {%r1, %r1}];
  txq.width.b32 %r7, [%rd1];
  suq.width.b32 %r8, [%rd1];
  sust.b.2d.b32.trap [%rd1, {%r1, %r1}], {%r1};
  ret;)");
  CHECK(of(a, "%rd1") == Uniformity::Block);
  for (const char* r : {"%f2", "%f5", "%r2", "%r5", "%f6", "%f9", "%r6", "%r7", "%r8"}) {
    INFO(r);
    CHECK(of(a, r) == Uniformity::Varying);
  }
}

TEST_CASE("uniformity: barriers all threads reach together allow thread loops", "[uniformity]") {
  SECTION("straight line, and a loop with a uniform trip count") {
    const auto a = analyse(R"(
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  bar.sync 0;
  mov.u32 %r3, 0;
$L1:
  setp.lt.u32 %p1, %r2, %r3;
  @%p1 bra $L2;
  add.s32 %r4, %r2, 1;
$L2:
  barrier.sync 0;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra $L1;
  ret;)");
    CHECK(a.result.meets);
    CHECK(a.result.block_loops);
    CHECK(a.result.why.empty());
  }
  SECTION("inside a branch on a parameter, and guarded by a uniform predicate") {
    const auto a = analyse(R"(
  ld.param.u32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L1;
  bar.sync 0;
$L1:
  @%p1 bar.sync 1;
  ret;)");
    CHECK(a.result.block_loops);
  }
  SECTION("a uniform early return before the barrier") {
    const auto a = analyse(R"(
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 ret;
  bar.sync 0;
  ret;)");
    CHECK(a.result.block_loops);
  }
  SECTION("a return when the launch has no grid workspace (cooperative groups' is_valid())") {
    const auto a = analyse(R"(
  mov.u32 %r1, %envreg1;
  mov.u32 %r2, %envreg2;
  cvt.u64.u32 %rd1, %r2;
  cvt.u64.u32 %rd2, %r1;
  bfi.b64 %rd3, %rd2, %rd1, 32, 32;
  setp.eq.s64 %p1, %rd3, 0;
  @%p1 ret;
  barrier.sync 0;
  ret;)");
    CHECK(of(a, "%rd3") == Uniformity::Block);  // the same in the whole launch
    CHECK(a.result.block_loops);
  }
}

TEST_CASE("uniformity: barriers in divergent code keep fibers", "[uniformity]") {
  auto refused = [](const std::string& body, const std::string& why, const std::string& extra = "") {
    const auto a = analyse(body, extra);
    CHECK(a.result.meets);
    CHECK_FALSE(a.result.block_loops);
    INFO(a.result.why);
    CHECK(a.result.why.find(why) != std::string::npos);
  };
  SECTION("inside a branch on threadIdx") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bra $L1;
  bar.sync 0;
$L1:
  ret;)",
            "line 14: bar in code that not all threads");
  }
  SECTION("guarded by a varying predicate") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bar.sync 0;
  ret;)",
            "not all threads");
  }
  SECTION("after some threads returned") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 5;
  @%p1 ret;
  bar.sync 0;
  ret;)",
            "not all threads");
  }
  SECTION("in a loop with a varying trip count") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
$L1:
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $L1;
  ret;)",
            "not all threads");
  }
  SECTION("under a uniform branch inside a varying one") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bra $L2;
  setp.lt.u32 %p2, %r2, 5;
  @%p2 bra $L1;
  bar.sync 0;
$L1:
  add.s32 %r3, %r2, 1;
$L2:
  ret;)",
            "not all threads");
  }
  SECTION("a branch on a global load") {
    refused(R"(
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L1;
  bar.sync 0;
$L1:
  ret;)",
            "not all threads");
  }
  SECTION("counted barriers, bar.arrive, a counted bar.red") {
    refused("bar.sync 0, 64;\nret;", "with a thread count");
    refused("bar.arrive 1, 64;\nret;", "bar.arrive");
    refused("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\nbar.red.popc.u32 %r2, 0, 64, %p1;\nret;",
            "with a thread count");
  }
  SECTION("bar.red for the whole block: loops, and its result is the same in every thread") {
    const auto a = analyse(
        "mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\nbar.red.popc.u32 %r2, 0, %p1;\n"
        "bar.red.or.pred %p2, 0, %p1;\nret;");
    CHECK(a.result.block_loops);
    CHECK(of(a, "%r2") == Uniformity::Block);
    CHECK(of(a, "%p2") == Uniformity::Block);
  }
  SECTION("warp operations in code only some lanes of a warp run") {
    refused(R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $L1;
  shfl.sync.down.b32 %r2|%p2, %r1, 1, 31, -1;
$L1:
  ret;)",
            "line 14: shfl in code that not all lanes of a warp run together");
    refused("mov.u32 %r1, %laneid;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bar.warp.sync -1;\nret;", "not all lanes");
  }
  SECTION("a barrier in a called function") {
    refused("call.uni f, ();\nret;", "calls f", ".func f()\n{\nbar.sync 0;\nret;\n}\n");
  }
  SECTION("a loop no thread leaves") { refused("$L1:\nbar.sync 0;\nbra.uni $L1;", "a loop no thread leaves"); }
}

TEST_CASE("uniformity: warp operations whole warps reach together allow lane loops", "[uniformity]") {
  SECTION("in code the whole block runs") {
    const auto a = analyse(R"(
  mov.u32 %r1, %tid.x;
  shfl.sync.down.b32 %r2|%p1, %r1, 1, 31, -1;
  setp.lt.u32 %p2, %r2, 7;
  vote.sync.ballot.b32 %r3, %p2, -1;
  bar.warp.sync -1;
  activemask.b32 %r4;
  bar.sync 0;
  ret;)");
    CHECK(a.result.meets);
    CHECK(a.result.block_loops);
    CHECK_FALSE(a.result.needs_warp_rows);
    CHECK(of(a, "%r3") == Uniformity::Warp);  // a ballot is the same in every lane
  }
  SECTION("under threadIdx.x < 32: only when warps lie within rows of the block") {
    const auto a = analyse(R"(
  mov.u32 %r1, %tid.x;
  bar.sync 0;
  setp.gt.u32 %p1, %r1, 31;
  @%p1 bra $L1;
  shfl.sync.down.b32 %r2|%p2, %r1, 16, 31, -1;
  setp.ne.s32 %p3, %r1, 0;
  @%p3 bra $L1;
  ld.param.u64 %rd1, [p];
  st.global.u32 [%rd1], %r2;
$L1:
  ret;)");
    CHECK(a.result.block_loops);
    CHECK(a.result.needs_warp_rows);
  }
}

TEST_CASE("uniformity: kernels without barriers do not meet", "[uniformity]") {
  const auto a = analyse("call.uni f, ();\nret;", ".func f()\n{\nret;\n}\n");
  CHECK_FALSE(a.result.meets);
  CHECK_FALSE(a.result.block_loops);
}

TEST_CASE("uniformity: the kernels nvcc 13.0 made (tests/unit/fixtures/ptx)", "[uniformity]") {
  auto load = [](const std::string& file) {
    std::ifstream in(std::string(FAKEGPU_SOURCE_DIR "/tests/unit/fixtures/ptx/") + file);
    std::stringstream ss;
    ss << in.rdbuf();
    fg::ptx::ParseError e;
    auto m = fg::ptx::parse(ss.str(), &e);
    INFO(file << ": " << e.message);
    REQUIRE(m.has_value());
    return std::move(*m);
  };
  // Every kernel of every fixture is analysed without a crash.
  for (const auto& e : std::filesystem::directory_iterator(FAKEGPU_SOURCE_DIR "/tests/unit/fixtures/ptx")) {
    if (e.path().extension() != ".ptx") continue;
    const auto m = load(e.path().filename().string());
    for (const auto& f : m.functions)
      if (f.entry && f.has_body) (void)analyze_meetings(m, f);
  }
  const auto sgemm = load("sgemm_sm80.ptx");
  const auto verdict = [](const fg::ptx::Module& m, const std::string& name) {
    const fg::ptx::Function* f = m.find_function(name);
    REQUIRE(f);
    return analyze_meetings(m, *f);
  };
  const auto tiled = verdict(sgemm, "_Z11sgemm_tilediPKfS0_Pf");
  CHECK(tiled.meets);
  CHECK(tiled.block_loops);
  CHECK_FALSE(verdict(sgemm, "_Z11sgemm_naiveiPKfS0_Pf").meets);
  const auto dyn = verdict(sgemm, "_Z10dyn_sharedPK6float4PS_i");  // __syncthreads_count/_or/_and
  CHECK(dyn.block_loops);
  const auto reduce = load("reduce_sm80.ptx");
  const auto sum = verdict(reduce, "_Z10reduce_sumPKfPfi");  // shuffles under `warp == 0`
  CHECK(sum.block_loops);
  CHECK(sum.needs_warp_rows);
  const auto votes = verdict(reduce, "_Z10warp_votesPKiPj");  // a shuffle under `threadIdx.x & 1`
  CHECK_FALSE(votes.block_loops);
  CHECK(votes.why.find("not all lanes of a warp") != std::string::npos);
}
