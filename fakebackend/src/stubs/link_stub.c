// SPDX-License-Identifier: Apache-2.0
/* The development names lib/libcuda.so, lib/libcudart.so and lib/libnvidia-ml.so: what a
 * program links against with -lcuda, -lcudart, -lnvidia-ml. Built once per family
 * (FG_STUB_CUDA, FG_STUB_CUDART, FG_STUB_NVML) from the same API lists as the backend.
 *
 * Why not links to libfake_gpu.so, as the run-time names are: the linker records the
 * SONAME of the library it linked against as NEEDED, and libfake_gpu.so's is its own. Each
 * stub carries the real SONAME (libcuda.so.1, libcudart.so.13, libnvidia-ml.so.1) and, for
 * libcudart, the real version node libcudart.so.13, so a program linked here records what it
 * would have recorded against NVIDIA's toolkit and runs unchanged on a real GPU.
 *
 * Why the bodies never run: the stub is a filter (DT_FILTER libfake_gpu.so, found through
 * its run path $ORIGIN/..). A process that dlopen()s "libcuda.so" loads the stub, and every
 * lookup through it (dlsym, or a later library whose NEEDED libcuda.so.1 matches the stub's
 * SONAME) resolves in libfake_gpu.so, mapped once: one backend state whatever name a
 * process uses. Should a body run all the same, it traps. */

static void fg_link_stub(void) { __builtin_trap(); }

#define FG_STUB(name) __attribute__((visibility("default"), alias("fg_link_stub"))) void name(void);

#if defined(FG_STUB_CUDART)
/* libcudart.so is NVIDIA's development name of libcudart.so.13: the names .so.13 exports,
 * none of the CUDA 12 only ones (linking one fails here as it does against NVIDIA's). */
#define FG_CUDART(name, nodes, ret) FG_STUB_##nodes(name)
#define FG_STUB_BOTH(name) FG_STUB(name)
#define FG_STUB_V13(name) FG_STUB(name)
#define FG_STUB_SPLIT(name) FG_STUB(name)
#define FG_STUB_V12(name)
#include "cudart.def"
#elif defined(FG_STUB_CUDA)
#define FG_CUDA(name) FG_STUB(name)
#define FG_CUDA_OTHER(name, ret) FG_STUB(name)
#include "cuda.def"
#elif defined(FG_STUB_NVML)
#define FG_NVML(name) FG_STUB(name)
#define FG_NVML_OTHER(name, ret) FG_STUB(name)
#include "nvml.def"
#else
#error "define FG_STUB_CUDA, FG_STUB_CUDART or FG_STUB_NVML"
#endif
