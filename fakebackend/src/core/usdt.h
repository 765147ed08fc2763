// USDT probes of the backend (provider "fakegpu"), fired where an allocation, a free, an
// implicit free (context destroy, process exit) or a device/context switch completes.
//
// sys/sdt.h puts a 1-byte `nop` at each probe site; a uprobe there is emulated (~0.8 us).
// We redefine the site as the 5-byte NOP `0f 1f 44 00 00`, which the kernel's optimized
// uprobe path handles in ~0.3 us. Written as .byte: the assembler would shorten an
// equivalent `nopl 0(%rax,%rax,1)` to 4 bytes, which costs ~25 us per hit (design.md).
//
// Arguments: three per memory probe, so each stays in a register (every argument is a
// separate read for the BPF program; six of them, some on the stack, doubled its cost):
//   fakegpu:alloc          (ptr, size, info)
//   fakegpu:free           (ptr, size, info)
//   fakegpu:implicit_free  (ptr, size, info)     info's api byte is the reason: 1 ctx destroy,
//                                                2 process exit, 3 device reset
//   fakegpu:ctx_switch     (device, ctx)         the calling thread's current context changed
// info = device (int16, bits 0..15; -1 host memory) | kind (fg::MemKind, bits 16..23)
//        | api (0 runtime, 1 driver; bits 24..31) | status (int32 API return code, 0 =
//        success; bits 32..63). bpf/fakegpu_events.h decodes it (FG_USDT_INFO_*).
#pragma once
#include <sys/sdt.h>

#include <cstdint>

#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00

namespace fg {
constexpr uint64_t usdt_info(int device, int kind, int api, int status) {
  return static_cast<uint64_t>(static_cast<uint16_t>(static_cast<int16_t>(device))) |
         (static_cast<uint64_t>(static_cast<uint8_t>(kind)) << 16) |
         (static_cast<uint64_t>(static_cast<uint8_t>(api)) << 24) |
         (static_cast<uint64_t>(static_cast<uint32_t>(status)) << 32);
}
}  // namespace fg

#define FG_USDT_ALLOC(dev, ptr, size, kind, status, api) \
  DTRACE_PROBE3(fakegpu, alloc, ptr, size, ::fg::usdt_info(dev, kind, api, status))
#define FG_USDT_FREE(dev, ptr, size, kind, status, api) \
  DTRACE_PROBE3(fakegpu, free, ptr, size, ::fg::usdt_info(dev, kind, api, status))
#define FG_USDT_IMPLICIT_FREE(dev, ptr, size, kind, reason) \
  DTRACE_PROBE3(fakegpu, implicit_free, ptr, size, ::fg::usdt_info(dev, kind, reason, 0))
#define FG_USDT_CTX_SWITCH(dev, ctx) DTRACE_PROBE2(fakegpu, ctx_switch, dev, ctx)
