// The consumer of the event ring (struct fg_ring_slot / fg_ring_pos, bpf/fakegpu_events.h):
// fixed-size slots in a memory-mapped BPF array that the programs claim with one
// compare-and-swap on the head position. It replaced BPF_MAP_TYPE_RINGBUF, whose reserve
// takes a spinlock with interrupts off and whose commit is another atomic: together ~40 ns
// of the ~90 ns a USDT program cost (scripts/bench.sh).
//  - A drain reads the slots from its tail up to the head it found on entry, stops at the
//    first slot not yet committed for its position (a program still filling it; it is read
//    next time) and publishes its tail every 512 records and at the end, so the tail's cache
//    line does not move once per record. It never writes to the slots.
//  - A slot is half a cache line, the wire form of struct fg_event; a record that needs more
//    (a kernel time, aux, an error status) takes the next slot too, for its extension; the
//    comm comes in a slot of its own before the record that carries it (SlotDecoder).
//  - The reader drains on a timer while records flow (DrainPacer). Waits are edge-triggered
//    on the doorbell, a small BPF ring buffer the programs write to once the ring is a quarter
//    full, every (cfg.wakeup_mask + 1)-th record of a CPU; its contents are skipped unread.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

struct fg_event;
struct fg_ring_slot;
struct fg_ring_ext;
struct fg_ring_pos;

namespace fgtrace {

// Rebuilds events (struct fg_event) from the ring's half-line slots. A comm slot
// (FG_WIRE_COMM) is held for the next record of its thread, which the program wrote just
// after it; records of other threads may come between.
class SlotDecoder {
 public:
  // True: `ev` is the slot's event (with `ext`, the extension of a slot flagged FG_WIRE_EXT),
  // with its thread's pending comm if there is one. False: a comm slot, kept.
  bool decode(const fg_ring_slot& slot, const fg_ring_ext* ext, fg_event& ev);
  size_t pending() const { return comms_.size(); }
  // Comms kept at most: one whose record was lost (the ring was full) waits for its thread's
  // next record, and the oldest gives way beyond this.
  static constexpr size_t kMaxPending = 256;

 private:
  struct PendingComm {
    uint32_t tid;
    char comm[16];
  };
  std::vector<PendingComm> comms_;
};

// How long the reader waits for the doorbell before it drains anyway: kBusyMs after a drain
// that delivered records, doubling after each one that did not, up to kIdleMs. A timer fires
// on the reader's own CPU, where the doorbell rings on the traced thread's, and the scheduler
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
  // Maps the ring map `ring_fd` (`slots` slots, a power of two), its positions `pos_fd` and
  // the doorbell ring buffer's positions (`doorbell_fd`). Throws TraceError.
  RingReader(int ring_fd, size_t slots, int pos_fd, int doorbell_fd);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Receives each record in order; records without a kernel time (ts_ns 0) come stamped
  // with the time of the drain that read them.
  using Sink = std::function<void(const fg_event& ev)>;
  // Waits up to timeout_ms (0: not at all) for a wake-up, then drains. Returns the number of
  // records delivered.
  size_t poll(int timeout_ms, const Sink& sink);
  // Delivers the records committed so far, without waiting.
  size_t drain(const Sink& sink);

 private:
  int epoll_fd_ = -1;
  size_t slots_ = 0, page_ = 0;
  size_t ring_bytes_ = 0, pos_bytes_ = 0;
  fg_ring_slot* ring_ = nullptr;
  fg_ring_pos* pos_ = nullptr;
  void* doorbell_consumer_ = nullptr;        // the doorbell's consumer position (read-write)
  const void* doorbell_producer_ = nullptr;  // and its producer position (read-only)
  SlotDecoder decoder_;
  void unmap() noexcept;
};

}  // namespace fgtrace
