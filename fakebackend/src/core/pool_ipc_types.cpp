// SPDX-License-Identifier: Apache-2.0
#include "core/pool_ipc_types.h"

#include "core/pool_ipc.h"

namespace fg::pool_ipc {

Status check_handle_type(int type) noexcept {
  constexpr int kWin32 = 0x2, kWin32Kmt = 0x4, kFabric = 0x8;
  switch (type) {
    case static_cast<int>(kPosixFd): return Status::Ok;
    case kWin32:
    case kWin32Kmt:
    case kFabric: return Status::NotSupported;
    default: return Status::InvalidValue;
  }
}

}  // namespace fg::pool_ipc
