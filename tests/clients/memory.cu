// SPDX-License-Identifier: Apache-2.0
// Memory client: managed memory, pinned / mapped / registered host memory, and several
// devices at once (allocations on three devices, peer copies, peer access, per-device
// cudaMemGetInfo, per-thread current device). One mode per run:
//   memory managed | pinned | multidevice | initializers
#include "rt_check.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

// Initialised symbols: the initial values exist only in the device image (the host
// shadows nvcc generates carry none), as in real programs with lookup tables.
__managed__ int managed_var = 7;
__managed__ float managed_array[4] = {1.5f, 2.5f, 3.5f, 4.5f};
__device__ int device_var = 5;
__constant__ float constant_table[3] = {1.25f, 2.5f, -4.0f};

namespace {

const size_t MiB = size_t(1) << 20;

void fill_pattern(unsigned char* p, size_t n, unsigned seed) {
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = static_cast<unsigned char>(x >> 24);
  }
}

const char* type_name(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered";
    case cudaMemoryTypeHost: return "host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
  }
  return "?";
}

void print_attrs(const char* key, const void* p) {
  cudaPointerAttributes a;
  std::memset(&a, 0, sizeof a);
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    std::printf("%s.attrs=%s\n", key, cudaGetErrorName(e));
    return;
  }
  std::printf("%s.type=%s\n%s.device=%d\n", key, type_name(a.type), key, a.device);
  std::printf("%s.devicePointer_is_self=%d\n", key, a.devicePointer == p);
  std::printf("%s.hostPointer_is_self=%d\n", key, a.hostPointer == p);
}

size_t used_on(int dev) {
  int prev = 0;
  CK(cudaGetDevice(&prev));
  CK(cudaSetDevice(dev));
  size_t f = 0, t = 0;
  CK(cudaMemGetInfo(&f, &t));
  CK(cudaSetDevice(prev));
  return t - f;
}

int initializers() {
  std::printf("managed_var=%d\n", managed_var);
  std::printf("managed_array=%.1f,%.1f,%.1f,%.1f\n", managed_array[0], managed_array[1], managed_array[2],
              managed_array[3]);
  int d = 0;
  CK(cudaMemcpyFromSymbol(&d, device_var, sizeof d));
  std::printf("device_var=%d\n", d);
  float c[3] = {};
  CK(cudaMemcpyFromSymbol(c, constant_table, sizeof c));
  std::printf("constant_table=%.2f,%.2f,%.2f\n", c[0], c[1], c[2]);
  return 0;
}

int managed() {
  // __managed__ variables are host-visible: a host write is what the device sees.
  managed_var = 8;
  int v = 0;
  CK(cudaMemcpy(&v, &managed_var, sizeof v, cudaMemcpyDefault));
  std::printf("managed_var_after_host_write=%d\n", v);
  print_attrs("managed_var", &managed_var);

  const size_t bytes = 4 * MiB;
  unsigned char* m = nullptr;
  CK(cudaMallocManaged(&m, bytes, cudaMemAttachGlobal));
  print_attrs("managed", m);
  fill_pattern(m, bytes, 11);  // the host writes managed memory directly
  std::vector<unsigned char> expect(bytes), back(bytes);
  fill_pattern(expect.data(), bytes, 11);
  unsigned char* d = nullptr;
  CK(cudaMalloc(&d, bytes));
  CK(cudaMemcpy(d, m, bytes, cudaMemcpyDefault));
  CK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
  std::printf("managed_to_device_roundtrip=%d\n", back == expect);

  // Device-side writes are seen by the host after synchronisation.
  CK(cudaMemset(m + 100, 0x22, 64));
  CK(cudaMemcpy(m, d + bytes - 16, 16, cudaMemcpyDeviceToDevice));
  CK(cudaDeviceSynchronize());
  bool memset_seen = true;
  for (int i = 100; i < 164; ++i) memset_seen = memset_seen && m[i] == 0x22;
  std::printf("managed_memset_seen_by_host=%d\n", memset_seen);
  std::printf("managed_copy_seen_by_host=%d\n", std::memcmp(m, expect.data() + bytes - 16, 16) == 0);
  std::printf("managed_untouched_bytes_kept=%d\n", m[99] == expect[99] && m[164] == expect[164]);

  cudaMemLocation loc;
  std::memset(&loc, 0, sizeof loc);
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  CK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, loc));
  CK(cudaMemPrefetchAsync(m, bytes, loc, 0, 0));
  CK(cudaDeviceSynchronize());
  std::printf("managed_after_prefetch_intact=%d\n", m[0] == expect[bytes - 16] && m[200] == expect[200]);

  CK(cudaFree(m));
  CK(cudaFree(d));
  return 0;
}

int pinned() {
  const size_t bytes = 2 * MiB;
  unsigned char *p = nullptr, *q = nullptr, *d = nullptr;
  CK(cudaMallocHost(&p, bytes));
  print_attrs("malloc_host", p);
  CK(cudaHostAlloc(&q, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  print_attrs("host_alloc_mapped", q);
  unsigned flags = 0;
  CK(cudaHostGetFlags(&flags, q));
  std::printf("host_alloc_flags=%u\n", flags);
  void* dq = nullptr;
  CK(cudaHostGetDevicePointer(&dq, q, 0));
  std::printf("mapped_device_pointer_is_host_pointer=%d\n", dq == q);

  CK(cudaMalloc(&d, bytes));
  fill_pattern(p, bytes, 5);
  CK(cudaMemcpy(d, p, bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpyAsync(q, d, bytes, cudaMemcpyDeviceToHost, 0));
  CK(cudaStreamSynchronize(0));
  std::printf("pinned_roundtrip=%d\n", std::memcmp(p, q, bytes) == 0);
  // Pinned host memory is host memory: only the cudaMalloc buffer is on the device.
  std::printf("device_bytes_used=%zu\n", used_on(0));

  // Registering ordinary memory.
  std::vector<unsigned char> storage(bytes + 4096);
  unsigned char* r = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(storage.data()) + 4095) &
                                                      ~uintptr_t(4095));
  print_attrs("pageable", r);
  CK(cudaHostRegister(r, bytes, cudaHostRegisterDefault));
  print_attrs("registered", r);
  FACT_ERR("register_twice", cudaHostRegister(r, bytes, cudaHostRegisterDefault));
  CK(cudaMemcpyAsync(r, d, bytes, cudaMemcpyDeviceToHost, 0));
  CK(cudaDeviceSynchronize());
  std::printf("registered_roundtrip=%d\n", std::memcmp(p, r, bytes) == 0);
  CK(cudaHostUnregister(r));
  print_attrs("unregistered", r);
  FACT_ERR("unregister_twice", cudaHostUnregister(r));
  FACT_ERR("free_host_on_device_pointer", cudaFreeHost(d));
  FACT_ERR("last_error", cudaGetLastError());

  CK(cudaFree(d));
  CK(cudaFreeHost(p));
  CK(cudaFreeHost(q));
  return 0;
}

int multidevice() {
  const int devs[3] = {0, 3, 5};
  const size_t sizes[3] = {16 * MiB, 32 * MiB, 48 * MiB};
  unsigned char* bufs[3] = {};
  for (int i = 0; i < 3; ++i) {
    CK(cudaSetDevice(devs[i]));
    CK(cudaMalloc(&bufs[i], sizes[i]));
  }
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  std::string used;
  for (int d = 0; d < count; ++d) used += (d ? "," : "") + std::to_string(used_on(d));
  std::printf("used_per_device=%s\n", used.c_str());
  int cur = -1;
  CK(cudaGetDevice(&cur));
  std::printf("current_device=%d\n", cur);
  print_attrs("buf3", bufs[1]);

  // A chain of peer copies 0 -> 3 -> 5, then back to the host.
  const size_t n = 16 * MiB;
  std::vector<unsigned char> host(n), back(n);
  fill_pattern(host.data(), n, 77);
  CK(cudaMemcpy(bufs[0], host.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemcpyPeer(bufs[1] + MiB, 3, bufs[0], 0, n));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));  // on device 5, the current device
  CK(cudaMemcpyPeerAsync(bufs[2] + 2 * MiB, 5, bufs[1] + MiB, 3, n, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  CK(cudaMemcpy(back.data(), bufs[2] + 2 * MiB, n, cudaMemcpyDefault));
  std::printf("peer_chain_roundtrip=%d\n", back == host);
  CK(cudaMemset(bufs[1], 0, sizes[1]));
  CK(cudaMemcpy(bufs[1], bufs[2] + 2 * MiB, n, cudaMemcpyDefault));  // unified addressing
  CK(cudaMemcpy(back.data(), bufs[1], n, cudaMemcpyDeviceToHost));
  std::printf("default_kind_cross_device=%d\n", back == host);

  int can = 0;
  CK(cudaDeviceCanAccessPeer(&can, 0, 3));
  std::printf("can_access_peer_0_3=%d\n", can);
  CK(cudaSetDevice(0));
  FACT_ERR("enable_peer_0_3", cudaDeviceEnablePeerAccess(3, 0));
  FACT_ERR("enable_peer_0_3_again", cudaDeviceEnablePeerAccess(3, 0));
  FACT_ERR("disable_peer_0_3", cudaDeviceDisablePeerAccess(3));
  FACT_ERR("disable_peer_0_3_again", cudaDeviceDisablePeerAccess(3));
  FACT_ERR("last_error", cudaGetLastError());

  // Every host thread has its own current device.
  int in_thread = -1, thread_used = 0;
  std::thread t([&] {
    CK(cudaSetDevice(6));
    void* p = nullptr;
    CK(cudaMalloc(&p, 8 * MiB));
    CK(cudaGetDevice(&in_thread));
    thread_used = static_cast<int>(used_on(6) / MiB);
    CK(cudaFree(p));
  });
  t.join();
  CK(cudaGetDevice(&cur));
  std::printf("thread_device=%d\nthread_used_mib=%d\nmain_device_after_thread=%d\n", in_thread, thread_used, cur);

  // More than a device holds.
  CK(cudaSetDevice(3));
  void* big = nullptr;
  FACT_ERR("alloc_81_gib", cudaMalloc(&big, 81ull << 30));
  std::printf("alloc_81_gib_ptr_null=%d\n", big == nullptr);
  FACT_ERR("last_error_after_oom", cudaGetLastError());

  for (int i = 0; i < 3; ++i) CK(cudaFree(bufs[i]));  // cudaFree works from any device
  used.clear();
  for (int d = 0; d < count; ++d) used += (d ? "," : "") + std::to_string(used_on(d));
  std::printf("used_after_free=%s\n", used.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "initializers") return initializers();
  if (mode == "managed") return managed();
  if (mode == "pinned") return pinned();
  if (mode == "multidevice") return multidevice();
  std::fprintf(stderr, "usage: memory managed|pinned|multidevice|initializers\n");
  return 2;
}
