// SPDX-License-Identifier: Apache-2.0
// The bad-input matrix: every exported CUDA Driver, Runtime and NVML function of the API
// lists called with each bad argument its parameters admit (gen_matrix.py generates the
// cases from the .def lists and the prototypes), asserting for each case:
//   - no crash: the cases of one function run in a forked child; a signal ends that child,
//     and the next child goes on after the case that killed it;
//   - no hang: a case that has not answered within kCaseTimeout is killed the same way;
//   - no write outside an allocation: canary bytes around every buffer the call gets
//     (out-pointers, host bytes, the device allocation and its neighbours) and every input
//     buffer it may only read are checked after the call;
//   - the documented code: the rule table of gen_matrix.py, per-function answers from
//     expectations.txt; a NOT_SUPPORTED stub answers NOT_SUPPORTED to every case.
//
//   badinput_matrix [--family driver|runtime|nvml] [--only NAME]... [-v]
//
// Prints one line per failure and the totals; exits 1 on any crash, hang, canary violation,
// wrong code or expected failure that passes (remove it from expectations.txt).
#include "badinput/matrix.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace badinput::gen {
#include "badinput_cases.inc"
}  // namespace badinput::gen

namespace badinput {
namespace {

constexpr int kCaseTimeoutMs = 10000;
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kGuard = 64;    // canary bytes before and after each host buffer
constexpr size_t kBlock = 4096;  // the arena block of a kAllocSize allocation

// PTX with one kernel: the module, function, library and kernel handles come from it.
const char* const kPtx = R"(
.version 8.0
.target sm_70
.address_size 64

.visible .entry add_one(
	.param .u64 add_one_param_0
)
{
	ret;
}
)";

// ---- host buffers with guards --------------------------------------------------------------------
// Layout: [guard][slot 0][guard][slot 1][guard] ... : kSlots out slots, then the input bytes,
// the zeroed input, the host bytes and the text.
enum Region { kInBytes = kSlots, kInZero, kHost, kText, kRegions };
constexpr size_t kStride = kGuard + kSlotSize;

unsigned char* region(unsigned char* base, int r) { return base + kGuard + static_cast<size_t>(r) * kStride; }

const char* const kTextValue = "0000:07:00.0";  // a PCI bus id string: also a plain name

void fill_host(unsigned char* base) {
  std::memset(base, kCanary, kStride * kRegions + kGuard);
  for (int r = 0; r < kRegions; ++r) std::memset(region(base, r), 0, kSlotSize);
  std::memset(region(base, kInBytes), 0x11, kSlotSize);
  std::memcpy(region(base, kText), kTextValue, std::strlen(kTextValue) + 1);
}

// Which guard or read-only buffer changed: "" when none.
std::string check_host(unsigned char* base) {
  for (int r = 0; r <= kRegions; ++r) {
    const unsigned char* g = base + static_cast<size_t>(r) * kStride;
    for (size_t i = 0; i < kGuard; ++i)
      if (g[i] != kCanary) return "host guard before buffer " + std::to_string(r);
  }
  for (size_t i = 0; i < kSlotSize; ++i) {
    if (region(base, kInBytes)[i] != 0x11) return "a const input buffer (bytes)";
    if (region(base, kInZero)[i] != 0) return "a const input buffer (zeroed descriptor or array)";
  }
  if (std::strcmp(reinterpret_cast<char*>(region(base, kText)), kTextValue) != 0) return "a const input string";
  return "";
}

// ---- the device allocation: three neighbouring blocks, the middle one used -----------------------
uintptr_t g_blocks[3] = {};

void fill_device() {
  for (uintptr_t b : g_blocks) std::memset(reinterpret_cast<void*>(b), kCanary, kBlock);
  std::memset(reinterpret_cast<void*>(g_blocks[1]), 0, kAllocSize);
}
std::string check_device() {
  for (int k = 0; k < 3; ++k) {
    const auto* p = reinterpret_cast<const unsigned char*>(g_blocks[k]);
    for (size_t i = k == 1 ? kAllocSize : 0; i < kBlock; ++i)
      if (p[i] != kCanary)
        return k == 1 ? "device bytes past the allocation's end" : "a neighbouring device allocation";
  }
  return "";
}

}  // namespace

// ---- Fixture's value producers ---------------------------------------------------------------------
void* Fixture::sym(Lib lib, const char* name, const char* node) {
  void* h = libs[static_cast<int>(lib)];
  void* p = node ? dlvsym(h, name, node) : dlsym(h, name);
  if (!p) {
    std::fprintf(stderr, "badinput: missing export %s%s%s\n", name, node ? "@" : "", node ? node : "");
    _exit(4);
  }
  return p;
}
uint64_t Fixture::handle(Hk k, Mut m) const {
  const bool value_kind = k == Hk::memhandle || k == Hk::texobj || k == Hk::surfobj;
  if (m == Mut::garbage) return value_kind ? kGarbageValue : kGarbagePtr;
  if (m == Mut::destroyed) return destroyed[static_cast<int>(k)];
  return valid[static_cast<int>(k)];
}
uint64_t Fixture::dptr(Mut m) const {
  if (m == Mut::garbage) return kGarbagePtr;
  if (m == Mut::wrap) return dev + kAllocSize - 1000;
  return dev;
}
void* Fixture::out_slot(int i, Mut m) {
  if (m == Mut::null) return nullptr;
  return region(slots, i % kSlots);
}
const void* Fixture::in_bytes(bool text) const { return region(slots, text ? kText : kInBytes); }
const void* Fixture::in_zero() const { return region(slots, kInZero); }
void* Fixture::host_bytes() { return region(slots, kHost); }
size_t Fixture::size(Mut m) const {
  switch (m) {
    case Mut::huge: return SIZE_MAX;
    case Mut::past_end: return kAllocSize + 1;
    case Mut::wrap: return SIZE_MAX - 500;  // from 1000 bytes before the end: past the top of the address space
    case Mut::zero: return 0;
    default: return kValidSize;
  }
}

namespace {

const char* mut_name(Mut m) {
  switch (m) {
    case Mut::none: return "valid";
    case Mut::null: return "NULL";
    case Mut::garbage: return "garbage";
    case Mut::destroyed: return "destroyed";
    case Mut::out_of_range: return "out-of-range";
    case Mut::unknown_bits: return "unknown-bits";
    case Mut::huge: return "SIZE_MAX";
    case Mut::past_end: return "past-end";
    case Mut::wrap: return "wrapping";
    case Mut::zero: return "zero";
  }
  return "?";
}

Fixture g_fx;

template <class F>
F bind(Lib lib, const char* name, const char* node = nullptr) {
  return reinterpret_cast<F>(g_fx.sym(lib, name, node));
}
#define DRV(name) bind<decltype(&fgimpl_##name)>(Lib::cuda, #name)
#define RT(name) bind<decltype(&fgimpl_##name)>(Lib::cudart, #name, "libcudart.so.13")
#define NV(name) bind<decltype(&fgimpl_##name)>(Lib::nvml, #name)

[[noreturn]] void setup_failed(const char* what, long long code) {
  std::fprintf(stderr, "badinput: fixture: %s returned %lld\n", what, code);
  _exit(3);
}
#define SETUP(call)                                     \
  do {                                                  \
    const long long rc_ = static_cast<long long>(call); \
    if (rc_ != 0) setup_failed(#call, rc_);             \
  } while (0)

void set(Hk k, uint64_t v) { g_fx.valid[static_cast<int>(k)] = v; }
void set_destroyed(Hk k, uint64_t v) { g_fx.destroyed[static_cast<int>(k)] = v; }
template <class T>
uint64_t bits(T v) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<uintptr_t>(v);
  else
    return static_cast<uint64_t>(v);
}

// Live objects of every kind the fixture can make, then one of each kind made and destroyed
// (after the live ones, so no live object reuses a destroyed one's address).
void build_fixture() {
  using namespace fgapi;
  SETUP(DRV(cuInit)(0));
  CUcontext ctx = nullptr;
  SETUP(DRV(cuDevicePrimaryCtxRetain)(&ctx, 0));
  SETUP(DRV(cuCtxSetCurrent)(ctx));
  SETUP(RT(cudaSetDevice)(0));
  set(Hk::ctx, bits(ctx));

  for (uintptr_t& b : g_blocks) {
    CUdeviceptr p = 0;
    SETUP(DRV(cuMemAlloc_v2)(&p, kAllocSize));
    b = p;
  }
  g_fx.dev = g_blocks[1];

  auto make_objects = [&](bool destroy) {
    auto put = destroy ? set_destroyed : set;
    CUstream s = nullptr;
    SETUP(DRV(cuStreamCreate)(&s, 0));
    CUevent e = nullptr;
    SETUP(DRV(cuEventCreate)(&e, 0));
    CUmodule mod = nullptr;
    SETUP(DRV(cuModuleLoadData)(&mod, kPtx));
    CUfunction f = nullptr;
    SETUP(DRV(cuModuleGetFunction)(&f, mod, "add_one"));
    CUlibrary lib = nullptr;
    SETUP(DRV(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k = nullptr;
    SETUP(DRV(cuLibraryGetKernel)(&k, lib, "add_one"));
    CUgraph g = nullptr;
    SETUP(DRV(cuGraphCreate)(&g, 0));
    CUgraphNode n = nullptr;
    SETUP(DRV(cuGraphAddEmptyNode)(&n, g, nullptr, 0));
    CUgraphExec x = nullptr;
    SETUP(DRV(cuGraphInstantiateWithFlags)(&x, g, 0));
    CUmemPoolProps pp{};
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemoryPool pool = nullptr;
    SETUP(DRV(cuMemPoolCreate)(&pool, &pp));
    CUmemAllocationProp ap{};
    ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    SETUP(DRV(cuMemGetAllocationGranularity)(&gran, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle mh = 0;
    SETUP(DRV(cuMemCreate)(&mh, gran, &ap, 0));
    CUlinkState link = nullptr;
    SETUP(DRV(cuLinkCreate_v2)(0, nullptr, nullptr, &link));
    CUuserObject uo = nullptr;
    SETUP(DRV(cuUserObjectCreate)(
        &uo, g_fx.host_bytes(), [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    nvmlEventSet_t es = nullptr;
    SETUP(NV(nvmlEventSetCreate)(&es));
    put(Hk::stream, bits(s));
    put(Hk::event, bits(e));
    put(Hk::module, bits(mod));
    put(Hk::function, bits(f));
    put(Hk::library, bits(lib));
    put(Hk::kernel, bits(k));
    put(Hk::graph, bits(g));
    put(Hk::node, bits(n));
    put(Hk::exec, bits(x));
    put(Hk::pool, bits(pool));
    put(Hk::memhandle, bits(mh));
    put(Hk::link, bits(link));
    put(Hk::userobj, bits(uo));
    put(Hk::nvml_eventset, bits(es));
    if (!destroy) return;
    SETUP(DRV(cuStreamDestroy_v2)(s));
    SETUP(DRV(cuEventDestroy_v2)(e));
    SETUP(DRV(cuModuleUnload)(mod));
    SETUP(DRV(cuLibraryUnload)(lib));
    SETUP(DRV(cuGraphExecDestroy)(x));
    SETUP(DRV(cuGraphDestroy)(g));
    SETUP(DRV(cuMemPoolDestroy)(pool));
    SETUP(DRV(cuMemRelease)(mh));
    SETUP(DRV(cuLinkDestroy)(link));
    SETUP(DRV(cuUserObjectRelease)(uo, 1));
    SETUP(NV(nvmlEventSetFree)(es));
  };
  SETUP(NV(nvmlInit_v2)());
  nvmlDevice_t nd = nullptr;
  SETUP(NV(nvmlDeviceGetHandleByIndex_v2)(0, &nd));
  set(Hk::nvml_device, bits(nd));
  make_objects(false);
  make_objects(true);
  CUcontext dead = nullptr;
  SETUP(DRV(cuCtxCreate_v4)(&dead, nullptr, 0, 0));
  SETUP(DRV(cuCtxDestroy_v2)(dead));
  SETUP(DRV(cuCtxSetCurrent)(ctx));
  set_destroyed(Hk::ctx, bits(dead));
}

// ---- the child: runs the cases of one function from `first`, reporting each on `fd` -------------
void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(5);
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child(const FunctionCases& f, size_t first, int fd) {
  static unsigned char host[kStride * kRegions + kGuard];
  g_fx.slots = host;
  build_fixture();
  auto set_current = DRV(cuCtxSetCurrent);
  auto clear_last = RT(cudaGetLastError);
  const auto ctx = reinterpret_cast<fgapi::CUcontext>(g_fx.valid[static_cast<int>(Hk::ctx)]);
  const Case* cases = f.cases.begin();
  for (size_t i = first; i < f.cases.size(); ++i) {
    const Case& c = cases[i];
    fill_host(host);
    fill_device();
    set_current(ctx);
    clear_last();
    write_all(fd, "B " + std::to_string(i) + "\n");
    const long long rc = f.thunk(g_fx, c.param, c.mut);
    std::string bad = check_host(host);
    if (bad.empty()) bad = check_device();
    write_all(fd, "E " + std::to_string(i) + " " + std::to_string(rc) + " " + bad + "\n");
  }
  _exit(0);
}

struct Totals {
  int functions = 0, stubs = 0;
  long cases = 0, crashes = 0, hangs = 0, canary = 0, wrong = 0, xfail = 0, xpass = 0, setup = 0;
};

std::string describe(const FunctionCases& f, const Case& c) {
  return std::string(f.name) + "(" + c.param_name + "=" + mut_name(c.mut) + ")";
}

// Runs one function's cases, restarting a child after a case that crashed or hung.
void run_function(const FunctionCases& f, Totals& t, bool verbose) {
  size_t next = 0;
  while (next < f.cases.size()) {
    int p[2];
    if (::pipe(p) != 0) {
      std::perror("badinput: pipe");
      std::exit(2);
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("badinput: fork");
      std::exit(2);
    }
    if (pid == 0) {
      ::close(p[0]);
      child(f, next, p[1]);
    }
    ::close(p[1]);
    std::string buf;
    long begun = -1;
    bool hung = false;
    for (;;) {
      pollfd pf{p[0], POLLIN, 0};
      const int pr = ::poll(&pf, 1, kCaseTimeoutMs);
      if (pr == 0) {
        hung = true;
        ::kill(pid, SIGKILL);
        break;
      }
      if (pr < 0 && errno == EINTR) continue;
      char chunk[4096];
      const ssize_t n = ::read(p[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        const std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (line[0] == 'B') {
          begun = std::stol(line.substr(2));
          continue;
        }
        // E index code [what changed]
        char* end = nullptr;
        const long idx = std::strtol(line.c_str() + 2, &end, 10);
        const long long rc = std::strtoll(end, &end, 10);
        std::string bad = *end == ' ' ? std::string(end + 1) : std::string();
        const Case& c = f.cases.begin()[idx];
        ++t.cases;
        if (!bad.empty()) {
          ++t.canary;
          std::printf("WRITE OUTSIDE %s: %s changed (returned %lld)\n", describe(f, c).c_str(), bad.c_str(), rc);
        } else if (c.xfail) {
          if (rc == c.expected) {
            ++t.xpass;
            std::printf("XPASS %s: returned %lld as documented; remove its xfail line\n", describe(f, c).c_str(), rc);
          } else {
            ++t.xfail;
            if (verbose) std::printf("xfail %s: %lld, documented %lld\n", describe(f, c).c_str(), rc, c.expected);
          }
        } else if (rc != c.expected) {
          ++t.wrong;
          std::printf("WRONG CODE %s: returned %lld, expected %lld\n", describe(f, c).c_str(), rc, c.expected);
        } else if (verbose) {
          std::printf("ok %s: %lld\n", describe(f, c).c_str(), rc);
        }
        begun = -1;
        next = static_cast<size_t>(idx) + 1;
      }
    }
    ::close(p[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (begun >= 0) {
      const Case& c = f.cases.begin()[begun];
      ++t.cases;
      if (hung) {
        ++t.hangs;
        std::printf("HANG %s: no answer within %d ms\n", describe(f, c).c_str(), kCaseTimeoutMs);
      } else {
        ++t.crashes;
        std::printf("CRASH %s: %s\n", describe(f, c).c_str(),
                    WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "the process exited during the call");
      }
      next = static_cast<size_t>(begun) + 1;
    } else if (next < f.cases.size()) {
      // The child ended before its next case: the fixture could not be built.
      ++t.setup;
      std::printf("SETUP FAILED for %s (exit status %d)\n", f.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      return;
    }
  }
}

const char* family_name(Family f) { return f == Family::driver ? "driver" : f == Family::runtime ? "runtime" : "nvml"; }

}  // namespace
}  // namespace badinput

int main(int argc, char** argv) {
  using namespace badinput;
  ::setenv("FAKEGPU_ISOLATED", "1", 0);
  ::setenv("FAKEGPU_REPORT", "off", 0);
  ::unsetenv("FAKEGPU_STRICT");
  std::string family;
  std::vector<std::string> only;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--family" && i + 1 < argc) {
      family = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only.emplace_back(argv[++i]);
    } else if (a == "-v") {
      verbose = true;
    } else {
      std::fprintf(stderr, "usage: %s [--family driver|runtime|nvml] [--only NAME]... [-v]\n", argv[0]);
      return 2;
    }
  }
  const char* dir = std::getenv("FAKEGPU_TEST_LIBDIR");
  std::string libdir = dir && *dir ? dir : FAKEGPU_TEST_LIBDIR;
  const char* names[3] = {"libcuda.so.1", "libcudart.so.13", "libnvidia-ml.so.1"};
  for (int i = 0; i < 3; ++i) {
    const std::string path = libdir + "/" + names[i];
    g_fx.libs[i] = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!g_fx.libs[i]) {
      std::fprintf(stderr, "badinput: %s\n", dlerror());
      return 2;
    }
  }
  Totals t;
  for (const auto& f : gen::kFunctions) {
    if (!family.empty() && family != family_name(f.family)) continue;
    bool want = only.empty();
    for (const auto& o : only) want = want || o == f.name;
    if (!want) continue;
    ++t.functions;
    t.stubs += f.stub;
    run_function(f, t, verbose);
  }
  int excluded = 0;
  for (const auto& e : gen::kExcluded) {
    if (!e.name) continue;
    if (!family.empty()) {
      // An excluded name's family: the export lists' prefixes.
      const std::string n = e.name;
      const char* fam = n.rfind("nvml", 0) == 0                              ? "nvml"
                        : (n.rfind("cu", 0) == 0 && n.rfind("cuda", 0) != 0) ? "driver"
                                                                             : "runtime";
      if (family != fam) continue;
    }
    if (verbose) std::printf("excluded %s: %s\n", e.name, e.reason);
    ++excluded;
  }
  std::printf(
      "bad-input matrix%s%s: %d functions (%d of them NOT_SUPPORTED stubs), %ld cases, %d exports excluded\n"
      "crashes %ld, hangs %ld, writes outside an allocation %ld, wrong codes %ld, fixture failures %ld, "
      "expected failures %ld, unexpected passes %ld\n",
      family.empty() ? "" : " ", family.c_str(), t.functions, t.stubs, t.cases, excluded, t.crashes, t.hangs, t.canary,
      t.wrong, t.setup, t.xfail, t.xpass);
  return t.crashes || t.hangs || t.canary || t.wrong || t.setup || t.xpass ? 1 : 0;
}
