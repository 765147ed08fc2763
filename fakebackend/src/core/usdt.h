// SPDX-License-Identifier: Apache-2.0
// USDT probes of the backend (provider "fakegpu"), fired where an allocation, a free, an
// implicit free (context destroy, process exit) or a device/context switch completes, where a
// kernel launch is accepted, and where the executor finishes with a launch.
//
// Each site is a SystemTap SDT probe (a .note.stapsdt entry, readable by every USDT tool:
// bpftrace, perf, libbpf), written here rather than through sys/sdt.h for two reasons:
//  - The site is the 5-byte NOP `0f 1f 44 00 00`, which the kernel's optimized uprobe path
//    handles in ~0.3 us; sys/sdt.h's 1-byte `nop` is emulated (~0.8 us). It is written as
//    .byte: the assembler would shorten an equivalent `nopl 0(%rax,%rax,1)` to 4 bytes, which
//    costs ~25 us per hit (design.md).
//  - The arguments are always in %rdi, %rsi, %rdx, %rcx (the note says so: "8@%rdi 8@%rsi
//    8@%rdx 8@%rcx"). sys/sdt.h lets the compiler place them anywhere, stack slots included, and a
//    generic USDT reader then pays a spec lookup and a guarded read per argument (about a
//    third of fakegpu-trace's probe cost). With fixed registers its BPF programs load them
//    from pt_regs directly; fakegpu-trace checks every site's note before relying on it.
//
// Arguments:
//   fakegpu:alloc          (ptr, size, info, caller)
//   fakegpu:free           (ptr, size, info, caller)
//   fakegpu:implicit_free  (ptr, size, info, 0)  info's api byte is the reason: 1 ctx destroy,
//                                                2 process exit, 3 device reset
//   fakegpu:ctx_switch     (device, ctx)         the calling thread's current context changed
//   fakegpu:launch         (function, name, device)  a kernel launch accepted (function: its
//                                                CUfunction, the same for every launch of it;
//                                                name: its NUL-terminated mangled name)
//   fakegpu:kernel_done    (function, name, host_ns, ran)  the executor finished with a launch
//                                                (function, name: as at its launch; ran 1:
//                                                executed on the host CPU in host_ns ns, the
//                                                report's host time; ran 0: recorded, not run,
//                                                host_ns 0). Fired on the thread that ran it
//                                                (a stream's worker for a queued launch).
// info = device (int16, bits 0..15; -1 host memory) | kind (fg::MemKind, bits 16..23)
//        | api (0 runtime, 1 driver; bits 24..31) | status (int32 API return code, 0 =
//        success; bits 32..63). bpf/fakegpu_events.h decodes it (FG_USDT_INFO_*).
// caller = the return address of the API call that allocates or frees, in the program or
//        library that called the API (fg_tls_caller, common/calls.h); 0 where unknown.
#pragma once
#include "common/calls.h"

#include <cstdint>

namespace fg {
// The API return codes the sites report: the same numbers in the runtime and the driver.
constexpr int kUsdtOutOfMemory = 2;   // cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY
constexpr int kUsdtInvalidValue = 1;  // cudaErrorInvalidValue, CUDA_ERROR_INVALID_VALUE (unknown pointer)

constexpr uint64_t usdt_info(int device, int kind, int api, int status) {
  return static_cast<uint64_t>(static_cast<uint16_t>(static_cast<int16_t>(device))) |
         (static_cast<uint64_t>(static_cast<uint8_t>(kind)) << 16) |
         (static_cast<uint64_t>(static_cast<uint8_t>(api)) << 24) |
         (static_cast<uint64_t>(static_cast<uint32_t>(status)) << 32);
}
}  // namespace fg

#if defined(__x86_64__)
// The note (SystemTap SDT v3): pc, the .stapsdt.base address (prelink adjustment), the
// semaphore (none), then provider, name and argument strings. `%%` is a literal `%` in an
// asm template with operands. The note is not loaded into memory; fg_usdt_sites (allocated)
// lists the sites again for the fork guard (common/fork_guard.cpp), each as its address
// relative to its entry.
#define FG_USDT_SITE_(name, args)                                             \
  "990: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                                 \
  ".pushsection .note.stapsdt, \"?\", \"note\"\n"                             \
  ".balign 4\n"                                                               \
  ".4byte 992f-991f, 994f-993f, 3\n"                                          \
  "991: .asciz \"stapsdt\"\n"                                                 \
  "992: .balign 4\n"                                                          \
  "993: .8byte 990b\n"                                                        \
  ".8byte _.stapsdt.base\n"                                                   \
  ".8byte 0\n"                                                                \
  ".asciz \"fakegpu\"\n"                                                      \
  ".asciz \"" #name                                                           \
  "\"\n"                                                                      \
  ".asciz \"" args                                                            \
  "\"\n"                                                                      \
  "994: .balign 4\n"                                                          \
  ".popsection\n"                                                             \
  ".pushsection fg_usdt_sites, \"a\", @progbits\n"                            \
  ".balign 4\n"                                                               \
  ".4byte 990b - .\n"                                                         \
  ".popsection\n"                                                             \
  ".ifndef _.stapsdt.base\n"                                                  \
  ".pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat\n" \
  ".weak _.stapsdt.base\n"                                                    \
  ".hidden _.stapsdt.base\n"                                                  \
  "_.stapsdt.base: .space 1\n"                                                \
  ".size _.stapsdt.base, 1\n"                                                 \
  ".popsection\n"                                                             \
  ".endif\n"

#define FG_USDT3_(name, a0, a1, a2)                                                      \
  __asm__ __volatile__(FG_USDT_SITE_(name, "8@%%rdi 8@%%rsi 8@%%rdx")                    \
                       :                                                                 \
                       : "D"(static_cast<uint64_t>(a0)), "S"(static_cast<uint64_t>(a1)), \
                         "d"(static_cast<uint64_t>(a2)))
#define FG_USDT4_(name, a0, a1, a2, a3)                                                  \
  __asm__ __volatile__(FG_USDT_SITE_(name, "8@%%rdi 8@%%rsi 8@%%rdx 8@%%rcx")            \
                       :                                                                 \
                       : "D"(static_cast<uint64_t>(a0)), "S"(static_cast<uint64_t>(a1)), \
                         "d"(static_cast<uint64_t>(a2)), "c"(static_cast<uint64_t>(a3)))
#define FG_USDT2_(name, a0, a1)                               \
  __asm__ __volatile__(FG_USDT_SITE_(name, "8@%%rdi 8@%%rsi") \
                       :                                      \
                       : "D"(static_cast<uint64_t>(a0)), "S"(static_cast<uint64_t>(a1)))
#else
#define FG_USDT4_(name, a0, a1, a2, a3) ((void)(a0), (void)(a1), (void)(a2), (void)(a3))
#define FG_USDT3_(name, a0, a1, a2) ((void)(a0), (void)(a1), (void)(a2))
#define FG_USDT2_(name, a0, a1) ((void)(a0), (void)(a1))
#endif

#define FG_USDT_ALLOC(dev, ptr, size, kind, status, api) \
  FG_USDT4_(alloc, ptr, size, ::fg::usdt_info(dev, kind, api, status), fg_tls_caller)
#define FG_USDT_FREE(dev, ptr, size, kind, status, api) \
  FG_USDT4_(free, ptr, size, ::fg::usdt_info(dev, kind, api, status), fg_tls_caller)
#define FG_USDT_IMPLICIT_FREE(dev, ptr, size, kind, reason) \
  FG_USDT4_(implicit_free, ptr, size, ::fg::usdt_info(dev, kind, reason, 0), 0)
#define FG_USDT_CTX_SWITCH(dev, ctx) FG_USDT2_(ctx_switch, static_cast<int64_t>(dev), ctx)
#define FG_USDT_LAUNCH(function, name, dev) \
  FG_USDT3_(launch, reinterpret_cast<uintptr_t>(function), reinterpret_cast<uintptr_t>(name), static_cast<int64_t>(dev))
#define FG_USDT_KERNEL_DONE(function, name, host_ns, ran) \
  FG_USDT4_(kernel_done, function, reinterpret_cast<uintptr_t>(name), host_ns, (ran) ? 1 : 0)
