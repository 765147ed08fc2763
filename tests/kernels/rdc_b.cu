// SPDX-License-Identifier: Apache-2.0
// The other half of the -rdc=true program (rdc_a.cu holds the kernel and main).
__device__ int rdc_bias = 100;

__device__ __noinline__ int scale_and_offset(int x) { return x * 3 + 11; }
