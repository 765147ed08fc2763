// SPDX-License-Identifier: Apache-2.0
// Keeps a forked child working, and traced, when a tracer's optimized uprobes sit on the
// backend's probe sites (a kernel defect seen on 6.18; README "Known kernel issue").
//
// The kernel optimizes a uprobe on a 5-byte NOP (every exported entry point and every USDT
// site of the backend starts with one) by rewriting the NOP into `call T`, T being a
// "[uprobes-trampoline]" page it maps into the process. fork() copies the rewritten code
// pages but not the trampoline mapping: the child's first call of a probed function would
// jump to unmapped memory and die with SIGSEGV.
//
// In the child (pthread_atfork), this finds the sites holding such a call whose target is
// not mapped and re-arms each as the kernel arms a uprobe before optimizing it: an int3 over
// the NOP's first byte, written through /proc/self/mem as a debugger writes code. The
// kernel's breakpoint handler finds the uprobe by file and offset, so the child's calls are
// traced like any process's (and the kernel may optimize them again, with a trampoline of
// the child's own); when the tracer detaches, the kernel restores the NOP as it does
// everywhere. Where /proc/self/mem cannot be written (no /proc), a page of `ret` at the
// target makes the call return to the instruction after the site, as the NOP did: the child
// runs, those sites untraced in it.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

extern "C" {
extern const unsigned char fg_api_text_begin[];  // common/api_table.cpp
extern const int32_t fg_api_sites_begin[], fg_api_sites_end[];
// core/usdt.h: each USDT site's address, relative to its entry (the linker bounds the
// section; weak: a build without USDT sites has none).
[[gnu::weak, gnu::visibility("hidden")]] extern const int32_t __start_fg_usdt_sites[];
[[gnu::weak, gnu::visibility("hidden")]] extern const int32_t __stop_fg_usdt_sites[];
}

namespace {

constexpr unsigned char kCall = 0xE8;
constexpr uintptr_t kPage = 4096;
// A uprobe armed on the NOP `0f 1f 44 00 00`: int3 over its first byte.
constexpr unsigned char kArmed[5] = {0xCC, 0x1f, 0x44, 0x00, 0x00};

// The target of a `call rel32` at site, if the site holds one.
bool call_target(const unsigned char* site, uintptr_t* target) {
  if (site[0] != kCall) return false;
  int32_t rel = 0;
  std::memcpy(&rel, site + 1, sizeof rel);
  *target = reinterpret_cast<uintptr_t>(site) + 5 + static_cast<intptr_t>(rel);
  return true;
}

bool mapped(uintptr_t page) {
  unsigned char resident = 0;
  return ::mincore(reinterpret_cast<void*>(page), kPage, &resident) == 0 || errno != ENOMEM;
}

// Maps a page of `ret` at `page` unless something is mapped there already
// (MAP_FIXED_NOREPLACE never replaces a mapping).
void cover(uintptr_t page) {
  void* want = reinterpret_cast<void*>(page);
  void* p = ::mmap(want, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return;  // EEXIST: something is there
  if (p != want) {              // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    ::munmap(p, kPage);
    return;
  }
  std::memset(p, 0xC3, kPage);  // ret
  ::mprotect(p, kPage, PROT_READ | PROT_EXEC);
}

struct Repair {
  int mem = -2;        // /proc/self/mem, opened at the first site that needs it; -1: none
  uintptr_t last = 0;  // the last target page found unmapped
  bool last_gone = false;

  void site(const unsigned char* s) {
    uintptr_t target = 0;
    if (!call_target(s, &target)) return;
    const uintptr_t page = target & ~(kPage - 1);
    if (page != last) {
      last = page;
      last_gone = !mapped(page);
    }
    if (!last_gone) return;  // a working call: the kernel copied the trampoline
    if (mem == -2) mem = ::open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    if (mem >= 0 && ::pwrite(mem, kArmed, sizeof kArmed, static_cast<off_t>(reinterpret_cast<uintptr_t>(s))) ==
                        static_cast<ssize_t>(sizeof kArmed))
      return;
    cover(page);
    last_gone = false;
  }
};

void repair_child() {
  const int saved = errno;
  Repair r;
  for (const int32_t* off = fg_api_sites_begin; off < fg_api_sites_end; ++off) r.site(fg_api_text_begin + *off);
  if (__start_fg_usdt_sites)
    for (const int32_t* e = __start_fg_usdt_sites; e < __stop_fg_usdt_sites; ++e)
      r.site(reinterpret_cast<const unsigned char*>(e) + *e);
  if (r.mem >= 0) ::close(r.mem);
  errno = saved;
}

[[gnu::constructor]] void install() { pthread_atfork(nullptr, nullptr, repair_child); }

}  // namespace
