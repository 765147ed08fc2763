// SPDX-License-Identifier: Apache-2.0
// The bad-input matrix: every exported CUDA Driver, Runtime and NVML function of the API
// lists called with each bad argument its parameters admit (gen_matrix.py generates the
// cases from the .def lists and the prototypes), asserting for each case:
//   - no crash: the cases of one function run in a forked child; a signal ends that child,
//     and the next child goes on after the case that killed it (after a case that succeeded,
//     too: it may have changed the fixture);
//   - no hang: a case that has not answered within kCaseTimeout is killed the same way;
//   - no write outside an allocation: canary bytes around every buffer the call gets
//     (out-pointers, host bytes, the device allocation and its neighbours) and every input
//     buffer it may only read are checked after the call;
//   - the documented code: the rule table of gen_matrix.py, per-function answers from
//     expectations.txt; a NOT_SUPPORTED stub answers NOT_SUPPORTED to every case.
//
//   badinput_matrix [--family driver|runtime|nvml] [--only NAME]... [-v] [--valid]
//
// Prints one line per failure and the totals; exits 1 on any crash, hang, canary violation,
// wrong code or expected failure that passes (remove it from expectations.txt).
//
// --valid calls each implemented function once with every argument valid (the fixture's
// values, no case) and prints the ones that do not answer success: there the fixture's
// values refuse the call by themselves, so a case may stop at them before the parameter it
// names (fix the value in gen_matrix.py's OVERRIDES or make_valid(), or know why); it calls
// once more with each valid descriptor of another kind the field cases start from (a linear
// resource where make_valid() makes an array one) and counts those refused apart.
#include "badinput/matrix.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

namespace badinput::gen {
#include "badinput_cases.inc"
}  // namespace badinput::gen

namespace badinput {
namespace {

constexpr int kCaseTimeoutMs = 10000;
constexpr unsigned char kCanary = 0xA5;
constexpr size_t kGuard = 64;  // canary bytes before and after each host buffer

// PTX with one kernel and two variables (one managed): the module, function, library and
// kernel handles come from it.
const char* const kPtx = R"(
.version 8.0
.target sm_70
.address_size 64

.global .align 8 .b8 fx_global[64];
.global .attribute(.managed) .align 8 .b8 fx_managed[64];

.visible .entry add_one(
	.param .u64 add_one_param_0
)
{
	ret;
}
)";

// The same PTX in a fat binary (magic 0xBA55ED50, one uncompressed PTX entry for sm_70), as
// cuModuleLoadFatBinary takes it.
std::vector<unsigned char> fatbin_of_ptx() {
  const size_t text = std::strlen(kPtx);
  const uint64_t payload = (text + 8) / 8 * 8;  // NUL-padded to 8 bytes
  constexpr size_t kHeader = 16, kEntry = 0x40;
  const uint64_t body = kEntry + payload;
  const uint16_t kind = 1;  // PTX
  const uint32_t entry_size = kEntry, arch = 70;
  const uint64_t flags = 0x11;
  std::vector<unsigned char> out(kHeader + body, 0);
  const unsigned char magic[8] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
  std::memcpy(out.data(), magic, sizeof magic);
  std::memcpy(out.data() + 8, &body, 8);
  unsigned char* e = out.data() + kHeader;
  std::memcpy(e, &kind, 2);
  std::memcpy(e + 4, &entry_size, 4);
  std::memcpy(e + 8, &payload, 8);
  std::memcpy(e + 0x1c, &arch, 4);
  std::memcpy(e + 0x28, &flags, 8);
  std::memcpy(e + kEntry, kPtx, text);
  return out;
}

// ---- host buffers with guards --------------------------------------------------------------------
// Layout: [guard][slot 0][guard][slot 1][guard] ... : kSlots out slots, then the input bytes,
// the zeroed input, the host bytes, the text and the descriptors.
enum Region { kInBytes = kSlots, kInZero, kHost, kText, kDesc, kNodes, kRegions };
constexpr size_t kNodeList = kSlotSize / 4;  // bytes of each list in the kNodes region
constexpr size_t kStride = kGuard + kSlotSize;

unsigned char* region(unsigned char* base, int r) { return base + kGuard + static_cast<size_t>(r) * kStride; }

const char* const kTextValue = "0000:07:00.0";  // a PCI bus id string: also a plain name

const unsigned char* g_fx_desc_shadow();
const uint64_t* g_fx_edge_nodes();

// The node lists (Fixture::node_list): one node each, zeros after it.
void fill_nodes(unsigned char* list) {
  for (int k = 0; k < 3; ++k) std::memcpy(list + k * kNodeList, g_fx_edge_nodes() + k, sizeof(uint64_t));
}

void fill_host(unsigned char* base) {
  std::memset(base, kCanary, kStride * kRegions + kGuard);
  for (int r = 0; r < kRegions; ++r) std::memset(region(base, r), 0, kSlotSize);
  std::memset(region(base, kInBytes), 0x11, kSlotSize);
  std::memcpy(region(base, kText), kTextValue, std::strlen(kTextValue) + 1);
  fill_nodes(region(base, kNodes));
}

// Which guard or read-only buffer changed: "" when none.
std::string check_host(unsigned char* base) {
  for (int r = 0; r <= kRegions; ++r) {
    const unsigned char* g = base + static_cast<size_t>(r) * kStride;
    for (size_t i = 0; i < kGuard; ++i)
      if (g[i] != kCanary) return "host guard before buffer " + std::to_string(r);
  }
  for (size_t i = 0; i < kSlotSize; ++i) {
    if (region(base, kInBytes)[i] != 0x11) return "a const input buffer (bytes)";
    if (region(base, kInZero)[i] != 0) return "a const input buffer (zeroed descriptor or array)";
  }
  if (std::strcmp(reinterpret_cast<char*>(region(base, kText)), kTextValue) != 0) return "a const input string";
  if (std::memcmp(region(base, kDesc), g_fx_desc_shadow(), kSlotSize) != 0) return "a const input descriptor";
  unsigned char nodes[kSlotSize] = {};
  fill_nodes(nodes);
  if (std::memcmp(region(base, kNodes), nodes, kSlotSize) != 0) return "a const input node list";
  return "";
}

// ---- the device allocation: three neighbouring blocks, the middle one used -----------------------
uintptr_t g_blocks[3] = {};
uintptr_t g_src = 0;        // the source of descriptor copies: bytes no canary has
uint64_t g_kernel_arg = 0;  // the fixture kernel's one argument
void* g_kernel_params[] = {&g_kernel_arg};
constexpr unsigned char kSourceByte = 0x5A;

void fill_device() {
  for (uintptr_t b : g_blocks) std::memset(reinterpret_cast<void*>(b), kCanary, kBlock);
  std::memset(reinterpret_cast<void*>(g_blocks[1]), 0, kAllocSize);
  std::memset(reinterpret_cast<void*>(g_src), kSourceByte, kAllocSize);
}
std::string check_device() {
  for (int k = 0; k < 3; ++k) {
    const auto* p = reinterpret_cast<const unsigned char*>(g_blocks[k]);
    for (size_t i = k == 1 ? kAllocSize : 0; i < kBlock; ++i)
      if (p[i] != kCanary)
        return k == 1 ? "device bytes past the allocation's end" : "a neighbouring device allocation";
  }
  return "";
}

}  // namespace

// ---- Fixture's value producers ---------------------------------------------------------------------
void* Fixture::sym(Lib lib, const char* name, const char* node) {
  void* h = libs[static_cast<int>(lib)];
  void* p = node ? dlvsym(h, name, node) : dlsym(h, name);
  if (!p) {
    std::fprintf(stderr, "badinput: missing export %s%s%s\n", name, node ? "@" : "", node ? node : "");
    _exit(4);
  }
  return p;
}
uint64_t Fixture::handle(Hk k, Mut m) const {
  const bool value_kind = k == Hk::memhandle || k == Hk::texobj || k == Hk::surfobj;
  if (m == Mut::garbage) return value_kind ? kGarbageValue : kGarbagePtr;
  if (m == Mut::destroyed) return destroyed[static_cast<int>(k)];
  return valid[static_cast<int>(k)];
}
uint64_t Fixture::dptr(Mut m) const {
  if (m == Mut::garbage) return kGarbagePtr;
  if (m == Mut::wrap) return dev + kAllocSize - 1000;
  return dev;
}
void* Fixture::out_slot(int i, Mut m) {
  if (m == Mut::null) return nullptr;
  return region(slots, i % kSlots);
}
const void* Fixture::in_bytes(bool text) const { return region(slots, text ? kText : kInBytes); }
uint64_t Fixture::node_list(int k) const {
  return reinterpret_cast<uintptr_t>(region(slots, kNodes) + static_cast<size_t>(k) * kNodeList);
}
const void* Fixture::in_zero() const { return region(slots, kInZero); }
void* Fixture::host_bytes() { return region(slots, kHost); }
size_t Fixture::size(Mut m) const {
  switch (m) {
    case Mut::huge: return SIZE_MAX;
    case Mut::past_end: return kAllocSize + 1;
    case Mut::wrap: return SIZE_MAX - 500;  // from 1000 bytes before the end: past the top of the address space
    case Mut::zero: return 0;
    default: return kValidSize;
  }
}
uint64_t Fixture::field_value(Fc c, Mut m, uint64_t cur, uint64_t unit) const {
  switch (m) {
    case Mut::zero:
    case Mut::null: return 0;
    case Mut::huge: return UINT64_MAX;
    case Mut::past_end: return cur + 1;
    case Mut::small: return 1;
    // A position wraps to one block below its base (a neighbouring allocation); any other
    // field times its unit wraps to 0.
    case Mut::wrap: return c == Fc::pos ? (0 - kBlock) / unit : UINT64_MAX / unit + 1;
    case Mut::garbage:
      return c == Fc::dptr || c == Fc::array || c == Fc::stream || c == Fc::func ? kGarbagePtr : kGarbageValue;
    case Mut::destroyed: return destroyed[static_cast<int>(c == Fc::array ? Hk::array : Hk::stream)];
    case Mut::out_of_range: return c == Fc::devicef ? 1000 : c == Fc::elem || c == Fc::channels ? 3 : 0x7fffff00u;
    default: return cur;
  }
}
unsigned char* Fixture::desc_area(int i) {
  if (i < 0 || static_cast<size_t>(i) >= kSlotSize / kDescStride) _exit(6);
  return region(slots, kDesc) + static_cast<size_t>(i) * kDescStride;
}
void Fixture::desc_written(int i, size_t n) {
  std::memcpy(desc_shadow + static_cast<size_t>(i) * kDescStride, desc_area(i), n);
}
const unsigned char* Fixture::desc_settle() {
  for (int i = 0; i < static_cast<int>(std::size(desc_out_)); ++i)
    if (desc_out_[i]) desc_written(i, desc_out_[i]);
  return desc_shadow;
}
void Fixture::desc_reset() {
  std::memset(desc_shadow, 0, sizeof desc_shadow);
  std::memset(desc_out_, 0, sizeof desc_out_);
}

namespace {

const char* mut_name(Mut m) {
  switch (m) {
    case Mut::none: return "valid";
    case Mut::null: return "NULL";
    case Mut::garbage: return "garbage";
    case Mut::destroyed: return "destroyed";
    case Mut::out_of_range: return "out-of-range";
    case Mut::unknown_bits: return "unknown-bits";
    case Mut::huge: return "SIZE_MAX";
    case Mut::past_end: return "past-end";
    case Mut::wrap: return "wrapping";
    case Mut::zero: return "zero";
    case Mut::small: return "small";
    case Mut::unaligned: return "unaligned";
    case Mut::both: return "both";
  }
  return "?";
}

Fixture g_fx;

template <class F>
F bind(Lib lib, const char* name, const char* node = nullptr) {
  return reinterpret_cast<F>(g_fx.sym(lib, name, node));
}
#define DRV(name) bind<decltype(&fgimpl_##name)>(Lib::cuda, #name)
#define RT(name) bind<decltype(&fgimpl_##name)>(Lib::cudart, #name, "libcudart.so.13")
#define NV(name) bind<decltype(&fgimpl_##name)>(Lib::nvml, #name)

[[noreturn]] void setup_failed(const char* what, long long code) {
  std::fprintf(stderr, "badinput: fixture: %s returned %lld\n", what, code);
  _exit(3);
}
#define SETUP(call)                                     \
  do {                                                  \
    const long long rc_ = static_cast<long long>(call); \
    if (rc_ != 0) setup_failed(#call, rc_);             \
  } while (0)

void set(Hk k, uint64_t v) { g_fx.valid[static_cast<int>(k)] = v; }
void set_destroyed(Hk k, uint64_t v) { g_fx.destroyed[static_cast<int>(k)] = v; }
template <class T>
uint64_t bits(T v) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<uintptr_t>(v);
  else
    return static_cast<uint64_t>(v);
}

// Live objects of every kind the fixture can make, then one of each kind made and destroyed
// (after the live ones, so no live object reuses a destroyed one's address).
void build_fixture() {
  using namespace fgapi;
  SETUP(DRV(cuInit)(0));
  CUcontext ctx = nullptr;
  SETUP(DRV(cuDevicePrimaryCtxRetain)(&ctx, 0));
  SETUP(DRV(cuCtxSetCurrent)(ctx));
  SETUP(RT(cudaSetDevice)(0));
  set(Hk::ctx, bits(ctx));

  for (uintptr_t& b : g_blocks) {
    CUdeviceptr p = 0;
    SETUP(DRV(cuMemAlloc_v2)(&p, kAllocSize));
    b = p;
  }
  g_fx.dev = g_blocks[1];
  CUdeviceptr src = 0;
  SETUP(DRV(cuMemAlloc_v2)(&src, kAllocSize));
  g_fx.src = g_src = src;
  CUdeviceptr managed = 0;
  SETUP(DRV(cuMemAllocManaged)(&managed, kAllocSize, CU_MEM_ATTACH_GLOBAL));
  g_fx.managed = managed;
  g_fx.kernel_params = g_kernel_params;
  g_fx.ptx = kPtx;
  static const std::vector<unsigned char> fatbin_ptx = fatbin_of_ptx();
  g_fx.fatbin = fatbin_ptx.data();
  void* pinned = nullptr;
  SETUP(DRV(cuMemHostAlloc)(&pinned, kSlotSize, 0));
  g_fx.pinned = bits(pinned);
  static unsigned char host_registered[kSlotSize];
  SETUP(DRV(cuMemHostRegister_v2)(host_registered, sizeof host_registered, 0));
  g_fx.registered = bits(host_registered);
  CUcontext peer = nullptr;
  SETUP(DRV(cuDevicePrimaryCtxRetain)(&peer, kPeerDevice));
  g_fx.peer_ctx = bits(peer);
  // What nvcc's static constructors register: a host stub for the kernel and a __device__
  // variable of kAllocSize bytes (an image without code: the launches take the kernel handle).
  static char fatbin[16], host_stub, symbol[kAllocSize];
  static char kernel_name[] = "add_one", symbol_name[] = "fx_symbol";
  void** registered = RT(__cudaRegisterFatBinary)(fatbin);
  if (!registered) setup_failed("__cudaRegisterFatBinary", 0);
  RT(__cudaRegisterFunction)
  (registered, &host_stub, kernel_name, kernel_name, -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  RT(__cudaRegisterVar)(registered, symbol, symbol_name, symbol_name, 0, kAllocSize, 0, 0);
  RT(__cudaRegisterFatBinaryEnd)(registered);
  g_fx.host_stub = bits(&host_stub);
  g_fx.symbol = bits(symbol);

  auto make_objects = [&](bool destroy) {
    auto put = destroy ? set_destroyed : set;
    CUstream s = nullptr;
    SETUP(DRV(cuStreamCreate)(&s, 0));
    CUevent e = nullptr;
    SETUP(DRV(cuEventCreate)(&e, 0));
    if (!destroy) SETUP(DRV(cuEventRecord)(e, s));  // recorded (and complete): elapsed times can be asked
    CUmodule mod = nullptr;
    SETUP(DRV(cuModuleLoadData)(&mod, kPtx));
    CUfunction f = nullptr;
    SETUP(DRV(cuModuleGetFunction)(&f, mod, "add_one"));
    CUlibrary lib = nullptr;
    SETUP(DRV(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k = nullptr;
    SETUP(DRV(cuLibraryGetKernel)(&k, lib, "add_one"));
    CUgraph g = nullptr;
    SETUP(DRV(cuGraphCreate)(&g, 0));
    CUgraphNode n = nullptr, to = nullptr, other = nullptr;
    SETUP(DRV(cuGraphAddEmptyNode)(&n, g, nullptr, 0));
    SETUP(DRV(cuGraphAddEmptyNode)(&to, g, &n, 1));
    SETUP(DRV(cuGraphAddEmptyNode)(&other, g, nullptr, 0));
    if (!destroy) g_fx.edge_nodes = {bits(n), bits(to), bits(other)};
    CUgraphExec x = nullptr;
    SETUP(DRV(cuGraphInstantiateWithFlags)(&x, g, 0));
    CUmemPoolProps pp{};
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemoryPool pool = nullptr;
    SETUP(DRV(cuMemPoolCreate)(&pool, &pp));
    CUmemAllocationProp ap{};
    ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    SETUP(DRV(cuMemGetAllocationGranularity)(&gran, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle mh = 0;
    SETUP(DRV(cuMemCreate)(&mh, gran, &ap, 0));
    CUlinkState link = nullptr;
    SETUP(DRV(cuLinkCreate_v2)(0, nullptr, nullptr, &link));
    if (!destroy)  // something to link
      SETUP(DRV(cuLinkAddData_v2)(link, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), std::strlen(kPtx) + 1, "fixture", 0,
                                  nullptr, nullptr));
    CUuserObject uo = nullptr;
    SETUP(DRV(cuUserObjectCreate)(
        &uo, g_fx.host_bytes(), [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    nvmlEventSet_t es = nullptr;
    SETUP(NV(nvmlEventSetCreate)(&es));
    // A CUDA array of 64 × 8 floats (256-byte rows, 2048 bytes) that surfaces may use: the
    // valid offsets, counts and boxes (kValidSize; rows as gen_matrix.py's OVERRIDES give
    // them) fit it, past_end ones (kAllocSize + 1) do not.
    CUDA_ARRAY3D_DESCRIPTOR ad{kArrayWidth, kArrayHeight, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST};
    CUarray arr = nullptr;
    SETUP(DRV(cuArray3DCreate_v2)(&arr, &ad));
    // A texture (point sampling, wrapping) and a surface of it; a texture with a view of the
    // whole array, to read a view back from.
    CUDA_RESOURCE_DESC rd{};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = arr;
    CUDA_TEXTURE_DESC td{};
    CUtexObject tex = 0;
    SETUP(DRV(cuTexObjectCreate)(&tex, &rd, &td, nullptr));
    CUsurfObject surf = 0;
    SETUP(DRV(cuSurfObjectCreate)(&surf, &rd));
    if (!destroy) {
      CUDA_RESOURCE_VIEW_DESC view{};
      view.width = kArrayWidth, view.height = kArrayHeight;
      CUtexObject viewed = 0;
      SETUP(DRV(cuTexObjectCreate)(&viewed, &rd, &td, &view));
      g_fx.view_tex = viewed;
    }
    put(Hk::stream, bits(s));
    put(Hk::texobj, tex);
    put(Hk::surfobj, surf);
    put(Hk::array, bits(arr));
    put(Hk::event, bits(e));
    put(Hk::module, bits(mod));
    put(Hk::function, bits(f));
    put(Hk::library, bits(lib));
    put(Hk::kernel, bits(k));
    put(Hk::graph, bits(g));
    put(Hk::node, bits(n));
    put(Hk::exec, bits(x));
    put(Hk::pool, bits(pool));
    put(Hk::memhandle, bits(mh));
    put(Hk::link, bits(link));
    if (!destroy) SETUP(DRV(cuGraphRetainUserObject)(g, uo, 1, 0));  // a reference the graph can release
    put(Hk::userobj, bits(uo));
    put(Hk::nvml_eventset, bits(es));
    if (!destroy) return;
    SETUP(DRV(cuStreamDestroy_v2)(s));
    SETUP(DRV(cuEventDestroy_v2)(e));
    SETUP(DRV(cuModuleUnload)(mod));
    SETUP(DRV(cuLibraryUnload)(lib));
    SETUP(DRV(cuGraphExecDestroy)(x));
    SETUP(DRV(cuGraphDestroy)(g));
    SETUP(DRV(cuMemPoolDestroy)(pool));
    SETUP(DRV(cuMemRelease)(mh));
    SETUP(DRV(cuLinkDestroy)(link));
    SETUP(DRV(cuUserObjectRelease)(uo, 1));
    SETUP(NV(nvmlEventSetFree)(es));
    SETUP(DRV(cuTexObjectDestroy)(tex));
    SETUP(DRV(cuSurfObjectDestroy)(surf));
    SETUP(DRV(cuArrayDestroy)(arr));
  };
  SETUP(NV(nvmlInit_v2)());
  nvmlDevice_t nd = nullptr;
  SETUP(NV(nvmlDeviceGetHandleByIndex_v2)(0, &nd));
  set(Hk::nvml_device, bits(nd));
  SETUP(NV(nvmlDeviceGetUUID)(nd, g_fx.nvml_uuid, sizeof g_fx.nvml_uuid));
  make_objects(false);
  g_fx.graph_nodes();          // before the destroyed objects, so that no node reuses a destroyed one's address
  CUstream capture = nullptr;  // the same for the stream of capturing_stream() and the context
  SETUP(DRV(cuStreamCreate)(&capture, CU_STREAM_NON_BLOCKING));
  g_fx.capture_stream = bits(capture);
  CUcontext own = nullptr;
  SETUP(DRV(cuCtxCreate_v4)(&own, nullptr, 0, 0));
  SETUP(DRV(cuCtxSetCurrent)(ctx));
  g_fx.own_ctx = bits(own);
  make_objects(true);
  CUcontext dead = nullptr;
  SETUP(DRV(cuCtxCreate_v4)(&dead, nullptr, 0, 0));
  SETUP(DRV(cuCtxDestroy_v2)(dead));
  SETUP(DRV(cuCtxSetCurrent)(ctx));
  set_destroyed(Hk::ctx, bits(dead));
}

const unsigned char* g_fx_desc_shadow() { return g_fx.desc_settle(); }
const uint64_t* g_fx_edge_nodes() { return g_fx.edge_nodes.data(); }

}  // namespace

// ---- valid descriptors ---------------------------------------------------------------------------
// Copies read the last bytes of the source allocation and write the last bytes of the
// fixture's allocation (matrix.h kBox*).
namespace {
uint64_t box_src(const Fixture& fx, size_t span) { return fx.src + kAllocSize - span; }
uint64_t box_dst(const Fixture& fx, size_t span) { return fx.dev + kAllocSize - span; }
}  // namespace

void make_valid(Fixture& fx, fgapi::CUDA_MEMCPY3D& s) {
  s.srcMemoryType = fgapi::CU_MEMORYTYPE_DEVICE;
  s.srcDevice = box_src(fx, kBoxSpan);
  s.srcPitch = kBoxPitch;
  s.srcHeight = kBoxRows;
  s.dstMemoryType = fgapi::CU_MEMORYTYPE_DEVICE;
  s.dstDevice = box_dst(fx, kBoxSpan);
  s.dstPitch = kBoxPitch;
  s.dstHeight = kBoxRows;
  s.WidthInBytes = kBoxWidth;
  s.Height = kBoxRows;
  s.Depth = kBoxDepth;
}
void make_valid(Fixture& fx, fgapi::CUDA_MEMCPY2D& s) {
  s.srcMemoryType = fgapi::CU_MEMORYTYPE_DEVICE;
  s.srcDevice = box_src(fx, kBoxSpan2D);
  s.srcPitch = kBoxPitch;
  s.dstMemoryType = fgapi::CU_MEMORYTYPE_DEVICE;
  s.dstDevice = box_dst(fx, kBoxSpan2D);
  s.dstPitch = kBoxPitch;
  s.WidthInBytes = kBoxWidth;
  s.Height = kBoxRows;
}
void make_valid(Fixture& fx, fgapi::cudaPitchedPtr& s) {
  s = {reinterpret_cast<void*>(box_dst(fx, kBoxSpan)), kBoxPitch, kBoxWidth, kBoxRows};
}
void make_valid(Fixture&, fgapi::cudaExtent& s) { s = {kBoxWidth, kBoxRows, kBoxDepth}; }
void make_valid(Fixture&, fgapi::dim3& s) { s = {1, 1, 1}; }
void make_valid(Fixture& fx, fgapi::cudaMemcpy3DParms& s) {
  s.srcPtr = {reinterpret_cast<void*>(box_src(fx, kBoxSpan)), kBoxPitch, kBoxWidth, kBoxRows};
  make_valid(fx, s.dstPtr);
  make_valid(fx, s.extent);
  s.kind = fgapi::cudaMemcpyDeviceToDevice;
}
void make_valid(Fixture& fx, fgapi::cudaMemcpy3DPeerParms& s) {
  s.srcPtr = {reinterpret_cast<void*>(box_src(fx, kBoxSpan)), kBoxPitch, kBoxWidth, kBoxRows};
  make_valid(fx, s.dstPtr);
  make_valid(fx, s.extent);
  s.srcDevice = s.dstDevice = 0;
}
void make_valid(Fixture& fx, fgapi::CUDA_MEMSET_NODE_PARAMS& s) {
  s = {box_dst(fx, kBoxSpan2D), kBoxPitch, 0x5a, static_cast<unsigned>(kSetElem), kBoxWidth / kSetElem, kBoxRows};
}
void make_valid(Fixture& fx, fgapi::cudaMemsetParams& s) {
  s = {reinterpret_cast<void*>(box_dst(fx, kBoxSpan2D)),
       kBoxPitch,
       0x5a,
       static_cast<unsigned>(kSetElem),
       kBoxWidth / kSetElem,
       kBoxRows};
}
void make_valid(Fixture&, fgapi::CUmemAccessDesc& s) {
  s.location = {fgapi::CU_MEM_LOCATION_TYPE_DEVICE, 0};
  s.flags = fgapi::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}
void make_valid(Fixture&, fgapi::cudaMemAccessDesc& s) {
  s.location = {fgapi::cudaMemLocationTypeDevice, 0};
  s.flags = fgapi::cudaMemAccessFlagsProtReadWrite;
}
void make_valid(Fixture& fx, fgapi::CUlaunchConfig& s) {
  s.gridDimX = s.gridDimY = s.gridDimZ = 1;
  s.blockDimX = s.blockDimY = s.blockDimZ = 1;
  s.hStream = reinterpret_cast<fgapi::CUstream>(fx.valid[static_cast<int>(Hk::stream)]);
}
void make_valid(Fixture& fx, fgapi::cudaLaunchConfig_t& s) {
  s.gridDim = {1, 1, 1};
  s.blockDim = {1, 1, 1};
  s.stream = reinterpret_cast<fgapi::cudaStream_t>(fx.valid[static_cast<int>(Hk::stream)]);
}

// A launch of the fixture's kernel (add_one: one u64 parameter) over one thread.
namespace {
void host_noop(void*) {}
template <class S>
void make_valid_kernel_node(Fixture& fx, S& s) {
  s.func = reinterpret_cast<decltype(s.func)>(fx.valid[static_cast<int>(Hk::function)]);
  s.gridDimX = s.gridDimY = s.gridDimZ = 1;
  s.blockDimX = s.blockDimY = s.blockDimZ = 1;
  s.kernelParams = fx.kernel_params;
}
}  // namespace
void make_valid(Fixture& fx, fgapi::CUDA_KERNEL_NODE_PARAMS_v1& s) { make_valid_kernel_node(fx, s); }
void make_valid(Fixture& fx, fgapi::CUDA_KERNEL_NODE_PARAMS& s) { make_valid_kernel_node(fx, s); }
void make_valid(Fixture& fx, fgapi::cudaKernelNodeParams& s) {
  s.func = reinterpret_cast<void*>(fx.valid[static_cast<int>(Hk::function)]);
  s.gridDim = {1, 1, 1};
  s.blockDim = {1, 1, 1};
  s.kernelParams = fx.kernel_params;
}
void make_valid(Fixture&, fgapi::CUDA_HOST_NODE_PARAMS& s) { s.fn = host_noop; }
void make_valid(Fixture&, fgapi::cudaHostNodeParams& s) { s.fn = host_noop; }
// Pinned device memory on device 0, as cuMemCreate and memory pools take it.
void make_valid(Fixture&, fgapi::CUmemLocation& s) { s = {fgapi::CU_MEM_LOCATION_TYPE_DEVICE, 0}; }
void make_valid(Fixture&, fgapi::cudaMemLocation& s) { s = {fgapi::cudaMemLocationTypeDevice, 0}; }
void make_valid(Fixture& fx, fgapi::CUmemAllocationProp& s) {
  s.type = fgapi::CU_MEM_ALLOCATION_TYPE_PINNED;
  make_valid(fx, s.location);
}
void make_valid(Fixture& fx, fgapi::CUmemPoolProps& s) {
  s.allocType = fgapi::CU_MEM_ALLOCATION_TYPE_PINNED;
  make_valid(fx, s.location);
}
void make_valid(Fixture& fx, fgapi::cudaMemPoolProps& s) {
  s.allocType = fgapi::cudaMemAllocationTypePinned;
  make_valid(fx, s.location);
}

// A graph allocation of kValidSize bytes of pinned memory on device 0.
void make_valid(Fixture& fx, fgapi::CUDA_MEM_ALLOC_NODE_PARAMS& s) {
  make_valid(fx, s.poolProps);
  s.bytesize = kValidSize;
}
void make_valid(Fixture& fx, fgapi::cudaMemAllocNodeParams& s) {
  make_valid(fx, s.poolProps);
  s.bytesize = kValidSize;
}
// A host node (a kind a node of an executable graph can take new parameters of).
void make_valid(Fixture&, fgapi::CUgraphNodeParams& s) {
  s.type = fgapi::CU_GRAPH_NODE_TYPE_HOST;
  s.host.fn = host_noop;
}
void make_valid(Fixture&, fgapi::cudaGraphNodeParams& s) {
  s.type = fgapi::cudaGraphNodeTypeHost;
  s.host.fn = host_noop;
}

// Arrays like the fixture's (64 x 8 floats, surface access; each call makes one).
void make_valid(Fixture&, fgapi::CUDA_ARRAY_DESCRIPTOR& s) {
  s = {kArrayWidth, kArrayHeight, fgapi::CU_AD_FORMAT_FLOAT, 1};
}
void make_valid(Fixture&, fgapi::CUDA_ARRAY3D_DESCRIPTOR& s) {
  s = {kArrayWidth, kArrayHeight, 0, fgapi::CU_AD_FORMAT_FLOAT, 1, fgapi::CUDA_ARRAY3D_SURFACE_LDST};
}
void make_valid(Fixture&, fgapi::cudaChannelFormatDesc& s) { s = kFloatChannel; }
// Textures and surfaces: of the fixture's array, clamped, point sampling (the runtime's read
// the elements as they are), a view of the whole array.
void make_valid(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s) {
  s.resType = fgapi::CU_RESOURCE_TYPE_ARRAY;
  s.res.array.hArray = reinterpret_cast<fgapi::CUarray>(fx.valid[static_cast<int>(Hk::array)]);
}
void make_valid(Fixture& fx, fgapi::cudaResourceDesc& s) {
  s.resType = fgapi::cudaResourceTypeArray;
  s.res.array.array = reinterpret_cast<fgapi::cudaArray_t>(fx.valid[static_cast<int>(Hk::array)]);
}
void make_valid(Fixture&, fgapi::CUDA_TEXTURE_DESC& s) {
  for (auto& a : s.addressMode) a = fgapi::CU_TR_ADDRESS_MODE_CLAMP;
  s.filterMode = s.mipmapFilterMode = fgapi::CU_TR_FILTER_MODE_POINT;
}
void make_valid(Fixture&, fgapi::cudaTextureDesc& s) {
  for (auto& a : s.addressMode) a = fgapi::cudaAddressModeClamp;
  s.filterMode = s.mipmapFilterMode = fgapi::cudaFilterModePoint;
  s.readMode = fgapi::cudaReadModeElementType;
}
void make_valid(Fixture&, fgapi::CUDA_RESOURCE_VIEW_DESC& s) {
  s.format = fgapi::CU_RES_VIEW_FORMAT_NONE;
  s.width = kArrayWidth, s.height = kArrayHeight;
}
void make_valid(Fixture&, fgapi::cudaResourceViewDesc& s) {
  s.format = fgapi::cudaResViewFormatNone;
  s.width = kArrayWidth, s.height = kArrayHeight;
}
void as_linear_resource(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s) {
  s = {};
  s.resType = fgapi::CU_RESOURCE_TYPE_LINEAR;
  s.res.linear = {fx.dev, fgapi::CU_AD_FORMAT_FLOAT, 1, kAllocSize};
}
void as_linear_resource(Fixture& fx, fgapi::cudaResourceDesc& s) {
  s = {};
  s.resType = fgapi::cudaResourceTypeLinear;
  s.res.linear = {reinterpret_cast<void*>(fx.dev), kFloatChannel, kAllocSize};
}
void as_pitch2d_resource(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s) {
  s = {};
  s.resType = fgapi::CU_RESOURCE_TYPE_PITCH2D;
  s.res.pitch2D = {fx.dev, fgapi::CU_AD_FORMAT_FLOAT, 1, kTexWidth, kTexRows, kTexPitch};
}
void as_pitch2d_resource(Fixture& fx, fgapi::cudaResourceDesc& s) {
  s = {};
  s.resType = fgapi::cudaResourceTypePitch2D;
  s.res.pitch2D = {reinterpret_cast<void*>(fx.dev), kFloatChannel, kTexWidth, kTexRows, kTexPitch};
}

namespace {
// The IPC handle of the fixture's allocation, and (Fixture::ipc_freed) one of memory freed
// since; made on first use.
unsigned char g_ipc_live[64];
void ipc_handles() {
  static bool made = false;
  if (made) return;
  made = true;
  using namespace fgapi;
  CUipcMemHandle h{};
  SETUP(DRV(cuIpcGetMemHandle)(&h, g_fx.dev));
  std::memcpy(g_ipc_live, h.reserved, sizeof g_ipc_live);
  CUdeviceptr p = 0;
  SETUP(DRV(cuMemAlloc_v2)(&p, kAllocSize));
  SETUP(DRV(cuIpcGetMemHandle)(&h, p));
  SETUP(DRV(cuMemFree_v2)(p));
  std::memcpy(g_fx.ipc_freed, h.reserved, sizeof g_fx.ipc_freed);
}
}  // namespace

void make_valid(Fixture&, fgapi::CUipcMemHandle& s) {
  ipc_handles();
  static_assert(sizeof s.reserved == sizeof g_ipc_live);
  std::memcpy(s.reserved, g_ipc_live, sizeof g_ipc_live);
}
void make_valid(Fixture&, fgapi::cudaIpcMemHandle_t& s) {
  ipc_handles();
  static_assert(sizeof s.reserved == sizeof g_ipc_live);
  std::memcpy(s.reserved, g_ipc_live, sizeof g_ipc_live);
}
// No event of the fixture is interprocess: the valid event handle is a zeroed one.
void make_valid(Fixture&, fgapi::CUipcEventHandle&) {}
void make_valid(Fixture&, fgapi::cudaIpcEventHandle_t&) {}

void Fixture::opaque(void* p, size_t n, Mut m) {
  auto* b = static_cast<unsigned char*>(p);
  if (m == Mut::zero) {
    std::memset(b, 0, n);
  } else if (m == Mut::destroyed) {
    ipc_handles();
    std::memcpy(b, ipc_freed, std::min(n, sizeof ipc_freed));
  } else {
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(0xA5 ^ (i * 37));
  }
}

const Fixture::Vmm& Fixture::vmm() {
  using namespace fgapi;
  if (vmm_.gran) return vmm_;
  CUmemAllocationProp ap{};
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t gran = 0;
  SETUP(DRV(cuMemGetAllocationGranularity)(&gran, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle phys = 0, phys2 = 0;
  SETUP(DRV(cuMemCreate)(&phys, 2 * gran, &ap, 0));
  SETUP(DRV(cuMemCreate)(&phys2, gran, &ap, 0));
  CUdeviceptr free_va = 0, mapped_va = 0;
  SETUP(DRV(cuMemAddressReserve)(&free_va, 2 * gran, 0, 0, 0));
  SETUP(DRV(cuMemAddressReserve)(&mapped_va, 2 * gran, 0, 0, 0));
  SETUP(DRV(cuMemMap)(mapped_va, gran, 0, phys2, 0));
  CUmemAccessDesc rw{};
  make_valid(*this, rw);
  SETUP(DRV(cuMemSetAccess)(mapped_va, gran, &rw, 1));
  vmm_ = {gran, phys, free_va + gran, mapped_va};
  return vmm_;
}

const Fixture::GraphNodes& Fixture::graph_nodes() {
  using namespace fgapi;
  if (nodes_.exec) return nodes_;
  const auto ctx = reinterpret_cast<CUcontext>(valid[static_cast<int>(Hk::ctx)]);
  CUgraph g = nullptr;
  SETUP(DRV(cuGraphCreate)(&g, 0));
  CUDA_MEMSET_NODE_PARAMS set{};
  make_valid(*this, set);
  CUgraphNode set_node = nullptr, copy_node = nullptr;
  SETUP(DRV(cuGraphAddMemsetNode)(&set_node, g, nullptr, 0, &set, ctx));
  CUDA_MEMCPY3D copy{};
  make_valid(*this, copy);
  SETUP(DRV(cuGraphAddMemcpyNode)(&copy_node, g, nullptr, 0, &copy, ctx));
  CUDA_KERNEL_NODE_PARAMS kernel{};
  make_valid(*this, kernel);
  CUgraphNode kernel_node = nullptr, host_node = nullptr;
  SETUP(DRV(cuGraphAddKernelNode_v2)(&kernel_node, g, nullptr, 0, &kernel));
  CUDA_HOST_NODE_PARAMS host{};
  make_valid(*this, host);
  SETUP(DRV(cuGraphAddHostNode)(&host_node, g, nullptr, 0, &host));
  const auto event = reinterpret_cast<CUevent>(valid[static_cast<int>(Hk::event)]);
  const auto live_graph = reinterpret_cast<CUgraph>(valid[static_cast<int>(Hk::graph)]);
  CUgraphNode record = nullptr, wait = nullptr, child = nullptr;
  SETUP(DRV(cuGraphAddEventRecordNode)(&record, g, nullptr, 0, event));
  SETUP(DRV(cuGraphAddEventWaitNode)(&wait, g, nullptr, 0, event));
  SETUP(DRV(cuGraphAddChildGraphNode)(&child, g, nullptr, 0, live_graph));
  CUgraphExec x = nullptr;
  SETUP(DRV(cuGraphInstantiateWithFlags)(&x, g, 0));
  CUgraph mem = nullptr, clone = nullptr;
  SETUP(DRV(cuGraphCreate)(&mem, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
  make_valid(*this, alloc);
  CUgraphNode alloc_node = nullptr, free_node = nullptr;
  SETUP(DRV(cuGraphAddMemAllocNode)(&alloc_node, mem, nullptr, 0, &alloc));
  SETUP(DRV(cuGraphAddMemFreeNode)(&free_node, mem, &alloc_node, 1, alloc.dptr));
  SETUP(DRV(cuGraphClone)(&clone, live_graph));
  nodes_ = {bits(set_node), bits(copy_node), bits(kernel_node), bits(host_node), bits(record), bits(wait),
            bits(child),    bits(x),         bits(alloc_node),  bits(free_node), bits(clone)};
  return nodes_;
}

void Fixture::enable_peer() {
  if (peer_enabled_) return;
  peer_enabled_ = true;
  SETUP(DRV(cuCtxEnablePeerAccess)(reinterpret_cast<fgapi::CUcontext>(peer_ctx), 0));
}

uint64_t Fixture::capturing_stream() {
  using namespace fgapi;
  if (capturing_) return capturing_;
  auto s = reinterpret_cast<CUstream>(capture_stream);
  SETUP(DRV(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  SETUP(DRV(cuMemsetD8Async)(dev, 0, 1, s));
  CUstreamCaptureStatus status{};
  const CUgraphNode* deps = nullptr;
  size_t n = 0;
  SETUP(DRV(cuStreamGetCaptureInfo_v2)(s, &status, nullptr, nullptr, &deps, &n));
  if (n != 1) setup_failed("cuStreamGetCaptureInfo_v2 (dependencies)", static_cast<long long>(n));
  capture_node_[0] = bits(deps[0]);
  capturing_ = bits(s);
  return capturing_;
}
uint64_t Fixture::capture_deps() {
  capturing_stream();
  return bits(capture_node_);
}

namespace {

// ---- the child: runs the cases of one function from `first`, reporting each on `fd` -------------
void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(5);
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child(const FunctionCases& f, size_t first, int fd) {
  static unsigned char host[kStride * kRegions + kGuard];
  g_fx.slots = host;
  build_fixture();
  auto set_current = DRV(cuCtxSetCurrent);
  auto clear_last = RT(cudaGetLastError);
  auto ctx_sync = DRV(cuCtxSynchronize);
  const auto ctx = reinterpret_cast<fgapi::CUcontext>(g_fx.valid[static_cast<int>(Hk::ctx)]);
  const Case* cases = f.cases.begin();
  for (size_t i = first; i < f.cases.size(); ++i) {
    const Case& c = cases[i];
    fill_host(host);
    g_fx.desc_reset();
    fill_device();
    set_current(ctx);
    clear_last();
    write_all(fd, "B " + std::to_string(i) + "\n");
    const long long rc = f.thunk(g_fx, c.param, c.mut, c.field);
    // Work a descriptor case queued runs before the canaries are checked.
    if (c.field >= 0) ctx_sync();
    std::string bad = check_host(host);
    if (bad.empty()) bad = check_device();
    write_all(fd, "E " + std::to_string(i) + " " + std::to_string(rc) + " " + bad + "\n");
    // A call that succeeded may have changed the fixture (an edge added, a capture begun):
    // the next case starts from a fresh one.
    if (rc == 0) break;
  }
  _exit(0);
}

// A pipe `p` and a child that writes to it (0 in the child, its pid in the parent); the
// harness stops (status 2) when either cannot be made.
pid_t fork_with_pipe(int p[2]) {
  if (::pipe(p) != 0) {
    std::perror("badinput: pipe");
    std::exit(2);
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("badinput: fork");
    std::exit(2);
  }
  return pid;
}

// The all-valid call of one function in a child of its own (with the descriptor of
// another kind `v` names, if any); prints it unless it succeeds. Returns whether it did not.
bool probe_valid(const FunctionCases& f, const Variant* v) {
  int p[2];
  const pid_t pid = fork_with_pipe(p);
  if (pid == 0) {
    ::close(p[0]);
    static unsigned char host[kStride * kRegions + kGuard];
    g_fx.slots = host;
    build_fixture();
    fill_host(host);
    fill_device();
    DRV(cuCtxSetCurrent)(reinterpret_cast<fgapi::CUcontext>(g_fx.valid[static_cast<int>(Hk::ctx)]));
    RT(cudaGetLastError)();
    // A field "made bad" with Mut::none keeps its valid value.
    const long long rc = v ? f.thunk(g_fx, v->param, Mut::none, v->field) : f.thunk(g_fx, -1, Mut::none, -1);
    write_all(p[1], std::to_string(rc) + "\n");
    _exit(0);
  }
  ::close(p[1]);
  std::string buf;
  pollfd pf{p[0], POLLIN, 0};
  bool hung = false;
  for (;;) {
    const int pr = ::poll(&pf, 1, kCaseTimeoutMs);
    if (pr == 0) {
      hung = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (pr < 0 && errno == EINTR) continue;
    char chunk[256];
    const ssize_t n = ::read(p[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  ::close(p[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  const std::string name = v ? std::string(f.name) + " (" + v->what + ")" : std::string(f.name);
  if (hung) {
    std::printf("valid %s: no answer within %d ms\n", name.c_str(), kCaseTimeoutMs);
  } else if (buf.empty()) {
    std::printf("valid %s: %s\n", name.c_str(), WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
  } else {
    const long long rc = std::strtoll(buf.c_str(), nullptr, 10);
    if (rc == 0) return false;
    std::printf("valid %s: %lld\n", name.c_str(), rc);
  }
  return true;
}

struct Totals {
  int functions = 0, stubs = 0;
  long cases = 0, crashes = 0, hangs = 0, canary = 0, wrong = 0, xfail = 0, xpass = 0, setup = 0;
};

std::string describe(const FunctionCases& f, const Case& c) {
  return std::string(f.name) + "(" + c.param_name + "=" + mut_name(c.mut) + ")";
}

// Runs one function's cases, restarting a child after a case that crashed or hung.
void run_function(const FunctionCases& f, Totals& t, bool verbose) {
  size_t next = 0;
  while (next < f.cases.size()) {
    const size_t first = next;
    int p[2];
    const pid_t pid = fork_with_pipe(p);
    if (pid == 0) {
      ::close(p[0]);
      child(f, next, p[1]);
    }
    ::close(p[1]);
    std::string buf;
    long begun = -1;
    bool hung = false;
    for (;;) {
      pollfd pf{p[0], POLLIN, 0};
      const int pr = ::poll(&pf, 1, kCaseTimeoutMs);
      if (pr == 0) {
        hung = true;
        ::kill(pid, SIGKILL);
        break;
      }
      if (pr < 0 && errno == EINTR) continue;
      char chunk[4096];
      const ssize_t n = ::read(p[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        const std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (line[0] == 'B') {
          begun = std::stol(line.substr(2));
          continue;
        }
        // E index code [what changed]
        char* end = nullptr;
        const long idx = std::strtol(line.c_str() + 2, &end, 10);
        const long long rc = std::strtoll(end, &end, 10);
        std::string bad = *end == ' ' ? std::string(end + 1) : std::string();
        const Case& c = f.cases.begin()[idx];
        ++t.cases;
        if (!bad.empty()) {
          ++t.canary;
          std::printf("WRITE OUTSIDE %s: %s changed (returned %lld)\n", describe(f, c).c_str(), bad.c_str(), rc);
        } else if (c.xfail) {
          if (rc == c.expected) {
            ++t.xpass;
            std::printf("XPASS %s: returned %lld as documented; remove its xfail line\n", describe(f, c).c_str(), rc);
          } else {
            ++t.xfail;
            if (verbose) std::printf("xfail %s: %lld, documented %lld\n", describe(f, c).c_str(), rc, c.expected);
          }
        } else if (rc != c.expected) {
          ++t.wrong;
          std::printf("WRONG CODE %s: returned %lld, expected %lld\n", describe(f, c).c_str(), rc, c.expected);
        } else if (verbose) {
          std::printf("ok %s: %lld\n", describe(f, c).c_str(), rc);
        }
        begun = -1;
        next = static_cast<size_t>(idx) + 1;
      }
    }
    ::close(p[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (begun >= 0) {
      const Case& c = f.cases.begin()[begun];
      ++t.cases;
      if (hung) {
        ++t.hangs;
        std::printf("HANG %s: no answer within %d ms\n", describe(f, c).c_str(), kCaseTimeoutMs);
      } else {
        ++t.crashes;
        std::printf("CRASH %s: %s\n", describe(f, c).c_str(),
                    WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "the process exited during the call");
      }
      next = static_cast<size_t>(begun) + 1;
    } else if (next < f.cases.size() && next == first) {
      // The child ended before its first case: the fixture could not be built.
      ++t.setup;
      std::printf("SETUP FAILED for %s (exit status %d)\n", f.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      return;
    }
  }
}

const char* family_name(Family f) { return f == Family::driver ? "driver" : f == Family::runtime ? "runtime" : "nvml"; }

}  // namespace
}  // namespace badinput

int main(int argc, char** argv) {
  using namespace badinput;
  ::setenv("FAKEGPU_ISOLATED", "1", 0);
  ::setenv("FAKEGPU_REPORT", "off", 0);
  ::unsetenv("FAKEGPU_STRICT");
  // Kernels run (the default): a launch then knows its kernel's parameters, which the
  // kernelParams cases need.
  ::unsetenv("FAKEGPU_KERNELS");
  std::string family;
  std::vector<std::string> only;
  bool verbose = false, valid = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--family" && i + 1 < argc) {
      family = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only.emplace_back(argv[++i]);
    } else if (a == "-v") {
      verbose = true;
    } else if (a == "--valid") {
      valid = true;
    } else {
      std::fprintf(stderr, "usage: %s [--family driver|runtime|nvml] [--only NAME]... [-v] [--valid]\n", argv[0]);
      return 2;
    }
  }
  const char* dir = std::getenv("FAKEGPU_TEST_LIBDIR");
  std::string libdir = dir && *dir ? dir : FAKEGPU_TEST_LIBDIR;
  const char* names[3] = {"libcuda.so.1", "libcudart.so.13", "libnvidia-ml.so.1"};
  for (int i = 0; i < 3; ++i) {
    const std::string path = libdir + "/" + names[i];
    g_fx.libs[i] = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!g_fx.libs[i]) {
      std::fprintf(stderr, "badinput: %s\n", dlerror());
      return 2;
    }
  }
  // A directory of its own: the file names the cases pass (a PCI bus id string is also a
  // path) never meet a file another run or family left, and what a call writes goes with it.
  char work[] = "/tmp/fakegpu-badinput-XXXXXX";
  if (!::mkdtemp(work) || ::chdir(work) != 0) {
    std::fprintf(stderr, "badinput: cannot make a working directory in /tmp: %s\n", std::strerror(errno));
    return 2;
  }
  // The fixture's PTX as a file, for the calls that load one.
  if (FILE* f = std::fopen(Fixture::kPtxFile, "w")) {
    std::fputs(kPtx, f);
    std::fclose(f);
  }
  Totals t;
  int refused = 0, variants = 0, variants_refused = 0;
  for (const auto& f : gen::kFunctions) {
    if (!family.empty() && family != family_name(f.family)) continue;
    bool want = only.empty();
    for (const auto& o : only) want = want || o == f.name;
    if (!want) continue;
    ++t.functions;
    t.stubs += f.stub;
    if (!valid)
      run_function(f, t, verbose);
    else if (!f.stub) {
      refused += probe_valid(f, nullptr);
      for (const Variant& v : f.variants) {
        ++variants;
        variants_refused += probe_valid(f, &v);
      }
    }
  }
  if (valid) {
    std::printf(
        "valid-argument probe%s%s: %d functions (%d of them NOT_SUPPORTED stubs, not called), %d refuse "
        "their valid arguments; %d of %d descriptors of another kind refused\n",
        family.empty() ? "" : " ", family.c_str(), t.functions, t.stubs, refused, variants_refused, variants);
    std::filesystem::remove_all(work);
    return 0;
  }
  int excluded = 0;
  for (const auto& e : gen::kExcluded) {
    if (!e.name) continue;
    if (!family.empty()) {
      // An excluded name's family: the export lists' prefixes.
      const std::string n = e.name;
      const char* fam = n.rfind("nvml", 0) == 0                              ? "nvml"
                        : (n.rfind("cu", 0) == 0 && n.rfind("cuda", 0) != 0) ? "driver"
                                                                             : "runtime";
      if (family != fam) continue;
    }
    if (verbose) std::printf("excluded %s: %s\n", e.name, e.reason);
    ++excluded;
  }
  std::printf(
      "bad-input matrix%s%s: %d functions (%d of them NOT_SUPPORTED stubs), %ld cases, %d exports excluded\n"
      "crashes %ld, hangs %ld, writes outside an allocation %ld, wrong codes %ld, fixture failures %ld, "
      "expected failures %ld, unexpected passes %ld\n",
      family.empty() ? "" : " ", family.c_str(), t.functions, t.stubs, t.cases, excluded, t.crashes, t.hangs, t.canary,
      t.wrong, t.setup, t.xfail, t.xpass);
  std::filesystem::remove_all(work);
  return t.crashes || t.hangs || t.canary || t.wrong || t.setup || t.xpass ? 1 : 0;
}
