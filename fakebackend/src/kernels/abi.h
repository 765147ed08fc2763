// SPDX-License-Identifier: Apache-2.0
// The contract between JIT-compiled kernels (fakebackend/src/jit, which generates code that
// reads these structures field by field) and the executor that runs them
// (kernels/executor.cpp). Plain C layout, fixed-width fields; the code generator mirrors
// BlockEnv as an LLVM struct type and the static_asserts below pin the offsets it uses.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fg::kernels {

// An address range [lo, hi): a live allocation a checked access may touch.
struct Range {
  uint64_t lo = 0, hi = 0;
};

struct Launch;  // the executor's state of one launch; opaque to generated code

// What one running block sees. The executor fills one per worker and block; generated code
// only reads it, except `site_cache` (each checked global access keeps there the range its
// last address fell in, so the next access to the same allocation costs two compares).
struct BlockEnv {
  const unsigned char* params = nullptr;  // the kernel's parameter block (.param space)
  unsigned char* shared = nullptr;        // the block's shared memory: static, then dynamic
  uint64_t shared_bytes = 0;              // static + dynamic
  // Storage of a block whose threads run as loops split at barriers (jit/fission.cpp): each
  // thread's values live across a barrier and its local memory, CompiledKernel::context_bytes
  // per thread; `context_bytes` is the whole (64-byte aligned, null when not used).
  unsigned char* context = nullptr;
  uint64_t context_bytes = 0;
  uint32_t ntid[3] = {1, 1, 1};    // blockDim
  uint32_t nctaid[3] = {1, 1, 1};  // gridDim
  uint32_t ctaid[3] = {0, 0, 0};   // blockIdx
  uint32_t abort = 0;              // nonzero once the launch failed: threads return
  Range* site_cache = nullptr;     // one entry per checked global access site
  Launch* launch = nullptr;
  const uint64_t* globals = nullptr;  // addresses of the module's .global/.const variables,
                                      // in the order CompiledKernel::globals names them
  // A cooperative launch's grid workspace (cooperative groups' grid_workspace: u32 size, u32
  // barrier), which %envreg1 (high half) and %envreg2 (low half) hand to grid.sync(); 0 in
  // other launches, where grid.sync() traps as on a GPU.
  uint64_t grid_workspace = 0;
  // A thread-block cluster launch's cluster dimensions (0s: none, every block a cluster of
  // one) and the block's cluster (ClusterState, executor.cpp: its blocks' shared memory and
  // barrier); cluster_syncs counts this block's passes through the cluster barrier.
  uint32_t cluster_dim[3] = {0, 0, 0};
  uint32_t cluster_syncs = 0;
  void* cluster = nullptr;
};
static_assert(offsetof(BlockEnv, params) == 0);
static_assert(offsetof(BlockEnv, shared) == 8);
static_assert(offsetof(BlockEnv, shared_bytes) == 16);
static_assert(offsetof(BlockEnv, context) == 24);
static_assert(offsetof(BlockEnv, context_bytes) == 32);
static_assert(offsetof(BlockEnv, ntid) == 40);
static_assert(offsetof(BlockEnv, nctaid) == 52);
static_assert(offsetof(BlockEnv, ctaid) == 64);
static_assert(offsetof(BlockEnv, abort) == 76);
static_assert(offsetof(BlockEnv, site_cache) == 80);
static_assert(offsetof(BlockEnv, launch) == 88);
static_assert(offsetof(BlockEnv, globals) == 96);
static_assert(offsetof(BlockEnv, grid_workspace) == 104);
static_assert(offsetof(BlockEnv, cluster_dim) == 112);
static_assert(offsetof(BlockEnv, cluster_syncs) == 124);
static_assert(offsetof(BlockEnv, cluster) == 128);
static_assert(sizeof(BlockEnv) == 136);

// Cooperative groups' grid workspace, as cooperative_groups/details/driver_abi.h declares it:
// grid.sync() counts arrivals in `barrier` (atom.add.release.gpu, then ld.acquire.gpu until
// its top bit flips).
struct GridWorkspace {
  uint32_t size = sizeof(GridWorkspace);
  uint32_t barrier = 0;
};
static_assert(offsetof(GridWorkspace, barrier) == 4);

// How a launch failed, in the order a GPU reports them (the first recorded wins).
enum class Fault : uint32_t {
  None = 0,
  IllegalAddress,     // an access outside live memory (cudaErrorIllegalAddress)
  MisalignedAddress,  // an access not aligned to its size (cudaErrorMisalignedAddress)
  Assert,             // __assertfail (cudaErrorAssert)
  Trap,               // trap / __trap() (cudaErrorLaunchFailure)
};

// Flags of a checked access (fg_rt_check's `flags`).
inline constexpr uint32_t kAccessWrite = 1;

// One compiled kernel: run_block runs every thread of the block env describes.
using BlockFn = void (*)(BlockEnv* env);
// One thread of it: what a fiber runs when the block's threads must wait for each other
// (barriers, warp-wide operations).
using ThreadFn = void (*)(BlockEnv* env, uint32_t tx, uint32_t ty, uint32_t tz);

// fg_rt_poll's kind: what the thread did before it let others run.
enum class PollKind : uint32_t {
  Load = 0,  // a volatile, relaxed or acquire load (a spin loop's read)
  Update,    // an atomic read-modify-write (a lock's attempt, grid.sync()'s arrival)
  Sleep,     // nanosleep
};

// fg_rt_barrier's kind: bar.sync / barrier.sync, bar.arrive, bar.red.{popc,and,or}.
enum class BarrierKind : uint32_t { Sync = 0, Arrive, RedPopc, RedAnd, RedOr };
// fg_rt_shfl's mode, fg_rt_vote's, fg_rt_redux's operation.
enum class ShflMode : uint32_t { Up = 0, Down, Bfly, Idx };
enum class VoteMode : uint32_t { All = 0, Any, Uni, Ballot };
enum class ReduxOp : uint32_t { Add = 0, Min, Max, And, Or, Xor };
// Directed rounding (kernels/rounding.cpp): the modifier, the operation, a conversion's source.
enum class Rounding : uint32_t { Nearest = 0, Zero, Down, Up };
enum class RoundedOp : uint32_t { Add = 0, Sub, Mul, Div, Sqrt, Fma, Rcp };
enum class Source : uint32_t { F64 = 0, S32, U32, S64, U64 };

// Textures and surfaces (kernels/textures.cpp). fg_rt_tex's `op`: the geometry, kTexIntCoords
// when the coordinates are integers (tex1Dfetch's s32), and for tld4 the component it
// gathers plus one at kTexGatherShift. fg_rt_surf's `op`: the geometry, the out-of-range mode
// at kSurfModeShift, kSurfStore for sust, the bytes accessed at kSurfBytesShift.
enum class TexGeom : uint32_t { D1 = 0, D2, D3, A1, A2 };  // .1d .2d .3d .a1d .a2d
inline constexpr uint32_t kTexIntCoords = 0x10;
inline constexpr uint32_t kTexGatherShift = 8;
enum class SurfMode : uint32_t { Trap = 0, Clamp, Zero };  // .trap .clamp .zero
inline constexpr uint32_t kSurfModeShift = 4, kSurfStore = 0x80, kSurfBytesShift = 8;
// txq / suq queries.
enum class TexQuery : uint32_t {
  Width = 0,
  Height,
  Depth,
  NormalizedCoords,
  FilterMode,
  AddrMode0,
  AddrMode1,
  AddrMode2,
  ArraySize,
  NumMipmapLevels,
  NumSamples,
};

// The runtime functions generated code calls, by these names (C linkage, defined by the
// executor and handed to the JIT as absolute symbols).
extern "C" {
// A global/generic access of `size` bytes at `addr` that missed its site's cached range:
// 1 when the address lies in live memory (the site's cache then holds its range), else 0
// with the fault recorded and env->abort set.
int fg_rt_check(BlockEnv* env, uint64_t addr, uint64_t size, uint32_t site, uint32_t flags);
// A fault the generated code detected itself (shared or local out of range, misaligned).
void fg_rt_fault(BlockEnv* env, uint32_t fault, uint64_t addr);
// vprintf(fmt, args) as device code calls it: formats on the host into the launch's output,
// flushed at the next synchronization. Returns the number of arguments' bytes (like CUDA: the
// count of characters is not known), or -1.
int32_t fg_rt_vprintf(BlockEnv* env, uint64_t fmt, uint64_t args);
// __assertfail(message, file, line, function, char size).
void fg_rt_assertfail(BlockEnv* env, uint64_t message, uint64_t file, uint32_t line, uint64_t function);
void fg_rt_trap(BlockEnv* env);
uint64_t fg_rt_clock(BlockEnv* env);
uint64_t fg_rt_malloc(BlockEnv* env, uint64_t size);
void fg_rt_free(BlockEnv* env, uint64_t ptr);
// The block's threads meeting each other (kernels/fiber.cpp). Each waits, as PTX says, for
// the threads it names: barrier `id` for `count` threads (0: all the block's non-exited
// threads); the warp operations for the non-exited lanes of `mask` in the caller's warp.
uint32_t fg_rt_barrier(BlockEnv* env, uint32_t id, uint32_t count, uint32_t kind, uint32_t pred);
// A thread polled memory at `addr` (PollKind `kind`; addr 0 for nanosleep), in code compiled
// for launches whose threads may wait for other blocks (CompiledKernel::yields): the other
// threads of its block, and in a cooperative launch the other blocks, run before it goes on.
// The caller returns when env->abort is set afterwards (a block that waits for what never
// comes stops the launch).
void fg_rt_poll(BlockEnv* env, uint64_t addr, uint32_t kind);
// shfl.sync: the value of the source lane; *valid says whether the source lane was in range.
uint32_t fg_rt_shfl(BlockEnv* env, uint32_t mode, uint32_t value, uint32_t b, uint32_t c, uint32_t mask,
                    uint32_t* valid);
uint32_t fg_rt_vote(BlockEnv* env, uint32_t mode, uint32_t pred, uint32_t mask);
// match.any: the lanes of `mask` whose value equals the caller's; match.all: `mask` if all
// equal (and *pred 1), else 0.
uint32_t fg_rt_match(BlockEnv* env, uint32_t all, uint64_t value, uint32_t mask, uint32_t* pred);
uint32_t fg_rt_redux(BlockEnv* env, uint32_t op, uint32_t value, uint32_t mask, uint32_t is_signed);
// The lanes of the caller's warp executing this `site` together with it.
uint32_t fg_rt_activemask(BlockEnv* env, uint32_t site);
void fg_rt_warpsync(BlockEnv* env, uint32_t mask);
// barrier.cluster.wait, by one thread of the block once all its threads have arrived: returns
// when every block of its cluster has arrived as often (at once for a cluster of one).
void fg_rt_cluster_sync(BlockEnv* env);
// mapa: the generic address in the shared memory of the cluster's block `rank` that `addr` (in
// this block's shared memory) corresponds to; 0 (a fault recorded) when there is none.
uint64_t fg_rt_mapa(BlockEnv* env, uint64_t addr, uint32_t rank);
// wmma.mma.sync (kernels/matrix.h): `op` an Op packed; `in` the caller's operand words (A's
// registers, B's, C's); the caller's D registers go to `d` once every lane of its warp has come.
void fg_rt_mma(BlockEnv* env, uint32_t op, const uint32_t* in, uint32_t* d);
// A warp operation of a block run as loops (jit/fission.cpp), all of whose lanes take part:
// each lane's operand sits in an array per warp (`values[k]`: lane k's), and each lane computes
// its own result from it. `group`: the lanes the operation names and that exist (the caller's
// mask and itself, within the block). fg_rt_warp_match returns the result in its low half
// and match.all's predicate in its high half.
uint32_t fg_rt_warp_vote(uint32_t mode, const uint32_t* preds, uint32_t group);
uint64_t fg_rt_warp_match(uint32_t all, const uint64_t* values, uint32_t lane, uint32_t group);
uint32_t fg_rt_warp_redux(uint32_t op, const uint32_t* values, uint32_t group, uint32_t is_signed);
// wmma.mma.sync: lane k's operand words at lanes + k × stride.
void fg_rt_warp_mma(uint32_t op, const unsigned char* lanes, uint64_t stride, uint32_t lane, uint32_t group,
                    uint32_t* d);
// One IEEE operation (RoundedOp) or conversion under a directed Rounding.
float fg_rt_f32(uint32_t op, uint32_t mode, float a, float b, float c);
double fg_rt_f64(uint32_t op, uint32_t mode, double a, double b, double c);
float fg_rt_cvt_f32(uint32_t mode, uint32_t from, uint64_t bits);
double fg_rt_cvt_f64(uint32_t mode, uint32_t from, uint64_t bits);
// tex / tld4 on the texture object `handle`: `coords` the instruction's coordinate words (raw
// bits: floats, or integers for kTexIntCoords and the layer of .a1d/.a2d, which comes first),
// `out` its four result words. 1; 0 when the handle names no live texture (an
// IllegalAddress fault is recorded and env->abort set).
int32_t fg_rt_tex(BlockEnv* env, uint64_t handle, uint32_t op, const uint32_t* coords, uint32_t* out);
// suld / sust on the surface object `handle`: `coords` x (in bytes), y, z or the layer first
// as the instruction gives them; `data` the bytes loaded or stored. 1; 0 after a fault (no
// live surface, or a .trap access out of range).
int32_t fg_rt_surf(BlockEnv* env, uint64_t handle, uint32_t op, const int32_t* coords, void* data);
// txq / suq (`surface`): the TexQuery `what` of the object into *out; 1, or 0 after a fault.
int32_t fg_rt_texq(BlockEnv* env, uint64_t handle, uint32_t what, uint32_t surface, uint32_t* out);
}

}  // namespace fg::kernels
