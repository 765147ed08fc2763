// SPDX-License-Identifier: Apache-2.0
// The vocabulary of fake device memory: what kind a pointer is, an allocation's record, and
// the size arithmetic of pitched and 2-D/3-D regions (overflow-checked, once). The memory
// operations (allocate, free, find, copy, set) are the Backend's (core/memory.cpp); the
// arenas the bytes live in are core/arena.h.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fakegpu/mem_kind.h"

namespace fg {

struct Context;

// What a pointer is (fakegpu/mem_kind.h says what each kind holds). Device/Managed/Host are
// booked in the ledger under the same numbers.
using fakegpu::MemKind;
using fakegpu::to_string;

// Pitched allocations (cudaMallocPitch, cuMemAllocPitch): rows aligned as the real allocator
// aligns them on current parts. Sets the pitch for rows `width` bytes wide and the bytes of
// `height` such rows; false when either does not fit a size_t.
inline constexpr size_t kPitchAlignment = 512;
inline bool pitched_size(size_t width, size_t height, size_t* pitch, size_t* bytes) noexcept {
  if (width > SIZE_MAX - (kPitchAlignment - 1)) return false;
  *pitch = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  return !__builtin_mul_overflow(*pitch, height, bytes);
}

// The bytes from the first byte of a pitched region to one past its last: rows of `width`
// bytes `pitch` apart (2-D), and `depth` such slices `slice` bytes apart (3-D). false when it
// does not fit a size_t. Every region is non-empty (the callers return early on a zero extent).
inline bool span_2d(size_t pitch, size_t width, size_t height, size_t* span) noexcept {
  size_t rows = 0;
  return !__builtin_mul_overflow(pitch, height - 1, &rows) && !__builtin_add_overflow(rows, width, span);
}
inline bool span_3d(size_t slice, size_t pitch, size_t width, size_t height, size_t depth, size_t* span) noexcept {
  size_t slices = 0, last = 0;
  return !__builtin_mul_overflow(slice, depth - 1, &slices) && span_2d(pitch, width, height, &last) &&
         !__builtin_add_overflow(slices, last, span);
}
// A pitched volume's slice (`rows` rows of `pitch` bytes) and the offset of its byte
// (x, y, z); false when either does not fit a size_t.
inline bool offset_3d(size_t pitch, size_t rows, size_t x, size_t y, size_t z, size_t* slice, size_t* offset) noexcept {
  size_t row = 0, bytes = 0;
  return !__builtin_mul_overflow(pitch, rows, slice) && !__builtin_mul_overflow(z, rows, &row) &&
         !__builtin_add_overflow(row, y, &row) && !__builtin_mul_overflow(row, pitch, &bytes) &&
         !__builtin_add_overflow(bytes, x, offset);
}

// Whether [p, p + n) lies in the part of the address space a process can map (below 2^56,
// the top of user space with 5-level paging; 4-level x86-64 and arm64 stop below it), without
// wrapping. A pointer outside it can never be host or device memory: a call that gets one
// answers an invalid value instead of faulting on it.
inline constexpr uint64_t kUserAddressEnd = uint64_t{1} << 56;
inline bool user_range(uintptr_t p, size_t n) noexcept {
  uintptr_t end = 0;
  return !__builtin_add_overflow(p, n, &end) && end <= kUserAddressEnd;
}

enum class ApiOrigin : uint8_t { Runtime = 0, Driver = 1, Internal = 2 };

struct Allocation {
  uintptr_t base = 0;
  uint64_t size = 0;  // requested bytes: what is booked and reported
  uint64_t span = 0;  // bytes taken from the arena (size class / whole chunks)
  int device = -1;    // visible ordinal; -1 for host memory not tied to a device
  MemKind kind = MemKind::Device;
  ApiOrigin api = ApiOrigin::Runtime;
  uint32_t flags = 0;      // host-alloc / register / attach flags as given
  Context* ctx = nullptr;  // owning context: destroying it frees the allocation
  class Arena* arena = nullptr;
  uint64_t pool = 0;  // memory pool id for async allocations (0 = none)

  // Whether [u, u + n) lies inside the allocation; no sum here can wrap around.
  bool holds(uintptr_t u, uint64_t n) const noexcept { return u >= base && u - base <= size && n <= size - (u - base); }
};

}  // namespace fg
