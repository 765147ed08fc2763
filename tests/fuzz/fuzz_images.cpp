// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for the image parsers of core/fatbin: fat binaries,
// ELF cubins and PTX text, as module loads hand them over. ctest runs it for a bounded
// number of inputs from tests/fuzz/corpus/images; longer: build/tests/fuzz_images -max_total_time=N.
#include "core/fatbin.h"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  // A fat-binary wrapper holds a pointer, which the API trusts as much as the image pointer
  // itself: a pointer made of fuzzed bytes is no image.
  uint32_t magic = 0;
  std::memcpy(&magic, data, sizeof magic);
  if (magic == 0x466243B1) return 0;
  // An image in memory, as the driver is handed one: the API promises the whole image is there,
  // so the buffer holds at least what its header says (zeros past the input).
  std::vector<unsigned char> image(data, data + size);
  image.resize(std::max<size_t>(size, 64));  // a whole header, as the API promises
  const uint64_t extent = fg::fatbin::binary_extent(image.data());
  if (extent > (1u << 20)) return 0;
  if (extent > image.size()) image.resize(extent);
  image.push_back(0);
  for (int cc : {80, 90}) {
    const fg::fatbin::Code code = fg::fatbin::select_code(image.data(), cc);
    (void)fg::fatbin::kernels(code);
    fg::Status st = fg::Status::Ok;
    (void)fg::fatbin::variables(code, 1ull << 30, &st);
  }
  const fg::fatbin::Code ptx = fg::fatbin::ptx_code(std::string_view(reinterpret_cast<const char*>(data), size), 90);
  (void)fg::fatbin::kernels(ptx);
  fg::Status st = fg::Status::Ok;
  (void)fg::fatbin::variables(ptx, 1ull << 30, &st);
  return 0;
}
