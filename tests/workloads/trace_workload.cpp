// SPDX-License-Identifier: Apache-2.0
// Exactly known allocation patterns for fakegpu-trace's integration tests
// (tests/integration/test_trace.py), through the CUDA Runtime and the CUDA Driver API of the
// backend it links against. Every figure a test asserts follows from the mode's comment.
//
//   trace_workload mixed [hold] [EXIT]
//       device 1: cudaMalloc 3 MiB, cudaMallocManaged 2 MiB; host: cudaMallocHost 1 MiB;
//       device 5: cuCtxCreate_v2 + cuMemAlloc_v2 5 MiB. Prints "pid N: holding", with `hold`
//       waits for stdin to close; then frees the 3 MiB, the 1 MiB and the 5 MiB and exits
//       with EXIT (default 0), leaking the 2 MiB managed allocation.
//   trace_workload threads
//       4 threads on devices 0, 4, 7, 4; thread i: cudaSetDevice, cudaMalloc (i+1) MiB, odd
//       threads also 1 MiB; all wait at a barrier (every allocation live), then free the
//       (i+1) MiB. The odd threads' 1 MiB (both on device 4) leak. The threads allocate one
//       after the other, thread 3 first, so the figures never depend on the scheduler.
//   trace_workload ctx
//       cuCtxCreate_v4 on device 6, cuMemAlloc_v2 4 MiB and 2 MiB, cuMemFree_v2 the 2 MiB,
//       cuCtxDestroy_v2 (frees the 4 MiB: an implicit free, not a leak).
//   trace_workload async
//       device 2: cudaMallocAsync 3 MiB and 1 MiB on the legacy stream, cudaFreeAsync the 3 MiB,
//       cudaStreamSynchronize, cudaFreeAsync the 1 MiB, cudaStreamSynchronize.
//       VMM on device 3 (the runtime's current device stays 2): cuMemCreate 4 MiB and 2 MiB,
//       cuMemRelease both.
//   trace_workload primary
//       cuDevicePrimaryCtxRetain on device 3, cuCtxSetCurrent, cuMemAlloc_v2 4 MiB,
//       cuDevicePrimaryCtxRelease_v2: the last reference frees the 4 MiB (an implicit free,
//       not a leak; the runtime never used device 3).
//   trace_workload all
//       mixed (without hold), then ctx, then async, then threads, one process.
//   trace_workload spawn DEV MIB PROGRAM [ARGS...]
//       cudaSetDevice(DEV), cudaMalloc MIB MiB, fork; the child execs PROGRAM ARGS; the
//       parent waits for it, frees, and exits with the child's status.
//   trace_workload churn PAIRS KIB
//       device 0: cudaMalloc 8 MiB (held), PAIRS x (cudaMalloc KIB KiB + cudaFree), cudaFree
//       the 8 MiB, then cudaMalloc 1 MiB that is leaked.
//   trace_workload huge PAIRS
//       device 0: PAIRS x (cudaMalloc 4 KiB + cudaFree) whose out-parameter lies in a
//       transparent huge page (a 2 MiB-aligned anonymous region with MADV_HUGEPAGE), mapped
//       by a 2 MiB page-table entry. Prints "pid N: huge page: yes" (or "no" where the kernel
//       gave none), then "pid N: huge done".
//   trace_workload forks N [gate]
//       Forks N children before the parent's first CUDA call, then allocates 4 MiB on device 0
//       (cudaMalloc), then forks N children more; every 4th child execs `trace_workload child`
//       (the same pattern in a fresh image). The children of both batches run at once. With
//       `gate` the children wait until the parent has printed "pid N: children waiting" and
//       its stdin has closed. The parent then waits for every child, frees its 4 MiB, prints
//       "pid N: forks done" and exits with 1, naming the child, if one did not exit with 0.
//   trace_workload child
//       device 1: cudaMalloc 2 MiB, cudaFree, cudaMalloc 1 MiB, exit(0) holding it (a leak).
//   trace_workload grow STEPS MIB PERIOD_MS [hold]
//       device 0: STEPS x cudaMalloc MIB MiB, one every PERIOD_MS ms (absolute deadlines, so
//       the pace does not drift), all held. Prints "pid N: grown STEPS x MIB MiB, first T0
//       last T1" (CLOCK_MONOTONIC ns of the first and the last allocation: the rate the
//       program really had is (STEPS - 1) * MIB MiB / (T1 - T0)); with `hold` waits for stdin
//       to close; frees everything, exits 0.
//   trace_workload aged
//       device 0: cudaMalloc 1 MiB and 2 MiB, prints "pid N: first batch", waits for one line
//       on stdin; cudaMalloc 3 MiB and 4 MiB, prints "pid N: second batch", waits for stdin
//       to close, frees all four.
//   trace_workload frag
//       device 0: 15 x cudaMalloc 4 MiB (each prints "pid N: block I at 0xPTR"), then frees
//       blocks 1, 3, 5, 7, 9, 12 and 13; prints "pid N: fragmented", waits for stdin to
//       close, frees the rest. On a 64 MiB device whose arena gives the blocks one after the
//       other: live 0, 2, 4, 6, 8, 10, 11, 14 (32 MiB); free extents 4 MiB x 5, 8 MiB (12-13)
//       and 4 MiB (15): free 32 MiB, largest 8 MiB, ratio 0.75.
// Every mode prints "pid N: ..." lines on stdout (flushed); any failed call ends the program
// with status 1 and names the call on stderr.
#include "workloads/cuda_min.h"

#include <barrier>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

extern "C" {
// Runtime
int cudaMallocManaged(void** ptr, size_t size, unsigned flags);
int cudaMallocHost(void** ptr, size_t size);
int cudaFreeHost(void* ptr);
int cudaMallocAsync(void** ptr, size_t size, void* stream);
int cudaFreeAsync(void* ptr, void* stream);
int cudaStreamSynchronize(void* stream);
// Driver
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
int cuInit(unsigned flags);
int cuDeviceGet(int* dev, int ordinal);
int cuCtxCreate_v2(CUcontext* ctx, unsigned flags, int dev);
int cuCtxCreate_v4(CUcontext* ctx, void* params, unsigned flags, int dev);
int cuCtxDestroy_v2(CUcontext ctx);
int cuCtxSetCurrent(CUcontext ctx);
int cuDevicePrimaryCtxRetain(CUcontext* ctx, int dev);
int cuDevicePrimaryCtxRelease_v2(int dev);
int cuMemAlloc_v2(CUdeviceptr* ptr, size_t size);
int cuMemFree_v2(CUdeviceptr ptr);
int cuMemCreate(unsigned long long* handle, size_t size, const void* prop, unsigned long long flags);
int cuMemRelease(unsigned long long handle);
}

namespace {

constexpr size_t kMiB = 1 << 20;
constexpr unsigned kAttachGlobal = 1;

// CUmemAllocationProp (32 bytes): pinned memory on a device.
struct MemAllocationProp {
  int type;  // CU_MEM_ALLOCATION_TYPE_PINNED = 1
  int requested_handle_types;
  int location_type;  // CU_MEM_LOCATION_TYPE_DEVICE = 1
  int location_id;
  void* win32_metadata;
  unsigned char compression, rdma;
  unsigned short usage;
  unsigned char reserved[4];
};
static_assert(sizeof(MemAllocationProp) == 32);

void ok(int err, const char* what) {
  if (err == 0) return;
  std::fprintf(stderr, "trace_workload: %s failed with %d\n", what, err);
  std::exit(1);
}

void say(const char* what) {
  std::printf("pid %d: %s\n", static_cast<int>(::getpid()), what);
  std::fflush(stdout);
}

void wait_for_eof() {
  while (std::getchar() != EOF) {}
}

void mixed(bool hold) {
  void *a = nullptr, *managed = nullptr, *host = nullptr;
  ok(cudaSetDevice(1), "cudaSetDevice(1)");
  ok(cudaMalloc(&a, 3 * kMiB), "cudaMalloc 3 MiB");
  ok(cudaMallocManaged(&managed, 2 * kMiB, kAttachGlobal), "cudaMallocManaged 2 MiB");
  ok(cudaMallocHost(&host, 1 * kMiB), "cudaMallocHost 1 MiB");
  int dev = -1;
  CUcontext ctx = nullptr;
  CUdeviceptr d = 0;
  ok(cuInit(0), "cuInit");
  ok(cuDeviceGet(&dev, 5), "cuDeviceGet(5)");
  ok(cuCtxCreate_v2(&ctx, 0, dev), "cuCtxCreate_v2(device 5)");
  ok(cuMemAlloc_v2(&d, 5 * kMiB), "cuMemAlloc_v2 5 MiB");
  say("holding");
  if (hold) wait_for_eof();
  ok(cudaFree(a), "cudaFree 3 MiB");
  ok(cudaFreeHost(host), "cudaFreeHost 1 MiB");
  ok(cuMemFree_v2(d), "cuMemFree_v2 5 MiB");
  say("freed");
}

void threads() {
  // Two threads share device 4: each thread's allocations must land on its own device.
  constexpr int kDevices[] = {0, 4, 7, 4};
  constexpr int kThreads = 4;
  std::barrier all_live(kThreads);
  std::mutex mu;
  std::condition_variable cv;
  int turn = kThreads - 1;  // thread 3 allocates first, then 2, 1, 0
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] {
      void *p = nullptr, *extra = nullptr;
      ok(cudaSetDevice(kDevices[i]), "cudaSetDevice");
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return turn == i; });
        ok(cudaMalloc(&p, static_cast<size_t>(i + 1) * kMiB), "cudaMalloc (i+1) MiB");
        if (i % 2) ok(cudaMalloc(&extra, kMiB), "cudaMalloc 1 MiB");
        --turn;
      }
      cv.notify_all();
      all_live.arrive_and_wait();
      ok(cudaFree(p), "cudaFree (i+1) MiB");
    });
  for (auto& t : ts) t.join();
  say("threads done");
}

void ctx() {
  int dev = -1;
  CUcontext c = nullptr;
  CUdeviceptr big = 0, small = 0;
  ok(cuInit(0), "cuInit");
  ok(cuDeviceGet(&dev, 6), "cuDeviceGet(6)");
  ok(cuCtxCreate_v4(&c, nullptr, 0, dev), "cuCtxCreate_v4(device 6)");
  ok(cuMemAlloc_v2(&big, 4 * kMiB), "cuMemAlloc_v2 4 MiB");
  ok(cuMemAlloc_v2(&small, 2 * kMiB), "cuMemAlloc_v2 2 MiB");
  ok(cuMemFree_v2(small), "cuMemFree_v2 2 MiB");
  ok(cuCtxDestroy_v2(c), "cuCtxDestroy_v2");
  say("context destroyed");
}

void primary() {
  int dev = -1;
  CUcontext c = nullptr;
  CUdeviceptr p = 0;
  ok(cuInit(0), "cuInit");
  ok(cuDeviceGet(&dev, 3), "cuDeviceGet(3)");
  ok(cuDevicePrimaryCtxRetain(&c, dev), "cuDevicePrimaryCtxRetain(device 3)");
  ok(cuCtxSetCurrent(c), "cuCtxSetCurrent");
  ok(cuMemAlloc_v2(&p, 4 * kMiB), "cuMemAlloc_v2 4 MiB");
  ok(cuCtxSetCurrent(nullptr), "cuCtxSetCurrent(NULL)");
  ok(cuDevicePrimaryCtxRelease_v2(dev), "cuDevicePrimaryCtxRelease_v2");
  say("primary released");
}

void async() {
  void *a = nullptr, *b = nullptr;
  ok(cudaSetDevice(2), "cudaSetDevice(2)");
  ok(cudaMallocAsync(&a, 3 * kMiB, nullptr), "cudaMallocAsync 3 MiB");
  ok(cudaMallocAsync(&b, 1 * kMiB, nullptr), "cudaMallocAsync 1 MiB");
  ok(cudaFreeAsync(a, nullptr), "cudaFreeAsync 3 MiB");
  ok(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  ok(cudaFreeAsync(b, nullptr), "cudaFreeAsync 1 MiB");
  ok(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  ok(cuInit(0), "cuInit");
  MemAllocationProp prop{};
  prop.type = 1;
  prop.location_type = 1;
  prop.location_id = 3;
  unsigned long long h4 = 0, h2 = 0;
  ok(cuMemCreate(&h4, 4 * kMiB, &prop, 0), "cuMemCreate 4 MiB on device 3");
  ok(cuMemCreate(&h2, 2 * kMiB, &prop, 0), "cuMemCreate 2 MiB on device 3");
  ok(cuMemRelease(h4), "cuMemRelease 4 MiB");
  ok(cuMemRelease(h2), "cuMemRelease 2 MiB");
  say("async and VMM done");
}

int spawn(int dev, size_t mib, char** argv) {
  void* p = nullptr;
  ok(cudaSetDevice(dev), "cudaSetDevice");
  ok(cudaMalloc(&p, mib * kMiB), "cudaMalloc");
  say("parent allocated");
  const pid_t child = ::fork();
  if (child < 0) ok(errno, "fork");
  if (child == 0) {
    ::execv(argv[0], argv);
    std::fprintf(stderr, "trace_workload: cannot exec %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int st = 0;
  while (::waitpid(child, &st, 0) < 0 && errno == EINTR) {}
  ok(cudaFree(p), "cudaFree");
  say("parent freed");
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

[[noreturn]] void child() {
  void *p = nullptr, *leak = nullptr;
  ok(cudaSetDevice(1), "cudaSetDevice(1)");
  ok(cudaMalloc(&p, 2 * kMiB), "cudaMalloc 2 MiB");
  ok(cudaFree(p), "cudaFree 2 MiB");
  ok(cudaMalloc(&leak, kMiB), "cudaMalloc 1 MiB");
  std::exit(0);
}

// One batch of forks(): the i-th child of the whole run execs when i % 4 == 3. A gated child
// blocks until the gate's write end is closed by everyone (the read returns end of file).
void fork_batch(int n, int first, const int gate[2], std::vector<pid_t>& children) {
  for (int i = first; i < first + n; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) ok(errno, "fork");
    if (pid == 0) {
      if (gate) {
        ::close(gate[1]);
        char c;
        while (::read(gate[0], &c, 1) < 0 && errno == EINTR) {}
      }
      if (i % 4 == 3) {
        char self[] = "/proc/self/exe", mode[] = "child";
        char* args[] = {self, mode, nullptr};
        ::execv(self, args);
        ok(errno, "exec /proc/self/exe child");
      }
      child();
    }
    children.push_back(pid);
  }
}

int forks(int n, bool gated) {
  int gate[2] = {-1, -1};
  if (gated && ::pipe(gate) != 0) ok(errno, "pipe");
  std::vector<pid_t> children;
  fork_batch(n, 0, gated ? gate : nullptr, children);
  void* p = nullptr;
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  ok(cudaMalloc(&p, 4 * kMiB), "cudaMalloc 4 MiB");
  fork_batch(n, n, gated ? gate : nullptr, children);
  if (gated) {
    ::close(gate[0]);
    say("children waiting");
    wait_for_eof();
    ::close(gate[1]);
  }
  int failed = 0;
  for (pid_t c : children) {
    int st = 0;
    while (::waitpid(c, &st, 0) < 0 && errno == EINTR) {}
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && failed++ == 0)
      std::fprintf(stderr, "trace_workload: child %d ended with wait status %d\n", static_cast<int>(c), st);
  }
  ok(cudaFree(p), "cudaFree 4 MiB");
  say("forks done");
  return failed ? 1 : 0;
}

void churn(long pairs, size_t kib) {
  void *held = nullptr, *leak = nullptr;
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  ok(cudaMalloc(&held, 8 * kMiB), "cudaMalloc 8 MiB");
  for (long i = 0; i < pairs; ++i) {
    void* p = nullptr;
    ok(cudaMalloc(&p, kib << 10), "cudaMalloc");
    ok(cudaFree(p), "cudaFree");
  }
  ok(cudaFree(held), "cudaFree 8 MiB");
  ok(cudaMalloc(&leak, kMiB), "cudaMalloc 1 MiB");
  say("churn done");
}

// Whether the mapping holding `addr` is backed by transparent huge pages (/proc/self/smaps).
bool in_huge_page(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::strtol(line.c_str() + 14, nullptr, 10) > 0;
    }
  }
  return false;
}

void huge(long pairs) {
  constexpr size_t kHuge = 2 * kMiB;
  void* raw = mmap(nullptr, 2 * kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("trace_workload: mmap");
    std::exit(1);
  }
  char* region = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  (void)madvise(region, kHuge, MADV_HUGEPAGE);  // a kernel without THP leaves small pages
  std::memset(region, 0, kHuge);
  void** out = reinterpret_cast<void**>(region + 12345 * sizeof(void*));  // not the first small page
  say(in_huge_page(out) ? "huge page: yes" : "huge page: no");
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  for (long i = 0; i < pairs; ++i) {
    ok(cudaMalloc(out, 4096), "cudaMalloc");
    ok(cudaFree(*out), "cudaFree");
  }
  say("huge done");
}

uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void grow(long steps, size_t mib, long period_ms, bool hold) {
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  std::vector<void*> held(static_cast<size_t>(steps), nullptr);
  uint64_t first = 0, last = 0;
  timespec next{};
  ::clock_gettime(CLOCK_MONOTONIC, &next);
  for (long i = 0; i < steps; ++i) {
    ok(cudaMalloc(&held[static_cast<size_t>(i)], mib * kMiB), "cudaMalloc (grow)");
    last = now_ns();
    if (i == 0) first = last;
    if (i + 1 == steps) break;
    next.tv_nsec += period_ms * 1'000'000L;
    while (next.tv_nsec >= 1'000'000'000L) next.tv_nsec -= 1'000'000'000L, next.tv_sec += 1;
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {}
  }
  std::printf("pid %d: grown %ld x %zu MiB, first %llu last %llu\n", static_cast<int>(::getpid()), steps, mib,
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(last));
  std::fflush(stdout);
  if (hold) wait_for_eof();
  for (void* p : held) ok(cudaFree(p), "cudaFree (grow)");
}

void aged() {
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  void* p[4] = {};
  ok(cudaMalloc(&p[0], 1 * kMiB), "cudaMalloc 1 MiB");
  ok(cudaMalloc(&p[1], 2 * kMiB), "cudaMalloc 2 MiB");
  say("first batch");
  while (true) {
    const int c = std::getchar();
    if (c == '\n' || c == EOF) break;
  }
  ok(cudaMalloc(&p[2], 3 * kMiB), "cudaMalloc 3 MiB");
  ok(cudaMalloc(&p[3], 4 * kMiB), "cudaMalloc 4 MiB");
  say("second batch");
  wait_for_eof();
  for (void* q : p) ok(cudaFree(q), "cudaFree (aged)");
}

void frag() {
  ok(cudaSetDevice(0), "cudaSetDevice(0)");
  void* b[15] = {};
  for (int i = 0; i < 15; ++i) {
    ok(cudaMalloc(&b[i], 4 * kMiB), "cudaMalloc 4 MiB (frag)");
    std::printf("pid %d: block %d at %p\n", static_cast<int>(::getpid()), i, b[i]);
  }
  for (int i : {1, 3, 5, 7, 9, 12, 13}) {
    ok(cudaFree(b[i]), "cudaFree (frag)");
    b[i] = nullptr;
  }
  say("fragmented");
  wait_for_eof();
  for (void* q : b)
    if (q) ok(cudaFree(q), "cudaFree (frag)");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "mixed") {
    const bool hold = argc > 2 && std::string(argv[2]) == "hold";
    const int arg = hold ? 3 : 2;
    mixed(hold);
    return argc > arg ? std::atoi(argv[arg]) : 0;
  }
  if (mode == "threads") return threads(), 0;
  if (mode == "ctx") return ctx(), 0;
  if (mode == "async") return async(), 0;
  if (mode == "primary") return primary(), 0;
  if (mode == "all") {
    mixed(false);
    ctx();
    async();
    threads();
    return 0;
  }
  if (mode == "spawn" && argc > 4) return spawn(std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10), argv + 4);
  if (mode == "churn" && argc > 3) return churn(std::atol(argv[2]), std::strtoull(argv[3], nullptr, 10)), 0;
  if (mode == "huge" && argc > 2) return huge(std::atol(argv[2])), 0;
  if (mode == "forks" && argc > 2) return forks(std::atoi(argv[2]), argc > 3 && std::string(argv[3]) == "gate");
  if (mode == "child") child();
  if (mode == "grow" && argc > 4)
    return grow(std::atol(argv[2]), std::strtoull(argv[3], nullptr, 10), std::atol(argv[4]),
                argc > 5 && std::string(argv[5]) == "hold"),
           0;
  if (mode == "aged") return aged(), 0;
  if (mode == "frag") return frag(), 0;
  std::fprintf(stderr,
               "usage: trace_workload mixed [hold] [EXIT] | threads | ctx | async | primary | all | "
               "spawn DEV MIB PROGRAM [ARGS...] | churn PAIRS KIB | huge PAIRS | forks N [gate] | child | "
               "grow STEPS MIB PERIOD_MS [hold] | aged | frag\n");
  return 2;
}
