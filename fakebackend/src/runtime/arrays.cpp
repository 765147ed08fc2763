// SPDX-License-Identifier: Apache-2.0
// CUDA arrays through the runtime: cudaMallocArray, cudaMalloc3DArray, cudaFreeArray,
// cudaArrayGetInfo, cudaGetChannelDesc. The arrays and their rules are the core's
// (core/arrays.h); the copies that name arrays are memcpy.cpp's.
#include "runtime/channels.h"

using namespace fgapi;
using fg::rt::api;
using fg::rt::to_cuda;

namespace {

cudaError_t malloc_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, const fg::arrays::Desc& shape) {
  return api([&]() -> cudaError_t {
    if (!array || !desc) return cudaErrorInvalidValue;
    fg::arrays::Desc d = shape;
    if (cudaError_t e = fg::rt::format_of(*desc, &d.format, &d.channels); e != cudaSuccess) return e;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    uintptr_t h = 0;
    if (cudaError_t e = to_cuda(fg::arrays::create(ctx, d, fg::ApiOrigin::Runtime, &h)); e != cudaSuccess) return e;
    *array = reinterpret_cast<cudaArray_t>(h);
    return cudaSuccess;
  });
}

// The array a runtime handle names: cudaErrorInvalidValue (as documented) for anything else.
cudaError_t find(cudaArray_const_t h, fg::arrays::Array* out) {
  return h && fg::arrays::find(reinterpret_cast<uintptr_t>(h), out) ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                                      size_t width, size_t height, unsigned int flags) {
  // Layered and cubemap arrays are cudaMalloc3DArray's.
  if (flags & ~(cudaArraySurfaceLoadStore | cudaArrayTextureGather)) return api([] { return cudaErrorInvalidValue; });
  fg::arrays::Desc d;
  d.width = width, d.height = height, d.flags = flags;
  return malloc_array(array, desc, d);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                                        cudaExtent extent, unsigned int flags) {
  fg::arrays::Desc d;
  d.width = extent.width, d.height = extent.height, d.depth = extent.depth, d.flags = flags;
  return malloc_array(array, desc, d);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaFreeArray(cudaArray_t array) {
  return api([&]() -> cudaError_t {
    if (!array) return cudaSuccess;  // as documented: no operation
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    const fg::Status s = fg::arrays::destroy(reinterpret_cast<uintptr_t>(array), fg::ApiOrigin::Runtime);
    return s == fg::Status::InvalidHandle ? cudaErrorInvalidValue : to_cuda(s);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent,
                                                       unsigned int* flags, cudaArray_t array) {
  return api([&]() -> cudaError_t {
    fg::arrays::Array a;
    if (cudaError_t e = find(array, &a); e != cudaSuccess) return e;
    // Any of the three may be null.
    if (desc) *desc = fg::rt::desc_of(a.desc.format, a.desc.channels);
    if (extent) *extent = cudaExtent{a.desc.width, a.desc.height, a.desc.depth};
    if (flags) *flags = a.desc.flags;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  return api([&]() -> cudaError_t {
    if (!desc) return cudaErrorInvalidValue;
    fg::arrays::Array a;
    if (cudaError_t e = find(array, &a); e != cudaSuccess) return e;
    *desc = fg::rt::desc_of(a.desc.format, a.desc.channels);
    return cudaSuccess;
  });
}
