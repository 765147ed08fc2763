// SPDX-License-Identifier: Apache-2.0
#include "kernels/executor.h"

#include "common/coverage.h"
#include "common/log.h"
#include "core/backend.h"
#include "core/fatbin.h"
#include "core/usdt.h"
#include "kernels/fiber.h"
#include "kernels/jit_api.h"
#include "kernels/ptx.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

namespace fg::kernels {

// ---- the PTX of a module ---------------------------------------------------------------------
struct Program {
  std::string text;  // empty: the module has no PTX (why: `missing`); all units' text when linked
  std::string missing;
  std::vector<std::string> units;  // a separately compiled program's PTX, one per translation unit
  std::once_flag parsed;
  std::optional<ptx::Module> module;
  std::string parse_error;
  std::once_flag digested;
  std::string digest;  // Jit::source_digest of the PTX (empty: no on-disk cache)
  // Storage of the PTX's own .global/.const variables that the program did not register
  // (string constants of printf, math tables), with their initial values.
  std::mutex mu;
  std::map<std::string, std::vector<uint64_t>> storage;  // 8-byte aligned
};

struct Compiled {
  CompiledKernel code;
  uint32_t cluster_dims[3] = {0, 0, 0};  // the kernel's own (.reqnctapercluster, __cluster_dims__)
  std::vector<ptx::Param> params;
  uint64_t param_bytes = 0;
  std::vector<uint64_t> param_offsets;
};

namespace {

using Clock = std::chrono::steady_clock;

// ---- mode ---------------------------------------------------------------------------------------
Mode read_mode() noexcept {
  const char* v = std::getenv("FAKEGPU_KERNELS");
  if (!v || !*v || std::strcmp(v, "run") == 0) return Mode::Run;
  if (std::strcmp(v, "record") == 0) return Mode::Record;
  std::fprintf(stderr, "fakegpu: FAKEGPU_KERNELS=%s is not 'run' or 'record'; running kernels\n", v);
  return Mode::Run;
}

// ---- the compiler plugin ----------------------------------------------------------------------
struct Compiler {
  std::once_flag loaded;
  Jit* jit = nullptr;
  std::string failure;  // why there is none
};
Compiler& compiler() {
  static auto* c = new Compiler;
  return *c;
}

// libfakegpu_jit.so beside the library this code is in (FAKEGPU_JIT overrides the path).
std::string plugin_path() {
  if (const char* p = std::getenv("FAKEGPU_JIT"); p && *p) return p;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_path), &info) && info.dli_fname) {
    // The library's own file, not the link it was loaded through (lib/libcuda.so.1 → ../).
    char* real = ::realpath(info.dli_fname, nullptr);
    std::string self = real ? real : info.dli_fname;
    std::free(real);
    const size_t slash = self.rfind('/');
    return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/libfakegpu_jit.so";
  }
  return "libfakegpu_jit.so";
}

Jit* jit(std::string* why) {
  Compiler& c = compiler();
  std::call_once(c.loaded, [&] {
    const std::string path = plugin_path();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      c.failure = std::string("the kernel compiler cannot be loaded (") + ::dlerror() +
                  "); build it with LLVM 14 (apt-get install llvm-14-dev) or set FAKEGPU_JIT";
      return;
    }
    auto create = reinterpret_cast<JitCreateFn>(::dlsym(h, kJitCreateSymbol));
    if (!create) {
      c.failure = path + " is not the kernel compiler (no " + kJitCreateSymbol + ")";
      return;
    }
    static const RuntimeSymbol symbols[] = {
        {"fg_rt_check", reinterpret_cast<void*>(&fg_rt_check)},
        {"fg_rt_fault", reinterpret_cast<void*>(&fg_rt_fault)},
        {"fg_rt_vprintf", reinterpret_cast<void*>(&fg_rt_vprintf)},
        {"fg_rt_assertfail", reinterpret_cast<void*>(&fg_rt_assertfail)},
        {"fg_rt_trap", reinterpret_cast<void*>(&fg_rt_trap)},
        {"fg_rt_clock", reinterpret_cast<void*>(&fg_rt_clock)},
        {"fg_rt_malloc", reinterpret_cast<void*>(&fg_rt_malloc)},
        {"fg_rt_free", reinterpret_cast<void*>(&fg_rt_free)},
        {"fg_rt_barrier", reinterpret_cast<void*>(&fg_rt_barrier)},
        {"fg_rt_poll", reinterpret_cast<void*>(&fg_rt_poll)},
        {"fg_rt_shfl", reinterpret_cast<void*>(&fg_rt_shfl)},
        {"fg_rt_vote", reinterpret_cast<void*>(&fg_rt_vote)},
        {"fg_rt_match", reinterpret_cast<void*>(&fg_rt_match)},
        {"fg_rt_redux", reinterpret_cast<void*>(&fg_rt_redux)},
        {"fg_rt_activemask", reinterpret_cast<void*>(&fg_rt_activemask)},
        {"fg_rt_warpsync", reinterpret_cast<void*>(&fg_rt_warpsync)},
        {"fg_rt_mma", reinterpret_cast<void*>(&fg_rt_mma)},
        {"fg_rt_cluster_sync", reinterpret_cast<void*>(&fg_rt_cluster_sync)},
        {"fg_rt_mapa", reinterpret_cast<void*>(&fg_rt_mapa)},
        {"fg_rt_warp_mma", reinterpret_cast<void*>(&fg_rt_warp_mma)},
        {"fg_rt_warp_vote", reinterpret_cast<void*>(&fg_rt_warp_vote)},
        {"fg_rt_warp_match", reinterpret_cast<void*>(&fg_rt_warp_match)},
        {"fg_rt_warp_redux", reinterpret_cast<void*>(&fg_rt_warp_redux)},
        {"fg_rt_f32", reinterpret_cast<void*>(&fg_rt_f32)},
        {"fg_rt_f64", reinterpret_cast<void*>(&fg_rt_f64)},
        {"fg_rt_cvt_f32", reinterpret_cast<void*>(&fg_rt_cvt_f32)},
        {"fg_rt_cvt_f64", reinterpret_cast<void*>(&fg_rt_cvt_f64)},
        {"fg_rt_tex", reinterpret_cast<void*>(&fg_rt_tex)},
        {"fg_rt_surf", reinterpret_cast<void*>(&fg_rt_surf)},
        {"fg_rt_texq", reinterpret_cast<void*>(&fg_rt_texq)},
    };
    std::string error;
    c.jit = create(kJitAbiVersion, symbols, std::size(symbols), &error);
    if (!c.jit) c.failure = "the kernel compiler did not start: " + error;
  });
  if (!c.jit) *why = c.failure;
  return c.jit;
}

// Compiled kernels by PTX text and name: a module loaded again (a service that loads its
// kernels per request) reuses the code instead of compiling and keeping another copy.
struct CodeCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<Compiled>> by_key;
};
CodeCache& code_cache() {
  static auto* c = new CodeCache;
  return *c;
}

// Books by kernel name, for the report (they outlive unloaded modules).
struct Books {
  std::mutex mu;
  std::map<std::string, KernelBooks> by_name;
};
Books& all_books() {
  static auto* b = new Books;
  return *b;
}

// ---- printf -------------------------------------------------------------------------------------
struct PrintfBuffer {
  std::mutex mu;
  std::string pending;  // formatted, written at the next synchronization
};
PrintfBuffer& printf_buffer() {
  static auto* p = new PrintfBuffer;
  return *p;
}

// ---- workers ------------------------------------------------------------------------------------
// A fixed pool: a launch's blocks are shared between the launching thread and these.
class Pool {
 public:
  // The pool of this process: a child made by fork() has none of its parent's workers (and
  // perhaps a lock one of them held), so a fork handler forgets the pool and the child makes
  // its own on first use (the parent's is left as it is). The handlers also hold the lock
  // that guards making one across the fork, so that a child never inherits it taken.
  static Pool& get() {
    if (Pool* p = current().load(std::memory_order_acquire)) return *p;
    std::lock_guard lock(making());
    if (Pool* p = current().load(std::memory_order_acquire)) return *p;
    static const bool forgets_at_fork = [] {
      ::pthread_atfork([] { making().lock(); }, [] { making().unlock(); },
                       [] {
                         current().store(nullptr, std::memory_order_relaxed);
                         making().unlock();
                       });
      return true;
    }();
    (void)forgets_at_fork;
    Pool* p = new Pool;
    current().store(p, std::memory_order_release);
    return *p;
  }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs fn(0) on this thread and fn(1..n-1) on workers; returns when all have returned.
  void run(unsigned n, const std::function<void(unsigned)>& fn) {
    n = std::min(n, size());
    if (n <= 1) {
      fn(0);
      return;
    }
    std::unique_lock launch_lock(launch_mu_);  // one multi-worker launch at a time
    {
      std::lock_guard lock(mu_);
      job_ = &fn;
      wanted_ = n - 1;
      taken_ = 0;
      done_ = 0;
      ++generation_;
    }
    cv_.notify_all();
    fn(0);
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return done_ == wanted_; });
    job_ = nullptr;
  }

 private:
  static std::atomic<Pool*>& current() {
    static std::atomic<Pool*> pool{nullptr};
    return pool;
  }
  static std::mutex& making() {
    static std::mutex mu;
    return mu;
  }
  Pool() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < hw; ++i) workers_.emplace_back([this] { loop(); });
    for (auto& t : workers_) t.detach();
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return generation_ != seen && taken_ < wanted_; });
      seen = generation_;
      const unsigned id = ++taken_;
      const auto* fn = job_;
      lock.unlock();
      (*fn)(id);
      lock.lock();
      if (++done_ == wanted_) done_cv_.notify_all();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex launch_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned wanted_ = 0, taken_ = 0, done_ = 0;
  uint64_t generation_ = 0;
};

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Device-side malloc: blocks that outlive the launch, as the device heap's do.
struct Heap {
  std::shared_mutex mu;
  std::map<uint64_t, uint64_t> blocks;  // base → size
};
Heap& heap() {
  static auto* h = new Heap;
  return *h;
}

}  // namespace

// ---- one launch ---------------------------------------------------------------------------------
struct Launch {
  std::vector<Range> ranges;  // live memory, sorted by lo
  std::atomic<uint32_t> fault{0};
  std::atomic<uint64_t> fault_addr{0};
  std::atomic<uint32_t> abort{0};
  std::mutex out_mu;
  std::string out;  // printf output of this launch
  std::string assert_text;

  void record(Fault f, uint64_t addr) {
    uint32_t none = 0;
    if (fault.compare_exchange_strong(none, static_cast<uint32_t>(f))) fault_addr.store(addr);
    abort.store(1, std::memory_order_release);
  }
};

Mode mode() noexcept {
  static const Mode m = read_mode();
  return m;
}

std::shared_ptr<Program> program_from_text(const char* text, size_t size) {
  auto p = std::make_shared<Program>();
  p->text.assign(text, strnlen(text, size));
  return p;
}

std::shared_ptr<Program> program_from_units(const std::vector<fatbin::Code>& units) {
  auto p = std::make_shared<Program>();
  for (const fatbin::Code& u : units) {
    p->units.emplace_back(reinterpret_cast<const char*>(u.bytes.data()),
                          strnlen(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size()));
    p->text += p->units.back();  // what the compiled code is cached by
  }
  return p;
}

std::shared_ptr<Program> program_from_image(const void* image, int cc) {
  std::string refused;
  if (std::vector<fatbin::Code> units = fatbin::linked_ptx(image, cc, &refused); !units.empty())
    return program_from_units(units);
  auto p = std::make_shared<Program>();
  fatbin::Code code = fatbin::select_ptx(image, cc);
  if (code.kind == fatbin::Code::Kind::Ptx) {
    p->text.assign(reinterpret_cast<const char*>(code.bytes.data()),
                   strnlen(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size()));
  } else {
    p->missing = refused.empty() ? "the image holds machine code (SASS) only, no PTX to run" : refused;
  }
  return p;
}

namespace {

const ptx::Module* parsed(Program& p, std::string* why) {
  if (p.text.empty()) {
    *why = p.missing.empty() ? "no PTX" : p.missing;
    return nullptr;
  }
  std::call_once(p.parsed, [&] {
    ptx::ParseError err;
    if (p.units.empty()) {
      p.module = ptx::parse(p.text, &err);
      if (!p.module) p.parse_error = "its PTX does not parse: " + err.message;
      return;
    }
    std::vector<ptx::Module> units;
    for (size_t i = 0; i < p.units.size(); ++i) {
      std::optional<ptx::Module> m = ptx::parse(p.units[i], &err);
      if (!m) {
        p.parse_error = "the PTX of its translation unit " + std::to_string(i + 1) + " does not parse: " + err.message;
        return;
      }
      units.push_back(std::move(*m));
    }
    std::string why;
    p.module = ptx::link(std::move(units), &why);
    if (!p.module) p.parse_error = "its translation units' PTX does not link: " + why;
  });
  if (!p.module) *why = p.parse_error;
  return p.module ? &*p.module : nullptr;
}

// What the kernel compiler did: kernels compiled, kernels loaded from the on-disk cache.
struct CompilerBookkeeping {
  std::mutex mu;
  CompilerBooks books;
};
CompilerBookkeeping& compiler_books() {
  static auto* b = new CompilerBookkeeping;
  return *b;
}

// `cooperative`: the code a cooperative launch runs (CompileRequest::cooperative).
std::shared_ptr<Compiled> compile(Program& p, const std::string& name, bool cooperative, std::string* why) {
  const ptx::Module* mod = parsed(p, why);
  if (!mod) return nullptr;
  const ptx::Function* fn = mod->find_function(name);
  if (!fn || !fn->entry) {
    *why = "its PTX has no kernel named " + name;
    return nullptr;
  }
  const std::string key = std::to_string(std::hash<std::string>{}(p.text)) + ":" + std::to_string(p.text.size()) + ":" +
                          name + (cooperative ? ":cooperative" : "");
  {
    std::lock_guard lock(code_cache().mu);
    if (auto it = code_cache().by_key.find(key); it != code_cache().by_key.end()) return it->second;
  }
  Jit* j = jit(why);
  if (!j) return nullptr;
  std::call_once(p.digested, [&] {
    if (p.units.empty()) {
      p.digest = j->source_digest(p.text);
      return;
    }
    std::string framed;  // the units apart: each one's length, then its text
    for (const std::string& u : p.units) framed += "unit " + std::to_string(u.size()) + "\n" + u;
    p.digest = j->source_digest(framed);
  });
  auto c = std::make_shared<Compiled>();
  CompileRequest req;
  req.module = mod;
  req.kernel = name;
  req.cooperative = cooperative;
  req.source_digest = p.digest;
  std::string error;
  if (!j->compile(req, &c->code, &error)) {
    *why = "the kernel compiler failed on it: " + error;
    FG_LOG(Warn, Core, "kernel %s: %s", name.c_str(), why->c_str());
    return nullptr;
  }
  if (!c->code.run_block) {
    *why = c->code.unsupported;
    return nullptr;
  }
  {
    auto& b = compiler_books();
    std::lock_guard lock(b.mu);
    ++(c->code.from_cache ? b.books.loaded : b.books.compiled);
  }
  if (c->code.from_cache) FG_LOG(Debug, Core, "kernel %s: code loaded from FAKEGPU_KERNEL_CACHE", name.c_str());
  if (!c->code.meeting.empty())
    FG_LOG(Debug, Core, "kernel %s: threads meet; %s", name.c_str(), c->code.meeting.c_str());
  uint64_t off = 0;
  for (const ptx::Param& prm : fn->params) {
    const uint64_t align = std::max<uint64_t>(prm.align ? prm.align : ptx::type_size(prm.type), 1);
    off = align_up(off, align);
    c->param_offsets.push_back(off);
    off += prm.bytes();
  }
  c->params = fn->params;
  c->param_bytes = off;
  std::copy(std::begin(fn->reqnctapercluster), std::end(fn->reqnctapercluster), c->cluster_dims);
  std::lock_guard lock(code_cache().mu);
  return code_cache().by_key.emplace(key, c).first->second;
}

uint64_t own_variable(Program& p, Module* m, const std::string& name);

// The value of `symbol` in an initializer: a function's tag, or a variable's address (the
// storage the program registered, else the executor's own).
uint64_t symbol_value(Program& p, Module* m, const std::string& symbol) {
  const int64_t fn = function_index(*p.module, symbol);
  if (fn >= 0) return kFunctionTag + static_cast<uint64_t>(fn);
  if (auto it = m->globals.find(symbol); it != m->globals.end()) return reinterpret_cast<uint64_t>(it->second.dev_ptr);
  return own_variable(p, m, symbol);
}

// Writes the symbol elements of variable `v`'s initializer into `storage` (`size` bytes).
// Registered variables hold the cubin's values there, which name device addresses the fake
// does not have; the executor's own start with zeros.
void relocate(Program& p, Module* m, const ptx::Variable& v, unsigned char* storage, size_t size) {
  const unsigned elem = ptx::type_size(v.type);
  if (elem < 8 || !storage) return;  // an address needs 64 bits
  for (size_t i = 0; i < v.init.size(); ++i) {
    const ptx::Variable::Init& e = v.init[i];
    if (e.symbol.empty() || (i + 1) * elem > size) continue;
    const uint64_t value = symbol_value(p, m, e.symbol) + static_cast<uint64_t>(e.offset);
    std::memcpy(storage + i * elem, &value, 8);
  }
}

// The storage of the PTX variable `name` the program did not register (string constants of
// printf, math tables): made with its initial value on first use, kept with the program.
uint64_t own_variable(Program& p, Module* m, const std::string& name) {
  const ptx::Variable* v = p.module ? p.module->find_global(name) : nullptr;
  if (!v || (v->space != ptx::Space::Global && v->space != ptx::Space::Const)) return 0;
  unsigned char* out = nullptr;
  const uint64_t bytes = std::max<uint64_t>(v->bytes(), 1);
  {
    std::lock_guard lock(p.mu);
    if (auto it = p.storage.find(name); it != p.storage.end()) return reinterpret_cast<uint64_t>(it->second.data());
    if (bytes > (256u << 20)) return 0;
    std::vector<uint64_t> mem((bytes + 7) / 8, 0);
    out = reinterpret_cast<unsigned char*>(mem.data());
    const unsigned elem = ptx::type_size(v->type);
    uint64_t at = 0;
    for (const ptx::Variable::Init& e : v->init) {
      if (at + elem > bytes) break;
      if (e.symbol.empty()) std::memcpy(out + at, &e.bits, std::min<unsigned>(elem, 8));
      at += elem;
    }
    p.storage.emplace(name, std::move(mem));  // the vector's buffer moves with it
  }
  // Addresses last, outside the lock: they may make other variables (a cycle finds this one).
  relocate(p, m, *v, out, bytes);
  return reinterpret_cast<uint64_t>(out);
}

void add_books(const std::string& name, bool ran, uint64_t ns, const std::string& reason) {
  auto& b = all_books();
  std::lock_guard lock(b.mu);
  KernelBooks& k = b.by_name[name];
  k.name = name;
  (ran ? k.ran : k.recorded) += 1;
  k.host_ns += ns;
  if (!ran && k.reason.empty()) k.reason = reason;
}

}  // namespace

Kernel& prepare(Function* f, const Device* dev) {
  if (Kernel* k = f->kernel.get()) return *k;
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (Kernel* k = f->kernel.get()) return *k;
  auto k = std::make_unique<Kernel>();
  k->name = f->name;
  k->function = f->handle;
  if (mode() == Mode::Record) {
    k->reason = "FAKEGPU_KERNELS=record";
  } else {
    Module* m = f->module;
    const int cc = dev->model.cc_major * 10 + dev->model.cc_minor;
    if (m && !m->program) m->program = m->image ? program_from_image(m->image, cc) : nullptr;
    if (!m || !m->program) {
      k->reason = "the fake has no image for it";
    } else {
      k->code = compile(*m->program, f->name, false, &k->reason);
      k->program = m->program;
      // The variables the code reads: those the program registered (or the module load
      // made), else storage of the executor's own, with the PTX's initial values.
      for (size_t i = 0; k->code && i < k->code->code.globals.size(); ++i) {
        const std::string& g = k->code->code.globals[i];
        uint64_t addr = 0;
        if (auto it = m->globals.find(g); it != m->globals.end()) {
          addr = reinterpret_cast<uint64_t>(it->second.dev_ptr);
          if (const ptx::Variable* v = m->program->module->find_global(g))
            relocate(*m->program, m, *v, static_cast<unsigned char*>(it->second.dev_ptr), it->second.size);
        } else {
          addr = own_variable(*m->program, m, g);
        }
        if (!addr) {
          k->code = nullptr;
          k->reason = "its variable " + g + " has no storage";
        }
        k->globals.push_back(addr);
      }
      std::lock_guard storage_lock(m->program->mu);
      for (const auto& [name, mem] : m->program->storage) {
        const auto lo = reinterpret_cast<uint64_t>(mem.data());
        k->own_ranges.push_back({lo, lo + mem.size() * 8});
      }
    }
  }
  f->kernel = std::move(k);
  return *f->kernel;
}

Status pack_params(const Kernel& k, void* const* args, void* const* extra, std::vector<unsigned char>* out) {
  out->clear();
  if (!k.code) return Status::Ok;
  const Compiled& c = *k.code;
  out->assign(std::max<uint64_t>(c.param_bytes, 1), 0);
  if (c.params.empty()) return Status::Ok;
  // extra: (key, value) pairs up to CU_LAUNCH_PARAM_END (0): BUFFER_POINTER (1), BUFFER_SIZE (2).
  const void* buffer = nullptr;
  size_t size = 0;
  for (int i = 0; extra && i < 64 && reinterpret_cast<uintptr_t>(extra[i]) != 0; i += 2) {
    if (reinterpret_cast<uintptr_t>(extra[i]) == 1) buffer = extra[i + 1];
    if (reinterpret_cast<uintptr_t>(extra[i]) == 2 && extra[i + 1]) size = *static_cast<const size_t*>(extra[i + 1]);
  }
  if (buffer) {
    if (size < c.param_bytes) return Status::InvalidValue;
    std::memcpy(out->data(), buffer, c.param_bytes);
    return Status::Ok;
  }
  if (!args) return Status::InvalidValue;
  for (size_t i = 0; i < c.params.size(); ++i) {
    if (!args[i]) return Status::InvalidValue;
    std::memcpy(out->data() + c.param_offsets[i], args[i], c.params[i].bytes());
  }
  return Status::Ok;
}

namespace {
// What a running block owns: its shared memory, its threads' context (split loops), its access
// sites' cached ranges and its BlockEnv.
struct BlockStorage {
  std::vector<uint64_t> shared;
  std::unique_ptr<uint64_t[]> context;
  std::vector<Range> sites;
  BlockEnv env;
};

// A thread-block cluster of a launch whose kernel meets its cluster (CompiledKernel::
// cluster_sync): its blocks' shared memory by rank, and its barrier, counted in arrivals.
struct ClusterState {
  static constexpr unsigned kMaxBlocks = 16;  // the non-portable maximum cluster size
  unsigned blocks = 1;
  // Set when the block of that rank is placed; a block may run before its cluster's others are.
  std::atomic<unsigned char*> shared[kMaxBlocks] = {};
  uint64_t shared_bytes = 0;
  std::atomic<uint32_t> arrivals{0};
  // The fewest cluster barriers a block of the cluster that ended had passed.
  std::atomic<uint32_t> fewest_at_end{UINT32_MAX};
};

// The code for a cooperative launch of `k`: one that yields where threads poll memory.
const Compiled& cooperative_code(Kernel& k) {
  if (k.code->code.yields) return *k.code;
  std::call_once(k.cooperative_once, [&] {
    std::string why;
    std::shared_ptr<Compiled> c = compile(*k.program, k.name, true, &why);
    if (c && c->code.globals == k.code->code.globals) {
      k.cooperative = std::move(c);
    } else {
      FG_LOG(Warn, Core, "kernel %s: no code for cooperative launches (%s); its blocks will not yield while they poll",
             k.name.c_str(), c ? "its variables differ" : why.c_str());
    }
  });
  return k.cooperative ? *k.cooperative : *k.code;
}
}  // namespace

Fault run(Kernel& k, const LaunchShape& shape, const unsigned char* params) {
  const auto start = Clock::now();
  // Thread-block clusters: the launch's dimensions, else the kernel's own. Blocks that meet
  // their cluster (cluster.sync(), distributed shared memory) all stay resident, as a
  // cooperative grid's do.
  uint32_t cd[3] = {shape.cluster[0], shape.cluster[1], shape.cluster[2]};
  if (!cd[0] && !cd[1] && !cd[2]) std::copy(std::begin(k.code->cluster_dims), std::end(k.code->cluster_dims), cd);
  const bool clustered = cd[0] || cd[1] || cd[2];
  uint32_t clusters_per[3] = {1, 1, 1};
  for (int i = 0; clustered && i < 3; ++i) {
    cd[i] = std::max<uint32_t>(cd[i], 1);
    clusters_per[i] = shape.grid[i] / cd[i];
  }
  const bool cluster_meets = clustered && k.code->code.cluster_sync;
  const bool resident = shape.cooperative || cluster_meets;
  const Compiled& c = resident ? cooperative_code(k) : *k.code;
  Launch launch;
  // A cooperative launch's grid workspace, zeroed: grid.sync()'s barrier.
  GridWorkspace workspace;
  // Live memory: every allocation, registered range and module variable, sorted.
  for (const auto& [lo, size] : Backend::get().live_ranges()) launch.ranges.push_back({lo, lo + size});
  for (const Range& r : k.own_ranges) launch.ranges.push_back(r);
  const auto workspace_at = reinterpret_cast<uint64_t>(&workspace);
  if (shape.cooperative) launch.ranges.push_back({workspace_at, workspace_at + sizeof workspace});
  std::sort(launch.ranges.begin(), launch.ranges.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  const uint64_t shared_bytes = align_up(c.code.shared_static, 16) + shape.shmem;
  const uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  std::vector<ClusterState> clusters;
  if (cluster_meets) {
    const uint64_t size = uint64_t{cd[0]} * cd[1] * cd[2];
    if (size > ClusterState::kMaxBlocks || shape.grid[0] % cd[0] || shape.grid[1] % cd[1] || shape.grid[2] % cd[2]) {
      FG_LOG(Error, Core,
             "kernel %s: its clusters of %ux%ux%u blocks do not tile the grid of %ux%ux%u (at most %u "
             "blocks a cluster)",
             k.name.c_str(), cd[0], cd[1], cd[2], shape.grid[0], shape.grid[1], shape.grid[2],
             ClusterState::kMaxBlocks);
      return Fault::Trap;
    }
    clusters = std::vector<ClusterState>(blocks / size);
    for (ClusterState& cs : clusters) {
      cs.blocks = static_cast<unsigned>(size);
      cs.shared_bytes = align_up(c.code.shared_static, 16) + shape.shmem;
    }
  }
  std::atomic<uint64_t> next{0};
  const unsigned workers = static_cast<unsigned>(std::min<uint64_t>(blocks, Pool::get().size()));
  // A block run as loops split at barriers keeps its threads' values in a context of its own
  // (one per worker, not cleared: the code writes before it reads). It runs as fibers instead
  // when the context would pass a GiB (huge local arrays in big blocks), when the block is
  // larger than split loops handle, or when its loops need each warp within one row of the
  // block and this launch's warps span rows.
  const uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  const uint64_t context_bytes = c.code.needs_fibers ? 0 : c.code.context_bytes * threads;
  const bool warp_rows = shape.block[0] % 32 == 0 || (shape.block[1] == 1 && shape.block[2] == 1);
  const bool fibers = c.code.needs_fibers || context_bytes > (uint64_t{1} << 30) ||
                      (c.code.split && threads > kSplitMaxThreads) || (c.code.loops_need_warp_rows && !warp_rows);
  auto make_storage = [&](BlockStorage& s) {
    s.shared.assign((shared_bytes + 7) / 8 + 1, 0);
    if (context_bytes && !fibers) s.context = std::make_unique_for_overwrite<uint64_t[]>(context_bytes / 8 + 9);
    s.sites.assign(std::max<uint32_t>(c.code.sites, 1), Range{});
    BlockEnv& env = s.env;
    env.params = params;
    env.shared = reinterpret_cast<unsigned char*>(s.shared.data());
    env.shared_bytes = shared_bytes;
    env.launch = &launch;
    env.site_cache = s.sites.data();
    env.globals = k.globals.data();
    env.grid_workspace = shape.cooperative ? workspace_at : 0;
    if (s.context) {
      env.context = reinterpret_cast<unsigned char*>(align_up(reinterpret_cast<uint64_t>(s.context.get()), 64));
      env.context_bytes = context_bytes;
    }
    for (int i = 0; i < 3; ++i) {
      env.ntid[i] = shape.block[i];
      env.nctaid[i] = shape.grid[i];
      env.cluster_dim[i] = clustered ? cd[i] : 0;
    }
  };
  // Block `b` in `env`; false when the grid has no more.
  auto place = [&](BlockEnv& env) {
    const uint64_t b = next.fetch_add(1, std::memory_order_relaxed);
    if (b >= blocks) return false;
    env.ctaid[0] = static_cast<uint32_t>(b % shape.grid[0]);
    env.ctaid[1] = static_cast<uint32_t>(b / shape.grid[0] % shape.grid[1]);
    env.ctaid[2] = static_cast<uint32_t>(b / shape.grid[0] / shape.grid[1]);
    if (cluster_meets) {
      const uint32_t* t = env.ctaid;
      const uint64_t index = t[0] / cd[0] +
                             uint64_t{clusters_per[0]} * (t[1] / cd[1] + uint64_t{clusters_per[1]} * (t[2] / cd[2]));
      const uint32_t rank = t[0] % cd[0] + cd[0] * (t[1] % cd[1] + cd[1] * (t[2] % cd[2]));
      clusters[index].shared[rank].store(env.shared, std::memory_order_release);
      env.cluster = &clusters[index];
      env.cluster_syncs = 0;
    }
    return true;
  };
  auto run_one = [&](BlockEnv& env) {
    if (fibers) {
      std::string deadlock;
      if (!run_block_fibers(&env, c.code.run_thread, &deadlock)) {
        FG_LOG(Error, Core, "kernel %s: %s", k.name.c_str(), deadlock.c_str());
        launch.record(Fault::Trap, 0);
        env.abort = 1;
      }
    } else {
      c.code.run_block(&env);
    }
    if (auto* cs = static_cast<ClusterState*>(env.cluster)) {  // the cluster's barrier sees it ended
      uint32_t seen = cs->fewest_at_end.load();
      while (env.cluster_syncs < seen && !cs->fewest_at_end.compare_exchange_weak(seen, env.cluster_syncs)) {}
    }
  };
  if (resident) {
    // Every block resident at once, each worker switching between its blocks where they poll.
    CooperativeGrid grid(launch.abort);
    Pool::get().run(workers, [&](unsigned) {
      std::vector<std::unique_ptr<BlockStorage>> slots;
      run_cooperative(
          grid,
          [&](size_t slot) -> BlockEnv* {
            while (slots.size() <= slot) {
              slots.push_back(std::make_unique<BlockStorage>());
              make_storage(*slots.back());
            }
            BlockEnv& env = slots[slot]->env;
            env.abort = 0;
            return place(env) ? &env : nullptr;
          },
          [&](BlockEnv* env) { run_one(*env); });
    });
    if (!grid.failure.empty()) {
      FG_LOG(Error, Core, "kernel %s: %s", k.name.c_str(), grid.failure.c_str());
      launch.record(Fault::Trap, 0);
    }
  } else {
    Pool::get().run(workers, [&](unsigned) {
      BlockStorage s;
      make_storage(s);
      for (;;) {
        if (launch.abort.load(std::memory_order_acquire)) break;
        if (!place(s.env)) break;
        run_one(s.env);
        if (s.env.abort) break;
      }
    });
    // Without a grid workspace grid.sync() traps, as on a GPU: say why (once).
    if (c.code.grid_sync && launch.fault.load() == static_cast<uint32_t>(Fault::Trap)) {
      static std::once_flag told;
      std::call_once(told, [&] {
        FG_LOG(Warn, Core,
               "kernel %s trapped in a launch that is not cooperative; its grid.sync() (cooperative groups) traps "
               "there: launch it with cudaLaunchCooperativeKernel or cuLaunchCooperativeKernel",
               k.name.c_str());
      });
    }
  }
  if (!launch.out.empty()) {
    auto& pb = printf_buffer();
    std::lock_guard lock(pb.mu);
    pb.pending += launch.out;
  }
  if (!launch.assert_text.empty()) std::fputs(launch.assert_text.c_str(), stderr);
  const uint64_t ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  k.ran.fetch_add(1, std::memory_order_relaxed);
  k.host_ns.fetch_add(ns, std::memory_order_relaxed);
  add_books(k.name, true, ns, {});
  FG_USDT_KERNEL_DONE(k.function, k.name.c_str(), ns, true);
  return static_cast<Fault>(launch.fault.load());
}

void strict_stop(const Kernel& k) {
  log::write(log::Level::Error, log::Src::Core,
             "FAKEGPU_STRICT: kernel %s cannot run on the fake GPU: %s; aborting (without FAKEGPU_STRICT its launches "
             "are recorded and listed in the report)",
             k.name.c_str(), k.reason.c_str());
  std::abort();
}

void recorded(Kernel& k) {
  k.recorded.fetch_add(1, std::memory_order_relaxed);
  add_books(k.name, false, 0, k.reason);
  FG_USDT_KERNEL_DONE(k.function, k.name.c_str(), 0, false);
}

void flush_printf() {
  auto& pb = printf_buffer();
  std::string out;
  {
    std::lock_guard lock(pb.mu);
    out.swap(pb.pending);
  }
  if (!out.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
}

CompilerBooks compiler_books_now() {
  auto& b = compiler_books();
  std::lock_guard lock(b.mu);
  return b.books;
}

bool launch_holds(const BlockEnv* env, uint64_t addr, uint64_t size) noexcept {
  const uint64_t end = addr + size;
  if (end < addr) return false;
  const auto& r = env->launch->ranges;
  auto it = std::upper_bound(r.begin(), r.end(), addr, [](uint64_t a, const Range& x) { return a < x.lo; });
  return it != r.begin() && addr >= (it - 1)->lo && end <= (it - 1)->hi;
}

std::vector<KernelBooks> books() {
  auto& b = all_books();
  std::lock_guard lock(b.mu);
  std::vector<KernelBooks> out;
  for (const auto& [name, k] : b.by_name) out.push_back(k);
  return out;
}

}  // namespace fg::kernels

// ---- the runtime functions generated code calls -------------------------------------------------
using fg::kernels::BlockEnv;
using fg::kernels::ClusterState;
using fg::kernels::Fault;
using fg::kernels::PollKind;
using fg::kernels::Range;

extern "C" void fg_rt_cluster_sync(BlockEnv* env) {
  auto* cs = static_cast<ClusterState*>(env->cluster);
  ++env->cluster_syncs;
  if (!cs) return;  // a cluster of one
  const uint32_t want = env->cluster_syncs * cs->blocks;
  cs->arrivals.fetch_add(1, std::memory_order_acq_rel);
  while (cs->arrivals.load(std::memory_order_acquire) < want) {
    if (cs->fewest_at_end.load(std::memory_order_acquire) < env->cluster_syncs) {
      FG_LOG(Error, Core,
             "block (%u,%u,%u) waits in cluster barrier number %u for a block of its cluster that ended after %u "
             "(every block of a cluster must reach each cluster.sync(); a GPU would hang)",
             env->ctaid[0], env->ctaid[1], env->ctaid[2], env->cluster_syncs, cs->fewest_at_end.load());
      env->launch->record(Fault::Trap, 0);
      env->abort = 1;
      return;
    }
    fg_rt_poll(env, 0, static_cast<uint32_t>(PollKind::Sleep));  // the other blocks run meanwhile
    if (env->abort) return;
  }
}

extern "C" uint64_t fg_rt_mapa(BlockEnv* env, uint64_t addr, uint32_t rank) {
  auto* cs = static_cast<ClusterState*>(env->cluster);
  const uint64_t own = reinterpret_cast<uint64_t>(env->shared);
  const unsigned blocks = cs ? cs->blocks : 1;
  if (addr < own || addr >= own + env->shared_bytes || rank >= blocks) {
    fg_rt_fault(env, static_cast<uint32_t>(Fault::IllegalAddress), addr);
    return 0;
  }
  if (!cs) return addr;
  // The block of that rank may not have been placed yet: the others run until it is.
  unsigned char* base;
  while (!(base = cs->shared[rank].load(std::memory_order_acquire))) {
    fg_rt_poll(env, 0, static_cast<uint32_t>(PollKind::Sleep));
    if (env->abort) return 0;
  }
  return reinterpret_cast<uint64_t>(base) + (addr - own);
}

extern "C" int fg_rt_check(BlockEnv* env, uint64_t addr, uint64_t size, uint32_t site, uint32_t flags) {
  (void)flags;
  auto& l = *env->launch;
  const uint64_t end = addr + size;
  if (end >= addr) {
    const auto& r = l.ranges;
    auto it = std::upper_bound(r.begin(), r.end(), addr, [](uint64_t a, const Range& x) { return a < x.lo; });
    if (it != r.begin()) {
      --it;
      if (addr >= it->lo && end <= it->hi) {
        env->site_cache[site] = *it;
        return 1;
      }
    }
    // The block's shared memory and this thread's stack or context (local memory) through
    // generic pointers.
    const uint64_t sh = reinterpret_cast<uint64_t>(env->shared);
    if (addr >= sh && end <= sh + env->shared_bytes) return 1;
    // The shared memory of its cluster's other blocks (mapa).
    if (const auto* cs = static_cast<const ClusterState*>(env->cluster))
      for (unsigned r = 0; r < cs->blocks; ++r) {
        const auto other = reinterpret_cast<uint64_t>(cs->shared[r].load(std::memory_order_acquire));
        if (other && addr >= other && end <= other + cs->shared_bytes) return 1;
      }
    const uint64_t cx = reinterpret_cast<uint64_t>(env->context);
    if (addr >= cx && end <= cx + env->context_bytes) return 1;
    uint64_t stack_lo = 0, stack_hi = 0;
    fg::kernels::current_stack(&stack_lo, &stack_hi);
    if (addr >= stack_lo && end <= stack_hi) return 1;
    auto& hp = fg::kernels::heap();
    std::shared_lock lock(hp.mu);
    auto h = hp.blocks.upper_bound(addr);
    if (h != hp.blocks.begin()) {
      --h;
      if (addr >= h->first && end <= h->first + h->second) return 1;
    }
  }
  l.record(Fault::IllegalAddress, addr);
  env->abort = 1;
  return 0;
}

extern "C" void fg_rt_fault(BlockEnv* env, uint32_t fault, uint64_t addr) {
  env->launch->record(static_cast<Fault>(fault), addr);
  env->abort = 1;
}

namespace {
// Formats device printf's arguments: `args` holds each at its natural alignment after the C
// promotions (integers of 4 or 8 bytes, doubles, 8-byte pointers), as nvcc lays them out.
std::string format_device(const char* fmt, const unsigned char* args) {
  std::string out;
  size_t off = 0;
  auto take = [&](size_t n) {
    off = (off + n - 1) / n * n;
    uint64_t v = 0;
    if (args) std::memcpy(&v, args + off, n);
    off += n;
    return v;
  };
  for (const char* p = fmt; *p;) {
    if (*p != '%') {
      out += *p++;
      continue;
    }
    const char* start = p++;
    if (*p == '%') {
      out += '%';
      ++p;
      continue;
    }
    while (*p && std::strchr("-+ #0", *p)) ++p;
    while (*p && (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.' || *p == '*')) ++p;
    int longs = 0;
    while (*p && std::strchr("hlLqjzt", *p)) {
      if (*p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't') ++longs;
      ++p;
    }
    const char conv = *p ? *p++ : 0;
    std::string spec(start, p);
    char buf[512];
    int n = 0;
    switch (conv) {
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'c': {
        const uint64_t v = take(longs ? 8 : 4);
        std::string s(start, p);
        if (longs) {
          n = std::snprintf(buf, sizeof buf, s.c_str(), static_cast<long long>(v));
        } else {
          n = std::snprintf(buf, sizeof buf, s.c_str(), static_cast<int>(static_cast<uint32_t>(v)));
        }
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        const uint64_t v = take(8);
        double d;
        std::memcpy(&d, &v, 8);
        // Drop length modifiers: a double is passed either way.
        std::string s;
        for (char ch : spec)
          if (!std::strchr("hlLqjzt", ch)) s += ch;
        n = std::snprintf(buf, sizeof buf, s.c_str(), d);
        break;
      }
      case 's': {
        const uint64_t v = take(8);
        const char* str = reinterpret_cast<const char*>(v);
        n = std::snprintf(buf, sizeof buf, spec.c_str(), str && fg::fatbin::readable(str, 1) ? str : "(null)");
        break;
      }
      case 'p': {
        const uint64_t v = take(8);
        n = std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<void*>(v));
        break;
      }
      default: out.append(spec); continue;
    }
    if (n > 0) out.append(buf, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
  }
  return out;
}
}  // namespace

extern "C" int32_t fg_rt_vprintf(BlockEnv* env, uint64_t fmt, uint64_t args) {
  const char* f = reinterpret_cast<const char*>(fmt);
  if (!f) return -1;
  std::string s = format_device(f, reinterpret_cast<const unsigned char*>(args));
  std::lock_guard lock(env->launch->out_mu);
  env->launch->out += s;
  return static_cast<int32_t>(s.size());
}

extern "C" void fg_rt_assertfail(BlockEnv* env, uint64_t message, uint64_t file, uint32_t line, uint64_t function) {
  auto str = [](uint64_t p) { return p ? reinterpret_cast<const char*>(p) : "?"; };
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%s:%u: %s: block: [%u,%u,%u]: Assertion `%s` failed.\n", str(file), line,
                str(function), env->ctaid[0], env->ctaid[1], env->ctaid[2], str(message));
  {
    std::lock_guard lock(env->launch->out_mu);
    env->launch->assert_text += buf;
  }
  env->launch->record(Fault::Assert, 0);
  env->abort = 1;
}

extern "C" void fg_rt_trap(BlockEnv* env) {
  env->launch->record(Fault::Trap, 0);
  env->abort = 1;
}

extern "C" uint64_t fg_rt_clock(BlockEnv*) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

extern "C" uint64_t fg_rt_malloc(BlockEnv*, uint64_t size) {
  if (size > (1ull << 33)) return 0;  // beyond any device heap: malloc returns NULL
  void* p = std::calloc(1, size ? size : 1);
  if (!p) return 0;
  auto& hp = fg::kernels::heap();
  std::unique_lock lock(hp.mu);
  hp.blocks.emplace(reinterpret_cast<uint64_t>(p), size ? size : 1);
  return reinterpret_cast<uint64_t>(p);
}

extern "C" void fg_rt_free(BlockEnv*, uint64_t ptr) {
  if (!ptr) return;
  auto& hp = fg::kernels::heap();
  std::unique_lock lock(hp.mu);
  if (hp.blocks.erase(ptr)) std::free(reinterpret_cast<void*>(ptr));
}
