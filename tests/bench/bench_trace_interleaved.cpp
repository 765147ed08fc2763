// SPDX-License-Identifier: Apache-2.0
// The overhead benchmark's workload: one process per library copy (dlopen'ed, so each copy
// can have its own tracer or none), taking turns. A token goes round the processes through
// pipes; the holder runs BLOCK cudaMalloc(4 KiB) + cudaFree pairs, timing them, and passes it
// on. Every tracer is live the whole time and every copy sees the machine in each of its
// phases, so the copies' costs are compared over milliseconds, not over separate runs.
//   bench_trace_interleaved BLOCK TURNS LIB...
// Prints, for each LIB in the order given: "LIB ns_per_pair=X".
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using MallocFn = int (*)(void**, size_t);
using FreeFn = int (*)(void*);
using SetDeviceFn = int (*)(int);

struct Result {
  int index;
  double ns_per_pair;
};

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // EOF: the writer died
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// One copy's process: its turns, then its mean time per pair on `results`. Exits non-zero on
// any failure; the next process then reads EOF instead of a token and stops too. exit(), not
// _exit(): the backend's exit handlers give its slot in the shared device ledger back.
[[noreturn]] void run_copy(int index, int copies, const char* lib, long block, long turns, int token_in, int token_out,
                           int results) {
  // Each copy books into a ledger of its own (FAKEGPU_LEDGER + "." + the copy's file name, the
  // same whatever the turn order): copies of two builds may use two ledger formats, and no
  // copy's books are another's business.
  if (const char* ledger = std::getenv("FAKEGPU_LEDGER"); ledger && *ledger) {
    const char* slash = std::strrchr(lib, '/');
    const std::string own = std::string(ledger) + "." + (slash ? slash + 1 : lib);
    ::setenv("FAKEGPU_LEDGER", own.c_str(), 1);
  }
  void* h = ::dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "bench_trace_interleaved: %s\n", ::dlerror());
    std::exit(1);
  }
  const auto cuda_malloc = reinterpret_cast<MallocFn>(::dlsym(h, "cudaMalloc"));
  const auto cuda_free = reinterpret_cast<FreeFn>(::dlsym(h, "cudaFree"));
  const auto set_device = reinterpret_cast<SetDeviceFn>(::dlsym(h, "cudaSetDevice"));
  if (cuda_malloc == nullptr || cuda_free == nullptr || set_device == nullptr) {
    std::fprintf(stderr, "bench_trace_interleaved: %s lacks cudaMalloc, cudaFree or cudaSetDevice\n", lib);
    std::exit(1);
  }
  void* warm = nullptr;  // backend initialisation, outside the timing
  if (set_device(0) != 0 || cuda_malloc(&warm, 4096) != 0 || cuda_free(warm) != 0) {
    std::fprintf(stderr, "bench_trace_interleaved: %s: the warm-up allocation failed\n", lib);
    std::exit(1);
  }
  using Clock = std::chrono::steady_clock;
  double ns = 0;
  for (long t = 0; t < turns; ++t) {
    char token = 0;
    if (!read_all(token_in, &token, 1)) std::exit(1);
    const auto t0 = Clock::now();
    for (long i = 0; i < block; ++i) {
      void* p = nullptr;
      if (cuda_malloc(&p, 4096) != 0 || cuda_free(p) != 0) {
        std::fprintf(stderr, "bench_trace_interleaved: %s: cudaMalloc/cudaFree failed\n", lib);
        std::exit(1);
      }
    }
    ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    // After the last copy's last turn no one is waiting (the first copy may have exited).
    const bool last_turn = t + 1 == turns && index + 1 == copies;
    if (!last_turn && !write_all(token_out, &token, 1)) std::exit(1);
  }
  const Result res{index, ns / static_cast<double>(block * turns)};
  std::exit(write_all(results, &res, sizeof res) ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_trace_interleaved BLOCK TURNS LIB...\n");
    return 2;
  }
  const long block = std::atol(argv[1]), turns = std::atol(argv[2]);
  if (block <= 0 || turns <= 0) {
    std::fprintf(stderr, "bench_trace_interleaved: BLOCK and TURNS must be positive integers\n");
    return 2;
  }
  const int n = argc - 3;
  std::vector<int> token(2 * n);  // token[2i]: copy i reads its turn; token[2i+1]: hands it over
  for (int i = 0; i < n; ++i)
    if (::pipe(&token[2 * i]) != 0) {
      std::perror("bench_trace_interleaved: pipe");
      return 1;
    }
  int results[2];
  if (::pipe(results) != 0) {
    std::perror("bench_trace_interleaved: pipe");
    return 1;
  }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("bench_trace_interleaved: fork");
      return 1;
    }
    if (pid == 0) {
      // Only its own turn's read end and the next copy's write end stay open, so a copy that
      // dies hands its successor EOF rather than leaving it waiting.
      const int in = token[2 * i], out = token[2 * ((i + 1) % n) + 1];
      for (int fd : token)
        if (fd != in && fd != out) ::close(fd);
      ::close(results[0]);
      run_copy(i, n, argv[3 + i], block, turns, in, out, results[1]);
    }
    children.push_back(pid);
  }
  const char first = 1;
  const bool started = write_all(token[1], &first, 1);
  for (int fd : token) ::close(fd);
  ::close(results[1]);
  std::vector<double> ns(n, -1);
  int got = 0;
  for (Result r{}; started && got < n && read_all(results[0], &r, sizeof r); ++got)
    if (r.index >= 0 && r.index < n) ns[r.index] = r.ns_per_pair;
  bool ok = started && got == n;
  for (pid_t pid : children) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = false;
  }
  if (!ok) {
    std::fprintf(stderr, "bench_trace_interleaved: a library's process failed (see above)\n");
    return 1;
  }
  for (int i = 0; i < n; ++i) std::printf("%s ns_per_pair=%.1f\n", argv[3 + i], ns[i]);
  return 0;
}
