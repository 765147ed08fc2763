// SPDX-License-Identifier: Apache-2.0
// Copies and memsets: HtoD/DtoH/DtoD, unified cuMemcpy, 2D/3D (host and device memory
// types), peer copies, D8/D16/D32 memsets (1D and 2D), each synchronous and stream-ordered,
// and the per-thread-default-stream twins (_ptds / _ptsz) that cuGetProcAddress hands out
// with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
//
// Bytes really move (core/backend.h copy/set). Arguments are validated before anything is
// queued, so a stream-ordered call reports a bad pointer at once, as the real driver does.
// The device side of a transfer must be memory the driver knows; a host side may be any
// memory. A CUDA array is device memory laid out row-major without padding (core/arrays.h):
// a 2D/3D copy reaches it as a pitched volume whose pitch is its row, and the linear array
// copies (HtoA, AtoH, DtoA, AtoD, AtoA) take offsets into that layout.
#include "driver/internal.h"

#include "core/arrays.h"
#include "core/graph.h"

using namespace fg;
using namespace fg::drv;

namespace fg::drv {

CUresult check_side(Backend& b, const void* p, size_t n, bool device_side, bool write) noexcept {
  if (n == 0) return CUDA_SUCCESS;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  // Outside the mappable address space (or wrapping) is no memory at all: refused here, also
  // for the host side, so an asynchronous call fails now instead of on its stream.
  if (!user_range(reinterpret_cast<uintptr_t>(p), n)) return CUDA_ERROR_INVALID_VALUE;
  // Virtual-memory ranges first: one copy may span several mappings of a reservation.
  switch (vmm::check(p, n, write)) {
    case vmm::Range::Ok: return CUDA_SUCCESS;
    case vmm::Range::Bad: return CUDA_ERROR_INVALID_VALUE;
    case vmm::Range::NotVmm: break;
  }
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (auto a = b.mem_find(p)) return a->holds(u, n) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  return device_side ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

}  // namespace fg::drv

namespace {

enum class Side { Host, Device, Any };

CUresult check(Backend& b, const void* p, size_t n, Side side, bool write) {
  return check_side(b, p, n, side == Side::Device, write);
}

// Synchronous operations run after the work already queued where they are ordered: the
// per-thread default stream for _ptds, otherwise every stream of the context (the legacy
// default stream waits for all blocking streams).
CUresult sync_before(Backend& b, Context* ctx, bool ptds) {
  if (graph::active()) {  // synchronous work is potentially unsafe during capture (core/graph.h)
    Stream* s = nullptr;
    if (CUresult r = to_cu(b.stream_resolve(nullptr, ctx, &s, ptds))) return r;
    if (CUresult r = to_cu(graph::check_sync(s))) return r;
  }
  if (!ptds) return to_cu(b.ctx_sync(ctx));
  Stream* s = nullptr;
  if (CUresult r = to_cu(b.stream_resolve(nullptr, ctx, &s, true))) return r;
  return to_cu(b.stream_sync(s));
}

// Where an operation runs: synchronously, after the work it is ordered behind (`ctx` set),
// or in stream order (`stream` set). Resolved before any pointer is checked, so a bad
// stream or context is reported first.
struct Where {
  Context* ctx = nullptr;
  Stream* stream = nullptr;
  bool per_thread = false;
};

CUresult where(Backend& b, bool async, CUstream hStream, bool per_thread, Where* w) {
  w->per_thread = per_thread;
  return async ? stream_arg(b, hStream, per_thread, &w->stream) : current(b, &w->ctx);
}

// Runs `op` (returns fg::Status): now for synchronous calls, queued in stream order otherwise
// (arguments were checked already; a queued op cannot report).
template <class Op>
CUresult run(Backend& b, const Where& w, Op op) {
  if (w.stream) return to_cu(b.stream_enqueue(w.stream, [op] { (void)op(); }));
  if (CUresult r = sync_before(b, w.ctx, w.per_thread)) return r;
  return to_cu(op());
}

// ---- stream capture (core/graph.h) ------------------------------------------------------------------
// On a capturing stream an asynchronous copy or memset becomes a graph node; pageable host
// memory (memory the driver does not know) cannot be captured.
bool pageable(Backend& b, const void* p) {
  return !b.mem_find(p).has_value() && vmm::check(p, 1, false) == vmm::Range::NotVmm;
}

graph::Params copy_node(void* dst, size_t dpitch, size_t dheight, const void* src, size_t spitch, size_t sheight,
                        size_t width, size_t height, size_t depth) {
  graph::Params p;
  p.type = graph::NodeType::Memcpy;
  p.copy.dst = dst, p.copy.src = src;
  p.copy.dpitch = dpitch, p.copy.spitch = spitch;
  p.copy.dheight = dheight, p.copy.sheight = sheight;
  p.copy.width = width, p.copy.height = height, p.copy.depth = depth;
  return p;
}

// ---- linear copies ---------------------------------------------------------------------------------
CUresult copy(void* dst, Side dside, const void* src, Side sside, size_t n, bool async, CUstream hStream,
              bool per_thread) {
  return api([&](Backend& b) -> CUresult {
    Where w;
    if (CUresult r = where(b, async, hStream, per_thread, &w)) return r;
    if (n == 0) return CUDA_SUCCESS;
    if (CUresult r = check(b, dst, n, dside, true)) return r;
    if (CUresult r = check(b, src, n, sside, false)) return r;
    if (CUresult r; captured(
            w.stream, pageable(b, dst) || pageable(b, src), [&] { return copy_node(dst, n, 1, src, n, 1, n, 1, 1); },
            &r))
      return r;
    Backend* bp = &b;
    return run(b, w, [bp, dst, src, n] { return bp->copy(dst, src, n); });
  });
}

CUresult peer_copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, size_t n, bool async,
                   CUstream hStream, bool per_thread) {
  {
    Backend* b = initialized_backend();
    if (!b) return CUDA_ERROR_NOT_INITIALIZED;
    Context* c = nullptr;
    if (CUresult r = context_arg(*b, dstCtx, &c)) return r;
    if (CUresult r = context_arg(*b, srcCtx, &c)) return r;
  }
  return copy(ptr_of(dst), Side::Device, ptr_of(src), Side::Device, n, async, hStream, per_thread);
}

// ---- 2D / 3D copies --------------------------------------------------------------------------------
struct Endpoint {
  const void* base = nullptr;  // address of (x, y, z) = (0, 0, 0)
  Side side = Side::Any;
  bool is_array = false;  // a CUDA array: `array` describes it
  arrays::Array array;
};

CUresult endpoint(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, Endpoint* out) {
  switch (static_cast<int>(type)) {
    case CU_MEMORYTYPE_HOST: out->base = host, out->side = Side::Host; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE: out->base = ptr_of(device), out->side = Side::Device; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED: out->base = ptr_of(device), out->side = Side::Any; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
      if (!array) return CUDA_ERROR_INVALID_VALUE;
      if (!arrays::find(reinterpret_cast<uintptr_t>(array), &out->array)) return CUDA_ERROR_INVALID_HANDLE;
      out->base = out->array.base, out->side = Side::Device, out->is_array = true;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// An array side of a 2D/3D copy: the box (x bytes, y, z) + (w bytes, h, depth) lies inside the
// array; its pitch and slice height are the array's.
CUresult array_box(const Endpoint& ep, size_t x, size_t y, size_t z, size_t w, size_t h, size_t depth, size_t* pitch,
                   size_t* rows) {
  const arrays::Array& a = ep.array;
  if (x > a.row || w > a.row - x || y > a.rows || h > a.rows - y || z > a.slices || depth > a.slices - z)
    return CUDA_ERROR_INVALID_VALUE;
  *pitch = a.row, *rows = a.rows;
  return CUDA_SUCCESS;
}

// A pitched box: `depth` slices of `height` rows of `width` bytes.
struct Box {
  const char* start;
  size_t pitch, slice;  // bytes between rows, between slices
};

// The box of a pitched volume at `base` starting at its byte (x, y, z): false when the slice,
// the offset or the start does not fit (a wrapping offset must not land in another allocation).
bool box_at(const void* base, size_t pitch, size_t rows, size_t x, size_t y, size_t z, Box* out) {
  size_t slice = 0, offset = 0;
  uintptr_t start = 0;
  if (!offset_3d(pitch, rows, x, y, z, &slice, &offset) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(base), offset, &start))
    return false;
  *out = Box{reinterpret_cast<const char*>(start), pitch, slice};
  return true;
}

CUresult check_box(Backend& b, const Box& box, const Endpoint& ep, size_t width, size_t height, size_t depth,
                   bool write) {
  size_t span = 0;
  if (!span_3d(box.slice, box.pitch, width, height, depth, &span)) return CUDA_ERROR_INVALID_VALUE;
  return check(b, box.start, span, ep.side, write);
}

Status copy_box(Backend& b, Box d, Box s, size_t width, size_t height, size_t depth) {
  for (size_t z = 0; z < depth; ++z) {
    Status st = b.copy_2d(const_cast<char*>(d.start + z * d.slice), d.pitch, s.start + z * s.slice, s.pitch, width,
                          height);
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

CUresult copy_3d_impl(const CUDA_MEMCPY3D* p, bool is_2d, bool async, CUstream hStream, bool per_thread) {
  return api([&](Backend& b) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    Where where_;
    if (CUresult r = where(b, async, hStream, per_thread, &where_)) return r;
    Endpoint src, dst;
    if (CUresult r = endpoint(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &src)) return r;
    if (CUresult r = endpoint(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &dst)) return r;
    if (!is_2d && (p->reserved0 || p->reserved1 || p->srcLOD || p->dstLOD)) return CUDA_ERROR_INVALID_VALUE;
    const size_t w = p->WidthInBytes, h = p->Height, depth = is_2d ? 1 : p->Depth;
    if (w == 0 || h == 0 || depth == 0) return CUDA_SUCCESS;
    size_t spitch = p->srcPitch ? p->srcPitch : w, dpitch = p->dstPitch ? p->dstPitch : w;
    size_t sheight = is_2d ? h : (p->srcHeight ? p->srcHeight : h);
    size_t dheight = is_2d ? h : (p->dstHeight ? p->dstHeight : h);
    // An array side's pitch and height are its own (the descriptor's are ignored there).
    if (src.is_array) {
      if (CUresult r = array_box(src, p->srcXInBytes, p->srcY, is_2d ? 0 : p->srcZ, w, h, depth, &spitch, &sheight))
        return r;
    }
    if (dst.is_array) {
      if (CUresult r = array_box(dst, p->dstXInBytes, p->dstY, is_2d ? 0 : p->dstZ, w, h, depth, &dpitch, &dheight))
        return r;
    }
    if ((h > 1 || depth > 1) && (spitch < w || dpitch < w)) return CUDA_ERROR_INVALID_VALUE;
    if (depth > 1 && (sheight < h || dheight < h)) return CUDA_ERROR_INVALID_VALUE;
    if (!src.base || !dst.base) return CUDA_ERROR_INVALID_VALUE;
    Box s{}, d{};
    if (!box_at(src.base, spitch, sheight, p->srcXInBytes, p->srcY, is_2d ? 0 : p->srcZ, &s) ||
        !box_at(dst.base, dpitch, dheight, p->dstXInBytes, p->dstY, is_2d ? 0 : p->dstZ, &d))
      return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_box(b, d, dst, w, h, depth, true)) return r;
    if (CUresult r = check_box(b, s, src, w, h, depth, false)) return r;
    if (CUresult r; captured(
            where_.stream, pageable(b, d.start) || pageable(b, s.start),
            [&] {
              return copy_node(const_cast<char*>(d.start), dpitch, dheight, s.start, spitch, sheight, w, h, depth);
            },
            &r))
      return r;
    Backend* bp = &b;
    return run(b, where_, [bp, d, s, w, h, depth] { return copy_box(*bp, d, s, w, h, depth); });
  });
}

// CUDA_MEMCPY2D is the first fields of CUDA_MEMCPY3D without Z/LOD/array reserved members:
// translate it field by field.
CUresult copy_2d(const CUDA_MEMCPY2D* p, bool async, CUstream hStream, bool per_thread) {
  if (!p) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  CUDA_MEMCPY3D q{};
  q.srcXInBytes = p->srcXInBytes;
  q.srcY = p->srcY;
  q.srcMemoryType = p->srcMemoryType;
  q.srcHost = p->srcHost;
  q.srcDevice = p->srcDevice;
  q.srcArray = p->srcArray;
  q.srcPitch = p->srcPitch;
  q.dstXInBytes = p->dstXInBytes;
  q.dstY = p->dstY;
  q.dstMemoryType = p->dstMemoryType;
  q.dstHost = p->dstHost;
  q.dstDevice = p->dstDevice;
  q.dstArray = p->dstArray;
  q.dstPitch = p->dstPitch;
  q.WidthInBytes = p->WidthInBytes;
  q.Height = p->Height;
  q.Depth = 1;
  // A pitch smaller than the width is an error for 2D copies even with one row.
  if (p->Height > 0 && p->WidthInBytes > 0 &&
      ((p->srcPitch && p->srcPitch < p->WidthInBytes) || (p->dstPitch && p->dstPitch < p->WidthInBytes)))
    return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return copy_3d_impl(&q, true, async, hStream, per_thread);
}

// ---- linear copies to and from arrays -------------------------------------------------------------
// The bytes [offset, offset + n) of array `h` (its row-major layout): *out their address.
// A null handle is an invalid value, any other that names no live array an invalid handle.
CUresult array_range(CUarray h, size_t offset, size_t n, void** out) {
  if (!h) return CUDA_ERROR_INVALID_VALUE;
  arrays::Array a;
  if (!arrays::find(reinterpret_cast<uintptr_t>(h), &a)) return CUDA_ERROR_INVALID_HANDLE;
  if (offset > a.bytes || n > a.bytes - offset) return CUDA_ERROR_INVALID_VALUE;
  *out = a.base + offset;
  return CUDA_SUCCESS;
}

// One side of a linear copy naming arrays: an array and an offset into it, or a pointer.
struct Linear {
  bool is_array;
  CUarray array;
  size_t offset;
  const void* ptr;
  Side side;
};
Linear at(CUarray a, size_t offset) { return {true, a, offset, nullptr, Side::Device}; }
Linear at(const void* p, Side side) { return {false, nullptr, 0, p, side}; }

CUresult array_copy(Linear dst, Linear src, size_t n, bool async, CUstream hStream, bool per_thread) {
  if (!initialized_backend()) return CUDA_ERROR_NOT_INITIALIZED;
  for (Linear* l : {&dst, &src}) {
    if (!l->is_array) continue;
    void* p = nullptr;
    if (CUresult r = array_range(l->array, l->offset, n, &p)) return r;
    l->ptr = p;
  }
  return copy(const_cast<void*>(dst.ptr), dst.side, src.ptr, src.side, n, async, hStream, per_thread);
}

// ---- memsets ---------------------------------------------------------------------------------------
// elem = 1, 2 or 4 bytes; width in elements; height 1 for the linear forms (pitch unused).
CUresult memset_impl(CUdeviceptr dst, size_t pitch, uint32_t value, size_t elem, size_t width, size_t height,
                     bool two_d, bool async, CUstream hStream, bool per_thread) {
  return api([&](Backend& b) -> CUresult {
    Where w;
    if (CUresult r = where(b, async, hStream, per_thread, &w)) return r;
    if (width == 0 || height == 0) return CUDA_SUCCESS;
    void* p = ptr_of(dst);
    if (dst % elem != 0 || (two_d && pitch % elem != 0)) return CUDA_ERROR_INVALID_VALUE;
    // Row bytes and the span of the rows, overflow-checked: a wrapping pitch or width must not
    // pass the range check and fail only later on the stream.
    size_t row = 0, span = 0;
    if (__builtin_mul_overflow(width, elem, &row)) return CUDA_ERROR_INVALID_VALUE;
    if (two_d && row > pitch && height > 1) return CUDA_ERROR_INVALID_VALUE;
    if (!two_d) {
      span = row;
    } else if (!span_2d(pitch, row, height, &span)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult r = check(b, p, span, Side::Device, true)) return r;
    if (CUresult r; captured(
            w.stream, false,
            [&] {
              graph::Params node;
              node.type = graph::NodeType::Memset;
              const size_t row = two_d && height > 1 ? pitch : width * elem;
              node.set = graph::Set{p, row, value, static_cast<unsigned>(elem), width, height};
              return node;
            },
            &r))
      return r;
    Backend* bp = &b;
    if (elem == 1 && !two_d)
      return run(b, w, [bp, p, value, width] { return bp->set(p, static_cast<int>(value & 0xFF), width); });
    if (!two_d) {
      return run(b, w, [bp, p, value, elem, width] {
        const uint16_t v16 = static_cast<uint16_t>(value);
        return bp->set_pattern(p, elem == 2 ? static_cast<const void*>(&v16) : &value, elem, width);
      });
    }
    const size_t row_pitch = height > 1 ? pitch : std::max(pitch, width * elem);
    return run(b, w, [bp, p, row_pitch, value, elem, width, height] {
      const uint8_t v8 = static_cast<uint8_t>(value);
      const uint16_t v16 = static_cast<uint16_t>(value);
      const void* pat = elem == 1 ? static_cast<const void*>(&v8) : elem == 2 ? static_cast<const void*>(&v16) : &value;
      return bp->set_2d(p, row_pitch, pat, elem, width, height);
    });
  });
}

}  // namespace

// ---- exported implementations ----------------------------------------------------------------------
#define FG_COPY_HTOD(suffix, async, pt)                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuMemcpyHtoD##suffix(CUdeviceptr dstDevice, const void* srcHost,               \
                                                          size_t ByteCount FG_STREAM_PARAM_##async) {               \
    return copy(ptr_of(dstDevice), Side::Device, srcHost, Side::Host, ByteCount, async, FG_STREAM_ARG_##async, pt); \
  }
#define FG_COPY_DTOH(suffix, async, pt)                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_cuMemcpyDtoH##suffix(void* dstHost, CUdeviceptr srcDevice,                     \
                                                          size_t ByteCount FG_STREAM_PARAM_##async) {               \
    return copy(dstHost, Side::Host, ptr_of(srcDevice), Side::Device, ByteCount, async, FG_STREAM_ARG_##async, pt); \
  }
#define FG_COPY_DTOD(suffix, async, pt)                                                                 \
  extern "C" FG_IMPL CUresult fgimpl_cuMemcpyDtoD##suffix(CUdeviceptr dstDevice, CUdeviceptr srcDevice, \
                                                          size_t ByteCount FG_STREAM_PARAM_##async) {   \
    return copy(ptr_of(dstDevice), Side::Device, ptr_of(srcDevice), Side::Device, ByteCount, async,     \
                FG_STREAM_ARG_##async, pt);                                                             \
  }
#define FG_STREAM_PARAM_false
#define FG_STREAM_PARAM_true , CUstream hStream
#define FG_STREAM_ARG_false nullptr
#define FG_STREAM_ARG_true hStream

// Each direction in four forms: synchronous, _ptds, Async, Async _ptsz (suffix, async, per-thread).
// clang-format off
#define FG_COPY_FORMS(COPY) \
  COPY(_v2, false, false) COPY(_v2_ptds, false, true) COPY(Async_v2, true, false) COPY(Async_v2_ptsz, true, true)
// clang-format on
FG_COPY_FORMS(FG_COPY_HTOD)
FG_COPY_FORMS(FG_COPY_DTOH)
FG_COPY_FORMS(FG_COPY_DTOD)
#undef FG_COPY_FORMS

// Unified addressing: the driver infers each side from the pointer.
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return copy(ptr_of(dst), Side::Any, ptr_of(src), Side::Any, ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return copy(ptr_of(dst), Side::Any, ptr_of(src), Side::Any, ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return copy(ptr_of(dst), Side::Any, ptr_of(src), Side::Any, ByteCount, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                                      CUstream hStream) {
  return copy(ptr_of(dst), Side::Any, ptr_of(src), Side::Any, ByteCount, true, hStream, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                                CUcontext srcContext, size_t ByteCount) {
  return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                                     CUcontext srcContext, size_t ByteCount) {
  return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                                     CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
                                                          CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                                          CUstream hStream) {
  return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, true, hStream, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return copy_2d(pCopy, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return copy_2d(pCopy, true, hStream, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy3D_v2(const CUDA_MEMCPY3D* pCopy) {
  return copy_3d_impl(pCopy, false, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D* pCopy) {
  return copy_3d_impl(pCopy, false, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return copy_3d_impl(pCopy, false, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return copy_3d_impl(pCopy, false, true, hStream, true);
}

// Linear copies naming arrays (offsets in bytes into the array's row-major layout).
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                                   size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(srcHost, Side::Host), ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                                        size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(srcHost, Side::Host), ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                                        size_t ByteCount, CUstream hStream) {
  return array_copy(at(dstArray, dstOffset), at(srcHost, Side::Host), ByteCount, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                                             size_t ByteCount, CUstream hStream) {
  return array_copy(at(dstArray, dstOffset), at(srcHost, Side::Host), ByteCount, true, hStream, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoH_v2(void* dstHost, CUarray srcArray, size_t srcOffset,
                                                   size_t ByteCount) {
  return array_copy(at(dstHost, Side::Host), at(srcArray, srcOffset), ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoH_v2_ptds(void* dstHost, CUarray srcArray, size_t srcOffset,
                                                        size_t ByteCount) {
  return array_copy(at(dstHost, Side::Host), at(srcArray, srcOffset), ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoHAsync_v2(void* dstHost, CUarray srcArray, size_t srcOffset,
                                                        size_t ByteCount, CUstream hStream) {
  return array_copy(at(dstHost, Side::Host), at(srcArray, srcOffset), ByteCount, true, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoHAsync_v2_ptsz(void* dstHost, CUarray srcArray, size_t srcOffset,
                                                             size_t ByteCount, CUstream hStream) {
  return array_copy(at(dstHost, Side::Host), at(srcArray, srcOffset), ByteCount, true, hStream, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                                                   size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(ptr_of(srcDevice), Side::Device), ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                                                        size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(ptr_of(srcDevice), Side::Device), ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                                                   size_t ByteCount) {
  return array_copy(at(ptr_of(dstDevice), Side::Device), at(srcArray, srcOffset), ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                                                        size_t ByteCount) {
  return array_copy(at(ptr_of(dstDevice), Side::Device), at(srcArray, srcOffset), ByteCount, false, nullptr, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray,
                                                   size_t srcOffset, size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(srcArray, srcOffset), ByteCount, false, nullptr, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray,
                                                        size_t srcOffset, size_t ByteCount) {
  return array_copy(at(dstArray, dstOffset), at(srcArray, srcOffset), ByteCount, false, nullptr, true);
}

// Memsets. The synchronous ones carry _v2 (64-bit CUdeviceptr), the Async ones never did.
#define FG_MEMSET(name, T, elem, async, pt)                                                                     \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUdeviceptr dstDevice, T value, size_t N FG_STREAM_PARAM_##async) { \
    return memset_impl(dstDevice, 0, value, elem, N, 1, false, async, FG_STREAM_ARG_##async, pt);               \
  }
#define FG_MEMSET2D(name, T, elem, async, pt)                                                                    \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUdeviceptr dstDevice, size_t dstPitch, T value, size_t Width,       \
                                            size_t Height FG_STREAM_PARAM_##async) {                             \
    return memset_impl(dstDevice, dstPitch, value, elem, Width, Height, true, async, FG_STREAM_ARG_##async, pt); \
  }

FG_MEMSET(cuMemsetD8_v2, unsigned char, 1, false, false)
FG_MEMSET(cuMemsetD8_v2_ptds, unsigned char, 1, false, true)
FG_MEMSET(cuMemsetD8Async, unsigned char, 1, true, false)
FG_MEMSET(cuMemsetD8Async_ptsz, unsigned char, 1, true, true)
FG_MEMSET(cuMemsetD16_v2, unsigned short, 2, false, false)
FG_MEMSET(cuMemsetD16_v2_ptds, unsigned short, 2, false, true)
FG_MEMSET(cuMemsetD16Async, unsigned short, 2, true, false)
FG_MEMSET(cuMemsetD16Async_ptsz, unsigned short, 2, true, true)
FG_MEMSET(cuMemsetD32_v2, unsigned int, 4, false, false)
FG_MEMSET(cuMemsetD32_v2_ptds, unsigned int, 4, false, true)
FG_MEMSET(cuMemsetD32Async, unsigned int, 4, true, false)
FG_MEMSET(cuMemsetD32Async_ptsz, unsigned int, 4, true, true)
FG_MEMSET2D(cuMemsetD2D8_v2, unsigned char, 1, false, false)
FG_MEMSET2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, false, true)
FG_MEMSET2D(cuMemsetD2D8Async, unsigned char, 1, true, false)
FG_MEMSET2D(cuMemsetD2D8Async_ptsz, unsigned char, 1, true, true)
FG_MEMSET2D(cuMemsetD2D16_v2, unsigned short, 2, false, false)
FG_MEMSET2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, false, true)
FG_MEMSET2D(cuMemsetD2D16Async, unsigned short, 2, true, false)
FG_MEMSET2D(cuMemsetD2D16Async_ptsz, unsigned short, 2, true, true)
FG_MEMSET2D(cuMemsetD2D32_v2, unsigned int, 4, false, false)
FG_MEMSET2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, false, true)
FG_MEMSET2D(cuMemsetD2D32Async, unsigned int, 4, true, false)
FG_MEMSET2D(cuMemsetD2D32Async_ptsz, unsigned int, 4, true, true)
