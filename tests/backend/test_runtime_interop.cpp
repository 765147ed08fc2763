// SPDX-License-Identifier: Apache-2.0
// CUDA Runtime graphics interop and interprocess events: the runtime's codes for the
// driver's answers (runtime/interop.cpp, runtime/event.cpp), bound as a program binds them.
#include "runtime_api.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

using namespace rtt;

namespace {
template <class F>
F* sym(const char* name) {
  auto* p = reinterpret_cast<F*>(dlvsym(rt().handle, name, "libcudart.so.13"));
  INFO(name << "@libcudart.so.13");
  REQUIRE(p != nullptr);
  return p;
}
int fake_vdp_get_proc(uint32_t, uint32_t, void**) { return 1; }
}  // namespace

TEST_CASE_METHOD(Case, "runtime interop: GL, EGL and VDPAU answer as NVIDIA's runtime does without them", "[runtime]") {
  auto gl_devices = sym<cudaError_t(unsigned*, int*, unsigned, cudaGLDeviceList)>("cudaGLGetDevices");
  auto gl_register_buffer = sym<cudaError_t(cudaGraphicsResource_t*, GLuint, unsigned)>("cudaGraphicsGLRegisterBuffer");
  auto gl_register_image = sym<cudaError_t(cudaGraphicsResource_t*, GLuint, GLenum, unsigned)>(
      "cudaGraphicsGLRegisterImage");
  auto gl_set_device = sym<cudaError_t(int)>("cudaGLSetGLDevice");
  auto egl_register = sym<cudaError_t(cudaGraphicsResource_t*, EGLImageKHR, unsigned)>("cudaGraphicsEGLRegisterImage");
  auto egl_connect = sym<cudaError_t(cudaEglStreamConnection*, EGLStreamKHR)>("cudaEGLStreamConsumerConnect");
  auto vdpau_device = sym<cudaError_t(int*, VdpDevice, VdpGetProcAddress*)>("cudaVDPAUGetDevice");
  auto vdpau_register = sym<cudaError_t(cudaGraphicsResource_t*, VdpVideoSurface, unsigned)>(
      "cudaGraphicsVDPAURegisterVideoSurface");
  auto unregister = sym<cudaError_t(cudaGraphicsResource_t)>("cudaGraphicsUnregisterResource");
  auto map = sym<cudaError_t(int, cudaGraphicsResource_t*, cudaStream_t)>("cudaGraphicsMapResources");
  auto mapped_pointer = sym<cudaError_t(void**, size_t*, cudaGraphicsResource_t)>(
      "cudaGraphicsResourceGetMappedPointer");

  unsigned count = 5;
  int devs[2] = {-1, -1};
  CHECK(gl_devices(nullptr, devs, 2, cudaGLDeviceListAll) == cudaErrorInvalidValue);
  CHECK(gl_devices(&count, devs, 2, cudaGLDeviceListAll) == cudaErrorInvalidGraphicsContext);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidGraphicsContext);  // recorded as the last error
  CHECK(count == 5);
  CHECK(gl_set_device(0) == cudaSuccess);
  CHECK(gl_set_device(999) == cudaErrorInvalidDevice);
  cudaGraphicsResource_t res = nullptr;
  CHECK(gl_register_buffer(nullptr, 1, 0) == cudaErrorInvalidValue);
  CHECK(gl_register_buffer(&res, 1, 0) == cudaErrorInvalidGraphicsContext);
  CHECK(gl_register_image(&res, 1, 0x0DE1, 0) == cudaErrorInvalidGraphicsContext);
  CHECK(egl_register(&res, reinterpret_cast<EGLImageKHR>(0x10), 0) == cudaErrorInvalidValue);
  cudaEglStreamConnection conn = nullptr;
  CHECK(egl_connect(&conn, nullptr) == cudaErrorInvalidValue);
  int d = -1;
  CHECK(vdpau_device(&d, 1, fake_vdp_get_proc) == cudaErrorInvalidValue);
  CHECK(vdpau_register(&res, 1, 0) == cudaErrorInvalidResourceHandle);
  CHECK(res == nullptr);
  CHECK(d == -1);
  auto bogus = reinterpret_cast<cudaGraphicsResource_t>(uintptr_t{0x1000});
  CHECK(unregister(bogus) == cudaErrorInvalidResourceHandle);
  CHECK(map(1, &bogus, nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(map(0, &bogus, nullptr) == cudaErrorInvalidValue);
  void* p = nullptr;
  size_t size = 0;
  CHECK(mapped_pointer(&p, &size, bogus) == cudaErrorInvalidResourceHandle);
}

TEST_CASE_METHOD(Case, "runtime: interprocess event handles in one process", "[runtime]") {
  auto get = sym<cudaError_t(cudaIpcEventHandle_t*, cudaEvent_t)>("cudaIpcGetEventHandle");
  auto open = sym<cudaError_t(cudaEvent_t*, cudaIpcEventHandle_t)>("cudaIpcOpenEventHandle");
  cudaEvent_t plain = nullptr, ipc = nullptr;
  REQUIRE(r.cudaEventCreateWithFlags(&plain, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(r.cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming) == cudaSuccess);
  cudaIpcEventHandle_t h;
  CHECK(get(nullptr, ipc) == cudaErrorInvalidValue);
  CHECK(get(&h, nullptr) == cudaErrorInvalidValue);
  CHECK(get(&h, plain) == cudaErrorInvalidResourceHandle);
  REQUIRE(get(&h, ipc) == cudaSuccess);
  CHECK(r.cudaEventQuery(ipc) == cudaSuccess);  // never recorded
  cudaEvent_t opened = nullptr;
  // 201, "invalid device context": a process cannot open its own handle.
  CHECK(open(&opened, h) == cudaErrorDeviceUninitialized);
  CHECK(open(nullptr, h) == cudaErrorInvalidValue);
  cudaIpcEventHandle_t junk;
  std::memset(&junk, 0x5C, sizeof junk);
  CHECK(open(&opened, junk) == cudaErrorInvalidValue);
  CHECK(opened == nullptr);
  CHECK(r.cudaEventRecord(ipc, nullptr) == cudaSuccess);
  CHECK(r.cudaEventSynchronize(ipc) == cudaSuccess);
  CHECK(r.cudaEventDestroy(ipc) == cudaSuccess);
  CHECK(r.cudaEventDestroy(plain) == cudaSuccess);
}

// Child of the next case: opens the parent's handle (given in FAKEGPU_TEST_EVENT_HANDLE as
// hex) and waits for the record the parent holds back until this child says so.
TEST_CASE("runtime child: open an IPC event", "[.runtime-child]") {
  auto& r = rt();
  auto open = sym<cudaError_t(cudaEvent_t*, cudaIpcEventHandle_t)>("cudaIpcOpenEventHandle");
  const char* hex = std::getenv("FAKEGPU_TEST_EVENT_HANDLE");
  const char* go = std::getenv("FAKEGPU_TEST_GO");
  REQUIRE(hex != nullptr);
  REQUIRE(go != nullptr);
  cudaIpcEventHandle_t h;
  REQUIRE(std::strlen(hex) == 2 * sizeof h);
  for (size_t i = 0; i < sizeof h; ++i)
    h.reserved[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  cudaEvent_t ev = nullptr;
  REQUIRE(open(&ev, h) == cudaSuccess);
  CHECK(r.cudaEventQuery(ev) == cudaErrorNotReady);  // the parent's record waits for us
  FILE* f = std::fopen(go, "w");
  REQUIRE(f != nullptr);
  std::fclose(f);
  CHECK(r.cudaEventSynchronize(ev) == cudaSuccess);
  CHECK(r.cudaEventQuery(ev) == cudaSuccess);
  CHECK(r.cudaEventDestroy(ev) == cudaSuccess);
}

namespace {
void wait_for_path(void* p) {
  const std::string path = *static_cast<std::string*>(p);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (access(path.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}
}  // namespace

TEST_CASE("runtime: interprocess events across processes", "[runtime]") {
  auto& r = rt();
  auto get = sym<cudaError_t(cudaIpcEventHandle_t*, cudaEvent_t)>("cudaIpcGetEventHandle");
  cudaEvent_t ev = nullptr;
  REQUIRE(r.cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming) == cudaSuccess);
  cudaIpcEventHandle_t h;
  REQUIRE(get(&h, ev) == cudaSuccess);
  char dir_tmpl[] = "/tmp/fakegpu_rt_ipc_event_XXXXXX";
  REQUIRE(mkdtemp(dir_tmpl) != nullptr);
  std::string go = std::string(dir_tmpl) + "/go";
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(r.cudaLaunchHostFunc(s, wait_for_path, &go) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(ev, s) == cudaSuccess);  // held back until the child writes go
  std::string hex;
  for (size_t i = 0; i < sizeof h; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(h.reserved[i]));
    hex += b;
  }
  CHECK(run_child_case("runtime child: open an IPC event",
                       {"FAKEGPU_TEST_EVENT_HANDLE=" + hex, "FAKEGPU_TEST_GO=" + go}) == 0);
  CHECK(r.cudaEventSynchronize(ev) == cudaSuccess);
  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
  CHECK(r.cudaEventDestroy(ev) == cudaSuccess);
  std::remove(go.c_str());
  rmdir(dir_tmpl);
}
