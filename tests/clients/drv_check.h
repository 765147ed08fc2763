// SPDX-License-Identifier: Apache-2.0
// Shared by the driver-API client programs (g++ against the toolkit's cuda.h, linked with
// its stub libcuda.so, run against the fake libcuda.so.1).
//
// check_driver() is the seed tutorial's __check_cuda_driver (cuGetErrorName +
// cuGetErrorString on failure); it also ends the program, so a run that prints every fact
// line is a run in which every call that had to succeed did. Facts are "key=value" lines.
#pragma once
#include <cuda.h>
#include <cstdio>
#include <cstdlib>

#define checkDriver(op) check_driver((op), #op, __FILE__, __LINE__)

inline bool check_driver(CUresult code, const char* op, const char* file, int line) {
  if (code != CUDA_SUCCESS) {
    const char* err_name = nullptr;
    const char* err_message = nullptr;
    cuGetErrorName(code, &err_name);
    cuGetErrorString(code, &err_message);
    std::fprintf(stderr, "%s:%d  %s failed.\n  code = %s, message = %s\n", file, line, op, err_name, err_message);
    std::exit(1);
  }
  return true;
}

// "key=CUDA_ERROR_NAME" for a call whose result is the fact being checked.
inline void fact_result(const char* key, CUresult code) {
  const char* name = nullptr;
  if (cuGetErrorName(code, &name) != CUDA_SUCCESS || !name) name = "?";
  std::printf("%s=%s\n", key, name);
}

inline void format_uuid(const unsigned char* b, char out[41]) {
  int n = std::snprintf(out, 41, "GPU-");
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[n++] = '-';
    n += std::snprintf(out + n, 41 - n, "%02x", b[i]);
  }
}
