// SPDX-License-Identifier: Apache-2.0
// Device code only, for nvrtc_driver's cuLink* checks: built by nvcc -dc into a host object
// (link_lib.o) and by nvcc -lib into a static library (liblink_lib.a); nvrtc_driver links its
// NVRTC-compiled kernel, which uses both names, with each (CU_JIT_INPUT_OBJECT/LIBRARY).
__device__ int link_bias = 40;

__device__ int link_scale(int x) { return 7 * x + 2; }
