// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu-trace's BPF programs: the books of every process's GPU memory, kept in the kernel.
 *
 * Two ways in, one set of books:
 *  - USDT probes of the fake backend (fakegpu:alloc/free/implicit_free/ctx_switch) fire
 *    once where a call completes and carry device, pointer, size, kind and status
 *    (fakegpu:launch and kernel_done count kernel launches and their host time).
 *  - Entry/return uprobes on the exported API functions of any CUDA library (ours or
 *    NVIDIA's). The entry stashes the arguments in the thread's task-local state, the return
 *    reads and always consumes that record (memleak's way), reads out-parameters from user
 *    memory and books the result. Each attachment carries a cookie saying which function it
 *    is.
 *
 * The books (books.bpf.h) are the truth; the event records (ring.bpf.h) carry the detail for
 * the collector's per-allocation ledger, through a BPF ring buffer, and every record that
 * cannot be delivered is counted (map `stats`).
 */
#include "fakegpu.bpf.h"
#include "books.bpf.h"
#include "ring.bpf.h"

#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- maps ---------------------------------------------------------------------------- */

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
	__u64 nested; /* 1: a driver call made by a pending runtime call (counted as that call) */
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

/* ---- booking and emitting ----------------------------------------------------------------- */

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
	/* Inserted empty, then filled in place. */
	struct fg_stack_files *s = lookup_or_init(&stack_files, &id, &no_stack_files);
	if (!s)
		return; /* the table is full: only the maps name it */
	if (*(volatile __u32 *)&s->frames)
		return;
	long n = bpf_get_stack(ctx, s->frame, sizeof(s->frame),
			       BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	/* Published with a compare-and-swap, a full barrier on every architecture: whoever
	 * reads a count reads the frames it covers. A racing filler's count is the same. */
	if (n > 0)
		__sync_val_compare_and_swap(&s->frames, 0, (__u32)n / sizeof(s->frame[0]));
}

/* Books and emits a completed allocation (id: bpf_get_current_pid_tgid(); ts: see struct
 * record). */
static __always_inline void on_alloc(void *ctx, __u64 id, __s32 device, __u64 ptr, __u64 size,
				     __u32 kind, __u16 api, __u16 source, __u32 func, __u64 ts)
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
	emit(&(struct record){.type = FG_EV_ALLOC,
			      .device = device,
			      .ptr = ptr,
			      .size = size,
			      .kind = kind,
			      .api = api,
			      .source = source,
			      .func = func,
			      .aux = aux,
			      .ts = ts,
			      .first = first_of(booked, &b),
			      .pid_tgid = id});
}

/* Books and emits a completed free (explicit, or implicit with its reason in aux). */
static __always_inline void on_free(__u64 id, __s32 device, __u64 ptr, __u64 size, __u32 kind,
				    __u16 api, __u16 source, __u32 func, bool implicit,
				    __u64 reason, __u64 ts)
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
	emit(&(struct record){.type = implicit ? FG_EV_IMPLICIT_FREE : FG_EV_FREE,
			      .device = device,
			      .ptr = ptr,
			      .size = size,
			      .kind = kind,
			      .api = api,
			      .source = source,
			      .func = func,
			      .aux = reason,
			      .ts = ts,
			      .first = first_of(booked, &b),
			      .pid_tgid = id});
}

static __always_inline void on_failure(__u64 id, __u32 type, __s32 device, __u64 ptr, __u64 size,
				       __u32 kind, __s32 status, __u16 api, __u16 source,
				       __u32 func, __u64 ts)
{
	struct book b;
	bool booked = book_of(id >> 32, device, kind < FG_MEM_KINDS ? kind : FG_MEM_DEVICE, &b);
	if (booked)
		b.mine->failed_calls += 1;
	emit(&(struct record){.type = type,
			      .device = device,
			      .ptr = ptr,
			      .size = size,
			      .kind = kind,
			      .status = status,
			      .api = api,
			      .source = source,
			      .func = func,
			      .ts = ts,
			      .first = first_of(booked, &b),
			      .pid_tgid = id});
}

/* The thread's current device changed (ctx: its driver context, 0 for a primary one). */
static __always_inline void emit_ctx_switch(__u64 id, __s32 device, __u64 ctx, __u16 api,
					    __u16 source, __u32 func, __u64 ts)
{
	emit(&(struct record){.type = FG_EV_CTX_SWITCH,
			      .device = device,
			      .api = api,
			      .source = source,
			      .func = func,
			      .aux = ctx,
			      .ts = ts,
			      .pid_tgid = id});
}

/* ---- USDT: the fake backend's own probes ------------------------------------------------ */
/*
 * The backend's probe sites keep their arguments in the first argument registers
 * (FG_USDT_ARGUMENTS, fakegpu_events.h; fakebackend/src/core/usdt.h), and the collector attaches
 * these programs only after checking every site's note says so: the arguments are loaded
 * from pt_regs directly, with no spec lookup and no guarded read per argument (libbpf's
 * bpf_usdt_arg() path cost about a third of the program).
 */
#define USDT_ARG0(ctx) PT_REGS_PARM1(ctx)
#define USDT_ARG1(ctx) PT_REGS_PARM2(ctx)
#define USDT_ARG2(ctx) PT_REGS_PARM3(ctx)
#define USDT_ARG3(ctx) PT_REGS_PARM4(ctx)

/* fakegpu:alloc(ptr, size, info, caller) and fakegpu:free(ptr, size, info, caller): the two
 * programs differ only in what a completed call does to the books (inlined with `alloc`
 * constant, so each program keeps only its own path). */
static __always_inline int usdt_alloc_or_free(struct pt_regs *ctx, bool alloc)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	const __u64 ptr = USDT_ARG0(ctx), size = USDT_ARG1(ctx), info = USDT_ARG2(ctx);
	__s32 device = FG_USDT_INFO_DEVICE(info), status = FG_USDT_INFO_STATUS(info);
	__u32 kind = FG_USDT_INFO_KIND(info), api = FG_USDT_INFO_API(info);
	if (status != 0)
		on_failure(id, alloc ? FG_EV_ALLOC_FAIL : FG_EV_FREE_FAIL, device, ptr, size, kind,
			   status, api, FG_SRC_USDT, ~0u, 0);
	else if (alloc)
		on_alloc(ctx, id, device, ptr, size, kind, api, FG_SRC_USDT, ~0u, 0);
	else
		on_free(id, device, ptr, size, kind, api, FG_SRC_USDT, ~0u, false, 0, 0);
	const __u64 done = status == 0 ? size : 0;
	account_caller(id >> 32, USDT_ARG3(ctx), status != 0, alloc ? done : 0, alloc ? 0 : done,
		       false, false, 0);
	return 0;
}

SEC("usdt")
int usdt_alloc(struct pt_regs *ctx)
{
	return usdt_alloc_or_free(ctx, true);
}

SEC("usdt")
int usdt_free(struct pt_regs *ctx)
{
	return usdt_alloc_or_free(ctx, false);
}

/* fakegpu:implicit_free(ptr, size, info, 0): info's API byte is the reason (1 ctx destroy,
 * 2 process exit, 3 device reset); no call of anyone's, so no caller */
SEC("usdt")
int usdt_implicit_free(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	const __u64 ptr = USDT_ARG0(ctx), size = USDT_ARG1(ctx), info = USDT_ARG2(ctx);
	on_free(id, FG_USDT_INFO_DEVICE(info), ptr, size, FG_USDT_INFO_KIND(info), FG_API_INTERNAL,
		FG_SRC_USDT, ~0u, true, FG_USDT_INFO_API(info), 0);
	return 0;
}

/* fakegpu:ctx_switch(device, ctx) */
SEC("usdt")
int usdt_ctx_switch(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	emit_ctx_switch(id, (__s32)USDT_ARG0(ctx), USDT_ARG1(ctx), FG_API_INTERNAL, FG_SRC_USDT,
			~0u, 0);
	return 0;
}

/* The books of kernel `function` of process `tgid` (struct fg_kernel_val), made with the name
 * read from the process (at `name`) the first time; NULL when the table is full, counted in
 * alloc_map_full. Two threads' first probes of one kernel get the one entry. */
static __always_inline struct fg_kernel_val *kernel_books(__u32 tgid, __u64 function, __u64 name)
{
	struct fg_kernel_key key = {.tgid = tgid, .function = function};
	struct fg_kernel_val *v = bpf_map_lookup_elem(&kernels, &key);
	if (v)
		return v;
	struct fg_kernel_val fresh = {};
	bpf_probe_read_user_str(fresh.name, sizeof(fresh.name), (const void *)name);
	v = lookup_or_init(&kernels, &key, &fresh);
	if (!v)
		stat_inc(FG_STAT_ALLOC_MAP_FULL);
	return v;
}

/* fakegpu:launch(function, name, device): counted per process and kernel; the name is read
 * from the process once, at the kernel's first launch in it. A full table counts the launch
 * in alloc_map_full (the per-process total, from the entry probes, still has it). */
SEC("usdt")
int usdt_launch(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	struct fg_kernel_val *v = kernel_books(id >> 32, USDT_ARG0(ctx), USDT_ARG1(ctx));
	if (v)
		__sync_fetch_and_add(&v->launches, 1);
	return 0;
}

/* fakegpu:kernel_done(function, name, host_ns, ran): the executor finished with a launch, on
 * whichever thread of the process ran it: executed in host_ns (ran 1) or recorded (ran 0).
 * Atomic adds: launches of one kernel finish on several threads at once (the program's own,
 * streams' workers). */
SEC("usdt")
int usdt_kernel_done(struct pt_regs *ctx)
{
	const __u64 id = bpf_get_current_pid_tgid();
	if (!traced(id >> 32))
		return 0;
	struct fg_kernel_val *v = kernel_books(id >> 32, USDT_ARG0(ctx), USDT_ARG1(ctx));
	if (!v)
		return 0;
	if (USDT_ARG3(ctx)) {
		__sync_fetch_and_add(&v->ran, 1);
		__sync_fetch_and_add(&v->host_ns, USDT_ARG2(ctx));
	} else {
		__sync_fetch_and_add(&v->recorded, 1);
	}
	return 0;
}

/* ---- entry/return probes on exported API functions ---------------------------------------- */
/* The attach cookie (layout and classes: fakegpu_events.h) tells each program which function it is. */

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
 * *addr, a u64 in the calling process's memory: 0 when read, else the helper's error. The
 * return programs read out-parameters the call has just written (the pointer cudaMalloc
 * wrote, a pitch, a context) or arguments it has just read (cuMemCreate's properties), so
 * the page is present and bpf_probe_read_user, which cannot sleep to fault one in, reads it.
 */
static __always_inline long read_user_u64(__u64 addr, __u64 *out)
{
	return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
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
	const __u32 api = FG_COOKIE_API(bpf_get_attach_cookie(ctx));
	struct stash_val *v = stash_of(t, api);
	v->a0 = PT_REGS_PARM1(ctx);
	v->a1 = PT_REGS_PARM2(ctx);
	v->a2 = PT_REGS_PARM3(ctx);
	v->a3 = PT_REGS_PARM4(ctx);
	/* A driver call made inside a traced runtime call (NVIDIA's libcudart over a driver) is
	 * part of that call, whose caller it counts for. */
	v->nested = api == FG_API_DRIVER && t->stash[0].ts != 0;
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
	struct primary_key k = {.tgid = tgid, .device = device};
	struct primary_refs zero = {};
	return lookup_or_init(&primary_holders, &k, &zero);
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
	__u64 id; /* bpf_get_current_pid_tgid() */
	__u32 tgid;
	__u32 func;
	__u64 ctx; /* the context destroyed; 0 with primary: the primary context of device */
	__s32 device;
	__u16 api;
	__u16 primary;
	__u64 ts; /* the return's clock read */
};

static long free_ctx_allocation(void *map, __u32 *idx, struct fg_alloc_rec *r,
				struct ctx_free_arg *a)
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

static __always_inline int leave(struct pt_regs *ctx)
{
	/* The task's ids and its storage from one helper call (bpf_get_current_pid_tgid() is
	 * another). */
	struct task_struct *task = bpf_get_current_task_btf();
	const __u32 tgid = task->tgid;
	const __u64 id = (__u64)tgid << 32 | (__u32)task->pid;
	if (!traced(tgid))
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	const __u32 class = FG_COOKIE_CLASS(cookie);
	struct thread_state *t = thread_state(task, false);
	struct stash_val *sp = t ? stash_of(t, FG_COOKIE_API(cookie)) : 0;
	if (!sp || !sp->ts) {
		stat_inc(FG_STAT_MISSING_ENTRY); /* attached between entry and return */
		return 0;
	}
	struct stash_val v = *sp;
	sp->ts = 0; /* always consumed: a stale record would misattribute later */

	const int rc = (int)PT_REGS_RC(ctx);
	const __u32 func = FG_COOKIE_FUNC(cookie), kind = FG_COOKIE_KIND(cookie);
	const __u16 api = FG_COOKIE_API(cookie);
	/* Untimed calls' records carry no clock read either: the collector stamps them. */
	const bool timed = v.ts != FG_UNTIMED;
	const __u64 now = timed ? bpf_ktime_get_ns() : 0;
	account_call(tgid, func, now - v.ts, rc != 0, timed);

	/* What the call allocated or freed, for its caller's counts; a call that allocates or
	 * frees nothing (size 0, a null pointer) is no call of its caller's, as with USDT, whose
	 * probes do not fire for it. */
	__u64 got = 0, released = 0;
	bool noop = false;
	switch (class) {
	case FG_C_ALLOC:
	case FG_C_ALLOC_PITCH:
	case FG_C_VMM_CREATE: {
		__u64 size = v.a1;
		if (class == FG_C_ALLOC_PITCH) {
			__u64 pitch = 0;
			if (rc == 0)
				read_user_u64(v.a1, &pitch);
			size = pitch * v.a3;
		}
		__s32 device = kind == FG_MEM_HOST ? -1 : t->device;
		if (class == FG_C_VMM_CREATE) {
			/* cuMemCreate(handle *, size, const CUmemAllocationProp *prop, flags): the
			 * device is prop->location (type at offset 8, id at 12), not the context's. */
			__u64 loc = 0; /* type (low half), id (high half) */
			if (v.a2 && read_user_u64(v.a2 + 8, &loc) == 0 &&
			    (__u32)loc == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */)
				device = (__s32)(loc >> 32);
		}
		if (rc != 0) {
			on_failure(id, FG_EV_ALLOC_FAIL, device, 0, size, kind, rc, api,
				   FG_SRC_UPROBE, func, now);
			break;
		}
		__u64 ptr = 0;
		if (read_user_u64(v.a0, &ptr) != 0 || ptr == 0 || size == 0) {
			noop = true; /* cudaMalloc(&p, 0): success, nothing allocated */
			break;
		}
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
		got = size;
		break;
	}
	case FG_C_FREE:
	case FG_C_VMM_RELEASE: {
		if (v.a0 == 0) {
			noop = true; /* free(NULL) */
			break;
		}
		struct fg_alloc_rec *ar = alloc_find(tgid, v.a0);
		if (rc != 0) {
			on_failure(id, FG_EV_FREE_FAIL, ar ? ar->device : -1, v.a0, 0, kind, rc,
				   api, FG_SRC_UPROBE, func, now);
			break;
		}
		if (!ar) {
			/* Allocated before the probes were attached, or the map was full. */
			stat_inc(FG_STAT_UNMATCHED_FREE);
			emit(&(struct record){.type = FG_EV_FREE,
					      .device = -1,
					      .ptr = v.a0,
					      .kind = kind,
					      .api = api,
					      .source = FG_SRC_UPROBE,
					      .func = func,
					      .ts = now});
			break;
		}
		struct fg_alloc_rec rec = *ar;
		alloc_forget(ar);
		on_free(id, rec.device, v.a0, rec.size, rec.kind, api, FG_SRC_UPROBE, func, false,
			0, now);
		released = rec.size;
		break;
	}
	case FG_C_SET_DEVICE:
		if (rc == 0) {
			__s32 dev = (__s32)v.a0;
			t->device = dev;
			t->ctx = 0; /* the runtime works in the device's primary context */
			runtime_holds(t, tgid, dev);
			emit_ctx_switch(id, dev, 0, api, FG_SRC_UPROBE, func, now);
		}
		break;
	case FG_C_CTX_CREATE:
	case FG_C_CTX_CREATE4:
	case FG_C_PRIMARY: {
		if (rc != 0)
			break;
		__u64 c = 0;
		read_user_u64(v.a0, &c);
		__s32 dev = (__s32)(class == FG_C_CTX_CREATE	? v.a2
				    : class == FG_C_CTX_CREATE4 ? v.a3
								: v.a1);
		bpf_map_update_elem(&ctx_device, &c, &dev, BPF_ANY);
		if (class == FG_C_PRIMARY) {
			bpf_map_update_elem(&primary_ctx, &c, &dev, BPF_ANY);
			struct primary_refs *h = holders(tgid, dev);
			if (h)
				__sync_fetch_and_add(&h->driver, 1);
		} else { /* cuCtxCreate makes it current */
			t->device = dev;
			t->ctx = c;
			emit_ctx_switch(id, dev, c, api, FG_SRC_UPROBE, func, now);
		}
		break;
	}
	case FG_C_CTX_SET: {
		if (rc != 0)
			break;
		__u64 c = v.a0;
		__s32 *dev = bpf_map_lookup_elem(&ctx_device, &c);
		if (dev) {
			__s32 d = *dev;
			t->device = d;
			t->ctx = c;
			emit_ctx_switch(id, d, c, api, FG_SRC_UPROBE, func, now);
		}
		break;
	}
	case FG_C_CTX_DESTROY:
	case FG_C_PRIMARY_RESET:
	case FG_C_PRIMARY_RELEASE: {
		if (rc != 0)
			break;
		struct ctx_free_arg a = {
			.id = id, .tgid = tgid, .func = func, .api = api, .ts = now};
		if (class == FG_C_PRIMARY_RELEASE) {
			/* Only the last reference frees: none left by the driver API, none by the runtime. */
			struct primary_refs *h = holders(tgid, (__s32)v.a0);
			if (!h || __sync_fetch_and_add(&h->driver, -1) != 1 || h->runtime)
				break;
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
			struct primary_key k = {.tgid = tgid, .device = a.device};
			bpf_map_delete_elem(&primary_holders,
					    &k); /* a reset drops every reference */
			__u64 *resets_now = resets_so_far();
			if (resets_now)
				__sync_fetch_and_add(resets_now, 1);
		}
		bpf_for_each_map_elem(&allocs, free_ctx_allocation, &a, 0);
		break;
	}
	case FG_C_COPY: {
		if (rc != 0)
			break;
		/* The runtime passes the kind as the fourth argument; the driver's name says it. */
		__u32 dir = api == FG_API_RUNTIME ? (__u32)v.a3 : FG_COOKIE_DIR(cookie);
		struct copy_key ck = {.tgid = tgid, .dir = dir > 4 ? 4 : dir};
		struct copy_val zero = {};
		struct copy_val *cv = lookup_or_init(&copies, &ck, &zero);
		if (!cv)
			break;
		__sync_fetch_and_add(&cv->bytes, v.a2);
		__sync_fetch_and_add(&cv->count, 1);
		break;
	}
	case FG_C_LAUNCH: {
		if (rc != 0)
			break;
		__u64 *n = bpf_map_lookup_elem(&launches, &tgid);
		if (n) {
			__sync_fetch_and_add(n, 1);
		} else {
			__u64 one = 1;
			bpf_map_update_elem(&launches, &tgid, &one, BPF_NOEXIST);
		}
		break;
	}
	default:
		break;
	}
	/* The caller: where the call returns to, the return probe's instruction pointer. */
	if (!v.nested && !noop)
		account_caller(tgid, PT_REGS_IP(ctx), rc != 0, got, released, true, timed,
			       now - v.ts);
	return 0;
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

/* A scheduler event: exit, fork (aux: the child) or exec. */
static __always_inline void emit_process_event(__u32 type, __u64 aux)
{
	emit(&(struct record){.type = type,
			      .device = -1,
			      .api = FG_API_INTERNAL,
			      .source = FG_SRC_KERNEL,
			      .func = ~0u,
			      .aux = aux,
			      .ts = bpf_ktime_get_ns()});
}

/* ---- processes ------------------------------------------------------------------------- */
/*
 * A process has exited when its last thread does, which need not be its leader: a leader may
 * leave first (pthread_exit), and exec from another thread kills the leader (de_thread) while
 * the process goes on in the new image under the same PID. So the exit is the thread that
 * finds no live thread left (signal->live, decremented before this tracepoint). Two threads
 * exiting at once may both find 0: the one that takes the process out of the map reports it.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0; /* a thread, not the process */
	void *map = cfg.filter_pids ? (void *)&pids : (void *)&gpu_procs;
	if (bpf_map_delete_elem(map, &tgid) != 0)
		return 0; /* not traced, or reported by another thread */
	emit_process_event(FG_EV_PROC_EXIT, 0);
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
		if (bpf_probe_read_kernel_str(path.path, sizeof(path.path),
					      BPF_CORE_READ(bprm, interp)) > 0)
			bpf_map_update_elem(&exec_paths, &tgid, &path, BPF_ANY);
	}
	if (!traced_process(tgid))
		return 0;
	/* A new program: its calls start from the runtime's defaults (device 0, no context). */
	bpf_task_storage_delete(&threads, p);
	emit_process_event(FG_EV_PROC_EXEC, 0);
	return 0;
}

/* ---- CUDA libraries loaded before they are traced -------------------------------------- */

/* What the collector attached to (fg_file_key: the kernel's dev_t and inode). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct fg_file_key);
	__type(value, __u8);
} traced_files SEC(".maps");

/* Processes that loaded a candidate library not in traced_files (struct fg_untraced_map). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct fg_untraced_map);
} untraced_maps SEC(".maps");

/* The entry being filled (too large for the stack with the rest). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_untraced_map);
} untraced_scratch SEC(".maps");

/* Whether a file's name is one the collector traces: libfake_gpu.so, libcudart.so or
 * libcuda.so, then only dots and digits (discovery.cpp's candidate_name). */
static __always_inline bool candidate_file(struct file *file)
{
	char name[32] = {};
	const unsigned char *n = BPF_CORE_READ(file, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(name, sizeof(name), n) <= 0)
		return false;
	const char *stems[3] = {"libfake_gpu.so", "libcudart.so", "libcuda.so"};
	const int lens[3] = {14, 12, 10};
	for (int s = 0; s < 3; s++) {
		bool match = true;
		for (int i = 0; i < 14 && i < lens[s]; i++) {
			if (name[i] != stems[s][i]) {
				match = false;
				break;
			}
		}
		if (!match)
			continue;
		for (int i = lens[s]; i < 31; i++) {
			char c = name[i];
			if (c == 0)
				return true;
			if (c != '.' && (c < '0' || c > '9'))
				return false;
		}
		return false; /* longer than any such name */
	}
	return false;
}

/* What bpf_find_vma found at an object's dynamic section. */
struct loaded_file {
	struct fg_file_key key;
	bool candidate;
};

static long loaded_file_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct loaded_file *out = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	if (!file || !candidate_file(file))
		return 0;
	out->candidate = true;
	out->key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	out->key.ino = BPF_CORE_READ(file, f_inode, i_ino);
	return 0;
}

/* The dynamic loader's debugger interface (glibc's <link.h>): struct r_debug and the public
 * head of struct link_map, as 64-bit user memory lays them out. */
#define FG_R_DEBUG_MAP	 8
#define FG_R_DEBUG_STATE 24
#define FG_RT_CONSISTENT 0
#define FG_LM_NAME	 8
#define FG_LM_LD	 16
#define FG_LM_NEXT	 24
#define FG_LOADED_MAX	 64 /* objects looked at per load */

/*
 * The dynamic loader calls _dl_debug_state (r_brk) whenever its list of loaded objects
 * changes, and again once the list is consistent: at start-up and at each dlopen. The cookie
 * is _r_debug's address relative to the function's. A traced (in monitor mode: any) process
 * that has loaded a candidate CUDA library the collector has not attached to is noted in
 * untraced_maps with the file and the path the loader opened: its calls through that copy
 * are not seen until the collector attaches it, and the collector counts the process missed
 * if it is gone by then. Every probe hit is one library load batch, not one API call.
 */
SEC("uprobe")
int loader_state(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!traced(tgid) || bpf_map_lookup_elem(&untraced_maps, &tgid))
		return 0;
	__u64 r_debug = PT_REGS_IP(ctx) + bpf_get_attach_cookie(ctx);
	__s32 state = -1;
	__u64 lm = 0;
	if (bpf_probe_read_user(&state, sizeof(state), (void *)(r_debug + FG_R_DEBUG_STATE)) ||
	    state != FG_RT_CONSISTENT ||
	    bpf_probe_read_user(&lm, sizeof(lm), (void *)(r_debug + FG_R_DEBUG_MAP)))
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	for (int i = 0; i < FG_LOADED_MAX && lm; i++) {
		__u64 ld = 0;
		if (bpf_probe_read_user(&ld, sizeof(ld), (void *)(lm + FG_LM_LD)))
			break;
		struct loaded_file f = {};
		if (ld && bpf_find_vma(task, ld, loaded_file_of, &f, 0) == 0 && f.candidate &&
		    !bpf_map_lookup_elem(&traced_files, &f.key)) {
			__u32 zero = 0;
			struct fg_untraced_map *m = bpf_map_lookup_elem(&untraced_scratch, &zero);
			__u64 name = 0;
			if (!m)
				return 0;
			m->dev = f.key.dev;
			m->ino = f.key.ino;
			bpf_get_current_comm(m->comm, sizeof(m->comm));
			m->path[0] = 0;
			if (bpf_probe_read_user(&name, sizeof(name), (void *)(lm + FG_LM_NAME)) ==
				    0 &&
			    name)
				bpf_probe_read_user_str(m->path, sizeof(m->path), (void *)name);
			long err = bpf_map_update_elem(&untraced_maps, &tgid, m, BPF_NOEXIST);
			if (err && err != -17 /* EEXIST: another thread of it noted it */)
				stat_inc(FG_STAT_UNTRACED_LOST);
			return 0;
		}
		if (bpf_probe_read_user(&lm, sizeof(lm), (void *)(lm + FG_LM_NEXT)))
			break;
	}
	return 0;
}
