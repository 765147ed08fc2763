// SPDX-License-Identifier: Apache-2.0
// NVML event sets (k8s-device-plugin's health check: XID / ECC events). A fake GPU never
// raises an event, so a wait sleeps for its timeout and answers NVML_ERROR_TIMEOUT ("no
// event"), which is what the plugin expects from a healthy GPU.
#include "nvml/common.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_set>

using namespace fg::nvml;

namespace {

// What the real library reports as supported on datacenter parts.
constexpr unsigned long long kSupportedEvents = nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError |
                                                nvmlEventTypePState | nvmlEventTypeXidCriticalError |
                                                nvmlEventTypeClock;

struct EventSet {
  std::vector<std::pair<DeviceHandle*, unsigned long long>> registrations;
};

// Live sets. Sets are touched only under this lock, so an unknown pointer is never
// dereferenced and a set freed by another thread is never used.
std::mutex g_sets_mu;
std::unordered_set<EventSet*> g_sets;

bool is_live(nvmlEventSet_t set) {
  std::lock_guard lock(g_sets_mu);
  return g_sets.count(reinterpret_cast<EventSet*>(set)) != 0;
}

nvmlReturn_t wait(nvmlEventSet_t set, const void* data, unsigned timeout_ms) {
  return with_init([&]() -> nvmlReturn_t {
    if (!data || !is_live(set)) return NVML_ERROR_INVALID_ARGUMENT;
    // The set is not touched while sleeping, so a concurrent nvmlEventSetFree is harmless.
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return NVML_ERROR_TIMEOUT;
  });
}

}  // namespace

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlEventSetCreate(nvmlEventSet_t* set) {
  return with_init([&]() -> nvmlReturn_t {
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    auto* s = new EventSet;
    std::lock_guard lock(g_sets_mu);
    g_sets.insert(s);
    *set = reinterpret_cast<nvmlEventSet_t>(s);
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlEventSetFree(nvmlEventSet_t set) {
  return with_init([&]() -> nvmlReturn_t {
    auto* s = reinterpret_cast<EventSet*>(set);
    {
      std::lock_guard lock(g_sets_mu);
      if (!g_sets.erase(s)) return NVML_ERROR_INVALID_ARGUMENT;
    }
    delete s;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                                                        unsigned long long* event_types) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!event_types) return NVML_ERROR_INVALID_ARGUMENT;
    *event_types = kSupportedEvents;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long event_types,
                                                                nvmlEventSet_t set) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    std::lock_guard lock(g_sets_mu);
    auto it = g_sets.find(reinterpret_cast<EventSet*>(set));
    if (it == g_sets.end()) return NVML_ERROR_INVALID_ARGUMENT;
    if (event_types & ~kSupportedEvents) return NVML_ERROR_NOT_SUPPORTED;
    (*it)->registrations.emplace_back(&h, event_types);
    FG_LOG(Debug, Nvml, "nvmlDeviceRegisterEvents: device %u, events 0x%llx", h.index, event_types);
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                                        unsigned int timeout_ms) {
  return wait(set, data, timeout_ms);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                           unsigned int timeout_ms) {
  return wait(set, data, timeout_ms);
}
