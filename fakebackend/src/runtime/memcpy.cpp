// SPDX-License-Identifier: Apache-2.0
// Runtime copies and memsets: cudaMemcpy in every direction (1D, 2D, 3D for linear memory,
// peer, to/from registered __device__/__constant__ variables) and cudaMemset (1D/2D/3D),
// synchronous and stream-ordered, legacy and per-thread default stream (_ptds/_ptsz).
//
// Bytes really move: device memory is host memory underneath (core/memory.h). What the
// real runtime rejects is rejected here too: a cudaMemcpyKind that names a device side
// which is not device-accessible memory (cudaErrorInvalidValue), a range that runs past
// its allocation (cudaErrorInvalidValue), an unknown kind (cudaErrorInvalidMemcpyDirection),
// a width larger than a pitch (cudaErrorInvalidPitchValue), an unregistered symbol
// (cudaErrorInvalidSymbol). CUDA arrays are device memory laid out row-major without padding
// (core/arrays.h): the array copies reach them as pitched memory whose pitch is the array's
// row, and an array handle that names no live array is cudaErrorInvalidValue.
#include "core/arrays.h"
#include "runtime/capture.h"

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::symbol_range;
using fg::rt::to_cuda;

namespace {

// Memory CUDA knows: device, managed, pinned, registered, IPC-mapped memory or the storage
// of a registered variable. With unified addressing all of it is device-accessible.
bool known(const void* p) { return p && be().mem_find(p).has_value(); }

// The core's range rule (Backend::range_ok), for a destination or a source.
bool dst_ok(const void* p, size_t n) { return be().range_ok(p, n, true); }
bool src_ok(const void* p, size_t n) { return be().range_ok(p, n, false); }

bool valid_kind(cudaMemcpyKind kind) {
  const int k = static_cast<int>(kind);
  return k >= cudaMemcpyHostToHost && k <= cudaMemcpyDefault;
}

// The device side(s) the kind names must be memory CUDA knows.
cudaError_t check_direction(void* dst, const void* src, cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault: return cudaSuccess;
    case cudaMemcpyHostToDevice: return known(dst) ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToHost: return known(src) ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToDevice: return known(dst) && known(src) ? cudaSuccess : cudaErrorInvalidValue;
  }
  return cudaErrorInvalidMemcpyDirection;
}

// ---- stream ordering -----------------------------------------------------------------------------
// A synchronous call waits for its default stream, then does the work on the calling thread.
// An asynchronous call runs in stream order (at once when the stream is idle). Pageable host
// memory follows the real runtime's staging rules, which also keep it safe for the caller:
// a pageable source is copied before the call returns; a pageable destination is written
// before the call returns.

cudaError_t default_stream(bool per_thread, fg::Stream** out) { return fg::rt::stream(nullptr, per_thread, out); }

// The stream a call works in: the one it names for the asynchronous forms, else the default.
cudaError_t call_stream(cudaStream_t stream, bool async, bool per_thread, fg::Stream** out) {
  return async ? fg::rt::stream(stream, per_thread, out) : default_stream(per_thread, out);
}

// ---- stream capture (core/graph.h) ------------------------------------------------------------
// Synchronous copies and memsets are potentially unsafe during a capture; on a capturing
// stream an asynchronous one becomes a graph node, except with pageable host memory, which
// cannot be captured (cudaErrorStreamCaptureUnsupported, the capture is invalidated).

cudaError_t sync_gate(fg::Stream* s) { return to_cuda(fg::graph::check_sync(s)); }

fg::graph::Params copy_node(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            cudaMemcpyKind kind) {
  fg::graph::Params p;
  p.type = fg::graph::NodeType::Memcpy;
  p.copy.dst = dst, p.copy.src = src;
  p.copy.dpitch = dpitch, p.copy.spitch = spitch;
  p.copy.width = width, p.copy.height = height;
  p.copy.kind = kind;
  return p;
}

fg::graph::Params set_node(void* dst, size_t pitch, int value, size_t width, size_t height) {
  fg::graph::Params p;
  p.type = fg::graph::NodeType::Memset;
  p.set = fg::graph::Set{dst, pitch, static_cast<unsigned char>(value), 1, width, height};
  return p;
}

// True when the capture took the work (*e: the call's result); false: run it.
template <class MakeNode>
bool captured(fg::Stream* s, bool pageable, MakeNode make, cudaError_t* e) {
  if (!fg::graph::active()) return false;
  return fg::rt::captured(
      s, [&] { return pageable ? to_cuda(fg::graph::refuse(s)) : fg::rt::add_node(s, make()); }, e);
}

// Synchronous work on `s`, a default stream: after its queued work, on the calling thread.
cudaError_t run_now(fg::Stream* s, const std::function<fg::Status()>& op) {
  if (cudaError_t e = sync_gate(s); e != cudaSuccess) return e;
  if (fg::Status st = be().stream_sync(s); st != fg::Status::Ok) return to_cuda(st);  // a kernel failed
  return to_cuda(op());
}

cudaError_t run_sync(bool per_thread, const std::function<fg::Status()>& op) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = default_stream(per_thread, &s); e != cudaSuccess) return e;
  return run_now(s, op);
}

// Enqueues a copy whose ranges are already validated.
cudaError_t copy_async(fg::Stream* s, void* dst, const void* src, size_t n, cudaMemcpyKind kind = cudaMemcpyDefault) {
  if (cudaError_t e; captured(
          s, !known(src) || !known(dst), [&] { return copy_node(dst, n, src, n, n, 1, kind); }, &e))
    return e;
  fg::Backend& b = be();
  if (fg::Status st = fg::sticky_fault(s->ctx); st != fg::Status::Ok) return to_cuda(st);
  if (b.stream_idle(s)) return to_cuda(b.copy(dst, src, n));
  if (!known(src)) {
    auto staged = std::make_shared<std::vector<unsigned char>>(static_cast<const unsigned char*>(src),
                                                               static_cast<const unsigned char*>(src) + n);
    return to_cuda(b.stream_enqueue(s, [dst, staged] { be().copy(dst, staged->data(), staged->size()); }));
  }
  cudaError_t e = to_cuda(b.stream_enqueue(s, [dst, src, n] { be().copy(dst, src, n); }));
  if (e == cudaSuccess && !known(dst)) b.stream_sync(s);
  return e;
}

cudaError_t enqueue(fg::Stream* s, std::function<void()> op) { return to_cuda(be().stream_enqueue(s, std::move(op))); }

// ---- 1D copies -----------------------------------------------------------------------------------

cudaError_t memcpy_sync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, bool per_thread) {
  if (!valid_kind(kind)) return cudaErrorInvalidMemcpyDirection;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  if (count == 0) return cudaSuccess;
  if (cudaError_t e = check_direction(dst, src, kind); e != cudaSuccess) return e;
  return run_sync(per_thread, [&] { return be().copy(dst, src, count); });
}

cudaError_t memcpy_async(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream,
                         bool per_thread) {
  if (!valid_kind(kind)) return cudaErrorInvalidMemcpyDirection;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (count == 0) return cudaSuccess;
  if (cudaError_t e = check_direction(dst, src, kind); e != cudaSuccess) return e;
  if (!dst_ok(dst, count) || !src_ok(src, count)) return cudaErrorInvalidValue;
  return copy_async(s, dst, src, count, kind);
}

cudaError_t memcpy_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream, bool async,
                      bool per_thread) {
  return async ? memcpy_async(dst, src, count, kind, stream, per_thread)
               : memcpy_sync(dst, src, count, kind, per_thread);
}

// ---- 2D and 3D copies (linear memory) --------------------------------------------------------------

cudaError_t check_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                     cudaMemcpyKind kind) {
  if (!valid_kind(kind)) return cudaErrorInvalidMemcpyDirection;
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  if (width == 0 || height == 0) return cudaSuccess;
  if (cudaError_t e = check_direction(dst, src, kind); e != cudaSuccess) return e;
  size_t dspan = 0, sspan = 0;
  if (!fg::span_2d(dpitch, width, height, &dspan) || !fg::span_2d(spitch, width, height, &sspan) ||
      !dst_ok(dst, dspan) || !src_ok(src, sspan))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t memcpy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                     cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::Stream* s = nullptr;
  if (async) {
    if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  } else {
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  }
  if (cudaError_t e = check_2d(dst, dpitch, src, spitch, width, height, kind); e != cudaSuccess) return e;
  if (width == 0 || height == 0) return cudaSuccess;
  auto op = [=] { return be().copy_2d(dst, dpitch, src, spitch, width, height); };
  if (!async) return run_sync(per_thread, op);
  if (cudaError_t e; captured(
          s, !known(src) || !known(dst), [&] { return copy_node(dst, dpitch, src, spitch, width, height, kind); }, &e))
    return e;
  if (be().stream_idle(s) || (known(src) && known(dst))) return enqueue(s, [op] { op(); });
  // Pageable memory on a busy stream: finish before returning (see above).
  cudaError_t e = enqueue(s, [op] { op(); });
  if (e == cudaSuccess) be().stream_sync(s);
  return e;
}

// One 3D copy between pitched linear ranges, as depth 2D copies.
struct Copy3D {
  char* dst;
  size_t dpitch, dslice;
  const char* src;
  size_t spitch, sslice;
  size_t width, height, depth;
  fg::Status run() const {
    for (size_t z = 0; z < depth; ++z) {
      fg::Status s = be().copy_2d(dst + z * dslice, dpitch, src + z * sslice, spitch, width, height);
      if (s != fg::Status::Ok) return s;
    }
    return fg::Status::Ok;
  }
};

cudaError_t plan_3d(const cudaPitchedPtr& sp, const cudaPos& spos, const cudaPitchedPtr& dp, const cudaPos& dpos,
                    const cudaExtent& ext, Copy3D* out) {
  if (!sp.ptr || !dp.ptr) return cudaErrorInvalidValue;
  if (ext.width > sp.pitch || ext.width > dp.pitch) return cudaErrorInvalidPitchValue;
  if (spos.x > sp.pitch - ext.width || dpos.x > dp.pitch - ext.width) return cudaErrorInvalidValue;
  // ysize is the slice height in rows; 0 is taken as the extent's height.
  const size_t sy = sp.ysize ? sp.ysize : ext.height, dy = dp.ysize ? dp.ysize : ext.height;
  if (ext.depth > 1 && (sy < ext.height || dy < ext.height)) return cudaErrorInvalidValue;  // slices would overlap
  size_t soff = 0, doff = 0;
  if (!fg::offset_3d(sp.pitch, sy, spos.x, spos.y, spos.z, &out->sslice, &soff) ||
      !fg::offset_3d(dp.pitch, dy, dpos.x, dpos.y, dpos.z, &out->dslice, &doff))
    return cudaErrorInvalidValue;
  // A start past the top of the address space must not wrap into another allocation.
  uintptr_t src = 0, dst = 0;
  if (__builtin_add_overflow(reinterpret_cast<uintptr_t>(sp.ptr), soff, &src) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(dp.ptr), doff, &dst))
    return cudaErrorInvalidValue;
  out->src = reinterpret_cast<const char*>(src);
  out->dst = reinterpret_cast<char*>(dst);
  out->spitch = sp.pitch, out->dpitch = dp.pitch;
  out->width = ext.width, out->height = ext.height, out->depth = ext.depth;
  if (out->width == 0 || out->height == 0 || out->depth == 0) return cudaSuccess;
  size_t last_s = 0, last_d = 0;
  if (!fg::span_3d(out->sslice, out->spitch, out->width, out->height, out->depth, &last_s) ||
      !fg::span_3d(out->dslice, out->dpitch, out->width, out->height, out->depth, &last_d) ||
      !src_ok(out->src, last_s) || !dst_ok(out->dst, last_d))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

// An array argument: the live array it names, else cudaErrorInvalidValue.
cudaError_t array_arg(const void* h, fg::arrays::Array* out) {
  return h && fg::arrays::find(reinterpret_cast<uintptr_t>(h), out) ? cudaSuccess : cudaErrorInvalidValue;
}

// A cudaMemcpy3D side that is an array, as the pitched memory it is: its position's x and the
// extent's width come in elements (the linear side's position stays in bytes), and the box
// must lie inside the array.
cudaError_t array_side(const fg::arrays::Array& a, cudaPos* pos, const cudaExtent& ext, cudaPitchedPtr* out) {
  const size_t elem = a.elem.bytes();
  size_t x = 0;
  if (__builtin_mul_overflow(pos->x, elem, &x) || pos->y > a.rows || pos->z > a.slices ||
      ext.height > a.rows - pos->y || ext.depth > a.slices - pos->z)
    return cudaErrorInvalidValue;
  pos->x = x;
  *out = cudaPitchedPtr{a.base, a.row, a.row, a.rows};
  return cudaSuccess;
}

cudaError_t memcpy3d(const cudaMemcpy3DParms* p, cudaStream_t stream, bool async, bool per_thread) {
  if (!p) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = call_stream(stream, async, per_thread, &s); e != cudaSuccess) return e;
  if (!valid_kind(p->kind)) return cudaErrorInvalidMemcpyDirection;
  cudaPitchedPtr sptr = p->srcPtr, dptr = p->dstPtr;
  cudaPos spos = p->srcPos, dpos = p->dstPos;
  cudaExtent extent = p->extent;
  if (p->srcArray || p->dstArray) {
    // With an array on either side the extent's width counts the array's elements (both
    // arrays' elements must then be the same size).
    fg::arrays::Array sa, da;
    if (p->srcArray && array_arg(p->srcArray, &sa) != cudaSuccess) return cudaErrorInvalidValue;
    if (p->dstArray && array_arg(p->dstArray, &da) != cudaSuccess) return cudaErrorInvalidValue;
    const size_t elem = p->srcArray ? sa.elem.bytes() : da.elem.bytes();
    if (p->srcArray && p->dstArray && sa.elem.bytes() != da.elem.bytes()) return cudaErrorInvalidValue;
    if (__builtin_mul_overflow(extent.width, elem, &extent.width)) return cudaErrorInvalidValue;
    if (p->srcArray) {
      if (cudaError_t e = array_side(sa, &spos, extent, &sptr); e != cudaSuccess) return e;
    }
    if (p->dstArray) {
      if (cudaError_t e = array_side(da, &dpos, extent, &dptr); e != cudaSuccess) return e;
    }
  }
  if (cudaError_t e = check_direction(dptr.ptr, sptr.ptr, p->kind); e != cudaSuccess) return e;
  Copy3D c{};
  if (cudaError_t e = plan_3d(sptr, spos, dptr, dpos, extent, &c); e != cudaSuccess) return e;
  if (c.width == 0 || c.height == 0 || c.depth == 0) return cudaSuccess;
  if (!async) return run_now(s, [&] { return c.run(); });
  if (cudaError_t e; captured(
          s, !known(c.src) || !known(c.dst),
          [&, kind = p->kind] {
            fg::graph::Params node = copy_node(c.dst, c.dpitch, c.src, c.spitch, c.width, c.height, kind);
            node.copy.dheight = c.dslice / c.dpitch, node.copy.sheight = c.sslice / c.spitch;
            node.copy.depth = c.depth;
            return node;
          },
          &e))
    return e;
  cudaError_t e = enqueue(s, [c] { c.run(); });
  if (e == cudaSuccess && !(known(c.src) && known(c.dst))) be().stream_sync(s);
  return e;
}

cudaError_t memcpy3d_peer(const cudaMemcpy3DPeerParms* p, cudaStream_t stream, bool async, bool per_thread) {
  if (!p) return cudaErrorInvalidValue;
  if (!be().device(p->srcDevice) || !be().device(p->dstDevice)) return cudaErrorInvalidDevice;
  cudaMemcpy3DParms q{};
  q.srcArray = p->srcArray, q.srcPos = p->srcPos, q.srcPtr = p->srcPtr;
  q.dstArray = p->dstArray, q.dstPos = p->dstPos, q.dstPtr = p->dstPtr;
  q.extent = p->extent;
  q.kind = cudaMemcpyDeviceToDevice;
  return memcpy3d(&q, stream, async, per_thread);
}

// ---- copies naming arrays ---------------------------------------------------------------------------
// Offsets are bytes into a row (wOffset) and rows (hOffset) of the array's first slice.

// The address of (wOffset, hOffset) in `a`, for a box of width bytes × height rows that must
// lie inside its first slice.
cudaError_t array_box(const fg::arrays::Array& a, size_t wOffset, size_t hOffset, size_t width, size_t height,
                      char** out) {
  if (wOffset > a.row || width > a.row - wOffset || hOffset > a.rows || height > a.rows - hOffset)
    return cudaErrorInvalidValue;
  *out = a.base + hOffset * a.row + wOffset;
  return cudaSuccess;
}

// The address of (wOffset, hOffset) in `a` (a column inside a row), for `count` bytes from
// there in its layout: across rows, within the first slice (as NVIDIA's runtime confines them).
cudaError_t array_run(const fg::arrays::Array& a, size_t wOffset, size_t hOffset, size_t count, char** out) {
  const size_t slice = a.row * a.rows;
  size_t offset = 0;
  if (wOffset > a.row || __builtin_mul_overflow(hOffset, a.row, &offset) ||
      __builtin_add_overflow(offset, wOffset, &offset) || offset > slice || count > slice - offset)
    return cudaErrorInvalidValue;
  *out = a.base + offset;
  return cudaSuccess;
}

cudaError_t to_array_2d(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width,
                        size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::arrays::Array a;
  char* d = nullptr;
  if (cudaError_t e = array_arg(dst, &a); e != cudaSuccess) return e;
  if (cudaError_t e = array_box(a, wOffset, hOffset, width, height, &d); e != cudaSuccess) return e;
  return memcpy2d(d, a.row, src, spitch, width, height, kind, stream, async, per_thread);
}

cudaError_t from_array_2d(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width,
                          size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::arrays::Array a;
  char* s = nullptr;
  if (cudaError_t e = array_arg(src, &a); e != cudaSuccess) return e;
  if (cudaError_t e = array_box(a, wOffset, hOffset, width, height, &s); e != cudaSuccess) return e;
  return memcpy2d(dst, dpitch, s, a.row, width, height, kind, stream, async, per_thread);
}

cudaError_t array_to_array_2d(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                              size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream, bool async, bool per_thread) {
  fg::arrays::Array da, sa;
  char *d = nullptr, *s = nullptr;
  if (cudaError_t e = array_arg(dst, &da); e != cudaSuccess) return e;
  if (cudaError_t e = array_arg(src, &sa); e != cudaSuccess) return e;
  if (cudaError_t e = array_box(da, wOffsetDst, hOffsetDst, width, height, &d); e != cudaSuccess) return e;
  if (cudaError_t e = array_box(sa, wOffsetSrc, hOffsetSrc, width, height, &s); e != cudaSuccess) return e;
  return memcpy2d(d, da.row, s, sa.row, width, height, kind, stream, async, per_thread);
}

cudaError_t to_array(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                     cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::arrays::Array a;
  char* d = nullptr;
  if (cudaError_t e = array_arg(dst, &a); e != cudaSuccess) return e;
  if (cudaError_t e = array_run(a, wOffset, hOffset, count, &d); e != cudaSuccess) return e;
  return memcpy_1d(d, src, count, kind, stream, async, per_thread);
}

cudaError_t from_array(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                       cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::arrays::Array a;
  char* s = nullptr;
  if (cudaError_t e = array_arg(src, &a); e != cudaSuccess) return e;
  if (cudaError_t e = array_run(a, wOffset, hOffset, count, &s); e != cudaSuccess) return e;
  return memcpy_1d(dst, s, count, kind, stream, async, per_thread);
}

cudaError_t array_to_array(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                           size_t wOffsetSrc, size_t hOffsetSrc, size_t count, cudaMemcpyKind kind, cudaStream_t stream,
                           bool async, bool per_thread) {
  fg::arrays::Array da, sa;
  char *d = nullptr, *s = nullptr;
  if (cudaError_t e = array_arg(dst, &da); e != cudaSuccess) return e;
  if (cudaError_t e = array_arg(src, &sa); e != cudaSuccess) return e;
  if (cudaError_t e = array_run(da, wOffsetDst, hOffsetDst, count, &d); e != cudaSuccess) return e;
  if (cudaError_t e = array_run(sa, wOffsetSrc, hOffsetSrc, count, &s); e != cudaSuccess) return e;
  return memcpy_1d(d, s, count, kind, stream, async, per_thread);
}

// ---- peer copies ------------------------------------------------------------------------------------
// Unified addressing makes these plain device-to-device copies; the devices are checked.

cudaError_t memcpy_peer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count, cudaStream_t stream,
                        bool async) {
  fg::Backend& b = be();
  if (b.device_count() == 0) return cudaErrorNoDevice;
  if (!b.device(dstDevice) || !b.device(srcDevice)) return cudaErrorInvalidDevice;
  if (async) return memcpy_async(dst, src, count, cudaMemcpyDeviceToDevice, stream, false);
  return memcpy_sync(dst, src, count, cudaMemcpyDeviceToDevice, false);
}

// ---- symbols ------------------------------------------------------------------------------------------
// The fake device storage of a registered variable is what gets copied (rt::symbol_range).

// A copy between the variable and `other`: into the variable (`to`) from other, else out of
// it into other. The kind names other's side (host or device) or is cudaMemcpyDefault.
cudaError_t symbol_copy(bool to, const void* symbol, const void* other, size_t count, size_t offset,
                        cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = call_stream(stream, async, per_thread, &s); e != cudaSuccess) return e;
  char* var = nullptr;
  if (cudaError_t e = symbol_range(symbol, count, offset, &var); e != cudaSuccess) return e;
  const cudaMemcpyKind from_host = to ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != from_host && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  if (count == 0) return cudaSuccess;
  if (kind == cudaMemcpyDeviceToDevice && !known(other)) return cudaErrorInvalidValue;
  if (!be().range_ok(other, count, !to)) return cudaErrorInvalidValue;
  // `other` is the caller's non-const destination when copying out of the variable.
  void* dst = to ? var : const_cast<void*>(other);
  const void* src = to ? other : var;
  if (!async) return run_now(s, [&] { return be().copy(dst, src, count); });
  return copy_async(s, dst, src, count);
}

cudaError_t to_symbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                      cudaStream_t stream, bool async, bool per_thread) {
  return symbol_copy(true, symbol, src, count, offset, kind, stream, async, per_thread);
}

cudaError_t from_symbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                        cudaStream_t stream, bool async, bool per_thread) {
  return symbol_copy(false, symbol, dst, count, offset, kind, stream, async, per_thread);
}

// ---- memsets -------------------------------------------------------------------------------------------
// The destination must be memory CUDA knows (device, managed, pinned or registered).

cudaError_t memset_1d(void* devPtr, int value, size_t count, cudaStream_t stream, bool async, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = call_stream(stream, async, per_thread, &s); e != cudaSuccess) return e;
  if (count == 0) return cudaSuccess;
  if (!known(devPtr) || !dst_ok(devPtr, count)) return cudaErrorInvalidValue;
  if (!async) return run_now(s, [&] { return be().set(devPtr, value, count); });
  if (cudaError_t e; captured(
          s, false, [&] { return set_node(devPtr, count, value, count, 1); }, &e))
    return e;
  return enqueue(s, [devPtr, value, count] { be().set(devPtr, value, count); });
}

cudaError_t memset_2d(void* devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream,
                      bool async, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = call_stream(stream, async, per_thread, &s); e != cudaSuccess) return e;
  if (width > pitch) return cudaErrorInvalidValue;
  if (width == 0 || height == 0) return cudaSuccess;
  size_t span = 0;
  if (!known(devPtr) || !fg::span_2d(pitch, width, height, &span) || !dst_ok(devPtr, span))
    return cudaErrorInvalidValue;
  const unsigned char byte = static_cast<unsigned char>(value);
  auto op = [=] { return be().set_2d(devPtr, pitch, &byte, 1, width, height); };
  if (!async) return run_now(s, op);
  if (cudaError_t e; captured(
          s, false, [&] { return set_node(devPtr, pitch, value, width, height); }, &e))
    return e;
  return enqueue(s, [op] { op(); });
}

cudaError_t memset_3d(cudaPitchedPtr p, int value, cudaExtent extent, cudaStream_t stream, bool async,
                      bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = call_stream(stream, async, per_thread, &s); e != cudaSuccess) return e;
  if (extent.width > p.pitch) return cudaErrorInvalidValue;
  if (extent.width == 0 || extent.height == 0 || extent.depth == 0) return cudaSuccess;
  const size_t rows = p.ysize ? p.ysize : extent.height;
  if (extent.depth > 1 && rows < extent.height) return cudaErrorInvalidValue;  // slices would overlap
  size_t slice = 0, first = 0, span = 0;
  if (!known(p.ptr) || !fg::offset_3d(p.pitch, rows, 0, 0, 0, &slice, &first) ||
      !fg::span_3d(slice, p.pitch, extent.width, extent.height, extent.depth, &span) || !dst_ok(p.ptr, span))
    return cudaErrorInvalidValue;
  const unsigned char byte = static_cast<unsigned char>(value);
  auto op = [=] {
    for (size_t z = 0; z < extent.depth; ++z) {
      fg::Status st = be().set_2d(static_cast<char*>(p.ptr) + z * slice, p.pitch, &byte, 1, extent.width,
                                  extent.height);
      if (st != fg::Status::Ok) return st;
    }
    return fg::Status::Ok;
  };
  if (!async) return run_now(s, op);
  return enqueue(s, [op] { op(); });
}

}  // namespace

// ---- exported entry points ---------------------------------------------------------------------------------
// A copy or a memset comes in four forms: synchronous, its _ptds twin, asynchronous (a stream
// argument last) and its _ptsz twin; the twins differ only in what the null stream means.
// impl(args..., stream, async, per_thread) serves all four.
#define FG_WITH_STREAM(...) (__VA_ARGS__, cudaStream_t stream)
#define FG_ARGS(...) __VA_ARGS__
#define FG_FOUR_FORMS(name, params, impl, args)                                    \
  extern "C" FG_IMPL cudaError_t fgimpl_##name params {                            \
    return api([&] { return impl(FG_ARGS args, nullptr, false, false); });         \
  }                                                                                \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##_ptds params {                     \
    return api([&] { return impl(FG_ARGS args, nullptr, false, true); });          \
  }                                                                                \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##Async FG_WITH_STREAM params {      \
    return api([&] { return impl(FG_ARGS args, stream, true, false); });           \
  }                                                                                \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##Async_ptsz FG_WITH_STREAM params { \
    return api([&] { return impl(FG_ARGS args, stream, true, true); });            \
  }

FG_FOUR_FORMS(cudaMemcpy, (void* dst, const void* src, size_t count, cudaMemcpyKind kind), memcpy_1d,
              (dst, src, count, kind))
FG_FOUR_FORMS(cudaMemcpy2D,
              (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
               cudaMemcpyKind kind),
              memcpy2d, (dst, dpitch, src, spitch, width, height, kind))
FG_FOUR_FORMS(cudaMemcpy3D, (const cudaMemcpy3DParms* p), memcpy3d, (p))
FG_FOUR_FORMS(cudaMemcpy3DPeer, (const cudaMemcpy3DPeerParms* p), memcpy3d_peer, (p))
FG_FOUR_FORMS(cudaMemcpy2DToArray,
              (cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width,
               size_t height, cudaMemcpyKind kind),
              to_array_2d, (dst, wOffset, hOffset, src, spitch, width, height, kind))
FG_FOUR_FORMS(cudaMemcpy2DFromArray,
              (void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width,
               size_t height, cudaMemcpyKind kind),
              from_array_2d, (dst, dpitch, src, wOffset, hOffset, width, height, kind))
FG_FOUR_FORMS(cudaMemcpyToArray,
              (cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, cudaMemcpyKind kind),
              to_array, (dst, wOffset, hOffset, src, count, kind))
FG_FOUR_FORMS(cudaMemcpyFromArray,
              (void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count, cudaMemcpyKind kind),
              from_array, (dst, src, wOffset, hOffset, count, kind))
FG_FOUR_FORMS(cudaMemcpyToSymbol,
              (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind), to_symbol,
              (symbol, src, count, offset, kind))
FG_FOUR_FORMS(cudaMemcpyFromSymbol, (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind),
              from_symbol, (dst, symbol, count, offset, kind))
FG_FOUR_FORMS(cudaMemset, (void* devPtr, int value, size_t count), memset_1d, (devPtr, value, count))
FG_FOUR_FORMS(cudaMemset2D, (void* devPtr, size_t pitch, int value, size_t width, size_t height), memset_2d,
              (devPtr, pitch, value, width, height))
FG_FOUR_FORMS(cudaMemset3D, (cudaPitchedPtr pitchedDevPtr, int value, cudaExtent extent), memset_3d,
              (pitchedDevPtr, value, extent))

// The array-to-array copies come synchronous only (and their _ptds twins).
#define FG_TWO_FORMS(name, params, impl, args)                             \
  extern "C" FG_IMPL cudaError_t fgimpl_##name params {                    \
    return api([&] { return impl(FG_ARGS args, nullptr, false, false); }); \
  }                                                                        \
  extern "C" FG_IMPL cudaError_t fgimpl_##name##_ptds params {             \
    return api([&] { return impl(FG_ARGS args, nullptr, false, true); });  \
  }
FG_TWO_FORMS(cudaMemcpy2DArrayToArray,
             (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc,
              size_t hOffsetSrc, size_t width, size_t height, cudaMemcpyKind kind),
             array_to_array_2d, (dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind))
FG_TWO_FORMS(cudaMemcpyArrayToArray,
             (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc,
              size_t hOffsetSrc, size_t count, cudaMemcpyKind kind),
             array_to_array, (dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind))

#undef FG_TWO_FORMS
#undef FG_FOUR_FORMS
#undef FG_ARGS
#undef FG_WITH_STREAM

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                                                     size_t count) {
  return api([&] { return memcpy_peer(dst, dstDevice, src, srcDevice, count, nullptr, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                                          size_t count, cudaStream_t stream) {
  return api([&] { return memcpy_peer(dst, dstDevice, src, srcDevice, count, stream, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  return fg::rt::api_ctx(devPtr, [&](fg::Context*) -> cudaError_t {
    char* where = nullptr;
    if (cudaError_t e = symbol_range(symbol, 0, 0, &where); e != cudaSuccess) return e;
    *devPtr = where;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetSymbolSize(size_t* size, const void* symbol) {
  return fg::rt::api_ctx(size, [&](fg::Context*) -> cudaError_t {
    fg::Symbol* sym = symbol ? be().symbol_by_host(symbol) : nullptr;
    if (!sym || !sym->dev_ptr) return cudaErrorInvalidSymbol;
    *size = sym->size;
    return cudaSuccess;
  });
}
