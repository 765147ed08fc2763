// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API graphics interop (cudaGL.h, cudaEGL.h, cudaVDPAU.h) and the cuGraphics*
// calls common to them: every name a real driver exports is there, and each answers what
// NVIDIA's driver answers on a machine without OpenGL, EGL or VDPAU (driver/interop.cpp),
// counted in the report's coverage and fatal under FAKEGPU_STRICT=1.
#include "backend/driver_test.h"
#include "backend/runtime_api.h"  // run_child_case, child_report

#include <nlohmann/json.hpp>

namespace drvtest::sig {
CUresult cuGLInit();
CUresult cuGLGetDevices(unsigned*, CUdevice*, unsigned, CUGLDeviceList);
CUresult cuGLGetDevices_v2(unsigned*, CUdevice*, unsigned, CUGLDeviceList);
CUresult cuGLCtxCreate_v2(CUcontext*, unsigned, CUdevice);
CUresult cuGraphicsGLRegisterBuffer(CUgraphicsResource*, GLuint, unsigned);
CUresult cuGraphicsGLRegisterImage(CUgraphicsResource*, GLuint, GLenum, unsigned);
CUresult cuGLRegisterBufferObject(GLuint);
CUresult cuGLUnregisterBufferObject(GLuint);
CUresult cuGLMapBufferObject_v2(CUdeviceptr*, size_t*, GLuint);
CUresult cuGLMapBufferObjectAsync_v2(CUdeviceptr*, size_t*, GLuint, CUstream);
CUresult cuGLUnmapBufferObject(GLuint);
CUresult cuGLUnmapBufferObjectAsync(GLuint, CUstream);
CUresult cuGLSetBufferObjectMapFlags(GLuint, unsigned);
CUresult cuGraphicsEGLRegisterImage(CUgraphicsResource*, EGLImageKHR, unsigned);
CUresult cuEGLStreamConsumerConnect(CUeglStreamConnection*, EGLStreamKHR);
CUresult cuEGLStreamConsumerConnectWithFlags(CUeglStreamConnection*, EGLStreamKHR, unsigned);
CUresult cuEGLStreamProducerConnect(CUeglStreamConnection*, EGLStreamKHR, EGLint, EGLint);
CUresult cuEGLStreamConsumerDisconnect(CUeglStreamConnection*);
CUresult cuEGLStreamConsumerAcquireFrame(CUeglStreamConnection*, CUgraphicsResource*, CUstream*, unsigned);
CUresult cuEGLStreamProducerPresentFrame(CUeglStreamConnection*, CUeglFrame, CUstream*);
CUresult cuEventCreateFromEGLSync(CUevent*, EGLSyncKHR, unsigned);
CUresult cuGraphicsResourceGetMappedEglFrame(CUeglFrame*, CUgraphicsResource, unsigned, unsigned);
CUresult cuVDPAUGetDevice(CUdevice*, VdpDevice, VdpGetProcAddress*);
CUresult cuVDPAUCtxCreate_v2(CUcontext*, unsigned, CUdevice, VdpDevice, VdpGetProcAddress*);
CUresult cuGraphicsVDPAURegisterVideoSurface(CUgraphicsResource*, VdpVideoSurface, unsigned);
CUresult cuGraphicsVDPAURegisterOutputSurface(CUgraphicsResource*, VdpOutputSurface, unsigned);
CUresult cuGraphicsUnregisterResource(CUgraphicsResource);
CUresult cuGraphicsMapResources(unsigned, CUgraphicsResource*, CUstream);
CUresult cuGraphicsUnmapResources(unsigned, CUgraphicsResource*, CUstream);
CUresult cuGraphicsSubResourceGetMappedArray(CUarray*, CUgraphicsResource, unsigned, unsigned);
CUresult cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr*, size_t*, CUgraphicsResource);
CUresult cuGraphicsResourceSetMapFlags_v2(CUgraphicsResource, unsigned);
}  // namespace drvtest::sig

using namespace drvtest;

namespace {
constexpr const char* kPreInitCase = "driver interop: calls before cuInit answer CUDA_ERROR_NOT_INITIALIZED";
// A graphics resource handle no API made (the fake never makes one).
CUgraphicsResource bogus_resource() { return reinterpret_cast<CUgraphicsResource>(uintptr_t{0x1000}); }
int fake_vdp_get_proc(uint32_t, uint32_t, void**) { return 1; }  // VDP_STATUS_NO_IMPLEMENTATION
}  // namespace

TEST_CASE("driver interop: every interop name a real driver exports is there", "[driver]") {
  // The 35 GL/EGL/VDPAU exports of NVIDIA's libcuda.so.1 beyond the toolkit's stub, and the
  // fixed list FFmpeg's nv-codec-headers loader binds at start-up (dynlink_loader.h).
  const char* names[] = {
      "cuGLCtxCreate", "cuGLCtxCreate_v2", "cuGLGetDevices", "cuGLGetDevices_v2", "cuGLInit", "cuGLMapBufferObject",
      "cuGLMapBufferObjectAsync", "cuGLMapBufferObjectAsync_v2", "cuGLMapBufferObjectAsync_v2_ptsz",
      "cuGLMapBufferObject_v2", "cuGLMapBufferObject_v2_ptds", "cuGLRegisterBufferObject",
      "cuGLSetBufferObjectMapFlags", "cuGLUnmapBufferObject", "cuGLUnmapBufferObjectAsync",
      "cuGLUnregisterBufferObject", "cuGraphicsGLRegisterBuffer", "cuGraphicsGLRegisterImage",
      "cuEGLStreamConsumerAcquireFrame", "cuEGLStreamConsumerConnect", "cuEGLStreamConsumerConnectWithFlags",
      "cuEGLStreamConsumerDisconnect", "cuEGLStreamConsumerReleaseFrame", "cuEGLStreamProducerConnect",
      "cuEGLStreamProducerDisconnect", "cuEGLStreamProducerPresentFrame", "cuEGLStreamProducerReturnFrame",
      "cuEventCreateFromEGLSync", "cuGraphicsEGLRegisterImage", "cuGraphicsResourceGetMappedEglFrame",
      "cuGraphicsVDPAURegisterOutputSurface", "cuGraphicsVDPAURegisterVideoSurface", "cuVDPAUCtxCreate",
      "cuVDPAUCtxCreate_v2", "cuVDPAUGetDevice",
      // nv-codec-headers (LOAD_SYMBOL, not the optional ones)
      "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute", "cuDeviceGetName",
      "cuDeviceComputeCapability", "cuCtxCreate_v2", "cuCtxSetLimit", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
      "cuCtxDestroy_v2", "cuMemAlloc_v2", "cuMemAllocPitch_v2", "cuMemsetD8Async", "cuMemFree_v2", "cuMemcpy",
      "cuMemcpyAsync", "cuMemcpy2D_v2", "cuMemcpy2DAsync_v2", "cuGetErrorName", "cuGetErrorString", "cuCtxGetDevice",
      "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxSetFlags",
      "cuDevicePrimaryCtxGetState", "cuDevicePrimaryCtxReset", "cuStreamCreate", "cuStreamQuery", "cuStreamSynchronize",
      "cuStreamDestroy_v2", "cuStreamAddCallback", "cuEventCreate", "cuEventDestroy_v2", "cuEventSynchronize",
      "cuEventQuery", "cuEventRecord", "cuLaunchKernel", "cuLinkCreate", "cuLinkAddData", "cuLinkComplete",
      "cuLinkDestroy", "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuModuleGetGlobal",
      "cuTexObjectCreate", "cuTexObjectDestroy", "cuGraphicsUnregisterResource", "cuGraphicsMapResources",
      "cuGraphicsUnmapResources", "cuGraphicsSubResourceGetMappedArray", "cuGraphicsResourceGetMappedPointer_v2",
      "cuIpcGetEventHandle", "cuIpcOpenEventHandle"};
  for (const char* n : names) {
    INFO(n);
    CHECK(dlsym(lib(), n) != nullptr);
  }
}

TEST_CASE("driver interop: cuGetProcAddress hands out the interop entry points", "[driver]") {
  init();
  struct Want {
    const char* name;
    int version;
    uint64_t flags;
    const char* symbol;
  } wants[] = {
      {"cuGLGetDevices", 4010, 0, "cuGLGetDevices"},
      {"cuGLGetDevices", 12000, 0, "cuGLGetDevices_v2"},
      {"cuGLCtxCreate", 3020, 0, "cuGLCtxCreate_v2"},
      {"cuGLMapBufferObject", 7000, 2, "cuGLMapBufferObject_v2_ptds"},
      {"cuGLMapBufferObjectAsync", 13000, 2, "cuGLMapBufferObjectAsync_v2_ptsz"},
      {"cuGraphicsGLRegisterBuffer", 3000, 0, "cuGraphicsGLRegisterBuffer"},
      {"cuEGLStreamConsumerConnectWithFlags", 8000, 0, "cuEGLStreamConsumerConnectWithFlags"},
      {"cuEventCreateFromEGLSync", 9000, 0, "cuEventCreateFromEGLSync"},
      {"cuVDPAUCtxCreate", 3020, 0, "cuVDPAUCtxCreate_v2"},
      {"cuVDPAUGetDevice", 3010, 0, "cuVDPAUGetDevice"},
  };
  for (const auto& w : wants) {
    INFO(w.name << " @ " << w.version << " flags " << w.flags);
    void* fnp = nullptr;
    CUdriverProcAddressQueryResult st{};
    CU_OK(CU(cuGetProcAddress_v2)(w.name, &fnp, w.version, w.flags, &st));
    CHECK(st == CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(fnp == dlsym(lib(), w.symbol));
  }
  void* fnp = nullptr;
  CUdriverProcAddressQueryResult st{};
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuGetProcAddress_v2)("cuEGLStreamConsumerConnectWithFlags", &fnp, 7000, 0, &st));
  CHECK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

TEST_CASE("driver interop: calls before cuInit answer CUDA_ERROR_NOT_INITIALIZED", "[driver]") {
  if (!before_init_or_rerun(kPreInitCase)) return;
  constexpr CUresult NI = CUDA_ERROR_NOT_INITIALIZED;
  unsigned count = 0;
  CUdevice devs[4];
  CUgraphicsResource res = nullptr;
  CUcontext c = nullptr;
  CU_EQ(NI, CU(cuGLInit)());
  CU_EQ(NI, CU(cuGLGetDevices_v2)(&count, devs, 4, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(NI, CU(cuGraphicsGLRegisterBuffer)(&res, 1, 0));
  CU_EQ(NI, CU(cuGraphicsEGLRegisterImage)(&res, nullptr, 0));
  CU_EQ(NI, CU(cuVDPAUCtxCreate_v2)(&c, 0, 0, 1, fake_vdp_get_proc));
  CU_EQ(NI, CU(cuGraphicsUnregisterResource)(bogus_resource()));
}

TEST_CASE("driver interop: OpenGL answers as the driver does without a GL context", "[driver]") {
  clear_stack();
  unsigned count = 7;
  CUdevice devs[4] = {-1, -1, -1, -1};
  // cuGLInit: deprecated, a no-op that succeeds.
  CU_OK(CU(cuGLInit)());
  // cuGLGetDevices needs no CUDA context, only a current OpenGL one: there is none.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLGetDevices_v2)(nullptr, devs, 4, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLGetDevices_v2)(&count, nullptr, 4, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLGetDevices_v2)(&count, devs, 4, static_cast<CUGLDeviceList>(4)));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLGetDevices_v2)(&count, devs, 4, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLGetDevices)(&count, devs, 4, CU_GL_DEVICE_LIST_NEXT_FRAME));
  CHECK(count == 7);  // outputs untouched
  CHECK(devs[0] == -1);
  CUcontext c = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLCtxCreate_v2)(nullptr, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuGLCtxCreate_v2)(&c, 0, 999));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLCtxCreate_v2)(&c, 0, 0));
  CHECK(c == nullptr);
  // Registration needs a current CUDA context first.
  CUgraphicsResource res = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuGraphicsGLRegisterBuffer)(&res, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuGLRegisterBufferObject)(1));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsGLRegisterBuffer)(nullptr, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsGLRegisterBuffer)(&res, 1, 0x10));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGraphicsGLRegisterBuffer)(&res, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGraphicsGLRegisterImage)(&res, 1, 0x0DE1 /* GL_TEXTURE_2D */, 1));
  CHECK(res == nullptr);
  // The legacy buffer-object calls.
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLRegisterBufferObject)(1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLMapBufferObject_v2)(nullptr, &size, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLMapBufferObject_v2)(&p, &size, 1));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuGLMapBufferObjectAsync_v2)(&p, &size, 1, reinterpret_cast<CUstream>(uintptr_t{0x999})));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLMapBufferObjectAsync_v2)(&p, &size, 1, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLUnmapBufferObject)(1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLUnmapBufferObjectAsync)(1, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLUnregisterBufferObject)(1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLSetBufferObjectMapFlags)(1, 3));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGLSetBufferObjectMapFlags)(1, 1));
}

TEST_CASE("driver interop: EGL answers bad EGL handles and unknown connections", "[driver]") {
  clear_stack();
  CUeglStreamConnection conn = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuEGLStreamConsumerConnect)(&conn, nullptr));
  Ctx ctx(0);
  CUgraphicsResource res = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsEGLRegisterImage)(nullptr, nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsEGLRegisterImage)(&res, reinterpret_cast<EGLImageKHR>(0x10), 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEGLStreamConsumerConnect)(nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEGLStreamConsumerConnect)(&conn, reinterpret_cast<EGLStreamKHR>(0x10)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEGLStreamConsumerConnectWithFlags)(&conn, nullptr, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEGLStreamProducerConnect)(&conn, nullptr, 64, 64));
  CHECK(conn == nullptr);
  CUeglStreamConnection bogus = reinterpret_cast<CUeglStreamConnection>(uintptr_t{0x1000});
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEGLStreamConsumerDisconnect)(&bogus));
  CUstream s = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEGLStreamConsumerAcquireFrame)(&bogus, nullptr, &s, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEGLStreamConsumerAcquireFrame)(&bogus, &res, &s, 0));
  CUeglFrame frame{};
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEGLStreamProducerPresentFrame)(&bogus, frame, &s));
  CUevent ev = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventCreateFromEGLSync)(nullptr, nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventCreateFromEGLSync)(&ev, reinterpret_cast<EGLSyncKHR>(0x10), 0));
  CHECK(ev == nullptr);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsResourceGetMappedEglFrame)(nullptr, bogus_resource(), 0, 0));
  // cudaEGL.h: a resource not registered is CUDA_ERROR_NOT_MAPPED here.
  CU_EQ(CUDA_ERROR_NOT_MAPPED, CU(cuGraphicsResourceGetMappedEglFrame)(&frame, bogus_resource(), 0, 0));
}

TEST_CASE("driver interop: VDPAU answers a VdpDevice no VDPAU made", "[driver]") {
  clear_stack();
  CUdevice d = -1;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuVDPAUGetDevice)(nullptr, 1, fake_vdp_get_proc));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuVDPAUGetDevice)(&d, 1, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuVDPAUGetDevice)(&d, 1, fake_vdp_get_proc));
  CHECK(d == -1);
  CUcontext c = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuVDPAUCtxCreate_v2)(&c, 0, 999, 1, fake_vdp_get_proc));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuVDPAUCtxCreate_v2)(&c, 0, 0, 1, fake_vdp_get_proc));
  CHECK(c == nullptr);
  CUgraphicsResource res = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuGraphicsVDPAURegisterVideoSurface)(&res, 1, 0));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsVDPAURegisterVideoSurface)(nullptr, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsVDPAURegisterVideoSurface)(&res, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsVDPAURegisterOutputSurface)(&res, 1, 0));
  CHECK(res == nullptr);
}

TEST_CASE("driver interop: graphics resources the fake never made are invalid handles", "[driver]") {
  clear_stack();
  CUgraphicsResource r = bogus_resource();
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuGraphicsUnregisterResource)(r));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuGraphicsMapResources)(1, &r, nullptr));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsUnregisterResource)(r));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsMapResources)(0, &r, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsMapResources)(1, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsMapResources)(1, &r, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsUnmapResources)(1, &r, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuGraphicsMapResources)(1, &r, reinterpret_cast<CUstream>(uintptr_t{0x999})));  // bad stream
  CUarray arr = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsSubResourceGetMappedArray)(nullptr, r, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsSubResourceGetMappedArray)(&arr, r, 0, 0));
  CUdeviceptr p = 0;
  size_t size = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsResourceGetMappedPointer_v2)(&p, nullptr, r));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsResourceGetMappedPointer_v2)(&p, &size, r));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGraphicsResourceSetMapFlags_v2)(r, 3));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuGraphicsResourceSetMapFlags_v2)(r, 1));
  CHECK(arr == nullptr);
  CHECK(p == 0);
}

// Child of the next two cases: two calls that need OpenGL, one that needs VDPAU, and calls
// that are plain argument errors (not counted).
TEST_CASE("driver child: interop calls", "[.driver-child]") {
  init();
  unsigned count = 0;
  CUdevice devs[2];
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuGLGetDevices_v2)(nullptr, devs, 2, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLGetDevices_v2)(&count, devs, 2, CU_GL_DEVICE_LIST_ALL));
  CU_EQ(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, CU(cuGLGetDevices_v2)(&count, devs, 2, CU_GL_DEVICE_LIST_ALL));
  CUdevice d = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuVDPAUGetDevice)(&d, 1, fake_vdp_get_proc));
  CU_OK(CU(cuGLInit)());
}

TEST_CASE("driver interop: the report counts the calls that needed a window system", "[driver]") {
  const auto report = nlohmann::json::parse(rtt::child_report("driver child: interop calls", {"FAKEGPU_STRICT=0"}));
  const auto& unsupported = report.at("coverage").at("unsupported_calls");
  CHECK(unsupported.at("cuGLGetDevices_v2").get<int>() == 2);
  CHECK(unsupported.at("cuVDPAUGetDevice").get<int>() == 1);
  CHECK(unsupported.size() == 2);  // cuGLInit succeeded; argument errors are not gaps
}

TEST_CASE("driver interop: FAKEGPU_STRICT=1 stops at the first call that needs a window system", "[driver]") {
  // 128 + SIGABRT: the child aborts at its second call (the first is an argument error).
  CHECK(rtt::run_child_case("driver child: interop calls", {"FAKEGPU_STRICT=1", "FAKEGPU_ISOLATED=1"}) == 128 + 6);
}
