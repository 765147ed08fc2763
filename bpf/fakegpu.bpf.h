/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel-only declarations for fakegpu.bpf.c. UAPI headers give the BPF and register
 * definitions; the few kernel types the programs read are declared by hand with
 * preserve_access_index, so libbpf relocates each field access against the running
 * kernel's BTF (CO-RE) and no generated vmlinux.h is needed.
 */
#ifndef FAKEGPU_BPF_H
#define FAKEGPU_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>

typedef _Bool bool;
#define true 1
#define false 0

struct mm_struct;

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

/* --stacks: the file an exec maps (sched_process_exec). */
struct linux_binprm {
	const char *interp;
} __attribute__((preserve_access_index));

/* The page-table walk (fakegpu.bpf.c, walk_user_u64) reads mm->pgd. */
struct mm_struct {
	void *pgd;
} __attribute__((preserve_access_index));

/* A kernel struct that starts with an unsigned long: the walk reads any kernel word as
 * its first field (bpf_rdonly_cast to it, then a fault-safe load). */
struct rb_node {
	unsigned long __rb_parent_color;
} __attribute__((preserve_access_index));

#endif /* FAKEGPU_BPF_H */
