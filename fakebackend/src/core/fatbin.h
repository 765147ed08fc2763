// SPDX-License-Identifier: Apache-2.0
// Reading what kernels' host code cannot see: the initial values of __device__,
// __constant__ and __managed__ variables live only in the fat binary's cubins (nvcc's host
// shadows carry no initializer), and those of PTX globals in the PTX text.
#pragma once
#include "core/errors.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fg::fatbin {

// Copies the initial bytes of device variable `name` from the cubins of the fat binary that
// `wrapper` (the __fatBinC_Wrapper_t passed to __cudaRegisterFatBinary) or `image` (a raw
// fat binary, magic 0xBA55ED50) describes. Returns false when no cubin defines the symbol;
// `out` is then untouched. Zero-initialised (.bss-like) symbols give zeros.
bool initial_value(const void* wrapper_or_image, std::string_view name, void* out, size_t size) noexcept;

// Whether all `n` bytes from `p` can be read: a caller's image comes without its length, so
// the sizes in its headers are checked against what is mapped before anything is copied
// (process_vm_readv on this process reports an unmapped page instead of faulting).
bool readable(const void* p, size_t n) noexcept;

// The bytes an ELF cubin or a fat binary occupies, as its header says (not yet checked
// against what is mapped: see readable()); 0 for anything else.
uint64_t binary_extent(const void* image) noexcept;

// One piece of device code of an image, as the driver would load it.
struct Code {
  enum class Kind { None, Cubin, Ptx };
  Kind kind = Kind::None;
  int arch = 0;                      // sm_XY / compute_XY as XY
  std::vector<unsigned char> bytes;  // decompressed; PTX text ends with a NUL
  // Why kind is None, as the driver answers: InvalidImage (not a CUDA image, or one that
  // cannot be read), NoBinaryForGpu (nothing this device runs), InvalidPtx.
  Status refusal = Status::Ok;
};

// The code a device of compute capability `cc` (major * 10 + minor) runs from `image` (an
// ELF cubin, a raw fat binary or a __fatBinC_Wrapper_t): the cubin of the newest
// architecture of the same major not above cc, else the PTX of the newest architecture not
// above cc (which the driver would compile). Compressed entries (LZ4, Zstandard) are
// decompressed. Kind::None when nothing fits or nothing can be read.
Code select_code(const void* image, int cc);

// The PTX the kernel executor runs for a device of compute capability `cc`, whether or not the
// device would run a cubin of the same image: the newest PTX at or below cc, else the oldest
// above it (`nvcc -arch=all` carries only compute_120 PTX; the host CPU runs it whatever the
// model). Kind::None (NoBinaryForGpu) when the image holds no PTX, as a cubin alone does.
Code select_ptx(const void* image, int cc);

// The PTX of a separately compiled program (nvcc -rdc): its wrapper (version 2) names the
// device-linked image, machine code only, and a NULL-terminated array of relocatable fat
// binaries, one per translation unit, each with its PTX. Their PTX as select_ptx picks it, in
// order; empty for any other image, or when one of them has none. A program of more than
// kMaxLinkedUnits units or kMaxLinkedPtx bytes of PTX (NCCL's hundreds of kernels) is not
// linked: empty, with *refused saying why (when given).
inline constexpr size_t kMaxLinkedUnits = 64;
inline constexpr size_t kMaxLinkedPtx = size_t{32} << 20;
std::vector<Code> linked_ptx(const void* wrapper, int cc, std::string* refused = nullptr);

// A linked image: what the fake's cuLinkComplete hands out when a link takes more than one
// unit of PTX. A real driver returns a cubin, which the fake cannot make; this keeps the
// units apart, to be linked by the kernel executor when a module loads it, as an -rdc
// program's are (ptx::link). It holds no address (a caller may copy it, write it to a file
// and load it later), and every loader of the fake takes it (cuModuleLoad*, cuLibraryLoad*).
// Little-endian:
//   header    u32 magic kLinkedMagic ("FLNK"), u32 version (1), u32 unit count, u32 zero,
//             u64 size of the whole image in bytes
//   per unit  u32 arch (the XY of its .target), u32 zero, u64 length n, then n bytes of PTX
//             text (its NUL included), zero-padded to a multiple of 8
inline constexpr uint32_t kLinkedMagic = 0x4B4E4C46;
inline constexpr uint32_t kLinkedVersion = 1;
inline constexpr size_t kMaxLinkedImageUnits = 4096;
std::vector<unsigned char> linked_image(const std::vector<Code>& units);

// The units of linked image `image` as code for a device of compute capability `cc`, each
// checked as ptx_code checks PTX text. Empty with *refusal set when the image is malformed
// or not all mapped (InvalidImage), or a unit is refused (InvalidPtx).
std::vector<Code> linked_units(const void* image, int cc, Status* refusal);

// The fat binaries a host object file (nvcc -c: section .nv_fatbin; nvcc -dc: __nv_relfatbin)
// carries, copied; empty when `bytes` is not an ELF64 object or carries none.
std::vector<std::vector<unsigned char>> object_fatbins(const unsigned char* bytes, size_t size);

// The members of an ar archive (a static library such as libcudadevrt.a), in order; empty when
// `bytes` is not one. The symbol table and the long-name table are not members.
struct ArchiveMember {
  std::string name;
  const unsigned char* data = nullptr;  // within `bytes`
  size_t size = 0;
};
bool is_archive(const unsigned char* bytes, size_t size);
std::vector<ArchiveMember> archive_members(const unsigned char* bytes, size_t size);

// The architecture of the PTX a device of compute capability `cc` compiles from `image` (as
// select_code chooses: no cubin of its major at or below cc, then the newest PTX at or below
// cc); 0 when it runs a cubin or nothing fits. Reads the entries' headers only.
int ptx_arch(const void* image, int cc) noexcept;

// PTX text as code (for a module loaded from PTX), checked as far as the driver's JIT would
// refuse it before compiling: a ".version" first, a ".target sm_XY" the device of compute
// capability `cc` can run (XY <= cc), and only directives outside function bodies and
// initializers. Refused: kind None, refusal InvalidPtx. arch is the target's XY.
Code ptx_code(std::string_view text, int cc);

// The kernels (entry functions) the code defines, each name once.
std::vector<std::string> kernels(const Code& code);

// The variables (__device__, __constant__, __managed__) the code defines, with their
// initial bytes (zeros for uninitialised ones).
struct Variable {
  std::string name;
  std::vector<unsigned char> init;  // size() is the variable's size
  bool constant = false;
  bool managed = false;
  bool external = false;  // external linkage (PTX .visible/.weak/.common; a cubin's global or weak symbol)
  bool weak = false;      // .weak/.common (a weak symbol): another unit's strong definition wins
};
// A variable larger than `max_bytes` (the device's memory) or than kMaxVariableBytes cannot
// be loaded: *refusal is then OutOfMemory and nothing is returned (nor allocated).
inline constexpr uint64_t kMaxVariableBytes = 1ull << 32;
std::vector<Variable> variables(const Code& code, uint64_t max_bytes, Status* refusal);

// The initializer of a PTX declaration line ("... .u32 x[2] = {1, 2}" / "= 0f3FA00000"),
// as `elem`-byte little-endian values; empty if the line has none.
std::vector<unsigned char> ptx_initializer(std::string_view line, size_t elem, bool is_float);

}  // namespace fg::fatbin
