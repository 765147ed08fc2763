// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu-trace's BPF programs: the books of every process's GPU memory, kept in the kernel.
 *
 * Two ways in, one set of books:
 *  - USDT probes of the fake backend (fakegpu:alloc/free/implicit_free/ctx_switch) fire
 *    once where a call completes and carry device, pointer, size, kind and status.
 *  - Entry/return uprobes on the exported API functions of any CUDA library (ours or
 *    NVIDIA's). The entry stashes the arguments in a thread-keyed map, the return reads and
 *    always deletes that record (memleak's way), reads out-parameters from user memory and
 *    books the result. Each attachment carries a cookie saying which function it is.
 *
 * The books (map `books`) are the truth; the ring buffer carries the detail for the
 * collector's per-allocation ledger. Wake-ups are batched (BPF_RB_NO_WAKEUP until
 * cfg.wakeup_bytes are pending; the collector also polls on a timer), and every event that
 * cannot be delivered is counted (map `stats`).
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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* resized from the command line before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct fg_book_key);
	__type(value, struct fg_book);
} books SEC(".maps");

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

/* Entry/return path: live allocations, so a free knows its size, device and kind. */
struct alloc_key {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};
struct alloc_rec {
	__u64 size;
	__s32 device;
	__u32 kind;
	__u64 ctx;	/* driver context current at allocation; 0: the runtime's (primary) */
	__s32 ctx_device; /* that context's device */
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 18); /* --max-allocs */
	__type(key, struct alloc_key);
	__type(value, struct alloc_rec);
} allocs SEC(".maps");

/*
 * Entry records, keyed by thread and API layer: NVIDIA's cudaMalloc calls cuMemAlloc_v2 on
 * the same thread, so the runtime's and the driver's records must not overwrite each other.
 */
struct stash_key {
	__u32 tid;
	__u32 api;
};
struct stash_val {
	__u64 ts;
	__u64 a0, a1, a2, a3; /* the arguments the class needs */
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stash_key);
	__type(value, struct stash_val);
} stash SEC(".maps");

/* Entry/return path: which device a thread's allocations land on. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, __s32);
} tid_device SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* CUcontext */
	__type(value, __s32);
} ctx_device SEC(".maps");

/* Entry/return path: the driver context current on a thread (absent or 0: the runtime's
 * primary context of its device), and which contexts are primary ones (value: device). An
 * allocation remembers its context, so destroying the context frees it implicitly. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, __u64);
} tid_ctx SEC(".maps");

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

/* Call counts and latency per (process, traced function). */
#define FG_LAT_BUCKETS 32
struct call_key {
	__u32 tgid;
	__u32 func;
};
struct call_val {
	__u64 calls;
	__u64 fails;
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[FG_LAT_BUCKETS]; /* log2(ns) */
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct call_key);
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

static __always_inline struct fg_book *book_of(__u32 tgid, __s32 device, __u32 kind)
{
	struct fg_book_key k = { .tgid = tgid, .device = device, .kind = kind };
	struct fg_book *b = bpf_map_lookup_elem(&books, &k);
	if (b)
		return b;
	struct fg_book zero = {};
	bpf_map_update_elem(&books, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&books, &k);
}

/* live += delta, then lift the peak: a bounded compare-and-swap loop. */
static __always_inline void book_live(struct fg_book *b, __s64 delta)
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

static __always_inline void emit(__u32 type, __s32 device, __u64 ptr, __u64 size, __u32 kind, __s32 status,
				 __u16 api, __u16 source, __u32 func, __u64 aux)
{
	struct fg_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(FG_STAT_RB_DROPS);
		return;
	}
	__u64 id = bpf_get_current_pid_tgid();
	/*
	 * The comm costs a helper call per event and user space keeps it per process: it is
	 * filled on scheduler events and on a process's first GPU event (in monitor mode, where
	 * gpu_procs tells first from later; with a pid filter user space knows every process).
	 */
	bool with_comm = source == FG_SRC_KERNEL;
	if (!with_comm && !cfg.filter_pids) {
		__u32 tgid = id >> 32;
		if (!bpf_map_lookup_elem(&gpu_procs, &tgid)) {
			__u8 one = 1;
			bpf_map_update_elem(&gpu_procs, &tgid, &one, BPF_ANY);
			with_comm = true;
		}
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->tgid = id >> 32;
	e->tid = (__u32)id;
	e->type = type;
	e->device = device;
	e->ptr = ptr;
	e->size = size;
	e->kind = kind;
	e->status = status;
	e->api = api;
	e->source = source;
	e->func = func;
	e->aux = aux;
	if (with_comm)
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	else
		__builtin_memset(e->comm, 0, sizeof(e->comm));
	/* Batched wake-ups: waking the consumer per event costs ~1.3 us here (design.md). */
	__u64 flags = BPF_RB_NO_WAKEUP;
	if (!cfg.wakeup_bytes || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	stat_inc(FG_STAT_EVENTS);
}

/* Books and emits a completed allocation. */
static __always_inline void on_alloc(void *ctx, __u32 tgid, __s32 device, __u64 ptr, __u64 size, __u32 kind,
				     __u16 api, __u16 source, __u32 func)
{
	struct fg_book *b = book_of(tgid, device, kind);
	if (b) {
		__sync_fetch_and_add(&b->alloc_bytes, size);
		__sync_fetch_and_add(&b->alloc_calls, 1);
		book_live(b, (__s64)size);
	}
	__u64 aux = 0; /* user stack id + 1 */
	if (cfg.stacks) {
		long id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		if (id >= 0)
			aux = (__u64)id + 1;
	}
	emit(FG_EV_ALLOC, device, ptr, size, kind, 0, api, source, func, aux);
}

/* Books and emits a completed free (explicit, or implicit with its reason in aux). */
static __always_inline void on_free(__u32 tgid, __s32 device, __u64 ptr, __u64 size, __u32 kind, __u16 api,
				    __u16 source, __u32 func, bool implicit, __u64 reason)
{
	struct fg_book *b = book_of(tgid, device, kind);
	if (b) {
		if (implicit) {
			__sync_fetch_and_add(&b->implicit_free_bytes, size);
		} else {
			__sync_fetch_and_add(&b->free_bytes, size);
			__sync_fetch_and_add(&b->free_calls, 1);
		}
		book_live(b, -(__s64)size);
	}
	emit(implicit ? FG_EV_IMPLICIT_FREE : FG_EV_FREE, device, ptr, size, kind, 0, api, source, func, reason);
}

static __always_inline void on_failure(__u32 tgid, __u32 type, __s32 device, __u64 ptr, __u64 size, __u32 kind,
				       __s32 status, __u16 api, __u16 source, __u32 func)
{
	struct fg_book *b = book_of(tgid, device, kind < FG_MEM_KINDS ? kind : FG_MEM_DEVICE);
	if (b)
		__sync_fetch_and_add(&b->failed_calls, 1);
	emit(type, device, ptr, size, kind, status, api, source, func, 0);
}

/* ---- USDT: the fake backend's own probes ------------------------------------------------ */
/* fakegpu:alloc(ptr, size, info) */
SEC("usdt")
int BPF_USDT(usdt_alloc, __u64 ptr, __u64 size, __u64 info)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!traced(tgid))
		return 0;
	__s32 device = FG_USDT_INFO_DEVICE(info), status = FG_USDT_INFO_STATUS(info);
	__u32 kind = FG_USDT_INFO_KIND(info), api = FG_USDT_INFO_API(info);
	if (status == 0)
		on_alloc(ctx, tgid, device, ptr, size, kind, api, FG_SRC_USDT, ~0u);
	else
		on_failure(tgid, FG_EV_ALLOC_FAIL, device, ptr, size, kind, status, api, FG_SRC_USDT, ~0u);
	return 0;
}

/* fakegpu:free(ptr, size, info) */
SEC("usdt")
int BPF_USDT(usdt_free, __u64 ptr, __u64 size, __u64 info)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!traced(tgid))
		return 0;
	__s32 device = FG_USDT_INFO_DEVICE(info), status = FG_USDT_INFO_STATUS(info);
	__u32 kind = FG_USDT_INFO_KIND(info), api = FG_USDT_INFO_API(info);
	if (status == 0)
		on_free(tgid, device, ptr, size, kind, api, FG_SRC_USDT, ~0u, false, 0);
	else
		on_failure(tgid, FG_EV_FREE_FAIL, device, ptr, size, kind, status, api, FG_SRC_USDT, ~0u);
	return 0;
}

/* fakegpu:implicit_free(ptr, size, info): info's API byte is the reason (1 ctx destroy,
 * 2 process exit, 3 device reset) */
SEC("usdt")
int BPF_USDT(usdt_implicit_free, __u64 ptr, __u64 size, __u64 info)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!traced(tgid))
		return 0;
	on_free(tgid, FG_USDT_INFO_DEVICE(info), ptr, size, FG_USDT_INFO_KIND(info), FG_API_INTERNAL, FG_SRC_USDT, ~0u,
		true, FG_USDT_INFO_API(info));
	return 0;
}

/* fakegpu:ctx_switch(device, ctx) */
SEC("usdt")
int BPF_USDT(usdt_ctx_switch, int device, __u64 context)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!traced(tgid))
		return 0;
	emit(FG_EV_CTX_SWITCH, device, 0, 0, 0, 0, FG_API_INTERNAL, FG_SRC_USDT, ~0u, context);
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

static __always_inline int enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct stash_key k = { .tid = (__u32)id, .api = COOKIE_API(cookie) };
	struct stash_val v = {
		.ts = bpf_ktime_get_ns(),
		.a0 = PT_REGS_PARM1(ctx),
		.a1 = PT_REGS_PARM2(ctx),
		.a2 = PT_REGS_PARM3(ctx),
		.a3 = PT_REGS_PARM4(ctx),
	};
	bpf_map_update_elem(&stash, &k, &v, BPF_ANY);
	return 0;
}

static __always_inline __s32 current_device(__u32 tid)
{
	__s32 *d = bpf_map_lookup_elem(&tid_device, &tid);
	return d ? *d : 0; /* no cudaSetDevice / context yet: device 0, as the runtime does */
}

/* The thread's current driver context, 0 for the runtime's primary context. */
static __always_inline __u64 current_ctx(__u32 tid)
{
	__u64 *c = bpf_map_lookup_elem(&tid_ctx, &tid);
	if (!c || !*c)
		return 0;
	__u64 ctx = *c;
	return bpf_map_lookup_elem(&primary_ctx, &ctx) ? 0 : ctx;
}

static __always_inline void set_current_ctx(__u32 tid, __u64 ctx)
{
	bpf_map_update_elem(&tid_ctx, &tid, &ctx, BPF_ANY);
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

/* Destroying a context (or resetting a device's primary context) frees what it holds. */
struct ctx_free_arg {
	__u32 tgid;
	__u32 func;
	__u64 ctx;	/* the context destroyed; 0 with primary: the primary context of device */
	__s32 device;
	__u16 api;
	__u16 primary;
};

static long free_ctx_allocation(void *map, struct alloc_key *k, struct alloc_rec *r,
				struct ctx_free_arg *a)
{
	if (k->tgid != a->tgid)
		return 0;
	if (a->primary ? (r->ctx != 0 || r->ctx_device != a->device) : r->ctx != a->ctx)
		return 0;
	on_free(a->tgid, r->device, k->ptr, r->size, r->kind, a->api, FG_SRC_UPROBE, a->func, true,
		1 /* context destroyed */);
	bpf_map_delete_elem(map, k);
	return 0;
}

static __always_inline void account_call(__u32 tgid, __u32 func, __u64 ns, bool failed)
{
	struct call_key k = { .tgid = tgid, .func = func };
	struct call_val *v = bpf_map_lookup_elem(&calls, &k);
	if (!v) {
		struct call_val zero = {};
		bpf_map_update_elem(&calls, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&calls, &k);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->calls, 1);
	if (failed)
		__sync_fetch_and_add(&v->fails, 1);
	__sync_fetch_and_add(&v->total_ns, ns);
	for (int i = 0; i < 4; i++) {
		__u64 max = v->max_ns;
		if (ns <= max || __sync_val_compare_and_swap(&v->max_ns, max, ns) == max)
			break;
	}
	__u32 bucket = 0;
	for (__u64 x = ns; x > 1 && bucket < FG_LAT_BUCKETS - 1; x >>= 1)
		bucket++;
	__sync_fetch_and_add(&v->hist[bucket & (FG_LAT_BUCKETS - 1)], 1);
}

static __always_inline int leave(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	if (!traced(tgid))
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct stash_key k = { .tid = tid, .api = COOKIE_API(cookie) };
	struct stash_val *sp = bpf_map_lookup_elem(&stash, &k);
	if (!sp) {
		stat_inc(FG_STAT_MISSING_ENTRY); /* attached between entry and return, or evicted */
		return 0;
	}
	struct stash_val v = *sp;
	bpf_map_delete_elem(&stash, &k); /* always: a stale record would misattribute later */

	const int rc = (int)PT_REGS_RC(ctx);
	const __u32 func = COOKIE_FUNC(cookie), kind = COOKIE_KIND(cookie);
	const __u16 api = COOKIE_API(cookie);
	account_call(tgid, func, bpf_ktime_get_ns() - v.ts, rc != 0);

	switch (COOKIE_CLASS(cookie)) {
	case FG_C_ALLOC:
	case FG_C_ALLOC_PITCH:
	case FG_C_VMM_CREATE: {
		__u64 size = v.a1;
		if (COOKIE_CLASS(cookie) == FG_C_ALLOC_PITCH) {
			__u64 pitch = 0;
			if (rc == 0)
				bpf_probe_read_user(&pitch, sizeof(pitch), (void *)v.a1);
			size = pitch * v.a3;
		}
		__s32 device = kind == FG_MEM_HOST ? -1 : current_device(tid);
		if (COOKIE_CLASS(cookie) == FG_C_VMM_CREATE) {
			/* cuMemCreate(handle *, size, const CUmemAllocationProp *prop, flags): the
			 * device is prop->location (type at offset 8, id at 12), not the context's. */
			__s32 loc[2] = { 0, 0 };
			if (v.a2 && bpf_probe_read_user(loc, sizeof(loc), (void *)(v.a2 + 8)) == 0 &&
			    loc[0] == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */)
				device = loc[1];
		}
		if (rc != 0) {
			on_failure(tgid, FG_EV_ALLOC_FAIL, device, 0, size, kind, rc, api, FG_SRC_UPROBE, func);
			return 0;
		}
		__u64 ptr = 0;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)v.a0) != 0 || ptr == 0 || size == 0)
			return 0; /* cudaMalloc(&p, 0): success, nothing allocated */
		struct alloc_key ak = { .tgid = tgid, .ptr = ptr };
		struct alloc_rec ar = { .size = size, .device = device, .kind = kind,
					.ctx = current_ctx(tid), .ctx_device = current_device(tid) };
		if (api == FG_API_RUNTIME) { /* the runtime now holds this device's primary context */
			struct primary_refs *h = holders(tgid, ar.ctx_device);
			if (h)
				h->runtime = 1;
		}
		if (bpf_map_update_elem(&allocs, &ak, &ar, BPF_ANY) != 0)
			stat_inc(FG_STAT_ALLOC_MAP_FULL);
		on_alloc(ctx, tgid, device, ptr, size, kind, api, FG_SRC_UPROBE, func);
		return 0;
	}
	case FG_C_FREE:
	case FG_C_VMM_RELEASE: {
		if (v.a0 == 0)
			return 0; /* free(NULL) */
		struct alloc_key ak = { .tgid = tgid, .ptr = v.a0 };
		struct alloc_rec *ar = bpf_map_lookup_elem(&allocs, &ak);
		if (rc != 0) {
			on_failure(tgid, FG_EV_FREE_FAIL, ar ? ar->device : -1, v.a0, 0, kind, rc, api, FG_SRC_UPROBE, func);
			return 0;
		}
		if (!ar) {
			/* Allocated before the probes were attached, or the map was full. */
			stat_inc(FG_STAT_UNMATCHED_FREE);
			emit(FG_EV_FREE, -1, v.a0, 0, kind, 0, api, FG_SRC_UPROBE, func, 0);
			return 0;
		}
		struct alloc_rec rec = *ar;
		bpf_map_delete_elem(&allocs, &ak);
		on_free(tgid, rec.device, v.a0, rec.size, rec.kind, api, FG_SRC_UPROBE, func, false, 0);
		return 0;
	}
	case FG_C_SET_DEVICE:
		if (rc == 0) {
			__s32 dev = (__s32)v.a0;
			bpf_map_update_elem(&tid_device, &tid, &dev, BPF_ANY);
			set_current_ctx(tid, 0); /* the runtime works in the device's primary context */
			struct primary_refs *h = holders(tgid, dev);
			if (h)
				h->runtime = 1;
			emit(FG_EV_CTX_SWITCH, dev, 0, 0, 0, 0, api, FG_SRC_UPROBE, func, 0);
		}
		return 0;
	case FG_C_CTX_CREATE:
	case FG_C_CTX_CREATE4:
	case FG_C_PRIMARY: {
		if (rc != 0)
			return 0;
		__u64 c = 0;
		bpf_probe_read_user(&c, sizeof(c), (void *)v.a0);
		__s32 dev = (__s32)(COOKIE_CLASS(cookie) == FG_C_CTX_CREATE ? v.a2
				    : COOKIE_CLASS(cookie) == FG_C_CTX_CREATE4 ? v.a3
									       : v.a1);
		bpf_map_update_elem(&ctx_device, &c, &dev, BPF_ANY);
		if (COOKIE_CLASS(cookie) == FG_C_PRIMARY) {
			bpf_map_update_elem(&primary_ctx, &c, &dev, BPF_ANY);
			struct primary_refs *h = holders(tgid, dev);
			if (h)
				__sync_fetch_and_add(&h->driver, 1);
		}
		else { /* cuCtxCreate makes it current */
			bpf_map_update_elem(&tid_device, &tid, &dev, BPF_ANY);
			set_current_ctx(tid, c);
			emit(FG_EV_CTX_SWITCH, dev, 0, 0, 0, 0, api, FG_SRC_UPROBE, func, c);
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
			bpf_map_update_elem(&tid_device, &tid, &d, BPF_ANY);
			set_current_ctx(tid, c);
			emit(FG_EV_CTX_SWITCH, d, 0, 0, 0, 0, api, FG_SRC_UPROBE, func, c);
		}
		return 0;
	}
	case FG_C_CTX_DESTROY:
	case FG_C_PRIMARY_RESET:
	case FG_C_PRIMARY_RELEASE: {
		if (rc != 0)
			return 0;
		struct ctx_free_arg a = { .tgid = tgid, .func = func, .api = api };
		if (COOKIE_CLASS(cookie) == FG_C_PRIMARY_RELEASE) {
			/* Only the last reference frees: none left by the driver API, none by the runtime. */
			struct primary_refs *h = holders(tgid, (__s32)v.a0);
			if (!h || __sync_fetch_and_add(&h->driver, -1) != 1 || h->runtime)
				return 0;
			a.primary = 1;
			a.device = (__s32)v.a0;
		} else if (COOKIE_CLASS(cookie) == FG_C_CTX_DESTROY) {
			a.ctx = v.a0;
			bpf_map_delete_elem(&ctx_device, &a.ctx);
			__u64 *cur = bpf_map_lookup_elem(&tid_ctx, &tid);
			if (cur && *cur == a.ctx)
				set_current_ctx(tid, 0);
		} else {
			a.primary = 1;
			a.device = api == FG_API_RUNTIME ? current_device(tid) : (__s32)v.a0;
			struct primary_key k = { .tgid = tgid, .device = a.device };
			bpf_map_delete_elem(&primary_holders, &k); /* a reset drops every reference */
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
	return leave(ctx);
}

SEC("uprobe")
int api_enter_multi(struct pt_regs *ctx)
{
	return enter(ctx);
}

SEC("uprobe")
int api_exit_multi(struct pt_regs *ctx)
{
	return leave(ctx);
}

/* ---- processes ------------------------------------------------------------------------- */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	if (pid != tgid || !traced_process(tgid))
		return 0; /* a thread, not the process */
	emit(FG_EV_PROC_EXIT, -1, 0, 0, 0, 0, FG_API_INTERNAL, FG_SRC_KERNEL, ~0u, 0);
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
	emit(FG_EV_PROC_FORK, -1, 0, 0, 0, 0, FG_API_INTERNAL, FG_SRC_KERNEL, ~0u, ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (!traced_process(tgid))
		return 0;
	emit(FG_EV_PROC_EXEC, -1, 0, 0, 0, 0, FG_API_INTERNAL, FG_SRC_KERNEL, ~0u, 0);
	return 0;
}
