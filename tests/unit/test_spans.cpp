// SPDX-License-Identifier: Apache-2.0
// The core's size arithmetic for pitched allocations and 2-D/3-D regions: exact where it fits,
// refused (false) wherever a product or sum would wrap around.
#include "core/memory.h"

#include <catch2/catch.hpp>

#include <cstdint>

TEST_CASE("pitched_size rounds rows to 512 bytes and refuses what does not fit", "[spans]") {
  size_t pitch = 0, bytes = 0;
  REQUIRE(fg::pitched_size(100, 6, &pitch, &bytes));
  CHECK(pitch == 512);
  CHECK(bytes == 3072);
  REQUIRE(fg::pitched_size(512, 1, &pitch, &bytes));
  CHECK(pitch == 512);
  CHECK(bytes == 512);
  REQUIRE(fg::pitched_size(0, 5, &pitch, &bytes));
  CHECK(pitch == 0);
  CHECK(bytes == 0);
  CHECK_FALSE(fg::pitched_size(SIZE_MAX - 10, 1, &pitch, &bytes));  // the rounding wraps
  CHECK_FALSE(fg::pitched_size(1024, SIZE_MAX / 1024 + 1, &pitch, &bytes));
}

TEST_CASE("span_2d and span_3d end at the region's last byte", "[spans]") {
  size_t span = 0;
  REQUIRE(fg::span_2d(512, 100, 6, &span));
  CHECK(span == 512 * 5 + 100);
  REQUIRE(fg::span_2d(512, 100, 1, &span));
  CHECK(span == 100);
  REQUIRE(fg::span_3d(512 * 2, 512, 40, 2, 3, &span));
  CHECK(span == 1024 * 2 + 512 + 40);
  const size_t half = SIZE_MAX / 2 + 1;
  CHECK_FALSE(fg::span_2d(half, 64, 3, &span));
  CHECK_FALSE(fg::span_2d(SIZE_MAX, 2, 2, &span));  // pitch + width wraps
  CHECK_FALSE(fg::span_3d(half, 64, 64, 1, 3, &span));
}

TEST_CASE("offset_3d gives the slice and the byte's offset", "[spans]") {
  size_t slice = 0, offset = 0;
  REQUIRE(fg::offset_3d(128, 2, 10, 1, 2, &slice, &offset));
  CHECK(slice == 256);
  CHECK(offset == (2 * 2 + 1) * 128 + 10);
  const size_t half = SIZE_MAX / 2 + 1;
  CHECK_FALSE(fg::offset_3d(2, half, 0, 0, 0, &slice, &offset));       // the slice wraps
  CHECK_FALSE(fg::offset_3d(64, 1, 0, 0, half, &slice, &offset));      // z * rows * pitch wraps
  CHECK_FALSE(fg::offset_3d(64, 1, SIZE_MAX, 1, 0, &slice, &offset));  // + x wraps
}
