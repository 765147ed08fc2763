// SPDX-License-Identifier: Apache-2.0
#include "kernels/fiber.h"

#include "kernels/matrix.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

// The switch: saves the callee-saved registers and the stack pointer of the running context
// in *save_sp, loads load_sp's. A new fiber's stack is made to look like one that switched
// out, with fg_fiber_start as its return address, the function it runs in r12 and that
// function's argument in rbx: fg_fiber_main(Fiber*) for a thread, fg_block_fiber_main
// (BlockFiber*) for a block of a cooperative launch.
extern "C" void fg_fiber_switch(void** save_sp, void* load_sp);
extern "C" [[noreturn]] void fg_fiber_main(void* fiber);
extern "C" [[noreturn]] void fg_block_fiber_main(void* block);
asm(R"(
  .text
  .globl fg_fiber_switch
  .hidden fg_fiber_switch
  .type fg_fiber_switch, @function
fg_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size fg_fiber_switch, .-fg_fiber_switch

  .globl fg_fiber_start
  .hidden fg_fiber_start
  .type fg_fiber_start, @function
fg_fiber_start:
  movq %rbx, %rdi
  call *%r12
  ud2
  .size fg_fiber_start, .-fg_fiber_start
)");
extern "C" void fg_fiber_start();

namespace fg::kernels {
namespace {

constexpr size_t kStackBytes = 128 * 1024;  // per CUDA thread; local memory lives here
constexpr size_t kGuard = 4096;             // an overflow faults instead of corrupting
// Per block of a cooperative launch: a block run as loops keeps its threads' local memory
// there, as it does on a worker's own stack in other launches. Reserved, not committed.
constexpr size_t kBlockStackBytes = 8 * 1024 * 1024;

enum class State : uint8_t { Runnable, AtBarrier, AtWarp, AtActive, Exited };
enum class WarpOp : uint8_t { Shfl, Vote, Match, Redux, Sync, Mma };

struct Fiber {
  void* sp = nullptr;
  unsigned char* stack = nullptr;  // lowest usable byte
  uint32_t linear = 0, tid[3] = {0, 0, 0};
  State state = State::Runnable;
  uint32_t bar = 0;
  // A warp operation's arguments and result.
  WarpOp op = WarpOp::Sync;
  uint32_t mode = 0, mask = 0, b = 0, c = 0, site = 0;
  uint64_t value = 0;
  uint32_t result = 0, result_pred = 0;
  uint32_t* out = nullptr;  // wmma.mma's D registers (value: its operand words)
};

struct Barrier {
  uint32_t arrived = 0, expected = 0;  // expected 0: the block's live threads
  uint32_t popc = 0, all = 1, any = 0;
};

struct Block {
  BlockEnv* env = nullptr;
  ThreadFn fn = nullptr;
  Fiber* fibers = nullptr;
  uint32_t n = 0, live = 0, current = 0;
  void* scheduler_sp = nullptr;
  Barrier bars[16];
  bool polled = false;  // a thread polled memory in this round
};

thread_local Block* t_block = nullptr;

// Linux 6.13's guard regions: a guard page that does not split the mapping it lies in.
constexpr int kMadvGuardInstall = 102;  // MADV_GUARD_INSTALL

// Stacks of `bytes` each above a guard page, mapped `per_map` at a time and kept until the
// owner goes. With guard regions, a mapping of many stacks is one area of the process's
// vm.max_map_count (65530 by default); with mprotect'ed guard pages (older kernels), each
// stack is two.
class Stacks {
 public:
  Stacks(size_t bytes, size_t per_map) : bytes_(bytes), per_map_(per_map) {}
  Stacks(const Stacks&) = delete;
  Stacks& operator=(const Stacks&) = delete;
  ~Stacks() {
    for (unsigned char* m : maps_) ::munmap(m, map_bytes());
  }
  size_t count() const { return maps_.size() * per_map_; }
  // The lowest usable byte of stack `i`; null when there is no memory (or no area) for it.
  unsigned char* get(size_t i) {
    while (maps_.size() <= i / per_map_) {
      void* m = ::mmap(nullptr, map_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                       0);
      if (m == MAP_FAILED) return nullptr;
      auto* base = static_cast<unsigned char*>(m);
      for (size_t k = 0; k < per_map_; ++k) {
        unsigned char* guard = base + k * (kGuard + bytes_);
        static std::atomic<bool> guard_regions{true};
        if (guard_regions.load(std::memory_order_relaxed) && ::madvise(guard, kGuard, kMadvGuardInstall) == 0) continue;
        guard_regions.store(false, std::memory_order_relaxed);
        if (::mprotect(guard, kGuard, PROT_NONE) != 0) {
          ::munmap(m, map_bytes());
          return nullptr;
        }
      }
      maps_.push_back(base);
    }
    return maps_[i / per_map_] + (i % per_map_) * (kGuard + bytes_) + kGuard;
  }

 private:
  size_t map_bytes() const { return per_map_ * (kGuard + bytes_); }
  size_t bytes_, per_map_;
  std::vector<unsigned char*> maps_;
};
// What a block's threads run on when they run as fibers.
struct ThreadFibers {
  Stacks stacks{kStackBytes, 32};
  std::vector<Fiber> fibers;
};
// The worker thread's, for the blocks it runs one after the other: made on first use, and on
// the heap (the library's static TLS block stays small, abi:exports).
thread_local std::unique_ptr<ThreadFibers> t_threads;

// A block of a cooperative launch, resident on a worker with the worker's other blocks.
struct BlockFiber {
  Stacks stack{kBlockStackBytes, 1};
  void* sp = nullptr;
  BlockEnv* env = nullptr;
  bool live = false, ended = false;
  uint32_t arrivals = 0;  // times it arrived at grid.sync()
  ThreadFibers threads;   // its threads' fibers, when they run as fibers

  uint64_t stack_lo() { return reinterpret_cast<uint64_t>(stack.get(0)); }
  // Ready to run block `e` from its start; false when its stack cannot be mapped.
  bool ready(BlockEnv* e) {
    if (!stack.get(0)) return false;
    env = e;
    live = true;
    ended = false;
    arrivals = 0;
    auto* top = reinterpret_cast<uint64_t*>(stack_lo() + kBlockStackBytes);
    auto* s = top - 7;  // r15 r14 r13 r12 rbx rbp, then the return address
    std::memset(s, 0, 6 * sizeof(uint64_t));
    s[3] = reinterpret_cast<uint64_t>(&fg_block_fiber_main);
    s[4] = reinterpret_cast<uint64_t>(this);
    s[6] = reinterpret_cast<uint64_t>(&fg_fiber_start);
    sp = s;
    return true;
  }
};

// A worker's part of a cooperative launch (run_cooperative).
struct GridWorker {
  CooperativeGrid* grid = nullptr;
  const std::function<void(BlockEnv*)>* body = nullptr;
  void* scheduler_sp = nullptr;
  BlockFiber* current = nullptr;  // the block running now
};
thread_local GridWorker* t_grid = nullptr;
// The worker's blocks, kept from one cooperative launch to the next (stacks mapped once), up
// to kKeptBlocks of them with at most kKeptThreadStacks thread stacks in all.
thread_local std::vector<std::unique_ptr<BlockFiber>> t_block_fibers;
constexpr size_t kKeptBlocks = 64, kKeptThreadStacks = 4096;

// The storage for the threads of the block about to run as fibers.
ThreadFibers& thread_fibers() {
  if (t_grid && t_grid->current) return t_grid->current->threads;
  if (!t_threads) t_threads = std::make_unique<ThreadFibers>();
  return *t_threads;
}

// From the running block of a cooperative launch back to its worker, until the worker
// resumes it (the block's thread scheduler, if any, is the block's own).
void grid_yield() {
  GridWorker& w = *t_grid;
  BlockFiber* bf = w.current;
  Block* inner = t_block;
  t_block = nullptr;
  fg_fiber_switch(&bf->sp, w.scheduler_sp);
  t_block = inner;
}

void stop_grid(CooperativeGrid& g, std::string why) {
  {
    std::lock_guard lock(g.mu);
    if (g.failure.empty()) g.failure = std::move(why);
  }
  g.abort.store(1, std::memory_order_release);
}

Fiber& self() { return t_block->fibers[t_block->current]; }

// Back to the scheduler until this fiber is runnable again.
void wait() {
  Fiber& f = self();
  fg_fiber_switch(&f.sp, t_block->scheduler_sp);
}

uint32_t warp_of(uint32_t linear) { return linear / 32; }

// The lanes of warp `w` that exist and have not exited, as a mask.
uint32_t live_lanes(const Block& blk, uint32_t w) {
  uint32_t m = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t i = w * 32 + l;
    if (i < blk.n && blk.fibers[i].state != State::Exited) m |= 1u << l;
  }
  return m;
}

void release_barrier(Block& blk, uint32_t id) {
  Barrier& b = blk.bars[id];
  for (uint32_t i = 0; i < blk.n; ++i) {
    Fiber& f = blk.fibers[i];
    if (f.state == State::AtBarrier && f.bar == id) {
      f.state = State::Runnable;
      f.result = f.mode == static_cast<uint32_t>(BarrierKind::RedPopc)  ? b.popc
                 : f.mode == static_cast<uint32_t>(BarrierKind::RedAnd) ? b.all
                                                                        : b.any;
    }
  }
  b = Barrier{};
}

void check_barriers(Block& blk) {
  for (uint32_t id = 0; id < 16; ++id) {
    Barrier& b = blk.bars[id];
    if (b.arrived && b.arrived >= (b.expected ? b.expected : blk.live)) release_barrier(blk, id);
  }
}

// Computes the results of the warp operation lanes `group` of warp `w` wait in.
void complete_warp_op(Block& blk, uint32_t w, uint32_t group) {
  Fiber* lanes = blk.fibers + w * 32;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(group >> l & 1)) continue;
    Fiber& f = lanes[l];
    switch (f.op) {
      case WarpOp::Shfl: {
        f.b &= 31;  // only the lane bits of b count
        // c packs the clamp (c[4:0]) and the segment mask (c[12:8]).
        const uint32_t clamp = f.c & 31, seg = (f.c >> 8) & 31;
        const uint32_t max_lane = (l & seg) | (clamp & ~seg), min_lane = l & seg;
        int64_t j = l;
        bool ok = false;
        switch (static_cast<ShflMode>(f.mode)) {
          case ShflMode::Up:
            j = static_cast<int64_t>(l) - f.b;
            ok = j >= static_cast<int64_t>(max_lane);
            break;
          case ShflMode::Down:
            j = static_cast<int64_t>(l) + f.b;
            ok = j <= static_cast<int64_t>(max_lane);
            break;
          case ShflMode::Bfly:
            j = l ^ f.b;
            ok = j <= static_cast<int64_t>(max_lane);
            break;
          case ShflMode::Idx:
            j = min_lane | (f.b & ~seg);
            ok = j <= static_cast<int64_t>(max_lane);
            break;
        }
        if (!ok || j < 0 || j > 31) j = l;
        f.result = static_cast<uint32_t>((group >> j & 1) ? lanes[j].value : f.value);
        f.result_pred = ok;
        break;
      }
      case WarpOp::Vote: {
        uint32_t ballot = 0;
        for (uint32_t k = 0; k < 32; ++k)
          if ((group >> k & 1) && lanes[k].value) ballot |= 1u << k;
        switch (static_cast<VoteMode>(f.mode)) {
          case VoteMode::All: f.result = ballot == group; break;
          case VoteMode::Any: f.result = ballot != 0; break;
          case VoteMode::Uni: f.result = ballot == 0 || ballot == group; break;
          case VoteMode::Ballot: f.result = ballot; break;
        }
        break;
      }
      case WarpOp::Match: {
        uint32_t same = 0;
        for (uint32_t k = 0; k < 32; ++k)
          if ((group >> k & 1) && lanes[k].value == f.value) same |= 1u << k;
        if (f.mode) {  // all
          f.result_pred = same == group;
          f.result = same == group ? group : 0;
        } else {
          f.result = same;
        }
        break;
      }
      case WarpOp::Redux: {
        uint32_t acc = 0;
        bool first = true;
        for (uint32_t k = 0; k < 32; ++k) {
          if (!(group >> k & 1)) continue;
          const uint32_t v = static_cast<uint32_t>(lanes[k].value);
          if (first) {
            acc = v;
            first = false;
            continue;
          }
          switch (static_cast<ReduxOp>(f.mode)) {
            case ReduxOp::Add: acc += v; break;
            case ReduxOp::And: acc &= v; break;
            case ReduxOp::Or: acc |= v; break;
            case ReduxOp::Xor: acc ^= v; break;
            case ReduxOp::Min:
              acc = f.b ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                        : std::min(acc, v);
              break;
            case ReduxOp::Max:
              acc = f.b ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                        : std::max(acc, v);
              break;
          }
        }
        f.result = acc;
        break;
      }
      case WarpOp::Sync: break;
      case WarpOp::Mma: {
        const uint32_t* in[32];
        for (uint32_t k = 0; k < 32; ++k)
          in[k] = (group >> k & 1) ? reinterpret_cast<const uint32_t*>(lanes[k].value) : nullptr;
        matrix::lane_result(matrix::Op::unpack(f.mode), in, l, f.out);
        break;
      }
    }
  }
  for (uint32_t l = 0; l < 32; ++l)
    if (group >> l & 1) lanes[l].state = State::Runnable;
}

// Completes every warp operation of warp `w` whose lanes have all arrived.
void check_warp(Block& blk, uint32_t w) {
  const uint32_t live = live_lanes(blk, w);
  Fiber* lanes = blk.fibers + w * 32;
  uint32_t waiting = 0;  // the lanes at a warp operation
  for (uint32_t l = 0; l < 32 && w * 32 + l < blk.n; ++l)
    if (lanes[l].state == State::AtWarp) waiting |= 1u << l;
  for (uint32_t rest = waiting; rest;) {
    const uint32_t l = static_cast<uint32_t>(__builtin_ctz(rest));
    rest &= rest - 1;
    if (lanes[l].state != State::AtWarp) continue;  // completed with an earlier group
    const uint32_t group = (lanes[l].mask | (1u << l)) & live;
    if ((group & ~waiting) == 0) {
      complete_warp_op(blk, w, group);
      waiting &= ~group;
    }
  }
}

// __activemask(): once no lane of the warp can run on, the lanes waiting at the same site
// are the ones executing it together.
void check_active(Block& blk, uint32_t w) {
  Fiber* lanes = blk.fibers + w * 32;
  for (uint32_t l = 0; l < 32; ++l)
    if (w * 32 + l < blk.n && lanes[l].state == State::Runnable) return;
  for (uint32_t l = 0; l < 32; ++l) {
    if (w * 32 + l >= blk.n || lanes[l].state != State::AtActive) continue;
    uint32_t group = 0;
    for (uint32_t k = 0; k < 32; ++k)
      if (w * 32 + k < blk.n && lanes[k].state == State::AtActive && lanes[k].site == lanes[l].site) group |= 1u << k;
    for (uint32_t k = 0; k < 32; ++k)
      if (group >> k & 1) {
        lanes[k].result = group;
        lanes[k].state = State::Runnable;
      }
  }
}

uint32_t warp_op(WarpOp op, uint32_t mode, uint64_t value, uint32_t mask, uint32_t b, uint32_t c, uint32_t* pred) {
  Block& blk = *t_block;
  Fiber& f = self();
  f.op = op;
  f.mode = mode;
  f.value = value;
  f.mask = mask;
  f.b = b;
  f.c = c;
  f.state = State::AtWarp;
  const uint32_t w = warp_of(f.linear);
  check_warp(blk, w);
  check_active(blk, w);
  if (f.state != State::Runnable) wait();
  if (pred) *pred = f.result_pred;
  return f.result;
}

}  // namespace

void current_stack(uint64_t* lo, uint64_t* hi) {
  if (t_block) {
    const Fiber& f = self();
    *lo = reinterpret_cast<uint64_t>(f.stack);
    *hi = *lo + kStackBytes;
    return;
  }
  if (t_grid && t_grid->current) {
    *lo = t_grid->current->stack_lo();
    *hi = *lo + kBlockStackBytes;
    return;
  }
  thread_local uint64_t stack_lo = 0, stack_hi = 0;
  if (!stack_hi) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        stack_lo = reinterpret_cast<uint64_t>(addr);
        stack_hi = stack_lo + size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  *lo = stack_lo;
  *hi = stack_hi;
}

bool run_block_fibers(BlockEnv* env, ThreadFn fn, std::string* deadlock) {
  Block blk;
  blk.env = env;
  blk.fn = fn;
  blk.n = env->ntid[0] * env->ntid[1] * env->ntid[2];
  ThreadFibers& storage = thread_fibers();
  if (storage.fibers.size() < blk.n) storage.fibers.resize(blk.n);
  blk.fibers = storage.fibers.data();
  for (uint32_t i = 0; i < blk.n; ++i) {
    Fiber& f = blk.fibers[i];
    f = Fiber{};
    f.linear = i;
    f.tid[0] = i % env->ntid[0];
    f.tid[1] = i / env->ntid[0] % env->ntid[1];
    f.tid[2] = i / env->ntid[0] / env->ntid[1];
    f.stack = storage.stacks.get(i);
    if (!f.stack) {
      *deadlock = "no memory for the block's " + std::to_string(blk.n) +
                  " thread stacks (or more areas than the process may map, vm.max_map_count)";
      return false;
    }
    auto* top = reinterpret_cast<uint64_t*>(f.stack + kStackBytes);
    auto* sp = top - 7;  // r15 r14 r13 r12 rbx rbp, then the return address
    std::memset(sp, 0, 6 * sizeof(uint64_t));
    sp[3] = reinterpret_cast<uint64_t>(&fg_fiber_main);
    sp[4] = reinterpret_cast<uint64_t>(&f);
    sp[6] = reinterpret_cast<uint64_t>(&fg_fiber_start);
    f.sp = sp;
  }
  blk.live = blk.n;
  Block* outer = t_block;
  t_block = &blk;
  bool ok = true;
  while (blk.live > 0 && !env->abort) {
    bool ran = false;
    for (uint32_t i = 0; i < blk.n && !env->abort; ++i) {
      if (blk.fibers[i].state != State::Runnable) continue;
      blk.current = i;
      fg_fiber_switch(&blk.scheduler_sp, blk.fibers[i].sp);
      ran = true;
    }
    // A thread polls memory: in a cooperative launch, another block may be what it waits for.
    if (blk.polled) {
      blk.polled = false;
      if (t_grid && t_grid->current) grid_yield();
      continue;
    }
    if (ran || blk.live == 0 || env->abort) continue;
    for (uint32_t w = 0; w * 32 < blk.n; ++w) check_active(blk, w);
    bool runnable = false;
    for (uint32_t i = 0; i < blk.n; ++i) runnable |= blk.fibers[i].state == State::Runnable;
    if (!runnable) {
      uint32_t at_bar = 0, at_warp = 0;
      for (uint32_t i = 0; i < blk.n; ++i) {
        at_bar += blk.fibers[i].state == State::AtBarrier;
        at_warp += blk.fibers[i].state == State::AtWarp;
      }
      *deadlock = "block (" + std::to_string(env->ctaid[0]) + "," + std::to_string(env->ctaid[1]) + "," +
                  std::to_string(env->ctaid[2]) + "): " + std::to_string(at_bar) + " threads wait at a barrier and " +
                  std::to_string(at_warp) + " at a warp operation that the other " +
                  std::to_string(blk.live - at_bar - at_warp) + " live threads never reach (a GPU would hang)";
      ok = false;
      break;
    }
  }
  t_block = outer;
  return ok;
}

void run_cooperative(CooperativeGrid& grid, const std::function<BlockEnv*(size_t slot)>& start,
                     const std::function<void(BlockEnv*)>& body) {
  GridWorker w;
  w.grid = &grid;
  w.body = &body;
  std::vector<std::unique_ptr<BlockFiber>>& slots = t_block_fibers;
  GridWorker* outer = t_grid;
  Block* outer_block = t_block;
  t_grid = &w;
  t_block = nullptr;
  size_t live = 0;
  auto resume = [&](BlockFiber& bf) {
    w.current = &bf;
    fg_fiber_switch(&w.scheduler_sp, bf.sp);
    w.current = nullptr;
    if (!bf.ended) return;
    bf.live = false;
    --live;
    uint32_t fewest = grid.fewest_arrivals.load(std::memory_order_relaxed);
    while (bf.arrivals < fewest && !grid.fewest_arrivals.compare_exchange_weak(fewest, bf.arrivals)) {}
  };
  bool more = true;
  for (;;) {
    const bool stopping = grid.abort.load(std::memory_order_acquire) != 0;
    // Every block first: those started may wait for the rest.
    if (more && !stopping) {
      size_t slot = 0;
      while (slot < slots.size() && slots[slot]->live) ++slot;
      if (slot == slots.size()) slots.push_back(std::make_unique<BlockFiber>());
      BlockEnv* env = start(slot);
      if (!env) {
        more = false;
      } else if (!slots[slot]->ready(env)) {
        stop_grid(grid, "no memory for the stack of a block of the cooperative grid, which must all be resident");
        more = false;
      } else {
        ++live;
        resume(*slots[slot]);
        continue;
      }
    }
    if (live == 0) break;
    for (auto& bf : slots) {
      if (!bf->live) continue;
      if (grid.abort.load(std::memory_order_relaxed)) bf->env->abort = 1;  // it returns
      resume(*bf);
    }
    // Every block here waits for memory to change: let other workers' threads run.
    if (live) ::sched_yield();
  }
  t_grid = outer;
  t_block = outer_block;
  size_t keep = 0, stacks = 0;
  while (keep < slots.size() && keep < kKeptBlocks &&
         (stacks += slots[keep]->threads.stacks.count()) <= kKeptThreadStacks)
    ++keep;
  slots.resize(keep);
}

}  // namespace fg::kernels

using fg::kernels::BlockEnv;

extern "C" void fg_block_fiber_main(void* block) {
  using namespace fg::kernels;
  auto& bf = *static_cast<BlockFiber*>(block);
  GridWorker& w = *t_grid;
  (*w.body)(bf.env);
  bf.ended = true;
  void* dead = nullptr;
  fg_fiber_switch(&dead, w.scheduler_sp);
  __builtin_unreachable();
}

extern "C" void fg_rt_poll(BlockEnv* env, uint64_t addr, uint32_t kind) {
  using namespace fg::kernels;
  GridWorker* w = t_grid;
  if (w && w->current) {
    BlockFiber& bf = *w->current;
    CooperativeGrid& g = *w->grid;
    // grid.sync(): the block's master thread adds to the barrier (an arrival), then reads it
    // until every block has arrived.
    if (env->grid_workspace && addr == env->grid_workspace + offsetof(GridWorkspace, barrier)) {
      if (kind == static_cast<uint32_t>(PollKind::Update)) {
        ++bf.arrivals;
      } else if (kind == static_cast<uint32_t>(PollKind::Load) &&
                 g.fewest_arrivals.load(std::memory_order_relaxed) < bf.arrivals &&
                 !g.abort.load(std::memory_order_relaxed)) {
        stop_grid(g, "block (" + std::to_string(env->ctaid[0]) + "," + std::to_string(env->ctaid[1]) + "," +
                         std::to_string(env->ctaid[2]) + ") waits in grid.sync() number " +
                         std::to_string(bf.arrivals) + " for a block that ended after " +
                         std::to_string(g.fewest_arrivals.load()) +
                         " (every block must reach each grid.sync(); a GPU would hang)");
      }
    }
    if (g.abort.load(std::memory_order_relaxed)) {
      env->abort = 1;
      return;
    }
  }
  if (t_block) {  // the block's other threads run first
    t_block->polled = true;
    wait();
    return;
  }
  if (w && w->current) grid_yield();
}

extern "C" void fg_fiber_main(void* fiber) {
  using namespace fg::kernels;
  auto& f = *static_cast<Fiber*>(fiber);
  Block& blk = *t_block;
  blk.fn(blk.env, f.tid[0], f.tid[1], f.tid[2]);
  f.state = State::Exited;
  --blk.live;
  // Those waiting for it no longer do.
  check_barriers(blk);
  check_warp(blk, warp_of(f.linear));
  check_active(blk, warp_of(f.linear));
  void* dead = nullptr;
  fg_fiber_switch(&dead, blk.scheduler_sp);
  __builtin_unreachable();
}

extern "C" uint32_t fg_rt_barrier(BlockEnv* env, uint32_t id, uint32_t count, uint32_t kind, uint32_t pred) {
  using namespace fg::kernels;
  (void)env;
  Block& blk = *t_block;
  Fiber& f = self();
  Barrier& b = blk.bars[id & 15];
  if (count && !b.expected) b.expected = count;
  ++b.arrived;
  b.popc += pred != 0;
  b.all &= pred != 0;
  b.any |= pred != 0;
  if (kind == static_cast<uint32_t>(BarrierKind::Arrive)) {
    check_barriers(blk);
    return 0;
  }
  f.state = State::AtBarrier;
  f.bar = id & 15;
  f.mode = kind;
  check_barriers(blk);
  if (f.state != State::Runnable) wait();
  return f.result;
}

extern "C" uint32_t fg_rt_shfl(BlockEnv*, uint32_t mode, uint32_t value, uint32_t b, uint32_t c, uint32_t mask,
                               uint32_t* valid) {
  using namespace fg::kernels;
  return warp_op(WarpOp::Shfl, mode, value, mask, b, c, valid);
}

extern "C" uint32_t fg_rt_vote(BlockEnv*, uint32_t mode, uint32_t pred, uint32_t mask) {
  using namespace fg::kernels;
  return warp_op(WarpOp::Vote, mode, pred != 0, mask, 0, 0, nullptr);
}

extern "C" uint32_t fg_rt_match(BlockEnv*, uint32_t all, uint64_t value, uint32_t mask, uint32_t* pred) {
  using namespace fg::kernels;
  return warp_op(WarpOp::Match, all, value, mask, 0, 0, pred);
}

extern "C" uint32_t fg_rt_redux(BlockEnv*, uint32_t op, uint32_t value, uint32_t mask, uint32_t is_signed) {
  using namespace fg::kernels;
  return warp_op(WarpOp::Redux, op, value, mask, is_signed, 0, nullptr);
}

extern "C" uint32_t fg_rt_activemask(BlockEnv*, uint32_t site) {
  using namespace fg::kernels;
  Block& blk = *t_block;
  Fiber& f = self();
  f.site = site;
  f.state = State::AtActive;
  check_active(blk, warp_of(f.linear));
  if (f.state != State::Runnable) wait();
  return f.result;
}

extern "C" void fg_rt_mma(BlockEnv*, uint32_t op, const uint32_t* in, uint32_t* d) {
  using namespace fg::kernels;
  self().out = d;
  warp_op(WarpOp::Mma, op, reinterpret_cast<uint64_t>(in), 0xffffffffu, 0, 0, nullptr);
}

extern "C" void fg_rt_warpsync(BlockEnv*, uint32_t mask) {
  using namespace fg::kernels;
  warp_op(WarpOp::Sync, 0, 0, mask, 0, 0, nullptr);
}
