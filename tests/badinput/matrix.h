// SPDX-License-Identifier: Apache-2.0
// The bad-input matrix's vocabulary, shared by the harness (matrix.cpp) and the cases that
// tests/badinput/gen_matrix.py generates from the API lists and prototypes.
//
// A case is one exported function called with one bad argument (NULL out-pointer, garbage or
// destroyed handle, device ordinal past the last device, enum or flag bits no header defines,
// size 0 / SIZE_MAX / one past the allocation / wrapping the address space) and every other
// argument valid, taken from the Fixture (a live context, stream, event, module, graph,
// pool, allocations with canaries around them ...). A descriptor the call reads is passed
// valid (make_valid() below) and a field case makes one of its fields bad.
#pragma once
#include "fakegpu/cuda_api.h"
#include "fakegpu/cudart_api.h"
#include "fakegpu/nvml_api.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <type_traits>

namespace badinput {

// What a parameter is (gen_matrix.py classify()).
enum class Cls {
  fn,         // a callback: a no-op function
  handle,     // an object handle of kind Hk
  device,     // a device ordinal
  dptr,       // a device pointer
  dptr32,     // a 32-bit device pointer of the oldest driver ABI
  in_raw,     // const void* / const char*: bytes or a string the call reads
  in_array,   // const T* of scalars or handles: an array the call reads
  in_struct,  // const S*: a descriptor the call reads
  voidptr,    // void*: host bytes (user data, a buffer)
  out,        // T*: where the call writes its answer
  size,       // size_t: a size, count, pitch, extent or offset
  flags,      // flag bits
  enumv,      // an enum
  scalar,     // any other number
  byval,      // a struct by value
};

enum class Hk {
  none,
  ctx,
  stream,
  event,
  module,
  function,
  library,
  kernel,
  graph,
  node,
  exec,
  pool,
  array,
  mipmap,
  userobj,
  link,
  memhandle,
  texobj,
  surfobj,
  extmem,
  extsem,
  gres,
  greenctx,
  texref,
  surfref,
  asynccb,
  logscb,
  nvml_device,
  nvml_unit,
  nvml_eventset,
  nvml_gi,
  nvml_ci,
  count_
};

enum class Mut {
  none,
  null,
  garbage,
  destroyed,
  out_of_range,
  unknown_bits,
  huge,
  past_end,
  wrap,
  zero,
  small,      // under the width or the rows it must hold
  unaligned,  // off the granularity or alignment the call needs
  both        // given together with another argument it excludes (extra with kernelParams)
};

// What a descriptor field is (gen_matrix.py FIELD_MUTATIONS).
enum class Fc {
  pos,           // a byte/row/slice position inside a pitched region
  pitch,         // bytes between rows
  rows,          // rows between slices
  extent,        // bytes, rows or slices copied or set
  dptr,          // a device pointer
  array,         // a CUDA array handle
  enumf,         // an enum
  devicef,       // a device ordinal
  elem,          // an element size
  count,         // a count of entries behind a pointer
  bytes,         // the bytes an allocation takes
  dim,           // a grid or block dimension
  smem,          // dynamic shared memory bytes
  stream,        // a stream handle
  opaque,        // a whole opaque handle passed by value
  opaque_event,  // the same, of an event
  func,          // a kernel node's function
  kparams,       // a kernel node's parameter array
  hostfn,        // a host node's function
  shape,         // an array's width: 0 or past the device's limits
  shape0,        // an array's height or depth (0: a dimension fewer): past the limits
  span,          // a resource's bytes, elements or rows, or a view's extent: 0, one more, SIZE_MAX
  span0,         // the same where the valid value is 0
  channels,      // an element's channels (1, 2 or 4)
  bits,          // a channel's bits
  level,         // a view's mipmap level or layer
};
enum class Family { driver, runtime, nvml };
enum class Lib { cuda, cudart, nvml };

inline constexpr size_t kAllocSize = 3000;                      // the fixture's device allocation (a 4 KiB block)
inline constexpr size_t kValidSize = 64;                        // a size that fits every buffer of the fixture
inline constexpr size_t kSlotSize = 4096;                       // bytes behind each out-pointer and input buffer
inline constexpr int kSlots = 16;                               // out-pointer slots (one per parameter position)
inline constexpr uint64_t kGarbagePtr = 0xdead0000beef0000ull;  // non-canonical: any access faults
inline constexpr uint64_t kGarbageValue = 0x00000badc0ffee11ull;
inline constexpr size_t kBlock = 4096;  // the arena block of a kAllocSize allocation
// The channel descriptor of the arrays the runtime's calls make (one 32-bit float).
inline constexpr fgapi::cudaChannelFormatDesc kFloatChannel{32, 0, 0, 0, fgapi::cudaChannelFormatKindFloat};
// The fixture's CUDA array: kArrayWidth x kArrayHeight floats, with surface access.
inline constexpr size_t kArrayWidth = 64, kArrayHeight = 8;
// A texture of pitched memory: kTexRows rows of kTexWidth floats, kTexPitch bytes apart (a
// multiple of the texture pitch alignment), from the start of the fixture's allocation (which
// is aligned for textures) to exactly its end.
inline constexpr size_t kTexPitch = 1024, kTexRows = 3, kTexWidth = 238;
static_assert(kTexPitch * (kTexRows - 1) + kTexWidth * 4 == 3000);

// The box of every valid copy and memset descriptor: kBoxDepth slices of kBoxRows rows of
// kBoxWidth bytes, rows kBoxPitch bytes apart. A copy reads the last kBoxSpan bytes of the
// source allocation (Fixture::src) and writes the last kBoxSpan bytes of the fixture's
// allocation (2-D copies and memsets the last kBoxSpan2D), so that one more byte, row or
// slice anywhere passes the allocation's end.
inline constexpr size_t kBoxWidth = 16, kBoxPitch = 32, kBoxRows = 4, kBoxDepth = 2;
inline constexpr size_t kBoxSpan2D = kBoxPitch * (kBoxRows - 1) + kBoxWidth;
inline constexpr size_t kBoxSpan = kBoxPitch * kBoxRows * (kBoxDepth - 1) + kBoxSpan2D;
inline constexpr size_t kSetElem = 4;       // a memset node's element size: kBoxWidth / kSetElem elements a row
inline constexpr size_t kDescStride = 512;  // bytes for each descriptor parameter in the descriptor buffer
inline constexpr int kPeerDevice = 1;       // the peer of peer-to-peer calls (the fixture's context is on 0)

class Fixture {
 public:
  void* sym(Lib lib, const char* name, const char* node);
  uint64_t handle(Hk k, Mut m) const;
  uint64_t dptr(Mut m) const;
  void* out_slot(int i, Mut m);
  const void* in_bytes(bool text) const;
  const void* in_zero() const;
  // A const array of one node of the fixture's graph (edge_nodes[k]), zeros after it.
  uint64_t node_list(int k) const;
  void* host_bytes();
  size_t size(Mut m) const;

  // Descriptor fields: the bad value `m` of a field of class c whose valid value is `cur`;
  // `unit` is what one step of the field moves (1 byte, a row, a slice ...).
  uint64_t field_value(Fc c, Mut m, uint64_t cur, uint64_t unit) const;
  // A whole opaque handle: random bytes, zeros, or one of memory freed since.
  void opaque(void* p, size_t n, Mut m);
  // The descriptor of parameter `i`: built valid in the descriptor buffer (a guarded input
  // the call may not change), with field `field` made bad when the case is about it.
  template <class S>
  const S* desc_ptr(int i, int at, Mut m, int field, void (*mutate)(Fixture&, S&, int, Mut)) {
    static_assert(sizeof(S) <= kDescStride);
    if (i == at && field < 0 && m == Mut::null) return nullptr;
    S* s = new (desc_area(i)) S{};
    make_valid(*this, *s);
    if (i == at && field >= 0) mutate(*this, *s, field, m);
    desc_written(i, sizeof(S));
    return s;
  }
  // The same for a descriptor the call reads and writes (an allocation node's parameters):
  // its own bytes may change, the rest of the buffer not.
  template <class S>
  S* desc_inout(int i, int at, Mut m, int field, void (*mutate)(Fixture&, S&, int, Mut)) {
    S* s = const_cast<S*>(desc_ptr(i, at, m, field, mutate));
    if (s) desc_out_[i] = sizeof(S);
    return s;
  }
  template <class S>
  S desc_val(int i, int at, Mut m, int field, void (*mutate)(Fixture&, S&, int, Mut)) {
    S s{};
    make_valid(*this, s);
    if (i == at && field >= 0) mutate(*this, s, field, m);
    return s;
  }

  // The VMM fixture, made on first use: a physical allocation of 2 granules (phys); map_va,
  // the second granule of a free reservation of 2; mapped_va, the first granule of a
  // reservation of 2, mapped (from another physical allocation) with read/write access.
  struct Vmm {
    uint64_t gran = 0, phys = 0, map_va = 0, mapped_va = 0;
  };
  const Vmm& vmm();
  // A graph with a node of each kind the calls on nodes take (valid descriptors; the event
  // nodes record and wait for the live event, the child node holds a copy of the live graph),
  // and its instance; an allocation node and a free node of its memory, in a graph of their
  // own; a clone of the live graph. Made with the live objects.
  struct GraphNodes {
    uint64_t memset_node = 0, memcpy_node = 0, kernel_node = 0, host_node = 0, record_node = 0, wait_node = 0,
             child_node = 0, exec = 0, alloc_node = 0, free_node = 0, clone = 0;
  };
  const GraphNodes& graph_nodes();
  // Peer access from the fixture's context to kPeerDevice, enabled on first use (what
  // disabling it needs).
  void enable_peer();
  // A stream capturing (relaxed mode) into a graph of one memset node, made on first use;
  // capture_deps(): that node, as an array of one.
  uint64_t capturing_stream();
  uint64_t capture_deps();

  template <class T>
  static T as(uint64_t v) {
    return from_bits<T>(v);
  }
  template <class T>
  static uint64_t bits(T v) {
    if constexpr (std::is_pointer_v<T>)
      return reinterpret_cast<uintptr_t>(v);
    else
      return static_cast<uint64_t>(v);
  }
  template <class T>
  static void set(T& field, uint64_t v) {
    field = from_bits<T>(v);
  }

  // The argument of parameter `i` (class c, handle kind hk): the bad value `m` when the
  // case is about this parameter (i == at); otherwise a valid one (wrap moves every device
  // pointer near the allocation's end so that the size wraps from there).
  template <class T>
  T arg(int i, Cls c, Hk hk, int at, Mut m) {
    const Mut mine = i == at ? m : Mut::none;
    const bool wrap = m == Mut::wrap;
    switch (c) {
      case Cls::handle: return from_bits<T>(handle(hk, mine));
      case Cls::dptr: return from_bits<T>(dptr(wrap ? Mut::wrap : mine));
      case Cls::dptr32: return from_bits<T>(mine == Mut::garbage ? 0xdeadbeefu : 0x1000u);
      case Cls::device: return from_bits<T>(mine == Mut::out_of_range ? 1000 : 0);
      case Cls::in_raw: return pointer<T>(in_bytes(std::is_same_v<std::remove_cv_t<std::remove_pointer_t<T>>, char>));
      case Cls::in_array: return pointer<T>(in_zero());
      case Cls::in_struct: return pointer<T>(mine == Mut::null ? nullptr : in_zero());
      case Cls::voidptr: return pointer<T>(host_bytes());
      case Cls::out: return pointer<T>(out_slot(i, mine));
      case Cls::size: return from_bits<T>(size(mine));
      case Cls::flags: return from_bits<T>(mine == Mut::unknown_bits ? 0x40000000u : 0u);
      case Cls::enumv: return from_bits<T>(mine == Mut::out_of_range ? 0x7fffff00u : 0u);
      case Cls::scalar: return from_bits<T>(1);
      case Cls::fn: return pointer<T>(reinterpret_cast<const void*>(&noop));
      case Cls::byval: break;
    }
    if constexpr (std::is_class_v<T> || std::is_union_v<T>) {
      return T{};
    } else {
      return from_bits<T>(0);
    }
  }

  static void noop() {}

 private:
  template <class T>
  static T from_bits(uint64_t v) {
    if constexpr (std::is_pointer_v<T>) {
      return reinterpret_cast<T>(static_cast<uintptr_t>(v));
    } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T> || std::is_floating_point_v<T>) {
      return static_cast<T>(v);
    } else {
      return T{};
    }
  }
  template <class T>
  static T pointer(const void* p) {
    if constexpr (std::is_pointer_v<T>) {
      if constexpr (std::is_function_v<std::remove_pointer_t<T>>) {
        return reinterpret_cast<T>(const_cast<void*>(p));
      } else {
        return static_cast<T>(const_cast<void*>(p));
      }
    } else if constexpr (std::is_class_v<T> || std::is_union_v<T>) {
      return T{};
    } else {
      return from_bits<T>(reinterpret_cast<uintptr_t>(p));
    }
  }

 public:
  // Set up by matrix.cpp.
  void* libs[3] = {};
  uint64_t valid[static_cast<int>(Hk::count_)] = {};
  uint64_t destroyed[static_cast<int>(Hk::count_)] = {};
  uintptr_t dev = 0;                      // the allocation the cases use (kAllocSize bytes)
  uintptr_t src = 0;                      // the source of descriptor copies (kAllocSize bytes)
  uintptr_t managed = 0;                  // managed memory (kAllocSize bytes): what prefetch and advice take
  void** kernel_params = nullptr;         // the arguments of the fixture's kernel (one u64), as launches take them
  uint64_t peer_ctx = 0;                  // kPeerDevice's primary context
  uint64_t host_stub = 0;                 // the runtime's host stub of the fixture's kernel
  uint64_t symbol = 0;                    // the host shadow of a __device__ variable of kAllocSize bytes
  uint64_t capture_stream = 0;            // a non-blocking stream, capturing once capturing_stream() is asked
  uint64_t own_ctx = 0;                   // a context cuCtxCreate made (one that may be destroyed)
  uint64_t view_tex = 0;                  // a texture of the fixture's array made with a view (the whole array)
  const char* ptx = nullptr;              // the PTX the module and library are loaded from
  const unsigned char* fatbin = nullptr;  // the same in a fat binary
  static constexpr const char* kPtxFile = "fixture.ptx";  // the same in a file (in the working directory)
  uintptr_t pinned = 0;                                   // page-locked host memory (cuMemHostAlloc, kSlotSize bytes)
  uintptr_t registered = 0;  // host memory registered with cuMemHostRegister (kSlotSize bytes)
  char nvml_uuid[96] = {};   // NVML device 0's UUID string
  // cuPointerGetAttributes: one attribute (the context) and where its value goes.
  int pointer_attributes[1] = {1};
  uint64_t pointer_value[2] = {};
  void* pointer_data[1] = {pointer_value};
  // Nodes of the fixture's graph: the valid node (a dependency), a node that depends on it
  // (an edge to remove) and a node that does not (an edge to add).
  std::array<uint64_t, 3> edge_nodes = {};
  unsigned char* slots = nullptr;
  // What the descriptor buffer must still hold after a call (desc_settle() takes in what
  // in/out descriptors wrote); desc_reset() before each case.
  unsigned char desc_shadow[kSlotSize] = {};
  const unsigned char* desc_settle();
  void desc_reset();
  unsigned char ipc_freed[64] = {};  // an IPC handle of memory freed since

 private:
  unsigned char* desc_area(int i);
  void desc_written(int i, size_t n);
  Vmm vmm_;
  GraphNodes nodes_;
  bool peer_enabled_ = false;
  uint64_t capturing_ = 0, capture_node_[2] = {};
  size_t desc_out_[kSlotSize / kDescStride] = {};  // bytes of an in/out descriptor per parameter
};

// Valid descriptors (matrix.cpp): the fields a field case leaves alone describe a call that
// succeeds.
void make_valid(Fixture& fx, fgapi::CUDA_MEMCPY3D& s);
void make_valid(Fixture& fx, fgapi::CUDA_MEMCPY2D& s);
void make_valid(Fixture& fx, fgapi::cudaMemcpy3DParms& s);
void make_valid(Fixture& fx, fgapi::cudaMemcpy3DPeerParms& s);
void make_valid(Fixture& fx, fgapi::CUDA_MEMSET_NODE_PARAMS& s);
void make_valid(Fixture& fx, fgapi::cudaMemsetParams& s);
void make_valid(Fixture& fx, fgapi::cudaPitchedPtr& s);
void make_valid(Fixture& fx, fgapi::cudaExtent& s);
void make_valid(Fixture& fx, fgapi::dim3& s);
void make_valid(Fixture& fx, fgapi::CUmemAccessDesc& s);
void make_valid(Fixture& fx, fgapi::cudaMemAccessDesc& s);
void make_valid(Fixture& fx, fgapi::CUlaunchConfig& s);
void make_valid(Fixture& fx, fgapi::cudaLaunchConfig_t& s);
void make_valid(Fixture& fx, fgapi::CUDA_KERNEL_NODE_PARAMS_v1& s);
void make_valid(Fixture& fx, fgapi::CUDA_KERNEL_NODE_PARAMS& s);
void make_valid(Fixture& fx, fgapi::cudaKernelNodeParams& s);
void make_valid(Fixture& fx, fgapi::CUDA_HOST_NODE_PARAMS& s);
void make_valid(Fixture& fx, fgapi::cudaHostNodeParams& s);
void make_valid(Fixture& fx, fgapi::CUmemLocation& s);
void make_valid(Fixture& fx, fgapi::cudaMemLocation& s);
void make_valid(Fixture& fx, fgapi::CUmemAllocationProp& s);
void make_valid(Fixture& fx, fgapi::CUmemPoolProps& s);
void make_valid(Fixture& fx, fgapi::cudaMemPoolProps& s);
void make_valid(Fixture& fx, fgapi::CUDA_MEM_ALLOC_NODE_PARAMS& s);
void make_valid(Fixture& fx, fgapi::cudaMemAllocNodeParams& s);
void make_valid(Fixture& fx, fgapi::CUgraphNodeParams& s);
void make_valid(Fixture& fx, fgapi::cudaGraphNodeParams& s);
void make_valid(Fixture& fx, fgapi::CUipcMemHandle& s);
void make_valid(Fixture& fx, fgapi::cudaIpcMemHandle_t& s);
void make_valid(Fixture& fx, fgapi::CUipcEventHandle& s);
void make_valid(Fixture& fx, fgapi::cudaIpcEventHandle_t& s);
void make_valid(Fixture& fx, fgapi::CUDA_ARRAY_DESCRIPTOR& s);
void make_valid(Fixture& fx, fgapi::CUDA_ARRAY3D_DESCRIPTOR& s);
void make_valid(Fixture& fx, fgapi::cudaChannelFormatDesc& s);
void make_valid(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s);
void make_valid(Fixture& fx, fgapi::cudaResourceDesc& s);
void make_valid(Fixture& fx, fgapi::CUDA_TEXTURE_DESC& s);
void make_valid(Fixture& fx, fgapi::cudaTextureDesc& s);
void make_valid(Fixture& fx, fgapi::CUDA_RESOURCE_VIEW_DESC& s);
void make_valid(Fixture& fx, fgapi::cudaResourceViewDesc& s);
// Valid resources of the other kinds, for their fields' cases: the fixture's allocation as
// linear memory of floats (kAllocSize bytes), or as pitched memory (matrix.h kTex*).
void as_linear_resource(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s);
void as_linear_resource(Fixture& fx, fgapi::cudaResourceDesc& s);
void as_pitch2d_resource(Fixture& fx, fgapi::CUDA_RESOURCE_DESC& s);
void as_pitch2d_resource(Fixture& fx, fgapi::cudaResourceDesc& s);

struct Case {
  int param;
  Mut mut;
  long long expected;
  bool xfail;
  const char* param_name;  // PARAM or PARAM.FIELD
  int field;               // the descriptor field the case makes bad; -1: the parameter itself
};

// A valid descriptor of another kind than make_valid()'s (a linear resource where the valid
// one is an array): what the cases of field `field` of parameter `param` start from.
struct Variant {
  int param;
  int field;
  const char* what;  // PARAM and the function that makes it
};

struct FunctionCases {
  const char* name;
  Family family;
  bool stub;
  long long (*thunk)(Fixture&, int, Mut, int);
  std::initializer_list<Case> cases;
  std::initializer_list<Variant> variants = {};
};

struct Excluded {
  const char* name;
  const char* reason;
};

}  // namespace badinput
