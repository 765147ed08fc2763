// USDT probes of the backend (provider "fakegpu"), fired where an allocation, a free, an
// implicit free (context destroy, process exit) or a device/context switch completes.
//
// sys/sdt.h puts a 1-byte `nop` at each probe site; a uprobe there is emulated (~0.8 us).
// We redefine the site as the 5-byte NOP `0f 1f 44 00 00`, which the kernel's optimized
// uprobe path handles in ~0.3 us. Written as .byte: the assembler would shorten an
// equivalent `nopl 0(%rax,%rax,1)` to 4 bytes, which costs ~25 us per hit (design.md).
//
// Arguments (all integers):
//   fakegpu:alloc          (device, ptr, size, kind, status, api)
//   fakegpu:free           (device, ptr, size, kind, status, api)
//   fakegpu:implicit_free  (device, ptr, size, kind, reason)    reason: 1 ctx destroy, 2 process exit, 3 device reset
//   fakegpu:ctx_switch     (device, ctx)                        the calling thread's current context changed
// device is the visible ordinal (-1 for host memory), kind is fg::MemKind, status the
// API's return code (0 = success), api 0 runtime / 1 driver.
#pragma once
#include <sys/sdt.h>

#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00

#define FG_USDT_ALLOC(dev, ptr, size, kind, status, api) \
  DTRACE_PROBE6(fakegpu, alloc, dev, ptr, size, kind, status, api)
#define FG_USDT_FREE(dev, ptr, size, kind, status, api) \
  DTRACE_PROBE6(fakegpu, free, dev, ptr, size, kind, status, api)
#define FG_USDT_IMPLICIT_FREE(dev, ptr, size, kind, reason) \
  DTRACE_PROBE5(fakegpu, implicit_free, dev, ptr, size, kind, reason)
#define FG_USDT_CTX_SWITCH(dev, ctx) DTRACE_PROBE2(fakegpu, ctx_switch, dev, ctx)
