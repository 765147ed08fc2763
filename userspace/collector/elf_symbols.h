// SPDX-License-Identifier: Apache-2.0
// The exported functions of a shared library and whether it carries the backend's USDT
// probes, read from its ELF file (libelf). Uprobes attach by file offset: one library may
// export a name under several versions (cudaGetDeviceProperties@libcudart.so.12 and
// @@libcudart.so.13 are different functions), which libbpf's by-name lookup refuses.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fgtrace {

class ElfSymbols {
 public:
  // Reads `path`; throws TraceError naming the file and the problem.
  explicit ElfSymbols(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& soname() const { return soname_; }
  // Distinct file offsets of the defined functions exported as `name` (every version).
  std::vector<uint64_t> offsets(const std::string& name) const;
  bool exports(const std::string& name) const { return funcs_.count(name) != 0; }
  // The address (st_value) of a defined function or object exported as `name` (its first
  // version), as the file's program headers place it.
  std::optional<uint64_t> address(const std::string& name) const;
  size_t function_count() const { return funcs_.size(); }
  // USDT probes of `provider` found in .note.stapsdt (names).
  std::vector<std::string> usdt_probes(const std::string& provider) const;
  // The argument strings of every site of provider:name ("8@%rdi 8@%rsi ..."), one per site.
  std::vector<std::string> usdt_arguments(const std::string& provider, const std::string& name) const;
  // The sites of provider:name as a uprobe takes them: the file offsets of the probe
  // instructions and of their semaphores (0: none), prelink-adjusted as the notes say.
  struct UsdtSites {
    std::vector<uint64_t> offsets, semaphores;
  };
  UsdtSites usdt_sites(const std::string& provider, const std::string& name) const;

 private:
  std::string path_, soname_;
  std::multimap<std::string, uint64_t> funcs_;
  std::map<std::string, uint64_t> addresses_;
  struct UsdtNote {
    std::string provider, name, arguments;
    uint64_t offset = 0, semaphore = 0;  // file offsets (semaphore 0: none)
  };
  std::vector<UsdtNote> usdt_;
};

}  // namespace fgtrace
