// SPDX-License-Identifier: Apache-2.0
/* A CUDA 12 client, without a CUDA 12 toolkit: what a program built by nvcc 12.x with
 * -cudart shared imports from libcudart.so.12 (every name bound at version
 * "libcudart.so.12", as the linker records it), called through dlvsym so the version
 * node is the one used. It checks that libcudart.so.12 serves the CUDA 12 ABI:
 *   - cudaGetDeviceProperties_v2 (12.x) and cudaGetDeviceProperties@libcudart.so.12 fill
 *     the 1032-byte 12.x cudaDeviceProp (multiProcessorCount at 388, pciBusID at 584) and
 *     not a byte more; cudaGetDeviceProperties@libcudart.so.13 fills the 1008-byte 13.0 one;
 *   - a kernel registered the way nvcc 12 host code does it and launched with
 *     cudaLaunchKernel (CUDA 12's launch path) is recorded under its name.
 * Offsets: ../shared/research/census-probes/results/abi_cuda12_layout.txt, abi_cuda13.txt.
 * Facts are "key=value" lines. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned x, y, z;
} dim3;
typedef int (*get_props_fn)(void* prop, int device);
typedef int (*int_fn)(int*);
typedef const char* (*str_fn)(int);
typedef void** (*reg_fatbin_fn)(void*);
typedef void (*reg_end_fn)(void**);
typedef void (*reg_func_fn)(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
typedef void (*unreg_fn)(void**);
typedef int (*launch_fn)(const void*, dim3, dim3, void**, size_t, void*);
typedef int (*malloc_fn)(void**, size_t);
typedef int (*free_fn)(void*);

static void* lib;

static void* sym(const char* name, const char* version) {
  void* p = dlvsym(lib, name, version);
  if (!p) {
    fprintf(stderr, "dlvsym(%s, %s): %s\n", name, version, dlerror());
    exit(1);
  }
  return p;
}

static int i32(const unsigned char* b, size_t off) {
  int v;
  memcpy(&v, b + off, sizeof v);
  return v;
}
static size_t u64(const unsigned char* b, size_t off) {
  size_t v;
  memcpy(&v, b + off, sizeof v);
  return v;
}
/* Bytes from `from` to the end of a 2048-byte buffer that are not the fill value. */
static int written_past(const unsigned char* b, size_t from) {
  int n = 0;
  for (size_t i = from; i < 2048; ++i) n += b[i] != 0xAB;
  return n;
}

static void print_v12(const char* key, const unsigned char* p) {
  printf("%s.name=%s\n", key, (const char*)p);
  printf("%s.totalGlobalMem=%zu\n", key, u64(p, 288));
  printf("%s.warpSize=%d\n", key, i32(p, 308));
  printf("%s.cc=%d.%d\n", key, i32(p, 360), i32(p, 364));
  printf("%s.clockRate=%d\n", key, i32(p, 348));
  printf("%s.multiProcessorCount=%d\n", key, i32(p, 388));
  printf("%s.pci=%x:%x:%x\n", key, i32(p, 592), i32(p, 584), i32(p, 588));
  printf("%s.memoryClockRate=%d\n", key, i32(p, 608));
  printf("%s.memoryBusWidth=%d\n", key, i32(p, 612));
  printf("%s.l2CacheSize=%d\n", key, i32(p, 616));
  printf("%s.maxThreadsPerMultiProcessor=%d\n", key, i32(p, 624));
  printf("%s.sharedMemPerBlockOptin=%zu\n", key, u64(p, 696));
  printf("%s.written_past_1032=%d\n", key, written_past(p, 1032));
}

static void kernel_stub(float* x) { (void)x; } /* the host stub nvcc would generate */

int main(void) {
  lib = dlopen("libcudart.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen(libcudart.so.12): %s\n", dlerror());
    return 1;
  }
  int rt = 0, drv = 0, n = 0;
  ((int_fn)sym("cudaRuntimeGetVersion", "libcudart.so.12"))(&rt);
  ((int_fn)sym("cudaDriverGetVersion", "libcudart.so.12"))(&drv);
  int err = ((int_fn)sym("cudaGetDeviceCount", "libcudart.so.12"))(&n);
  printf("runtime_version=%d\nruntime_major=%d\ndriver_version=%d\ncount=%d\ncount_error=%d\n", rt, rt / 1000, drv, n,
         err);
  printf("v2_in_13=%d\n", dlvsym(lib, "cudaGetDeviceProperties_v2", "libcudart.so.13") != NULL);

  unsigned char* buf = malloc(2048);
  memset(buf, 0xAB, 2048);
  err = ((get_props_fn)sym("cudaGetDeviceProperties_v2", "libcudart.so.12"))(buf, 1);
  printf("props_v2.error=%d\n", err);
  print_v12("props_v2", buf);

  memset(buf, 0xAB, 2048);
  err = ((get_props_fn)sym("cudaGetDeviceProperties", "libcudart.so.12"))(buf, 1);
  printf("props12.error=%d\n", err);
  print_v12("props12", buf);

  memset(buf, 0xAB, 2048);
  err = ((get_props_fn)sym("cudaGetDeviceProperties", "libcudart.so.13"))(buf, 1);
  printf("props13.error=%d\n", err);
  printf("props13.multiProcessorCount=%d\n", i32(buf, 384));
  printf("props13.pci=%x:%x:%x\n", i32(buf, 576), i32(buf, 568), i32(buf, 572));
  printf("props13.l2CacheSize=%d\n", i32(buf, 596));
  printf("props13.written_past_1008=%d\n", written_past(buf, 1008));
  free(buf);

  /* Registration as nvcc 12 host code does it: a __fatBinC_Wrapper_t whose data points at
   * a fatbinary header (magic 0xBA55ED50, version 1, header size 16, empty body). */
  static const unsigned long long fatbin[2] = {0x0010000100000000ull | 0xBA55ED50ull, 0};
  static struct {
    int magic;
    int version;
    const unsigned long long* data;
    void* filename_or_fatbins;
  } wrapper = {0x466243B1, 1, fatbin, NULL};
  void** h = ((reg_fatbin_fn)sym("__cudaRegisterFatBinary", "libcudart.so.12"))(&wrapper);
  ((reg_func_fn)sym("__cudaRegisterFunction", "libcudart.so.12"))(h, (const char*)kernel_stub, "_Z6legacyPf",
                                                                  "_Z6legacyPf", -1, NULL, NULL, NULL, NULL, NULL);
  ((reg_end_fn)sym("__cudaRegisterFatBinaryEnd", "libcudart.so.12"))(h);

  float* d = NULL;
  err = ((malloc_fn)sym("cudaMalloc", "libcudart.so.12"))((void**)&d, 4096);
  printf("malloc_error=%d\n", err);
  void* args[] = {&d};
  dim3 grid = {4, 1, 1}, block = {256, 1, 1};
  launch_fn launch = (launch_fn)sym("cudaLaunchKernel", "libcudart.so.12");
  for (int i = 0; i < 2; ++i)
    printf("launch%d_error=%d\n", i, launch((const void*)kernel_stub, grid, block, args, 0, NULL));
  int unknown = 0;
  printf("launch_unregistered_error=%d\n", launch((const void*)&unknown, grid, block, args, 0, NULL));
  printf("sync_error=%d\n", ((int (*)(void))sym("cudaDeviceSynchronize", "libcudart.so.12"))());
  printf("free_error=%d\n", ((free_fn)sym("cudaFree", "libcudart.so.12"))(d));
  ((unreg_fn)sym("__cudaUnregisterFatBinary", "libcudart.so.12"))(h);
  return 0;
}
