// SPDX-License-Identifier: Apache-2.0
// The seed tutorial's first two driver-API programs (cuInit, error checking, driver
// version, device name), extended to every device: what a driver-API client learns
// before it creates a context.
#include "drv_check.h"

#include <cstring>

int main() {
  // Before cuInit every call fails with CUDA_ERROR_NOT_INITIALIZED (the tutorial's point).
  int count = -1;
  fact_result("count_before_init", cuDeviceGetCount(&count));
  // cuGetErrorString/Name work without cuInit: the tutorial prints its failures with them.
  const char* msg = nullptr;
  fact_result("error_string_before_init", cuGetErrorString(CUDA_ERROR_INVALID_DEVICE, &msg));
  std::printf("invalid_device_message=%s\n", msg ? msg : "(null)");
  fact_result("init_flags_1", cuInit(1));
  checkDriver(cuInit(0));

  int driver_version = 0;
  checkDriver(cuDriverGetVersion(&driver_version));
  std::printf("driver_version=%d\n", driver_version);

  // The tutorial names device 0 without cuDeviceGet: CUdevice is the ordinal.
  char device_name[100];
  CUdevice device = 0;
  checkDriver(cuDeviceGetName(device_name, sizeof(device_name), device));
  std::printf("device0_name=%s\n", device_name);

  checkDriver(cuDeviceGetCount(&count));
  std::printf("count=%d\n", count);
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    checkDriver(cuDeviceGet(&dev, i));
    char name[256];
    checkDriver(cuDeviceGetName(name, sizeof name, dev));
    size_t total = 0;
    checkDriver(cuDeviceTotalMem(&total, dev));
    int major = 0, minor = 0, sms = 0, bus = 0, dom = 0, pdev = 0;
    checkDriver(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    checkDriver(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    checkDriver(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    checkDriver(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev));
    checkDriver(cuDeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev));
    checkDriver(cuDeviceGetAttribute(&pdev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev));
    CUuuid uu;
    checkDriver(cuDeviceGetUuid(&uu, dev));
    char uuid[41];
    format_uuid(reinterpret_cast<const unsigned char*>(uu.bytes), uuid);
    char bus_id[32];
    checkDriver(cuDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
    CUdevice back = -1;
    checkDriver(cuDeviceGetByPCIBusId(&back, bus_id));
    std::printf("dev%d.name=%s\ndev%d.total_mem=%zu\ndev%d.cc=%d.%d\ndev%d.sms=%d\n", i, name, i, total, i, major,
                minor, i, sms);
    std::printf("dev%d.pci=%x:%x:%x\ndev%d.pci_bus_id=%s\ndev%d.by_pci_bus_id=%d\ndev%d.uuid=%s\n", i, dom, bus, pdev,
                i, bus_id, i, back, i, uuid);
  }

  // The tutorial's error path, through check_driver's two lookups.
  CUresult code = cuDeviceGetName(device_name, sizeof(device_name), count);
  const char* err_name = nullptr;
  const char* err_message = nullptr;
  cuGetErrorName(code, &err_name);
  cuGetErrorString(code, &err_message);
  std::printf("bad_device.code=%d\nbad_device.name=%s\nbad_device.message=%s\n", static_cast<int>(code), err_name,
              err_message);
  fact_result("unknown_error_code_name", cuGetErrorName(static_cast<CUresult>(123456), &err_name));
  int attr = 0;
  fact_result("attribute_out_of_range", cuDeviceGetAttribute(&attr, static_cast<CUdevice_attribute>(100000), 0));
  return 0;
}
