// SPDX-License-Identifier: Apache-2.0
// Shared by the CUDA Runtime client programs (built with nvcc -cudart shared).
//
// The programs print facts as "key=value" lines on stdout; run_client_tests.py compares
// every line with an exact expected value. A call that must succeed and does not ends the
// program with status 1 and a line on stderr naming the call and the error.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(call)                                                                                                   \
  do {                                                                                                             \
    cudaError_t ck_err_ = (call);                                                                                  \
    if (ck_err_ != cudaSuccess) {                                                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %d %s (%s)\n", __FILE__, __LINE__, #call, static_cast<int>(ck_err_), \
                   cudaGetErrorName(ck_err_), cudaGetErrorString(ck_err_));                                        \
      std::exit(1);                                                                                                \
    }                                                                                                              \
  } while (0)

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form nvidia-smi and NVML print.
inline void format_uuid(const unsigned char* b, char out[41]) {
  int n = std::snprintf(out, 41, "GPU-");
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[n++] = '-';
    n += std::snprintf(out + n, 41 - n, "%02x", b[i]);
  }
}

// Prints "key=<error name>" for a call whose error is itself the fact being checked.
#define FACT_ERR(key, call) std::printf("%s=%s\n", key, cudaGetErrorName(call))
