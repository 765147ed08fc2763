// SPDX-License-Identifier: Apache-2.0
#include "collector/ring_reader.h"

#include "collector/collector.h"  // monotonic_ns()
#include "collector/errors.h"

#include <bpf/libbpf.h>
#include <linux/types.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fakegpu_events.h"

namespace fgtrace {
namespace {

std::string errno_message(const char* what, int e) { return std::string(what) + ": " + std::strerror(e); }

// 4096 → "4KiB", 16 << 20 → "16MiB": the form --ringbuf-size takes (sizes here are powers of
// two, so whole numbers of the largest unit that divides them).
std::string size_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "KiB", "MiB", "GiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + (unit == 0 ? " bytes" : kUnits[unit]);
}

}  // namespace

bool decode_record(const void* data, size_t size, fg_event& ev) {
  bool ext = false, proc = false;
  switch (size) {
    case FG_REC_BASE: break;
    case FG_REC_WITH_EXT: ext = true; break;
    case FG_REC_WITH_PROC: proc = true; break;
    case FG_REC_WITH_EXT_PROC: ext = proc = true; break;
    default: return false;
  }
  const auto* at = static_cast<const unsigned char*>(data);
  fg_record rec;
  std::memcpy(&rec, at, sizeof rec);
  at += sizeof rec;
  ev = fg_event{};
  ev.tgid = rec.tgid;
  ev.tid = rec.tid;
  ev.type = rec.type_kind & 0xfu;
  const uint32_t kind = rec.type_kind >> 4;
  ev.kind = kind == FG_REC_KIND_OTHER ? ~0u : kind;  // any other number decodes as unknown
  ev.device = rec.device;
  ev.ptr = rec.ptr;
  ev.size = rec.size;
  ev.api = rec.api_source & 0xfu;
  ev.source = rec.api_source >> 4;
  ev.func = rec.func == FG_REC_NO_FUNC ? ~0u : rec.func;
  if (ext) {
    fg_record_ext x;
    std::memcpy(&x, at, sizeof x);
    at += sizeof x;
    ev.ts_ns = x.ts_ns;
    ev.aux = x.aux;
    ev.status = x.status;
  }
  if (proc) {
    fg_record_proc p;
    std::memcpy(&p, at, sizeof p);
    std::memcpy(ev.comm, p.comm, FG_COMM_LEN);
    ev.ppid = p.ppid;
    if (ev.ts_ns == 0) ev.ts_ns = p.ts_ns;
  }
  return true;
}

std::string ringbuf_size_problem(uint64_t bytes, uint64_t page_size) {
  const bool power_of_two = bytes != 0 && (bytes & (bytes - 1)) == 0;
  if (power_of_two && bytes >= page_size && bytes <= kMaxRingbufBytes) return {};  // a page is a power of two too
  const std::string rule = "a BPF ring buffer's size is a power of two and a multiple of the page size, from " +
                           size_text(page_size) + " to " + size_text(kMaxRingbufBytes);
  if (bytes == 0) return "0 bytes: " + rule + " (16MiB by default)";
  if (bytes > kMaxRingbufBytes) return size_text(bytes) + " is too large: " + rule;
  uint64_t below = page_size;
  while (below * 2 <= bytes) below *= 2;
  const std::string nearest = bytes < page_size
                                  ? "; use " + size_text(page_size)
                                  : "; the nearest are " + size_text(below) + " and " + size_text(below * 2);
  return std::to_string(bytes) + " bytes: " + rule + nearest;
}

void RingReader::RingCloser::operator()(ring_buffer* rb) const noexcept { ring_buffer__free(rb); }

RingReader::RingReader(int ringbuf_fd) {
  rb_.reset(ring_buffer__new(ringbuf_fd, &RingReader::on_record, this, nullptr));
  if (!rb_) throw TraceError(errno_message("cannot read the event ring buffer", errno));
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;  // woken by the programs' forced wake-ups, not by every pending record
  if (!epoll_ || ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, ringbuf_fd, &ev) != 0)
    throw TraceError(errno_message("cannot wait on the event ring buffer", errno));
}

size_t RingReader::poll(int timeout_ms, const Sink& sink) {
  epoll_event ev{};
  if (::epoll_wait(epoll_.get(), &ev, 1, timeout_ms) < 0 && errno != EINTR)
    throw TraceError(errno_message("waiting on the event ring buffer failed", errno));
  // Wake-ups are batched in the kernel: take whatever is pending, woken or not.
  return drain(sink);
}

size_t RingReader::drain(const Sink& sink) {
  sink_ = &sink;
  read_ns_ = 0;
  delivered_ = 0;
  error_ = nullptr;
  const int n = ring_buffer__consume(rb_.get());
  sink_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  if (n < 0) throw TraceError(errno_message("reading the event ring buffer failed", -n));
  return delivered_;
}

int RingReader::on_record(void* ctx, void* data, size_t size) {
  auto* self = static_cast<RingReader*>(ctx);
  fg_event ev;
  if (!decode_record(data, size, ev)) {
    self->bad_records_ += 1;
    return 0;
  }
  // USDT records (and untimed entry/return ones) carry no kernel time (fg_event::ts_ns):
  // stamped as read: while records flow, at most a drain period (DrainPacer, 10 ms) after the
  // call; after a pause, up to 100 ms.
  if (ev.ts_ns == 0) {
    if (self->read_ns_ == 0) self->read_ns_ = monotonic_ns();
    ev.ts_ns = self->read_ns_;
  }
  try {
    (*self->sink_)(ev);
  } catch (...) {
    // Not through libbpf's C frames: handed to drain(), which rethrows it. A non-zero return
    // stops the drain before this record is consumed.
    self->error_ = std::current_exception();
    return -1;
  }
  ++self->delivered_;
  return 0;
}

}  // namespace fgtrace
