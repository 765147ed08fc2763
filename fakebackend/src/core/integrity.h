// SPDX-License-Identifier: Apache-2.0
// The answer to NVIDIA's runtime integrity check (export table d4082055…, slot 1).
//
// Every copy of NVIDIA's runtime (static cudart, libcudart.so, the copies inside cuBLAS,
// cuDNN, NCCL, …) asks the driver for an HMAC-MD2 over what the driver reports about itself
// and the calling thread, computes the same value, and latches cudaErrorSoftwareValidityNot-
// Established (103) for every later call when they differ. The inputs and the algorithm are
// in shared/research/export-tables.md §3; this is a pure function of them, so it is tested
// against that document's vectors without a runtime.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fg::integrity {

using Digest = std::array<uint8_t, 16>;

// RFC 1319 MD2.
Digest md2(const uint8_t* data, size_t size);

struct DeviceId {
  std::array<uint8_t, 16> uuid{};  // as cuDeviceGetUuid reports it
  int32_t pci_domain = 0;          // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID (50)
  int32_t pci_bus = 0;             // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID (33)
  int32_t pci_device = 0;          // CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID (34)
};

struct Inputs {
  uint32_t driver_version = 0;    // what cuDriverGetVersion reports
  uint32_t version = 0;           // the call's argument: runtime version + 0, 1 or 2
  uint32_t pid = 0;               // getpid()
  uint32_t tid = 0;               // low 32 bits of the calling thread's pthread_self()
  uint64_t cudart_table = 0;      // address of the CUDART_INTERFACE table handed out
  uint64_t integrity_table = 0;   // address of the integrity table handed out
  uint64_t slot1 = 0;             // the pointer stored in the integrity table's slot 1
  uint64_t unix_seconds = 0;      // the call's argument (the runtime's time(NULL))
  std::vector<DeviceId> devices;  // every device, in ordinal order
};

// What slot 1 writes for `in`: fixed values for version % 10 of 0 and 1 (runtimes check
// only the third call), HMAC-MD2 of the packed inputs otherwise.
Digest answer(const Inputs& in);

}  // namespace fg::integrity
