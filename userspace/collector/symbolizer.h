// User-stack symbolization with elfutils' libdwfl: return addresses of a process become
// "function+0xoff [library]" frames, read from the ELF symbol tables (and DWARF/debuginfo when
// installed) of the files the process maps.
//
// Addresses mean something only in their process's address space, and only while it is
// alive: the collector symbolizes a stack when it first sees it, and keeps the text.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct Dwfl;

namespace fgtrace {

class StackSymbolizer {
 public:
  StackSymbolizer() = default;
  ~StackSymbolizer();
  StackSymbolizer(const StackSymbolizer&) = delete;
  StackSymbolizer& operator=(const StackSymbolizer&) = delete;

  // Frames for `ips` in process pid, innermost first. An address no module covers prints as
  // "0x7f…"; an unreadable process gives every frame that way.
  std::vector<std::string> frames(uint32_t pid, const std::vector<uint64_t>& ips);
  // Reads pid's mappings now if not yet cached (a process's first event): frames() keeps
  // working after the process is gone.
  void prepare(uint32_t pid) { session(pid, false); }
  // Drops what is cached for pid (its exec: a new image).
  void forget(uint32_t pid);

 private:
  struct DwflCloser {
    void operator()(Dwfl* d) const;
  };
  using Session = std::unique_ptr<Dwfl, DwflCloser>;
  Dwfl* session(uint32_t pid, bool refresh);
  std::map<uint32_t, Session> sessions_;
};

}  // namespace fgtrace
