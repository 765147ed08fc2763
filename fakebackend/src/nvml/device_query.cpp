// SPDX-License-Identifier: Apache-2.0
// NVML device enumeration and identity: count, handles (index / UUID / PCI bus id), name,
// UUID, serial, minor number, PCI info, brand, architecture, compute capability, attributes,
// topology, fabric info and the MIG queries (MIG is never enabled on a fake GPU).
#include "nvml/common.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace fg::nvml {
namespace {

nvmlReturn_t get_count(unsigned* count) {
  return with_init([&]() -> nvmlReturn_t {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = device_count();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t handle_by_index(unsigned index, nvmlDevice_t* device) {
  return with_init([&]() -> nvmlReturn_t {
    DeviceHandle* h = handle_at(index);
    if (!h || !device) return NVML_ERROR_INVALID_ARGUMENT;
    *device = to_handle(h);
    return NVML_SUCCESS;
  });
}

// One hexadecimal field of a PCI bus id: 1..max_digits digits, nothing else.
std::optional<unsigned> hex_field(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 16 +
        static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
  }
  return v;
}

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
};

// Accepts what the real library accepts: "domain:bus:device.function" with a 4- or 8-digit
// domain, "bus:device.function", with or without the ".function", any case.
std::optional<PciAddress> parse_bus_id(std::string_view s) {
  PciAddress a;
  const size_t dot = s.rfind('.');
  if (dot != std::string_view::npos) {
    auto fn = hex_field(s.substr(dot + 1), 1);
    if (!fn) return std::nullopt;
    a.function = *fn;
    s = s.substr(0, dot);
  }
  const size_t c2 = s.rfind(':');
  if (c2 == std::string_view::npos) return std::nullopt;
  auto dev = hex_field(s.substr(c2 + 1), 2);
  std::string_view head = s.substr(0, c2);
  const size_t c1 = head.rfind(':');
  auto bus = hex_field(c1 == std::string_view::npos ? head : head.substr(c1 + 1), 2);
  if (!dev || !bus) return std::nullopt;
  if (c1 != std::string_view::npos) {
    auto dom = hex_field(head.substr(0, c1), 8);
    if (!dom) return std::nullopt;
    a.domain = *dom;
  }
  a.bus = *bus;
  a.device = *dev;
  return a;
}

nvmlReturn_t handle_by_pci_bus_id(const char* bus_id, nvmlDevice_t* device) {
  return with_init([&]() -> nvmlReturn_t {
    if (!bus_id || !device) return NVML_ERROR_INVALID_ARGUMENT;
    const auto a = parse_bus_id(bus_id);
    if (!a) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < device_count(); ++i) {
      DeviceHandle* h = handle_at(i);
      if (a->function == 0 && h->model.pci_domain == a->domain && h->model.pci_bus == a->bus &&
          h->model.pci_device == a->device) {
        *device = to_handle(h);
        return NVML_SUCCESS;
      }
    }
    return NVML_ERROR_NOT_FOUND;
  });
}

// The numeric fields both layouts share; everything else zero.
template <class Pci>
void fill_pci_numbers(const DeviceModel& m, Pci* pci) {
  std::memset(pci, 0, sizeof *pci);
  pci->domain = m.pci_domain;
  pci->bus = m.pci_bus;
  pci->device = m.pci_device;
  pci->pciDeviceId = m.pci_device_id;
  pci->pciSubSystemId = m.pci_subsystem_id;
}

void fill_pci_info(const DeviceModel& m, nvmlPciInfo_t* pci) {
  fill_pci_numbers(m, pci);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", cuda_pci_bus_id(m).c_str());
  std::snprintf(pci->busId, sizeof pci->busId, "%s", m.pci_bus_id.c_str());
}

// The unversioned and _v2 entry points predate the 68-byte struct: their callers may pass the
// 52-byte legacy layout, so only that is written (4-digit-domain busId, reserved fields 0).
nvmlReturn_t pci_info_legacy(nvmlDevice_t device, nvmlPciInfoLegacy_t* pci) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci_numbers(h.model, pci);
    std::snprintf(pci->busId, sizeof pci->busId, "%s", cuda_pci_bus_id(h.model).c_str());
    return NVML_SUCCESS;
  });
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

unsigned max_mig_devices(const DeviceModel& m) { return m.name.find("A30") != std::string::npos ? 4 : 7; }

}  // namespace
}  // namespace fg::nvml

using namespace fg::nvml;

// ---- enumeration -----------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetCount(unsigned int* count) { return get_count(count); }
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetCount_v2(unsigned int* count) { return get_count(count); }

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index(index, device);
}
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index(index, device);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return with_init([&]() -> nvmlReturn_t {
    if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < device_count(); ++i) {
      DeviceHandle* h = handle_at(i);
      if (iequals(uuid, h->model.uuid_str)) {
        *device = to_handle(h);
        return NVML_SUCCESS;
      }
    }
    return NVML_ERROR_NOT_FOUND;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetHandleByPciBusId(const char* bus_id, nvmlDevice_t* device) {
  return handle_by_pci_bus_id(bus_id, device);
}
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  return handle_by_pci_bus_id(bus_id, device);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return device_value(device, index, [](DeviceHandle& h) { return h.index; });
}

// ---- identity --------------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return with_device(device, [&](DeviceHandle& h) { return copy_string(h.model.name, name, length); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return with_device(device, [&](DeviceHandle& h) { return copy_string(h.model.uuid_str, uuid, length); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  return with_device(device, [&](DeviceHandle& h) { return copy_string(h.model.serial, serial, length); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return device_value(device, minor, [](DeviceHandle& h) { return h.model.minor_number; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfoLegacy_t* pci) {
  return pci_info_legacy(device, pci);
}
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfoLegacy_t* pci) {
  return pci_info_legacy(device, pci);
}
// busIdLegacy is the 4-digit-domain form cudaDeviceGetPCIBusId prints, busId the 8-digit form
// PyTorch builds with NVML_DEVICE_PCI_BUS_ID_FMT from cudaDeviceProp.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci_info(h.model, pci);
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* type) {
  return device_value(device, type, [](DeviceHandle& h) { return static_cast<nvmlBrandType_t>(h.model.brand); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return device_value(device, arch,
                      [](DeviceHandle& h) { return static_cast<nvmlDeviceArchitecture_t>(h.model.architecture); });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = h.model.cc_major;
    *minor = h.model.cc_minor;
    return NVML_SUCCESS;
  });
}

// MIG device attributes: a full GPU (MIG disabled, the only kind the fake has) has none;
// a real H200 answers NOT_SUPPORTED.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetAttributes_v2(nvmlDevice_t device,
                                                                  nvmlDeviceAttributes_t* attributes) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!attributes) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;
  });
}

// CUDA cores: SMs x FP32 lanes per SM (64 on Turing and GA100, 128 on Ada and Hopper; a real
// H200 reports 132 x 128 = 16896).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* numCores) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!numCores) return NVML_ERROR_INVALID_ARGUMENT;
    const int cc = h.model.cc_major * 10 + h.model.cc_minor;
    const unsigned per_sm = cc == 75 || cc == 80 ? 64 : 128;
    *numCores = static_cast<unsigned>(h.model.sm_count) * per_sm;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int* busWidth) {
  return device_value(device, busWidth, [](DeviceHandle& h) {
    return static_cast<unsigned>(h.model.attributes[fg::attr::GLOBAL_MEMORY_BUS_WIDTH]);
  });
}

// One GPU per board (SXM modules).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int* multiGpuBool) {
  return device_value(device, multiGpuBool, [](DeviceHandle&) { return 0; });
}

// (bus << 8) | device of the PCI address: unique per board (a real H200 at 00:06.0 reports 6).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetBoardId(nvmlDevice_t device, unsigned int* boardId) {
  return device_value(device, boardId, [](DeviceHandle& h) {
    return (h.model.pci_domain << 16) | (h.model.pci_bus << 8) | h.model.pci_device;
  });
}

// Per-process accounting is off unless an administrator turns it on (nvidia-smi -am 1).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return device_value(device, mode, [](DeviceHandle&) { return NVML_FEATURE_DISABLED; });
}

// ---- topology --------------------------------------------------------------------------------
// The fake PCI layout is a DGX A100's (device_model.h): devices 2k and 2k+1 of each group of
// eight share a PCIe switch, each half of a group shares a CPU socket, groups are apart.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                                           nvmlGpuTopologyLevel_t* path_info) {
  return with_device(device1, [&](DeviceHandle& a) -> nvmlReturn_t {
    DeviceHandle* b = from_handle(device2);
    if (!b || !path_info) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned i = a.index, j = b->index;
    if (i == j)
      *path_info = NVML_TOPOLOGY_INTERNAL;
    else if (i / 8 != j / 8)
      *path_info = NVML_TOPOLOGY_SYSTEM;
    else if (i % 8 / 2 == j % 8 / 2)
      *path_info = NVML_TOPOLOGY_MULTIPLE;
    else if (i % 8 / 4 == j % 8 / 4)
      *path_info = NVML_TOPOLOGY_NODE;
    else
      *path_info = NVML_TOPOLOGY_SYSTEM;
    return NVML_SUCCESS;
  });
}

// Peer access as the driver offers it (cuDeviceCanAccessPeer): between two different devices of
// the same architecture. A device with itself answers OK (NCCL asks every pair, the diagonal
// included, and stops on an error); NVLINK is NOT_SUPPORTED because the fake has no NVLink.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                                              nvmlGpuP2PCapsIndex_t p2pIndex,
                                                              nvmlGpuP2PStatus_t* p2pStatus) {
  return with_device(device1, [&](DeviceHandle& a) -> nvmlReturn_t {
    DeviceHandle* b = from_handle(device2);
    if (!b || !p2pStatus) return NVML_ERROR_INVALID_ARGUMENT;
    const bool same_arch = a.model.cc_major == b->model.cc_major && a.model.cc_minor == b->model.cc_minor;
    switch (p2pIndex) {
      case NVML_P2P_CAPS_INDEX_READ:
      case NVML_P2P_CAPS_INDEX_WRITE:
      case NVML_P2P_CAPS_INDEX_ATOMICS:
      case NVML_P2P_CAPS_INDEX_PROP:
        *p2pStatus = same_arch ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_GPU_NOT_SUPPORTED;
        return NVML_SUCCESS;
      case NVML_P2P_CAPS_INDEX_NVLINK: *p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED; return NVML_SUCCESS;
      default: return NVML_ERROR_INVALID_ARGUMENT;
    }
  });
}

// ---- fabric (NVSwitch / multi-node NVLink) -------------------------------------------------------
// No fabric: Hopper and later answer with state NOT_SUPPORTED (as on a system without
// NVSwitches), older parts do not support the query.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t* info) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    if (h.model.architecture < static_cast<int>(NVML_DEVICE_ARCH_HOPPER)) return NVML_ERROR_NOT_SUPPORTED;
    std::memset(info, 0, sizeof *info);
    info->status = NVML_SUCCESS;
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    return NVML_SUCCESS;
  });
}

// Versioned: v2 (36 bytes) or v3 (40 bytes, + healthSummary); only the caller's size is written.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* info) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned version = info->version;
    if (version != nvmlGpuFabricInfo_v2 && version != nvmlGpuFabricInfo_v3) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (h.model.architecture < static_cast<int>(NVML_DEVICE_ARCH_HOPPER)) return NVML_ERROR_NOT_SUPPORTED;
    std::memset(info, 0,
                version == nvmlGpuFabricInfo_v3 ? sizeof(nvmlGpuFabricInfo_v3_t) : sizeof(nvmlGpuFabricInfo_v2_t));
    info->version = version;
    info->status = NVML_SUCCESS;
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    return NVML_SUCCESS;
  });
}

// ---- MIG (never enabled) ------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current_mode,
                                                            unsigned int* pending_mode) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!current_mode || !pending_mode) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_capable(h.model)) return NVML_ERROR_NOT_SUPPORTED;
    *current_mode = NVML_DEVICE_MIG_DISABLE;
    *pending_mode = NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig_capable(h.model)) return NVML_ERROR_NOT_SUPPORTED;
    *count = max_mig_devices(h.model);
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                                           nvmlDevice_t* mig_device) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    (void)index;
    if (!mig_device) return NVML_ERROR_INVALID_ARGUMENT;
    // MIG disabled: there is no MIG device at any index.
    return mig_capable(h.model) ? NVML_ERROR_NOT_FOUND : NVML_ERROR_NOT_SUPPORTED;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig_device) {
  return device_value(device, is_mig_device, [](DeviceHandle&) { return 0; });
}

// Every handle is a full GPU, never a MIG device handle.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig_device,
                                                                                    nvmlDevice_t* device) {
  return with_device(mig_device, [&](DeviceHandle&) -> nvmlReturn_t {
    (void)device;
    return NVML_ERROR_INVALID_ARGUMENT;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!id) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;  // not a MIG device
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!id) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;  // not a MIG device
  });
}

// GPU instance profiles are not modelled (MIG cannot be enabled).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                                           nvmlGpuInstanceProfileInfo_t* info) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    (void)profile;
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;
  });
}
