// SPDX-License-Identifier: Apache-2.0
// Texture fetches and surface accesses of running kernels: fg_rt_tex (tex, tld4), fg_rt_surf
// (suld.b, sust.b) and fg_rt_texq (txq, suq), one call per instruction (kernels/abi.h). The
// objects are the core's (core/textures.h); what the CUDA Programming Guide's appendix
// "Texture Fetching" says is done here in C++:
//
//   coordinates  normalized ones are scaled by the size first; integer ones (tex1Dfetch) name
//                a texel; a layer index is clamped to the layers
//   addressing   per axis on texel indices (the GL/Vulkan formulation): clamp to [0, N-1];
//                wrap: i mod N; mirror: i mod 2N, reflected; border: outside [0, N) reads the
//                border color. Wrap and mirror need normalized coordinates and act as clamp
//                otherwise (as the driver documents). Linear memory (tex1Dfetch) reads zeros
//                outside its elements.
//   filtering    point: texel floor(x). linear: xB = x - 0.5, i = floor(xB), and the weight
//                α = frac(xB) in fixed point with 8 fraction bits (rounded to the nearest
//                1/256; how a GPU rounds it is not documented), then the guide's sum
//                (1-α)(1-β)T[i,j] + α(1-β)T[i+1,j] + (1-α)βT[i,j+1] + αβT[i+1,j+1] in float,
//                in that order (3-D: the same with γ, the k slice first).
//   values       8- and 16-bit integers become floats in [0, 1] or [-1, 1] (x/255, x/65535,
//                max(x/127, -1), max(x/32767, -1)) unless read as integers; 32-bit integers
//                are always integers; half becomes float. The channels an element lacks
//                read 0, its fourth 1.
//
// Surfaces address x in bytes; an access out of range traps (an IllegalAddress fault, the
// launch's error as for any access outside memory), clamps to the nearest in-range
// position, or reads zeros and drops the store, as the instruction says.
//
// An object that is not live (never made, destroyed, its array destroyed, its memory freed
// before the launch) faults with IllegalAddress at the handle: on a GPU the result is
// undefined, and a fault is the safe answer.
#include "core/textures.h"
#include "kernels/abi.h"
#include "kernels/executor.h"
#include "kernels/half_bits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace {

using fg::arrays::Channel;
using fg::kernels::BlockEnv;
using fg::kernels::Fault;
using fg::kernels::half_to_float;
using fg::kernels::SurfMode;
using fg::kernels::TexGeom;
using fg::kernels::TexQuery;
namespace tx = fg::textures;

// The last object this thread used, while no object or array has gone since.
struct Cache {
  uint64_t handle = 0;
  uint64_t objects = 0, arrays = 0;  // the generations it was found at
  std::shared_ptr<const tx::Object> obj;
};
thread_local Cache t_cache;

// The live object `handle` names, of the kind asked, with its texels in the launch's live
// memory; else a fault is recorded and null returned.
const tx::Object* object_of(BlockEnv* env, uint64_t handle, bool surface) {
  const uint64_t objects = tx::generation(), arrays = fg::arrays::generation();
  Cache& c = t_cache;
  if (c.handle != handle || c.objects != objects || c.arrays != arrays || !c.obj) {
    std::shared_ptr<const tx::Object> o = tx::lookup(handle);
    if (o && o->res.type == tx::kArray) {
      fg::arrays::Array a;
      if (!fg::arrays::find(o->res.array, &a) || a.base != o->texels.base) o.reset();
    }
    c.handle = handle, c.objects = objects, c.arrays = arrays, c.obj = std::move(o);
  }
  const tx::Object* o = c.obj.get();
  if (!o || o->surface != surface ||
      !fg::kernels::launch_holds(env, reinterpret_cast<uint64_t>(o->texels.base), o->texels.span)) {
    fg_rt_fault(env, static_cast<uint32_t>(Fault::IllegalAddress), handle);
    return nullptr;
  }
  return o;
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// How the texels of an object read: as floats (normalized or not), or as integers.
bool reads_integers(const tx::Object& o) {
  const auto& e = o.texels.elem;
  if (e.kind != Channel::Unsigned && e.kind != Channel::Signed) return false;
  return e.channel_bytes == 4 || (o.tex.flags & tx::kReadAsInteger);
}

// A texel's four channels: floats (`ints` false) or integers, as 32-bit words.
struct Texel {
  uint32_t w[4];
};

Texel read_texel(const tx::Object& o, const char* p, bool ints) {
  const auto& e = o.texels.elem;
  Texel t;
  for (uint32_t c = 0; c < 4; ++c) {
    if (c >= e.channels) {
      t.w[c] = c == 3 ? (ints ? 1u : bits_of(1.0f)) : 0u;
      continue;
    }
    const char* q = p + c * e.channel_bytes;
    uint32_t raw = 0;
    std::memcpy(&raw, q, e.channel_bytes);
    const bool sign = e.kind == Channel::Signed || e.kind == Channel::SNorm;
    int32_t v = 0;  // the channel's integer value
    if (e.channel_bytes == 1) v = sign ? static_cast<int8_t>(raw) : static_cast<int32_t>(raw & 0xff);
    if (e.channel_bytes == 2) v = sign ? static_cast<int16_t>(raw) : static_cast<int32_t>(raw & 0xffff);
    if (e.kind == Channel::Float) {
      t.w[c] = e.channel_bytes == 4 ? raw : bits_of(half_to_float(static_cast<uint16_t>(raw)));
    } else if (ints) {
      t.w[c] = e.channel_bytes == 4 ? raw : static_cast<uint32_t>(v);
    } else if (e.channel_bytes == 4) {  // 32-bit integers read as floats (a texture that says so)
      t.w[c] = bits_of(sign ? static_cast<float>(static_cast<int32_t>(raw)) : static_cast<float>(raw));
    } else {
      const float max = e.channel_bytes == 1 ? (sign ? 127.0f : 255.0f) : (sign ? 32767.0f : 65535.0f);
      t.w[c] = bits_of(std::max(static_cast<float>(v) / max, -1.0f));
    }
  }
  return t;
}

// The border color as a texel of the object's kind of values.
Texel border(const tx::Object& o, bool ints) {
  Texel t;
  for (int c = 0; c < 4; ++c) {
    const float f = o.tex.border[c];
    if (!ints) {
      t.w[c] = bits_of(f);
    } else {  // the value converted, saturated; NaN reads 0
      const float lo = -2147483648.0f, hi = 2147483520.0f;
      t.w[c] = std::isnan(f) ? 0u : static_cast<uint32_t>(static_cast<int32_t>(std::clamp(f, lo, hi)));
    }
  }
  return t;
}

// A float coordinate as a finite value a texel index can be taken from (NaN: 0).
float finite(float x) { return std::isnan(x) ? 0.0f : std::clamp(x, -1.0e9f, 1.0e9f); }

int64_t floor_index(float x) { return static_cast<int64_t>(std::floor(finite(x))); }

// Texel index i on an axis of n texels under `mode`: the index, or -1 for a border texel.
int64_t address(int64_t i, int64_t n, int mode, bool normalized) {
  if (!normalized && (mode == tx::kWrap || mode == tx::kMirror)) mode = tx::kClamp;
  switch (mode) {
    case tx::kWrap: return ((i % n) + n) % n;
    case tx::kMirror: {
      const int64_t t = ((i % (2 * n)) + 2 * n) % (2 * n);
      return t < n ? t : 2 * n - 1 - t;
    }
    case tx::kBorder: return i < 0 || i >= n ? -1 : i;
    default: return std::clamp<int64_t>(i, 0, n - 1);
  }
}

// The weight α of a coordinate's fraction: 8 fraction bits, rounded to the nearest.
float weight(float frac) { return std::floor(frac * 256.0f + 0.5f) / 256.0f; }

struct Fetch {
  const tx::Object& o;
  bool ints;
  int64_t layer;  // -1: not layered
  Texel at(const int64_t* idx, int dims) const {
    const auto& t = o.texels;
    for (int a = 0; a < dims; ++a)
      if (idx[a] < 0) return border(o, ints);
    const size_t x = static_cast<size_t>(idx[0]), y = dims > 1 ? static_cast<size_t>(idx[1]) : 0;
    const size_t z = layer >= 0 ? static_cast<size_t>(layer) : dims > 2 ? static_cast<size_t>(idx[2]) : 0;
    return read_texel(o, t.base + z * t.slice + y * t.pitch + x * t.elem.bytes(), ints);
  }
};

}  // namespace

extern "C" int32_t fg_rt_tex(BlockEnv* env, uint64_t handle, uint32_t op, const uint32_t* coords, uint32_t* out) {
  const tx::Object* obj = object_of(env, handle, false);
  if (!obj) return 0;
  const tx::Object& o = *obj;
  const auto& t = o.texels;
  const TexGeom geom = static_cast<TexGeom>(op & 0xf);
  const bool int_coords = op & fg::kernels::kTexIntCoords;
  const uint32_t gather = op >> fg::kernels::kTexGatherShift & 0x7;  // component + 1, or 0
  const bool layered = geom == TexGeom::A1 || geom == TexGeom::A2;
  const int dims = geom == TexGeom::D1 || geom == TexGeom::A1 ? 1 : geom == TexGeom::D3 ? 3 : 2;
  const uint32_t* c = coords + (layered ? 1 : 0);
  const int64_t sizes[3] = {static_cast<int64_t>(t.width), static_cast<int64_t>(t.height),
                            static_cast<int64_t>(t.depth)};
  const bool ints = reads_integers(o);
  const bool normalized = (o.tex.flags & tx::kNormalizedCoordinates) && !int_coords;
  Fetch f{o, ints, -1};
  if (layered) {
    const int64_t last = static_cast<int64_t>(t.depth) - 1;
    f.layer = std::clamp<int64_t>(static_cast<int32_t>(coords[0]), 0, last);
  }
  Texel r{};
  if (o.res.type == tx::kLinear) {
    // tex1Dfetch: an element index; outside the elements reads zeros.
    const int64_t i = int_coords ? static_cast<int32_t>(c[0]) : floor_index(as_float(c[0]));
    if (i >= 0 && i < sizes[0]) {
      const int64_t idx[1] = {i};
      r = f.at(idx, 1);
    }
    std::memcpy(out, r.w, sizeof r.w);
    return 1;
  }
  float x[3] = {0, 0, 0};
  int64_t i0[3] = {0, 0, 0};
  float alpha[3] = {0, 0, 0};
  // The 2×2 (2×2×2) footprint of linear filtering, which a gather takes too (of any values).
  const bool linear = !int_coords && (gather || (!ints && o.tex.filter == tx::kLinearFilter));
  for (int a = 0; a < dims; ++a) {
    if (int_coords) {
      i0[a] = static_cast<int32_t>(c[a]);
      continue;
    }
    x[a] = normalized ? as_float(c[a]) * static_cast<float>(sizes[a]) : as_float(c[a]);
    if (linear) {
      const float xb = finite(x[a]) - 0.5f;
      const float fl = std::floor(xb);
      i0[a] = static_cast<int64_t>(fl);
      alpha[a] = weight(xb - fl);
    } else {
      i0[a] = floor_index(x[a]);
    }
  }
  if (!linear) {
    int64_t idx[3];
    for (int a = 0; a < dims; ++a) idx[a] = address(i0[a], sizes[a], o.tex.address[a], normalized);
    r = f.at(idx, dims);
  } else if (gather) {
    // tld4: one component of the 2×2 footprint, (i, j+1), (i+1, j+1), (i+1, j), (i, j).
    static constexpr int kCorner[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
    for (int k = 0; k < 4; ++k) {
      int64_t idx[2];
      for (int a = 0; a < 2; ++a) idx[a] = address(i0[a] + kCorner[k][a], sizes[a], o.tex.address[a], normalized);
      r.w[k] = f.at(idx, 2).w[gather - 1];
    }
  } else {
    float sum[4] = {0, 0, 0, 0};
    for (int corner = 0; corner < (1 << dims); ++corner) {
      int64_t idx[3];
      float w = 1.0f;
      for (int a = 0; a < dims; ++a) {
        const bool up = corner >> a & 1;
        idx[a] = address(i0[a] + (up ? 1 : 0), sizes[a], o.tex.address[a], normalized);
        w = w * (up ? alpha[a] : 1.0f - alpha[a]);
      }
      const Texel v = f.at(idx, dims);
      for (int k = 0; k < 4; ++k) sum[k] = sum[k] + w * as_float(v.w[k]);
    }
    for (int k = 0; k < 4; ++k) r.w[k] = bits_of(sum[k]);
  }
  std::memcpy(out, r.w, sizeof r.w);
  return 1;
}

extern "C" int32_t fg_rt_surf(BlockEnv* env, uint64_t handle, uint32_t op, const int32_t* coords, void* data) {
  const tx::Object* obj = object_of(env, handle, true);
  if (!obj) return 0;
  const auto& t = obj->texels;
  const TexGeom geom = static_cast<TexGeom>(op & 0xf);
  const SurfMode mode = static_cast<SurfMode>(op >> fg::kernels::kSurfModeShift & 0x3);
  const bool store = op & fg::kernels::kSurfStore;
  const int64_t bytes = op >> fg::kernels::kSurfBytesShift & 0xff;
  const bool layered = geom == TexGeom::A1 || geom == TexGeom::A2;
  const int32_t* c = coords + (layered ? 1 : 0);
  // x in bytes, y, z (or the layer).
  int64_t pos[3] = {c[0], 0, 0};
  if (geom == TexGeom::D2 || geom == TexGeom::D3 || geom == TexGeom::A2) pos[1] = c[1];
  if (geom == TexGeom::D3) pos[2] = c[2];
  if (layered) pos[2] = coords[0];
  const int64_t row = static_cast<int64_t>(t.width * t.elem.bytes());
  const int64_t last[3] = {row - bytes, static_cast<int64_t>(t.height) - 1, static_cast<int64_t>(t.depth) - 1};
  bool inside = last[0] >= 0;  // (an access wider than a row is never inside)
  for (int a = 0; a < 3; ++a) inside = inside && pos[a] >= 0 && pos[a] <= last[a];
  if (!inside) {
    if (mode == SurfMode::Trap) {
      fg_rt_fault(env, static_cast<uint32_t>(Fault::IllegalAddress), handle);
      return 0;
    }
    if (mode == SurfMode::Zero || last[0] < 0) {  // loads read zeros, stores are dropped
      if (!store) std::memset(data, 0, static_cast<size_t>(bytes));
      return 1;
    }
    for (int a = 0; a < 3; ++a) pos[a] = std::clamp<int64_t>(pos[a], 0, last[a]);  // .clamp
  }
  char* p = t.base + static_cast<size_t>(pos[2]) * t.slice + static_cast<size_t>(pos[1]) * t.pitch +
            static_cast<size_t>(pos[0]);
  if (store) {
    std::memcpy(p, data, static_cast<size_t>(bytes));
  } else {
    std::memcpy(data, p, static_cast<size_t>(bytes));
  }
  return 1;
}

extern "C" int32_t fg_rt_texq(BlockEnv* env, uint64_t handle, uint32_t what, uint32_t surface, uint32_t* out) {
  const tx::Object* obj = object_of(env, handle, surface != 0);
  if (!obj) return 0;
  const tx::Object& o = *obj;
  const auto& t = o.texels;
  uint32_t v = 0;
  switch (static_cast<TexQuery>(what)) {
    case TexQuery::Width: v = static_cast<uint32_t>(t.width); break;
    case TexQuery::Height: v = t.dims >= 2 ? static_cast<uint32_t>(t.height) : 0; break;
    case TexQuery::Depth: v = t.dims == 3 ? static_cast<uint32_t>(t.depth) : 0; break;
    case TexQuery::NormalizedCoords: v = (o.tex.flags & tx::kNormalizedCoordinates) != 0; break;
    case TexQuery::FilterMode: v = static_cast<uint32_t>(o.tex.filter); break;
    case TexQuery::AddrMode0: v = static_cast<uint32_t>(o.tex.address[0]); break;
    case TexQuery::AddrMode1: v = static_cast<uint32_t>(o.tex.address[1]); break;
    case TexQuery::AddrMode2: v = static_cast<uint32_t>(o.tex.address[2]); break;
    case TexQuery::ArraySize: v = t.layered ? static_cast<uint32_t>(t.depth) : 0; break;
    case TexQuery::NumMipmapLevels: v = 1; break;
    case TexQuery::NumSamples: v = 0; break;
  }
  *out = v;
  return 1;
}
