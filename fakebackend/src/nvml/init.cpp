// SPDX-License-Identifier: Apache-2.0
// NVML library state: nvmlInit* / nvmlShutdown (reference counted), the device handle table,
// system queries (driver / NVML / CUDA versions) and nvmlErrorString; plus the helpers
// declared in nvml/common.h.
#include "nvml/common.h"

#include "core/config.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fg::nvml {
namespace {

std::mutex g_init_mu;        // serialises init/shutdown
std::atomic<int> g_refs{0};  // nvmlInit* calls not yet matched by nvmlShutdown

// Built once, under g_init_mu, on the first successful init; never freed or resized, so
// handles stay valid (and comparable) across shutdown / re-init, as with the real library.
std::vector<DeviceHandle>* g_table = nullptr;
std::atomic<unsigned> g_count{0};

void build_table() {
  if (g_table) return;
  Backend& backend = Backend::get();  // validates the configuration (exits on a bad one)
  // The backend keeps only the devices CUDA_VISIBLE_DEVICES shows; NVML lists them all.
  // The backend has already accepted this configuration, so this cannot fail here.
  std::vector<DeviceModel> models = load_device_models(std::getenv("FAKEGPU_DEVICES"), std::getenv("FAKEGPU_CONFIG"));
  auto* table = new std::vector<DeviceHandle>(models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    DeviceHandle& h = (*table)[i];
    h.index = static_cast<unsigned>(i);
    h.model = std::move(models[i]);
    h.cuda = backend.device_by_uuid(h.model.uuid.data());
    h.ledger_index = h.cuda ? h.cuda->ledger_index
                            : backend.ledger().register_device(h.model.uuid.data(), h.model.total_memory, h.model.name);
  }
  g_table = table;
  g_count.store(static_cast<unsigned>(table->size()), std::memory_order_release);
}

nvmlReturn_t init(unsigned flags) {
  return guarded([&]() -> nvmlReturn_t {
    std::lock_guard lock(g_init_mu);
    build_table();
    // NVML_INIT_FLAG_NO_GPUS / NO_ATTACH change nothing here: with no devices configured the
    // fake still initialises (nvmlDeviceGetCount then reports 0), flag or not.
    const int refs = g_refs.fetch_add(1, std::memory_order_acq_rel) + 1;
    FG_LOG(Debug, Nvml, "nvmlInit (flags 0x%x): %u device(s), %d reference(s)", flags, device_count(), refs);
    return NVML_SUCCESS;
  });
}

}  // namespace

// ---- common.h ------------------------------------------------------------------------------
bool initialized() noexcept { return g_refs.load(std::memory_order_acquire) > 0; }

unsigned device_count() noexcept { return g_count.load(std::memory_order_acquire); }

DeviceHandle* handle_at(unsigned index) noexcept { return index < device_count() ? &(*g_table)[index] : nullptr; }

DeviceHandle* from_handle(nvmlDevice_t device) noexcept {
  const unsigned n = device_count();
  if (!device || n == 0) return nullptr;
  // Compare addresses before touching anything: a foreign pointer is never dereferenced.
  const auto p = reinterpret_cast<uintptr_t>(device);
  const auto base = reinterpret_cast<uintptr_t>(g_table->data());
  if (p < base) return nullptr;
  const uintptr_t off = p - base;
  if (off % sizeof(DeviceHandle) != 0 || off / sizeof(DeviceHandle) >= n) return nullptr;
  DeviceHandle* h = &(*g_table)[off / sizeof(DeviceHandle)];
  return h->magic == kHandleMagic ? h : nullptr;
}

nvmlReturn_t copy_string(std::string_view s, char* out, unsigned length) noexcept {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < s.size() + 1) {
    if (length > 0) {
      std::memcpy(out, s.data(), length - 1);
      out[length - 1] = '\0';
    }
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return NVML_SUCCESS;
}

nvmlReturn_t to_nvml(Status s) noexcept {
  switch (s) {
    case Status::Ok: return NVML_SUCCESS;
    case Status::InvalidValue:
    case Status::InvalidDevice:
    case Status::InvalidContext:
    case Status::InvalidHandle:
    case Status::InvalidPointer: return NVML_ERROR_INVALID_ARGUMENT;
    case Status::OutOfMemory: return NVML_ERROR_MEMORY;
    case Status::NotInitialized: return NVML_ERROR_UNINITIALIZED;
    case Status::NotFound: return NVML_ERROR_NOT_FOUND;
    case Status::NotSupported: return NVML_ERROR_NOT_SUPPORTED;
    case Status::NotPermitted: return NVML_ERROR_NO_PERMISSION;
    case Status::NotReady: return NVML_ERROR_NOT_READY;
    case Status::AlreadyMapped: return NVML_ERROR_IN_USE;
    default: return NVML_ERROR_UNKNOWN;
  }
}

MemoryNumbers memory_of(const DeviceHandle& h) noexcept {
  // Same arithmetic as Backend::mem_info, by ledger index, so devices CUDA does not show in
  // this process are covered too.
  ledger::Ledger& l = Backend::get().ledger();
  l.reap_dead();
  MemoryNumbers m;
  m.total = l.total(h.ledger_index);
  m.used = std::min(l.used(h.ledger_index), m.total);
  m.free = m.total - m.used;
  return m;
}

std::vector<ledger::ProcessUsage> processes_of(const DeviceHandle& h) {
  return Backend::get().ledger().processes(h.ledger_index);
}

bool mig_capable(const DeviceModel& m) noexcept {
  if (m.architecture >= static_cast<int>(NVML_DEVICE_ARCH_HOPPER)) return true;
  // Among Ampere parts only the GA100 boards (A100, A30) have MIG.
  return m.architecture == static_cast<int>(NVML_DEVICE_ARCH_AMPERE) &&
         (m.name.find("A100") != std::string::npos || m.name.find("A30") != std::string::npos);
}

long long now_us() noexcept {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace fg::nvml

using namespace fg::nvml;

// ---- init / shutdown -------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlInit() { return init(0); }
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlInit_v2() { return init(0); }
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlInitWithFlags(unsigned int flags) { return init(flags); }

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlShutdown() {
  return guarded([&]() -> nvmlReturn_t {
    std::lock_guard lock(g_init_mu);
    const int refs = g_refs.load(std::memory_order_acquire);
    if (refs <= 0) return NVML_ERROR_UNINITIALIZED;
    g_refs.store(refs - 1, std::memory_order_release);
    FG_LOG(Debug, Nvml, "nvmlShutdown: %d reference(s) left", refs - 1);
    return NVML_SUCCESS;
  });
}

// ---- system queries --------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return with_init([&] { return copy_string(kDriverVersion, version, length); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return with_init([&] { return copy_string(kNvmlVersion, version, length); });
}

// Confidential computing is off on the fake system: no CC environment, the feature disabled,
// no developer tools mode, no protected multi-GPU mode (every field 0).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t* state) {
  return with_init([&] {
    if (!state) return NVML_ERROR_INVALID_ARGUMENT;
    *state = nvmlConfComputeSystemState_t{};
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetConfComputeSettings(nvmlSystemConfComputeSettings_t* settings) {
  return with_init([&] {
    if (!settings) return NVML_ERROR_INVALID_ARGUMENT;
    if (settings->version != nvmlSystemConfComputeSettings_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    *settings = nvmlSystemConfComputeSettings_t{};
    settings->version = nvmlSystemConfComputeSettings_v1;
    return NVML_SUCCESS;
  });
}

// The CUDA driver version does not need nvmlInit (the real library asks libcuda directly).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetCudaDriverVersion(int* cuda_driver_version) {
  if (!cuda_driver_version) return NVML_ERROR_INVALID_ARGUMENT;
  *cuda_driver_version = kCudaDriverVersion;
  return NVML_SUCCESS;
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlSystemGetCudaDriverVersion_v2(int* cuda_driver_version) {
  if (!cuda_driver_version) return NVML_ERROR_INVALID_ARGUMENT;
  *cuda_driver_version = kCudaDriverVersion;
  return NVML_SUCCESS;
}

// ---- error strings -----------------------------------------------------------------------------
// The real library's texts (the ones nvidia-smi prints, e.g. "Failed to initialize NVML:
// Driver/library version mismatch"); valid without nvmlInit.
extern "C" FG_IMPL const char* fgimpl_nvmlErrorString(nvmlReturn_t result) {
  switch (static_cast<int>(result)) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires reset";
    case NVML_ERROR_OPERATING_SYSTEM: return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "vGPU ECC not supported";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient Resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset type not supported";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    default: return "Unknown Error";
  }
}
