// SPDX-License-Identifier: Apache-2.0
// cuInit and cuDriverGetVersion: the gate of the driver API.
//
// Before a successful cuInit every call except cuInit, cuDriverGetVersion,
// cuGetErrorName/String and cuGetProcAddress answers CUDA_ERROR_NOT_INITIALIZED (common.h).
// cuInit with no visible device answers CUDA_ERROR_NO_DEVICE and leaves the driver
// uninitialised, as the real driver does on a machine without GPUs.
#include "driver/common.h"

#include "common/log.h"

using namespace fg;
using namespace fg::drv;

extern "C" FG_IMPL CUresult fgimpl_cuInit(unsigned int Flags) {
  return api_noinit([&]() -> CUresult {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Backend& b = Backend::get();  // a configuration error ends the process with its message
    if (b.device_count() == 0) return CUDA_ERROR_NO_DEVICE;
    if (!b.driver_initialized()) {
      b.set_driver_initialized();
      FG_LOG(Info, Driver, "cuInit: %d device(s), driver version %d", b.device_count(), kDriverVersion);
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = kDriverVersion;
  return CUDA_SUCCESS;
}

// Profiler control: nothing to start or stop without a profiler attached.
extern "C" FG_IMPL CUresult fgimpl_cuProfilerStart(void) {
  return api([](Backend&) { return CUDA_SUCCESS; });
}
extern "C" FG_IMPL CUresult fgimpl_cuProfilerStop(void) {
  return api([](Backend&) { return CUDA_SUCCESS; });
}
