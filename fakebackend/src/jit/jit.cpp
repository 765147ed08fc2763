// SPDX-License-Identifier: Apache-2.0
// The plugin libfakegpu_jit.so: kernels/jit_api.h's Jit over LLVM ORC (LLJIT). Each kernel is
// generated (codegen.cpp), optimised with the O2 pipeline for the host CPU, and compiled into
// the process; its code lives as long as the process.
// For whoever profiles or debugs the generated code: FAKEGPU_JIT_DUMP=DIR writes each kernel's
// optimised IR (DIR/NAME.ll) and native assembly (DIR/NAME.s); FAKEGPU_JIT_PERF=1 writes perf's
// jitdump (jit-PID.dump in the current directory: `perf record -k 1`, then `perf inject --jit`)
// so that `perf report` names the kernels' block and thread functions.
//
// FAKEGPU_KERNEL_CACHE=DIR keeps each kernel's native code on disk (DiskCache below): a later
// process that compiles the same kernel of the same PTX, with the same plugin, LLVM and host
// CPU, loads the object instead of generating, optimising and compiling it again.
#include "jit/codegen.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <vector>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fg::jit {
namespace {

using namespace llvm;

std::string message(Error e) {
  std::string s;
  handleAllErrors(std::move(e), [&](const ErrorInfoBase& info) { s = info.message(); });
  return s;
}

std::string hex(ArrayRef<uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string sha256(StringRef text) {  // the 32 bytes
  SHA256 h;
  h.update(text);
  return h.final().str();
}
std::string sha256_hex(StringRef text) { return hex(arrayRefFromStringRef(sha256(text))); }

// ---- the on-disk cache --------------------------------------------------------------------------
// One file per kernel, DIR/<key>.kernel, key = SHA-256 of (the program's PTX digest, the kernel's
// name, the memory checks, whether the code is a cooperative launch's, the plugin's identity: interface version, LLVM
// version, host CPU and its features, the plugin file's size and modification time). Little-endian:
//   "FGKCACHE", u32 format (kFormat), u32 zero, the key's 32 bytes, the payload's SHA-256,
//   u64 payload size, then the payload: what generation learned (CompiledKernel's fields:
//   needs_fibers, split, loops_need_warp_rows as u8 + u8 flags (1: yields, 2: grid_sync, 4: cluster_sync), sites u32,
//   shared_static u64, context_bytes u64, meeting as u32 length + bytes, globals as u32 count + each u32 length +
//   bytes) and the object (u64 length + bytes).
// A file that is damaged, truncated or another key's is a miss, and the kernel is compiled and
// written anew. Files are written to a temporary name and renamed, so a reader sees a whole
// file or none; the directory is created 0700 and refused when others may write to it (the
// files are native code this process runs). The cache keeps to FAKEGPU_KERNEL_CACHE_MAX bytes
// of kernel files: after a store, the least recently used go (a load refreshes its file's
// modification time) until the rest fit, and temporary files a writer left over an hour ago go
// too.
// A size: digits, then optionally K, M or G (KiB, MiB, GiB; an optional "iB" or "B" after it).
bool parse_size(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (end == text || errno || *text == '-') return false;
  std::string unit(end);
  unsigned shift = 0;
  if (!unit.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    shift = u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : 99;
    if (shift == 99) return false;
    unit.erase(0, 1);
    if (!unit.empty() && unit != "B" && unit != "iB") return false;
  }
  if (shift && n > (~uint64_t{0} >> shift)) return false;
  *out = uint64_t{n} << shift;
  return true;
}

class DiskCache {
 public:
  static constexpr uint32_t kFormat = 1;
  static constexpr uint64_t kMaxFile = uint64_t{1} << 30;

  // The cache in `dir`, or null with *error set (the JIT then runs without it).
  static std::unique_ptr<DiskCache> open(const std::string& dir, std::string* error) {
    if (std::error_code ec = sys::fs::create_directories(dir, true, sys::fs::perms::owner_all)) {
      *error = "cannot create the directory: " + ec.message();
      return nullptr;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      *error = "not a directory";
      return nullptr;
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
      *error = "owned by another user or writable by others: a cache of native code must be private (mode 0700)";
      return nullptr;
    }
    auto c = std::unique_ptr<DiskCache>(new DiskCache);
    c->dir_ = dir;
    return c;
  }

  // The kernel stored under `key` (64 hex digits): its fields in *meta, its object in *object.
  bool load(const std::string& key, kernels::CompiledKernel* meta, std::string* object) const {
    const int fd = ::open(path(key).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    std::string bytes;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= kMaxFile;
    if (ok) {
      bytes.resize(static_cast<size_t>(st.st_size));
      for (size_t off = 0; ok && off < bytes.size();) {
        const ssize_t n = ::read(fd, bytes.data() + off, bytes.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        off += n > 0 ? static_cast<size_t>(n) : 0;
      }
    }
    ok = ok && parse(bytes, key, meta, object);
    if (ok) ::futimens(fd, nullptr);  // used now: the last to go when the cache is pruned
    ::close(fd);
    return ok;
  }

  // Writes the kernel under `key`; a failure is a warning (once), the kernel still runs.
  void store(const std::string& key, const kernels::CompiledKernel& meta, StringRef object) {
    std::string payload;
    put8(payload, meta.needs_fibers);
    put8(payload, meta.split);
    put8(payload, meta.loops_need_warp_rows);
    put8(payload, static_cast<uint8_t>((meta.yields ? 1 : 0) | (meta.grid_sync ? 2 : 0) | (meta.cluster_sync ? 4 : 0)));
    put32(payload, meta.sites);
    put64(payload, meta.shared_static);
    put64(payload, meta.context_bytes);
    put_string(payload, meta.meeting);
    put32(payload, static_cast<uint32_t>(meta.globals.size()));
    for (const std::string& g : meta.globals) put_string(payload, g);
    put64(payload, object.size());
    payload.append(object.data(), object.size());
    std::string file = "FGKCACHE";
    put32(file, kFormat);
    put32(file, 0);
    file += raw(key);
    file += sha256(payload);
    put64(file, payload.size());
    file += payload;
    const std::string tmp = dir_ + "/." + key + "." + std::to_string(::getpid()) + "." +
                            std::to_string(tmp_.fetch_add(1)) + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool ok = fd >= 0;
    for (size_t off = 0; ok && off < file.size();) {
      const ssize_t n = ::write(fd, file.data() + off, file.size() - off);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      off += n > 0 ? static_cast<size_t>(n) : 0;
    }
    const int saved = errno;
    if (fd >= 0) ok = ::close(fd) == 0 && ok;
    if (ok) ok = ::rename(tmp.c_str(), path(key).c_str()) == 0;
    if (!ok) {
      if (!warned_.exchange(true))
        std::fprintf(stderr, "fakegpu: FAKEGPU_KERNEL_CACHE=%s: cannot write %s: %s (kernels still run)\n",
                     dir_.c_str(), path(key).c_str(), std::strerror(fd < 0 ? saved : errno));
      ::unlink(tmp.c_str());
      return;
    }
    prune(key);
  }

  void set_limit(uint64_t bytes) { max_bytes_ = bytes; }

  // Kernel files beyond the limit, least recently used first, never `keep`'s (just written);
  // temporary files older than an hour. Other processes may prune at the same time: a file
  // already gone counts as removed.
  void prune(const std::string& keep) const {
    DIR* d = ::opendir(dir_.c_str());
    if (!d) return;
    struct File {
      std::string name;
      uint64_t size;
      struct timespec used;
    };
    std::vector<File> files;
    uint64_t total = 0;
    const time_t now = ::time(nullptr);
    const int fd = ::dirfd(d);
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      struct stat st {};
      if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
      if (n.size() > 5 && n[0] == '.' && n.compare(n.size() - 4, 4, ".tmp") == 0) {
        if (now - st.st_mtime > 3600) ::unlinkat(fd, n.c_str(), 0);
        continue;
      }
      if (n.size() != 64 + 7 || n.compare(64, 7, ".kernel") != 0) continue;
      total += static_cast<uint64_t>(st.st_size);
      files.push_back({n, static_cast<uint64_t>(st.st_size), st.st_mtim});
    }
    if (max_bytes_ && total > max_bytes_) {
      std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
        return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
      });
      for (const File& f : files) {
        if (total <= max_bytes_) break;
        if (f.name.compare(0, 64, keep) == 0) continue;
        if (::unlinkat(fd, f.name.c_str(), 0) == 0 || errno == ENOENT) total -= f.size;
      }
    }
    ::closedir(d);
  }

 private:
  DiskCache() = default;

  std::string path(const std::string& key) const { return dir_ + "/" + key + ".kernel"; }

  static void put8(std::string& s, uint8_t v) { s.push_back(static_cast<char>(v)); }
  static void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void put64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void put_string(std::string& s, const std::string& v) {
    put32(s, static_cast<uint32_t>(v.size()));
    s += v;
  }
  // 64 hex digits as their 32 bytes.
  static std::string raw(const std::string& hex64) {
    std::string out;
    for (size_t i = 0; i + 1 < hex64.size(); i += 2)
      out.push_back(static_cast<char>(std::stoi(hex64.substr(i, 2), nullptr, 16)));
    return out;
  }

  // Reads fields in order, each within the bytes; `ok` turns false at the first that is not.
  struct Reader {
    StringRef bytes;
    size_t at = 0;
    bool ok = true;
    StringRef take(uint64_t n) {
      if (!ok || n > bytes.size() - at) {
        ok = false;
        return {};
      }
      StringRef v = bytes.substr(at, n);
      at += n;
      return v;
    }
    template <class T>
    T num() {
      T v{};
      StringRef b = take(sizeof v);
      if (ok) std::memcpy(&v, b.data(), sizeof v);
      return v;
    }
    std::string str() { return take(num<uint32_t>()).str(); }
  };

  static bool parse(const std::string& bytes, const std::string& key, kernels::CompiledKernel* meta,
                    std::string* object) {
    Reader r{bytes};
    if (r.take(8) != "FGKCACHE" || r.num<uint32_t>() != kFormat || r.num<uint32_t>() != 0) return false;
    if (r.take(32) != raw(key)) return false;  // another key's file
    const std::string digest = r.take(32).str();
    const uint64_t size = r.num<uint64_t>();
    const StringRef payload = r.take(size);
    if (!r.ok || r.at != bytes.size() || sha256(payload) != digest) return false;
    Reader p{payload};
    kernels::CompiledKernel m;
    m.needs_fibers = p.num<uint8_t>() != 0;
    m.split = p.num<uint8_t>() != 0;
    m.loops_need_warp_rows = p.num<uint8_t>() != 0;
    const uint8_t flags = p.num<uint8_t>();
    m.yields = (flags & 1) != 0;
    m.grid_sync = (flags & 2) != 0;
    m.cluster_sync = (flags & 4) != 0;
    m.sites = p.num<uint32_t>();
    m.shared_static = p.num<uint64_t>();
    m.context_bytes = p.num<uint64_t>();
    m.meeting = p.str();
    const uint32_t globals = p.num<uint32_t>();
    for (uint32_t i = 0; p.ok && i < globals; ++i) m.globals.push_back(p.str());
    const StringRef obj = p.take(p.num<uint64_t>());
    if (!p.ok || p.at != payload.size() || obj.empty()) return false;
    *meta = std::move(m);
    *object = obj.str();
    return true;
  }

  std::string dir_;
  std::atomic<uint64_t> tmp_{0};
  std::atomic<bool> warned_{false};
  uint64_t max_bytes_ = uint64_t{1} << 30;  // 0: no limit
};

// What besides the request decides a kernel's code: this plugin's build (its file's size and
// modification time: a rebuilt plugin may generate other code for the same PTX), the interface,
// LLVM and the host CPU. Empty when the plugin's file cannot be found.
std::string plugin_identity(const std::string& cpu, const std::string& features) {
  Dl_info info{};
  struct stat st {};
  if (!dladdr(reinterpret_cast<void*>(&plugin_identity), &info) || !info.dli_fname || ::stat(info.dli_fname, &st) != 0)
    return "";
  return "abi " + std::to_string(kernels::kJitAbiVersion) + "\nllvm " LLVM_VERSION_STRING "\ncpu " + cpu +
         "\nfeatures " + features + "\nplugin " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
}

class LlvmJit final : public kernels::Jit {
 public:
  static std::unique_ptr<LlvmJit> create(const kernels::RuntimeSymbol* symbols, size_t n, std::string* error) {
    std::string self_dump_dir;
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    auto jtmb = orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      *error = "cannot describe the host CPU to LLVM: " + message(jtmb.takeError());
      return nullptr;
    }
    // LLVM 14 names some CPUs by an older family; the host's own feature list enables what
    // it has (AVX-512 included).
    SubtargetFeatures features;
    StringMap<bool> host;
    std::vector<std::string> feature_list;  // sorted, for the cache's key
    if (sys::getHostCPUFeatures(host))
      for (auto& f : host) {
        features.AddFeature(f.getKey(), f.getValue());
        feature_list.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
      }
    std::sort(feature_list.begin(), feature_list.end());
    jtmb->getFeatures() = features;
    jtmb->setCodeGenOptLevel(CodeGenOpt::Aggressive);
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      *error = "cannot make a target machine: " + message(tm.takeError());
      return nullptr;
    }
    orc::LLJITBuilder builder;
    builder.setJITTargetMachineBuilder(*jtmb);
    const char* perf = std::getenv("FAKEGPU_JIT_PERF");
    if (perf && std::string(perf) == "1") {
      JITEventListener* listener = JITEventListener::createPerfJITEventListener();
      if (!listener) {
        *error = "FAKEGPU_JIT_PERF=1 but this LLVM was built without perf support (LLVM_USE_PERF)";
        return nullptr;
      }
      builder.setObjectLinkingLayerCreator([listener](orc::ExecutionSession& es, const Triple&) {
        auto layer = std::make_unique<orc::RTDyldObjectLinkingLayer>(
            es, [] { return std::make_unique<SectionMemoryManager>(); });
        layer->registerJITEventListener(*listener);
        return Expected<std::unique_ptr<orc::ObjectLayer>>(std::move(layer));
      });
    }
    if (const char* dump = std::getenv("FAKEGPU_JIT_DUMP"); dump && *dump) {
      if (std::error_code ec = sys::fs::create_directories(dump)) {
        *error = std::string("FAKEGPU_JIT_DUMP=") + dump + ": cannot create the directory: " + ec.message();
        return nullptr;
      }
      self_dump_dir = dump;
    }
    std::unique_ptr<DiskCache> cache;
    std::string identity;
    if (const char* dir = std::getenv("FAKEGPU_KERNEL_CACHE"); dir && *dir) {
      std::string joined;
      for (const std::string& f : feature_list) joined += f + ",";
      identity = plugin_identity(sys::getHostCPUName().str(), joined);
      std::string why = identity.empty() ? "cannot find libfakegpu_jit.so's own file to tell its build" : "";
      if (why.empty()) cache = DiskCache::open(dir, &why);
      if (!cache)
        std::fprintf(stderr, "fakegpu: FAKEGPU_KERNEL_CACHE=%s: %s; kernels are compiled anew\n", dir, why.c_str());
      if (const char* max = std::getenv("FAKEGPU_KERNEL_CACHE_MAX"); cache && max && *max) {
        uint64_t bytes = 0;
        if (parse_size(max, &bytes))
          cache->set_limit(bytes);
        else
          std::fprintf(stderr,
                       "fakegpu: FAKEGPU_KERNEL_CACHE_MAX=%s is no size (bytes, or a number with K, M or G; 0: no "
                       "limit); the cache keeps to 1G\n",
                       max);
      }
    }
    auto jit = builder.create();
    if (!jit) {
      *error = "cannot start LLVM's JIT: " + message(jit.takeError());
      return nullptr;
    }
    auto self = std::unique_ptr<LlvmJit>(new LlvmJit);
    self->dump_dir_ = self_dump_dir;
    self->cache_ = std::move(cache);
    self->identity_ = identity;
    self->tm_ = std::move(*tm);
    self->jit_ = std::move(*jit);
    orc::SymbolMap map;
    auto& es = self->jit_->getExecutionSession();
    for (size_t i = 0; i < n; ++i)
      map[es.intern(symbols[i].name)] = JITEvaluatedSymbol(pointerToJITTargetAddress(symbols[i].address),
                                                           JITSymbolFlags::Exported);
    auto& main = self->jit_->getMainJITDylib();
    if (Error e = main.define(orc::absoluteSymbols(std::move(map)))) {
      *error = "cannot define the runtime's symbols: " + message(std::move(e));
      return nullptr;
    }
    // libm and libgcc (sinf, exp2f, half conversions) from the process.
    auto gen = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(self->jit_->getDataLayout().getGlobalPrefix());
    if (!gen) {
      *error = "cannot search the process's libraries: " + message(gen.takeError());
      return nullptr;
    }
    main.addGenerator(std::move(*gen));
    return self;
  }

  std::string source_digest(std::string_view source) override {
    return cache_ ? sha256_hex(StringRef(source.data(), source.size())) : std::string();
  }

  bool compile(const kernels::CompileRequest& request, kernels::CompiledKernel* out, std::string* error) override {
    if (cache_ && !request.source_digest.empty()) return compile_cached(request, out, error);
    auto context = std::make_unique<LLVMContext>();
    std::unique_ptr<Module> m = generate(*context, request, out, error);
    if (!m) return error->empty();  // unsupported: recorded by the caller
    const std::string id = std::to_string(next_.fetch_add(1));
    const std::string name = "fg_block_" + id, thread = "fg_thread_" + id;
    prepare(*m, name, thread);
    std::lock_guard lock(mu_);
    if (!dump_dir_.empty()) dump(*m, request.kernel + "." + id);
    if (Error e = jit_->addIRModule(orc::ThreadSafeModule(std::move(m), std::move(context)))) {
      *error = "LLVM could not compile the kernel: " + message(std::move(e));
      return false;
    }
    auto sym = jit_->lookup(name);
    if (!sym) {
      *error = "LLVM lost the compiled kernel: " + message(sym.takeError());
      return false;
    }
    out->run_block = reinterpret_cast<kernels::BlockFn>(sym->getAddress());
    auto tsym = jit_->lookup(thread);
    if (!tsym) {
      *error = "LLVM lost the compiled kernel's thread function: " + message(tsym.takeError());
      return false;
    }
    out->run_thread = reinterpret_cast<kernels::ThreadFn>(tsym->getAddress());
    return true;
  }

 private:
  LlvmJit() = default;

  // With the on-disk cache: the kernel's object from there, else generated, optimised,
  // compiled to an object and stored; then linked into the process. Its functions are named
  // after the key, so the same object serves every process.
  bool compile_cached(const kernels::CompileRequest& request, kernels::CompiledKernel* out, std::string* error) {
    std::string key_text = identity_ + "source " + request.source_digest + "\nkernel " + request.kernel + "\nchecks " +
                           (request.check_memory ? "1" : "0") + "\ncooperative " + (request.cooperative ? "1" : "0") +
                           "\n";
    const std::string key = sha256_hex(key_text);
    const std::string block = "fg_block_" + key, thread = "fg_thread_" + key;
    {
      std::lock_guard lock(mu_);
      if (auto it = linked_.find(key); it != linked_.end()) {  // already in this process
        *out = it->second;
        return true;
      }
    }
    kernels::CompiledKernel meta;
    std::string object;
    const bool hit = cache_->load(key, &meta, &object);
    if (!hit) {
      auto context = std::make_unique<LLVMContext>();
      std::unique_ptr<Module> m = generate(*context, request, &meta, error);
      if (!m) {
        *out = meta;
        return error->empty();  // unsupported: recorded by the caller
      }
      prepare(*m, block, thread);
      std::lock_guard lock(mu_);
      if (!dump_dir_.empty()) dump(*m, request.kernel + "." + std::to_string(next_.fetch_add(1)));
      orc::SimpleCompiler compiler(*tm_);
      auto obj = compiler(*m);
      if (!obj) {
        *error = "LLVM could not compile the kernel: " + message(obj.takeError());
        return false;
      }
      object.assign((*obj)->getBufferStart(), (*obj)->getBufferSize());
    }
    if (!hit) cache_->store(key, meta, object);
    std::lock_guard lock(mu_);
    if (auto it = linked_.find(key); it != linked_.end()) {  // another thread linked it meanwhile
      *out = it->second;
      return true;
    }
    if (Error e = jit_->addObjectFile(MemoryBuffer::getMemBufferCopy(object, "fg_kernel_" + key))) {
      *error = "LLVM could not load the kernel's code: " + message(std::move(e));
      return false;
    }
    auto sym = jit_->lookup(block);
    if (!sym) {
      *error = "LLVM lost the compiled kernel: " + message(sym.takeError());
      return false;
    }
    auto tsym = jit_->lookup(thread);
    if (!tsym) {
      *error = "LLVM lost the compiled kernel's thread function: " + message(tsym.takeError());
      return false;
    }
    meta.run_block = reinterpret_cast<kernels::BlockFn>(sym->getAddress());
    meta.run_thread = reinterpret_cast<kernels::ThreadFn>(tsym->getAddress());
    meta.from_cache = hit;
    linked_[key] = meta;
    *out = meta;
    return true;
  }

  // A generated module made ready to compile: its block and thread functions under the names
  // the JIT looks them up by, the host's layout and triple, optimised.
  void prepare(Module& m, const std::string& block, const std::string& thread) {
    m.getFunction("fg_block")->setName(block);
    m.getFunction("fg_thread")->setName(thread);
    m.setDataLayout(jit_->getDataLayout());
    m.setTargetTriple(tm_->getTargetTriple().str());
    optimize(m);
  }

  void optimize(Module& m) {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cam;
    ModuleAnalysisManager mam;
    PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
    mpm.run(m, mam);
  }

  // NAME.ll and NAME.s in the dump directory; a failure is a warning (the kernel still runs).
  void dump(Module& m, const std::string& name) {
    const std::string base = dump_dir_ + "/" + name;
    std::error_code ec;
    raw_fd_ostream ll(base + ".ll", ec, sys::fs::OF_Text);
    if (!ec) m.print(ll, nullptr);
    raw_fd_ostream s(base + ".s", ec, sys::fs::OF_Text);
    legacy::PassManager pm;
    if (ec || tm_->addPassesToEmitFile(pm, s, nullptr, CGFT_AssemblyFile)) {
      std::fprintf(stderr, "fakegpu: FAKEGPU_JIT_DUMP: cannot write %s.s%s%s\n", base.c_str(), ec ? ": " : "",
                   ec ? ec.message().c_str() : "");
      return;
    }
    // Code generation changes the module (it is compiled again by the JIT): a copy.
    std::unique_ptr<Module> copy = CloneModule(m);
    pm.run(*copy);
  }

  std::string dump_dir_;
  std::unique_ptr<DiskCache> cache_;
  std::string identity_;                                   // plugin_identity(), part of every key
  std::map<std::string, kernels::CompiledKernel> linked_;  // by key: the cached kernels in this process
  std::unique_ptr<TargetMachine> tm_;
  std::unique_ptr<orc::LLJIT> jit_;
  std::mutex mu_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace
}  // namespace fg::jit

extern "C" [[gnu::visibility("default")]] fg::kernels::Jit* fakegpu_jit_create(
    uint32_t abi_version, const fg::kernels::RuntimeSymbol* symbols, size_t n, std::string* error) {
  if (abi_version != fg::kernels::kJitAbiVersion) {
    *error = "libfakegpu_jit.so speaks interface " + std::to_string(fg::kernels::kJitAbiVersion) + ", the backend " +
             std::to_string(abi_version) + ": both must come from the same build";
    return nullptr;
  }
  try {
    return fg::jit::LlvmJit::create(symbols, n, error).release();
  } catch (const std::exception& e) {
    *error = std::string("the kernel compiler failed to start: ") + e.what();
    return nullptr;
  }
}
