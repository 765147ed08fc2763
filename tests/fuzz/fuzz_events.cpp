// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (clang, ASan + UBSan) for the collector's event path: the ring buffer's
// wire records (decode_record, collector/ring_reader.h), the fg_event decoder (decode,
// core/event.h) and the books they feed (AllocationLedger, core/ledger.h), with what the
// collector itself adds (tracked processes, baselines, exits found without an event, expiry).
//
// The input is a sequence of operations; each starts with a byte that says which:
//   0  raw fg_event bytes, of a fuzzed size (mostly the right one), to consume(data, size)
//   1  a wire record of 32/56/64/88 bytes (or another size) through decode_record
//   2-5 an event built from a few bytes, its pids, pointers and devices from small sets, so
//      that allocations, frees, forks, execs and exits meet each other
//   6  a collector call (track_process, set_baseline, process_exited, expire, ...)
//   7  check the books now (the first four times)
// and the books are checked at the end. The books' rules (ledger.h) checked:
//  * every book of a running process: live = baseline left + the sizes of its outstanding
//    allocations; a process's live on a device = the sum of its books there; its GPU live
//    = the sum over devices >= 0; the system's = the sum over processes; each peak >= live;
//  * an exited process holds nothing (live 0, nothing outstanding).
// (Sums are only compared while the bytes fed stay far below 2^64: the books are 64-bit.)
#include "fuzz_bytes.h"
#include "collector/ring_reader.h"
#include "core/event.h"
#include "core/ledger.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fgtrace {
// ring_reader.cpp stamps untimed records with the collector's clock (collector.cpp, which
// this target does not link): a fixed time keeps runs repeatable.
uint64_t monotonic_ns() { return 1'000'000'000; }
}  // namespace fgtrace

namespace {

using namespace fgtrace;

using fuzz::Bytes;

[[noreturn]] void fail(const char* what, uint64_t a, uint64_t b) {
  std::fprintf(stderr, "fuzz_events: %s (%llu vs %llu)\n", what, static_cast<unsigned long long>(a),
               static_cast<unsigned long long>(b));
  std::abort();
}

void expect_eq(const char* what, uint64_t a, uint64_t b) {
  if (a != b) fail(what, a, b);
}
void expect_ge(const char* what, uint64_t a, uint64_t b) {
  if (a < b) fail(what, a, b);
}

constexpr uint64_t kSmallBytes = 1ull << 40;  // every size and baseline below this: sums cannot wrap

struct Run {
  AllocationLedger ledger;
  bool huge = false;  // a size at or above kSmallBytes was fed: sums are not compared

  void note_size(uint64_t size) { huge = huge || size >= kSmallBytes; }
  void note_raw(const void* data, size_t size) {
    if (auto ev = decode(data, size)) note_size(ev->size);
  }
  void check() const;
};

void Run::check() const {
  const Snapshot s = ledger.snapshot(/*include_exited=*/true);
  std::map<int32_t, uint64_t> device_live;
  uint64_t gpu_live = 0;
  for (const ProcessView& p : s.processes) {
    expect_ge("process peak below live", p.peak_bytes, p.live_bytes);
    if (p.exited) {
      expect_eq("exited process still live", p.live_bytes, 0);
      expect_eq("exited process with outstanding allocations", p.outstanding_count, 0);
    }
    // Outstanding bytes per (device, kind) book of the running process.
    std::map<std::pair<int32_t, int>, uint64_t> outstanding;
    if (!p.exited)
      ledger.for_each_outstanding(p.pid, [&](const OutstandingAllocation& a) {
        outstanding[{a.device, static_cast<int>(a.kind)}] += a.size;
      });
    std::map<int32_t, uint64_t> per_device;
    uint64_t books_gpu = 0;
    for (const BookView& b : p.books) {
      expect_ge("book peak below live", b.peak_bytes, b.live_bytes);
      expect_ge("baseline left above live", b.live_bytes, b.baseline_left);
      if (p.exited) expect_eq("exited book still live", b.live_bytes, 0);
      if (huge) continue;
      if (!p.exited)
        expect_eq("book live != baseline left + outstanding", b.live_bytes,
                  b.baseline_left + outstanding[{b.device, static_cast<int>(b.kind)}]);
      per_device[b.device] += b.live_bytes;
      if (b.device >= 0) books_gpu += b.live_bytes;
    }
    for (const DeviceUsage& d : p.devices) {
      expect_ge("process device peak below live", d.peak_bytes, d.live_bytes);
      if (huge) continue;
      expect_eq("process device live != its books", d.live_bytes, per_device[d.device]);
      device_live[d.device] += d.live_bytes;
    }
    if (huge) continue;
    expect_eq("process live != its GPU books", p.live_bytes, books_gpu);
    gpu_live += p.live_bytes;
  }
  expect_ge("system peak below live", s.peak_bytes, s.live_bytes);
  for (const DeviceUsage& d : s.devices) {
    expect_ge("system device peak below live", d.peak_bytes, d.live_bytes);
    if (!huge) expect_eq("system device live != its processes", d.live_bytes, device_live[d.device]);
  }
  if (!huge) expect_eq("system live != its processes", s.live_bytes, gpu_live);
}

uint32_t pick_pid(uint8_t b) { return 100 + b % 4; }
int32_t pick_device(uint8_t b) { return b < 0xf0 ? static_cast<int32_t>(b % 5) - 1 : static_cast<int32_t>(b) * 1000; }
uint64_t pick_ptr(uint8_t b) { return b == 0 ? 0 : 0x7f0000000000ull + (b % 32) * 0x200000ull; }

void apply_built_event(Run& r, Bytes& in) {
  fg_event ev{};
  const uint8_t type = in.u8(), who = in.u8(), where = in.u8(), what = in.u8();
  ev.type = type % 11;  // 0 and 10 are no event type
  ev.tgid = pick_pid(who);
  ev.tid = who & 0x80 ? ev.tgid + 1 : ev.tgid;
  ev.device = pick_device(where);
  ev.ptr = pick_ptr(in.u8());
  ev.size = static_cast<uint64_t>(in.u16()) << (what % 24);
  ev.kind = what >> 5;  // 0..7: the four kinds, registered, and numbers beyond
  ev.status = what & 0x10 ? -2 : 0;
  ev.api = type >> 4 & 3;
  ev.source = type >> 6;
  ev.func = who & 0x40 ? 3 : ~0u;
  ev.ts_ns = in.u32();
  switch (ev.type) {
    case FG_EV_PROC_FORK: ev.aux = pick_pid(in.u8()); break;
    case FG_EV_IMPLICIT_FREE: ev.aux = in.u8() % 5; break;
    case FG_EV_ALLOC: ev.aux = in.u8() % 4; break;  // a stack id + 1, or none
    default: ev.aux = in.u8() & 1; break;
  }
  if (who & 0x20) std::strncpy(ev.comm, who & 0x10 ? "trainer" : "python3.11-long", sizeof ev.comm);  // may fill it
  r.note_size(ev.size);
  r.ledger.consume(ev);
}

void apply_collector_call(Run& r, Bytes& in) {
  const uint8_t op = in.u8();
  const uint32_t pid = pick_pid(in.u8());
  switch (op % 10) {
    case 0: r.ledger.track_process(pid, "app", pick_pid(in.u8()), in.u32(), in.u8() & 1); break;
    case 1: {
      const int32_t dev = pick_device(in.u8());
      const auto kind = static_cast<MemKind>(in.u8() % 4);
      const uint64_t bytes = static_cast<uint64_t>(in.u16()) << 12;
      r.note_size(bytes);
      r.ledger.set_baseline(pid, dev, kind, bytes);
      break;
    }
    case 2: r.ledger.mark_baseline_known(pid); break;
    case 3: r.ledger.process_exited(pid, in.u32()); break;
    case 4: r.ledger.expire(in.u32(), in.u16()); break;
    case 5: r.ledger.record_call(pid, in.u8() & 1 ? "cuMemAlloc_v2" : "cudaFree", in.u32(), in.u8() & 1); break;
    case 6: r.ledger.record_copy(pid, static_cast<CopyDirection>(in.u8() % kCopyDirections), in.u32()); break;
    case 7: r.ledger.set_kernel_totals(pid, {{"k", in.u8()}, {"k", in.u8()}, {"other", 1}}); break;
    case 8: {
      KernelBookView b;
      b.device = pick_device(in.u8());
      b.live_bytes = in.u32();
      r.ledger.set_kernel_books(pid, {b});
      break;
    }
    case 9: r.ledger.count_bad_records(in.u8()); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Run r;
  Bytes in(data, size);
  int ops = 0, checks = 0;
  while (!in.empty() && ops++ < 4096) {
    const uint8_t op = in.u8();
    switch (op % 8) {
      case 0: {
        const uint8_t s = in.u8();
        const size_t n = s < 0xc0 ? sizeof(fg_event) : static_cast<size_t>(s - 0xc0) * 2;  // 0..126
        const std::vector<uint8_t> rec = in.take(n);
        r.note_raw(rec.data(), rec.size());
        r.ledger.consume(rec.data(), rec.size());
        break;
      }
      case 1: {
        static constexpr size_t kSizes[] = {FG_REC_BASE, FG_REC_WITH_EXT, FG_REC_WITH_PROC, FG_REC_WITH_EXT_PROC};
        const uint8_t s = in.u8();
        const size_t n = s < 0xf0 ? kSizes[s % 4] : (s - 0xf0) * 7;
        const std::vector<uint8_t> rec = in.take(n);
        fg_event ev;
        if (decode_record(rec.data(), rec.size(), ev)) {
          r.note_size(ev.size);
          r.ledger.consume(ev);
        } else {
          r.ledger.count_bad_records(1);
        }
        break;
      }
      case 6: apply_collector_call(r, in); break;
      case 7:
        if (checks++ < 4) r.check();  // a snapshot costs far more than an event
        break;
      default: apply_built_event(r, in); break;
    }
  }
  r.check();
  return 0;
}
