// SPDX-License-Identifier: Apache-2.0
// CUDA arrays through the driver API: cuArrayCreate_v2, cuArray3DCreate_v2, cuArrayDestroy,
// cuArrayGetDescriptor_v2, cuArray3DGetDescriptor_v2. The arrays and their rules are the
// core's (core/arrays.h); the copies that name arrays are memcpy.cpp's.
#include "driver/internal.h"

#include "core/arrays.h"

using namespace fg;
using namespace fg::drv;

namespace {

CUresult create(CUarray* pHandle, const arrays::Desc& d) {
  return api([&](Backend& b) -> CUresult {
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    uintptr_t h = 0;
    if (CUresult r = to_cu(arrays::create(ctx, d, ApiOrigin::Driver, &h))) return r;
    *pHandle = reinterpret_cast<CUarray>(h);
    return CUDA_SUCCESS;
  });
}

// The array a handle names: CUDA_ERROR_INVALID_HANDLE for anything but a live array.
CUresult find(CUarray h, arrays::Array* out) {
  return arrays::find(reinterpret_cast<uintptr_t>(h), out) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR_v2* pAllocateArray) {
  if (!pHandle || !pAllocateArray) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  arrays::Desc d;
  d.width = pAllocateArray->Width;
  d.height = pAllocateArray->Height;
  d.format = static_cast<uint32_t>(pAllocateArray->Format);
  d.channels = pAllocateArray->NumChannels;
  return create(pHandle, d);
}

extern "C" FG_IMPL CUresult fgimpl_cuArray3DCreate_v2(CUarray* pHandle,
                                                      const CUDA_ARRAY3D_DESCRIPTOR_v2* pAllocateArray) {
  if (!pHandle || !pAllocateArray) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  arrays::Desc d;
  d.width = pAllocateArray->Width;
  d.height = pAllocateArray->Height;
  d.depth = pAllocateArray->Depth;
  d.format = static_cast<uint32_t>(pAllocateArray->Format);
  d.channels = pAllocateArray->NumChannels;
  d.flags = pAllocateArray->Flags;
  return create(pHandle, d);
}

extern "C" FG_IMPL CUresult fgimpl_cuArrayDestroy(CUarray hArray) {
  return api([&](Backend&) -> CUresult {
    return to_cu(arrays::destroy(reinterpret_cast<uintptr_t>(hArray), ApiOrigin::Driver));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR_v2* pArrayDescriptor, CUarray hArray) {
  return api([&](Backend&) -> CUresult {
    if (!pArrayDescriptor) return CUDA_ERROR_INVALID_VALUE;
    arrays::Array a;
    if (CUresult r = find(hArray, &a)) return r;
    pArrayDescriptor->Width = a.desc.width;
    pArrayDescriptor->Height = a.desc.height;
    pArrayDescriptor->Format = static_cast<CUarray_format>(a.desc.format);
    pArrayDescriptor->NumChannels = a.desc.channels;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR_v2* pArrayDescriptor,
                                                             CUarray hArray) {
  return api([&](Backend&) -> CUresult {
    if (!pArrayDescriptor) return CUDA_ERROR_INVALID_VALUE;
    arrays::Array a;
    if (CUresult r = find(hArray, &a)) return r;
    pArrayDescriptor->Width = a.desc.width;
    pArrayDescriptor->Height = a.desc.height;
    pArrayDescriptor->Depth = a.desc.depth;
    pArrayDescriptor->Format = static_cast<CUarray_format>(a.desc.format);
    pArrayDescriptor->NumChannels = a.desc.channels;
    pArrayDescriptor->Flags = a.desc.flags;
    return CUDA_SUCCESS;
  });
}
