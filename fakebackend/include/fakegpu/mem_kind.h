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

#endif /* FAKEGPU_MEM_KIND_H */
