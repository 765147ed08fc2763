/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The books, kept in the kernel: the truth whatever happens to the event records.
 *  - Per (process, device, kind): bytes allocated, freed and live, the peak, calls
 *    (book_slots and book_counts, fakegpu_events.h).
 *  - The entry/return path's live allocations (allocs), so a free knows its size, device and
 *    kind.
 *  - Per (process, traced function): calls, failures and sampled latency (call_tags, calls);
 *    bytes copied per direction (copies); kernel launches (launches).
 *  - Per (process, caller): calls, bytes and time by the code that called the API, with the
 *    file that code lies in (callers, caller_files: per-library attribution).
 * The hot tables are open-addressing tables in BPF arrays (no hash-map search per call), and
 * a slot that cannot be had is counted (FG_STAT_ALLOC_MAP_FULL).
 */
#ifndef FAKEGPU_BOOKS_BPF_H
#define FAKEGPU_BOOKS_BPF_H

#include "fakegpu.bpf.h"

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

/* Kernel launches per process and kernel, with the kernel's name (fakegpu:launch). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fg_kernel_key);
	__type(value, struct fg_kernel_val);
} kernels SEC(".maps");

/* Kernel launches per process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

/* Per (process, caller): an open-addressing table (FG_CALLER_TAG; fakegpu_events.h) of three
 * arrays indexed alike: tags, each caller and its file (shared), counts (per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FG_CALLER_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} caller_tags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FG_CALLER_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_caller_file);
} caller_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_CALLER_SLOTS);
	__type(key, __u32);
	__type(value, struct fg_caller_val);
} caller_counts SEC(".maps");

/* ---- helpers ------------------------------------------------------------------------- */

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
/* The tag of the i-th slot searched from `home` (*idx: its index), or NULL. */
static __always_inline __u64 *tag_probe(void *tags, __u32 home, __u32 i, __u32 mask, __u32 *idx)
{
	*idx = (home + i) & mask;
	return bpf_map_lookup_elem(tags, idx);
}

/* Slot `idx` of the callers' table holds `caller` (its tag already matched); the caller is
 * published last (note_caller_file), so a slot still being filled holds none. */
static __always_inline bool caller_at(__u32 idx, __u64 caller)
{
	struct fg_caller_file *f = bpf_map_lookup_elem(&caller_files, &idx);
	return f && *(volatile __u64 *)&f->caller == caller;
}

/* tag_slot's search; with `with_caller`, a slot whose tag matches is the key's only if it also
 * holds `caller` (the callers' tags hold a hash of it). */
static __always_inline long tag_slot_of(void *tags, __u64 tag, __u32 mask, bool *created,
					bool with_caller, __u64 caller)
{
	const __u32 home = (__u32)((tag * 0x9E3779B97F4A7C15ULL) >> 40);
	*created = false;
	__u32 idx;
	for (__u32 i = 0; i < FG_TAG_PROBES; i++) {
		__u64 *t = tag_probe(tags, home, i, mask, &idx);
		if (!t)
			break;
		__u64 v = *(volatile __u64 *)t;
		if (v == tag && (!with_caller || caller_at(idx, caller)))
			return idx;
		if (v == FG_TAG_FREE)
			break; /* never used: the key is not further on */
	}
	for (__u32 i = 0; i < FG_TAG_PROBES; i++) {
		__u64 *t = tag_probe(tags, home, i, mask, &idx);
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
		/* With a caller: another thread's claim, maybe not yet filled, is matched once it
		 * is; before, this thread claims a second slot for the key (the collector sums). */
		if (v == tag && (!with_caller || caller_at(idx, caller)))
			return idx;
	}
	stat_inc(FG_STAT_ALLOC_MAP_FULL);
	return -1;
}

static __always_inline long tag_slot(void *tags, __u64 tag, __u32 mask, bool *created)
{
	return tag_slot_of(tags, tag, mask, created, false, 0);
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
	long idx = tag_slot(&book_slots, FG_BOOK_TAG(tgid, device, kind), FG_BOOK_SLOTS - 1,
			    &b->created);
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
	return (__u32)(((ptr ^ ((__u64)tgid << 40)) * 0x9E3779B97F4A7C15ULL) >> 32) &
	       cfg.allocs_mask;
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

/* floor(log2(v)) for v >= 1, 0 for 0: branch-free. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;
	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
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

/* bpf_find_vma's callback: the mapping holding the caller, as its file (or anonymous). */
static long caller_vma(struct task_struct *task, struct vm_area_struct *vma,
		       struct fg_caller_file *f)
{
	struct file *file = vma->vm_file;
	if (!file) {
		f->status = FG_CALLER_ANON;
		return 0;
	}
	f->status = FG_CALLER_FILE;
	f->map_start = vma->vm_start;
	f->map_pgoff = vma->vm_pgoff;
	f->inode = file->f_inode->i_ino;
	f->dev = file->f_inode->i_sb->s_dev;
	bpf_probe_read_kernel_str(f->name, sizeof(f->name), file->f_path.dentry->d_name.name);
	return 0;
}

/* Fills caller slot f (claimed, empty) with the caller and the file it lies in; the caller
 * is written last: a search matches the slot only once it is. */
static __noinline void note_caller_file(struct fg_caller_file *f, __u64 caller)
{
	struct fg_caller_file found = {};
	if (caller)
		bpf_find_vma(bpf_get_current_task_btf(), caller, caller_vma, &found, 0);
	*f = found;					    /* caller still 0 */
	__sync_val_compare_and_swap(&f->caller, 0, caller); /* a full barrier: published after */
}

/* The slot of (tgid, caller), claimed (and filled) when absent; -1 when the table is full. */
static __always_inline long caller_slot(__u32 tgid, __u64 caller)
{
	bool created;
	long idx = tag_slot_of(&caller_tags, FG_CALLER_TAG(tgid, caller), FG_CALLER_SLOTS - 1,
			       &created, true, caller);
	if (idx >= 0 && created) {
		__u32 i = (__u32)idx;
		struct fg_caller_file *f = bpf_map_lookup_elem(&caller_files, &i);
		if (f)
			note_caller_file(f, caller);
	}
	return idx;
}

/* Counts a call (and what it allocated or freed, and its time when timed) for its caller:
 * per-CPU counters, no atomics. */
static __always_inline void account_caller(__u32 tgid, __u64 caller, bool failed, __u64 alloc_bytes,
					   __u64 free_bytes, bool probed, bool timed, __u64 ns)
{
	long idx = caller_slot(tgid, caller);
	if (idx < 0)
		return;
	__u32 i = (__u32)idx;
	struct fg_caller_val *v = bpf_map_lookup_elem(&caller_counts, &i);
	if (!v)
		return;
	v->calls += 1;
	v->failed += failed;
	v->alloc_bytes += alloc_bytes;
	v->free_bytes += free_bytes;
	v->probed += probed;
	if (timed) {
		v->timed += 1;
		v->total_ns += ns;
	}
}

#endif /* FAKEGPU_BOOKS_BPF_H */
