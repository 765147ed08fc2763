// SPDX-License-Identifier: Apache-2.0
// Graphics interop: the OpenGL (cudaGL.h), EGL (cudaEGL.h) and VDPAU (cudaVDPAU.h) entry
// points, and the cuGraphics* calls common to them. The real libcuda.so.1 exports them and
// some programs bind them by name at start-up (FFmpeg's nv-codec-headers loader needs
// cuGLGetDevices_v2 and cuGraphicsGLRegisterImage), so the fake exports them too.
//
// There is no OpenGL, EGL or VDPAU behind the fake GPU, so each call answers what NVIDIA's
// driver answers on a machine without them: its own argument checks first (null
// out-pointers CUDA_ERROR_INVALID_VALUE, before cuInit CUDA_ERROR_NOT_INITIALIZED, no
// current context CUDA_ERROR_INVALID_CONTEXT where the call needs one), then
//   OpenGL  cuGLGetDevices(_v2), cuGLCtxCreate(_v2), cuGraphicsGLRegisterBuffer/Image,
//           cuGLRegisterBufferObject: CUDA_ERROR_INVALID_GRAPHICS_CONTEXT (219), the
//           answer without a current OpenGL context (NVIDIA/cuda-python issue 248: an
//           NVIDIA engineer gets cudaErrorInvalidGraphicsContext from cudaGLGetDevices
//           before creating a GL context; cudaGL.h lists the code for these calls);
//           the legacy cuGLMapBufferObject(Async)/cuGLUnmapBufferObject(Async)/
//           cuGLUnregisterBufferObject on a buffer never registered: CUDA_ERROR_INVALID_VALUE,
//           cuGLSetBufferObjectMapFlags: CUDA_ERROR_INVALID_HANDLE (cudaGL.h: "If buffer
//           has not been registered for use with CUDA, then CUDA_ERROR_INVALID_HANDLE");
//           the deprecated cuGLInit: CUDA_SUCCESS (a no-op in the driver since CUDA 3.0).
//   EGL     an EGLImage, EGLStream or EGLSync no EGL made: CUDA_ERROR_INVALID_VALUE (the
//           code cudaEGL.h lists for bad arguments); a stream connection or graphics
//           resource the fake never made: CUDA_ERROR_INVALID_HANDLE.
//   VDPAU   cuVDPAUGetDevice, cuVDPAUCtxCreate(_v2) with a VdpDevice no VDPAU made:
//           CUDA_ERROR_INVALID_VALUE; cuGraphicsVDPAURegister{Video,Output}Surface:
//           CUDA_ERROR_INVALID_HANDLE (cudaVDPAU.h's codes for those calls).
//   common  cuGraphicsUnregisterResource, cuGraphicsMapResources, ..., on a resource the
//           fake never created (none can exist): CUDA_ERROR_INVALID_HANDLE, except
//           cuGraphicsResourceGetMappedEglFrame: CUDA_ERROR_NOT_MAPPED (cudaEGL.h's code for
//           a resource not registered).
// Each answer that comes from the missing window system is counted in the report's
// coverage under the entry point's name, and FAKEGPU_STRICT=1 stops there naming it
// (common/coverage.h): a user sees that the fake has no graphics interop.
#include "driver/internal.h"

#include "common/coverage.h"

using namespace fg;
using namespace fg::drv;

namespace {

// The answer for a call that needs `capability`, which the fake GPU lacks.
CUresult gap(const char* name, const char* capability, CUresult answer) {
  coverage::capability_gap(name, capability);
  return answer;
}

CUresult needs_context(Backend& b) {
  Context* ctx = nullptr;
  return current(b, &ctx);
}

// ---- OpenGL ---------------------------------------------------------------------------------------
CUresult gl_get_devices(const char* name, unsigned int* pCudaDeviceCount, CUdevice* pCudaDevices,
                        unsigned int cudaDeviceCount, std::underlying_type_t<CUGLDeviceList> deviceList) {
  return api([&](Backend&) -> CUresult {
    if (!pCudaDeviceCount || (cudaDeviceCount > 0 && !pCudaDevices)) return CUDA_ERROR_INVALID_VALUE;
    if (deviceList < CU_GL_DEVICE_LIST_ALL || deviceList > CU_GL_DEVICE_LIST_NEXT_FRAME)
      return CUDA_ERROR_INVALID_VALUE;
    return gap(name, "OpenGL", CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
  });
}

CUresult gl_ctx_create(const char* name, CUcontext* pCtx, unsigned int Flags, CUdevice device) {
  return api([&](Backend& b) -> CUresult {
    if (!pCtx) return CUDA_ERROR_INVALID_VALUE;
    Device* dev = nullptr;
    if (CUresult r = device_arg(b, device, &dev)) return r;
    (void)Flags;
    return gap(name, "OpenGL", CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
  });
}

CUresult graphics_register(const char* name, const char* capability, CUgraphicsResource* pCudaResource,
                           unsigned int flags, CUresult answer) {
  return api([&](Backend& b) -> CUresult {
    if (!pCudaResource) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    if (flags & ~CU_GRAPHICS_REGISTER_FLAGS_ALL) return CUDA_ERROR_INVALID_VALUE;
    return gap(name, capability, answer);
  });
}

// The legacy buffer-object calls: need a current context, then the buffer's registration.
CUresult gl_buffer(const char* name, CUresult answer) {
  return api([&](Backend& b) -> CUresult {
    if (CUresult r = needs_context(b)) return r;
    return gap(name, "OpenGL", answer);
  });
}

CUresult gl_map(const char* name, void* dptr, void* size, CUstream hStream, bool async, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    if (async) {
      Stream* s = nullptr;
      if (CUresult r = stream_arg(b, hStream, ptsz, &s)) return r;
    }
    return gap(name, "OpenGL", CUDA_ERROR_INVALID_VALUE);
  });
}

CUresult gl_unmap_async(const char* name, CUstream hStream) {
  return api([&](Backend& b) -> CUresult {
    if (CUresult r = needs_context(b)) return r;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, hStream, false, &s)) return r;
    return gap(name, "OpenGL", CUDA_ERROR_INVALID_VALUE);
  });
}

// ---- EGL ------------------------------------------------------------------------------------------
CUresult egl_connect(const char* name, CUeglStreamConnection* conn) {
  return api([&](Backend& b) -> CUresult {
    if (!conn) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    return gap(name, "EGL", CUDA_ERROR_INVALID_VALUE);  // no EGLStream exists here
  });
}

// Calls on an existing connection: the fake never made one.
CUresult egl_on_connection(const char* name, CUeglStreamConnection* conn) {
  return api([&](Backend& b) -> CUresult {
    if (!conn) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    return gap(name, "EGL", CUDA_ERROR_INVALID_HANDLE);
  });
}

// ---- VDPAU ----------------------------------------------------------------------------------------
CUresult vdpau_ctx_create(const char* name, CUcontext* pCtx, CUdevice device, VdpGetProcAddress* getProc) {
  return api([&](Backend& b) -> CUresult {
    if (!pCtx || !getProc) return CUDA_ERROR_INVALID_VALUE;
    Device* dev = nullptr;
    if (CUresult r = device_arg(b, device, &dev)) return r;
    return gap(name, "VDPAU", CUDA_ERROR_INVALID_VALUE);
  });
}

// ---- common to every API: no graphics resource can exist ------------------------------------------
CUresult resource_call(CUgraphicsResource resource) {
  return api([&](Backend& b) -> CUresult {
    if (CUresult r = needs_context(b)) return r;
    (void)resource;
    return CUDA_ERROR_INVALID_HANDLE;
  });
}

CUresult resource_out(const void* out, CUgraphicsResource resource, CUresult answer = CUDA_ERROR_INVALID_HANDLE) {
  return api([&](Backend& b) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    (void)resource;
    return answer;
  });
}

CUresult map_resources(unsigned int count, CUgraphicsResource* resources, CUstream hStream, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (count == 0 || !resources) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, hStream, ptsz, &s)) return r;
    return CUDA_ERROR_INVALID_HANDLE;
  });
}

CUresult set_map_flags(CUgraphicsResource resource, unsigned int flags) {
  return api([&](Backend& b) -> CUresult {
    if (flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_MAX) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    (void)resource;
    return CUDA_ERROR_INVALID_HANDLE;
  });
}

}  // namespace

// ---- OpenGL ---------------------------------------------------------------------------------------
// Deprecated since CUDA 3.0; the driver keeps it as a no-op that succeeds (it needs cuInit).
extern "C" FG_IMPL CUresult fgimpl_cuGLInit() {
  return api([](Backend&) -> CUresult { return CUDA_SUCCESS; });
}
extern "C" FG_IMPL CUresult fgimpl_cuGLGetDevices(unsigned int* pCudaDeviceCount, CUdevice* pCudaDevices,
                                                  unsigned int cudaDeviceCount, CUGLDeviceList deviceList) {
  return gl_get_devices("cuGLGetDevices", pCudaDeviceCount, pCudaDevices, cudaDeviceCount, enum_value(deviceList));
}
extern "C" FG_IMPL CUresult fgimpl_cuGLGetDevices_v2(unsigned int* pCudaDeviceCount, CUdevice* pCudaDevices,
                                                     unsigned int cudaDeviceCount, CUGLDeviceList deviceList) {
  return gl_get_devices("cuGLGetDevices_v2", pCudaDeviceCount, pCudaDevices, cudaDeviceCount, enum_value(deviceList));
}
extern "C" FG_IMPL CUresult fgimpl_cuGLCtxCreate(CUcontext* pCtx, unsigned int Flags, CUdevice device) {
  return gl_ctx_create("cuGLCtxCreate", pCtx, Flags, device);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLCtxCreate_v2(CUcontext* pCtx, unsigned int Flags, CUdevice device) {
  return gl_ctx_create("cuGLCtxCreate_v2", pCtx, Flags, device);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsGLRegisterBuffer(CUgraphicsResource* pCudaResource, GLuint buffer,
                                                              unsigned int Flags) {
  (void)buffer;
  return graphics_register("cuGraphicsGLRegisterBuffer", "OpenGL", pCudaResource, Flags,
                           CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsGLRegisterImage(CUgraphicsResource* pCudaResource, GLuint image,
                                                             GLenum target, unsigned int Flags) {
  (void)image;
  (void)target;
  return graphics_register("cuGraphicsGLRegisterImage", "OpenGL", pCudaResource, Flags,
                           CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLRegisterBufferObject(GLuint buffer) {
  (void)buffer;
  return gl_buffer("cuGLRegisterBufferObject", CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLUnregisterBufferObject(GLuint buffer) {
  (void)buffer;
  return gl_buffer("cuGLUnregisterBufferObject", CUDA_ERROR_INVALID_VALUE);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLUnmapBufferObject(GLuint buffer) {
  (void)buffer;
  return gl_buffer("cuGLUnmapBufferObject", CUDA_ERROR_INVALID_VALUE);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLSetBufferObjectMapFlags(GLuint buffer, unsigned int Flags) {
  (void)buffer;
  if (Flags > CU_GRAPHICS_MAP_RESOURCE_FLAGS_MAX)
    return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return gl_buffer("cuGLSetBufferObjectMapFlags", CUDA_ERROR_INVALID_HANDLE);
}
// v1 (2000) takes 32-bit sizes (unsigned int*), v2 (3020) size_t*: only their null-ness is read.
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObject(unsigned int* dptr, unsigned int* size, GLuint buffer) {
  (void)buffer;
  return gl_map("cuGLMapBufferObject", dptr, size, nullptr, false, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObject_v2(CUdeviceptr* dptr, size_t* size, GLuint buffer) {
  (void)buffer;
  return gl_map("cuGLMapBufferObject_v2", dptr, size, nullptr, false, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObject_v2_ptds(CUdeviceptr* dptr, size_t* size, GLuint buffer) {
  (void)buffer;
  return gl_map("cuGLMapBufferObject_v2_ptds", dptr, size, nullptr, false, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObjectAsync(unsigned int* dptr, unsigned int* size, GLuint buffer,
                                                            CUstream hStream) {
  (void)buffer;
  return gl_map("cuGLMapBufferObjectAsync", dptr, size, hStream, true, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObjectAsync_v2(CUdeviceptr* dptr, size_t* size, GLuint buffer,
                                                               CUstream hStream) {
  (void)buffer;
  return gl_map("cuGLMapBufferObjectAsync_v2", dptr, size, hStream, true, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLMapBufferObjectAsync_v2_ptsz(CUdeviceptr* dptr, size_t* size, GLuint buffer,
                                                                    CUstream hStream) {
  (void)buffer;
  return gl_map("cuGLMapBufferObjectAsync_v2_ptsz", dptr, size, hStream, true, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuGLUnmapBufferObjectAsync(GLuint buffer, CUstream hStream) {
  (void)buffer;
  return gl_unmap_async("cuGLUnmapBufferObjectAsync", hStream);
}

// ---- EGL ------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsEGLRegisterImage(CUgraphicsResource* pCudaResource, EGLImageKHR image,
                                                              unsigned int flags) {
  (void)image;
  return graphics_register("cuGraphicsEGLRegisterImage", "EGL", pCudaResource, flags, CUDA_ERROR_INVALID_VALUE);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamConsumerConnect(CUeglStreamConnection* conn, EGLStreamKHR stream) {
  (void)stream;
  return egl_connect("cuEGLStreamConsumerConnect", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamConsumerConnectWithFlags(CUeglStreamConnection* conn, EGLStreamKHR stream,
                                                                       unsigned int flags) {
  (void)stream;
  (void)flags;
  return egl_connect("cuEGLStreamConsumerConnectWithFlags", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamProducerConnect(CUeglStreamConnection* conn, EGLStreamKHR stream,
                                                              EGLint width, EGLint height) {
  (void)stream;
  (void)width;
  (void)height;
  return egl_connect("cuEGLStreamProducerConnect", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamConsumerDisconnect(CUeglStreamConnection* conn) {
  return egl_on_connection("cuEGLStreamConsumerDisconnect", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamProducerDisconnect(CUeglStreamConnection* conn) {
  return egl_on_connection("cuEGLStreamProducerDisconnect", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamConsumerAcquireFrame(CUeglStreamConnection* conn,
                                                                   CUgraphicsResource* pCudaResource, CUstream* pStream,
                                                                   unsigned int timeout) {
  (void)timeout;
  if (!pCudaResource) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  (void)pStream;
  return egl_on_connection("cuEGLStreamConsumerAcquireFrame", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamConsumerReleaseFrame(CUeglStreamConnection* conn,
                                                                   CUgraphicsResource pCudaResource,
                                                                   CUstream* pStream) {
  (void)pCudaResource;
  (void)pStream;
  return egl_on_connection("cuEGLStreamConsumerReleaseFrame", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamProducerPresentFrame(CUeglStreamConnection* conn, CUeglFrame eglframe,
                                                                   CUstream* pStream) {
  (void)eglframe;
  (void)pStream;
  return egl_on_connection("cuEGLStreamProducerPresentFrame", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEGLStreamProducerReturnFrame(CUeglStreamConnection* conn, CUeglFrame* eglframe,
                                                                  CUstream* pStream) {
  (void)pStream;
  if (!eglframe) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return egl_on_connection("cuEGLStreamProducerReturnFrame", conn);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventCreateFromEGLSync(CUevent* phEvent, EGLSyncKHR eglSync, unsigned int flags) {
  return api([&](Backend& b) -> CUresult {
    if (!phEvent || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = needs_context(b)) return r;
    (void)eglSync;
    return gap("cuEventCreateFromEGLSync", "EGL", CUDA_ERROR_INVALID_VALUE);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceGetMappedEglFrame(CUeglFrame* eglFrame,
                                                                       CUgraphicsResource resource, unsigned int index,
                                                                       unsigned int mipLevel) {
  (void)index;
  (void)mipLevel;
  // cudaEGL.h: "If resource is not registered then CUDA_ERROR_NOT_MAPPED is returned."
  return resource_out(eglFrame, resource, CUDA_ERROR_NOT_MAPPED);
}

// ---- VDPAU ----------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuVDPAUGetDevice(CUdevice* pDevice, VdpDevice vdpDevice,
                                                    VdpGetProcAddress* vdpGetProcAddress) {
  return api([&](Backend&) -> CUresult {
    if (!pDevice || !vdpGetProcAddress) return CUDA_ERROR_INVALID_VALUE;
    (void)vdpDevice;
    return gap("cuVDPAUGetDevice", "VDPAU", CUDA_ERROR_INVALID_VALUE);
  });
}
extern "C" FG_IMPL CUresult fgimpl_cuVDPAUCtxCreate(CUcontext* pCtx, unsigned int flags, CUdevice device,
                                                    VdpDevice vdpDevice, VdpGetProcAddress* vdpGetProcAddress) {
  (void)flags;
  (void)vdpDevice;
  return vdpau_ctx_create("cuVDPAUCtxCreate", pCtx, device, vdpGetProcAddress);
}
extern "C" FG_IMPL CUresult fgimpl_cuVDPAUCtxCreate_v2(CUcontext* pCtx, unsigned int flags, CUdevice device,
                                                       VdpDevice vdpDevice, VdpGetProcAddress* vdpGetProcAddress) {
  (void)flags;
  (void)vdpDevice;
  return vdpau_ctx_create("cuVDPAUCtxCreate_v2", pCtx, device, vdpGetProcAddress);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsVDPAURegisterVideoSurface(CUgraphicsResource* pCudaResource,
                                                                       VdpVideoSurface vdpSurface, unsigned int flags) {
  (void)vdpSurface;
  return graphics_register("cuGraphicsVDPAURegisterVideoSurface", "VDPAU", pCudaResource, flags,
                           CUDA_ERROR_INVALID_HANDLE);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsVDPAURegisterOutputSurface(CUgraphicsResource* pCudaResource,
                                                                        VdpOutputSurface vdpSurface,
                                                                        unsigned int flags) {
  (void)vdpSurface;
  return graphics_register("cuGraphicsVDPAURegisterOutputSurface", "VDPAU", pCudaResource, flags,
                           CUDA_ERROR_INVALID_HANDLE);
}

// ---- common: graphics resources ---------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsUnregisterResource(CUgraphicsResource resource) {
  return resource_call(resource);
}
FG_PTSZ(cuGraphicsMapResources, (unsigned int count, CUgraphicsResource* resources, CUstream hStream),
        map_resources(count, resources, hStream, ptsz))
FG_PTSZ(cuGraphicsUnmapResources, (unsigned int count, CUgraphicsResource* resources, CUstream hStream),
        map_resources(count, resources, hStream, ptsz))
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsSubResourceGetMappedArray(CUarray* pArray, CUgraphicsResource resource,
                                                                       unsigned int arrayIndex, unsigned int mipLevel) {
  (void)arrayIndex;
  (void)mipLevel;
  return resource_out(pArray, resource);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray* pMipmappedArray,
                                                                             CUgraphicsResource resource) {
  return resource_out(pMipmappedArray, resource);
}
// v1 (3000) has a 32-bit size; only the pointers' null-ness is read.
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceGetMappedPointer(unsigned int* pDevPtr, unsigned int* pSize,
                                                                      CUgraphicsResource resource) {
  return resource_out(pDevPtr && pSize ? pDevPtr : nullptr, resource);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr* pDevPtr, size_t* pSize,
                                                                         CUgraphicsResource resource) {
  return resource_out(pDevPtr && pSize ? pDevPtr : nullptr, resource);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceSetMapFlags(CUgraphicsResource resource, unsigned int flags) {
  return set_map_flags(resource, flags);
}
extern "C" FG_IMPL CUresult fgimpl_cuGraphicsResourceSetMapFlags_v2(CUgraphicsResource resource, unsigned int flags) {
  return set_map_flags(resource, flags);
}
