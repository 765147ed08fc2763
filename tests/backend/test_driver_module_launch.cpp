// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: modules, functions, libraries/kernels, the JIT linker (whose linked kernels
// run), launches (validated and recorded) and the occupancy calculator.
#include "backend/driver_test.h"
#include "backend/runtime_api.h"  // child_report

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

using namespace drvtest;

namespace {

// PTX for sm_70: every profile runs it, and its target differs from the default device's.
constexpr int kPtxTarget = 70;
const char* const kPtx = R"(
.version 8.0
.target sm_70
.address_size 64

.global .align 4 .b8 table[64];
.const .align 4 .u32 factor;

.visible .entry add_one(
	.param .u64 add_one_param_0
)
{
	ret;
}

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u32 scale_param_1
)
{
	ret;
}
)";

const char* const kPtx2 = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry mul_two(
	.param .u64 mul_two_param_0
)
{
	ret;
}
)";

struct Module {
  CUmodule mod = nullptr;
  explicit Module(const void* image) { CU_OK(CU(cuModuleLoadData)(&mod, image)); }
  ~Module() {
    if (mod) CU(cuModuleUnload)(mod);
  }
  CUfunction fn(const char* name) {
    CUfunction f = nullptr;
    CU_OK(CU(cuModuleGetFunction)(&f, mod, name));
    return f;
  }
};

int func_attr(CUfunction f, CUfunction_attribute a) {
  int v = -1;
  CU_OK(CU(cuFuncGetAttribute)(&v, a, f));
  return v;
}

std::string write_temp(const char* text) {
  char path[] = "/tmp/fakegpu-drvtest-ptx-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, text, std::strlen(text)) == static_cast<ssize_t>(std::strlen(text)));
  close(fd);
  return path;
}

std::atomic<int> g_b2d_calls{0};
size_t no_dynamic_smem(int) {
  ++g_b2d_calls;
  return 0;
}

}  // namespace

TEST_CASE("driver: PTX modules, functions and globals", "[driver]") {
  clear_stack();
  CUmodule m = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuModuleLoadData)(&m, kPtx));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleLoadData)(nullptr, kPtx));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleLoadData)(&m, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, "this is not a module"));
  Module mod(kPtx);
  CUfunction f = mod.fn("add_one");
  CUfunction g = mod.fn("scale");
  CHECK(f != g);
  CUfunction again = nullptr;
  CU_OK(CU(cuModuleGetFunction)(&again, mod.mod, "add_one"));
  CHECK(again == f);
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuModuleGetFunction)(&again, mod.mod, "missing"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleGetFunction)(nullptr, mod.mod, "add_one"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleGetFunction)(&again, mod.mod, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuModuleGetFunction)(&again, reinterpret_cast<CUmodule>(&again), "add_one"));
  const char* name = nullptr;
  CU_OK(CU(cuFuncGetName)(&name, g));
  CHECK(std::string(name) == "scale");

  CUdeviceptr table = 0, factor = 0;
  size_t bytes = 0;
  CU_OK(CU(cuModuleGetGlobal_v2)(&table, &bytes, mod.mod, "table"));
  CHECK(table != 0);
  CHECK(bytes == 64);
  CU_OK(CU(cuModuleGetGlobal_v2)(&factor, &bytes, mod.mod, "factor"));
  CHECK(bytes == 4);
  CU_OK(CU(cuModuleGetGlobal_v2)(nullptr, nullptr, mod.mod, "factor"));
  unsigned char in[64], out[64] = {};
  for (int i = 0; i < 64; ++i) in[i] = static_cast<unsigned char>(i + 1);
  CU_OK(CU(cuMemcpyHtoD_v2)(table, in, 64));  // a module global is device memory
  CU_OK(CU(cuMemcpyDtoH_v2)(out, table, 64));
  CHECK(std::memcmp(in, out, 64) == 0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(table, in, 65));
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuModuleGetGlobal_v2)(&table, &bytes, mod.mod, "nothing"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleGetGlobal_v2)(&table, &bytes, mod.mod, nullptr));

  // Unloading invalidates the module and its functions.
  CU_OK(CU(cuModuleUnload)(mod.mod));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuModuleUnload)(mod.mod));
  int v = 0;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuFuncGetAttribute)(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuModuleGetFunction)(&again, mod.mod, "add_one"));
  mod.mod = nullptr;
}

TEST_CASE("driver: module images: file, options, fat binary, cubin", "[driver]") {
  Ctx ctx(0);
  const std::string path = write_temp(kPtx);
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoad)(&m, path.c_str()));
  CUfunction f = nullptr;
  CU_OK(CU(cuModuleGetFunction)(&f, m, "scale"));
  CU_OK(CU(cuModuleUnload)(m));
  std::remove(path.c_str());
  CU_EQ(CUDA_ERROR_FILE_NOT_FOUND, CU(cuModuleLoad)(&m, path.c_str()));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleLoad)(&m, nullptr));

  // JIT options: logs come back empty, the wall time as 0.
  char info[64], error[64];
  std::memset(info, 'x', sizeof info);
  std::memset(error, 'x', sizeof error);
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_WALL_TIME,        CU_JIT_TARGET_FROM_CUCONTEXT};
  void* vals[] = {info,
                  reinterpret_cast<void*>(uintptr_t{sizeof info}),
                  error,
                  reinterpret_cast<void*>(uintptr_t{sizeof error}),
                  reinterpret_cast<void*>(uintptr_t{0xFFFFFFFF}),
                  nullptr};
  CU_OK(CU(cuModuleLoadDataEx)(&m, kPtx, 6, opts, vals));
  CHECK(info[0] == '\0');
  CHECK(error[0] == '\0');
  CHECK(vals[1] == nullptr);
  CHECK(vals[3] == nullptr);
  float wall = -1;
  std::memcpy(&wall, &vals[4], sizeof wall);
  CHECK(wall == 0.0f);
  CU_OK(CU(cuModuleUnload)(m));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleLoadDataEx)(&m, kPtx, 2, nullptr, vals));

  // Images the driver refuses, with a real H200's codes (tests/clients/golden/h200.facts): a
  // fat binary with no code for the device (header only), an ELF that is not a CUDA cubin
  // (EM_CUDA), PTX that is not PTX at its top level, PTX for a newer GPU than the device.
  const unsigned char fatbin[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CU_EQ(CUDA_ERROR_NO_BINARY_FOR_GPU, CU(cuModuleLoadFatBinary)(&m, fatbin));
  unsigned char elf[64] = {0x7F, 'E', 'L', 'F', 2, 1, 1};
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, elf));
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, "hello, world"));
  CU_EQ(CUDA_ERROR_INVALID_PTX,
        CU(cuModuleLoadData)(&m, ".version 7.8\n.target sm_80\n.address_size 64\nthis is not ptx;\n"));
  CU_EQ(CUDA_ERROR_INVALID_PTX, CU(cuModuleLoadData)(&m, ".version 7.8\n.target sm_200\n.address_size 64\n"));
  CU_EQ(CUDA_ERROR_INVALID_PTX, CU(cuModuleLoadData)(&m, ".target sm_80\n.version 7.8\n"));
  CU_EQ(CUDA_ERROR_INVALID_PTX, CU(cuModuleLoadData)(&m, ".version 7.8\n.address_size 64\n"));
  CU_EQ(CUDA_ERROR_INVALID_PTX, CU(cuModuleLoadData)(&m, ".version 7.8\n.target sm_80\n.entry k() {\n"));
  // A global the device could never hold (1 TiB; a count whose size wraps around 2^64) is out
  // of memory at the load, and no host memory is taken for it.
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuModuleLoadData)(&m,
                                                       ".version 7.8\n.target sm_70\n.address_size 64\n"
                                                       ".global .align 4 .b8 huge[1099511627776];\n"));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuModuleLoadData)(&m,
                                                       ".version 7.8\n.target sm_70\n.address_size 64\n"
                                                       ".global .align 8 .b64 wraps[2305843009213693953];\n"));
  // Headers that promise more bytes than there are (a truncated image at the end of what is
  // mapped, a guard page after it): refused as invalid images, never read past the end.
  {
    const long page = sysconf(_SC_PAGESIZE);
    auto* mem = static_cast<unsigned char*>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(mem != MAP_FAILED);
    REQUIRE(mprotect(mem + page, page, PROT_NONE) == 0);
    unsigned char* hdr = mem + page - 64;  // the last 64 bytes before the guard page
    const unsigned char ident[] = {0x7F, 'E', 'L', 'F', 2, 1, 1};
    std::memcpy(hdr, ident, sizeof ident);
    hdr[0x12] = 190;   // EM_CUDA
    hdr[0x3a] = 64;    // section header size
    hdr[0x3c] = 4;     // four section headers ...
    hdr[0x2a] = 0x10;  // ... at 1 MiB, far past the guard page
    CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, hdr));
    CUlibrary lib = nullptr;
    CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuLibraryLoadData)(&lib, hdr, nullptr, nullptr, 0, nullptr, nullptr, 0));
    unsigned char* fb = mem + page - 16;  // a fat binary header claiming 1 MiB of entries
    const unsigned char fb_hdr[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0x10, 0, 0, 0, 0, 0};
    std::memcpy(fb, fb_hdr, sizeof fb_hdr);
    CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, fb));
    CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuLibraryLoadData)(&lib, fb, nullptr, nullptr, 0, nullptr, nullptr, 0));
    munmap(mem, 2 * page);
  }
  // Comments, a block comment before .version and braces inside a file name are PTX.
  CU_OK(CU(cuModuleLoadData)(&m,
                             "/* made by hand */ .version 7.8\n.target sm_70 // the oldest\n.address_size 64\n"
                             ".file 1 \"odd{name.cu\"\n.visible .entry k()\n{\n ret;\n}\n"));
  CU_OK(CU(cuModuleGetFunction)(&f, m, "k"));
  CU_OK(CU(cuModuleUnload)(m));
  // An ELF cubin's kernels are read from its symbols: this header-only one (EM_CUDA) has none.
  elf[0x12] = 190;  // EM_CUDA
  elf[0x3a] = 64;   // section header size
  elf[0x28] = 64;   // section headers at 64 (none: e_shnum 0)
  CU_OK(CU(cuModuleLoadData)(&m, elf));
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuModuleGetFunction)(&f, m, "anything"));
  CU_OK(CU(cuModuleUnload)(m));

  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  CU_OK(CU(cuModuleGetLoadingMode)(&mode));
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  CHECK(mode == (env && std::string(env) == "EAGER" ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuModuleGetLoadingMode)(nullptr));
}

TEST_CASE("driver: a module's globals take device memory, and a module that does not fit is out of memory",
          "[driver]") {
  Ctx ctx(0);
  const char* const k64MiB = ".version 7.8\n.target sm_70\n.address_size 64\n.global .align 4 .b8 big[67108864];\n";
  size_t free0 = 0, total = 0, free1 = 0, free2 = 0;
  CU_OK(CU(cuMemGetInfo_v2)(&free0, &total));
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoadData)(&m, k64MiB));
  CU_OK(CU(cuMemGetInfo_v2)(&free1, &total));
  CHECK(free0 - free1 == (64u << 20));
  CU_OK(CU(cuModuleUnload)(m));
  CU_OK(CU(cuMemGetInfo_v2)(&free2, &total));
  CHECK(free2 == free0);
  // With less than 64 MiB left, the load is refused and books nothing.
  CUdeviceptr fill = 0;
  CU_OK(CU(cuMemAlloc_v2)(&fill, free0 - (32u << 20)));
  CU_OK(CU(cuMemGetInfo_v2)(&free1, &total));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuModuleLoadData)(&m, k64MiB));
  CU_OK(CU(cuMemGetInfo_v2)(&free2, &total));
  CHECK(free2 == free1);
  CU_OK(CU(cuMemFree_v2)(fill));
  CU_OK(CU(cuMemGetInfo_v2)(&free2, &total));
  CHECK(free2 == free0);
}

TEST_CASE("driver: function attributes", "[driver]") {
  Ctx ctx(0);
  Module mod(kPtx);
  CUfunction f = mod.fn("add_one");
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 0);
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS) == 32);
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 49152);
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == -1);
  if (default_config()) {
    CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_PTX_VERSION) == kPtxTarget);  // the PTX's .target
    CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION) == 80);       // the device's
  }
  CU_OK(CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 100000);
  CU_OK(CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  CHECK(func_attr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == 50);
  if (default_config()) {
    CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 166913));
    CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));  // sm_80
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 64));  // read-only
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
  int v = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncGetAttribute)(&v, static_cast<CUfunction_attribute>(99), f));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncGetAttribute)(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuFuncGetAttribute)(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr));
  CU_OK(CU(cuFuncSetCacheConfig)(f, CU_FUNC_CACHE_PREFER_SHARED));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncSetCacheConfig)(f, static_cast<CUfunc_cache>(7)));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuFuncSetCacheConfig)(reinterpret_cast<CUfunction>(&v), CU_FUNC_CACHE_PREFER_SHARED));
  const char* name = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuFuncGetName)(nullptr, f));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuFuncGetName)(&name, reinterpret_cast<CUfunction>(&v)));
}

TEST_CASE("driver: the linker joins PTX for cuModuleLoadDataEx", "[driver]") {
  clear_stack();
  CUlinkState st = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuLinkCreate_v2)(0, nullptr, nullptr, &st));
  Ctx ctx(0);
  char log[32];
  std::memset(log, 'x', sizeof log);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log})};
  CU_OK(CU(cuLinkCreate_v2)(2, opts, vals, &st));
  CU_OK(CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), std::strlen(kPtx) + 1, "a.ptx", 0, nullptr,
                             nullptr));
  const std::string path = write_temp(kPtx2);
  CU_OK(CU(cuLinkAddFile_v2)(st, CU_JIT_INPUT_PTX, path.c_str(), 0, nullptr, nullptr));
  std::remove(path.c_str());
  CU_EQ(CUDA_ERROR_FILE_NOT_FOUND, CU(cuLinkAddFile_v2)(st, CU_JIT_INPUT_PTX, path.c_str(), 0, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_PTX,
        CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, const_cast<char*>("garbage"), 8, "g", 0, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, nullptr, 8, "g", 0, nullptr, nullptr));
  // A size past what the caller's buffer holds (SIZE_MAX wraps the address space).
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), SIZE_MAX, "g", 0, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_CUBIN, const_cast<char*>(kPtx), SIZE_MAX / 2, "g", 0, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLinkAddData_v2)(st, static_cast<CUjitInputType>(42), const_cast<char*>(kPtx), 8,
                                                       "g", 0, nullptr, nullptr));
  void* image = nullptr;
  size_t size = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLinkComplete)(st, nullptr, &size));
  CU_OK(CU(cuLinkComplete)(st, &image, &size));
  REQUIRE(image != nullptr);
  CHECK(size > std::strlen(kPtx));
  CHECK(log[0] == '\0');
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoadDataEx)(&m, image, 0, nullptr, nullptr));
  CUfunction f = nullptr;
  CU_OK(CU(cuModuleGetFunction)(&f, m, "add_one"));
  CU_OK(CU(cuModuleGetFunction)(&f, m, "mul_two"));
  CU_OK(CU(cuModuleUnload)(m));
  CU_OK(CU(cuLinkDestroy)(st));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLinkDestroy)(st));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLinkComplete)(st, &image, &size));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLinkCreate_v2)(0, nullptr, nullptr, nullptr));
  CU_OK(CU(cuLinkCreate_v2)(0, nullptr, nullptr, &st));
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuLinkComplete)(st, &image, &size));  // nothing linked
  CU_OK(CU(cuLinkDestroy)(st));
}

namespace {

// Two separately compiled units (nvcc -rdc's shape): a calls b's .extern function and reads
// b's .extern variable; each has its own header and an internal helper function and variable
// of the same names (twice: ×2 in a, ×3 in b; seed: 5 in a, 9 in b).
// out[t] = add_bias(twice_a(t)) + bias + seed_a = (3·2t + bias + seed_b) + bias + seed_a.
const char* const kLinkA = R"(
.version 8.0
.target sm_80
.address_size 64

.extern .func (.param .b32 ret) add_bias(.param .b32 x);
.extern .global .align 4 .u32 bias;
.global .align 4 .u32 seed = 5;

.func (.param .b32 r) twice(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	shl.b32 %r2, %r1, 1;
	st.param.b32 [r], %r2;
	ret;
}

.visible .entry linked_kernel(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	{
	.param .b32 p0;
	.param .b32 r0;
	st.param.b32 [p0], %r1;
	call.uni (r0), twice, (p0);
	ld.param.b32 %r2, [r0];
	}
	{
	.param .b32 p1;
	.param .b32 r1;
	st.param.b32 [p1], %r2;
	call.uni (r1), add_bias, (p1);
	ld.param.b32 %r3, [r1];
	}
	ld.global.u32 %r4, [bias];
	ld.global.u32 %r5, [seed];
	add.s32 %r6, %r3, %r4;
	add.s32 %r7, %r6, %r5;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r7;
	ret;
}
)";

const char* const kLinkB = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .global .align 4 .u32 bias = 1000;
.global .align 4 .u32 seed = 9;

.func (.param .b32 r) twice(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	mul.lo.s32 %r2, %r1, 3;
	st.param.b32 [r], %r2;
	ret;
}

.visible .func (.param .b32 ret) add_bias(.param .b32 x)
{
	.reg .b32 %r<7>;
	ld.param.u32 %r1, [x];
	{
	.param .b32 p0;
	.param .b32 r0;
	st.param.b32 [p0], %r1;
	call.uni (r0), twice, (p0);
	ld.param.b32 %r2, [r0];
	}
	ld.global.u32 %r3, [bias];
	ld.global.u32 %r4, [seed];
	add.s32 %r5, %r2, %r3;
	add.s32 %r6, %r5, %r4;
	st.param.b32 [ret], %r6;
	ret;
}
)";

// Launches linked_kernel with 32 threads and returns out[0..31].
std::vector<uint32_t> run_linked(CUfunction f) {
  CUdeviceptr out = 0;
  CU_OK(CU(cuMemAlloc_v2)(&out, 32 * sizeof(uint32_t)));
  void* args[] = {&out};
  CU_OK(CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  std::vector<uint32_t> host(32, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(host.data(), out, 32 * sizeof(uint32_t)));
  CU_OK(CU(cuMemFree_v2)(out));
  return host;
}

// out[t] = 6t + 2·bias + 14 (seed 9 of b's function, seed 5 of a's kernel).
std::vector<uint32_t> linked_expected(uint32_t bias) {
  std::vector<uint32_t> v;
  for (uint32_t t = 0; t < 32; ++t) v.push_back(6 * t + 2 * bias + 14);
  return v;
}

struct Linker {
  CUlinkState st = nullptr;
  char error_log[1024];
  char info_log[1024];
  CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                          CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[4] = {};
  Linker() {
    std::memset(error_log, 'x', sizeof error_log);
    std::memset(info_log, 'x', sizeof info_log);
    vals[0] = error_log;
    vals[2] = info_log;
    reset_sizes();
    CU_OK(CU(cuLinkCreate_v2)(4, opts, vals, &st));
  }
  ~Linker() { CU(cuLinkDestroy)(st); }
  void reset_sizes() {
    vals[1] = reinterpret_cast<void*>(uintptr_t{sizeof error_log});
    vals[3] = reinterpret_cast<void*>(uintptr_t{sizeof info_log});
  }
  CUresult add(const char* ptx, const char* name) {
    return CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, const_cast<char*>(ptx), std::strlen(ptx) + 1, name, 0, nullptr,
                                nullptr);
  }
  CUresult complete(void** image, size_t* size) {
    reset_sizes();
    return CU(cuLinkComplete)(st, image, size);
  }
  size_t error_size() const { return reinterpret_cast<uintptr_t>(vals[1]); }
};

}  // namespace

TEST_CASE("driver: cuLinkComplete links PTX units: externs resolve, internal names stay apart", "[driver]") {
  Ctx ctx(0);
  Linker link;
  CU_OK(link.add(kLinkA, "a.ptx"));
  CU_OK(link.add(kLinkB, "b.ptx"));
  void* image = nullptr;
  size_t size = 0;
  CU_OK(link.complete(&image, &size));
  REQUIRE(image != nullptr);
  CHECK(link.error_log[0] == '\0');
  CHECK(link.error_size() == 0);

  // cuModuleLoadData → cuModuleGetFunction → cuLaunchKernel.
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoadData)(&m, image));
  CUfunction f = nullptr;
  CU_OK(CU(cuModuleGetFunction)(&f, m, "linked_kernel"));
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuModuleGetFunction)(&f, m, "add_bias"));  // a device function
  CU_OK(CU(cuModuleGetFunction)(&f, m, "linked_kernel"));
  CHECK(run_linked(f) == linked_expected(1000));
  // b's variable is the module's: what the host writes there, both units read.
  CUdeviceptr bias = 0;
  size_t bias_size = 0;
  CU_OK(CU(cuModuleGetGlobal_v2)(&bias, &bias_size, m, "bias"));
  CHECK(bias_size == 4);
  uint32_t value = 0;
  CU_OK(CU(cuMemcpyDtoH_v2)(&value, bias, sizeof value));
  CHECK(value == 1000);
  value = 1;
  CU_OK(CU(cuMemcpyHtoD_v2)(bias, &value, sizeof value));
  CHECK(run_linked(f) == linked_expected(1));
  CU_OK(CU(cuModuleUnload)(m));

  // The image holds no address: a copy loads as well (Numba copies it, CuPy caches it in a file),
  // after the linker is gone; and as a library.
  std::vector<unsigned char> copy(static_cast<unsigned char*>(image), static_cast<unsigned char*>(image) + size);
  CU_OK(CU(cuLinkDestroy)(link.st));
  link.st = nullptr;
  CU_OK(CU(cuModuleLoadData)(&m, copy.data()));
  CU_OK(CU(cuModuleGetFunction)(&f, m, "linked_kernel"));
  CHECK(run_linked(f) == linked_expected(1000));
  CU_OK(CU(cuModuleUnload)(m));
  CUlibrary lib = nullptr;
  CU_OK(CU(cuLibraryLoadData)(&lib, copy.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k = nullptr;
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuLibraryGetKernel)(&k, lib, "nope"));
  CU_OK(CU(cuLibraryGetKernel)(&k, lib, "linked_kernel"));
  CHECK(run_linked(reinterpret_cast<CUfunction>(k)) == linked_expected(1000));
  CU_OK(CU(cuLibraryUnload)(lib));

  // A damaged image is refused, never read past its end.
  std::vector<unsigned char> bad = copy;
  bad[22] = 0x7f;  // the size in its header: 2^54 bytes and more
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, bad.data()));
  bad = copy;
  bad[24 + 8 + 4] = 0x10;  // the first unit's length: past the image's end
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, bad.data()));
  bad = copy;
  bad[4] = 2;  // a version the fake does not know
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuModuleLoadData)(&m, bad.data()));
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuLibraryLoadData)(&lib, bad.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

TEST_CASE("driver: cuLinkComplete refuses two definitions of a name and a name defined nowhere", "[driver]") {
  Ctx ctx(0);
  void* image = nullptr;
  size_t size = 0;
  {
    Linker link;
    CU_OK(link.add(kLinkA, "a.ptx"));
    CU_OK(link.add(kLinkB, "b.ptx"));
    CU_OK(link.add(kLinkB, "b2.ptx"));
    CU_EQ(CUDA_ERROR_INVALID_PTX, link.complete(&image, &size));
    CHECK(std::string(link.error_log) ==
          "error   : Multiple definition of 'add_bias' in 'b2.ptx', first defined in 'b.ptx'");
    CHECK(link.error_size() == std::strlen(link.error_log));
  }
  {
    Linker link;
    CU_OK(link.add(kLinkA, "a.ptx"));
    CU_EQ(CUDA_ERROR_INVALID_PTX, link.complete(&image, &size));
    CHECK(std::string(link.error_log) == "error   : Undefined reference to 'add_bias' in 'a.ptx'");
    // Once b is there, the same link completes.
    CU_OK(link.add(kLinkB, "b.ptx"));
    CU_OK(link.complete(&image, &size));
    CHECK(link.error_log[0] == '\0');
  }
  {
    // A log buffer shorter than the message takes what fits, NUL-terminated.
    CUlinkState st = nullptr;
    char log[12];
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log})};
    CU_OK(CU(cuLinkCreate_v2)(2, opts, vals, &st));
    CU_OK(CU(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, const_cast<char*>(kLinkA), std::strlen(kLinkA) + 1, "a.ptx", 0,
                               nullptr, nullptr));
    CU_EQ(CUDA_ERROR_INVALID_PTX, CU(cuLinkComplete)(st, &image, nullptr));
    CHECK(std::string(log) == "error   : U");
    CHECK(reinterpret_cast<uintptr_t>(vals[1]) == 11);
    CU_OK(CU(cuLinkDestroy)(st));
  }
  {
    // PTX for a newer device than the context's is refused when it is added.
    Linker link;
    const char* newer = ".version 8.0\n.target sm_100\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
    CU_EQ(CUDA_ERROR_INVALID_PTX, link.add(newer, "newer.ptx"));
    CHECK(std::string(link.error_log) ==
          "error   : newer.ptx: not PTX for sm_80 (a .version first, then a .target the device runs)");
  }
  {
    // PTX the executor's parser does not read is kept, as a module load keeps it (its kernels
    // are recorded, not run); the link says so in its info log, and refuses no name it might
    // define.
    Linker link;
    const char* bad = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tadd.s32 %r1 %r2;\n}\n";
    CU_OK(link.add(kLinkA, "a.ptx"));
    CU_OK(link.add(bad, "bad.ptx"));
    CU_OK(link.complete(&image, &size));
    INFO(link.info_log);
    const std::string info = link.info_log;
    CHECK(info.rfind("info    : 'add_bias' (used in 'a.ptx') is defined by no PTX input; an input without PTX the "
                     "fake runs may define it\ninfo    : 'bias' (used in 'a.ptx') ",
                     0) == 0);
    CHECK(info.find("\ninfo    : 'bad.ptx': its PTX does not parse (line 6, column ") != std::string::npos);
    CUmodule m = nullptr;
    CU_OK(CU(cuModuleLoadData)(&m, image));
    CUfunction f = nullptr;
    CU_OK(CU(cuModuleGetFunction)(&f, m, "k"));
    CU_OK(CU(cuModuleUnload)(m));
  }
}

namespace {
// The files of directory `dir` (not . and ..).
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// The report of a process that links kLinkA + kLinkB and runs linked_kernel, with
// FAKEGPU_KERNEL_CACHE=dir: {"compiled": N, "loaded_from_cache": M}.
nlohmann::json compiler_books(const std::string& dir, const std::string& max = "") {
  std::vector<std::string> env = {"FAKEGPU_KERNEL_CACHE=" + dir};
  if (!max.empty()) env.push_back("FAKEGPU_KERNEL_CACHE_MAX=" + max);
  const auto report = nlohmann::json::parse(rtt::child_report("driver child: a linked kernel runs", env));
  return report.contains("kernel_compiler") ? report.at("kernel_compiler") : nlohmann::json();
}
}  // namespace

TEST_CASE("driver child: a linked kernel runs", "[.driver-child]") {
  Ctx ctx(0);
  Linker link;
  CU_OK(link.add(kLinkA, "a.ptx"));
  CU_OK(link.add(kLinkB, "b.ptx"));
  void* image = nullptr;
  CU_OK(link.complete(&image, nullptr));
  CUmodule m = nullptr;
  CU_OK(CU(cuModuleLoadData)(&m, image));
  CUfunction f = nullptr;
  CU_OK(CU(cuModuleGetFunction)(&f, m, "linked_kernel"));
  CHECK(run_linked(f) == linked_expected(1000));
  CU_OK(CU(cuModuleUnload)(m));
}

TEST_CASE("driver: FAKEGPU_KERNEL_CACHE keeps compiled kernels for the next process", "[driver]") {
  char tmpl[] = "/tmp/fakegpu-kcache-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string dir = std::string(tmpl) + "/cache";  // made by the backend
  const nlohmann::json compiled = {{"compiled", 1}, {"loaded_from_cache", 0}};
  const nlohmann::json loaded = {{"compiled", 0}, {"loaded_from_cache", 1}};
  CHECK(compiler_books(dir) == compiled);
  struct stat st {};
  REQUIRE(stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  const std::vector<std::string> files = files_in(dir);
  REQUIRE(files.size() == 1);
  const std::string file = dir + "/" + files[0];
  CHECK(files[0].size() == 64 + 7);  // <SHA-256 in hex>.kernel
  REQUIRE(stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // The next process compiles nothing, and its kernel computes the same (the child checks).
  CHECK(compiler_books(dir) == loaded);
  CHECK(compiler_books(dir) == loaded);

  // A damaged file (truncated; a flipped byte in the object; another file's bytes) is compiled
  // anew and rewritten.
  const std::string good = backend_test::read_file(file);
  auto write = [&](const std::string& bytes) { std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes; };
  write(good.substr(0, good.size() / 2));
  CHECK(compiler_books(dir) == compiled);
  CHECK(backend_test::read_file(file) == good);
  CHECK(compiler_books(dir) == loaded);
  std::string flipped = good;
  flipped[flipped.size() - 100] ^= 0x40;
  write(flipped);
  CHECK(compiler_books(dir) == compiled);
  CHECK(compiler_books(dir) == loaded);
  write("not a kernel at all");
  CHECK(compiler_books(dir) == compiled);
  CHECK(files_in(dir).size() == 1);  // no temporary file left behind

  // A directory others may write to is not used: kernels are compiled, nothing is stored.
  for (const std::string& f : files_in(dir)) std::remove((dir + "/" + f).c_str());
  REQUIRE(chmod(dir.c_str(), 0777) == 0);
  CHECK(compiler_books(dir) == compiled);
  CHECK(files_in(dir).empty());
  REQUIRE(rmdir(dir.c_str()) == 0);
  REQUIRE(rmdir(tmpl) == 0);
}

namespace {
// `file`'s modification time, and setting it `age` seconds into the past.
time_t modified(const std::string& file) {
  struct stat st {};
  return stat(file.c_str(), &st) == 0 ? st.st_mtime : 0;
}
void age(const std::string& file, time_t seconds) {
  const struct timespec t[2] = {{time(nullptr) - seconds, 0}, {time(nullptr) - seconds, 0}};
  REQUIRE(utimensat(AT_FDCWD, file.c_str(), t, 0) == 0);
}
}  // namespace

TEST_CASE("driver: FAKEGPU_KERNEL_CACHE keeps to FAKEGPU_KERNEL_CACHE_MAX, the least recently used going first",
          "[driver]") {
  char tmpl[] = "/tmp/fakegpu-kcache-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string dir = std::string(tmpl) + "/cache";
  const nlohmann::json compiled = {{"compiled", 1}, {"loaded_from_cache", 0}};
  const nlohmann::json loaded = {{"compiled", 0}, {"loaded_from_cache", 1}};
  REQUIRE(compiler_books(dir) == compiled);
  REQUIRE(files_in(dir).size() == 1);
  const std::string name = files_in(dir)[0], file = dir + "/" + name;
  const std::string bytes = backend_test::read_file(file);
  // Two older kernel files of the same size (two and one days unused), a temporary file a
  // writer left two hours ago and one being written now.
  const std::string older = dir + "/" + std::string(64, 'a') + ".kernel",
                    old = dir + "/" + std::string(64, 'b') + ".kernel";
  for (const std::string& f : {older, old, dir + "/.x.1.0.tmp", dir + "/.y.1.0.tmp"})
    std::ofstream(f, std::ios::binary) << bytes;
  age(older, 2 * 86400);
  age(old, 86400);
  age(dir + "/.x.1.0.tmp", 2 * 3600);
  // Room for two and a half such files. A load refreshes the file's time and removes nothing.
  const std::string max = std::to_string(bytes.size() * 5 / 2);
  age(file, 3 * 86400);
  const time_t before = time(nullptr);
  CHECK(compiler_books(dir, max) == loaded);
  CHECK(modified(file) >= before);
  CHECK(files_in(dir).size() == 5);
  // A store prunes: the oldest kernel file goes (three would not fit), and the stale temporary.
  REQUIRE(std::remove(file.c_str()) == 0);
  CHECK(compiler_books(dir, max) == compiled);
  // The files in `dir`, sorted, against `want` sorted.
  auto same_files = [&](std::vector<std::string> want) {
    std::vector<std::string> left = files_in(dir);
    std::sort(left.begin(), left.end());
    std::sort(want.begin(), want.end());
    return left == want;
  };
  CHECK(same_files({".y.1.0.tmp", name, std::string(64, 'b') + ".kernel"}));
  // Without room even for the kernel just written, everything else goes but that one.
  CHECK(std::remove(file.c_str()) == 0);
  CHECK(compiler_books(dir, "1K") == compiled);
  CHECK(same_files({".y.1.0.tmp", name}));
  // A limit that is no size keeps the default (1 GiB): nothing goes.
  for (const std::string& f : {older, old}) std::ofstream(f, std::ios::binary) << bytes;
  CHECK(std::remove(file.c_str()) == 0);
  CHECK(compiler_books(dir, "lots") == compiled);
  CHECK(files_in(dir).size() == 4);
  for (const std::string& f : files_in(dir)) std::remove((dir + "/" + f).c_str());
  REQUIRE(rmdir(dir.c_str()) == 0);
  REQUIRE(rmdir(tmpl) == 0);
}

TEST_CASE("driver: libraries and kernels", "[driver]") {
  Ctx ctx(0);
  CUlibrary lib = nullptr;
  CU_OK(CU(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k = nullptr, k2 = nullptr;
  CU_OK(CU(cuLibraryGetKernel)(&k, lib, "add_one"));
  CU_OK(CU(cuLibraryGetKernel)(&k2, lib, "add_one"));
  CHECK(k == k2);
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuLibraryGetKernel)(&k2, lib, "nope"));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLibraryGetKernel)(nullptr, lib, "add_one"));
  CUmodule m = nullptr;
  CU_OK(CU(cuLibraryGetModule)(&m, lib));
  CUfunction f = nullptr, fm = nullptr;
  CU_OK(CU(cuKernelGetFunction)(&f, k));
  CU_OK(CU(cuModuleGetFunction)(&fm, m, "add_one"));
  CHECK(f == fm);
  int v = 0;
  CU_OK(CU(cuKernelGetAttribute)(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0));
  CHECK(v == 1024);
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuKernelGetAttribute)(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 1000));
  // A CUkernel may be launched as a CUfunction (CUDA 12); its parameter is needed.
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuLaunchKernel)(reinterpret_cast<CUfunction>(k), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  CUdeviceptr none = 0;
  void* args[1] = {&none};
  CU_OK(CU(cuLaunchKernel)(reinterpret_cast<CUfunction>(k), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  // The library loads into another context on first use there.
  {
    Ctx other(0);
    CUfunction fo = nullptr;
    CU_OK(CU(cuKernelGetFunction)(&fo, k));
    CHECK(fo != f);
  }
  CU_OK(CU(cuLibraryUnload)(lib));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLibraryUnload)(lib));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuKernelGetFunction)(&f, k));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLibraryGetModule)(&m, lib));
  CU_EQ(CUDA_ERROR_INVALID_IMAGE, CU(cuLibraryLoadData)(&lib, "junk", nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLibraryLoadData)(nullptr, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  // Loading needs no context.
  clear_stack();
  CU_OK(CU(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU_OK(CU(cuLibraryGetKernel)(&k, lib, "scale"));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuKernelGetFunction)(&f, k));
  CU_OK(CU(cuLibraryUnload)(lib));
}

TEST_CASE("driver: launches are validated and recorded", "[driver]") {
  Ctx ctx(0);
  Module mod(kPtx);
  CUfunction f = mod.fn("add_one");
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  CU_OK(CU(cuLaunchKernel)(f, 4, 2, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  CU_OK(CU(cuLaunchKernel_ptsz)(f, 1, 1, 1, 1024, 1, 1, 4096, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 0, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 0, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 1, 1, 65, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 65536, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 49153, nullptr, params, nullptr));
  CU_OK(CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
  CU_OK(CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 60000, nullptr, params, nullptr));  // opted in
  // Arguments through `extra`.
  unsigned char buf[8] = {};
  size_t buf_size = sizeof buf;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &buf_size, CU_LAUNCH_PARAM_END};
  CU_OK(CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, extra));
  void* bad_extra[] = {reinterpret_cast<void*>(uintptr_t{9}), buf, CU_LAUNCH_PARAM_END};
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, bad_extra));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLaunchKernel)(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuLaunchKernel)(reinterpret_cast<CUfunction>(&arg), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE,
        CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(&arg), params, nullptr));
  // A function of one context cannot be launched in another.
  {
    Ctx other(0);
    CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  }
  // Launches are stream-ordered.
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(s));
  gate.open = true;
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuStreamDestroy_v2)(s));

  // cuLaunchKernelEx and its attributes.
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  CU_OK(CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attr.value.priority = -1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CU_OK(CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  cfg.gridDimX = 4;
  if (default_config()) CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));  // sm_80
  attr.id = static_cast<CUlaunchAttributeID>(99);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));
  cfg.attrs = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernelEx)(nullptr, f, params, nullptr));
  cfg.numAttrs = 0;
  cfg.blockDimX = 2048;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));

  if (default_config()) {
    // Cooperative grids must fit on the device at once: 8 blocks of 256 threads per SM x 108.
    CU_OK(CU(cuLaunchCooperativeKernel)(f, 864, 1, 1, 256, 1, 1, 0, nullptr, params));
    CU_EQ(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
          CU(cuLaunchCooperativeKernel)(f, 865, 1, 1, 256, 1, 1, 0, nullptr, params));
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.blockDimX = 256;
    cfg.gridDimX = 865;
    CU_EQ(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, CU(cuLaunchKernelEx)(&cfg, f, params, nullptr));
  }
}

TEST_CASE("driver: occupancy", "[driver]") {
  if (!default_config()) return;  // the numbers are an A100's
  Ctx ctx(0);
  Module mod(kPtx);
  CUfunction f = mod.fn("scale");  // 32 registers, no static shared memory
  int blocks = -1;
  const struct {
    int block;
    size_t smem;
    int expect;
  } cases[] = {
      {32, 0, 32},      // the 32-blocks-per-SM limit
      {256, 0, 8},      // 2048 threads per SM
      {1024, 0, 2},     // and 64K registers
      {1025, 0, 0},     // too large a block
      {256, 49152, 3},  // 48 KiB + 1 KiB reserved per block out of 164 KiB
      {128, 16384, 9},  // 17 KiB per block
      {96, 0, 21},      // 3 warps per block
  };
  for (const auto& c : cases) {
    INFO("block " << c.block << " smem " << c.smem);
    CU_OK(CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&blocks, f, c.block, c.smem));
    CHECK(blocks == c.expect);
  }
  CU_OK(CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(&blocks, f, 256, 0,
                                                                 CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
  CHECK(blocks == 8);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(&blocks, f, 256, 0, 2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(nullptr, f, 256, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&blocks, f, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&blocks, nullptr, 256, 0));

  int grid = -1, block = -1;
  CU_OK(CU(cuOccupancyMaxPotentialBlockSize)(&grid, &block, f, nullptr, 0, 0));
  CHECK(block == 1024);
  CHECK(grid == 2 * 108);
  CU_OK(CU(cuOccupancyMaxPotentialBlockSize)(&grid, &block, f, nullptr, 0, 100));
  CHECK(block == 64);  // 100 -> 96 -> 64: the first to fill the SM
  CHECK(grid == 32 * 108);
  g_b2d_calls = 0;
  CU_OK(CU(cuOccupancyMaxPotentialBlockSize)(&grid, &block, f, &no_dynamic_smem, 12345, 0));
  CHECK(block == 1024);
  CHECK(g_b2d_calls >= 1);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyMaxPotentialBlockSize)(nullptr, &block, f, nullptr, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyMaxPotentialBlockSize)(&grid, nullptr, f, nullptr, 0, 0));

  // At most what the function allows (48 KiB until raised), as a real H200 answers; blocks
  // that can never be resident together are an invalid value.
  size_t dyn = 0;
  CU_OK(CU(cuOccupancyAvailableDynamicSMemPerBlock)(&dyn, f, 1, 256));
  CHECK(dyn == 49152);
  CU_OK(CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 166912));
  CU_OK(CU(cuOccupancyAvailableDynamicSMemPerBlock)(&dyn, f, 1, 256));
  CHECK(dyn == 166912);
  CU_OK(CU(cuOccupancyAvailableDynamicSMemPerBlock)(&dyn, f, 2, 256));
  CHECK(dyn == 82944);  // 167936 / 2 - 1024 reserved
  CU_OK(CU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyAvailableDynamicSMemPerBlock)(&dyn, f, 9, 256));  // never fit
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuOccupancyAvailableDynamicSMemPerBlock)(nullptr, f, 1, 256));
}
