// SPDX-License-Identifier: Apache-2.0
/* A CUDA Runtime + NVML client linked the way a build system links one: gcc, the toolkit's
 * cuda_runtime_api.h, -L build/lib -lcudart -lnvidia-ml (the fake's development names).
 * It must record the real sonames (NEEDED libcudart.so.13, libnvidia-ml.so.1) and the real
 * version (cudaMalloc@libcudart.so.13), so that the same binary runs on the fake and on
 * NVIDIA's libcudart.so.13. Prints key=value facts. */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <string.h>

/* NVML as nvml.h declares it (the toolkit ships no nvml.h; the return type is an enum). */
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int* count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);

int main(void) {
  int count = -1, version = -1;
  printf("runtime_get_version=%s\n", cudaGetErrorName(cudaRuntimeGetVersion(&version)));
  printf("runtime_version=%d\n", version);
  printf("get_device_count=%s\n", cudaGetErrorName(cudaGetDeviceCount(&count)));
  printf("count=%d\n", count);
  unsigned char host[4096], back[4096];
  for (unsigned i = 0; i < sizeof host; ++i) host[i] = (unsigned char)(i * 7 + 3);
  void* dev = NULL;
  printf("malloc=%s\n", cudaGetErrorName(cudaMalloc(&dev, sizeof host)));
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  memset(back, 0, sizeof back);
  cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost);
  printf("roundtrip=%d\n", memcmp(host, back, sizeof host) == 0);

  unsigned nvml_count = 0;
  nvmlDevice_t d0 = NULL;
  char name[96] = "";
  nvmlMemory_t mem = {0, 0, 0};
  printf("nvml_init=%d\n", nvmlInit_v2());
  printf("nvml_count_result=%d\n", nvmlDeviceGetCount_v2(&nvml_count));
  printf("nvml_count=%u\n", nvml_count);
  nvmlDeviceGetHandleByIndex_v2(0, &d0);
  nvmlDeviceGetName(d0, name, sizeof name);
  printf("nvml_name=%s\n", name);
  nvmlDeviceGetMemoryInfo(d0, &mem);
  printf("nvml_used_while_allocated=%llu\n", mem.used);
  printf("free=%s\n", cudaGetErrorName(cudaFree(dev)));
  nvmlDeviceGetMemoryInfo(d0, &mem);
  printf("nvml_used_after_free=%llu\n", mem.used);
  printf("nvml_shutdown=%d\n", nvmlShutdown());
  return 0;
}
