// SPDX-License-Identifier: Apache-2.0
// The versions the fake reports, once for the runtime, the driver and NVML.
#pragma once

namespace fg::version {

// The CUDA version of the driver (cuDriverGetVersion, cudaDriverGetVersion,
// nvmlSystemGetCudaDriverVersion): 13.0. NVIDIA's runtime 13 refuses anything older, and
// 13000 also serves every 12.x runtime. It is also the newest driver ABI a program can ask
// cuGetProcAddress / cudaGetDriverEntryPoint for.
inline constexpr int kCudaDriver = 13000;
// What the fake's runtime reports (cudaRuntimeGetVersion): 13.0 through libcudart.so.13; the
// CUDA 12 export list served through libcudart.so.12 is that of 12.9.
inline constexpr int kRuntime13 = 13000;
inline constexpr int kRuntime12 = 12090;
// The installed display driver as NVML reports it: an R580 driver with CUDA 13.0 support.
inline constexpr char kDisplayDriver[] = "580.65.06";
inline constexpr char kNvml[] = "13.580.65.06";  // NVML_API_VERSION . display driver version

}  // namespace fg::version
