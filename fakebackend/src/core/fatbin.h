// Reading what kernels' host code cannot see: the initial values of __device__,
// __constant__ and __managed__ variables live only in the fat binary's cubins (nvcc's host
// shadows carry no initializer), and those of PTX globals in the PTX text.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace fg::fatbin {

// Copies the initial bytes of device variable `name` from the cubins of the fat binary that
// `wrapper` (the __fatBinC_Wrapper_t passed to __cudaRegisterFatBinary) or `image` (a raw
// fat binary, magic 0xBA55ED50) describes. Returns false when no uncompressed cubin defines
// the symbol; `out` is then untouched. Zero-initialised (.bss-like) symbols give zeros.
bool initial_value(const void* wrapper_or_image, std::string_view name, void* out, size_t size) noexcept;

// The initializer of a PTX declaration line ("... .u32 x[2] = {1, 2}" / "= 0f3FA00000"),
// as `elem`-byte little-endian values; empty if the line has none.
std::vector<unsigned char> ptx_initializer(std::string_view line, size_t elem, bool is_float);

}  // namespace fg::fatbin
