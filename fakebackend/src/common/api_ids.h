// SPDX-License-Identifier: Apache-2.0
// Identifiers of every exported API function, generated from the .def lists.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fg {

enum class ApiFamily : uint8_t { Runtime, Driver, Nvml };

// One id per exported entry point (trampoline). SPLIT runtime names have a second id
// for their CUDA 12 (legacy ABI) twin, spelled v12_<name>.
enum class ApiId : uint16_t {
#define FG_CUDART(name, nodes, ret) FG_CUDART_ID_##nodes(name)
#define FG_CUDART_ID_BOTH(name) name,
#define FG_CUDART_ID_V12(name) name,
#define FG_CUDART_ID_V13(name) name,
#define FG_CUDART_ID_SPLIT(name) name, v12_##name,
#include "cudart.def"
#define FG_CUDA(name) name,
#define FG_CUDA_OTHER(name, ret) name,
#include "cuda.def"
#define FG_NVML(name) name,
#define FG_NVML_OTHER(name, ret) name,
#include "nvml.def"
  kCount
};
#undef FG_CUDART
#undef FG_CUDART_ID_BOTH
#undef FG_CUDART_ID_V12
#undef FG_CUDART_ID_V13
#undef FG_CUDART_ID_SPLIT
#undef FG_CUDA
#undef FG_CUDA_OTHER
#undef FG_NVML
#undef FG_NVML_OTHER

inline constexpr std::size_t kApiCount = static_cast<std::size_t>(ApiId::kCount);

struct ApiInfo {
  const char* name;  // exported symbol name (without version)
  ApiFamily family;
  bool legacy12;  // the libcudart.so.12-only legacy twin of a SPLIT name
};

// Name and family of an id; defined in api_table.cpp.
const ApiInfo& api_info(ApiId id) noexcept;
inline const ApiInfo& api_info(std::size_t i) noexcept { return api_info(static_cast<ApiId>(i)); }

}  // namespace fg
