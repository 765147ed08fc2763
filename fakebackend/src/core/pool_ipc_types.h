// SPDX-License-Identifier: Apache-2.0
// The shareable-handle type that exporting or importing a memory pool names
// (CUmemAllocationHandleType and cudaMemAllocationHandleType have the same values).
#pragma once
#include "core/errors.h"

namespace fg::pool_ipc {

// Only POSIX file descriptors exist on Linux (Ok); Win32, Win32 KMT and fabric handles are
// NotSupported, anything else InvalidValue.
Status check_handle_type(int type) noexcept;

}  // namespace fg::pool_ipc
