// SPDX-License-Identifier: Apache-2.0
// --stacks: a frame the process's maps cannot name (the process is gone) is named from the
// build id and file offset the kernel took with the stack, in a file added to the symbolizer.
#include "collector/symbolizer.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

using fgtrace::StackSymbolizer;

namespace {
constexpr uint32_t kNoSuchPid = 0x7fffffff;  // above any pid_max: its maps cannot be read

// What the test needs of the ELF file at `path`, read with libelf on its own: its GNU build id
// and the file offset of function `name` (from .symtab: the fixture exports nothing).
struct ElfFacts {
  std::string build_id;
  uint64_t function_offset = 0;
};

ElfFacts elf_facts(const std::string& path, const char* name) {
  elf_version(EV_CURRENT);
  ElfFacts out;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return out;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn* scn = nullptr; elf && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    Elf_Data* data = gelf_getshdr(scn, &sh) ? elf_getdata(scn, nullptr) : nullptr;
    if (!data) continue;
    if (sh.sh_type == SHT_NOTE) {
      GElf_Nhdr note;
      size_t name_at = 0, desc_at = 0;
      for (size_t at = 0; (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;)
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            std::memcmp(static_cast<const char*>(data->d_buf) + name_at, "GNU", 4) == 0)
          out.build_id.assign(static_cast<const char*>(data->d_buf) + desc_at, note.n_descsz);
    } else if (sh.sh_type == SHT_SYMTAB) {
      for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
        GElf_Sym sym;
        const char* sym_name = gelf_getsym(data, static_cast<int>(i), &sym) ? elf_strptr(elf, sh.sh_link, sym.st_name)
                                                                            : nullptr;
        GElf_Shdr in;
        if (sym_name && std::strcmp(sym_name, name) == 0 && gelf_getshdr(elf_getscn(elf, sym.st_shndx), &in))
          out.function_offset = sym.st_value - in.sh_addr + in.sh_offset;
      }
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return out;
}

fg_file_frame file_frame(const std::string& build_id, uint64_t offset) {
  fg_file_frame f{};
  f.status = FG_FRAME_FILE;
  std::memcpy(f.build_id, build_id.data(), std::min<size_t>(build_id.size(), FG_BUILD_ID_SIZE));
  f.offset_or_ip = offset;
  return f;
}
}  // namespace

TEST_CASE("symbolizer: frames of a process gone are named from build id and file offset", "[trace][stacks]") {
  const std::string lib = FG_SDT_FIXTURE;
  const ElfFacts facts = elf_facts(lib, "fixture_alloc");
  REQUIRE(facts.build_id.size() == 20);  // the toolchain's default build id (sha1)
  REQUIRE(facts.function_offset != 0);
  const std::string& id = facts.build_id;
  const uint64_t fn = facts.function_offset;
  const std::string where = lib.substr(lib.rfind('/') + 1);

  StackSymbolizer s;
  s.add_file(lib);
  // The innermost frame is where the stack was taken; the others are return addresses (the
  // call is the byte before, and the offset printed is the return address's).
  const auto frames = s.frames(kNoSuchPid, {0x7f0000001004, 0x7f0000001009},
                               {file_frame(id, fn + 4), file_frame(id, fn + 9)});
  CHECK(frames == std::vector<std::string>{"fixture_alloc+0x4 [" + where + "]", "fixture_alloc+0x9 [" + where + "]"});
}

TEST_CASE("symbolizer: a frame named by nothing keeps its address, or its build id and offset", "[trace][stacks]") {
  StackSymbolizer s;
  fg_file_frame ip_only{};
  ip_only.status = FG_FRAME_IP;  // the kernel read no build id (the file's first page not cached)
  ip_only.offset_or_ip = 0x7f0000002000;
  const std::string unknown(FG_BUILD_ID_SIZE, '\xab');
  const auto frames = s.frames(kNoSuchPid, {0x7f0000001000, 0x7f0000002000, 0x7f0000003000},
                               {file_frame(unknown, 0x1f3c), ip_only});
  CHECK(frames == std::vector<std::string>{"0x1f3c [build-id abababababababababababababababababababab]",
                                           "0x7f0000002000", "0x7f0000003000"});
}

namespace {
// A function of this test binary, found through its own maps.
__attribute__((noinline)) int live_function(int x) { return x * 3 + 1; }
}  // namespace

TEST_CASE("symbolizer: a live process's frames are named through its maps first", "[trace][stacks]") {
  StackSymbolizer s;
  const auto at = reinterpret_cast<uint64_t>(&live_function);
  // The file frame says something else: the maps, read while the process lives, come first.
  const std::string unknown(FG_BUILD_ID_SIZE, '\xab');
  const auto frames = s.frames(static_cast<uint32_t>(::getpid()), {at + 2, at + 5},
                               {file_frame(unknown, 0x10), file_frame(unknown, 0x20)});
  CHECK(frames == std::vector<std::string>{"(anonymous namespace)::live_function(int)+0x2 [unit_tests]",
                                           "(anonymous namespace)::live_function(int)+0x5 [unit_tests]"});
}
