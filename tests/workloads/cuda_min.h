// SPDX-License-Identifier: Apache-2.0
// The few CUDA Runtime declarations the workload and benchmark programs use, so they build
// without the CUDA toolkit. They link against libfake_gpu.so (or any libcudart).
#pragma once
#include <cstddef>

extern "C" {
int cudaGetDeviceCount(int* count);
int cudaSetDevice(int device);
int cudaMalloc(void** ptr, size_t size);
int cudaFree(void* ptr);
int cudaMemcpy(void* dst, const void* src, size_t n, int kind);
int cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
const char* cudaGetErrorString(int err);
}
inline constexpr int kCudaMemcpyHostToDevice = 1;
inline constexpr int kCudaMemcpyDeviceToHost = 2;
inline constexpr int kCudaErrorMemoryAllocation = 2;
