// SPDX-License-Identifier: Apache-2.0
// User-stack symbolization with elfutils' libdwfl: return addresses of a process become
// "function+0xoff [library]" frames, read from the ELF symbol tables (and DWARF/debuginfo when
// installed) of the files the process maps.
//
// Addresses mean something only in their process's address space, and only while it is
// alive: the collector symbolizes a stack when it first sees it, and keeps the text. A process
// can exit before its maps are read (a short command on a busy host); its frames are then
// named from the build id and file offset the kernel took with the stack, in the files added
// with add_file() or mapped by any process read before.
#pragma once
#include <linux/types.h>
#include <sys/types.h>

#include "fakegpu_events.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

struct Dwfl;
struct Dwfl_Module;

namespace fgtrace {

class StackSymbolizer {
 public:
  StackSymbolizer() = default;
  ~StackSymbolizer();
  StackSymbolizer(const StackSymbolizer&) = delete;
  StackSymbolizer& operator=(const StackSymbolizer&) = delete;

  // Frames for `ips` in process pid, innermost first; `files` is the same stack as build id +
  // file offset (Collector::stack_files), used for the frames pid's maps cannot name. A frame
  // named by neither prints as "0x7f…" (its address), or "0x1f3c [build-id 9a1b…]" (its file
  // offset and the build id of a file not found).
  std::vector<std::string> frames(uint32_t pid, const std::vector<uint64_t>& ips,
                                  const std::vector<fg_file_frame>& files = {});
  // Reads pid's mappings now if not yet cached (a process's first event): frames() keeps
  // working after the process is gone.
  void prepare(uint32_t pid) { session(pid, false); }
  // Drops what is cached for pid (its exec: a new image).
  void forget(uint32_t pid);
  // A file whose code stacks may run in (an attached library, an exec'd program): found by
  // its build id when a frame needs it. Empty or repeated paths are ignored.
  void add_file(const std::string& path);

 private:
  struct DwflCloser {
    void operator()(Dwfl* d) const;
  };
  using Session = std::unique_ptr<Dwfl, DwflCloser>;
  // One file read on its own, for frames given as build id + offset.
  struct FileModule {
    Session dwfl;
    Dwfl_Module* module = nullptr;
  };
  // pid's mappings as libdwfl reads them from /proc/PID/maps; null if they cannot be read.
  static Session read_maps(pid_t pid);
  Dwfl* session(uint32_t pid, bool refresh);
  void add_files_of(Dwfl* d);
  const FileModule* file_with_build_id(const std::string& build_id);
  std::string file_frame(const fg_file_frame& f, bool return_address);

  std::map<uint32_t, Session> sessions_;
  std::set<std::string> files_;                    // every file added (indexed or not yet)
  std::vector<std::string> unindexed_;             // added, build id not read yet
  bool own_files_added_ = false;                   // the collector's own libraries (libc, libstdc++, ...)
  std::map<std::string, FileModule> by_build_id_;  // FG_BUILD_ID_SIZE bytes, zero-padded
};

}  // namespace fgtrace
