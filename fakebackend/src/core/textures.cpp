// SPDX-License-Identifier: Apache-2.0
#include "core/textures.h"

#include "core/backend.h"

#include <deque>
#include <mutex>
#include <new>
#include <vector>

namespace fg::textures {
namespace {

struct Slot {
  uint32_t generation = 0;
  std::shared_ptr<const Object> obj;  // null: free
};

struct Table {
  std::mutex mu;
  std::deque<Slot> slots;       // a slot's address never changes
  std::vector<uint32_t> free_;  // free slots, reused last-freed first
  std::atomic<uint64_t> generation{1};
};
Table& table() {
  static auto* t = new Table;  // never destroyed: objects may be destroyed from exit handlers
  return *t;
}

constexpr uint32_t kMaxSlots = 0x7fffffff;

uint64_t handle_of(uint32_t slot, uint32_t generation) { return uint64_t{generation} << 32 | (uint64_t{slot} + 1); }

// The slot a handle names with its generation, or null; mu held.
Slot* slot_of(Table& t, uint64_t handle) {
  const uint64_t low = handle & 0xffffffffu;
  if (low == 0 || low > t.slots.size()) return nullptr;
  Slot& s = t.slots[low - 1];
  if (!s.obj || s.generation != static_cast<uint32_t>(handle >> 32)) return nullptr;
  return &s;
}

size_t attribute(const Context* ctx, int a) {
  const int v = ctx->dev->model.attributes[a];
  return v > 0 ? static_cast<size_t>(v) : 0;
}

// [p, p + n) lies inside one allocation the device reaches.
bool device_memory(uintptr_t p, size_t n) {
  auto a = Backend::get().mem_find(reinterpret_cast<const void*>(p));
  return a && a->holds(p, n);
}

Status resolve(Context* ctx, bool surface, const Resource& res, Texels* out) {
  Texels t;
  switch (res.type) {
    case kArray: {
      arrays::Array a;
      if (!arrays::find(res.array, &a)) return Status::InvalidValue;
      if (surface && !(a.desc.flags & arrays::kSurfaceLoadStore)) return Status::InvalidValue;
      t.base = a.base;
      t.elem = a.elem;
      t.width = a.desc.width;
      t.height = a.rows;
      t.depth = a.slices;
      t.pitch = a.row;
      t.slice = a.row * a.rows;
      t.span = a.bytes;
      t.layered = a.desc.flags & (arrays::kLayered | arrays::kCubemap);
      t.dims = a.desc.height == 0 ? 1 : (a.desc.depth == 0 || t.layered) ? 2 : 3;
      break;
    }
    case kMipmappedArray: return surface ? Status::InvalidValue : Status::NotSupported;  // none can exist
    case kLinear:
    case kPitch2D: {
      if (surface) return Status::InvalidValue;
      if (Status s = arrays::element_of(res.format, res.channels, &t.elem); s != Status::Ok) return s;
      const size_t align = attribute(ctx, attr::TEXTURE_ALIGNMENT);
      if (res.ptr == 0 || (align && res.ptr % align != 0)) return Status::InvalidValue;
      const size_t elem = t.elem.bytes();
      if (res.type == kLinear) {
        t.width = res.size / elem;
        if (t.width == 0 || t.width > attribute(ctx, attr::MAXIMUM_TEXTURE1D_LINEAR_WIDTH)) return Status::InvalidValue;
        t.pitch = t.width * elem;
        t.span = res.size;
      } else {
        const size_t pitch_align = attribute(ctx, attr::TEXTURE_PITCH_ALIGNMENT);
        size_t row = 0;
        if (res.width == 0 || res.height == 0 || res.width > attribute(ctx, attr::MAXIMUM_TEXTURE2D_LINEAR_WIDTH) ||
            res.height > attribute(ctx, attr::MAXIMUM_TEXTURE2D_LINEAR_HEIGHT) ||
            res.pitch > attribute(ctx, attr::MAXIMUM_TEXTURE2D_LINEAR_PITCH) ||
            (pitch_align && res.pitch % pitch_align != 0) || __builtin_mul_overflow(res.width, elem, &row) ||
            res.pitch < row || !span_2d(res.pitch, row, res.height, &t.span))
          return Status::InvalidValue;
        t.width = res.width;
        t.height = res.height;
        t.pitch = res.pitch;
        t.dims = 2;
      }
      t.slice = t.pitch * t.height;
      t.base = reinterpret_cast<char*>(res.ptr);
      if (!device_memory(res.ptr, t.span)) return Status::InvalidValue;
      break;
    }
    default: return Status::InvalidValue;
  }
  *out = t;
  return Status::Ok;
}

Status check_sampler(const Sampler& s, const Resource& res, const Texels& t) {
  for (int m : s.address)
    if (m < kWrap || m > kBorder) return Status::InvalidValue;
  if (s.filter < kPoint || s.filter > kLinearFilter || s.mipmap_filter < kPoint || s.mipmap_filter > kLinearFilter)
    return Status::InvalidValue;
  if (s.flags & ~(kReadAsInteger | kNormalizedCoordinates | kSrgb | kDisableTrilinear | kSeamlessCubemap))
    return Status::InvalidValue;
  if (s.flags & kSrgb) return Status::NotSupported;
  if ((s.flags & kSeamlessCubemap) && !(res.type == kArray && t.layered)) return Status::InvalidValue;
  // Linear filtering interpolates floats: values read as integers cannot be (32-bit integers
  // always are). The filter mode of linear memory is ignored.
  const bool integers = t.elem.kind == arrays::Channel::Unsigned || t.elem.kind == arrays::Channel::Signed;
  if (res.type != kLinear && s.filter == kLinearFilter && integers &&
      ((s.flags & kReadAsInteger) || t.elem.channel_bytes == 4))
    return Status::InvalidValue;
  return Status::Ok;
}

Status check_view(const View& v, const Resource& res, const Texels& t) {
  if (res.type != kArray) return Status::InvalidValue;  // views are of arrays
  // A number no CUresourceViewFormat names is invalid; a real one other than NONE asks for a
  // reformat the fake does not model.
  if (v.format < kViewFormatNone || v.format > kViewFormatLast) return Status::InvalidValue;
  if (v.format != kViewFormatNone) return Status::NotSupported;
  // The array is never mipmapped (mipmapped arrays cannot be made): its view's levels "have to
  // be zero", as the view descriptor's page says of non-mipmapped resources.
  if (v.first_mip != 0 || v.last_mip != 0) return Status::InvalidValue;
  arrays::Array a;
  if (!arrays::find(res.array, &a)) return Status::InvalidValue;
  if (v.width != a.desc.width || v.height != a.desc.height || v.depth != a.desc.depth) return Status::InvalidValue;
  if (!t.layered) return v.first_layer != 0 || v.last_layer != 0 ? Status::InvalidValue : Status::Ok;
  if (v.first_layer > v.last_layer || v.last_layer >= t.depth) return Status::InvalidValue;
  return v.first_layer == 0 && v.last_layer == t.depth - 1 ? Status::Ok : Status::NotSupported;
}

}  // namespace

Status create(Context* ctx, const Resource& res, const Sampler* tex, const View* view, uint64_t* handle) {
  if (!ctx || !ctx->dev) return Status::InvalidContext;
  if (!handle) return Status::InvalidValue;
  auto obj = std::make_shared<Object>();
  obj->surface = tex == nullptr;
  obj->ctx = ctx;
  obj->res = res;
  if (Status s = resolve(ctx, obj->surface, res, &obj->texels); s != Status::Ok) return s;
  if (tex) {
    if (Status s = check_sampler(*tex, res, obj->texels); s != Status::Ok) return s;
    obj->tex = *tex;
  }
  if (view) {
    if (obj->surface) return Status::InvalidValue;
    if (Status s = check_view(*view, res, obj->texels); s != Status::Ok) return s;
    obj->has_view = true;
    obj->view = *view;
  }
  Table& t = table();
  std::lock_guard lock(t.mu);
  uint32_t i = 0;
  if (!t.free_.empty()) {
    i = t.free_.back();
    t.free_.pop_back();
  } else {
    if (t.slots.size() >= kMaxSlots) return Status::OutOfMemory;
    i = static_cast<uint32_t>(t.slots.size());
    t.slots.emplace_back();
  }
  Slot& s = t.slots[i];
  s.obj = std::move(obj);
  *handle = handle_of(i, s.generation);
  return Status::Ok;
}

Status destroy(uint64_t handle, bool surface) {
  Table& t = table();
  std::shared_ptr<const Object> gone;  // freed after the lock
  std::lock_guard lock(t.mu);
  Slot* s = slot_of(t, handle);
  if (!s || s->obj->surface != surface) return Status::InvalidValue;
  gone = std::move(s->obj);
  ++s->generation;
  t.free_.push_back(static_cast<uint32_t>((handle & 0xffffffffu) - 1));
  t.generation.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok;
}

bool find(uint64_t handle, bool surface, Object* out) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  Slot* s = slot_of(t, handle);
  if (!s || s->obj->surface != surface) return false;
  *out = *s->obj;
  return true;
}

std::shared_ptr<const Object> lookup(uint64_t handle) noexcept {
  Table& t = table();
  std::lock_guard lock(t.mu);
  Slot* s = slot_of(t, handle);
  return s ? s->obj : nullptr;
}

uint64_t generation() noexcept { return table().generation.load(std::memory_order_acquire); }

void forget_context(const Context* ctx) noexcept {
  Table& t = table();
  std::vector<std::shared_ptr<const Object>> gone;
  std::lock_guard lock(t.mu);
  for (uint32_t i = 0; i < t.slots.size(); ++i) {
    Slot& s = t.slots[i];
    if (!s.obj || s.obj->ctx != ctx) continue;
    gone.push_back(std::move(s.obj));
    ++s.generation;
    t.free_.push_back(i);
  }
  if (!gone.empty()) t.generation.fetch_add(1, std::memory_order_acq_rel);
}

void after_fork_child() noexcept {
  Table& t = table();
  new (&t.mu) std::mutex;  // another thread of the parent may have held it
  // The parent's handles stay refused: every slot's generation moves on.
  for (uint32_t i = 0; i < t.slots.size(); ++i) {
    if (t.slots[i].obj) {
      t.slots[i].obj.reset();
      ++t.slots[i].generation;
      t.free_.push_back(i);
    }
  }
  t.generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace fg::textures
