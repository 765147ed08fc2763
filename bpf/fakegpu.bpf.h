/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every part of fakegpu-trace's BPF side shares: the kernel types the programs read, the
 * load-time configuration, the health counters and the process filter. UAPI headers give the
 * BPF and register definitions; the few kernel types the programs read are declared by hand
 * with preserve_access_index, so libbpf relocates each field access against the running
 * kernel's BTF (CO-RE) and no generated vmlinux.h is needed.
 *
 * The parts, as in bcc's libbpf-tools, all in one object (fakegpu.bpf.c includes them):
 *   fakegpu.bpf.h  this file
 *   ring.bpf.h     the event records: the BPF ring buffer, wake-ups, drops
 *   books.bpf.h    the books: per (process, device, kind) bytes and calls, the live
 *                  allocations of the entry/return path, call counters
 *   fakegpu.bpf.c  the programs: USDT, entry/return probes, scheduler tracepoints
 */
#ifndef FAKEGPU_BPF_H
#define FAKEGPU_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fakegpu_events.h"

typedef _Bool bool;
#define true 1
#define false 0

/* The process's threads not yet exiting: do_exit decrements it before the exit tracepoint,
 * so the thread that finds 0 there is the process's last. */
typedef struct {
	int counter;
} atomic_t;
struct signal_struct {
	atomic_t live;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct task_struct *real_parent;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* Per-library attribution: the file a caller's address lies in (bpf_find_vma). */
struct qstr {
	const unsigned char *name;
} __attribute__((preserve_access_index));
struct dentry {
	struct qstr d_name;
} __attribute__((preserve_access_index));
struct path {
	struct dentry *dentry;
} __attribute__((preserve_access_index));
struct super_block {
	__u32 s_dev;
} __attribute__((preserve_access_index));
struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct file {
	struct path f_path;
	struct inode *f_inode;
} __attribute__((preserve_access_index));
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

/* --stacks: the file an exec maps (sched_process_exec). */
struct linux_binprm {
	const char *interp;
} __attribute__((preserve_access_index));

/* Load-time knobs, set between open and load. */
const volatile struct fg_config cfg = {};

/* Collector health (enum fg_stat), one slot per CPU: nothing is dropped silently. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);
	if (v)
		*v += 1; /* per-CPU slot: no atomics needed */
}

/* map[key], inserted as *init when absent (libbpf-tools' bpf_map_lookup_or_try_init); NULL
 * only when the map is full. Two CPUs inserting at once both get the one entry. */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *init)
{
	void *v = bpf_map_lookup_elem(map, key);
	if (v)
		return v;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* Processes to trace when cfg.filter_pids (attach -p, run). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/*
 * Processes seen calling a GPU API. Without a pid filter (monitor) the scheduler
 * tracepoints report only these: every other fork, exec and exit on the host is not ours.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} gpu_procs SEC(".maps");

static __always_inline bool traced(__u32 tgid)
{
	return !cfg.filter_pids || bpf_map_lookup_elem(&pids, &tgid);
}

/* Scheduler events: the filtered pids, or (monitor) processes that used a GPU API. */
static __always_inline bool traced_process(__u32 tgid)
{
	return cfg.filter_pids ? bpf_map_lookup_elem(&pids, &tgid) != 0
			       : bpf_map_lookup_elem(&gpu_procs, &tgid) != 0;
}

#endif /* FAKEGPU_BPF_H */
