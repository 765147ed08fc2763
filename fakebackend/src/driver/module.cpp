// SPDX-License-Identifier: Apache-2.0
// Modules, functions, context-independent libraries/kernels, and the JIT linker.
//
// Code is never compiled or run: a module remembers which kernels and globals its PTX
// declares (core/exec.cpp parses ".entry" and ".global"/".const"), cubins and fat binaries
// accept any kernel name, and launches are recorded (launch.cpp). The linker (cuLink*) takes
// the PTX of its inputs (PTX text; that of fat binaries, host objects and static libraries),
// checks the link as nvlink would (one definition of each external name, every name a unit uses
// defined somewhere) and hands out the units as one image that every loader takes: the PTX
// itself for one unit, a linked image (core/fatbin.h) for more, whose PTX the kernel executor
// links on load (ptx::link). A lone CUBIN/FATBINARY input without PTX passes through.
//
// A CUlibrary holds a copy of its image and loads it into each context on first use;
// a CUkernel names one kernel of a library and becomes a CUfunction of the current
// context on use (cuKernelGetFunction, or passed to cuLaunchKernel directly, as CUDA 12
// allows).
#include "driver/internal.h"

#include "core/fatbin.h"
#include "kernels/ptx.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <strings.h>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace fg;
using namespace fg::drv;

namespace {

constexpr uint32_t kElfMagic = 0x464C457F;         // "\x7fELF"
constexpr uint32_t kFatbinMagic = 0xBA55ED50;      // fatbinary header
constexpr uint32_t kFatWrapperMagic = 0x466243B1;  // __fatBinC_Wrapper_t

uint32_t magic_of(const void* image) {
  uint32_t m = 0;
  std::memcpy(&m, image, sizeof m);
  return m;
}

// Size of an image in memory, as far as it can be told from its header; PTX is text up to
// its NUL. 0 when the image is not one the driver recognises.
size_t image_size(const void* image) {
  switch (magic_of(image)) {
    case kElfMagic:
    case kFatbinMagic:
    case fatbin::kLinkedMagic: return static_cast<size_t>(fatbin::binary_extent(image));
    case kFatWrapperMagic: return 24;  // {magic, version, data*, filename_or_fatbins*}
    default: {
      const char* text = static_cast<const char*>(image);
      const size_t len = std::strlen(text);
      if (std::string_view(text, std::min<size_t>(len, 4096)).find(".version") == std::string_view::npos) return 0;
      return len + 1;
    }
  }
}

bool is_ptx(const void* image) {
  const uint32_t m = magic_of(image);
  return m != kElfMagic && m != kFatbinMagic && m != kFatWrapperMagic && m != fatbin::kLinkedMagic;
}

// Does PTX text declare kernel `name` (".entry name")?
bool ptx_has_entry(std::string_view text, std::string_view name) {
  size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string_view::npos) {
    pos += 6;
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (text.substr(pos, name.size()) == name) {
      const size_t end = pos + name.size();
      if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                  text[end] == '$' || text[end] == '.'))
        return true;
    }
  }
  return false;
}

// JIT options: fill the outputs a caller may read back: the logs (`info`, `error`; each cut to
// its buffer, NUL included, as the *_SIZE_BYTES option sizes it, which then says how many bytes
// were written, the NUL not counted) and a zero wall time.
void jit_outputs(unsigned n, const CUjit_option* options, void** values, std::string_view info = {},
                 std::string_view error = {}) {
  if (!n || !options || !values) return;
  size_t written[2] = {0, 0};  // info, error
  for (unsigned i = 0; i < n; ++i) {
    switch (static_cast<int>(options[i])) {
      case CU_JIT_INFO_LOG_BUFFER:
      case CU_JIT_ERROR_LOG_BUFFER: {
        const bool is_info = options[i] == CU_JIT_INFO_LOG_BUFFER;
        const int size_opt = is_info ? CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES : CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
        const std::string_view text = is_info ? info : error;
        for (unsigned j = 0; j < n; ++j) {
          const auto capacity = reinterpret_cast<uintptr_t>(values[j]);
          if (options[j] != size_opt || capacity == 0 || !values[i]) continue;
          const size_t k = std::min<size_t>(text.size(), capacity - 1);
          if (k) std::memcpy(values[i], text.data(), k);  // an empty view's data() may be null
          static_cast<char*>(values[i])[k] = '\0';
          written[is_info ? 0 : 1] = k;
        }
        break;
      }
      default: break;
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    switch (static_cast<int>(options[i])) {
      case CU_JIT_WALL_TIME: {
        const float ms = 0.0f;
        values[i] = nullptr;
        std::memcpy(&values[i], &ms, sizeof ms);
        break;
      }
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: values[i] = reinterpret_cast<void*>(uintptr_t{written[0]}); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: values[i] = reinterpret_cast<void*>(uintptr_t{written[1]}); break;
      default: break;
    }
  }
}

CUresult check_options(unsigned n, const void* options, const void* values) {
  return n > 0 && (!options || !values) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

bool read_file(const char* path, std::vector<char>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  out->push_back('\0');  // PTX must be NUL-terminated; harmless after a binary
  return true;
}

Status get_function(Backend& b, Module* m, const char* name, Function** out) {
  return b.module_get_function(m, name, out);
}

CUresult module_arg(Backend& b, CUmodule h, Module** out) {
  Module* m = b.module_of_handle(h);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  *out = m;
  return CUDA_SUCCESS;
}

// A global variable of a module: its address and size, each where asked for.
CUresult module_global(Backend& b, Module* m, const char* name, CUdeviceptr* dptr, size_t* bytes) {
  void* p = nullptr;
  size_t n = 0;
  if (CUresult r = to_cu(b.module_get_global(m, name, &p, &n))) return r;
  if (dptr) *dptr = dptr_of(p);
  if (bytes) *bytes = n;
  return CUDA_SUCCESS;
}

CUresult load(const void* image, size_t size_hint, CUmodule* out) {
  return api([&](Backend& b) -> CUresult {
    if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    Module* m = nullptr;
    if (CUresult r = to_cu(b.module_load(ctx, image, size_hint, &m))) return r;
    *out = handle_of_module(m);
    return CUDA_SUCCESS;
  });
}

// ---- libraries and kernels -----------------------------------------------------------------------------
struct Library;
struct Kernel {
  uintptr_t handle = 0;  // its CUkernel (Backend::new_handle)
  Library* lib = nullptr;
  std::string name;
};

struct Library {
  uintptr_t handle = 0;  // its CUlibrary (Backend::new_handle)
  std::vector<char> image;
  bool ptx = false;
  std::optional<std::vector<std::string>> linked_kernels;  // a linked image's (cuLinkComplete) kernels
  // A separately compiled program (nvcc -rdc: a version-2 wrapper): copies of its relocatable
  // fat binaries, one per translation unit, and a wrapper naming them and `image`, which is
  // what its modules load (their PTX is linked, core/exec.cpp).
  std::vector<std::vector<char>> units;
  std::vector<const void*> unit_list;  // NULL-terminated
  struct Wrapper {
    uint32_t magic, version;
    const void* data;
    const void* const* units;
  } wrapper{};
  const void* loadable() const { return unit_list.empty() ? static_cast<const void*>(image.data()) : &wrapper; }
  // __managed__ variables: one storage per library, for every context, reachable before
  // any context exists (NVIDIA's runtime asks for them at start-up).
  struct Managed {
    void* ptr;
    size_t size;
  };
  std::map<std::string, Managed> managed;
  // Its module in each context, both by handle: loaded on first use there, and unloaded
  // with the context (a handle, unlike an address, is never taken for a later object).
  std::unordered_map<uintptr_t, uintptr_t> modules;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;  // by name; handles stay valid until unload
};

// Every loaded library and library kernel, by handle.
struct Libraries {
  std::mutex mu;
  std::unordered_map<uintptr_t, Library*> libs;
  std::unordered_map<uintptr_t, Kernel*> kernels;
};
Libraries& libraries() {
  static auto* l = new Libraries;
  return *l;
}

// A loaded library or library kernel; nullptr for anything else.
Library* library_of(CUlibrary h) {
  auto& L = libraries();
  std::lock_guard lock(L.mu);
  return find_handle(L.libs, h);
}
Kernel* kernel_of(const void* h) {
  auto& L = libraries();
  std::lock_guard lock(L.mu);
  return find_handle(L.kernels, h);
}

// The library's module in the current context, loading it on first use.
// A version-2 wrapper's relocatable fat binaries, copied into the library (the program's own
// may be gone by the time a context loads it), with a wrapper of the library's own.
CUresult keep_units(const void* code, Library* lib) {
  constexpr size_t kMaxUnits = 65536;
  if (magic_of(code) != kFatWrapperMagic) return CUDA_SUCCESS;
  uint32_t version = 0;
  const void* const* units = nullptr;
  std::memcpy(&version, static_cast<const char*>(code) + 4, sizeof version);
  std::memcpy(&units, static_cast<const char*>(code) + 16, sizeof units);
  if (version != 2 || !units) return CUDA_SUCCESS;
  for (size_t i = 0;; ++i) {
    if (i == kMaxUnits || !fatbin::readable(units + i, sizeof *units)) return CUDA_ERROR_INVALID_IMAGE;
    if (!units[i]) break;
    const size_t n = image_size(units[i]);
    if (n == 0 || !fatbin::readable(units[i], n)) return CUDA_ERROR_INVALID_IMAGE;
    const auto* u = static_cast<const char*>(units[i]);
    lib->units.emplace_back(u, u + n);
  }
  if (lib->units.empty()) return CUDA_SUCCESS;
  for (const auto& u : lib->units) lib->unit_list.push_back(u.data());
  lib->unit_list.push_back(nullptr);
  lib->wrapper = {kFatWrapperMagic, 2, lib->image.data(), lib->unit_list.data()};
  return CUDA_SUCCESS;
}

CUresult library_module(Backend& b, Library* lib, Module** out) {
  Context* ctx = nullptr;
  if (CUresult r = current(b, &ctx)) return r;
  auto& L = libraries();
  std::lock_guard lock(L.mu);
  const auto loaded = [&b](uintptr_t module) { return b.module_of_handle(reinterpret_cast<void*>(module)); };
  auto it = lib->modules.find(ctx->handle);
  Module* m = it == lib->modules.end() ? nullptr : loaded(it->second);
  if (!m) {  // first use here: the entries of destroyed contexts (their modules unloaded) go
    std::erase_if(lib->modules, [&](const auto& e) { return !loaded(e.second); });
    if (CUresult r = to_cu(b.module_load(ctx, lib->loadable(), lib->ptx ? lib->image.size() - 1 : 0, &m))) return r;
    lib->modules[ctx->handle] = m->handle;
  }
  *out = m;
  return CUDA_SUCCESS;
}

// The same for a handle from the caller: CUDA_ERROR_INVALID_HANDLE unless it is a library.
// Its own name: a lookup handed to with_handle/query_handle must not be an overload set,
// from which the object type cannot be deduced (clang refuses it; g++ guesses).
CUresult library_handle_module(Backend& b, CUlibrary h, Module** out) {
  Library* lib = library_of(h);
  if (!lib) return CUDA_ERROR_INVALID_HANDLE;
  return library_module(b, lib, out);
}

// The library's kernel handle for `name`, made on first request; libraries().mu held.
CUkernel library_kernel(Backend& b, Library* lib, const std::string& name) {
  auto it = lib->kernels.find(name);
  if (it == lib->kernels.end()) {
    auto k = std::make_unique<Kernel>();
    k->handle = b.new_handle(Backend::HandleKind::Kernel);
    k->lib = lib;
    k->name = name;
    it = lib->kernels.emplace(name, std::move(k)).first;
    libraries().kernels.emplace(it->second->handle, it->second.get());
  }
  return reinterpret_cast<CUkernel>(it->second->handle);
}

CUresult kernel_function(Backend& b, Kernel* k, Function** out) {
  Module* m = nullptr;
  if (CUresult r = library_module(b, k->lib, &m)) return r;
  return to_cu(get_function(b, m, k->name.c_str(), out));
}

// A CUkernel argument: a library kernel, else CUDA_ERROR_INVALID_HANDLE.
CUresult kernel_arg(Backend&, CUkernel h, Kernel** out) {
  Kernel* k = kernel_of(h);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  *out = k;
  return CUDA_SUCCESS;
}

// with_handle() for a kernel on a device: body(b, its function in the current context, device).
template <class Body>
CUresult with_kernel_on(bool args_ok, CUkernel kernel, CUdevice dev, Body&& body) {
  return with_handle(args_ok, kernel, kernel_arg, [&](Backend& b, Kernel* k) -> CUresult {
    Device* d = nullptr;
    if (CUresult r = device_arg(b, dev, &d)) return r;
    Function* f = nullptr;
    if (CUresult r = kernel_function(b, k, &f)) return r;
    return body(b, f, d);
  });
}

// A library load's options: the JIT's, then the library's own.
CUresult check_library_options(unsigned numJitOptions, CUjit_option* jitOptions, void** jitOptionsValues,
                               unsigned numLibraryOptions, CUlibraryOption* libraryOptions,
                               void** libraryOptionValues) {
  if (CUresult r = check_options(numJitOptions, jitOptions, jitOptionsValues)) return r;
  // CU_LIBRARY_BINARY_IS_PRESERVED takes no value: cuBLASLt passes it with no value array.
  if (numLibraryOptions > 0 && !libraryOptions) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numLibraryOptions; ++i) {
    if (libraryOptions[i] >= CU_LIBRARY_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    if (libraryOptions[i] != CU_LIBRARY_BINARY_IS_PRESERVED && !libraryOptionValues) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult library_load(const void* code, CUlibrary* library, unsigned numJitOptions, CUjit_option* jitOptions,
                      void** jitOptionsValues, unsigned numLibraryOptions, CUlibraryOption* libraryOptions,
                      void** libraryOptionValues) {
  return api([&](Backend& b) -> CUresult {
    if (!library || !code) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_library_options(numJitOptions, jitOptions, jitOptionsValues, numLibraryOptions,
                                           libraryOptions, libraryOptionValues))
      return r;
    const void* image = code;
    if (magic_of(code) == kFatWrapperMagic) {  // the wrapper points at the fat binary
      const void* data = nullptr;
      std::memcpy(&data, static_cast<const char*>(code) + 8, sizeof data);
      if (!data) return CUDA_ERROR_INVALID_IMAGE;
      image = data;
    }
    const size_t size = image_size(image);
    if (size == 0 || !fatbin::readable(image, size)) return CUDA_ERROR_INVALID_IMAGE;  // the header's size is not there
    auto lib = std::make_unique<Library>();
    lib->ptx = is_ptx(image);
    const auto* bytes = static_cast<const char*>(image);
    lib->image.assign(bytes, bytes + size);
    if (CUresult r = keep_units(code, lib.get())) return r;
    // Loaded into the current context now (errors surface here), into others on first use.
    if (Context* ctx = b.current_ctx(); ctx && ctx->active.load()) {
      Module* m = nullptr;
      if (CUresult r = library_module(b, lib.get(), &m)) return r;
    }
    // Managed variables from the code of the current device (device 0 without a context).
    const Context* cur = b.current_ctx();
    const Device* dev = cur ? cur->dev : b.device(0);
    if (dev) {
      const int cc = dev->model.cc_major * 10 + dev->model.cc_minor;
      std::vector<fatbin::Code> codes;  // a linked image's units, else the one code
      if (magic_of(image) == fatbin::kLinkedMagic) {
        Status refusal = Status::Ok;
        codes = fatbin::linked_units(lib->image.data(), cc, &refusal);
        if (codes.empty()) return to_cu(refusal);
      } else {
        codes.push_back(lib->ptx ? fatbin::ptx_code(std::string_view(lib->image.data(), size - 1), cc)
                                 : fatbin::select_code(image, cc));
      }
      if (magic_of(image) == fatbin::kLinkedMagic) {
        lib->linked_kernels.emplace();
        for (const fatbin::Code& code : codes)
          for (std::string& k : fatbin::kernels(code)) lib->linked_kernels->push_back(std::move(k));
      }
      for (const fatbin::Code& code : codes) {
        Status vars_status = Status::Ok;
        const std::vector<fatbin::Variable> vars = fatbin::variables(code, dev->model.total_memory, &vars_status);
        if (vars_status != Status::Ok) return to_cu(vars_status);
        for (const fatbin::Variable& v : vars)
          if (v.managed && !lib->managed.count(v.name))
            lib->managed[v.name] = {b.variable_storage(v.init.size(), v.init.data(), true, dev->ordinal),
                                    v.init.size()};
      }
    }
    jit_outputs(numJitOptions, jitOptions, jitOptionsValues);
    auto& L = libraries();
    std::lock_guard lock(L.mu);
    Library* raw = lib.release();
    raw->handle = b.new_handle(Backend::HandleKind::Library);
    L.libs.emplace(raw->handle, raw);
    *library = reinterpret_cast<CUlibrary>(raw->handle);
    return CUDA_SUCCESS;
  });
}

// ---- function attributes ---------------------------------------------------------------------------------
// Cluster attributes are kept beside the core's Function (which has no fields for them).
struct ClusterAttrs {
  int width = 0, height = 0, depth = 0, non_portable = 0, policy = 0;
};
struct ClusterBook {
  std::mutex mu;
  std::unordered_map<const Function*, ClusterAttrs> by_function;
};
ClusterBook& clusters() {
  static auto* c = new ClusterBook;
  return *c;
}

Device* device_of(Backend& b, const Function* f) {
  if (f->module && f->module->ctx) return f->module->ctx->dev;
  Context* cur = b.current_ctx();
  return cur ? cur->dev : b.device(0);
}

CUresult get_attribute(Backend& b, Function* f, Device* dev, int attrib, int* pi) {
  const auto& at = dev->model.attributes;
  ClusterAttrs c;
  {
    auto& cb = clusters();
    std::lock_guard lock(cb.mu);
    if (auto it = cb.by_function.find(f); it != cb.by_function.end()) c = it->second;
  }
  (void)b;
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *pi = std::min(f->max_threads_per_block, at[attr::MAX_THREADS_PER_BLOCK]);
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = f->shared_size_bytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = f->const_size_bytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = f->local_size_bytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = f->num_regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:  // the PTX's target when it was loaded from PTX
      *pi = f->module && f->module->ptx_arch ? f->module->ptx_arch : dev->model.cc_major * 10 + dev->model.cc_minor;
      break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = dev->model.cc_major * 10 + dev->model.cc_minor; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->preferred_carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *pi = c.width; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *pi = c.height; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = c.depth; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = c.non_portable; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = c.policy; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult set_attribute(Function* f, Device* dev, int attrib, int value) {
  const auto& at = dev->model.attributes;
  const bool clusters_ok = at[attr::CLUSTER_LAUNCH] != 0;
  auto cluster = [&](auto set) -> CUresult {
    if (!clusters_ok) return CUDA_ERROR_NOT_SUPPORTED;
    if (value < 0) return CUDA_ERROR_INVALID_VALUE;
    auto& cb = clusters();
    std::lock_guard lock(cb.mu);
    set(cb.by_function[f]);
    return CUDA_SUCCESS;
  };
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value > at[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] - f->shared_size_bytes)
        return CUDA_ERROR_INVALID_VALUE;
      f->max_dynamic_shared = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      f->preferred_carveout = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: return cluster([&](ClusterAttrs& c) { c.width = value; });
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: return cluster([&](ClusterAttrs& c) { c.height = value; });
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: return cluster([&](ClusterAttrs& c) { c.depth = value; });
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      return cluster([&](ClusterAttrs& c) { c.non_portable = value != 0; });
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (value > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING) return CUDA_ERROR_INVALID_VALUE;
      return cluster([&](ClusterAttrs& c) { c.policy = value; });
    default: return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
  }
}

CUresult set_cache_config(Function* f, int config) {
  if (!cache_config_ok(config)) return CUDA_ERROR_INVALID_VALUE;
  f->cache_config = config;
  return CUDA_SUCCESS;
}

// ---- linker ------------------------------------------------------------------------------------------------
// One unit of PTX a link may take.
struct LinkUnit {
  std::string name;   // the input's name (cuLinkAddData's, cuLinkAddFile's path; "lib.a(member.o)")
  fatbin::Code code;  // its PTX, as ptx_code checked it
  ptx::Symbols symbols;
  bool member = false;  // of a static library: linked only when it defines a name another unit uses
};

struct LinkState {
  int cc = 0;                   // the compute capability of the device the link is for
  std::vector<LinkUnit> units;  // in the order they were added
  std::vector<char> binary;     // the first CUBIN / FATBINARY input without PTX
  // Inputs with device code whose PTX the fake does not read (machine code only, PTX for a
  // newer device, PTX its parser refuses), each with what the info log says of it: the fake
  // cannot see what they define, so a name no PTX defines may be theirs and is not refused.
  std::vector<std::string> opaque;
  std::vector<unsigned char> output;  // what cuLinkComplete hands out (valid until destroy)
  unsigned num_options = 0;           // cuLinkCreate's options, for the logs
  CUjit_option* options = nullptr;
  void** values = nullptr;
  std::string info_log;
};
struct Links {
  std::mutex mu;
  std::unordered_set<const LinkState*> live;
};
Links& links() {
  static auto* l = new Links;
  return *l;
}
LinkState* link_of(CUlinkState h) { return reinterpret_cast<LinkState*>(h); }
bool link_valid(const LinkState* s) {
  auto& L = links();
  std::lock_guard lock(L.mu);
  return s && L.live.count(s);
}

// The device runtime's functions the kernel executor serves itself: a link need not define them.
bool runtime_function(std::string_view name) {
  return name == "vprintf" || name == "malloc" || name == "free" || name == "__assertfail";
}

CUresult link_create(unsigned numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut) {
  return api([&](Backend& b) -> CUresult {
    if (!stateOut) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_options(numOptions, options, optionValues)) return r;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    auto st = std::make_unique<LinkState>();
    st->cc = ctx->dev->model.cc_major * 10 + ctx->dev->model.cc_minor;
    st->num_options = numOptions;
    st->options = options;
    st->values = optionValues;
    auto& L = links();
    std::lock_guard lock(L.mu);
    LinkState* raw = st.release();
    L.live.insert(raw);
    *stateOut = reinterpret_cast<CUlinkState>(raw);
    return CUDA_SUCCESS;
  });
}

// A refusal with its message in the caller's error log.
CUresult link_error(LinkState* st, CUresult r, const std::string& message) {
  jit_outputs(st->num_options, st->options, st->values, st->info_log, message);
  return r;
}

// PTX text as a unit: checked as the driver's JIT would (a .version, a .target the device
// runs), its symbols read for the link. PTX text the caller hands over is refused when the
// device cannot take it (CUDA_ERROR_INVALID_PTX, the reason in the error log); the PTX beside
// machine code in a binary input makes that input opaque then. PTX the executor's parser
// does not read is kept, as a module load keeps it (its kernels are recorded, not run, with
// the parser's message), and makes the link opaque: what it defines is unknown.
CUresult add_ptx(LinkState* st, std::string_view text, const std::string& name, bool member, bool strict) {
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  LinkUnit u;
  u.name = name;
  u.member = member;
  u.code = fatbin::ptx_code(text, st->cc);
  if (u.code.kind != fatbin::Code::Kind::Ptx) {
    const std::string why = "not PTX for sm_" + std::to_string(st->cc) +
                            " (a .version first, then a .target the device runs)";
    if (strict) return link_error(st, CUDA_ERROR_INVALID_PTX, "error   : " + name + ": " + why);
    st->opaque.push_back("'" + name + "' holds " + why + ": the fake cannot run it");
    return CUDA_SUCCESS;
  }
  ptx::ParseError err;
  const auto* bytes = reinterpret_cast<const char*>(u.code.bytes.data());
  if (std::optional<ptx::Module> m = ptx::parse(std::string_view(bytes, u.code.bytes.size() - 1), &err))
    u.symbols = ptx::symbols(*m);
  else
    st->opaque.push_back("'" + name + "': its PTX does not parse (" + err.message + "): its kernels will not run");
  st->units.push_back(std::move(u));
  return CUDA_SUCCESS;
}

// A fat binary's PTX (the newest the device runs, else the oldest), or its name among the
// opaque inputs when it holds machine code only.
CUresult add_fatbin(LinkState* st, const void* image, const std::string& name, bool member) {
  fatbin::Code code = fatbin::select_ptx(image, st->cc);
  if (code.kind == fatbin::Code::Kind::Ptx)
    return add_ptx(st, std::string_view(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size()), name,
                   member, false);
  if (code.refusal == Status::InvalidImage)
    return link_error(st, CUDA_ERROR_INVALID_IMAGE, "error   : " + name + ": not a fat binary");
  st->opaque.push_back("'" + name + "' holds machine code only: the fake cannot run it");
  return CUDA_SUCCESS;
}

// A host object's device code (nvcc -c / -dc): the PTX of each fat binary it carries.
CUresult add_object(LinkState* st, const unsigned char* data, size_t size, const std::string& name, bool member) {
  if (size < 4 || magic_of(data) != kElfMagic)
    return link_error(st, CUDA_ERROR_INVALID_IMAGE, "error   : " + name + ": not an object file");
  for (const std::vector<unsigned char>& fb : fatbin::object_fatbins(data, size))
    if (CUresult r = add_fatbin(st, fb.data(), name, member)) return r;
  return CUDA_SUCCESS;  // an object without device code adds nothing
}

CUresult link_add(LinkState* st, int type, const char* data, size_t size, const char* name) {
  const std::string input = name && *name ? std::string(name) : "input " + std::to_string(st->units.size() + 1);
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  switch (type) {
    case CU_JIT_INPUT_PTX: return add_ptx(st, std::string_view(data, size), input, false, true);
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_FATBINARY: {
      const uint32_t m = size >= 4 ? magic_of(data) : 0;
      if (m != kElfMagic && m != kFatbinMagic) return CUDA_ERROR_INVALID_IMAGE;
      if (m == kFatbinMagic) {
        const size_t before = st->opaque.size();
        if (CUresult r = add_fatbin(st, data, input, false)) return r;
        if (st->opaque.size() == before) return CUDA_SUCCESS;  // its PTX is a unit
      } else {
        st->opaque.push_back("'" + input + "' holds machine code only: the fake cannot run it");  // a cubin
      }
      if (st->binary.empty()) st->binary.assign(data, data + size);
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_OBJECT: return add_object(st, bytes, size, input, false);
    case CU_JIT_INPUT_LIBRARY: {
      if (!fatbin::is_archive(bytes, size))
        return link_error(st, CUDA_ERROR_INVALID_IMAGE, "error   : " + input + ": not a static library");
      for (const fatbin::ArchiveMember& mem : fatbin::archive_members(bytes, size))
        if (mem.size >= 4 && magic_of(mem.data) == kElfMagic)
          if (CUresult r = add_object(st, mem.data, mem.size, input + "(" + mem.name + ")", true)) return r;
      return CUDA_SUCCESS;
    }
    case CU_JIT_INPUT_NVVM: return CUDA_ERROR_NOT_SUPPORTED;  // LTO IR needs the JIT compiler
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// The link: the units that are not library members, then the members that define a name the
// linked units use, until none does. Every external name one strong definition at most, every
// name used defined (or served by the runtime, or possibly in an opaque input). The image on
// success: the PTX of a single unit, else a linked image of them all.
CUresult link_complete(LinkState* st) {
  std::vector<const LinkUnit*> linked;
  for (const LinkUnit& u : st->units)
    if (!u.member) linked.push_back(&u);
  if (linked.empty()) {
    if (st->binary.empty()) return CUDA_ERROR_INVALID_IMAGE;  // nothing to link
    st->output.assign(st->binary.begin(), st->binary.end());
    return CUDA_SUCCESS;
  }
  struct Definition {
    const LinkUnit* unit;
    bool weak;
  };
  std::map<std::string, Definition> defined;
  std::vector<std::pair<std::string, const LinkUnit*>> missing;  // (name, the first unit using it)
  for (;;) {
    defined.clear();
    for (const LinkUnit* u : linked)
      for (const ptx::Symbols::Definition& d : u->symbols.defined) {
        auto [it, fresh] = defined.try_emplace(d.name, Definition{u, d.weak});
        if (fresh || d.weak) continue;
        if (!it->second.weak)
          return link_error(st, CUDA_ERROR_INVALID_PTX,
                            "error   : Multiple definition of '" + d.name + "' in '" + u->name +
                                "', first defined in '" + it->second.unit->name + "'");
        it->second = {u, false};
      }
    missing.clear();
    std::set<std::string> listed;
    for (const LinkUnit* u : linked)
      for (const std::string& n : u->symbols.undefined)
        if (!defined.count(n) && !runtime_function(n) && listed.insert(n).second) missing.emplace_back(n, u);
    const LinkUnit* pulled = nullptr;
    for (const LinkUnit& u : st->units) {
      if (!u.member || std::find(linked.begin(), linked.end(), &u) != linked.end()) continue;
      for (const ptx::Symbols::Definition& d : u.symbols.defined)
        if (listed.count(d.name)) pulled = &u;
      if (pulled) break;
    }
    if (!pulled) break;
    linked.push_back(pulled);
  }
  if (!missing.empty()) {
    if (st->opaque.empty())
      return link_error(
          st, CUDA_ERROR_INVALID_PTX,
          "error   : Undefined reference to '" + missing.front().first + "' in '" + missing.front().second->name + "'");
    for (const auto& [n, u] : missing)
      st->info_log += "info    : '" + n + "' (used in '" + u->name +
                      "') is defined by no PTX input; an input without PTX the fake runs may define it\n";
  }
  if (linked.size() > fatbin::kMaxLinkedImageUnits)
    return link_error(st, CUDA_ERROR_INVALID_IMAGE,
                      "error   : more than " + std::to_string(fatbin::kMaxLinkedImageUnits) + " units of PTX to link");
  if (linked.size() == 1) {
    const std::vector<unsigned char>& text = linked.front()->code.bytes;  // NUL-terminated
    st->output.assign(text.begin(), text.end());
  } else {
    std::vector<fatbin::Code> codes;
    for (const LinkUnit* u : linked) codes.push_back(u->code);
    st->output = fatbin::linked_image(codes);
  }
  for (const std::string& n : st->opaque) st->info_log += "info    : " + n + "\n";
  return CUDA_SUCCESS;
}

CUresult link_add_data(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                       unsigned numOptions, CUjit_option* options, void** optionValues) {
  return api([&](Backend&) -> CUresult {
    LinkState* st = link_of(state);
    if (!link_valid(st)) return CUDA_ERROR_INVALID_HANDLE;
    if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_options(numOptions, options, optionValues)) return r;
    if (!fatbin::readable(data, size)) return CUDA_ERROR_INVALID_VALUE;  // a size past the caller's buffer
    auto& L = links();
    std::lock_guard lock(L.mu);
    CUresult r = link_add(st, static_cast<int>(type), static_cast<const char*>(data), size, name);
    if (r == CUDA_SUCCESS) jit_outputs(numOptions, options, optionValues);
    return r;
  });
}

CUresult link_add_file(CUlinkState state, CUjitInputType type, const char* path, unsigned numOptions,
                       CUjit_option* options, void** optionValues) {
  return api([&](Backend&) -> CUresult {
    LinkState* st = link_of(state);
    if (!link_valid(st)) return CUDA_ERROR_INVALID_HANDLE;
    if (!path || static_cast<unsigned>(type) >= CU_JIT_NUM_INPUT_TYPES) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_options(numOptions, options, optionValues)) return r;
    std::vector<char> bytes;  // the arguments checked, then the file read
    if (!read_file(path, &bytes)) return CUDA_ERROR_FILE_NOT_FOUND;
    auto& L = links();
    std::lock_guard lock(L.mu);
    CUresult r = link_add(st, static_cast<int>(type), bytes.data(), bytes.size() - 1, path);
    if (r == CUDA_SUCCESS) jit_outputs(numOptions, options, optionValues);
    return r;
  });
}

}  // namespace

// ---- shared with launch.cpp ------------------------------------------------------------------------------
namespace fg::drv {

CUresult function_arg(Backend& b, CUfunction h, Function** out) {
  if (Function* f = b.function_of_handle(h)) {
    *out = f;
    return CUDA_SUCCESS;
  }
  if (Kernel* k = kernel_of(h)) return kernel_function(b, k, out);
  return CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace fg::drv

// ---- modules ---------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuModuleLoad(CUmodule* module, const char* fname) {
  return api([&](Backend& b) -> CUresult {
    if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    std::vector<char> bytes;
    if (!read_file(fname, &bytes)) return CUDA_ERROR_FILE_NOT_FOUND;
    if (bytes.size() < 5) return CUDA_ERROR_INVALID_IMAGE;
    Module* m = nullptr;
    if (CUresult r = to_cu(b.module_load(ctx, bytes.data(), bytes.size() - 1, &m))) return r;
    m->origin = fname;
    *module = handle_of_module(m);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleLoadData(CUmodule* module, const void* image) {
  return load(image, 0, module);
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                                      CUjit_option* options, void** optionValues) {
  if (CUresult r = check_options(numOptions, options, optionValues))
    return initialized_backend() ? r : CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = load(image, 0, module);
  if (r == CUDA_SUCCESS) jit_outputs(numOptions, options, optionValues);
  return r;
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return load(fatCubin, 0, module);
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleUnload(CUmodule hmod) {
  return with_handle(true, hmod, module_arg, [](Backend& b, Module* m) { return to_cu(b.module_unload(m)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return with_handle(hfunc && name, hmod, module_arg, [&](Backend& b, Module* m) -> CUresult {
    Function* f = nullptr;
    if (CUresult r = to_cu(get_function(b, m, name, &f))) return r;
    *hfunc = handle_of_function(f);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod,
                                                        const char* name) {
  return with_handle(name != nullptr, hmod, module_arg,
                     [&](Backend& b, Module* m) { return module_global(b, m, name, dptr, bytes); });
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  return query_handle(count, mod, module_arg, [](Module* m) {
    return static_cast<unsigned>(m->names_complete ? m->entry_names.size() : m->functions.size());
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions,
                                                              CUmodule mod) {
  return with_handle(functions != nullptr, mod, module_arg, [&](Backend& b, Module* m) -> CUresult {
    std::vector<std::string> names = m->entry_names;
    if (!m->names_complete)
      for (const auto& [name, f] : m->functions) names.push_back(name);
    if (numFunctions > names.size()) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numFunctions; ++i) {
      Function* f = nullptr;
      if (CUresult r = to_cu(get_function(b, m, names[i].c_str(), &f))) return r;
      functions[i] = handle_of_function(f);
    }
    return CUDA_SUCCESS;
  });
}

// CUDA_MODULE_LOADING=EAGER selects eager loading; lazy is the default since CUDA 12.2.
extern "C" FG_IMPL CUresult fgimpl_cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  return api([&](Backend&) -> CUresult {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    const char* env = std::getenv("CUDA_MODULE_LOADING");
    *mode = env && strcasecmp(env, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
  });
}

// ---- functions -------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return with_handle(pi != nullptr, hfunc, function_arg, [&](Backend& b, Function* f) {
    return get_attribute(b, f, device_of(b, f), static_cast<int>(attrib), pi);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return with_handle(true, hfunc, function_arg, [&](Backend& b, Function* f) {
    return set_attribute(f, device_of(b, f), static_cast<int>(attrib), value);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return with_handle(true, hfunc, function_arg,
                     [&](Backend&, Function* f) { return set_cache_config(f, static_cast<int>(config)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
  return with_handle(true, hfunc, function_arg, [&](Backend&, Function*) {
    return shmem_config_ok(config) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncGetName(const char** name, CUfunction hfunc) {
  return query_handle(name, hfunc, function_arg, [](Function* f) { return f->name.c_str(); });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return query_handle(hmod, hfunc, function_arg, [](Function* f) { return handle_of_module(f->module); });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  return query_handle(state, function, function_arg, [](Function*) { return CU_FUNCTION_LOADING_STATE_LOADED; });
}

extern "C" FG_IMPL CUresult fgimpl_cuFuncLoad(CUfunction function) {
  return with_handle(true, function, function_arg, [](Backend&, Function*) { return CUDA_SUCCESS; });
}

// ---- libraries and kernels -------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                                     void** jitOptionsValues, unsigned int numJitOptions,
                                                     CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                                     unsigned int numLibraryOptions) {
  return library_load(code, library, numJitOptions, jitOptions, jitOptionsValues, numLibraryOptions, libraryOptions,
                      libraryOptionValues);
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryLoadFromFile(CUlibrary* library, const char* fileName,
                                                         CUjit_option* jitOptions, void** jitOptionsValues,
                                                         unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                                         void** libraryOptionValues, unsigned int numLibraryOptions) {
  if (!initialized_backend()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
  // The arguments first, then the file.
  if (CUresult r = check_library_options(numJitOptions, jitOptions, jitOptionsValues, numLibraryOptions, libraryOptions,
                                         libraryOptionValues))
    return r;
  std::vector<char> bytes;
  try {
    if (!read_file(fileName, &bytes)) return CUDA_ERROR_FILE_NOT_FOUND;
  } catch (...) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (bytes.size() < 5) return CUDA_ERROR_INVALID_IMAGE;
  return library_load(bytes.data(), library, numJitOptions, jitOptions, jitOptionsValues, numLibraryOptions,
                      libraryOptions, libraryOptionValues);
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryUnload(CUlibrary library) {
  return api([&](Backend& b) -> CUresult {
    auto& L = libraries();
    std::unique_lock lock(L.mu);
    Library* lib = find_handle(L.libs, library);
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    L.libs.erase(lib->handle);
    for (auto& [name, k] : lib->kernels) L.kernels.erase(k->handle);
    lock.unlock();
    for (auto& [ctx, handle] : lib->modules)
      if (Module* m = b.module_of_handle(reinterpret_cast<void*>(handle))) (void)b.module_unload(m);
    for (auto& [name, v] : lib->managed) b.variable_release(v.ptr);
    delete lib;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return api([&](Backend& b) -> CUresult {
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    auto& L = libraries();
    std::lock_guard lock(L.mu);
    Library* lib = find_handle(L.libs, library);
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    if (!lib->kernels.count(name) && lib->ptx &&
        !ptx_has_entry(std::string_view(lib->image.data(), lib->image.size() - 1), name))
      return CUDA_ERROR_NOT_FOUND;
    if (lib->linked_kernels &&
        std::find(lib->linked_kernels->begin(), lib->linked_kernels->end(), name) == lib->linked_kernels->end())
      return CUDA_ERROR_NOT_FOUND;
    *pKernel = library_kernel(b, lib, name);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  return query_handle(pMod, library, library_handle_module, [](Module* m) { return handle_of_module(m); });
}

namespace {
// A library variable in the current context.
CUresult library_variable(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return with_handle(name != nullptr, library, library_handle_module,
                     [&](Backend& b, Module* m) { return module_global(b, m, name, dptr, bytes); });
}
}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                                      const char* name) {
  return library_variable(dptr, bytes, library, name);
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                                       const char* name) {
  return api([&](Backend&) -> CUresult {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    Library* lib = library_of(library);
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;
    auto it = lib->managed.find(name);
    if (it == lib->managed.end() || !it->second.ptr) return CUDA_ERROR_NOT_FOUND;
    if (dptr) *dptr = dptr_of(it->second.ptr);
    if (bytes) *bytes = it->second.size;
    return CUDA_SUCCESS;
  });
}

// The kernels of a library: those its code for the current context's device defines.
extern "C" FG_IMPL CUresult fgimpl_cuLibraryGetKernelCount(unsigned int* count, CUlibrary library) {
  return query_handle(count, library, library_handle_module,
                      [](Module* m) { return static_cast<unsigned>(m->entry_names.size()); });
}

extern "C" FG_IMPL CUresult fgimpl_cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels,
                                                             CUlibrary library) {
  return with_handle(kernels != nullptr, library, library_handle_module, [&](Backend& b, Module* m) -> CUresult {
    if (numKernels > m->entry_names.size()) return CUDA_ERROR_INVALID_VALUE;
    auto& L = libraries();
    std::lock_guard lock(L.mu);
    Library* lib = find_handle(L.libs, library);
    if (!lib) return CUDA_ERROR_INVALID_HANDLE;  // unloaded meanwhile
    for (unsigned i = 0; i < numKernels; ++i) kernels[i] = library_kernel(b, lib, m->entry_names[i]);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  return with_handle(pFunc != nullptr, kernel, kernel_arg, [&](Backend& b, Kernel* k) -> CUresult {
    Function* f = nullptr;
    if (CUresult r = kernel_function(b, k, &f)) return r;
    *pFunc = handle_of_function(f);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel,
                                                        CUdevice dev) {
  return with_kernel_on(pi != nullptr, kernel, dev, [&](Backend& b, Function* f, Device* d) {
    return get_attribute(b, f, d, static_cast<int>(attrib), pi);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                                        CUdevice dev) {
  return with_kernel_on(true, kernel, dev, [&](Backend&, Function* f, Device* d) {
    return set_attribute(f, d, static_cast<int>(attrib), val);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  return with_kernel_on(true, kernel, dev,
                        [&](Backend&, Function* f, Device*) { return set_cache_config(f, static_cast<int>(config)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelGetName(const char** name, CUkernel hfunc) {
  return query_handle(name, hfunc, kernel_arg, [](Kernel* k) { return k->name.c_str(); });
}

extern "C" FG_IMPL CUresult fgimpl_cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  return query_handle(pLib, kernel, kernel_arg, [](Kernel* k) { return reinterpret_cast<CUlibrary>(k->lib->handle); });
}

// ---- linker ------------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                                CUlinkState* stateOut) {
  return link_create(numOptions, options, optionValues, stateOut);
}
extern "C" FG_IMPL CUresult fgimpl_cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                                   CUlinkState* stateOut) {
  return link_create(numOptions, options, optionValues, stateOut);
}

extern "C" FG_IMPL CUresult fgimpl_cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                                 const char* name, unsigned int numOptions, CUjit_option* options,
                                                 void** optionValues) {
  return link_add_data(state, type, data, size, name, numOptions, options, optionValues);
}
extern "C" FG_IMPL CUresult fgimpl_cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                                    const char* name, unsigned int numOptions, CUjit_option* options,
                                                    void** optionValues) {
  return link_add_data(state, type, data, size, name, numOptions, options, optionValues);
}

extern "C" FG_IMPL CUresult fgimpl_cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
                                                 unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return link_add_file(state, type, path, numOptions, options, optionValues);
}
extern "C" FG_IMPL CUresult fgimpl_cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path,
                                                    unsigned int numOptions, CUjit_option* options,
                                                    void** optionValues) {
  return link_add_file(state, type, path, numOptions, options, optionValues);
}

// The linked image (link_complete): sizeOut is optional.
extern "C" FG_IMPL CUresult fgimpl_cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  return api([&](Backend&) -> CUresult {
    if (!cubinOut) return CUDA_ERROR_INVALID_VALUE;
    LinkState* st = link_of(state);
    if (!link_valid(st)) return CUDA_ERROR_INVALID_HANDLE;
    auto& L = links();
    std::lock_guard lock(L.mu);
    st->info_log.clear();
    if (CUresult r = link_complete(st)) return r;
    jit_outputs(st->num_options, st->options, st->values, st->info_log);
    *cubinOut = st->output.data();
    if (sizeOut) *sizeOut = st->output.size();
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuLinkDestroy(CUlinkState state) {
  return api([&](Backend&) -> CUresult {
    LinkState* st = link_of(state);
    auto& L = links();
    std::unique_lock lock(L.mu);
    if (!st || !L.live.count(st)) return CUDA_ERROR_INVALID_HANDLE;
    L.live.erase(st);
    lock.unlock();
    delete st;
    return CUDA_SUCCESS;
  });
}
