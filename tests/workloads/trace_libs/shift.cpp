// SPDX-License-Identifier: Apache-2.0
// 64 KiB of code linked in front of the backend's own (tests/workloads/trace.cmake): in
// libfake_gpu_shifted.so every function sits at another offset, as in another build.
__asm__(".text\n.p2align 4\nfakegpu_shift_padding:\n.skip 65536, 0xcc\n");
