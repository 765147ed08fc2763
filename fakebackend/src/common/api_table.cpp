// SPDX-License-Identifier: Apache-2.0
// The exported ABI, generated from the one list per API family (fakebackend/api/*.def).
//
// Every exported function is a small trampoline emitted here:
//
//   <symbol>: nopl 0x0(%rax,%rax,1)        5-byte NOP: the kernel's cheap uprobe site
//             <note the return address>    the caller, unless it is this library itself
//             <count the call per thread>  no atomics on the hot path
//             jmp fgimpl_<name>            hidden implementation (tail call, arguments untouched)
//
// The 5-byte NOP matters: a uprobe on an instruction that needs single-stepping costs
// ~20-28 us per hit on these machines, on a 5-byte NOP ~0.3 us (design.md). Counting here,
// once, means every entry point — implemented or stub — is counted the same way.
//
// Implementations are ordinary hidden C++ functions named fgimpl_<name> (fgimpl_v12_<name>
// for the CUDA 12 ABI of a SPLIT name). Any name without one gets the weak NOT_SUPPORTED stub
// defined below, which records the call (coverage) and honours FAKEGPU_STRICT.
#include "common/api_ids.h"
#include "common/calls.h"
#include "common/coverage.h"

#include <cstdio>
#include <cstdlib>

namespace {

// Emits one trampoline. %c0 is the byte offset of the id's counter.
// r10 and r11 are scratch registers in the SysV ABI: never arguments, and %al (the vector
// register count of variadic calls) is left alone.
// The caller's return address (at the stack top on entry) goes to fg_tls_caller unless it
// lies within this library (__ehdr_start.._end): a call the library makes to its own entry
// point keeps the outer caller, the first frame outside it.
#define FG_TRAMPOLINE(sym, impl, id)                                             \
  asm volatile(                                                                  \
      ".pushsection .text.fgapi,\"ax\",@progbits\n"                              \
      ".p2align 4\n"                                                             \
      ".globl " sym                                                              \
      "\n"                                                                       \
      ".type " sym ",@function\n" sym                                            \
      ":\n"                                                                      \
      ".Lfg_site_%=:\n"                                                          \
      ".byte 0x0f,0x1f,0x44,0x00,0x00\n"                                         \
      "movq (%%rsp), %%r10\n"                                                    \
      "leaq __ehdr_start(%%rip), %%r11\n"                                        \
      "cmpq %%r11, %%r10\n"                                                      \
      "jb 2f\n"                                                                  \
      "leaq _end(%%rip), %%r11\n"                                                \
      "cmpq %%r11, %%r10\n"                                                      \
      "jb 3f\n"                                                                  \
      "2:\n"                                                                     \
      "movq fg_tls_caller@gottpoff(%%rip), %%r11\n"                              \
      "movq %%r10, %%fs:(%%r11)\n"                                               \
      "3:\n"                                                                     \
      "movq fg_tls_counts@gottpoff(%%rip), %%r11\n"                              \
      "movq %%fs:(%%r11), %%r11\n"                                               \
      "testq %%r11, %%r11\n"                                                     \
      "jz 1f\n"                                                                  \
      "incq %c0(%%r11)\n"                                                        \
      "jmp " impl                                                                \
      "\n"                                                                       \
      "1:\n"                                                                     \
      "lock incq fg_global_counts+%c0(%%rip)\n"                                  \
      "jmp " impl                                                                \
      "\n"                                                                       \
      ".size " sym ", .-" sym                                                    \
      "\n"                                                                       \
      ".popsection\n" /* the entry's offset in the table fork_guard.cpp reads */ \
      ".pushsection .rodata.fgapi_sites,\"a\",@progbits\n"                       \
      ".long .Lfg_site_%= - fg_api_text_begin\n"                                 \
      ".popsection\n" ::"i"(static_cast<int>(fg::ApiId::id) * 8))

#define FG_SYMVER(local, versioned) asm(".symver " local ", " versioned "\n")

// Never called: it only carries the asm statements (which need operands, so they
// cannot be top-level asm).
[[gnu::used]] void emit_trampolines() {
  // Bounds of the trampolines and of their offset table (common/fork_guard.cpp), emitted
  // first and last in this function, hence around everything in the two sections.
  asm volatile(
      ".hidden __ehdr_start\n.hidden _end\n"
      ".pushsection .text.fgapi,\"ax\",@progbits\n.p2align 4\n"
      ".globl fg_api_text_begin\n.hidden fg_api_text_begin\nfg_api_text_begin:\n.popsection\n"
      ".pushsection .rodata.fgapi_sites,\"a\",@progbits\n.p2align 2\n"
      ".globl fg_api_sites_begin\n.hidden fg_api_sites_begin\nfg_api_sites_begin:\n.popsection\n");
  // libcudart: BOTH = one implementation under both version nodes; SPLIT = two ABIs.
#define FG_CUDART(name, nodes, ret) FG_CUDART_EMIT_##nodes(name)
#define FG_CUDART_EMIT_BOTH(name)                                       \
  FG_TRAMPOLINE("fgx_" #name, "fgimpl_" #name, name);                   \
  asm(".globl fgx12_" #name "\n.set fgx12_" #name ", fgx_" #name "\n"); \
  FG_SYMVER("fgx_" #name, #name "@@libcudart.so.13");                   \
  FG_SYMVER("fgx12_" #name, #name "@libcudart.so.12");
#define FG_CUDART_EMIT_V13(name)                      \
  FG_TRAMPOLINE("fgx_" #name, "fgimpl_" #name, name); \
  FG_SYMVER("fgx_" #name, #name "@@libcudart.so.13");
#define FG_CUDART_EMIT_V12(name)                        \
  FG_TRAMPOLINE("fgx12_" #name, "fgimpl_" #name, name); \
  FG_SYMVER("fgx12_" #name, #name "@@libcudart.so.12");
#define FG_CUDART_EMIT_SPLIT(name)                                \
  FG_TRAMPOLINE("fgx_" #name, "fgimpl_" #name, name);             \
  FG_SYMVER("fgx_" #name, #name "@@libcudart.so.13");             \
  FG_TRAMPOLINE("fgx12_" #name, "fgimpl_v12_" #name, v12_##name); \
  FG_SYMVER("fgx12_" #name, #name "@libcudart.so.12");
#include "cudart.def"
#undef FG_CUDART
  // libcuda and libnvidia-ml are unversioned upstream; the version script gives them
  // their own nodes, which unversioned references bind to as the default.
#define FG_CUDA(name) FG_TRAMPOLINE(#name, "fgimpl_" #name, name);
#define FG_CUDA_OTHER(name, ret) FG_CUDA(name)
#include "cuda.def"
#undef FG_CUDA
#undef FG_CUDA_OTHER
#define FG_NVML(name) FG_TRAMPOLINE(#name, "fgimpl_" #name, name);
#define FG_NVML_OTHER(name, ret) FG_NVML(name)
#include "nvml.def"
#undef FG_NVML
#undef FG_NVML_OTHER
  asm volatile(
      ".pushsection .rodata.fgapi_sites,\"a\",@progbits\n"
      ".globl fg_api_sites_end\n.hidden fg_api_sites_end\nfg_api_sites_end:\n.popsection\n");
}

}  // namespace

// ---- weak NOT_SUPPORTED stubs ---------------------------------------------------------
// A stub takes no declared parameters: the C calling convention lets the caller pass any.
// Stubs for names whose return type is not an error code cannot answer meaningfully, so
// they stop the process with the name (all such names are implemented; this is a guard).
#define FG_WEAK extern "C" [[gnu::weak, gnu::visibility("hidden")]]
#define FG_STUB_ERR(impl, id) \
  FG_WEAK int impl() { return fg::coverage::stub_called(fg::ApiId::id); }
#define FG_STUB_OTHER(impl, id) \
  FG_WEAK void impl() { fg::coverage::unimplemented_noerr(fg::ApiId::id); }

#define FG_CUDART(name, nodes, ret) FG_CUDART_STUB_##nodes(name, ret)
#define FG_CUDART_STUB_KIND_ERR(impl, id) FG_STUB_ERR(impl, id)
#define FG_CUDART_STUB_KIND_STR(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_KIND_VOID(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_KIND_PTR(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_KIND_UINT(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_KIND_CHAR(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_KIND_STRUCT(impl, id) FG_STUB_OTHER(impl, id)
#define FG_CUDART_STUB_BOTH(name, ret) FG_CUDART_STUB_KIND_##ret(fgimpl_##name, name)
#define FG_CUDART_STUB_V12(name, ret) FG_CUDART_STUB_KIND_##ret(fgimpl_##name, name)
#define FG_CUDART_STUB_V13(name, ret) FG_CUDART_STUB_KIND_##ret(fgimpl_##name, name)
#define FG_CUDART_STUB_SPLIT(name, ret) \
  FG_CUDART_STUB_KIND_##ret(fgimpl_##name, name) FG_CUDART_STUB_KIND_##ret(fgimpl_v12_##name, v12_##name)
#include "cudart.def"
#undef FG_CUDART
#define FG_CUDA(name) FG_STUB_ERR(fgimpl_##name, name)
#define FG_CUDA_OTHER(name, ret) FG_STUB_OTHER(fgimpl_##name, name)
#include "cuda.def"
#undef FG_CUDA
#undef FG_CUDA_OTHER
#define FG_NVML(name) FG_STUB_ERR(fgimpl_##name, name)
#define FG_NVML_OTHER(name, ret) FG_STUB_OTHER(fgimpl_##name, name)
#include "nvml.def"
#undef FG_NVML
#undef FG_NVML_OTHER

// ---- id → name table --------------------------------------------------------------------
namespace fg {
namespace {
constexpr ApiInfo kApiInfo[] = {
#define FG_CUDART(name, nodes, ret) FG_CUDART_INFO_##nodes(name)
#define FG_CUDART_INFO_BOTH(name) {#name, ApiFamily::Runtime, false},
#define FG_CUDART_INFO_V12(name) {#name, ApiFamily::Runtime, false},
#define FG_CUDART_INFO_V13(name) {#name, ApiFamily::Runtime, false},
#define FG_CUDART_INFO_SPLIT(name) {#name, ApiFamily::Runtime, false}, {#name, ApiFamily::Runtime, true},
#include "cudart.def"
#undef FG_CUDART
#define FG_CUDA(name) {#name, ApiFamily::Driver, false},
#define FG_CUDA_OTHER(name, ret) FG_CUDA(name)
#include "cuda.def"
#undef FG_CUDA
#undef FG_CUDA_OTHER
#define FG_NVML(name) {#name, ApiFamily::Nvml, false},
#define FG_NVML_OTHER(name, ret) FG_NVML(name)
#include "nvml.def"
};
static_assert(std::size(kApiInfo) == kApiCount, "api table out of step with ApiId");
}  // namespace

const ApiInfo& api_info(ApiId id) noexcept { return kApiInfo[static_cast<std::size_t>(id)]; }

}  // namespace fg
