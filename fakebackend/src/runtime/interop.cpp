// SPDX-License-Identifier: Apache-2.0
// Graphics interop of the runtime (cuda_gl_interop.h, cuda_egl_interop.h,
// cuda_vdpau_interop.h) and the cudaGraphics* calls common to them: the driver's answers on
// a machine without OpenGL, EGL or VDPAU (driver/interop.cpp has the reasons and sources),
// in the runtime's codes — CUDA_ERROR_INVALID_GRAPHICS_CONTEXT is
// cudaErrorInvalidGraphicsContext (219; what cudaGLGetDevices answers with no GL context,
// NVIDIA/cuda-python issue 248), CUDA_ERROR_INVALID_HANDLE cudaErrorInvalidResourceHandle.
// The runtime makes its context itself, so only a missing device stops a call before that.
// Answers that come from the missing window system are counted in the report's coverage
// and stop the process under FAKEGPU_STRICT=1 (common/coverage.h).
#include "runtime/common.h"

#include "common/coverage.h"

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;

namespace {

cudaError_t gap(const char* name, const char* capability, cudaError_t answer) {
  fg::coverage::capability_gap(name, capability);
  return answer;
}

// A call that needs `capability` once its pointer `out` (if any) is set and a context exists.
cudaError_t window_system(const char* name, const char* capability, const void* out, bool check_out,
                          cudaError_t answer) {
  return fg::rt::api_ctx(!check_out || out, [&](fg::Context*) { return gap(name, capability, answer); });
}

cudaError_t registering(const char* name, const char* capability, cudaGraphicsResource_t* resource, unsigned flags,
                        cudaError_t answer) {
  return fg::rt::api_ctx(resource && !(flags & ~CU_GRAPHICS_REGISTER_FLAGS_ALL),
                         [&](fg::Context*) { return gap(name, capability, answer); });
}

// Calls on a graphics resource: the fake never creates one.
cudaError_t on_resource(const void* out, bool check_out, cudaError_t answer = cudaErrorInvalidResourceHandle) {
  return fg::rt::api_ctx(!check_out || out, [answer](fg::Context*) { return answer; });
}

cudaError_t map_resources(int count, cudaGraphicsResource_t* resources, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (count <= 0 || !resources) return cudaErrorInvalidValue;
    fg::Stream* s = nullptr;
    if (cudaError_t e = fg::rt::stream(stream, false, &s); e != cudaSuccess) return e;
    return cudaErrorInvalidResourceHandle;
  });
}

}  // namespace

// ---- OpenGL ---------------------------------------------------------------------------------------
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLGetDevices(unsigned int* pCudaDeviceCount, int* pCudaDevices,
                                                       unsigned int cudaDeviceCount, cudaGLDeviceList deviceList) {
  return api([&]() -> cudaError_t {
    if (!pCudaDeviceCount || (cudaDeviceCount > 0 && !pCudaDevices)) return cudaErrorInvalidValue;
    if (deviceList < cudaGLDeviceListAll || deviceList > cudaGLDeviceListNextFrame) return cudaErrorInvalidValue;
    return gap("cudaGLGetDevices", "OpenGL", cudaErrorInvalidGraphicsContext);
  });
}
// Deprecated (CUDA 5.0): names the device for GL interop; succeeds for a valid device.
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLSetGLDevice(int device) {
  return api([&]() -> cudaError_t { return be().device(device) ? cudaSuccess : cudaErrorInvalidDevice; });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsGLRegisterBuffer(cudaGraphicsResource_t* resource, GLuint buffer,
                                                                   unsigned int flags) {
  (void)buffer;
  return registering("cudaGraphicsGLRegisterBuffer", "OpenGL", resource, flags, cudaErrorInvalidGraphicsContext);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsGLRegisterImage(cudaGraphicsResource_t* resource, GLuint image,
                                                                  GLenum target, unsigned int flags) {
  (void)image;
  (void)target;
  return registering("cudaGraphicsGLRegisterImage", "OpenGL", resource, flags, cudaErrorInvalidGraphicsContext);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLRegisterBufferObject(GLuint bufObj) {
  (void)bufObj;
  return window_system("cudaGLRegisterBufferObject", "OpenGL", nullptr, false, cudaErrorInvalidGraphicsContext);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLUnregisterBufferObject(GLuint bufObj) {
  (void)bufObj;
  return window_system("cudaGLUnregisterBufferObject", "OpenGL", nullptr, false, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLMapBufferObject(void** devPtr, GLuint bufObj) {
  (void)bufObj;
  return window_system("cudaGLMapBufferObject", "OpenGL", devPtr, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLMapBufferObjectAsync(void** devPtr, GLuint bufObj, cudaStream_t stream) {
  (void)bufObj;
  (void)stream;
  return window_system("cudaGLMapBufferObjectAsync", "OpenGL", devPtr, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLUnmapBufferObject(GLuint bufObj) {
  (void)bufObj;
  return window_system("cudaGLUnmapBufferObject", "OpenGL", nullptr, false, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLUnmapBufferObjectAsync(GLuint bufObj, cudaStream_t stream) {
  (void)bufObj;
  (void)stream;
  return window_system("cudaGLUnmapBufferObjectAsync", "OpenGL", nullptr, false, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGLSetBufferObjectMapFlags(GLuint bufObj, unsigned int flags) {
  (void)bufObj;
  if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_MAX) return fg::rt::ret(cudaErrorInvalidValue);
  return window_system("cudaGLSetBufferObjectMapFlags", "OpenGL", nullptr, false, cudaErrorInvalidResourceHandle);
}

// ---- EGL ------------------------------------------------------------------------------------------
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsEGLRegisterImage(cudaGraphicsResource_t* resource, EGLImageKHR image,
                                                                   unsigned int flags) {
  (void)image;
  return registering("cudaGraphicsEGLRegisterImage", "EGL", resource, flags, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamConsumerConnect(cudaEglStreamConnection* conn, EGLStreamKHR stream) {
  (void)stream;
  return window_system("cudaEGLStreamConsumerConnect", "EGL", conn, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamConsumerConnectWithFlags(cudaEglStreamConnection* conn,
                                                                            EGLStreamKHR stream, unsigned int flags) {
  (void)stream;
  (void)flags;
  return window_system("cudaEGLStreamConsumerConnectWithFlags", "EGL", conn, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamProducerConnect(cudaEglStreamConnection* conn, EGLStreamKHR stream,
                                                                   EGLint width, EGLint height) {
  (void)stream;
  (void)width;
  (void)height;
  return window_system("cudaEGLStreamProducerConnect", "EGL", conn, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamConsumerDisconnect(cudaEglStreamConnection* conn) {
  return window_system("cudaEGLStreamConsumerDisconnect", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamProducerDisconnect(cudaEglStreamConnection* conn) {
  return window_system("cudaEGLStreamProducerDisconnect", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamConsumerAcquireFrame(cudaEglStreamConnection* conn,
                                                                        cudaGraphicsResource_t* pCudaResource,
                                                                        cudaStream_t* pStream, unsigned int timeout) {
  (void)pStream;
  (void)timeout;
  if (!pCudaResource) return fg::rt::ret(cudaErrorInvalidValue);
  return window_system("cudaEGLStreamConsumerAcquireFrame", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamConsumerReleaseFrame(cudaEglStreamConnection* conn,
                                                                        cudaGraphicsResource_t pCudaResource,
                                                                        cudaStream_t* pStream) {
  (void)pCudaResource;
  (void)pStream;
  return window_system("cudaEGLStreamConsumerReleaseFrame", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamProducerPresentFrame(cudaEglStreamConnection* conn,
                                                                        cudaEglFrame eglframe, cudaStream_t* pStream) {
  (void)eglframe;
  (void)pStream;
  return window_system("cudaEGLStreamProducerPresentFrame", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEGLStreamProducerReturnFrame(cudaEglStreamConnection* conn,
                                                                       cudaEglFrame_st* eglframe,
                                                                       cudaStream_t* pStream) {
  (void)pStream;
  if (!eglframe) return fg::rt::ret(cudaErrorInvalidValue);
  return window_system("cudaEGLStreamProducerReturnFrame", "EGL", conn, true, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventCreateFromEGLSync(cudaEvent_t* phEvent, EGLSyncKHR eglSync,
                                                                 unsigned int flags) {
  (void)eglSync;
  if (flags != 0) return fg::rt::ret(cudaErrorInvalidValue);
  return window_system("cudaEventCreateFromEGLSync", "EGL", phEvent, true, cudaErrorInvalidValue);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsResourceGetMappedEglFrame(cudaEglFrame_st* eglFrame,
                                                                            cudaGraphicsResource_t resource,
                                                                            unsigned int index, unsigned int mipLevel) {
  (void)resource;
  (void)index;
  (void)mipLevel;
  return on_resource(eglFrame, true, cudaErrorNotMapped);  // the driver's CUDA_ERROR_NOT_MAPPED
}

// ---- VDPAU ----------------------------------------------------------------------------------------
extern "C" FG_IMPL cudaError_t fgimpl_cudaVDPAUGetDevice(int* device, VdpDevice vdpDevice,
                                                         VdpGetProcAddress* vdpGetProcAddress) {
  return api([&]() -> cudaError_t {
    if (!device || !vdpGetProcAddress) return cudaErrorInvalidValue;
    (void)vdpDevice;
    return gap("cudaVDPAUGetDevice", "VDPAU", cudaErrorInvalidValue);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaVDPAUSetVDPAUDevice(int device, VdpDevice vdpDevice,
                                                              VdpGetProcAddress* vdpGetProcAddress) {
  return api([&]() -> cudaError_t {
    if (!be().device(device)) return cudaErrorInvalidDevice;
    if (!vdpGetProcAddress) return cudaErrorInvalidValue;
    (void)vdpDevice;
    return gap("cudaVDPAUSetVDPAUDevice", "VDPAU", cudaErrorInvalidValue);
  });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsVDPAURegisterVideoSurface(cudaGraphicsResource_t* resource,
                                                                            VdpVideoSurface vdpSurface,
                                                                            unsigned int flags) {
  (void)vdpSurface;
  return registering("cudaGraphicsVDPAURegisterVideoSurface", "VDPAU", resource, flags, cudaErrorInvalidResourceHandle);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsVDPAURegisterOutputSurface(cudaGraphicsResource_t* resource,
                                                                             VdpOutputSurface vdpSurface,
                                                                             unsigned int flags) {
  (void)vdpSurface;
  return registering("cudaGraphicsVDPAURegisterOutputSurface", "VDPAU", resource, flags,
                     cudaErrorInvalidResourceHandle);
}

// ---- common: graphics resources ---------------------------------------------------------------------
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsUnregisterResource(cudaGraphicsResource_t resource) {
  (void)resource;
  return on_resource(nullptr, false);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsMapResources(int count, cudaGraphicsResource_t* resources,
                                                               cudaStream_t stream) {
  return map_resources(count, resources, stream);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsUnmapResources(int count, cudaGraphicsResource_t* resources,
                                                                 cudaStream_t stream) {
  return map_resources(count, resources, stream);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsResourceSetMapFlags(cudaGraphicsResource_t resource,
                                                                      unsigned int flags) {
  (void)resource;
  if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_MAX) return fg::rt::ret(cudaErrorInvalidValue);
  return on_resource(nullptr, false);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsResourceGetMappedPointer(void** devPtr, size_t* size,
                                                                           cudaGraphicsResource_t resource) {
  (void)resource;
  return on_resource(devPtr && size ? devPtr : nullptr, true);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsSubResourceGetMappedArray(cudaArray_t* array,
                                                                            cudaGraphicsResource_t resource,
                                                                            unsigned int arrayIndex,
                                                                            unsigned int mipLevel) {
  (void)resource;
  (void)arrayIndex;
  (void)mipLevel;
  return on_resource(array, true);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaGraphicsResourceGetMappedMipmappedArray(cudaMipmappedArray_t* mipmappedArray,
                                                                                  cudaGraphicsResource_t resource) {
  (void)resource;
  return on_resource(mipmappedArray, true);
}
