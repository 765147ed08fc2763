// SPDX-License-Identifier: Apache-2.0
// Memory-safety errors as a GPU reports them, one case per process (argv[1] names it; no
// argument lists the cases). Each faulting launch is accepted; the next synchronization
// returns the expected error, and the error is sticky (a later cudaMalloc, synchronization
// and cudaGetLastError return it too).
//   global_read_far      read 64 GiB past the end of a 4 KiB allocation  cudaErrorIllegalAddress
//   global_read_null     read through a null pointer                      cudaErrorIllegalAddress
//   global_write_freed   write into a 64 MiB allocation after cudaFree    cudaErrorIllegalAddress
//   shared_out_of_bounds write __shared__ int[256] at index 2^20           cudaErrorIllegalAddress
//   misaligned_global    4-byte store at a 2-byte offset                  cudaErrorMisalignedAddress
//   misaligned_shared    8-byte load at a 4-byte offset in shared memory  cudaErrorMisalignedAddress
//   read_between_barriers  one thread of a 3-D block reads 64 GiB past an allocation between two
//                        barriers                                        cudaErrorIllegalAddress
//   local_out_of_bounds  write a thread's local int[16] at index 2^16      cudaErrorIllegalAddress
//                        (on the host that would land in its stack)
//   surface_trap         surf2Dwrite (boundary mode trap) 2^20 bytes past a 16×16 float
//                        surface's rows                                  cudaErrorIllegalAddress
// Offsets and pointers are kernel arguments so that the compiler cannot see them. The far
// read, the freed allocation and the shared index are chosen well away from anything mapped:
// a GPU faults only on unmapped addresses, a checked executor on any address outside a live
// allocation.
#include "check.h"

#include <cstring>

__global__ void read_at(const int* p, long long index, int* out) { out[threadIdx.x] = p[index + threadIdx.x]; }
__global__ void write_at(int* p, long long index) { p[index + threadIdx.x] = 1; }
__global__ void shared_write(int index, int* out) {
  __shared__ int s[256];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) s[index] = 7;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
__global__ void store_misaligned(char* base, int offset) { *reinterpret_cast<int*>(base + offset) = 1; }
__global__ void shared_misaligned(int offset, double* out) {
  __shared__ double s[32];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = *reinterpret_cast<double*>(reinterpret_cast<char*>(s) + offset + threadIdx.x * 8);
}

__global__ void read_between_barriers(const int* p, long long index, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  s[t] = t;
  __syncthreads();
  int v = s[63 - t];
  if (t == 37) v += p[index];
  __syncthreads();
  s[t] = v;
  __syncthreads();
  out[blockIdx.x * 64 + t] = s[63 - t];
}

__global__ void local_write(int index, int* out) {
  int a[16];
  for (int i = 0; i < 16; ++i) a[i] = i * (threadIdx.x + 1);
  a[index] = 7;  // a run-time index keeps the array in local memory
  int sum = 0;
  for (int i = 0; i < 16; ++i) sum += a[(i + index) & 15];
  out[threadIdx.x] = sum;
}

__global__ void surface_write(cudaSurfaceObject_t s, int x) { surf2Dwrite(1.0f, s, x, threadIdx.x); }

// cudaLaunchKernel's own result: whether this launch was accepted (cudaGetLastError could
// already report the fault of a kernel that ran quickly).
template <typename... Params, typename... Args>
static cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
  void* ptrs[] = {&args...};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, ptrs, 0, nullptr);
}

static const char* const kCases[] = {"global_read_far",       "global_read_null",    "global_write_freed",
                                     "shared_out_of_bounds",  "misaligned_global",   "misaligned_shared",
                                     "read_between_barriers", "local_out_of_bounds", "surface_trap"};

int main(int argc, char** argv) {
  if (argc != 2) {
    for (const char* c : kCases) std::printf("%s\n", c);
    return argc == 1 ? 0 : 64;
  }
  const char* which = argv[1];
  int* scratch;
  CK(cudaMalloc(&scratch, 4096));
  cudaError_t expect = cudaErrorIllegalAddress, e;
  if (!std::strcmp(which, "global_read_far")) {
    e = launch(read_at, 1, 32, static_cast<const int*>(scratch), (1ll << 36) / 4, scratch);
  } else if (!std::strcmp(which, "global_read_null")) {
    e = launch(read_at, 1, 32, static_cast<const int*>(nullptr), 0ll, scratch);
  } else if (!std::strcmp(which, "global_write_freed")) {
    int* freed;
    CK(cudaMalloc(&freed, 64 << 20));
    CK(cudaFree(freed));
    e = launch(write_at, 1, 32, freed, 1ll << 20);
  } else if (!std::strcmp(which, "shared_out_of_bounds")) {
    e = launch(shared_write, 1, 256, 1 << 20, scratch);
  } else if (!std::strcmp(which, "misaligned_global")) {
    expect = cudaErrorMisalignedAddress;
    e = launch(store_misaligned, 1, 1, reinterpret_cast<char*>(scratch), 2);
  } else if (!std::strcmp(which, "misaligned_shared")) {
    expect = cudaErrorMisalignedAddress;
    e = launch(shared_misaligned, 1, 16, 4, reinterpret_cast<double*>(scratch));
  } else if (!std::strcmp(which, "read_between_barriers")) {
    e = launch(read_between_barriers, 4, dim3(4, 4, 4), static_cast<const int*>(scratch), (1ll << 36) / 4, scratch);
  } else if (!std::strcmp(which, "local_out_of_bounds")) {
    e = launch(local_write, 1, 32, 1 << 16, scratch);
  } else if (!std::strcmp(which, "surface_trap")) {
    const cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t a = nullptr;
    CK(cudaMallocArray(&a, &f1, 16, 16, cudaArraySurfaceLoadStore));
    cudaResourceDesc r;
    std::memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaSurfaceObject_t s = 0;
    CK(cudaCreateSurfaceObject(&s, &r));
    e = launch(surface_write, 1, 16, s, 1 << 20);
  } else {
    std::fprintf(stderr, "oob: unknown case '%s' (run without arguments for the list)\n", which);
    return 64;
  }
  kt::checkf("faulting launch is accepted", e == cudaSuccess, "%s", cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  char name[96];
  std::snprintf(name, sizeof name, "%s: synchronize returns %s", which, cudaGetErrorName(expect));
  kt::checkf(name, e == expect, "got %s", cudaGetErrorName(e));
  void* p = nullptr;
  e = cudaMalloc(&p, 256);
  kt::checkf("sticky: cudaMalloc returns the same error", e == expect, "got %s", cudaGetErrorName(e));
  e = cudaDeviceSynchronize();
  kt::checkf("sticky: synchronize again returns the same error", e == expect, "got %s", cudaGetErrorName(e));
  e = cudaGetLastError();
  kt::checkf("sticky: cudaGetLastError returns the same error", e == expect, "got %s", cudaGetErrorName(e));
  return kt::finish(which);
}
