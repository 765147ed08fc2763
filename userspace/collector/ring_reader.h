// The consumer of the BPF ring buffer (BPF_MAP_TYPE_RINGBUF), reading the kernel's mapping
// directly instead of through libbpf's ring_buffer__poll, for what the producers pay:
//  - libbpf publishes its consumer position after every record and, once woken, chases the
//    producer until it catches up. Each publish pulls the position's cache line away from
//    the CPU running the traced program, whose reserve and commit read it: measured at
//    ~65 ns per traced call while the consumer was busy (scripts/bench.sh).
//  - Here a drain reads the records up to the producer position it found on entry and
//    publishes the consumer position once; waits are edge-triggered, so the reader runs
//    when the BPF side wakes it (each time cfg.wakeup_bytes more are pending) or when its
//    timeout passes, not whenever a single record is pending.
// Record format (kernel/bpf/ringbuf.c): an 8-byte header {u32 len (bit 31 busy, bit 30
// discarded), u32 page offset}, then len bytes, the whole rounded up to 8.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace fgtrace {

class RingReader {
 public:
  // Maps the ring buffer map `map_fd` of `size` bytes (its max_entries). Throws TraceError.
  RingReader(int map_fd, size_t size);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  using Sink = std::function<void(const void* data, size_t size)>;
  // Waits up to timeout_ms (0: not at all) for a wake-up, then drains. Returns the number of
  // records delivered. A record still being written ends the drain (it is read next time).
  size_t poll(int timeout_ms, const Sink& sink);
  // Delivers the records committed so far, without waiting.
  size_t drain(const Sink& sink);

 private:
  int epoll_fd_ = -1;
  size_t size_ = 0, page_ = 0;
  void* consumer_map_ = nullptr;  // the consumer position (read-write)
  void* producer_map_ = nullptr;  // the producer position, then the data mapped twice (read-only)
};

}  // namespace fgtrace
