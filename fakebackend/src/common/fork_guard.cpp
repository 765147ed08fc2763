// Keeps a forked child alive when a tracer's optimized uprobes sit on the backend's probe
// sites (a kernel defect seen on 6.18; see docs in README "Known kernel issues").
//
// The kernel optimizes a uprobe on a 5-byte NOP (every exported entry point and every USDT
// site of the backend starts with one) by rewriting the NOP into `call T`, T being a
// "[uprobes-trampoline]" page it maps into the process. fork() copies the rewritten code
// pages but not the trampoline mapping: the child's first call of a probed function jumps
// to unmapped memory and dies with SIGSEGV. In the child (pthread_atfork), this finds the
// sites that were rewritten, and where their target is unmapped maps a page of `ret` there:
// the call then returns to the instruction after the site, which is what the NOP did. The
// child runs correctly; those sites are not traced in it (the parent's are unaffected, and
// an exec'd child starts over with a fresh image the tracer probes normally).
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

extern "C" {
extern const unsigned char fg_api_text_begin[];  // common/api_table.cpp
extern const int32_t fg_api_sites_begin[], fg_api_sites_end[];
}

namespace {

constexpr unsigned char kCall = 0xE8;
constexpr uintptr_t kPage = 4096;

// The target of a `call rel32` at site, if the site holds one.
bool call_target(const unsigned char* site, uintptr_t* target) {
  if (site[0] != kCall) return false;
  int32_t rel = 0;
  std::memcpy(&rel, site + 1, sizeof rel);
  *target = reinterpret_cast<uintptr_t>(site) + 5 + static_cast<intptr_t>(rel);
  return true;
}

// Maps a page of `ret` at the target's page unless something is mapped there already
// (MAP_FIXED_NOREPLACE never replaces a mapping). Remembers the last page handled.
void cover(uintptr_t target, uintptr_t* last) {
  const uintptr_t page = target & ~(kPage - 1);
  if (page == *last) return;
  *last = page;
  void* want = reinterpret_cast<void*>(page);
  void* p = ::mmap(want, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return;  // EEXIST: the trampoline (or anything else) is there
  if (p != want) {              // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    ::munmap(p, kPage);
    return;
  }
  std::memset(p, 0xC3, kPage);  // ret
  ::mprotect(p, kPage, PROT_READ | PROT_EXEC);
}

// The USDT sites of this library, found once at load time (the child must not take the
// loader's lock, which another thread of the parent may have held at fork).
constexpr size_t kMaxUsdtSites = 256;
const unsigned char* g_usdt_sites[kMaxUsdtSites];
size_t g_usdt_count = 0;

// Collects the sites from .note.stapsdt (desc: pc, base, semaphore, then strings).
int scan_usdt(dl_phdr_info* info, size_t, void* data) {
  const auto self = reinterpret_cast<uintptr_t>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    mine = ph.p_type == PT_LOAD && self >= lo && self < lo + ph.p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      const unsigned char* desc = name + ((n.n_namesz + 3) & ~3u);
      p = desc + ((n.n_descsz + 3) & ~3u);
      if (p > end) break;
      if (n.n_type != 3 || n.n_namesz != 8 || std::memcmp(name, "stapsdt", 8) != 0 || n.n_descsz < 24) continue;
      uint64_t pc = 0;
      std::memcpy(&pc, desc, sizeof pc);
      if (g_usdt_count < kMaxUsdtSites)
        g_usdt_sites[g_usdt_count++] = reinterpret_cast<const unsigned char*>(info->dlpi_addr + pc);
    }
  }
  return 1;
}

void repair_child() {
  const int saved = errno;
  uintptr_t last = 0;
  for (const int32_t* off = fg_api_sites_begin; off < fg_api_sites_end; ++off) {
    uintptr_t target = 0;
    if (call_target(fg_api_text_begin + *off, &target)) cover(target, &last);
  }
  for (size_t i = 0; i < g_usdt_count; ++i) {
    uintptr_t target = 0;
    if (call_target(g_usdt_sites[i], &target)) cover(target, &last);
  }
  errno = saved;
}

[[gnu::constructor]] void install() {
  dl_iterate_phdr(scan_usdt, reinterpret_cast<void*>(&scan_usdt));
  pthread_atfork(nullptr, nullptr, repair_child);
}

}  // namespace
