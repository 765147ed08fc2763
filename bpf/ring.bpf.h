/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The event records (struct fg_record, fakegpu_events.h) and their transport: a BPF ring
 * buffer (map `events`, sized from --ringbuf-size before load). The books (books.bpf.h) are
 * the truth; the records carry the detail for the collector's per-allocation ledger. A record
 * that finds no room is lost and counted (FG_STAT_RB_DROPS); the books are kept all the same.
 *
 * Wake-ups are batched. The collector drains the ring buffer on a timer while records flow,
 * so records are submitted with BPF_RB_NO_WAKEUP, and one wakes it (BPF_RB_FORCE_WAKEUP) only
 * for a ring buffer filling faster than that: every (cfg.wakeup_mask + 1)-th record of a CPU,
 * when the ring buffer then holds cfg.wake_bytes (a quarter of it) or more. A wake-up costs
 * the traced call a self-IPI (~1.3 us on these VMs, design.md), and it comes from the traced
 * thread's CPU, where the scheduler tends to run the woken reader, whose drain then takes the
 * traced process's time.
 */
#ifndef FAKEGPU_RING_BPF_H
#define FAKEGPU_RING_BPF_H

#include "fakegpu.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* --ringbuf-size */
} events SEC(".maps");

/*
 * Whether a record is the first of its process. The first carries the comm, the parent and
 * the time (helper calls and 32 bytes that later records skip: user space keeps them per
 * process) and, in monitor
 * mode, enters the process in gpu_procs, which the scheduler tracepoints consult. The memory
 * paths know it without a lookup: a process's first memory event creates its first book.
 */
enum first_event {
	FIRST_LOOKUP = 0, /* not known: look the process up in gpu_procs */
	FIRST_NO,
	FIRST_YES,
};

/* One record's fields (emit fills the rest: pid, tid, comm). */
struct record {
	__u32 type;
	__s32 device;
	__u64 ptr;
	__u64 size;
	__u32 kind;
	__s32 status;
	__u16 api;
	__u16 source;
	__u32 func;
	__u64 aux;
	/* CLOCK_MONOTONIC where the program reads the clock anyway (entry/return probes time
	 * the call; scheduler events), else 0: the collector stamps the record when it reads
	 * it. A clock read is ~30 ns on these VMs, a third of the USDT program. */
	__u64 ts;
	enum first_event first;
	__u64 pid_tgid; /* bpf_get_current_pid_tgid() when the caller has it, else 0 */
};

/* The record shapes (fakegpu_events.h): each is reserved with a constant size, as the
 * verifier requires, and written through its own type. */
struct rec_ext {
	struct fg_record rec;
	struct fg_record_ext ext;
};
struct rec_proc {
	struct fg_record rec;
	struct fg_record_proc proc;
};
struct rec_ext_proc {
	struct fg_record rec;
	struct fg_record_ext ext;
	struct fg_record_proc proc;
};
_Static_assert(sizeof(struct fg_record) == FG_REC_BASE &&
		       sizeof(struct rec_ext) == FG_REC_WITH_EXT &&
		       sizeof(struct rec_proc) == FG_REC_WITH_PROC &&
		       sizeof(struct rec_ext_proc) == FG_REC_WITH_EXT_PROC,
	       "record shapes as the contract sizes them");

static __always_inline void fill_record(struct fg_record *out, const struct record *r, __u64 id)
{
	out->tgid = id >> 32;
	out->tid = (__u32)id;
	out->ptr = r->ptr;
	out->size = r->size;
	out->device = r->device;
	out->func = FG_REC_FUNC(r->func);
	out->type_kind = FG_REC_TYPE_KIND(r->type, r->kind);
	out->api_source = FG_REC_API_SOURCE(r->api, r->source);
}

/* Who the process is, once per process: its name, its parent and the time. */
static __always_inline void fill_proc(struct fg_record_proc *out)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	bpf_get_current_comm(out->comm, sizeof(out->comm));
	out->ts_ns = bpf_ktime_get_ns();
	out->ppid = BPF_CORE_READ(task, real_parent, tgid);
	out->pad = 0;
}

static __always_inline void fill_ext(struct fg_record_ext *out, const struct record *r)
{
	out->ts_ns = r->ts;
	out->aux = r->aux;
	out->status = r->status;
	out->pad = 0;
}

/* Submits a filled record, counts it on this CPU and wakes the collector when this record is
 * the one that does (above). */
static __always_inline void ring_submit(void *rec)
{
	__u32 k = FG_STAT_EVENTS;
	__u64 *n = bpf_map_lookup_elem(&stats, &k);
	__u64 wake = BPF_RB_NO_WAKEUP;
	if (n) {
		*n += 1; /* per-CPU slot: no atomics needed */
		if ((*n & cfg.wakeup_mask) == 0 &&
		    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wake_bytes)
			wake = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(rec, wake);
}

static __always_inline void emit(const struct record *r)
{
	const __u64 id = r->pid_tgid ? r->pid_tgid : bpf_get_current_pid_tgid();
	const __u32 tgid = id >> 32;
	bool first = r->source == FG_SRC_KERNEL || r->first == FIRST_YES;
	if (r->source != FG_SRC_KERNEL &&
	    !cfg.filter_pids) { /* monitor: gpu_procs knows GPU processes */
		if (r->first == FIRST_LOOKUP)
			first = !bpf_map_lookup_elem(&gpu_procs, &tgid);
		if (first) {
			__u8 one = 1;
			bpf_map_update_elem(&gpu_procs, &tgid, &one, BPF_ANY);
		}
	}
	const bool ext = FG_REC_NEEDS_EXT(r->ts, r->aux, r->status);
	if (!ext && !first) { /* most records */
		struct fg_record *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
		if (!p)
			goto lost;
		fill_record(p, r, id);
		ring_submit(p);
	} else if (!first) {
		struct rec_ext *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
		if (!p)
			goto lost;
		fill_record(&p->rec, r, id);
		fill_ext(&p->ext, r);
		ring_submit(p);
	} else if (!ext) {
		struct rec_proc *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
		if (!p)
			goto lost;
		fill_record(&p->rec, r, id);
		fill_proc(&p->proc);
		ring_submit(p);
	} else {
		struct rec_ext_proc *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
		if (!p)
			goto lost;
		fill_record(&p->rec, r, id);
		fill_ext(&p->ext, r);
		fill_proc(&p->proc);
		ring_submit(p);
	}
	return;
lost:
	stat_inc(FG_STAT_RB_DROPS);
}

#endif /* FAKEGPU_RING_BPF_H */
