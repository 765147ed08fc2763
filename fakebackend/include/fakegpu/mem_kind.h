/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The kinds of memory the fake GPU hands out: the one numbering shared by the backend
 * (fg::MemKind, its USDT arguments), the device ledger's columns (fakegpu/ledger_format.h),
 * the BPF programs and their records (bpf/fakegpu_events.h) and fakegpu-trace.
 *
 * Plain C with no includes, so that BPF programs can use it too. The numbers travel in USDT
 * arguments, attach cookies, records and the ledger segment: changing one bumps
 * fg::ledger::kVersion and FAKEGPU_EVENTS_ABI.
 */
#ifndef FAKEGPU_MEM_KIND_H
#define FAKEGPU_MEM_KIND_H

enum fg_mem_kind {
  FG_MEM_DEVICE = 0,     /* cudaMalloc, cuMemAlloc, pitch, stream-ordered pools */
  FG_MEM_MANAGED = 1,    /* cudaMallocManaged, cuMemAllocManaged, __managed__ variables */
  FG_MEM_HOST = 2,       /* pinned host: cudaMallocHost/HostAlloc, cuMemAllocHost/HostAlloc */
  FG_MEM_REGISTERED = 3, /* cudaHostRegister'd user memory (not booked) */
  FG_MEM_VMM = 4,        /* cuMemCreate physical allocation, and the ranges it is mapped at */
  FG_MEM_IPC_MAPPED = 5, /* another process's allocation opened through an IPC handle (not booked) */
};

/* The kinds the ledger books, one column each: FG_MEM_DEVICE .. FG_MEM_HOST. */
#define FG_MEM_BOOKED_KINDS 3
/* The kinds an event record carries (FG_REC_TYPE_KIND): FG_MEM_DEVICE .. FG_MEM_VMM. */
#define FG_MEM_KINDS 5

#ifdef __cplusplus
namespace fakegpu {
/* The same numbers, typed: the one memory-kind enum of the backend (fg::MemKind) and of
 * fakegpu-trace (fgtrace::MemKind). Unknown stands for a number that is none of them (a
 * record of a failed free of an unknown pointer carries -1). */
enum class MemKind : unsigned char {
  Device = FG_MEM_DEVICE,
  Managed = FG_MEM_MANAGED,
  Host = FG_MEM_HOST,
  Registered = FG_MEM_REGISTERED,
  Vmm = FG_MEM_VMM,
  IpcMapped = FG_MEM_IPC_MAPPED,
  Unknown = 0xff,
};

/* "device", "managed", "host", "registered", "vmm", "ipc"; "unknown" for anything else. */
inline const char* to_string(MemKind k) noexcept {
  switch (k) {
    case MemKind::Device: return "device";
    case MemKind::Managed: return "managed";
    case MemKind::Host: return "host";
    case MemKind::Registered: return "registered";
    case MemKind::Vmm: return "vmm";
    case MemKind::IpcMapped: return "ipc";
    case MemKind::Unknown: break;
  }
  return "unknown";
}
} /* namespace fakegpu */
#endif

#endif /* FAKEGPU_MEM_KIND_H */
