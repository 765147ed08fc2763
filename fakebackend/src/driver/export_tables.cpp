// SPDX-License-Identifier: Apache-2.0
// cuGetExportTable: the driver's private tables that NVIDIA's own runtime and libraries use.
//
// Every copy of NVIDIA's runtime (a statically linked cudart, NVIDIA's libcudart.so, the
// copies inside cuBLAS, cuDNN, NCCL, …) fetches six tables at start-up and fails without
// them (error 500 for a missing interface, a crash inside its own code for a missing
// context table, error 103 for a wrong integrity answer); cuFFT fetches two more. The
// facts — ids, sizes, what each slot must do — are in shared/research/export-tables.md;
// the section numbers below point there.
//
// A table is an array of pointer-sized words; word 0 is its size in bytes, except for the
// context-local storage table, which has none. Tables are static: every runtime copy in
// the process gets the same addresses, which the integrity check hashes. A slot whose
// meaning the fake does not know is a gap stub: it is counted in the report's coverage
// under "cuGetExportTable{<id>}[<slot>]", stops the process under FAKEGPU_STRICT, and
// answers CUDA_ERROR_NOT_SUPPORTED. An id the fake does not know is counted as an
// unresolved entry point; the ids runtimes only probe for (a log sink, NVRTC's compute
// cache) are refused quietly, as they handle a refusal.
#include "driver/common.h"
#include "driver/internal.h"

#include "common/coverage.h"
#include "core/integrity.h"
#include "core/runtimes.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>
#include <pthread.h>
#include <unistd.h>

using namespace fg;
using namespace fg::drv;

namespace {

using Word = const void*;

// ---- ids --------------------------------------------------------------------------------------
enum Table : int {
  kCudartInterface,  // §2.1
  kToolsHooks,       // §2.2
  kToolsTls,         // §2.3
  kContextLocal,     // §2.4
  kContextChecks,    // §2.5
  kIntegrity,        // §2.6
  kToolsContext,     // §2.8 (cuFFT, cuBLAS)
  kToolsModule,      // §2.9 (cuFFT)
  kTableCount,
};

struct Id {
  uint8_t bytes[16];
};
constexpr Id kIds[kTableCount] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93}},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e}},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2}},
    {{0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e}},
};

// Asked for and refused without harm (§2.7, §2.10): the 13.x runtime's log sink, whose
// acceptance changes how newer runtimes initialise, and NVRTC/nvJitLink's compute cache.
constexpr Id kRefused[] = {
    {{0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9}},
    {{0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41, 0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28}},
    {{0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca}},
};

bool same(const Id& id, const unsigned char* bytes) { return std::memcmp(id.bytes, bytes, 16) == 0; }

// "cuGetExportTable{6bd5fb6c-5bf4-e74a-8987-d93912fd9df9}" (the bytes in order).
void format_id(char (&out)[64], const unsigned char* u) {
  std::snprintf(out, sizeof out,
                "cuGetExportTable{%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x}", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

// ---- gaps ---------------------------------------------------------------------------------------
// A slot the fake does not serve. It takes no declared parameters: the C calling
// convention lets callers pass any.
template <int T, int Slot>
CUresult gap() {
  static const auto name = [] {
    static char buf[80];
    char id[64];
    format_id(id, kIds[T].bytes);
    std::snprintf(buf, sizeof buf, "%s[%d]", id, Slot);
    return buf;
  }();
  return static_cast<CUresult>(coverage::export_gap(name));
}
#define FG_GAP(table, slot) reinterpret_cast<Word>(&gap<table, slot>)
#define FG_FN(f) reinterpret_cast<Word>(&f)
#define FG_SIZE(n) reinterpret_cast<Word>(uintptr_t{(n) * sizeof(Word)})

// The context a table call names: NULL is the calling thread's current context, which may
// be a primary context made current before its retain; otherwise a live context or a
// primary context handle.
CUresult named_ctx(Backend& b, CUcontext h, Context** out) {
  Context* c = h ? ctx_of(h) : b.current_ctx();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  if (!b.ctx_valid(c) && !b.is_primary_handle(c)) return CUDA_ERROR_INVALID_CONTEXT;
  *out = c;
  return CUDA_SUCCESS;
}

// ---- CUDART_INTERFACE §2.1 ----------------------------------------------------------------------
// Slots 1, 6 and 8: a module from a fat binary (a __fatBinC_Wrapper_t for 1 and 6, a bare
// fat binary for 8), in the current context, as cuModuleLoadFatBinary.
CUresult load_fatbin(CUmodule* out, const void* image) {
  return api([&](Backend& b) -> CUresult {
    if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    Module* m = nullptr;
    const Status s = b.module_load(ctx, image, 0, &m);
    if (s != Status::Ok) return s == Status::InvalidValue ? CUDA_ERROR_INVALID_IMAGE : to_cu(s);
    *out = handle_of_module(m);
    return CUDA_SUCCESS;
  });
}
CUresult cudart_module_from_wrapper(CUmodule* out, const void* wrapper) { return load_fatbin(out, wrapper); }
CUresult cudart_module_from_wrapper_ex(CUmodule* out, const void* wrapper, void*, void*, unsigned) {
  return load_fatbin(out, wrapper);
}
CUresult cudart_module_from_fatbin(const void* fatbin, CUmodule* out, void*, void*, unsigned) {
  return load_fatbin(out, fatbin);
}

// Slot 2: the device's primary context handle, neither retained nor activated.
CUresult cudart_primary_context(CUcontext* out, CUdevice dev) {
  return api([&](Backend& b) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Device* d = nullptr;
    if (CUresult r = device_arg(b, dev, &d)) return r;
    *out = handle_of(b.primary_handle(d));
    return CUDA_SUCCESS;
  });
}

void cudart_noop(size_t) {}                                // slot 7
CUresult cudart_load_compilers() { return CUDA_SUCCESS; }  // slot 12 (13.1+): nothing to load

constexpr int kCudartSlots = 13;
const Word kCudartTable[kCudartSlots] = {
    FG_SIZE(kCudartSlots),        FG_FN(cudart_module_from_wrapper), FG_FN(cudart_primary_context),
    FG_GAP(kCudartInterface, 3),  // legacy GL/VDPAU device selection
    FG_GAP(kCudartInterface, 4),  FG_GAP(kCudartInterface, 5),       FG_FN(cudart_module_from_wrapper_ex),
    FG_FN(cudart_noop),           FG_FN(cudart_module_from_fatbin),  FG_GAP(kCudartInterface, 9),
    FG_GAP(kCudartInterface, 10), FG_GAP(kCudartInterface, 11),      FG_FN(cudart_load_compilers),
};

// ---- tools callback hooks §2.2 ------------------------------------------------------------------
// The runtime reads per-API "callback enabled" flags from these buffers; zero everywhere
// means no tool is subscribed, so the callback slots are never reached (and do nothing).
uint32_t g_api_callbacks[1024];   // ≥ 523 entries, indexed by the runtime's callback ids
uint32_t g_domain_callbacks[14];  // ≥ 14 entries
void hooks_api_flags(void** buf, size_t* count) {
  if (buf) *buf = g_api_callbacks;
  if (count) *count = std::size(g_api_callbacks);
}
void hooks_domain_flags(void** buf, size_t* count) {
  if (buf) *buf = g_domain_callbacks;
  if (count) *count = std::size(g_domain_callbacks);
}
CUresult hooks_callback() { return CUDA_SUCCESS; }

constexpr int kHooksSlots = 7;
const Word kHooksTable[kHooksSlots] = {
    FG_SIZE(kHooksSlots),  FG_FN(hooks_callback), FG_FN(hooks_api_flags),    FG_FN(hooks_callback),
    FG_FN(hooks_callback), FG_FN(hooks_callback), FG_FN(hooks_domain_flags),
};

// ---- tools TLS §2.3 -----------------------------------------------------------------------------
CUresult tls_current_context(CUcontext* out) {
  return api([&](Backend& b) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = handle_of(b.current_ctx());
    return CUDA_SUCCESS;
  });
}

constexpr int kTlsSlots = 4;
const Word kTlsTable[kTlsSlots] = {
    FG_SIZE(kTlsSlots),
    FG_GAP(kToolsTls, 1),
    FG_FN(tls_current_context),
    FG_GAP(kToolsTls, 3),
};

// ---- context-local storage §2.4 (no size word) ---------------------------------------------------
CUresult cls_put(CUcontext h, void* key, void* value, Context::LocalDtor dtor) {
  return api([&](Backend& b) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = named_ctx(b, h, &c)) return r;
    return to_cu(b.ctx_local_put(c, key, value, dtor));
  });
}
CUresult cls_delete(CUcontext h, void* key) {
  return api([&](Backend& b) -> CUresult {
    Context* c = nullptr;
    if (CUresult r = named_ctx(b, h, &c)) return r;
    return to_cu(b.ctx_local_delete(c, key));
  });
}
// A miss must fail: the runtime creates its per-context state on it.
[[gnu::noinline]] CUresult cls_get_slow(void** value, CUcontext h, void* key) {
  return api([&](Backend& b) -> CUresult {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    Context* c = nullptr;
    if (CUresult r = named_ctx(b, h, &c)) return r;
    return b.ctx_local_get(c, key, value) == Status::Ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}
// The runtime's every call reads its state here (twice per cudaMalloc+cudaFree pair): what
// this thread read before is answered first, in a frame of its own.
CUresult cls_get(void** value, CUcontext h, void* key) {
  Backend* b = initialized_backend();
  if (b && value && b->ctx_local_remembered(h ? ctx_of(h) : b->current_ctx(), key, value)) return CUDA_SUCCESS;
  return cls_get_slow(value, h, key);
}

const Word kContextLocalTable[4] = {FG_FN(cls_put), FG_FN(cls_delete), FG_FN(cls_get), nullptr};

// ---- context checks §2.5 ------------------------------------------------------------------------
// Slot 2: no context of the fake is a "wrapped" one.
CUresult checks_wrapped(CUcontext, uint32_t* is_wrapped, CUcontext* inner) {
  if (is_wrapped) *is_wrapped = 0;
  if (inner) *inner = nullptr;
  return CUDA_SUCCESS;
}
uint32_t checks_flag() { return 0; }  // slot 3: 1 would switch the runtime to another mode

constexpr int kChecksSlots = 4;
const Word kChecksTable[kChecksSlots] = {
    FG_SIZE(kChecksSlots),
    FG_GAP(kContextChecks, 1),
    FG_FN(checks_wrapped),
    FG_FN(checks_flag),
};

// ---- integrity check §2.6, §3 ------------------------------------------------------------------
CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t out[2]);

constexpr int kIntegritySlots = 3;
const Word kIntegrityTable[kIntegritySlots] = {
    FG_SIZE(kIntegritySlots),
    FG_FN(integrity_check),
    FG_GAP(kIntegrity, 2),
};

CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t out[2]) {
  return api_noinit([&]() -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Backend& b = Backend::get();
    integrity::Inputs in;
    in.driver_version = static_cast<uint32_t>(kDriverVersion);
    in.version = version;
    in.pid = static_cast<uint32_t>(getpid());
    in.tid = static_cast<uint32_t>(pthread_self());
    in.cudart_table = reinterpret_cast<uintptr_t>(kCudartTable);
    in.integrity_table = reinterpret_cast<uintptr_t>(kIntegrityTable);
    in.slot1 = reinterpret_cast<uintptr_t>(kIntegrityTable[1]);
    in.unix_seconds = unix_seconds;
    // Exactly what cuDeviceGetUuid and cuDeviceGetAttribute report, in ordinal order.
    for (int i = 0; i < b.device_count(); ++i) {
      const DeviceModel& m = b.device(i)->model;
      integrity::DeviceId d;
      d.uuid = m.uuid;
      d.pci_domain = m.attributes[attr::PCI_DOMAIN_ID];
      d.pci_bus = m.attributes[attr::PCI_BUS_ID];
      d.pci_device = m.attributes[attr::PCI_DEVICE_ID];
      in.devices.push_back(d);
    }
    const integrity::Digest d = integrity::answer(in);
    std::memcpy(out, d.data(), d.size());
    return CUDA_SUCCESS;
  });
}

// ---- tools context §2.8 -------------------------------------------------------------------------
// Slot 4: the context's unique id (cuCtxGetId's).
CUresult tools_context_id(CUcontext h, unsigned long long* id) {
  return api([&](Backend& b) -> CUresult {
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    Context* c = nullptr;
    if (CUresult r = named_ctx(b, h, &c)) return r;
    *id = c->id;
    return CUDA_SUCCESS;
  });
}

template <int T, size_t... I>
auto gaps_from(std::index_sequence<I...>) {
  return std::array<Word, sizeof...(I)>{FG_GAP(T, I)...};
}

// A table of table T with N slots: its size in slot 0, `fn` in slot `at`, gaps elsewhere.
template <int T, size_t N>
std::array<Word, N> one_function_table(size_t at, Word fn) {
  auto t = gaps_from<T>(std::make_index_sequence<N>{});
  t[0] = FG_SIZE(N);
  t[at] = fn;
  return t;
}

// The real table has about 93 slots; cuBLAS reads up to slot 51.
constexpr int kToolsContextSlots = 93;
const auto kToolsContextTable = one_function_table<kToolsContext, kToolsContextSlots>(4, FG_FN(tools_context_id));

// ---- tools module §2.9 --------------------------------------------------------------------------
// Slot 7: calls cb(user, function, 0) for each kernel of the module; returns how many.
using FunctionVisitor = void (*)(void* user, CUfunction f, unsigned long long extra);
int tools_module_functions(CUcontext, CUmodule hmod, FunctionVisitor cb, void* user);

constexpr int kToolsModuleSlots = 16;
const auto kToolsModuleTable = one_function_table<kToolsModule, kToolsModuleSlots>(7, FG_FN(tools_module_functions));

int tools_module_functions(CUcontext, CUmodule hmod, FunctionVisitor cb, void* user) {
  Backend* b = initialized_backend();
  Module* m = b ? b->module_of_handle(hmod) : nullptr;
  if (!cb || !m) return 0;
  std::vector<Function*> fns;
  if (b->module_functions(m, &fns) != Status::Ok) return 0;
  for (Function* f : fns) cb(user, handle_of_function(f), 0);
  return static_cast<int>(fns.size());
}

const Word* const kTables[kTableCount] = {
    kCudartTable,
    kHooksTable,
    kTlsTable,
    kContextLocalTable,
    kChecksTable,
    kIntegrityTable,
    kToolsContextTable.data(),
    kToolsModuleTable.data(),
};

}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
  *ppExportTable = nullptr;
  const auto* u = reinterpret_cast<const unsigned char*>(pExportTableId->bytes);
  for (int t = 0; t < kTableCount; ++t)
    if (same(kIds[t], u)) {
      // Only NVIDIA's runtime asks for this one: note which copy of it runs (the trampoline
      // jumped here, so the return address is in the caller).
      if (t == kCudartInterface) runtimes::nvidia_seen(__builtin_return_address(0));
      *ppExportTable = kTables[t];
      return CUDA_SUCCESS;
    }
  for (const Id& id : kRefused)
    if (same(id, u)) return CUDA_ERROR_NOT_FOUND;
  char key[64];
  format_id(key, u);
  coverage::unresolved_proc(key, 0, 0);
  return CUDA_ERROR_NOT_FOUND;
}
