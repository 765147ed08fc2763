// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for the image parsers of core/fatbin: fat binaries,
// ELF cubins, linked images (cuLinkComplete's) and PTX text, as module loads hand them over,
// and host objects and static libraries, as the JIT linker is handed them; the PTX text also
// goes through the kernel executor's parser and linker (kernels/ptx.h). ctest runs it for a bounded
// number of inputs from tests/fuzz/corpus/images; longer: build/tests/fuzz_images -max_total_time=N.
#include "core/fatbin.h"
#include "kernels/ptx.h"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// The device memory variables may take: small, so that a declaration of gigabytes (legal, and
// given host memory by the backend) is refused as too large instead of filling the fuzzer's.
constexpr uint64_t kDeviceBytes = 16u << 20;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  // A fat-binary wrapper holds a pointer, which the API trusts as much as the image pointer
  // itself: a pointer made of fuzzed bytes is no image.
  uint32_t magic = 0;
  std::memcpy(&magic, data, sizeof magic);
  if (magic == 0x466243B1) return 0;
  // An image in memory, as the driver is handed one: the API promises the whole image is there,
  // so the buffer holds at least what its header says (zeros past the input).
  std::vector<unsigned char> image(data, data + size);
  image.resize(std::max<size_t>(size, 64));  // a whole header, as the API promises
  const uint64_t extent = fg::fatbin::binary_extent(image.data());
  if (extent > (1u << 20)) return 0;
  if (extent > image.size()) image.resize(extent);
  image.push_back(0);
  // The image as the driver is handed it, and behind a __fatBinC_Wrapper_t as the runtime is.
  struct Wrapper {
    uint32_t magic, version;
    const void* data;
    const void* filename;
  } wrapper{0x466243B1, 1, image.data(), nullptr};
  for (const void* handed : {static_cast<const void*>(image.data()), static_cast<const void*>(&wrapper)}) {
    for (int cc : {80, 90}) {
      const fg::fatbin::Code code = fg::fatbin::select_code(handed, cc);
      for (const std::string& k : fg::fatbin::kernels(code))
        if (k.empty()) __builtin_trap();  // a kernel always has a name
      fg::Status st = fg::Status::Ok;
      for (const fg::fatbin::Variable& v : fg::fatbin::variables(code, kDeviceBytes, &st)) {
        if (v.name.empty() || v.init.empty()) __builtin_trap();  // named, and at least a byte
        // What the runtime reads for a registered variable: its initial value by name.
        std::vector<unsigned char> value(std::min<size_t>(v.init.size(), 4096));
        (void)fg::fatbin::initial_value(handed, v.name, value.data(), value.size());
      }
      (void)fg::fatbin::ptx_arch(handed, cc);
    }
  }
  // A linked image's units are PTX; a host object's fat binaries and a library's members lie
  // within the bytes handed over.
  fg::Status why = fg::Status::Ok;
  for (const fg::fatbin::Code& u : fg::fatbin::linked_units(image.data(), 90, &why))
    if (u.kind != fg::fatbin::Code::Kind::Ptx || u.bytes.empty() || u.bytes.back() != 0) __builtin_trap();
  for (const std::vector<unsigned char>& fb : fg::fatbin::object_fatbins(data, size)) {
    if (fb.size() < 16 || fb.size() > size) __builtin_trap();
    (void)fg::fatbin::select_ptx(fb.data(), 90);
  }
  for (const fg::fatbin::ArchiveMember& m : fg::fatbin::archive_members(data, size)) {
    if (m.data < data || m.size > size || m.data + m.size > data + size) __builtin_trap();
    (void)fg::fatbin::object_fatbins(m.data, m.size);
  }
  const fg::fatbin::Code ptx = fg::fatbin::ptx_code(std::string_view(reinterpret_cast<const char*>(data), size), 90);
  (void)fg::fatbin::kernels(ptx);
  fg::Status st = fg::Status::Ok;
  (void)fg::fatbin::variables(ptx, kDeviceBytes, &st);
  // The executor's parser: an answer for any text, and an error that says where.
  fg::ptx::ParseError err;
  const auto module = fg::ptx::parse(std::string_view(reinterpret_cast<const char*>(data), size), &err);
  if (!module && (err.line == 0 || err.message.empty())) __builtin_trap();
  if (module) {
    for (const fg::ptx::Function& f : module->functions)
      for (const fg::ptx::Statement& s : f.body)
        if (s.kind == fg::ptx::Statement::Kind::Instruction && s.insn.opcode == "call" &&
            (s.insn.ops.size() < 3 || s.insn.ops.size() > 4))
          __builtin_trap();  // the layout ptx.h promises
    // Linked with itself: every name it defines is defined twice (refused unless all are weak).
    (void)fg::ptx::symbols(*module);
    std::string link_error;
    (void)fg::ptx::link({*module, *module}, &link_error);
  }
  return 0;
}
