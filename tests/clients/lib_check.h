// SPDX-License-Identifier: Apache-2.0
// Shared by the clients of NVIDIA's CUDA libraries (cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN,
// NCCL, NVRTC): the device memory in use on a device as the program's runtime sees it
// (cudaMemGetInfo) and as NVML sees it, printed side by side so run_client_tests.py can
// hold both to the same exact value. NVML is opened with dlopen("libnvidia-ml.so.1"), as
// nvidia-smi and pynvml do: the toolkit ships no NVML stub to link against.
#pragma once
#include "rt_check.h"

#include <dlfcn.h>

#include <initializer_list>

namespace lib_check {

inline size_t runtime_used() {
  size_t free_b = 0, total = 0;
  CK(cudaMemGetInfo(&free_b, &total));
  return total - free_b;
}

// nvmlMemory_t and the three entry points used, as nvml.h declares them.
struct NvmlMemory {
  unsigned long long total, free, used;
};

inline unsigned long long nvml_used(unsigned index) {
  static void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "dlopen libnvidia-ml.so.1: %s\n", dlerror());
    std::exit(1);
  }
  using Init = int (*)();
  using ByIndex = int (*)(unsigned, void**);
  using MemInfo = int (*)(void*, NvmlMemory*);
  static const bool inited = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"))() == 0;
  auto by_index = reinterpret_cast<ByIndex>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto mem_info = reinterpret_cast<MemInfo>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  void* dev = nullptr;
  NvmlMemory m{};
  if (!inited || by_index(index, &dev) != 0 || mem_info(dev, &m) != 0) {
    std::fprintf(stderr, "NVML memory query of device %u failed\n", index);
    std::exit(1);
  }
  return m.used;
}

// "key=<runtime bytes>" and "key_nvml=<NVML bytes>" for the current device.
inline void print_used(const char* key) {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  std::printf("%s=%zu\n%s_nvml=%llu\n", key, runtime_used(), key, nvml_used(static_cast<unsigned>(dev)));
}

// Frees a client's buffers and prints the memory still in use at its end ("used_at_exit").
inline void free_at_exit(std::initializer_list<void*> buffers) {
  for (void* p : buffers) CK(cudaFree(p));
  print_used("used_at_exit");
}

}  // namespace lib_check

// "key=<status as a number>" for a library call whose status is the fact being checked.
#define FACT_STATUS(key, call) std::printf("%s=%d\n", key, static_cast<int>(call))
