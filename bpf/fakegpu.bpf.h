/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel-only declarations for fakegpu.bpf.c. UAPI headers give the BPF and register
 * definitions; the one kernel type the programs read, task_struct, is declared by hand with
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

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
} __attribute__((preserve_access_index));

#endif /* FAKEGPU_BPF_H */
