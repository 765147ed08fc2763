// SPDX-License-Identifier: Apache-2.0
// The consumer of the event ring buffer (map `events`, a BPF_MAP_TYPE_RINGBUF: bpf/ring.bpf.h).
// libbpf's ring_buffer reads the records; this turns each one (struct fg_record and what
// follows it, bpf/fakegpu_events.h) into the collector's struct fg_event, and paces the reads:
//  - The reader drains on a timer while records flow (DrainPacer). The programs submit most
//    records without a wake-up and force one only for a ring buffer that fills faster than
//    that; the reader waits for those edge-triggered, on an epoll instance of its own.
//    libbpf's ring_buffer__poll waits level-triggered: it would return as soon as one record
//    is pending, and the timer would become a busy loop of small drains.
//  - Records without a kernel time (most: fg_event.ts_ns) are stamped with the time of the
//    drain that reads them.
#pragma once
#include "collector/unique_fd.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>

struct fg_event;
struct ring_buffer;

namespace fgtrace {

// The record the programs wrote (`size` bytes at `data`) as an event, every field rewritten
// (comm empty unless the record carries it); false: no record has that size (a contract
// mismatch), `ev` unspecified.
bool decode_record(const void* data, size_t size, fg_event& ev);

// Why `bytes` cannot be the ring buffer's size (--ringbuf-size), or empty when it can: the
// kernel takes a power of two that is a multiple of the page size, and at most 2 GiB (its
// size is a 32-bit number).
inline constexpr uint64_t kMaxRingbufBytes = uint64_t{1} << 31;
std::string ringbuf_size_problem(uint64_t bytes, uint64_t page_size);

// How long the reader waits for a wake-up before it drains anyway: kBusyMs after a drain
// that delivered records, doubling after each one that did not, up to kIdleMs. A timer fires
// on the reader's own CPU, where a wake-up comes from the traced thread's, and the scheduler
// tends to run the woken reader there: its drain then takes the traced process's time.
class DrainPacer {
 public:
  static constexpr int kBusyMs = 10;
  static constexpr int kIdleMs = 100;
  int wait_ms() const { return wait_ms_; }
  void drained(size_t records) { wait_ms_ = records > 0 ? kBusyMs : std::min(2 * wait_ms_, kIdleMs); }

 private:
  int wait_ms_ = kIdleMs;
};

class RingReader {
 public:
  // Reads the ring buffer map `ringbuf_fd`. Throws TraceError.
  explicit RingReader(int ringbuf_fd);
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Receives each record in order.
  using Sink = std::function<void(const fg_event& ev)>;
  // Waits up to timeout_ms (0: not at all) for a wake-up, then drains. Returns the number of
  // records delivered.
  size_t poll(int timeout_ms, const Sink& sink);
  // Delivers the records submitted so far, without waiting. A sink that throws stops the
  // drain, and its exception comes out of here (the record it was given is consumed).
  size_t drain(const Sink& sink);
  // Records of a size no record has, not delivered: so many since the last call.
  uint64_t take_bad_records() { return std::exchange(bad_records_, 0); }

 private:
  struct RingCloser {
    void operator()(ring_buffer* rb) const noexcept;
  };
  std::unique_ptr<ring_buffer, RingCloser> rb_;
  UniqueFd epoll_;
  // The drain in progress (on_record's context).
  const Sink* sink_ = nullptr;
  uint64_t read_ns_ = 0;
  size_t delivered_ = 0;
  uint64_t bad_records_ = 0;
  std::exception_ptr error_;
  static int on_record(void* ctx, void* data, size_t size);
};

}  // namespace fgtrace
