#include "collector/ring_reader.h"

#include "collector/errors.h"

#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace fgtrace {
namespace {

constexpr uint32_t kBusyBit = 1u << 31;     // BPF_RINGBUF_BUSY_BIT: reserved, not yet committed
constexpr uint32_t kDiscardBit = 1u << 30;  // BPF_RINGBUF_DISCARD_BIT
constexpr size_t kHeaderBytes = 8;          // BPF_RINGBUF_HDR_SZ
// A long drain publishes its position every this many bytes, so the producers get the room
// back without the position's cache line moving once per record.
constexpr uint64_t kPublishEvery = 64u << 10;

std::string errno_message(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

RingReader::RingReader(int map_fd, size_t size) : size_(size), page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
  if (size == 0 || (size & (size - 1)) != 0 || size % page_ != 0)
    throw TraceError("the ring buffer size must be a power of two and a multiple of the page size");
  consumer_map_ = ::mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (consumer_map_ == MAP_FAILED) {
    consumer_map_ = nullptr;
    throw TraceError(errno_message("cannot map the ring buffer's consumer page"));
  }
  // The kernel maps the data twice in a row: a record that wraps reads contiguously.
  producer_map_ = ::mmap(nullptr, page_ + 2 * size_, PROT_READ, MAP_SHARED, map_fd, static_cast<off_t>(page_));
  if (producer_map_ == MAP_FAILED) {
    producer_map_ = nullptr;
    const std::string msg = errno_message("cannot map the ring buffer's data");
    ::munmap(consumer_map_, page_);
    throw TraceError(msg);
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;  // woken by the BPF side's wake-ups, not by every pending record
  if (epoll_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, map_fd, &ev) != 0) {
    const std::string msg = errno_message("cannot wait on the ring buffer");
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    ::munmap(producer_map_, page_ + 2 * size_);
    ::munmap(consumer_map_, page_);
    throw TraceError(msg);
  }
}

RingReader::~RingReader() {
  ::close(epoll_fd_);
  ::munmap(producer_map_, page_ + 2 * size_);
  ::munmap(consumer_map_, page_);
}

size_t RingReader::poll(int timeout_ms, const Sink& sink) {
  epoll_event ev{};
  if (::epoll_wait(epoll_fd_, &ev, 1, timeout_ms) < 0 && errno != EINTR)
    throw TraceError(errno_message("waiting on the ring buffer failed"));
  // Wake-ups are batched in the kernel: take whatever is pending, woken or not.
  return drain(sink);
}

size_t RingReader::drain(const Sink& sink) {
  auto* consumer_pos = static_cast<uint64_t*>(consumer_map_);
  const auto* producer_pos = static_cast<const uint64_t*>(producer_map_);
  const char* data = static_cast<const char*>(producer_map_) + page_;
  const uint64_t mask = size_ - 1;

  uint64_t pos = __atomic_load_n(consumer_pos, __ATOMIC_ACQUIRE);
  const uint64_t end = __atomic_load_n(producer_pos, __ATOMIC_ACQUIRE);  // not chased past this
  uint64_t published = pos;
  // The position is published on every way out, a throwing sink included: the records before
  // it were delivered.
  struct Publish {
    uint64_t* at;
    const uint64_t& pos;
    uint64_t& published;
    ~Publish() {
      if (pos != published) __atomic_store_n(at, pos, __ATOMIC_RELEASE);
    }
  } publish{consumer_pos, pos, published};

  size_t records = 0;
  while (pos < end) {
    const auto* header = reinterpret_cast<const uint32_t*>(data + (pos & mask));
    const uint32_t len = __atomic_load_n(header, __ATOMIC_ACQUIRE);
    if (len & kBusyBit) break;  // reserved before `end`, not yet committed
    const uint32_t bytes = len & ~(kBusyBit | kDiscardBit);
    const uint64_t next = pos + ((kHeaderBytes + bytes + 7) & ~uint64_t{7});
    if (!(len & kDiscardBit)) {
      sink(reinterpret_cast<const char*>(header) + kHeaderBytes, bytes);
      ++records;
    }
    pos = next;
    if (pos - published >= kPublishEvery) {
      __atomic_store_n(consumer_pos, pos, __ATOMIC_RELEASE);
      published = pos;
    }
  }
  return records;
}

}  // namespace fgtrace
