// SPDX-License-Identifier: Apache-2.0
#include "core/func_attrs.h"

#include "core/device_model.h"

namespace fg {

Status set_max_dynamic_shared(Function* f, const Device* dev, int value) {
  if (value < 0 || value > dev->model.attributes[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] - f->shared_size_bytes)
    return Status::InvalidValue;
  f->max_dynamic_shared = value;
  return Status::Ok;
}

Status set_preferred_carveout(Function* f, int value) {
  if (value < -1 || value > 100) return Status::InvalidValue;
  f->preferred_carveout = value;
  return Status::Ok;
}

}  // namespace fg
