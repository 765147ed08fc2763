// SPDX-License-Identifier: Apache-2.0
// Stream-ordered memory pools: creation, lookup by id, their usage notes, destruction.
#include "core/backend.h"

#include <algorithm>
#include <mutex>

namespace fg {

Status Backend::pool_create(Device* dev, MemPool** out) {
  if (!dev) return Status::InvalidDevice;
  if (!out) return Status::InvalidValue;
  auto* p = new MemPool;
  p->id = next_id_++;
  p->dev = dev;
  std::lock_guard lock(mu_);
  pools_.insert(p);
  pools_by_id_[p->id] = p;
  *out = p;
  return Status::Ok;
}

MemPool* Backend::pool_by_id(uint64_t id) noexcept {
  std::lock_guard lock(mu_);
  auto it = pools_by_id_.find(id);
  return it == pools_by_id_.end() ? nullptr : it->second;
}

// The driver's rules: what is freed stays reserved up to the pool's release threshold.
void Backend::pool_note(uint64_t id, int64_t delta) noexcept {
  std::lock_guard lock(mu_);  // keeps the pool alive (pool_destroy takes it too)
  auto it = pools_by_id_.find(id);
  if (it == pools_by_id_.end()) return;
  MemPool* p = it->second;
  std::lock_guard l2(p->mu);
  if (delta >= 0) {
    p->used_current += static_cast<uint64_t>(delta);
    p->used_high = std::max(p->used_high, p->used_current);
    p->reserved_current = std::max(p->reserved_current, p->used_current);
    p->reserved_high = std::max(p->reserved_high, p->reserved_current);
  } else {
    p->used_current -= std::min(p->used_current, static_cast<uint64_t>(-delta));
    p->reserved_current = std::max(p->used_current, std::min(p->reserved_current, p->release_threshold));
  }
}

Status Backend::pool_destroy(MemPool* p) {
  std::lock_guard lock(mu_);
  if (!p || !pools_.count(p) || p->is_default) return Status::InvalidValue;
  pools_.erase(p);
  pools_by_id_.erase(p->id);
  if (p->dev->current_pool.load() == p) p->dev->current_pool.store(p->dev->default_pool);
  delete p;
  return Status::Ok;
}

bool Backend::pool_valid(const MemPool* p) noexcept { return listed(pools_, p); }

}  // namespace fg
