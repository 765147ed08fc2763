/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one contract between the BPF programs (fakegpu.bpf.c) and the collector (userspace/).
 * Plain C, fixed-width fields, naturally aligned, no implicit padding: the same bytes on both
 * sides. Any layout change bumps FAKEGPU_EVENTS_ABI; user space checks sizes and offsets at
 * compile time (userspace/core/event.cpp).
 */
#ifndef FAKEGPU_EVENTS_H
#define FAKEGPU_EVENTS_H

#define FAKEGPU_EVENTS_ABI 8

#define FG_COMM_LEN    16
#define FG_MAX_DEVICES 256 /* ledger device slots; device -1 = host / unknown */

/* What happened. */
enum fg_event_type {
	FG_EV_ALLOC = 1,	 /* an allocation completed (status 0) */
	FG_EV_FREE = 2,		 /* a free completed (status 0) */
	FG_EV_IMPLICIT_FREE = 3, /* freed by context destroy / reset / process exit */
	FG_EV_ALLOC_FAIL = 4,	 /* an allocation call failed (status = API code) */
	FG_EV_FREE_FAIL = 5,	 /* a free call failed: unknown or double free */
	FG_EV_CTX_SWITCH = 6,	 /* the thread's current device/context changed */
	FG_EV_PROC_EXIT = 7,	 /* a traced process (thread-group leader) exited */
	FG_EV_PROC_FORK = 8,	 /* a traced process forked (aux = child tgid) */
	FG_EV_PROC_EXEC = 9,	 /* a traced process exec'd */
};

/* Memory kinds (enum fg_mem_kind, FG_MEM_KINDS): the backend's own numbering, so USDT
 * arguments pass straight through. A path relative to this file: the BPF build and every
 * includer find it without an include path of their own. */
#include "../fakebackend/include/fakegpu/mem_kind.h"

/* How the event was observed. */
enum fg_source {
	FG_SRC_USDT = 0,   /* fakegpu:* probes inside the backend: one hit per call */
	FG_SRC_UPROBE = 1, /* entry/return probes on exported API functions (any CUDA library) */
	FG_SRC_KERNEL = 2, /* scheduler tracepoints */
};

/* Which API the call came through. */
enum fg_api {
	FG_API_RUNTIME = 0,
	FG_API_DRIVER = 1,
	FG_API_INTERNAL = 2,
};

/*
 * Entry/return probes on exported API functions: each attachment's cookie describes its
 * function (the collector builds it, userspace/collector/functions.cpp; the programs read it):
 *   bits  0..15 function index (the collector's table)     bits 16..23 class (enum fg_class)
 *   bits 24..31 memory kind (enum fg_mem_kind)               bits 32..39 API layer (enum fg_api)
 *   bits 40..47 copy direction (copy class: cudaMemcpyKind)
 */
enum fg_class {
	FG_C_OTHER = 0,	      /* counted and timed only */
	FG_C_ALLOC = 1,	      /* (T **out, size_t size, ...) */
	FG_C_ALLOC_PITCH = 2, /* (T **out, size_t *pitch, size_t width, size_t height, ...) */
	FG_C_FREE = 3,	      /* (T *ptr, ...) */
	FG_C_SET_DEVICE = 4,  /* cudaSetDevice(int device) */
	FG_C_CTX_CREATE = 5,  /* cuCtxCreate_v2(CUcontext *out, unsigned flags, CUdevice dev) */
	FG_C_CTX_CREATE4 =
		6, /* cuCtxCreate_v4(CUcontext *out, params *, unsigned flags, CUdevice dev) */
	FG_C_PRIMARY = 7,	 /* cuDevicePrimaryCtxRetain(CUcontext *out, CUdevice dev) */
	FG_C_CTX_SET = 8,	 /* cuCtxSetCurrent / cuCtxPushCurrent_v2 (CUcontext ctx) */
	FG_C_COPY = 9,		 /* (dst, src, size_t count, [cudaMemcpyKind kind]) */
	FG_C_LAUNCH = 10,	 /* kernel launch */
	FG_C_VMM_CREATE = 11,	 /* cuMemCreate(handle *out, size_t size, ...) */
	FG_C_VMM_RELEASE = 12,	 /* cuMemRelease(handle) */
	FG_C_CTX_DESTROY = 13,	 /* cuCtxDestroy_v2(CUcontext ctx) */
	FG_C_PRIMARY_RESET = 14, /* cuDevicePrimaryCtxReset_v2(CUdevice dev) / cudaDeviceReset() */
	FG_C_PRIMARY_RELEASE = 15, /* cuDevicePrimaryCtxRelease_v2(CUdevice dev) */
};

#define FG_COOKIE(func, class, kind, api, dir)                                                     \
	(((__u64)(func)&0xffff) | ((__u64)((class) & 0xff) << 16) | ((__u64)((kind)&0xff) << 24) | \
	 ((__u64)((api)&0xff) << 32) | ((__u64)((dir)&0xff) << 40))
#define FG_COOKIE_FUNC(c)  ((__u32)((c)&0xffff))
#define FG_COOKIE_CLASS(c) ((__u32)(((c) >> 16) & 0xff))
#define FG_COOKIE_KIND(c)  ((__u32)(((c) >> 24) & 0xff))
#define FG_COOKIE_API(c)   ((__u32)(((c) >> 32) & 0xff))
#define FG_COOKIE_DIR(c)   ((__u32)(((c) >> 40) & 0xff))

/* One event as the collector sees it, 80 bytes: the programs write it to the BPF ring buffer
 * in the shorter wire form (struct fg_record, below), which the collector rebuilds this from. */
struct fg_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC when observed (bpf_ktime_get_ns) on
				    process events and timed entry/return records; 0 on
				    USDT and untimed entry/return records, which the
				    collector stamps when it reads them (a clock read is
				    ~30 ns on these VMs, a third of the USDT program) */
	__u32 tgid;		/* process id (thread-group id) */
	__u32 tid;		/* thread id */
	__u32 type;		/* enum fg_event_type */
	__s32 device;		/* device ordinal as the process sees it, -1 host/unknown */
	__u64 ptr;		/* device pointer (VMM: allocation handle) */
	__u64 size;		/* bytes */
	__u32 kind;		/* enum fg_mem_kind */
	__s32 status;		/* API return code, 0 = success */
	__u16 api;		/* enum fg_api */
	__u16 source;		/* enum fg_source */
	__u32 func;		/* index into the collector's traced-function table, ~0 if none */
	__u64 aux;		/* FORK: child tgid; CTX_SWITCH: context; IMPLICIT_FREE: reason
				    (1 context destroy, 2 process exit, 3 device reset);
				    ALLOC: user stack id + 1 (0 = none); else 0 */
	char comm[FG_COMM_LEN]; /* task comm on scheduler events and a process's first
				    GPU event in monitor mode; else empty (it costs a helper
				    call per event: user space keeps it per process) */
	__u32 ppid;		/* the parent's tgid, with the comm; else 0 */
	__u32 pad;
};

/*
 * In-kernel books, the truth: per (process, device, kind). The kernel keeps them in two
 * arrays indexed alike (an open-addressing table: no hash-map search per call): the shared
 * part, which needs one atomic add per call for an exact peak, and per-CPU counters, which
 * need none. fg_book_key and fg_book are the collector's view, both parts together.
 */
struct fg_book_key {
	__u32 tgid;
	__s32 device;
	__u32 kind;
	__u32 pad; /* zero */
};

struct fg_book {
	__u64 alloc_bytes;	   /* total bytes allocated */
	__u64 free_bytes;	   /* total bytes freed explicitly */
	__u64 implicit_free_bytes; /* bytes freed by context destroy / exit */
	__u64 live_bytes;	   /* alloc - free - implicit, as of now */
	__u64 peak_bytes;	   /* highest live_bytes seen */
	__u64 alloc_calls;
	__u64 free_calls;
	__u64 failed_calls; /* allocation or free calls that returned an error */
};

/*
 * Open-addressing tables (books, call counts): a u64 tag per slot, FG_TAG_FREE never used,
 * FG_TAG_DELETED forgotten by the collector (reusable), else the key with bit 0 set and the
 * process id in the high half. A key lies within FG_TAG_PROBES slots of its home slot.
 */
#define FG_TAG_PROBES  16
#define FG_TAG_FREE    0ULL
#define FG_TAG_DELETED 2ULL
#define FG_TAG_USED(t) (((t)&1ULL) != 0)
#define FG_TAG_TGID(t) ((__u32)((t) >> 32))

#define FG_BOOK_SLOTS 8192 /* a power of two */
#define FG_BOOK_TAG(tgid, device, kind)                                                            \
	(((__u64)(tgid) << 32) | ((__u64)(__u16)(device) << 16) | ((__u64)((kind)&0xff) << 8) |    \
	 1ULL)
#define FG_BOOK_TAG_DEVICE(t) ((__s32)(__s16)(((t) >> 16) & 0xffff))
#define FG_BOOK_TAG_KIND(t)   ((__u32)(((t) >> 8) & 0xff))

/* Call counts and latency per (process, traced function): maps call_tags and calls. */
#define FG_CALL_SLOTS		8192 /* a power of two */
#define FG_CALL_TAG(tgid, func) (((__u64)(tgid) << 32) | ((__u64)((func)&0xffff) << 1) | 1ULL)
#define FG_CALL_TAG_FUNC(t)	((__u32)(((t) >> 1) & 0xffff))

/* The shared part (map book_slots, mmapped by the collector): one cache line per book. */
struct fg_book_slot {
	__u64 tag;
	__u64 live_bytes;
	__u64 peak_bytes;
	__u64 pad[5];
};

/* The per-CPU part (map book_counts, same index), summed by the collector. */
struct fg_book_counts {
	__u64 alloc_bytes;
	__u64 free_bytes;
	__u64 implicit_free_bytes;
	__u64 alloc_calls;
	__u64 free_calls;
	__u64 failed_calls;
};

/*
 * Entry/return path: a live allocation (map `allocs`, an open-addressing table like the
 * books'), so its free knows its size, device and kind. `ptr` is the claimed word:
 * FG_ALLOC_FREE never used, FG_ALLOC_DELETED freed (reusable); tgid is set after it.
 */
#define FG_ALLOC_PROBES	 16
#define FG_ALLOC_FREE	 0ULL
#define FG_ALLOC_DELETED 1ULL
struct fg_alloc_rec {
	__u64 ptr;
	__u32 tgid;
	__s32 device;
	__u64 size;
	__u32 kind;
	__s32 ctx_device; /* the device of the context current at allocation */
	__u64 ctx;	  /* driver context current at allocation; 0: the runtime's (primary) */
};

/*
 * Kernel launches per process and kernel (map `kernels`, fed by the fakegpu:launch and
 * fakegpu:kernel_done USDT probes): the launches, how the executor finished with them and
 * their host time, and the kernel's (mangled) name, read once, when the process first
 * launches it (or, attached after a launch, when it first finishes one); a longer name is cut
 * at FG_KERNEL_NAME_LEN - 1 bytes. Every count is added atomically: exact, whichever threads
 * launch and run. ran + recorded trails launches by the launches still queued or running.
 */
#define FG_KERNEL_NAME_LEN 128
struct fg_kernel_key {
	__u32 tgid;
	__u32 pad;	/* zero */
	__u64 function; /* the CUfunction: one per kernel and module load */
};
struct fg_kernel_val {
	__u64 launches; /* launches accepted (fakegpu:launch) */
	__u64 ran;	/* launches executed on the host CPU (kernel_done, ran 1) */
	__u64 recorded; /* launches recorded, not run (kernel_done, ran 0) */
	__u64 host_ns;	/* the executed launches' host time, ns */
	char name[FG_KERNEL_NAME_LEN];
};

/*
 * Per-library attribution: API calls per process and caller, the return address of a call
 * made from outside the CUDA libraries (the backend's USDT probes pass the one its entry
 * points noted; entry/return probes read it at entry). An open-addressing table like the
 * books' (maps caller_tags, caller_files, caller_counts, indexed alike): the tag holds the
 * process and a hash of the caller, and caller_files the caller itself, which a search
 * compares too (two callers of one process whose hashes meet take two slots). Per caller: per
 * CPU, calls, failures, bytes allocated and freed, and the sampled time; and, taken in the
 * kernel when the caller is first seen, the file it runs in (so a process that exits before
 * the collector reads its maps is still named). One caller may hold two slots (two threads'
 * first calls from it at once): the collector sums them.
 */
#define FG_CALLER_SLOTS	       8192 /* a power of two */
#define FG_CALLER_HASH(caller) ((__u32)((((__u64)(caller)) * 0x9E3779B97F4A7C15ULL) >> 33))
#define FG_CALLER_TAG(tgid, caller)                                                                \
	(((__u64)(tgid) << 32) | ((__u64)FG_CALLER_HASH(caller) << 1) | 1ULL)
#define FG_CALLER_TAG_HASH(t) ((__u32)(((t) >> 1) & 0x7fffffffU))
struct fg_caller_val {
	__u64 calls;
	__u64 failed;	   /* calls that returned an error */
	__u64 alloc_bytes; /* bytes its successful allocations got */
	__u64 free_bytes;  /* bytes its successful frees released */
	__u64 probed; /* calls seen by entry/return probes (the others, USDT's, are not timed) */
	__u64 timed;  /* of those, calls timed (--latency-every): total_ns covers these */
	__u64 total_ns;
};
#define FG_OBJECT_NAME_LEN 64
enum fg_caller_file_status {
	FG_CALLER_UNKNOWN = 0, /* no mapping holds the address (or it was not looked up) */
	FG_CALLER_FILE = 1,    /* a file's mapping: dev, inode, offset and the file's name */
	FG_CALLER_ANON = 2,    /* an anonymous mapping (JIT code) */
};
struct fg_caller_file {
	__u64 caller; /* the return address (0: not known: a backend thread); written last */
	__u32 status; /* enum fg_caller_file_status */
	__u32 dev;    /* the file's device (the kernel's dev_t) */
	__u64 inode;
	__u64 map_start;	       /* the mapping's start address ... */
	__u64 map_pgoff;	       /* ... and its offset in the file, in pages */
	char name[FG_OBJECT_NAME_LEN]; /* the file's name (its last path component) */
};

/*
 * The wire form of an event in the BPF ring buffer (map `events`): struct fg_record, then what
 * the record's size says follows, in this order:
 *   FG_REC_BASE      the record alone: most USDT and entry/return records
 *   + FG_REC_EXT     struct fg_record_ext: a kernel time, an aux value or an error status
 *   + FG_REC_PROC    struct fg_record_proc: the task comm, the parent and the time, on a
 *                    process's first record (a process met in monitor mode may be gone
 *                    before the collector reads /proc: the record says who it was)
 * so a record is 32, 56, 64 or 88 bytes (the ring buffer adds an 8-byte header and rounds to
 * 8). The common record is short on purpose: the ring buffer's cache lines move from the
 * traced thread's CPU to the collector's and back once per lap, and fewer lines per record is
 * less of the traced call's time. Any other size is a contract mismatch.
 */
#define FG_REC_KIND_OTHER 0xf	 /* type_kind: a kind outside enum fg_mem_kind */
#define FG_REC_NO_FUNC	  0xffff /* func: no function index (fg_event.func ~0u) */
#define FG_REC_TYPE_KIND(type, kind)                                                               \
	((__u8)(((type)&0xf) | ((kind) < FG_MEM_KINDS ? (kind) : FG_REC_KIND_OTHER) << 4))
#define FG_REC_API_SOURCE(api, source) ((__u8)(((api)&0xf) | ((source)&0xf) << 4))
#define FG_REC_FUNC(func)	       ((__u16)((func) < FG_REC_NO_FUNC ? (func) : FG_REC_NO_FUNC))
/* Whether a record carries struct fg_record_ext. */
#define FG_REC_NEEDS_EXT(ts, aux, status) ((ts) || (aux) || (status))
struct fg_record {
	__u32 tgid;
	__u32 tid;
	__u64 ptr;
	__u64 size;
	__s32 device;
	__u16 func;	 /* FG_REC_FUNC(fg_event.func) */
	__u8 type_kind;	 /* FG_REC_TYPE_KIND(enum fg_event_type, enum fg_mem_kind) */
	__u8 api_source; /* FG_REC_API_SOURCE(enum fg_api, enum fg_source) */
};
struct fg_record_ext {
	__u64 ts_ns;
	__u64 aux;
	__s32 status;
	__u32 pad; /* zero */
};
struct fg_record_proc {
	char comm[FG_COMM_LEN];
	__u64 ts_ns; /* when the record was made (CLOCK_MONOTONIC) */
	__u32 ppid;  /* the parent's tgid (real_parent) */
	__u32 pad;   /* zero */
};
#define FG_REC_BASE	 ((__u32)sizeof(struct fg_record))
#define FG_REC_WITH_EXT	 ((__u32)(sizeof(struct fg_record) + sizeof(struct fg_record_ext)))
#define FG_REC_WITH_PROC ((__u32)(sizeof(struct fg_record) + sizeof(struct fg_record_proc)))
#define FG_REC_WITH_EXT_PROC                                                                       \
	((__u32)(sizeof(struct fg_record) + sizeof(struct fg_record_ext) +                         \
		 sizeof(struct fg_record_proc)))

/* Collector health, one slot per CPU, summed by user space: nothing is dropped silently. */
enum fg_stat {
	FG_STAT_EVENTS = 0,	    /* records submitted to the ring buffer */
	FG_STAT_RB_DROPS = 1,	    /* records lost: the ring buffer was full */
	FG_STAT_MISSING_ENTRY = 2,  /* return probe without its entry record */
	FG_STAT_UNMATCHED_FREE = 3, /* free of a pointer the books never saw allocated */
	FG_STAT_ALLOC_MAP_FULL = 4, /* an allocation record or a book could not be stored (full) */
	FG_STAT_STACKS_LOST = 5,    /* --stacks: an allocation's stack could not be stored (its
				       slot in the stack table taken, or the table full) */
	FG_STAT_UNTRACED_LOST = 6,  /* a process mapped a CUDA library not traced yet and the
				       untraced_maps table was full: it is missed uncounted */
	FG_STAT_MAX = 8,
};

/*
 * The backend's USDT probes carry (ptr, size, info, caller): info packs the device (int16, bits
 * 0..15), memory kind (bits 16..23), API layer or implicit-free reason (bits 24..31) and the
 * call's status (int32, bits 32..63). fakebackend/src/core/usdt.h builds it.
 */
#define FG_USDT_INFO_DEVICE(i) ((__s32)(__s16)((i)&0xffff))
#define FG_USDT_INFO_KIND(i)   ((__u32)(((i) >> 16) & 0xff))
#define FG_USDT_INFO_API(i)    ((__u32)(((i) >> 24) & 0xff))
#define FG_USDT_INFO_STATUS(i) ((__s32)((i) >> 32))

/*
 * Where the probes keep their arguments (the notes' argument strings): the BPF programs load
 * them from the first four argument registers (PT_REGS_PARM1..4), so the collector uses a
 * library's USDT probes only when every site says exactly this: four for alloc, free,
 * implicit_free and kernel_done, three for launch, two for ctx_switch. The backend places its
 * sites this way on x86-64 (fakebackend/src/core/usdt.h) and has none on other architectures,
 * where the collector traces entry/return probes; an arm64 site naming x0..x3 would be read
 * as the same registers.
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define FG_USDT_ARGUMENTS	     "8@x0 8@x1 8@x2 8@x3"
#define FG_USDT_ARGUMENTS_LAUNCH     "8@x0 8@x1 8@x2"
#define FG_USDT_ARGUMENTS_CTX_SWITCH "8@x0 8@x1"
#else
#define FG_USDT_ARGUMENTS	     "8@%rdi 8@%rsi 8@%rdx 8@%rcx"
#define FG_USDT_ARGUMENTS_LAUNCH     "8@%rdi 8@%rsi 8@%rdx"
#define FG_USDT_ARGUMENTS_CTX_SWITCH "8@%rdi 8@%rsi"
#endif

/* Load-time configuration (const volatile rodata, set between open and load). */
struct fg_config {
	__u32 filter_pids;	 /* 1: only processes in the pids map (attach / run) */
	__u32 follow_children;	 /* 1: forked children join the pids map (run) */
	__u32 wakeup_mask;	 /* a CPU's records may wake the consumer when their count &
				   mask is 0 (a power of two minus 1; 0: every record) ... */
	__u32 wake_bytes;	 /* ... if the ring buffer then holds at least this many bytes
				   (0: always) */
	__u32 allocs_mask;	 /* allocs slots - 1 (--max-allocs, a power of two minus 1) */
	__u32 latency_threshold; /* entry/return: a call is timed when a random u32 is below
				    this (2^32 / --latency-every); 0: every call */
	__u32 stacks;		 /* 1: allocations carry their user stack id (--stacks) */
};

/* User stacks recorded with --stacks: frames kept per stack (the map's value size / 8). */
#define FG_STACK_DEPTH 64

/*
 * --stacks: a stack's frames as the files they run in, taken when the stack is first seen
 * (stack_files, keyed by the stack's id). A return address means something only in its
 * process's mappings, which go with the process; a build id and a file offset name the code
 * for good, so a process that exits before the collector reads its maps is still named.
 * A frame is the kernel's struct bpf_stack_build_id (userspace/core/event.cpp checks).
 */
#define FG_BUILD_ID_SIZE 20
enum fg_file_frame_status {
	FG_FRAME_EMPTY = 0, /* no frame */
	FG_FRAME_FILE = 1,  /* build_id + offset into the file */
	FG_FRAME_IP = 2,    /* no build id could be read: the return address */
};
struct fg_file_frame {
	__s32 status; /* enum fg_file_frame_status */
	__u8 build_id[FG_BUILD_ID_SIZE];
	__u64 offset_or_ip;
};
struct fg_stack_files {
	__u32 frames; /* frames used */
	__u32 pad;
	struct fg_file_frame frame[FG_STACK_DEPTH];
};

/* --stacks: the file each process exec'd (exec_paths, keyed by tgid, least recently written
 * dropped first), as execve was given it: the collector names that program's frames from it
 * after the process is gone. */
#define FG_PATH_LEN 256
struct fg_exec_path {
	char path[FG_PATH_LEN];
};

/*
 * CUDA libraries a process loads before the collector traces them (a copy it has not seen, a
 * backend replaced by a new file), found by a probe on the dynamic loader (loader_state).
 * The kernel names a file by its device (the kernel's dev_t: major << 20 | minor) and inode.
 *  - traced_files: the files the collector attached to, keyed by struct fg_file_key (the
 *    collector fills it).
 *  - untraced_maps: per process (tgid), the first candidate library it loaded that
 *    traced_files did not hold, with the path the loader opened; the collector reads and
 *    deletes the entries, attaches the file, and counts the process missed if it was gone
 *    by then.
 */
struct fg_file_key {
	__u64 dev;
	__u64 ino;
};
struct fg_untraced_map {
	__u64 dev;
	__u64 ino;
	char comm[16];
	char path[FG_PATH_LEN];
};

#endif /* FAKEGPU_EVENTS_H */
