#include "collector/ring_reader.h"

#include "collector/collector.h"  // monotonic_ns()
#include "collector/errors.h"

#include <linux/types.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fakegpu_events.h"

namespace fgtrace {
namespace {

// A long drain publishes its tail every this many records (32 KiB), so the programs get the
// room back without the tail's cache line moving once per record.
constexpr uint64_t kPublishEvery = 512;
// How far ahead a drain prefetches slots (two to a cache line): 8 lines.
constexpr uint64_t kPrefetchAhead = 16;

std::string errno_message(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Maps `bytes` of BPF map `fd` at `offset`; nullptr on failure (errno set).
void* map(int fd, size_t bytes, int prot, off_t offset = 0) {
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd, offset);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

RingReader::RingReader(int ring_fd, size_t slots, int pos_fd, int doorbell_fd)
    : slots_(slots), page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
  if (slots == 0 || (slots & (slots - 1)) != 0) throw TraceError("the event ring's slot count must be a power of two");
  // A mmapable BPF array maps its values back to back, the whole rounded up to pages.
  ring_bytes_ = round_up(slots * sizeof(fg_ring_slot), page_);
  pos_bytes_ = round_up(sizeof(fg_ring_pos), page_);
  ring_ = static_cast<fg_ring_slot*>(map(ring_fd, ring_bytes_, PROT_READ | PROT_WRITE));
  pos_ = static_cast<fg_ring_pos*>(map(pos_fd, pos_bytes_, PROT_READ | PROT_WRITE));
  doorbell_consumer_ = map(doorbell_fd, page_, PROT_READ | PROT_WRITE);
  doorbell_producer_ = map(doorbell_fd, page_, PROT_READ, static_cast<off_t>(page_));
  if (!ring_ || !pos_ || !doorbell_consumer_ || !doorbell_producer_) {
    const std::string msg = errno_message("cannot map the event ring");
    unmap();
    throw TraceError(msg);
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;  // woken by the doorbell, not by every pending record
  if (epoll_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, doorbell_fd, &ev) != 0) {
    const std::string msg = errno_message("cannot wait on the event ring's doorbell");
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    unmap();
    throw TraceError(msg);
  }
}

void RingReader::unmap() noexcept {
  if (ring_) ::munmap(ring_, ring_bytes_);
  if (pos_) ::munmap(pos_, pos_bytes_);
  if (doorbell_consumer_) ::munmap(doorbell_consumer_, page_);
  if (doorbell_producer_) ::munmap(const_cast<void*>(doorbell_producer_), page_);
  ring_ = nullptr;
  pos_ = nullptr;
  doorbell_consumer_ = nullptr;
  doorbell_producer_ = nullptr;
}

RingReader::~RingReader() {
  ::close(epoll_fd_);
  unmap();
}

size_t RingReader::poll(int timeout_ms, const Sink& sink) {
  epoll_event ev{};
  if (::epoll_wait(epoll_fd_, &ev, 1, timeout_ms) < 0 && errno != EINTR)
    throw TraceError(errno_message("waiting on the event ring failed"));
  // Wake-ups are batched in the kernel: take whatever is pending, woken or not.
  return drain(sink);
}

size_t RingReader::drain(const Sink& sink) {
  // The doorbell's records only woke us: all of them are consumed at once.
  const uint64_t rung = __atomic_load_n(static_cast<const uint64_t*>(doorbell_producer_), __ATOMIC_ACQUIRE);
  __atomic_store_n(static_cast<uint64_t*>(doorbell_consumer_), rung, __ATOMIC_RELEASE);

  const uint64_t mask = slots_ - 1;
  uint64_t pos = __atomic_load_n(&pos_->tail, __ATOMIC_RELAXED);  // only this reader writes it
  const uint64_t end = __atomic_load_n(&pos_->head, __ATOMIC_ACQUIRE);  // not chased past this
  uint64_t published = pos;
  // The tail is published on every way out, a throwing sink included: the records before it
  // were delivered.
  struct Publish {
    __u64* at;
    const uint64_t& pos;
    uint64_t& published;
    ~Publish() {
      if (pos != published) __atomic_store_n(at, pos, __ATOMIC_RELEASE);
    }
  } publish{&pos_->tail, pos, published};

  size_t records = 0;
  uint64_t read_ns = 0;  // the clock, read once per drain where a record needs it
  while (pos < end) {
    // The slots were written on other CPUs: ask for the lines a few records ahead now, so
    // that their transfers overlap instead of stalling the loop one after another.
    if (pos + kPrefetchAhead < end) __builtin_prefetch(&ring_[(pos + kPrefetchAhead) & mask]);
    const fg_ring_slot& slot = ring_[pos & mask];
    // Claimed but still being filled (it holds an earlier lap's record until then).
    if (__atomic_load_n(&slot.committed, __ATOMIC_ACQUIRE) != static_cast<uint32_t>(pos + 1)) break;
    const fg_ring_slot copy = slot;
    // An extension was written before the slot that flags it was committed, and claimed with
    // it: it is in the next position, below `end`.
    fg_ring_ext ext;
    const bool extended = (copy.type & FG_WIRE_EXT) != 0;
    if (extended) std::memcpy(&ext, &ring_[(pos + 1) & mask], sizeof ext);
    pos += extended ? 2 : 1;
    fg_event ev;
    if (decoder_.decode(copy, extended ? &ext : nullptr, ev)) {
      // USDT records (and untimed entry/return ones) carry no kernel time (fg_event::ts_ns):
      // stamped as read: while records flow, at most a drain period (DrainPacer, 10 ms) after
      // the call; after a pause, up to 100 ms.
      if (ev.ts_ns == 0) {
        if (read_ns == 0) read_ns = monotonic_ns();
        ev.ts_ns = read_ns;
      }
      ++records;
      sink(ev);
    }
    if (pos - published >= kPublishEvery) {
      __atomic_store_n(&pos_->tail, pos, __ATOMIC_RELEASE);
      published = pos;
    }
  }
  return records;
}

bool SlotDecoder::decode(const fg_ring_slot& slot, const fg_ring_ext* ext, fg_event& ev) {
  static_assert(sizeof(PendingComm::comm) == FG_COMM_LEN && sizeof(slot.ptr) + sizeof(slot.size_func) == FG_COMM_LEN);
  const uint32_t type = slot.type & FG_WIRE_TYPE_MASK;
  if (type == FG_WIRE_COMM) {
    PendingComm c{slot.tid, {}};
    std::memcpy(c.comm, &slot.ptr, sizeof(slot.ptr));
    std::memcpy(c.comm + sizeof(slot.ptr), &slot.size_func, sizeof(slot.size_func));
    // At most one per thread: a comm whose record was lost (ring full) gives way.
    for (auto& p : comms_)
      if (p.tid == c.tid) {
        p = c;
        return false;
      }
    if (comms_.size() == kMaxPending) comms_.erase(comms_.begin());
    comms_.push_back(c);
    return false;
  }
  constexpr uint64_t kSizeMask = (uint64_t{1} << FG_WIRE_SIZE_BITS) - 1;
  const uint32_t kind = (slot.type & FG_WIRE_KIND_MASK) >> FG_WIRE_KIND_SHIFT;
  const uint32_t func = static_cast<uint32_t>(slot.size_func >> FG_WIRE_SIZE_BITS);
  ev = fg_event{};
  ev.tgid = slot.tgid;
  ev.tid = slot.tid;
  ev.type = type;
  ev.ptr = slot.ptr;
  ev.size = slot.size_func & kSizeMask;
  ev.kind = kind == FG_WIRE_KIND_OTHER ? ~0u : kind;  // any other number decodes as unknown
  ev.api = slot.api_source & ((1u << FG_WIRE_SOURCE_SHIFT) - 1);
  ev.source = slot.api_source >> FG_WIRE_SOURCE_SHIFT;
  ev.func = func == FG_WIRE_NO_FUNC ? ~0u : func;
  ev.device = slot.device;
  if (ext) {
    ev.ts_ns = ext->ts_ns;
    ev.aux = ext->aux;
    ev.status = ext->status;
    ev.device = ext->device;
    ev.size |= static_cast<uint64_t>(ext->size_high) << FG_WIRE_SIZE_BITS;
  }
  for (auto it = comms_.begin(); it != comms_.end(); ++it)
    if (it->tid == slot.tid) {
      std::memcpy(ev.comm, it->comm, FG_COMM_LEN);
      comms_.erase(it);
      break;
    }
  return true;
}

}  // namespace fgtrace
