// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu-trace's BPF programs: the books of every process's GPU memory, kept in the kernel.
 *
 * Two ways in, one set of books:
 *  - USDT probes of the fake backend (fakegpu:alloc/free/implicit_free/ctx_switch) fire
 *    once where a call completes and carry device, pointer, size, kind and status.
 *  - Entry/return uprobes on the exported API functions of any CUDA library (ours or
 *    NVIDIA's). The entry stashes the arguments in the thread's task-local state, the return
 *    reads and always consumes that record (memleak's way), reads out-parameters from user
 *    memory and books the result. Each attachment carries a cookie saying which function it
 *    is.
 *
 * The books (maps `book_slots` and `book_counts`) are the truth; the event ring (maps `ring`
 * and `ring_pos`, fakegpu_events.h) carries the detail for the collector's per-allocation
 * ledger. Wake-ups are batched (count_record), and every event that cannot be delivered is
 * counted (map `stats`).
 */
#include "fakegpu.bpf.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "fakegpu_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time knobs, set between open and load. */
const volatile struct fg_config cfg = {};

/* ---- maps ---------------------------------------------------------------------------- */

/* The event ring (struct fg_ring_slot, and fg_ring_ext in the same slots): resized from the
 * command line before load. */
_Static_assert(sizeof(struct fg_ring_slot) == 32 && sizeof(struct fg_ring_ext) == 32, "half a cache line");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, struct fg_ring_slot);
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_ring_pos);
} ring_pos SEC(".maps");

/* Wakes the collector (count_record); what it carries is not read. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} doorbell SEC(".maps");

/* The books (fakegpu_events.h): shared part and per-CPU counters, indexed alike. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FG_BOOK_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_book_slot);
} book_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_BOOK_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_book_counts);
} book_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* User stacks of allocations (--stacks; the collector sizes it to 1 entry otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FG_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* --stacks: each stack's frames as build id + file offset (struct fg_stack_files), keyed by
 * its id in `stacks` and taken the first time the id is seen; allocated as used. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fg_stack_files);
} stack_files SEC(".maps");

/* An empty struct fg_stack_files: a stack's entry is inserted from it and filled in place (a
 * per-CPU scratch copy could be shared by two preempted programs on one CPU). */
static const struct fg_stack_files no_stack_files;

/* --stacks: the file each process exec'd (struct fg_exec_path), keyed by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fg_exec_path);
} exec_paths SEC(".maps");

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

/*
 * Entry/return path: live allocations, so a free knows its size, device and kind. An
 * open-addressing table like the books' (a hash map's update and delete cost ~50 ns a
 * call): struct fg_alloc_rec, searched from the home slot of (tgid, ptr), claimed with a
 * compare-and-swap on `ptr`. --max-allocs sets the size (a power of two).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 18);
	__type(key, __u32);
	__type(value, struct fg_alloc_rec);
} allocs SEC(".maps");

/*
 * Entry/return path: each thread's state, in task-local storage (freed with the thread; no
 * hash to search or to clean up after exits).
 *  - The entry records, one per API layer: NVIDIA's cudaMalloc calls cuMemAlloc_v2 on the
 *    same thread, so the runtime's and the driver's must not overwrite each other. ts == 0:
 *    none pending.
 *  - Where its allocations land: the current device, and the current driver context (0: the
 *    runtime's primary context of that device).
 */
struct stash_val {
	__u64 ts; /* the entry's clock read; FG_UNTIMED: pending, not timed; 0: none pending */
	__u64 a0, a1, a2, a3; /* the arguments the class needs */
};
#define FG_UNTIMED 1
struct thread_state {
	struct stash_val stash[2]; /* [FG_API_RUNTIME], [FG_API_DRIVER] */
	__u64 ctx;
	__s32 device; /* 0 until cudaSetDevice or a context: device 0, as the runtime does */
	__s32 marked; /* device + 1 whose primary context this thread last marked the runtime's */
	__u64 marked_gen; /* the count of resets then (runtime_holds) */
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* CUcontext */
	__type(value, __s32);
} ctx_device SEC(".maps");

/* Entry/return path: which contexts are primary ones (value: device). An allocation
 * remembers its context, so destroying the context frees it implicitly. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* CUcontext */
	__type(value, __s32);
} primary_ctx SEC(".maps");

/* Entry/return path: who holds each (process, device) primary context. Its last release
 * frees what it held; the runtime holds one reference from its first use of the device
 * until cudaDeviceReset. */
struct primary_key {
	__u32 tgid;
	__s32 device;
};
struct primary_refs {
	__s32 driver;  /* cuDevicePrimaryCtxRetain minus cuDevicePrimaryCtxRelease_v2 */
	__u32 runtime; /* 1: the runtime uses it */
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct primary_key);
	__type(value, struct primary_refs);
} primary_holders SEC(".maps");

/* Primary-context resets so far (one slot): runtime_holds's cached marks expire with it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} resets SEC(".maps");

/* Call counts and latency per (process, traced function). */
#define FG_LAT_BUCKETS 32
struct call_val {
	__u64 calls;
	__u64 fails;
	__u64 timed; /* calls timed (timed_call): total_ns, max_ns and hist cover these */
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[FG_LAT_BUCKETS]; /* log2(ns) */
};
/* An open-addressing table like the books': tags (FG_CALL_TAG) shared, counts per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FG_CALL_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} call_tags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_CALL_SLOTS);
	__type(key, __u32);
	__type(value, struct call_val);
} calls SEC(".maps");

/* Bytes copied per (process, direction). */
struct copy_key {
	__u32 tgid;
	__u32 dir; /* cudaMemcpyKind: 0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 default */
};
struct copy_val {
	__u64 bytes;
	__u64 count;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct copy_key);
	__type(value, struct copy_val);
} copies SEC(".maps");

/* Kernel launches per process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

/* ---- helpers --------------------------------------------------------------------------- */

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);
	if (v)
		*v += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline bool traced(__u32 tgid)
{
	return !cfg.filter_pids || bpf_map_lookup_elem(&pids, &tgid);
}

/* Scheduler events: the filtered pids, or (monitor) processes that used a GPU API. */
static __always_inline bool traced_process(__u32 tgid)
{
	return cfg.filter_pids ? bpf_map_lookup_elem(&pids, &tgid) != 0 : bpf_map_lookup_elem(&gpu_procs, &tgid) != 0;
}

/* A book: its shared part (live and peak, updated atomically) and this CPU's counters (plain
 * adds). */
struct book {
	struct fg_book_slot *shared;
	struct fg_book_counts *mine;
	bool created; /* this call created it: the process's first book */
};

/*
 * The open-addressing tables (books, call counts) keep a u64 tag at the start of each value
 * of an array map (`tags`, `mask` + 1 slots): FG_TAG_FREE never used, FG_TAG_DELETED
 * forgotten by the collector (reusable), else a key with bit 0 set. A key is searched from
 * its home slot, first up to a slot never used; when absent, the first free or forgotten
 * slot on the way is claimed with a compare-and-swap (a racing claimer of the same key finds
 * the winner's tag there). Returns the slot, or -1 when `probes` slots are all taken.
 */
static __always_inline long tag_slot(void *tags, __u64 tag, __u32 mask, bool *created)
{
	const __u32 home = (__u32)((tag * 0x9E3779B97F4A7C15ULL) >> 40);
	*created = false;
	for (__u32 i = 0; i < FG_TAG_PROBES; i++) {
		__u32 idx = (home + i) & mask;
		__u64 *t = bpf_map_lookup_elem(tags, &idx);
		if (!t)
			break;
		__u64 v = *(volatile __u64 *)t;
		if (v == tag)
			return idx;
		if (v == FG_TAG_FREE)
			break; /* never used: the key is not further on */
	}
	for (__u32 i = 0; i < FG_TAG_PROBES; i++) {
		__u32 idx = (home + i) & mask;
		__u64 *t = bpf_map_lookup_elem(tags, &idx);
		if (!t)
			break;
		__u64 v = *(volatile __u64 *)t;
		if (v == FG_TAG_FREE || v == FG_TAG_DELETED) {
			__u64 was = __sync_val_compare_and_swap(t, v, tag);
			if (was == v) {
				*created = true;
				return idx;
			}
			v = was;
		}
		if (v == tag)
			return idx;
	}
	stat_inc(FG_STAT_ALLOC_MAP_FULL);
	return -1;
}

static __always_inline bool book_at(__u32 idx, struct book *b)
{
	b->shared = bpf_map_lookup_elem(&book_slots, &idx);
	b->mine = bpf_map_lookup_elem(&book_counts, &idx);
	return b->shared && b->mine;
}

/* Fills *b with (tgid, device, kind)'s book, created when absent; false: the table is full. */
static __always_inline bool book_of(__u32 tgid, __s32 device, __u32 kind, struct book *b)
{
	long idx = tag_slot(&book_slots, FG_BOOK_TAG(tgid, device, kind), FG_BOOK_SLOTS - 1, &b->created);
	return idx >= 0 && book_at((__u32)idx, b);
}

/* live += delta, then lift the peak: a bounded compare-and-swap loop. */
static __always_inline void book_live(struct fg_book_slot *b, __s64 delta)
{
	__u64 live = __sync_fetch_and_add(&b->live_bytes, delta) + delta;
	if (delta <= 0)
		return;
	for (int i = 0; i < 4; i++) {
		__u64 peak = b->peak_bytes;
		if (live <= peak)
			return;
		if (__sync_val_compare_and_swap(&b->peak_bytes, peak, live) == peak)
			return;
	}
}

static __always_inline __u32 alloc_home(__u32 tgid, __u64 ptr)
{
	return (__u32)(((ptr ^ ((__u64)tgid << 40)) * 0x9E3779B97F4A7C15ULL) >> 32) & cfg.allocs_mask;
}

/* The record of (tgid, ptr), or NULL. */
static __always_inline struct fg_alloc_rec *alloc_find(__u32 tgid, __u64 ptr)
{
	const __u32 home = alloc_home(tgid, ptr);
	for (__u32 i = 0; i < FG_ALLOC_PROBES; i++) {
		__u32 idx = (home + i) & cfg.allocs_mask;
		struct fg_alloc_rec *r = bpf_map_lookup_elem(&allocs, &idx);
		if (!r)
			return 0;
		__u64 p = *(volatile __u64 *)&r->ptr;
		if (p == ptr && r->tgid == tgid)
			return r;
		if (p == FG_ALLOC_FREE)
			return 0; /* never used: the key is not further on */
	}
	return 0;
}

/* Frees a record: its slot is reusable, and lookups still probe past it. */
static __always_inline void alloc_forget(struct fg_alloc_rec *r)
{
	r->tgid = 0;
	*(volatile __u64 *)&r->ptr = FG_ALLOC_DELETED;
}

/* A record for (tgid, ptr) (the one still there if its free was missed), or NULL: full. */
static __always_inline struct fg_alloc_rec *alloc_claim(__u32 tgid, __u64 ptr)
{
	struct fg_alloc_rec *r = alloc_find(tgid, ptr);
	if (r)
		return r;
	const __u32 home = alloc_home(tgid, ptr);
	for (__u32 i = 0; i < FG_ALLOC_PROBES; i++) {
		__u32 idx = (home + i) & cfg.allocs_mask;
		r = bpf_map_lookup_elem(&allocs, &idx);
		if (!r)
			break;
		__u64 p = *(volatile __u64 *)&r->ptr;
		if ((p == FG_ALLOC_FREE || p == FG_ALLOC_DELETED) &&
		    __sync_val_compare_and_swap(&r->ptr, p, ptr) == p) {
			r->tgid = tgid;
			return r;
		}
	}
	stat_inc(FG_STAT_ALLOC_MAP_FULL);
	return 0;
}

/*
 * Counts a record on this CPU and rings the doorbell when it is the one that wakes the
 * consumer. The consumer drains the ring on a timer while records flow; the doorbell is for a
 * ring that fills faster than that. It rings only once the ring holds cfg.wake_fill slots
 * (a quarter of it), and then every (cfg.wakeup_mask + 1)-th record of a CPU (cfg.wake_fill
 * and the mask 0: every record). A wake-up from here comes from the traced
 * thread's CPU, and the scheduler tends to run the woken reader on that CPU, its drain taking
 * the traced process's time; waking it also costs a self-IPI (~1.3 us on these VMs,
 * design.md).
 */
static __always_inline void count_record(__u64 pos, __u64 fill)
{
	__u32 k = FG_STAT_EVENTS;
	__u64 *n = bpf_map_lookup_elem(&stats, &k);
	if (!n)
		return;
	*n += 1; /* per-CPU slot: no atomics needed */
	if ((*n & cfg.wakeup_mask) == 0 && fill >= cfg.wake_fill)
		bpf_ringbuf_output(&doorbell, &pos, sizeof(pos), BPF_RB_FORCE_WAKEUP);
}

/* The ring's positions (struct fg_ring_pos), and the slot of position `pos`. */
static __always_inline struct fg_ring_pos *ring_positions(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ring_pos, &zero);
}

static __always_inline void *ring_slot(__u64 pos)
{
	__u32 idx = (__u32)(pos & cfg.ring_mask);
	return bpf_map_lookup_elem(&ring, &idx);
}

/*
 * Claims the next `n` (1 or 2) positions of the event ring (struct fg_ring_pos): the first
 * slot to fill, or NULL when the ring is full (the record is lost, and counted). *fill: the
 * slots the ring holds with these. A failed compare-and-swap means another CPU took the
 * position: try the next, a bounded number of times.
 */
static __always_inline struct fg_ring_slot *ring_claim(__u64 *pos, __u64 *fill, __u32 n)
{
	struct fg_ring_pos *p = ring_positions();
	if (!p)
		return 0;
	for (int i = 0; i < 32; i++) {
		__u64 head = *(volatile __u64 *)&p->head;
		__u64 tail = *(volatile __u64 *)&p->tail;
		if ((__s64)(tail - head) > 0)
			continue; /* the reader got past this head (others claimed on): read again */
		__u64 used = head + n - tail;
		if (used - 1 > cfg.ring_mask)
			break; /* full */
		if (__sync_val_compare_and_swap(&p->head, head, head + n) == head) {
			*pos = head;
			*fill = used;
			return ring_slot(head);
		}
	}
	stat_inc(FG_STAT_RB_DROPS);
	return 0;
}

/*
 * Loads the cache line the next record will be written to, first thing in a program that
 * writes one. The collector read that line a lap earlier, so it is no longer this CPU's: a
 * store to it waits for the line at the next barrier (the program's own atomics, or the
 * uprobe return path's), measured at 2-4 % of a traced call. Loaded here, the line arrives
 * while the program does its other work, and the record's stores find it. Only a hint: the
 * head may move before the claim (another CPU's record), which costs nothing but the load.
 */
static __always_inline void ring_warm(void)
{
	struct fg_ring_pos *p = ring_positions();
	if (!p)
		return;
	struct fg_ring_slot *slot = ring_slot(*(volatile __u64 *)&p->head);
	if (slot)
		(void)*(volatile __u32 *)&slot->committed;
}

/*
 * Whether a record is the first of its process. The first carries the comm (a helper call
 * that later records skip: user space keeps it per process) and, in monitor mode, enters the
 * process in gpu_procs, which the scheduler tracepoints consult. The memory paths know it
 * without a lookup: a process's first memory event creates its first book.
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

/* Publishes a filled slot: its fields' stores come before `committed` (x86-64 keeps them in
 * that order for the reader). */
static __always_inline void commit(struct fg_ring_slot *slot, __u64 pos)
{
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&slot->committed = (__u32)(pos + 1);
}

static __always_inline void emit(const struct record *r)
{
	__u64 id = r->pid_tgid ? r->pid_tgid : bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	bool first = r->source == FG_SRC_KERNEL || r->first == FIRST_YES;
	if (r->source != FG_SRC_KERNEL && !cfg.filter_pids) { /* monitor: gpu_procs knows GPU processes */
		if (r->first == FIRST_LOOKUP)
			first = !bpf_map_lookup_elem(&gpu_procs, &tgid);
		if (first) {
			__u8 one = 1;
			bpf_map_update_elem(&gpu_procs, &tgid, &one, BPF_ANY);
		}
	}
	__u64 pos = 0, fill = 0;
	struct fg_ring_slot *slot;
	if (first) { /* the comm goes in a slot of its own, just before the record */
		slot = ring_claim(&pos, &fill, 1);
		if (!slot)
			return;
		slot->tid = (__u32)id;
		slot->tgid = tgid;
		slot->type = FG_WIRE_COMM;
		bpf_get_current_comm(&slot->ptr, 2 * sizeof(__u64));
		commit(slot, pos); /* not counted: the record after it is the event */
	}
	/* One slot unless the record carries what only the extension holds. */
	const bool ext = FG_WIRE_NEEDS_EXT(r->ts, r->aux, r->status, r->size, r->device);
	slot = ring_claim(&pos, &fill, ext ? 2 : 1);
	if (!slot)
		return;
	if (ext) {
		struct fg_ring_ext *e = ring_slot(pos + 1);
		if (!e) /* cannot happen: the index is masked */
			return;
		e->status = r->status;
		e->ts_ns = r->ts;
		e->aux = r->aux;
		e->device = r->device;
		e->size_high = (__u16)(r->size >> FG_WIRE_SIZE_BITS);
		e->committed = (__u32)(pos + 2);
	}
	slot->tid = (__u32)id;
	slot->tgid = tgid;
	slot->ptr = r->ptr;
	slot->size_func = FG_WIRE_SIZE_FUNC(r->size, r->func);
	slot->device = (__s16)r->device;
	slot->type = FG_WIRE_TYPE(r->type, r->kind, ext);
	slot->api_source = FG_WIRE_API_SOURCE(r->api, r->source);
	commit(slot, pos);
	count_record(pos, fill);
}

/* A record's `first` from the book its call used. */
static __always_inline enum first_event first_of(bool booked, const struct book *b)
{
	return !booked ? FIRST_LOOKUP : b->created ? FIRST_YES : FIRST_NO;
}

/* --stacks: stack `id`'s frames as build id + file offset, taken the first time the id is seen
 * (the kernel reads each file's build id, so this is done once per stack, not per call). A
 * program emits its record only after the entry is filled: by itself, or found filled. Two
 * threads' first records of one stack can come microseconds apart; the second then finds the
 * entry inserted but not yet filled (frames == 0) and fills it too, with the same frames (one
 * stack id, one stack). */
static __noinline void note_stack_files(void *ctx, __u32 id)
{
	struct fg_stack_files *s = bpf_map_lookup_elem(&stack_files, &id);
	if (s && *(volatile __u32 *)&s->frames)
		return;
	if (!s) { /* inserted empty, then filled in place */
		bpf_map_update_elem(&stack_files, &id, &no_stack_files, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&stack_files, &id);
		if (!s)
			return; /* the table is full: only the maps name it */
	}
	long n = bpf_get_stack(ctx, s->frame, sizeof(s->frame), BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	if (n > 0)
		*(volatile __u32 *)&s->frames = (__u32)n / sizeof(s->frame[0]);
}

/* Books and emits a completed allocation (id: bpf_get_current_pid_tgid(); ts: see struct
 * record). */
static __always_inline void on_alloc(void *ctx, __u64 id, __s32 device, __u64 ptr, __u64 size, __u32 kind,
				     __u16 api, __u16 source, __u32 func, __u64 ts)
{
	struct book b;
	bool booked = book_of(id >> 32, device, kind, &b);
	if (booked) {
		b.mine->alloc_bytes += size;
		b.mine->alloc_calls += 1;
		book_live(b.shared, (__s64)size);
	}
	__u64 aux = 0; /* user stack id + 1 */
	if (cfg.stacks) {
		long sid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		if (sid >= 0) {
			aux = (__u64)sid + 1;
			note_stack_files(ctx, (__u32)sid);
		} else {
			stat_inc(FG_STAT_STACKS_LOST);
		}
	}
	emit(&(struct record){ .type = FG_EV_ALLOC, .device = device, .ptr = ptr, .size = size, .kind = kind,
			       .api = api, .source = source, .func = func, .aux = aux, .ts = ts,
			       .first = first_of(booked, &b), .pid_tgid = id });
}

/* Books and emits a completed free (explicit, or implicit with its reason in aux). */
static __always_inline void on_free(__u64 id, __s32 device, __u64 ptr, __u64 size, __u32 kind, __u16 api,
				    __u16 source, __u32 func, bool implicit, __u64 reason, __u64 ts)
{
	struct book b;
	bool booked = book_of(id >> 32, device, kind, &b);
	if (booked) {
		if (implicit) {
			b.mine->implicit_free_bytes += size;
		} else {
			b.mine->free_bytes += size;
			b.mine->free_calls += 1;
		}
		book_live(b.shared, -(__s64)size);
	}
	emit(&(struct record){ .type = implicit ? FG_EV_IMPLICIT_FREE : FG_EV_FREE, .device = device, .ptr = ptr,
			       .size = size, .kind = kind, .api = api, .source = source, .func = func, .aux = reason,
			       .ts = ts, .first = first_of(booked, &b), .pid_tgid = id });
}

static __always_inline void on_failure(__u64 id, __u32 type, __s32 device, __u64 ptr, __u64 size, __u32 kind,
				       __s32 status, __u16 api, __u16 source, __u32 func, __u64 ts)
{
	struct book b;
	bool booked = book_of(id >> 32, device, kind < FG_MEM_KINDS ? kind : FG_MEM_DEVICE, &b);
	if (booked)
		b.mine->failed_calls += 1;
	emit(&(struct record){ .type = type, .device = device, .ptr = ptr, .size = size, .kind = kind, .status = status,
			       .api = api, .source = source, .func = func, .ts = ts, .first = first_of(booked, &b),
			       .pid_tgid = id });
}

/* ---- USDT: the fake backend's own probes ------------------------------------------------ */
/*
 * The backend's probe sites keep their arguments in the first three argument registers
 * (notes "8@%rdi 8@%rsi 8@%rdx", fakebackend/src/core/usdt.h), and the collector attaches
 * these programs only after checking every site's note says so: the arguments are loaded
 * from pt_regs directly, with no spec lookup and no guarded read per argument (libbpf's
 * bpf_usdt_arg() path cost about a third of the program).
 */
#define USDT_ARG0(ctx) PT_REGS_PARM1(ctx)
#define USDT_ARG1(ctx) PT_REGS_PARM2(ctx)
#define USDT_ARG2(ctx) PT_REGS_PARM3(ctx)

/* fakegpu:alloc(ptr, size, info) */
SEC("usdt")
int usdt_alloc(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	ring_warm();
	const __u64 ptr = USDT_ARG0(ctx), size = USDT_ARG1(ctx), info = USDT_ARG2(ctx);
	__s32 device = FG_USDT_INFO_DEVICE(info), status = FG_USDT_INFO_STATUS(info);
	__u32 kind = FG_USDT_INFO_KIND(info), api = FG_USDT_INFO_API(info);
	if (status == 0)
		on_alloc(ctx, id, device, ptr, size, kind, api, FG_SRC_USDT, ~0u, 0);
	else
		on_failure(id, FG_EV_ALLOC_FAIL, device, ptr, size, kind, status, api, FG_SRC_USDT, ~0u, 0);
	return 0;
}

/* fakegpu:free(ptr, size, info) */
SEC("usdt")
int usdt_free(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	ring_warm();
	const __u64 ptr = USDT_ARG0(ctx), size = USDT_ARG1(ctx), info = USDT_ARG2(ctx);
	__s32 device = FG_USDT_INFO_DEVICE(info), status = FG_USDT_INFO_STATUS(info);
	__u32 kind = FG_USDT_INFO_KIND(info), api = FG_USDT_INFO_API(info);
	if (status == 0)
		on_free(id, device, ptr, size, kind, api, FG_SRC_USDT, ~0u, false, 0, 0);
	else
		on_failure(id, FG_EV_FREE_FAIL, device, ptr, size, kind, status, api, FG_SRC_USDT, ~0u, 0);
	return 0;
}

/* fakegpu:implicit_free(ptr, size, info): info's API byte is the reason (1 ctx destroy,
 * 2 process exit, 3 device reset) */
SEC("usdt")
int usdt_implicit_free(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	ring_warm();
	const __u64 ptr = USDT_ARG0(ctx), size = USDT_ARG1(ctx), info = USDT_ARG2(ctx);
	on_free(id, FG_USDT_INFO_DEVICE(info), ptr, size, FG_USDT_INFO_KIND(info), FG_API_INTERNAL, FG_SRC_USDT, ~0u,
		true, FG_USDT_INFO_API(info), 0);
	return 0;
}

/* fakegpu:ctx_switch(device, ctx) */
SEC("usdt")
int usdt_ctx_switch(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	emit(&(struct record){ .type = FG_EV_CTX_SWITCH, .device = (__s32)USDT_ARG0(ctx), .api = FG_API_INTERNAL,
			       .source = FG_SRC_USDT, .func = ~0u, .aux = USDT_ARG1(ctx), .pid_tgid = id });
	return 0;
}

/* ---- entry/return probes on exported API functions ---------------------------------------- */
/*
 * The attach cookie describes the function:
 *   bits  0..15 function index (the collector's table)     bits 16..23 class
 *   bits 24..31 memory kind                                  bits 32..39 API layer
 *   bits 40..47 copy direction (copy class)
 */
enum fg_class {
	FG_C_OTHER = 0,	       /* counted and timed only */
	FG_C_ALLOC = 1,	       /* (T **out, size_t size, ...) */
	FG_C_ALLOC_PITCH = 2,  /* (T **out, size_t *pitch, size_t width, size_t height, ...) */
	FG_C_FREE = 3,	       /* (T *ptr, ...) */
	FG_C_SET_DEVICE = 4,   /* cudaSetDevice(int device) */
	FG_C_CTX_CREATE = 5,   /* cuCtxCreate_v2(CUcontext *out, unsigned flags, CUdevice dev) */
	FG_C_CTX_CREATE4 = 6,  /* cuCtxCreate_v4(CUcontext *out, params *, unsigned flags, CUdevice dev) */
	FG_C_PRIMARY = 7,      /* cuDevicePrimaryCtxRetain(CUcontext *out, CUdevice dev) */
	FG_C_CTX_SET = 8,      /* cuCtxSetCurrent / cuCtxPushCurrent_v2 (CUcontext ctx) */
	FG_C_COPY = 9,	       /* (dst, src, size_t count, [cudaMemcpyKind kind]) */
	FG_C_LAUNCH = 10,      /* kernel launch */
	FG_C_VMM_CREATE = 11,  /* cuMemCreate(handle *out, size_t size, ...) */
	FG_C_VMM_RELEASE = 12, /* cuMemRelease(handle) */
	FG_C_CTX_DESTROY = 13, /* cuCtxDestroy_v2(CUcontext ctx) */
	FG_C_PRIMARY_RESET = 14, /* cuDevicePrimaryCtxReset_v2(CUdevice dev) / cudaDeviceReset() */
	FG_C_PRIMARY_RELEASE = 15, /* cuDevicePrimaryCtxRelease_v2(CUdevice dev) */
};

#define COOKIE_FUNC(c) ((__u32)((c)&0xffff))
#define COOKIE_CLASS(c) ((__u32)(((c) >> 16) & 0xff))
#define COOKIE_KIND(c) ((__u32)(((c) >> 24) & 0xff))
#define COOKIE_API(c) ((__u32)(((c) >> 32) & 0xff))
#define COOKIE_DIR(c) ((__u32)(((c) >> 40) & 0xff))

/*
 * Whether this call is timed: every call with --latency-every 1, else a random one in N
 * (cfg.latency_threshold = 2^32 / N). Two clock reads cost ~50 ns a call here, most of what
 * separates the entry/return programs from a bare counter; counts stay exact either way.
 * Random, not every N-th: a thread that alternates two functions would time only one.
 */
static __always_inline bool timed_call(void)
{
	return cfg.latency_threshold == 0 || bpf_get_prandom_u32() < cfg.latency_threshold;
}

/*
 * Reading an out-parameter from user memory (the pointer cudaMalloc wrote, a pitch, a
 * context). bpf_probe_read_user costs ~50 ns a read on these VMs, so where the kernel
 * allows (x86-64 with 4-level paging, bpf_rdonly_cast: kernel 6.2+; the collector then
 * loads api_exit_multi_walk) the return program walks the calling process's page tables
 * itself and reads the word through the kernel's direct map of physical memory: seven
 * fault-safe loads (bpf_rdonly_cast, then a load that reads 0 instead of faulting), measured
 * ~1.5 % of a traced call less. Anything unusual falls back to the helper: a page or table
 * not present, a word across a page boundary, an address above 4-level user space, a
 * 5-level layout, a zero result (a faulting load reads 0).
 *
 * The walk is checked against the helper: on its first FG_WALK_TRUST reads host-wide and on
 * a random 1 in 8 timed calls after (1 in 64 calls with the default --latency-every 8). One
 * disagreement turns it off for good (the helper's value is the one used; walk_disagreed
 * tells the collector, which says so). The helper remains the reference;
 * FAKEGPU_TRACE_NO_WALK=1 makes the collector use it only.
 */
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym __weak;

#define FG_PAGE_OFFSET_L4 0xffff888000000000ULL /* the direct map without randomization */
#define FG_KERNEL_HALF_L4 0xffff800000000000ULL /* 5-level layouts place it below this */
#define FG_USER_TOP_L4 (1ULL << 47)
#define FG_PTE_PRESENT 0x1ULL
#define FG_PTE_HUGE 0x80ULL /* a 1 GiB (PUD) or 2 MiB (PMD) page */
#define FG_PHYS_BITS_MAX 52
#define FG_WALK_TRUST 64

/* Reads checked and equal, counted up to FG_WALK_TRUST (a few more where CPUs race), and
 * reads checked and different (the walk is off). */
__u64 walk_agreed = 0;
__u64 walk_disagreed = 0;
/* The kernel's layout, set by the collector once it is ready (Collector::enable_page_walk,
 * from /proc/kallsyms: libbpf's typeless ksyms would read it before the probes attach, ~60 ms
 * of `attach`). Until walk_ready, the helper reads. */
__u64 walk_page_offset_base = 0; /* &page_offset_base (a randomized layout), 0: a fixed one */
__u64 walk_physical_mask = 0;	 /* &physical_mask (memory encryption), 0: none */
__u32 walk_ready = 0;

/* The kernel word at `addr`, or 0 where it cannot be read. */
static __always_inline __u64 kernel_word(__u64 addr)
{
	struct rb_node *w = bpf_rdonly_cast((void *)addr, bpf_core_type_id_kernel(struct rb_node));
	return w->__rb_parent_color;
}

/* The address of the next table, or of the page: the entry's frame, in the direct map. */
static __always_inline __u64 entry_frame(__u64 base, __u64 entry, __u64 phys_mask, __u32 page_shift)
{
	return base + (entry & phys_mask & ~((1ULL << page_shift) - 1));
}

static __always_inline bool walk_user_u64(__u64 addr, __u64 *out)
{
	if (!walk_ready || (addr & 0xfff) > 0xff8 || addr >= FG_USER_TOP_L4)
		return false;
	const __u64 base = walk_page_offset_base ? kernel_word(walk_page_offset_base) : FG_PAGE_OFFSET_L4;
	if (base < FG_KERNEL_HALF_L4)
		return false;
	const __u64 phys_mask = (walk_physical_mask ? kernel_word(walk_physical_mask) : ~0ULL) &
				((1ULL << FG_PHYS_BITS_MAX) - 1);
	const __u64 mm = kernel_word(bpf_get_current_task() + bpf_core_field_offset(struct task_struct, mm));
	__u64 table = kernel_word(mm + bpf_core_field_offset(struct mm_struct, pgd));
	if (!mm || !table)
		return false;
	__u64 page = 0;
	/* PGD (bits 39-47), PUD (30-38), PMD (21-29), PTE (12-20); PUD and PMD entries may map
	 * a huge page. */
	for (__u32 shift = 39; shift >= 12; shift -= 9) {
		const __u64 entry = kernel_word(table + 8 * ((addr >> shift) & 511));
		if (!(entry & FG_PTE_PRESENT))
			return false;
		if (shift == 12 || ((shift == 30 || shift == 21) && (entry & FG_PTE_HUGE))) {
			page = entry_frame(base, entry, phys_mask, shift) + (addr & ((1ULL << shift) - 1));
			break;
		}
		table = entry_frame(base, entry, phys_mask, 12);
	}
	if (!page)
		return false;
	*out = kernel_word(page);
	return *out != 0;
}

/* *addr, a u64 in the calling process's memory: 0 when read, else the helper's error. */
static __always_inline long read_user_u64(bool walk, bool check, __u64 addr, __u64 *out)
{
	__u64 walked;
	if (!walk || walk_disagreed || !walk_user_u64(addr, &walked))
		return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
	if (!check && walk_agreed >= FG_WALK_TRUST) {
		*out = walked;
		return 0;
	}
	long err = bpf_probe_read_user(out, sizeof(*out), (void *)addr);
	if (err)
		return err;
	if (*out == walked) {
		if (walk_agreed < FG_WALK_TRUST)
			__sync_fetch_and_add(&walk_agreed, 1);
	} else {
		__sync_fetch_and_add(&walk_disagreed, 1);
	}
	return 0;
}

/* The calling thread's state (task: the current one); created on its first traced call when
 * `create`. */
static __always_inline struct thread_state *thread_state(struct task_struct *task, bool create)
{
	return bpf_task_storage_get(&threads, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline struct stash_val *stash_of(struct thread_state *t, __u32 api)
{
	return &t->stash[api == FG_API_DRIVER ? 1 : 0];
}

static __always_inline int enter(struct pt_regs *ctx)
{
	/* The process id only where it is filtered on (monitor leaves out the helper call). */
	if (cfg.filter_pids && !traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	struct thread_state *t = thread_state(bpf_get_current_task_btf(), true);
	if (!t)
		return 0; /* no memory for it: the return counts a missing entry record */
	struct stash_val *v = stash_of(t, COOKIE_API(bpf_get_attach_cookie(ctx)));
	v->a0 = PT_REGS_PARM1(ctx);
	v->a1 = PT_REGS_PARM2(ctx);
	v->a2 = PT_REGS_PARM3(ctx);
	v->a3 = PT_REGS_PARM4(ctx);
	v->ts = timed_call() ? bpf_ktime_get_ns() : FG_UNTIMED;
	return 0;
}

/* The thread's current driver context, 0 for the runtime's primary context. */
static __always_inline __u64 current_ctx(const struct thread_state *t)
{
	__u64 ctx = t->ctx;
	if (!ctx)
		return 0;
	return bpf_map_lookup_elem(&primary_ctx, &ctx) ? 0 : ctx;
}

/* The holders of (tgid, device)'s primary context, created empty when absent. */
static __always_inline struct primary_refs *holders(__u32 tgid, __s32 device)
{
	struct primary_key k = { .tgid = tgid, .device = device };
	struct primary_refs *r = bpf_map_lookup_elem(&primary_holders, &k);
	if (r)
		return r;
	struct primary_refs zero = {};
	bpf_map_update_elem(&primary_holders, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&primary_holders, &k);
}

/*
 * The runtime uses (tgid, device)'s primary context. Marked on the runtime's allocations and
 * device selections; each thread remembers what it marked last, so the hash is searched
 * again only after a change of device or a reset (which drops the holders: `resets` counts
 * them, host-wide).
 */
static __always_inline __u64 *resets_so_far(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&resets, &zero);
}

static __always_inline void runtime_holds(struct thread_state *t, __u32 tgid, __s32 device)
{
	__u64 *resets_now = resets_so_far();
	__u64 gen = resets_now ? *resets_now : 0;
	if (t->marked == device + 1 && t->marked_gen == gen)
		return;
	struct primary_refs *h = holders(tgid, device);
	if (!h)
		return;
	h->runtime = 1;
	t->marked = device + 1;
	t->marked_gen = gen;
}

/* Destroying a context (or resetting a device's primary context) frees what it holds. */
struct ctx_free_arg {
	__u64 id;	/* bpf_get_current_pid_tgid() */
	__u32 tgid;
	__u32 func;
	__u64 ctx;	/* the context destroyed; 0 with primary: the primary context of device */
	__s32 device;
	__u16 api;
	__u16 primary;
	__u64 ts;	/* the return's clock read */
};

static long free_ctx_allocation(void *map, __u32 *idx, struct fg_alloc_rec *r, struct ctx_free_arg *a)
{
	if (r->tgid != a->tgid || r->ptr <= FG_ALLOC_DELETED)
		return 0;
	if (a->primary ? (r->ctx != 0 || r->ctx_device != a->device) : r->ctx != a->ctx)
		return 0;
	on_free(a->id, r->device, r->ptr, r->size, r->kind, a->api, FG_SRC_UPROBE, a->func, true,
		1 /* context destroyed */, a->ts);
	alloc_forget(r);
	return 0;
}

/* floor(log2(v)) for v >= 1, 0 for 0: branch-free. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;
	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	return r | (__u32)(v >> 1);
}

/* Counts and times a call: per-CPU values (no atomics), summed by the collector. */
static __always_inline void account_call(__u32 tgid, __u32 func, __u64 ns, bool failed, bool timed)
{
	bool created;
	long idx = tag_slot(&call_tags, FG_CALL_TAG(tgid, func), FG_CALL_SLOTS - 1, &created);
	if (idx < 0)
		return;
	__u32 i = (__u32)idx;
	struct call_val *v = bpf_map_lookup_elem(&calls, &i);
	if (!v)
		return;
	v->calls += 1;
	v->fails += failed;
	if (!timed)
		return;
	v->timed += 1;
	v->total_ns += ns;
	if (ns > v->max_ns)
		v->max_ns = ns;
	__u32 bucket = log2_u64(ns);
	if (bucket > FG_LAT_BUCKETS - 1)
		bucket = FG_LAT_BUCKETS - 1;
	v->hist[bucket & (FG_LAT_BUCKETS - 1)] += 1;
}

static __always_inline int leave(struct pt_regs *ctx, const bool walk)
{
	/* The task's ids and its storage from one helper call (bpf_get_current_pid_tgid() is
	 * another). */
	struct task_struct *task = bpf_get_current_task_btf();
	const __u32 tgid = task->tgid;
	const __u64 id = (__u64)tgid << 32 | (__u32)task->pid;
	if (!traced(tgid))
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	const __u32 class = COOKIE_CLASS(cookie);
	if (class == FG_C_ALLOC || class == FG_C_FREE)
		ring_warm(); /* the calls that write a record (the rest are rare or only counted) */
	struct thread_state *t = thread_state(task, false);
	struct stash_val *sp = t ? stash_of(t, COOKIE_API(cookie)) : 0;
	if (!sp || !sp->ts) {
		stat_inc(FG_STAT_MISSING_ENTRY); /* attached between entry and return */
		return 0;
	}
	struct stash_val v = *sp;
	sp->ts = 0; /* always consumed: a stale record would misattribute later */

	const int rc = (int)PT_REGS_RC(ctx);
	const __u32 func = COOKIE_FUNC(cookie), kind = COOKIE_KIND(cookie);
	const __u16 api = COOKIE_API(cookie);
	/* Untimed calls' records carry no clock read either: the collector stamps them. */
	const bool timed = v.ts != FG_UNTIMED;
	const __u64 now = timed ? bpf_ktime_get_ns() : 0;
	/* The page walk's reads checked against the helper (read_user_u64): a random 1 in 8
	 * timed calls (the clock's low bits), 1 in 64 calls by default. */
	const bool check = timed && (now & 7) == 0;
	account_call(tgid, func, now - v.ts, rc != 0, timed);

	switch (class) {
	case FG_C_ALLOC:
	case FG_C_ALLOC_PITCH:
	case FG_C_VMM_CREATE: {
		__u64 size = v.a1;
		if (class == FG_C_ALLOC_PITCH) {
			__u64 pitch = 0;
			if (rc == 0)
				read_user_u64(walk, check, v.a1, &pitch);
			size = pitch * v.a3;
		}
		__s32 device = kind == FG_MEM_HOST ? -1 : t->device;
		if (class == FG_C_VMM_CREATE) {
			/* cuMemCreate(handle *, size, const CUmemAllocationProp *prop, flags): the
			 * device is prop->location (type at offset 8, id at 12), not the context's. */
			__u64 loc = 0; /* type (low half), id (high half) */
			if (v.a2 && read_user_u64(walk, check, v.a2 + 8, &loc) == 0 &&
			    (__u32)loc == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */)
				device = (__s32)(loc >> 32);
		}
		if (rc != 0) {
			on_failure(id, FG_EV_ALLOC_FAIL, device, 0, size, kind, rc, api, FG_SRC_UPROBE, func, now);
			return 0;
		}
		__u64 ptr = 0;
		if (read_user_u64(walk, check, v.a0, &ptr) != 0 || ptr == 0 || size == 0)
			return 0; /* cudaMalloc(&p, 0): success, nothing allocated */
		if (api == FG_API_RUNTIME) /* the runtime now holds this device's primary context */
			runtime_holds(t, tgid, t->device);
		struct fg_alloc_rec *ar = alloc_claim(tgid, ptr);
		if (ar) {
			ar->size = size;
			ar->device = device;
			ar->kind = kind;
			ar->ctx = current_ctx(t);
			ar->ctx_device = t->device;
		}
		on_alloc(ctx, id, device, ptr, size, kind, api, FG_SRC_UPROBE, func, now);
		return 0;
	}
	case FG_C_FREE:
	case FG_C_VMM_RELEASE: {
		if (v.a0 == 0)
			return 0; /* free(NULL) */
		struct fg_alloc_rec *ar = alloc_find(tgid, v.a0);
		if (rc != 0) {
			on_failure(id, FG_EV_FREE_FAIL, ar ? ar->device : -1, v.a0, 0, kind, rc, api, FG_SRC_UPROBE, func, now);
			return 0;
		}
		if (!ar) {
			/* Allocated before the probes were attached, or the map was full. */
			stat_inc(FG_STAT_UNMATCHED_FREE);
			emit(&(struct record){ .type = FG_EV_FREE, .device = -1, .ptr = v.a0, .kind = kind, .api = api,
					       .source = FG_SRC_UPROBE, .func = func, .ts = now });
			return 0;
		}
		struct fg_alloc_rec rec = *ar;
		alloc_forget(ar);
		on_free(id, rec.device, v.a0, rec.size, rec.kind, api, FG_SRC_UPROBE, func, false, 0, now);
		return 0;
	}
	case FG_C_SET_DEVICE:
		if (rc == 0) {
			__s32 dev = (__s32)v.a0;
			t->device = dev;
			t->ctx = 0; /* the runtime works in the device's primary context */
			runtime_holds(t, tgid, dev);
			emit(&(struct record){ .type = FG_EV_CTX_SWITCH, .device = dev, .api = api, .source = FG_SRC_UPROBE,
					       .func = func, .ts = now });
		}
		return 0;
	case FG_C_CTX_CREATE:
	case FG_C_CTX_CREATE4:
	case FG_C_PRIMARY: {
		if (rc != 0)
			return 0;
		__u64 c = 0;
		read_user_u64(walk, check, v.a0, &c);
		__s32 dev = (__s32)(class == FG_C_CTX_CREATE ? v.a2
				    : class == FG_C_CTX_CREATE4 ? v.a3
									       : v.a1);
		bpf_map_update_elem(&ctx_device, &c, &dev, BPF_ANY);
		if (class == FG_C_PRIMARY) {
			bpf_map_update_elem(&primary_ctx, &c, &dev, BPF_ANY);
			struct primary_refs *h = holders(tgid, dev);
			if (h)
				__sync_fetch_and_add(&h->driver, 1);
		}
		else { /* cuCtxCreate makes it current */
			t->device = dev;
			t->ctx = c;
			emit(&(struct record){ .type = FG_EV_CTX_SWITCH, .device = dev, .api = api, .source = FG_SRC_UPROBE,
					       .func = func, .ts = now, .aux = c });
		}
		return 0;
	}
	case FG_C_CTX_SET: {
		if (rc != 0)
			return 0;
		__u64 c = v.a0;
		__s32 *dev = bpf_map_lookup_elem(&ctx_device, &c);
		if (dev) {
			__s32 d = *dev;
			t->device = d;
			t->ctx = c;
			emit(&(struct record){ .type = FG_EV_CTX_SWITCH, .device = d, .api = api, .source = FG_SRC_UPROBE,
					       .func = func, .ts = now, .aux = c });
		}
		return 0;
	}
	case FG_C_CTX_DESTROY:
	case FG_C_PRIMARY_RESET:
	case FG_C_PRIMARY_RELEASE: {
		if (rc != 0)
			return 0;
		struct ctx_free_arg a = { .id = id, .tgid = tgid, .func = func, .api = api, .ts = now };
		if (class == FG_C_PRIMARY_RELEASE) {
			/* Only the last reference frees: none left by the driver API, none by the runtime. */
			struct primary_refs *h = holders(tgid, (__s32)v.a0);
			if (!h || __sync_fetch_and_add(&h->driver, -1) != 1 || h->runtime)
				return 0;
			a.primary = 1;
			a.device = (__s32)v.a0;
		} else if (class == FG_C_CTX_DESTROY) {
			a.ctx = v.a0;
			bpf_map_delete_elem(&ctx_device, &a.ctx);
			if (t->ctx == a.ctx)
				t->ctx = 0;
		} else {
			a.primary = 1;
			a.device = api == FG_API_RUNTIME ? t->device : (__s32)v.a0;
			struct primary_key k = { .tgid = tgid, .device = a.device };
			bpf_map_delete_elem(&primary_holders, &k); /* a reset drops every reference */
			__u64 *resets_now = resets_so_far();
			if (resets_now)
				__sync_fetch_and_add(resets_now, 1);
		}
		bpf_for_each_map_elem(&allocs, free_ctx_allocation, &a, 0);
		return 0;
	}
	case FG_C_COPY: {
		if (rc != 0)
			return 0;
		/* The runtime passes the kind as the fourth argument; the driver's name says it. */
		__u32 dir = api == FG_API_RUNTIME ? (__u32)v.a3 : COOKIE_DIR(cookie);
		struct copy_key ck = { .tgid = tgid, .dir = dir > 4 ? 4 : dir };
		struct copy_val *cv = bpf_map_lookup_elem(&copies, &ck);
		if (!cv) {
			struct copy_val zero = {};
			bpf_map_update_elem(&copies, &ck, &zero, BPF_NOEXIST);
			cv = bpf_map_lookup_elem(&copies, &ck);
			if (!cv)
				return 0;
		}
		__sync_fetch_and_add(&cv->bytes, v.a2);
		__sync_fetch_and_add(&cv->count, 1);
		return 0;
	}
	case FG_C_LAUNCH: {
		if (rc != 0)
			return 0;
		__u64 *n = bpf_map_lookup_elem(&launches, &tgid);
		if (n) {
			__sync_fetch_and_add(n, 1);
		} else {
			__u64 one = 1;
			bpf_map_update_elem(&launches, &tgid, &one, BPF_NOEXIST);
		}
		return 0;
	}
	default:
		return 0;
	}
}

/*
 * The same programs twice: attached one probe per function through perf uprobes (any
 * kernel), or all of a library's functions through one multi-uprobe link (kernel 6.6+).
 * Releasing a perf uprobe waits for an RCU grace period (~0.4 s on these VMs): with a
 * hundred probes, stopping took a minute; two multi links per library take two waits.
 * The collector loads the pair the kernel supports (expected attach type set before load).
 */
SEC("uprobe")
int api_enter(struct pt_regs *ctx)
{
	return enter(ctx);
}

SEC("uretprobe")
int api_exit(struct pt_regs *ctx)
{
	return leave(ctx, false);
}

SEC("uprobe")
int api_enter_multi(struct pt_regs *ctx)
{
	return enter(ctx);
}

SEC("uprobe")
int api_exit_multi(struct pt_regs *ctx)
{
	return leave(ctx, false);
}

/* api_exit_multi reading user memory through the page tables (read_user_u64): loaded
 * instead of it where the kernel has what the walk needs. */
SEC("uprobe")
int api_exit_multi_walk(struct pt_regs *ctx)
{
	return leave(ctx, true);
}

/* A scheduler event: exit, fork (aux: the child) or exec. */
static __always_inline void emit_process_event(__u32 type, __u64 aux)
{
	emit(&(struct record){ .type = type, .device = -1, .api = FG_API_INTERNAL, .source = FG_SRC_KERNEL,
			       .func = ~0u, .aux = aux, .ts = bpf_ktime_get_ns() });
}

/* ---- processes ------------------------------------------------------------------------- */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	if (pid != tgid || !traced_process(tgid))
		return 0; /* a thread, not the process */
	emit_process_event(FG_EV_PROC_EXIT, 0);
	bpf_map_delete_elem(&pids, &tgid);
	bpf_map_delete_elem(&gpu_procs, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid == ctgid || !traced_process(ptgid))
		return 0; /* a new thread */
	__u8 one = 1;
	if (cfg.filter_pids) {
		if (!cfg.follow_children)
			return 0;
		bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY);
	} else {
		/* A GPU process's child is followed: it may exec a GPU program. */
		bpf_map_update_elem(&gpu_procs, &ctgid, &one, BPF_ANY);
	}
	emit_process_event(FG_EV_PROC_FORK, ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (cfg.stacks) {
		/* Every exec (monitor meets a new GPU process at its first call, after this): the
		 * file mapped, bprm->interp, the file opened last (a script's interpreter). */
		struct fg_exec_path path;
		if (bpf_probe_read_kernel_str(path.path, sizeof(path.path), BPF_CORE_READ(bprm, interp)) > 0)
			bpf_map_update_elem(&exec_paths, &tgid, &path, BPF_ANY);
	}
	if (!traced_process(tgid))
		return 0;
	/* A new program: its calls start from the runtime's defaults (device 0, no context). */
	bpf_task_storage_delete(&threads, p);
	emit_process_event(FG_EV_PROC_EXEC, 0);
	return 0;
}
