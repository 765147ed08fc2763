// SPDX-License-Identifier: Apache-2.0
#include "core/arrays.h"

#include "core/backend.h"

#include <mutex>
#include <new>
#include <unordered_map>

namespace fg::arrays {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<uintptr_t, Array> by_handle;
  std::atomic<uint64_t> generation{1};
};
Registry& registry() {
  static auto* r = new Registry;  // never destroyed: arrays may be freed from exit handlers
  return *r;
}

size_t attribute(const Device* dev, int a) noexcept {
  const int v = dev->model.attributes[a];
  return v > 0 ? static_cast<size_t>(v) : 0;
}

// 1 <= v <= max.
bool within(size_t v, size_t max) noexcept { return v >= 1 && v <= max; }

}  // namespace

Status element_of(uint32_t format, uint32_t channels, Element* out) noexcept {
  Element e;
  e.format = format;
  switch (format) {
    case kUnsignedInt8: e.channel_bytes = 1, e.kind = Channel::Unsigned; break;
    case kUnsignedInt16: e.channel_bytes = 2, e.kind = Channel::Unsigned; break;
    case kUnsignedInt32: e.channel_bytes = 4, e.kind = Channel::Unsigned; break;
    case kSignedInt8: e.channel_bytes = 1, e.kind = Channel::Signed; break;
    case kSignedInt16: e.channel_bytes = 2, e.kind = Channel::Signed; break;
    case kSignedInt32: e.channel_bytes = 4, e.kind = Channel::Signed; break;
    case kHalf: e.channel_bytes = 2, e.kind = Channel::Float; break;
    case kFloat: e.channel_bytes = 4, e.kind = Channel::Float; break;
    default:
      if (format >= kNormFirst && format <= kNormLast) {
        // UNORM 8 (x1, x2, x4), UNORM 16, SNORM 8, SNORM 16: the channel count is the format's.
        const uint32_t i = format - kNormFirst;
        static constexpr uint32_t kChannels[3] = {1, 2, 4};
        if (channels != kChannels[i % 3]) return Status::InvalidValue;
        e.channel_bytes = (i / 3) % 2 == 0 ? 1 : 2;
        e.kind = i < 6 ? Channel::UNorm : Channel::SNorm;
        break;
      }
      // NV12 and the other video formats, the block-compressed ones and 10-10-10-2.
      if (format == 0x50 || (format >= 0x91 && format <= 0x9f) || (format >= 0xa1 && format <= 0xb5))
        return Status::NotSupported;
      return Status::InvalidValue;
  }
  if (channels != 1 && channels != 2 && channels != 4) return Status::InvalidValue;
  e.channels = channels;
  *out = e;
  return Status::Ok;
}

Status check_desc(const Device* dev, const Desc& d, Element* elem) noexcept {
  if (Status s = element_of(d.format, d.channels, elem); s != Status::Ok) return s;
  if (d.flags & ~0x1ffu) return Status::InvalidValue;
  if (d.flags & (kSparse | kDeferredMapping | kVideoEncodeDecode)) return Status::NotSupported;
  if (d.width == 0) return Status::InvalidValue;
  const bool layered = d.flags & kLayered, cube = d.flags & kCubemap, surface = d.flags & kSurfaceLoadStore;
  const bool gather = d.flags & kTextureGather;
  auto a = [dev](int i) { return attribute(dev, i); };
  // Each shape's texture limits, and its surface limits too when surface access is asked for.
  auto fits = [&](int tw, int th, int td, int sw, int sh, int sd) {
    auto one = [&](int w, int h, int dd) {
      return within(d.width, a(w)) && (h == 0 || within(d.height, a(h))) && (dd == 0 || within(d.depth, a(dd)));
    };
    return one(tw, th, td) && (!surface || one(sw, sh, sd));
  };
  bool ok = false;
  if (cube) {
    if (gather || d.height != d.width || d.depth == 0 || (layered ? d.depth % 6 != 0 : d.depth != 6))
      return Status::InvalidValue;
    ok = layered ? fits(attr::MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, 0, attr::MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS,
                        attr::MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, 0, attr::MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS)
                 : fits(attr::MAXIMUM_TEXTURECUBEMAP_WIDTH, 0, 0, attr::MAXIMUM_SURFACECUBEMAP_WIDTH, 0, 0);
  } else if (layered) {
    if (gather || d.depth == 0) return Status::InvalidValue;
    ok = d.height == 0 ? fits(attr::MAXIMUM_TEXTURE1D_LAYERED_WIDTH, 0, attr::MAXIMUM_TEXTURE1D_LAYERED_LAYERS,
                              attr::MAXIMUM_SURFACE1D_LAYERED_WIDTH, 0, attr::MAXIMUM_SURFACE1D_LAYERED_LAYERS)
                       : fits(attr::MAXIMUM_TEXTURE2D_LAYERED_WIDTH, attr::MAXIMUM_TEXTURE2D_LAYERED_HEIGHT,
                              attr::MAXIMUM_TEXTURE2D_LAYERED_LAYERS, attr::MAXIMUM_SURFACE2D_LAYERED_WIDTH,
                              attr::MAXIMUM_SURFACE2D_LAYERED_HEIGHT, attr::MAXIMUM_SURFACE2D_LAYERED_LAYERS);
  } else if (d.height == 0) {
    if (gather || d.depth != 0) return Status::InvalidValue;
    ok = fits(attr::MAXIMUM_TEXTURE1D_WIDTH, 0, 0, attr::MAXIMUM_SURFACE1D_WIDTH, 0, 0);
  } else if (d.depth == 0) {
    ok = gather ? fits(attr::MAXIMUM_TEXTURE2D_GATHER_WIDTH, attr::MAXIMUM_TEXTURE2D_GATHER_HEIGHT, 0,
                       attr::MAXIMUM_SURFACE2D_WIDTH, attr::MAXIMUM_SURFACE2D_HEIGHT, 0)
                : fits(attr::MAXIMUM_TEXTURE2D_WIDTH, attr::MAXIMUM_TEXTURE2D_HEIGHT, 0, attr::MAXIMUM_SURFACE2D_WIDTH,
                       attr::MAXIMUM_SURFACE2D_HEIGHT, 0);
  } else {
    if (gather) return Status::InvalidValue;
    ok = fits(attr::MAXIMUM_TEXTURE3D_WIDTH, attr::MAXIMUM_TEXTURE3D_HEIGHT, attr::MAXIMUM_TEXTURE3D_DEPTH,
              attr::MAXIMUM_SURFACE3D_WIDTH, attr::MAXIMUM_SURFACE3D_HEIGHT, attr::MAXIMUM_SURFACE3D_DEPTH) ||
         fits(attr::MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, attr::MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE,
              attr::MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, attr::MAXIMUM_SURFACE3D_WIDTH, attr::MAXIMUM_SURFACE3D_HEIGHT,
              attr::MAXIMUM_SURFACE3D_DEPTH);
  }
  return ok ? Status::Ok : Status::InvalidValue;
}

Status create(Context* ctx, const Desc& d, ApiOrigin api, uintptr_t* handle) {
  if (!ctx || !ctx->dev) return Status::InvalidContext;
  if (!handle) return Status::InvalidValue;
  Array a;
  a.desc = d;
  if (Status s = check_desc(ctx->dev, d, &a.elem); s != Status::Ok) return s;
  a.rows = d.height ? d.height : 1;
  a.slices = d.depth ? d.depth : 1;
  size_t slice = 0;
  if (__builtin_mul_overflow(d.width, size_t{a.elem.bytes()}, &a.row) ||
      __builtin_mul_overflow(a.row, a.rows, &slice) || __builtin_mul_overflow(slice, a.slices, &a.bytes))
    return Status::InvalidValue;
  Backend& b = Backend::get();
  void* p = nullptr;
  if (Status s = b.mem_alloc(ctx, MemKind::Device, a.bytes, api, 0, &p); s != Status::Ok) return s;
  a.base = static_cast<char*>(p);
  a.ctx = ctx;
  a.handle = b.new_handle(Backend::HandleKind::Array);
  Registry& r = registry();
  {
    std::lock_guard lock(r.mu);
    r.by_handle.emplace(a.handle, a);
  }
  *handle = a.handle;
  return Status::Ok;
}

Status destroy(uintptr_t handle, ApiOrigin api) {
  Registry& r = registry();
  Array a;
  {
    // Taking it out of the table is the claim: of two threads destroying one array, one does.
    std::lock_guard lock(r.mu);
    auto it = r.by_handle.find(handle);
    if (it == r.by_handle.end()) return Status::InvalidHandle;
    a = it->second;
    r.by_handle.erase(it);
    r.generation.fetch_add(1, std::memory_order_acq_rel);
  }
  // The bytes go after the work queued on the context (mem_free waits for it).
  (void)Backend::get().mem_free(a.base, 1u << static_cast<unsigned>(MemKind::Device), api);
  return Status::Ok;
}

bool find(uintptr_t handle, Array* out) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.by_handle.find(handle);
  if (it == r.by_handle.end()) return false;
  *out = it->second;
  return true;
}

uint64_t generation() noexcept { return registry().generation.load(std::memory_order_acquire); }

void forget_context(const Context* ctx) noexcept {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  const size_t before = r.by_handle.size();
  std::erase_if(r.by_handle, [ctx](const auto& kv) { return kv.second.ctx == ctx; });
  if (r.by_handle.size() != before) r.generation.fetch_add(1, std::memory_order_acq_rel);
}

void after_fork_child() noexcept {
  Registry& r = registry();
  new (&r.mu) std::mutex;  // another thread of the parent may have held it
  r.by_handle.clear();
  r.generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace fg::arrays
