// SPDX-License-Identifier: Apache-2.0
// Runtime error reporting: NVIDIA's names and strings, and last-error semantics.
#include "runtime_api.h"

#include <cstring>
#include <thread>

using namespace rtt;

TEST_CASE_METHOD(Case, "cudaGetErrorName/String give NVIDIA's names and strings", "[runtime]") {
  struct Row {
    cudaError_t e;
    const char* name;
    const char* text;
  };
  // Measured from NVIDIA's libcudart.so.13 (CUDA 13.0).
  const Row rows[] = {
      {cudaSuccess, "cudaSuccess", "no error"},
      {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
      {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
      {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
      {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
      {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
      {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
      {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
      {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
       "CUDA driver version is insufficient for CUDA runtime version"},
      {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration", "__global__ function call is not configured"},
      {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
      {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
      {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
      {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
      {cudaErrorUnsupportedLimit, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"},
      {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
      {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
      {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
      {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
      {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
      {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
       "part or all of the requested memory range is already mapped"},
      {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
       "pointer does not correspond to a registered memory region"},
      {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge",
       "too many blocks in cooperative launch"},
      {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
      {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
       "operation not permitted when stream is capturing"},
      {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
      {cudaErrorApiFailureBase, "cudaErrorApiFailureBase", "api failure base"},
  };
  for (const Row& row : rows) {
    INFO("error " << static_cast<int>(row.e));
    CHECK(std::strcmp(r.cudaGetErrorName(row.e), row.name) == 0);
    CHECK(std::strcmp(r.cudaGetErrorString(row.e), row.text) == 0);
  }
  for (int unknown : {-1, 10, 11, 14, 1000, 10001, 123456}) {
    INFO("error " << unknown);
    CHECK(std::strcmp(r.cudaGetErrorName(static_cast<cudaError_t>(unknown)), "unrecognized error code") == 0);
    CHECK(std::strcmp(r.cudaGetErrorString(static_cast<cudaError_t>(unknown)), "unrecognized error code") == 0);
  }
  // Looking names up is not an error.
  CHECK(r.cudaPeekAtLastError() == cudaSuccess);
}

TEST_CASE_METHOD(Case, "every failing call records the last error; reading it clears it", "[runtime]") {
  CHECK(r.cudaGetLastError() == cudaSuccess);

  CHECK(r.cudaSetDevice(-1) == cudaErrorInvalidDevice);
  CHECK(r.cudaPeekAtLastError() == cudaErrorInvalidDevice);
  CHECK(r.cudaPeekAtLastError() == cudaErrorInvalidDevice);  // peek does not clear

  // A later success leaves it; a later failure replaces it.
  int n = 0;
  CHECK(r.cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(r.cudaPeekAtLastError() == cudaErrorInvalidDevice);
  CHECK(r.cudaMalloc(nullptr, 16) == cudaErrorInvalidValue);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(r.cudaGetLastError() == cudaSuccess);
  CHECK(r.cudaPeekAtLastError() == cudaSuccess);

  // Query-style results count too (PyTorch clears cudaErrorNotReady after cudaEventQuery).
  CHECK(r.cudaStreamDestroy(nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidResourceHandle);
}

TEST_CASE_METHOD(Case, "the last error is per thread", "[runtime][threads]") {
  CHECK(r.cudaSetDevice(1 << 20) == cudaErrorInvalidDevice);
  cudaError_t other = cudaErrorUnknown;
  std::thread t([&] { other = r.cudaPeekAtLastError(); });
  t.join();
  CHECK(other == cudaSuccess);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidDevice);
}

TEST_CASE_METHOD(Case, "unsupported runtime calls answer cudaErrorNotSupported and record it", "[runtime]") {
  const void* table = &table;
  cudaUUID_t id{};
  CHECK(r.cudaGetExportTable(&table, &id) == cudaErrorNotSupported);
  CHECK(table == nullptr);
  CHECK(r.cudaGetLastError() == cudaErrorNotSupported);
  CHECK(r.cudaProfilerStart() == cudaSuccess);
  CHECK(r.cudaProfilerStop() == cudaSuccess);
}
