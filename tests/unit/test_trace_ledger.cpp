// SPDX-License-Identifier: Apache-2.0
// Unit tests: fakegpu-trace's AllocationLedger (exact books from event sequences) and the
// stack aggregation on top of it.
#include "trace_test_events.h"
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../userspace/core/json.h"
#include "../../userspace/core/ledger.h"
#include "../../userspace/core/stacks.h"

using namespace fgtrace;

namespace {

constexpr uint64_t MiB = 1ull << 20;

// As the runtime's USDT probes report it. No comm unless a test sets one: an event's comm (the
// leader's) would rename the process.
Event runtime(Event e) {
  e.api = Api::Runtime;
  e.source = Source::Usdt;
  return e;
}

Event base(EventType type, uint32_t pid, uint64_t ts) { return runtime(test::event_of(type, pid, ts)); }

Event alloc(uint32_t pid, int32_t dev, MemKind kind, uint64_t ptr, uint64_t size, uint64_t ts = 1,
            std::optional<uint32_t> stack = std::nullopt) {
  Event e = runtime(test::ev(EventType::Alloc, pid, dev, kind, ptr, size, ts));
  e.stack_id = stack;
  return e;
}

// A successful free as the backend reports it: the allocation's device, kind and size.
Event free_of(uint32_t pid, uint64_t ptr, uint64_t size = 0, int32_t dev = -1, MemKind kind = MemKind::Unknown,
              uint64_t ts = 2) {
  return runtime(test::ev(EventType::Free, pid, dev, kind, ptr, size, ts));
}

Event implicit_free(uint32_t pid, uint64_t ptr, uint64_t size, int32_t dev, MemKind kind, ImplicitReason why) {
  Event e = runtime(test::ev(EventType::ImplicitFree, pid, dev, kind, ptr, size, 3));
  e.reason = why;
  e.aux = static_cast<uint64_t>(why);
  return e;
}

Event failed(EventType type, uint32_t pid, int32_t dev, MemKind kind, uint64_t size) {
  Event e = runtime(test::ev(type, pid, dev, kind, 0, size, 2));
  e.status = 2;  // cudaErrorMemoryAllocation
  return e;
}

Event proc_exit(uint32_t pid, uint64_t ts) { return base(EventType::ProcExit, pid, ts); }

Event proc_fork(uint32_t parent, uint32_t child, uint64_t ts) {
  Event e = base(EventType::ProcFork, parent, ts);
  e.aux = child;
  e.child_pid = child;
  return e;
}

Event proc_exec(uint32_t pid, const std::string& comm, uint64_t ts) {
  Event e = base(EventType::ProcExec, pid, ts);
  e.comm = comm;
  return e;
}

const ProcessView& proc(const Snapshot& s, uint32_t pid, bool exited = false) {
  for (const ProcessView& p : s.processes)
    if (p.pid == pid && p.exited == exited) return p;
  throw std::runtime_error("no process " + std::to_string(pid));
}

const BookView& book(const ProcessView& p, int32_t dev, MemKind kind) {
  for (const BookView& b : p.books)
    if (b.device == dev && b.kind == kind) return b;
  throw std::runtime_error("no book " + std::to_string(dev) + "/" + to_string(kind));
}

const DeviceUsage& device(const std::vector<DeviceUsage>& ds, int32_t dev) {
  for (const DeviceUsage& d : ds)
    if (d.device == dev) return d;
  throw std::runtime_error("no device " + std::to_string(dev));
}

}  // namespace

TEST_CASE("ledger: allocations and frees keep exact live, peak and counts", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(100, "train", 1, 0, /*running_before_attach=*/false);
  l.apply(alloc(100, 0, MemKind::Device, 0x1000, 10 * MiB));
  l.apply(alloc(100, 0, MemKind::Device, 0x2000, 20 * MiB));
  l.apply(free_of(100, 0x1000, 10 * MiB, 0, MemKind::Device));
  l.apply(alloc(100, 0, MemKind::Device, 0x3000, 5 * MiB));

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 100);
  CHECK(p.comm == "train");
  CHECK(p.ppid == 1);
  CHECK_FALSE(p.since_attach);
  const BookView& b = book(p, 0, MemKind::Device);
  CHECK(b.live_bytes == 25 * MiB);
  CHECK(b.peak_bytes == 30 * MiB);
  CHECK(b.allocs == 3);
  CHECK(b.alloc_bytes == 35 * MiB);
  CHECK(b.frees == 1);
  CHECK(b.freed_bytes == 10 * MiB);
  CHECK(b.outstanding == 2);
  CHECK(b.unmatched_frees == 0);
  CHECK(p.live_bytes == 25 * MiB);
  CHECK(p.peak_bytes == 30 * MiB);
  CHECK(s.live_bytes == 25 * MiB);
  CHECK(s.peak_bytes == 30 * MiB);
  CHECK(device(s.devices, 0).live_bytes == 25 * MiB);
  CHECK(device(s.devices, 0).peak_bytes == 30 * MiB);
  CHECK(device(s.devices, 0).processes == 1);
  CHECK(s.counters.events == 4);
}

TEST_CASE("ledger: a free is booked where the allocation was, whatever the free says", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(100, "x", 1, 0, false);
  l.apply(alloc(100, 1, MemKind::Managed, 0xa000, 4096));
  // cudaFree through the uprobe path: no device, no kind, no size.
  l.apply(free_of(100, 0xa000));
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 100);
  REQUIRE(p.books.size() == 1);
  const BookView& b = book(p, 1, MemKind::Managed);
  CHECK(b.live_bytes == 0);
  CHECK(b.frees == 1);
  CHECK(b.freed_bytes == 4096);
  CHECK(b.outstanding == 0);
}

TEST_CASE("ledger: unmatched frees are counted and never make numbers negative", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(7, "x", 1, 0, false);  // traced from its start: nothing can predate us
  l.apply(alloc(7, 0, MemKind::Device, 0x1000, 100));
  l.apply(free_of(7, 0x9999, 1000, 0, MemKind::Device));
  l.apply(free_of(7, 0x9999, 1000, 0, MemKind::Device));
  l.apply(free_of(7, 0, 0, -1, MemKind::Unknown));  // cudaFree(NULL): a no-op, not counted

  Snapshot s = l.snapshot(true);
  const BookView& b = book(proc(s, 7), 0, MemKind::Device);
  CHECK(b.live_bytes == 100);
  CHECK(b.peak_bytes == 100);
  CHECK(b.unmatched_frees == 2);
  CHECK(b.frees == 2);
  CHECK(s.counters.unmatched_frees == 2);
  CHECK(s.counters.pre_attach_frees == 0);
  CHECK(s.live_bytes == 100);
  CHECK(proc(s, 7).books.size() == 1);
}

TEST_CASE("ledger: a baseline is the starting live figure and frees never take it below 0", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(55, "server", 1, 0, /*running_before_attach=*/true);
  l.set_baseline(55, 0, MemKind::Device, 1000);
  l.set_baseline(55, 0, MemKind::Managed, 64);

  Snapshot s0 = l.snapshot(true);
  const ProcessView& p0 = proc(s0, 55);
  CHECK(p0.since_attach);
  CHECK(p0.baseline_known);
  CHECK(book(p0, 0, MemKind::Device).live_bytes == 1000);
  CHECK(book(p0, 0, MemKind::Device).peak_bytes == 1000);
  CHECK(book(p0, 0, MemKind::Device).baseline_bytes == 1000);
  CHECK(p0.live_bytes == 1064);
  CHECK(s0.live_bytes == 1064);

  l.apply(alloc(55, 0, MemKind::Device, 0x5000, 500));    // 1500
  l.apply(free_of(55, 0x100, 300, 0, MemKind::Device));   // pre-attach: 1200
  l.apply(free_of(55, 0x200, 5000, 0, MemKind::Device));  // more than is left: 500
  l.apply(free_of(55, 0x300, 77, 0, MemKind::Device));    // nothing left: stays 500
  l.apply(free_of(55, 0x5000, 500, 0, MemKind::Device));  // tracked: 0

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 55);
  const BookView& b = book(p, 0, MemKind::Device);
  CHECK(b.live_bytes == 0);
  CHECK(b.baseline_left == 0);
  CHECK(b.baseline_bytes == 1000);
  CHECK(b.peak_bytes == 1500);
  CHECK(b.frees == 4);
  CHECK(b.unmatched_frees == 0);
  CHECK(s.counters.pre_attach_frees == 3);
  CHECK(s.counters.unmatched_frees == 0);
  CHECK(book(p, 0, MemKind::Managed).live_bytes == 64);
  CHECK(p.live_bytes == 64);
  CHECK(s.live_bytes == 64);
  CHECK(device(s.devices, 0).live_bytes == 64);

  // Setting the baseline again replaces what was left of it.
  l.set_baseline(55, 0, MemKind::Managed, 10);
  CHECK(book(proc(l.snapshot(true), 55), 0, MemKind::Managed).live_bytes == 10);
}

TEST_CASE("ledger: a process first seen through an event counts since attach", "[trace][ledger]") {
  AllocationLedger l;
  Event first = alloc(9, 0, MemKind::Device, 0x1, 100);
  first.comm = "app9";
  l.apply(first);
  l.apply(free_of(9, 0x77, 4096, 0, MemKind::Device));  // allocated before we looked
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 9);
  CHECK(p.since_attach);
  CHECK_FALSE(p.baseline_known);
  CHECK(p.comm == "app9");
  CHECK(book(p, 0, MemKind::Device).live_bytes == 100);
  CHECK(s.counters.pre_attach_frees == 1);
  CHECK(s.counters.unmatched_frees == 0);

  // The collector may say it found a baseline of nothing.
  l.mark_baseline_known(9);
  CHECK(proc(l.snapshot(true), 9).baseline_known);

  // A process the collector announces as started under it counts from the start.
  Event other = alloc(10, 0, MemKind::Device, 0x1, 1);
  l.apply(other);
  l.track_process(10, "child", 9, 5, /*running_before_attach=*/false);
  const Snapshot s10 = l.snapshot(true);
  const ProcessView& p10 = proc(s10, 10);
  CHECK_FALSE(p10.since_attach);
  CHECK(p10.comm == "child");
  CHECK(p10.ppid == 9);
  CHECK(p10.start_ns == 5);
}

TEST_CASE("ledger: exit turns what is held into the leak report and frees the books", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(300, "leaky", 1, 10, false);
  l.apply(alloc(300, 0, MemKind::Device, 0x1, 100 * MiB));
  l.apply(alloc(300, 0, MemKind::Device, 0x2, 50 * MiB));
  l.apply(alloc(300, 1, MemKind::Managed, 0x3, 8 * MiB));
  l.apply(alloc(300, -1, MemKind::Host, 0x4, 2 * MiB));
  l.apply(alloc(300, 1, MemKind::Device, 0x5, 1 * MiB));
  l.apply(free_of(300, 0x2, 50 * MiB, 0, MemKind::Device));
  // The backend's exit handler: what the program never freed, reason "process exit".
  l.apply(implicit_free(300, 0x1, 100 * MiB, 0, MemKind::Device, ImplicitReason::ProcessExit));
  // Context destroy frees without leaking.
  l.apply(implicit_free(300, 0x5, 1 * MiB, 1, MemKind::Device, ImplicitReason::CtxDestroy));
  l.apply(proc_exit(300, 99));

  CHECK_FALSE(l.running(300));
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 300, true);
  CHECK(p.exited);
  CHECK(p.exit_event_seen);
  CHECK(p.exit_ns == 99);
  CHECK(p.live_bytes == 0);
  CHECK(p.peak_bytes == 159 * MiB);  // 100 + 50 + 8 + 1 on GPUs (host memory is not a GPU's)
  CHECK(p.leaked_bytes == 110 * MiB);
  CHECK(p.leaked_allocs == 3);

  const BookView& d0 = book(p, 0, MemKind::Device);
  CHECK(d0.live_bytes == 0);
  CHECK(d0.leaked_bytes == 100 * MiB);
  CHECK(d0.leaked_allocs == 1);
  CHECK(d0.implicit_frees == 0);
  CHECK(d0.peak_bytes == 150 * MiB);
  const BookView& m1 = book(p, 1, MemKind::Managed);
  CHECK(m1.leaked_bytes == 8 * MiB);
  CHECK(m1.leaked_allocs == 1);
  const BookView& d1 = book(p, 1, MemKind::Device);
  CHECK(d1.implicit_frees == 1);
  CHECK(d1.implicit_freed_bytes == 1 * MiB);
  CHECK(d1.leaked_bytes == 0);
  const BookView& h = book(p, -1, MemKind::Host);
  CHECK(h.leaked_bytes == 2 * MiB);
  CHECK(h.outstanding == 0);

  CHECK(device(p.devices, 0).leaked_bytes == 100 * MiB);
  CHECK(device(p.devices, 1).leaked_bytes == 8 * MiB);
  CHECK(device(p.devices, 1).peak_bytes == 9 * MiB);
  CHECK(device(p.devices, -1).peak_bytes == 2 * MiB);

  CHECK(s.live_bytes == 0);
  CHECK(s.peak_bytes == 159 * MiB);
  CHECK(s.leaked_bytes == 110 * MiB);
  CHECK(s.leaked_allocs == 3);
  CHECK(device(s.devices, 0).live_bytes == 0);
  CHECK(device(s.devices, 0).peak_bytes == 150 * MiB);
  CHECK(device(s.devices, 0).leaked_bytes == 100 * MiB);
  CHECK(device(s.devices, -1).leaked_bytes == 2 * MiB);

  // Running-only snapshots leave it out; a second exit changes nothing.
  CHECK(l.snapshot(false).processes.empty());
  l.apply(proc_exit(300, 120));
  CHECK(l.snapshot(true).processes.size() == 1);
  CHECK(proc(l.snapshot(true), 300, true).leaked_bytes == 110 * MiB);
}

TEST_CASE("ledger: a killed process (no implicit frees) leaks what it held; so does its baseline", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(400, "victim", 1, 0, true);
  l.set_baseline(400, 2, MemKind::Device, 4096);
  l.apply(alloc(400, 2, MemKind::Device, 0x10, 1000));
  l.apply(free_of(400, 0x99, 96, 2, MemKind::Device));  // a pre-attach allocation: 4000 left
  l.process_exited(400, 50);                            // the collector saw it gone

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 400, true);
  CHECK_FALSE(p.exit_event_seen);
  const BookView& b = book(p, 2, MemKind::Device);
  CHECK(b.leaked_bytes == 5000);
  CHECK(b.leaked_allocs == 1);  // the baseline's allocations are not known one by one
  CHECK(b.live_bytes == 0);
  CHECK(b.baseline_left == 0);
  CHECK(s.counters.exits_without_event == 1);
  l.process_exited(400, 60);  // already gone: nothing happens
  CHECK(l.counters().exits_without_event == 1);
}

TEST_CASE("ledger: fork gives the child empty books; exec renames and leaks the old image's memory",
          "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(500, "launcher", 1, 0, false);
  l.apply(alloc(500, 0, MemKind::Device, 0x1000, 4 * MiB));
  l.apply(proc_fork(500, 501, 20));

  Snapshot s = l.snapshot(true);
  const ProcessView& child = proc(s, 501);
  CHECK(child.ppid == 500);
  CHECK(child.comm == "launcher");
  CHECK(child.start_ns == 20);
  CHECK_FALSE(child.since_attach);
  CHECK(child.books.empty());
  CHECK(child.live_bytes == 0);

  // The child frees the parent's pointer: it holds nothing, so it is unmatched in the child.
  l.apply(free_of(501, 0x1000, 4 * MiB, 0, MemKind::Device));
  l.apply(alloc(501, 0, MemKind::Device, 0x2000, 1 * MiB));
  l.apply(proc_exec(501, "worker", 30));
  s = l.snapshot(true);
  const ProcessView& c2 = proc(s, 501);
  CHECK(c2.comm == "worker");
  CHECK(c2.unmatched_frees == 1);
  CHECK(c2.live_bytes == 0);
  CHECK(c2.leaked_bytes == 1 * MiB);  // held by the image exec replaced
  CHECK(c2.allocs == 1);              // books are kept across exec
  CHECK(c2.peak_bytes == 1 * MiB);
  const ProcessView& parent = proc(s, 500);
  CHECK(parent.live_bytes == 4 * MiB);
  CHECK(book(parent, 0, MemKind::Device).outstanding == 1);
  CHECK(s.live_bytes == 4 * MiB);
  CHECK(s.peak_bytes == 5 * MiB);
}

TEST_CASE("ledger: devices and kinds are separate books; peaks are high-water marks of sums", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(1, "a", 0, 0, false);
  l.track_process(2, "b", 0, 0, false);
  l.apply(alloc(1, 0, MemKind::Device, 0x1, 100));
  l.apply(alloc(1, 0, MemKind::Managed, 0x2, 10));
  l.apply(alloc(1, 1, MemKind::Vmm, 0x3, 1000));
  l.apply(free_of(1, 0x1));                        // device 0 down to 10
  l.apply(alloc(2, 0, MemKind::Device, 0x1, 50));  // same address, another process
  l.apply(alloc(1, -1, MemKind::Host, 0x4, 7));

  Snapshot s = l.snapshot(true);
  const ProcessView& a = proc(s, 1);
  REQUIRE(a.books.size() == 4);
  // Sorted by device, then kind: host (-1) first.
  CHECK(a.books[0].device == -1);
  CHECK(a.books[1].kind == MemKind::Device);
  CHECK(a.books[2].kind == MemKind::Managed);
  CHECK(a.books[3].kind == MemKind::Vmm);
  CHECK(device(a.devices, 0).live_bytes == 10);
  CHECK(device(a.devices, 0).peak_bytes == 110);
  CHECK(device(a.devices, 1).live_bytes == 1000);
  CHECK(device(a.devices, -1).live_bytes == 7);
  CHECK(a.live_bytes == 1010);
  CHECK(a.peak_bytes == 1110);
  const ProcessView& b = proc(s, 2);
  CHECK(b.live_bytes == 50);
  CHECK(device(s.devices, 0).live_bytes == 60);
  CHECK(device(s.devices, 0).peak_bytes == 110);  // 100 + 10 before the free; 60 after
  CHECK(device(s.devices, 0).processes == 2);
  CHECK(device(s.devices, 1).peak_bytes == 1000);
  CHECK(device(s.devices, -1).live_bytes == 7);
  CHECK(s.live_bytes == 1060);
  CHECK(s.peak_bytes == 1110);
  REQUIRE(s.devices.size() == 3);
  CHECK(s.devices[0].device == -1);
  CHECK(s.devices[2].device == 1);
}

TEST_CASE("ledger: every device number gets exact books, past the first 16 devices too", "[trace][ledger]") {
  // Devices -1..15 are found by index, others through the ordered map: both must book alike,
  // and a free on another current device still lands on the allocation's book.
  AllocationLedger l;
  l.track_process(3, "many", 1, 0, false);
  const std::vector<int32_t> devs = {-1, 0, 15, 16, 255, 100000, -7};
  constexpr uint64_t kPerDevice = 5000;  // page-aligned pointers: the table must spread them
  uint64_t ptr = 0x7f0000000000;
  for (int32_t dev : devs)
    for (uint64_t i = 0; i < kPerDevice; ++i, ptr += 4096)
      l.apply(alloc(3, dev, dev == -7 ? MemKind::Unknown : MemKind::Device, ptr, 4096 + i));
  // Free every other allocation, each reported from device 0.
  ptr = 0x7f0000000000;
  for (size_t d = 0; d < devs.size(); ++d)
    for (uint64_t i = 0; i < kPerDevice; ++i, ptr += 4096)
      if (i % 2 == 0) l.apply(free_of(3, ptr, 0, 0, MemKind::Device));

  const Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 3);
  REQUIRE(p.books.size() == devs.size());
  // Sizes 4096 + i for odd i below 5000 are left: 2500 of them, 2500 * 4096 + (1 + 3 + ... + 4999).
  constexpr uint64_t kLeft = 2500 * 4096 + 2500ull * 2500;
  constexpr uint64_t kAll = kPerDevice * 4096 + (kPerDevice - 1) * kPerDevice / 2;
  for (int32_t dev : devs) {
    const BookView& b = book(p, dev, dev == -7 ? MemKind::Unknown : MemKind::Device);
    INFO("device " << dev);
    CHECK(b.allocs == kPerDevice);
    CHECK(b.frees == kPerDevice / 2);
    CHECK(b.outstanding == kPerDevice / 2);
    CHECK(b.live_bytes == kLeft);
    CHECK(b.peak_bytes == kAll);
    CHECK(b.freed_bytes == kAll - kLeft);
    CHECK(device(s.devices, dev).live_bytes == kLeft);
  }
  CHECK(p.outstanding_count == devs.size() * kPerDevice / 2);
  CHECK(p.live_bytes == 5 * kLeft);  // GPU devices only: -1 and -7 are not
  CHECK(s.counters.unmatched_frees == 0);
}

TEST_CASE("ledger: failed calls, 0-byte allocations and lost frees", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(8, "x", 1, 0, false);
  l.apply(failed(EventType::AllocFail, 8, 0, MemKind::Device, 1ull << 40));
  Event bad_status = alloc(8, 0, MemKind::Device, 0, 64);
  bad_status.status = 2;  // an Alloc record with an error status counts as failed
  l.apply(bad_status);
  Event ff = failed(EventType::FreeFail, 8, -1, MemKind::Unknown, 0);
  l.apply(ff);
  l.apply(alloc(8, 0, MemKind::Device, 0, 0));  // cudaMalloc(&p, 0): success, NULL
  l.apply(alloc(8, 0, MemKind::Device, 0x40, 100));
  l.apply(alloc(8, 0, MemKind::Device, 0x40, 30));  // same address again: its free was lost

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 8);
  const BookView& d = book(p, 0, MemKind::Device);
  CHECK(d.failed == 2);
  CHECK(d.allocs == 3);
  CHECK(d.live_bytes == 30);
  CHECK(d.peak_bytes == 100);
  CHECK(d.outstanding == 1);
  CHECK(book(p, -1, MemKind::Unknown).failed == 1);
  CHECK(p.failed == 3);
  CHECK(s.counters.duplicate_allocs == 1);
}

TEST_CASE("ledger: a lost free's allocation on another device leaves that device's books", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(8, "x", 1, 0, false);
  l.apply(alloc(8, 0, MemKind::Device, 0x40, 100));
  l.apply(alloc(8, 1, MemKind::Managed, 0x40, 30));  // same address on device 1: device 0's free was lost

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 8);
  const BookView& d0 = book(p, 0, MemKind::Device);
  const BookView& d1 = book(p, 1, MemKind::Managed);
  CHECK(d0.live_bytes == 0);
  CHECK(d0.peak_bytes == 100);
  CHECK(d0.outstanding == 0);
  CHECK(d0.allocs == 1);
  CHECK(d1.live_bytes == 30);
  CHECK(d1.outstanding == 1);
  CHECK(device(s.devices, 0).live_bytes == 0);
  CHECK(device(s.devices, 1).live_bytes == 30);
  CHECK(s.live_bytes == 30);
  CHECK(s.peak_bytes == 100);  // the lost one is dropped before the new one is booked
  CHECK(s.counters.duplicate_allocs == 1);
  l.apply(free_of(8, 0x40));
  CHECK(book(proc(l.snapshot(true), 8), 1, MemKind::Managed).live_bytes == 0);
}

TEST_CASE("ledger: call counts and log2 latency buckets", "[trace][ledger]") {
  CHECK(latency_bucket(0) == 0);
  CHECK(latency_bucket(1) == 0);
  CHECK(latency_bucket(2) == 1);
  CHECK(latency_bucket(3) == 1);
  CHECK(latency_bucket(1023) == 9);
  CHECK(latency_bucket(1024) == 10);
  CHECK(latency_bucket(std::numeric_limits<uint64_t>::max()) == 63);

  AllocationLedger l;
  l.record_call(10, "cudaMalloc", 300, true);
  l.record_call(10, "cudaMalloc", 1500, true);
  l.record_call(10, "cudaMalloc", 1024, false);
  l.record_call(10, "cudaFree", 100, true);
  l.record_call(11, "cudaMalloc", 5, true);

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 10);
  REQUIRE(p.calls.size() == 2);
  CHECK(p.calls[0].func == "cudaFree");
  const CallStats& m = p.calls[1];
  CHECK(m.func == "cudaMalloc");
  CHECK(m.calls == 3);
  CHECK(m.errors == 1);
  CHECK(m.total_ns == 2824);
  CHECK(m.max_ns == 1500);
  CHECK(m.buckets[8] == 1);
  CHECK(m.buckets[10] == 2);
  REQUIRE(s.calls.size() == 2);
  CHECK(s.calls[1].func == "cudaMalloc");
  CHECK(s.calls[1].calls == 4);
  CHECK(s.calls[1].buckets[2] == 1);
  CHECK(s.calls[1].max_ns == 1500);
}

TEST_CASE("ledger: copies by direction and kernel launches", "[trace][ledger]") {
  AllocationLedger l;
  l.record_copy(3, CopyDirection::HtoD, 4096);
  l.record_copy(3, CopyDirection::HtoD, 100);
  l.record_copy(3, CopyDirection::DtoH, 8);
  l.record_copy(4, CopyDirection::Default, 1);
  l.record_launch(3);
  l.record_launch(3, 9);
  l.record_launch(4);
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 3);
  CHECK(p.copies[static_cast<size_t>(CopyDirection::HtoD)].bytes == 4196);
  CHECK(p.copies[static_cast<size_t>(CopyDirection::HtoD)].count == 2);
  CHECK(p.copies[static_cast<size_t>(CopyDirection::DtoH)].bytes == 8);
  CHECK(p.copies[static_cast<size_t>(CopyDirection::DtoD)].count == 0);
  CHECK(p.launches == 10);
  CHECK(s.launches == 11);
  CHECK(s.copies[static_cast<size_t>(CopyDirection::Default)].bytes == 1);
  CHECK(s.copies[static_cast<size_t>(CopyDirection::HtoD)].bytes == 4196);
  CHECK(std::string(to_string(CopyDirection::DtoD)) == "DtoD");
}

TEST_CASE("ledger: kernels by name: functions of one name summed, most launched first", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(3, "app", 1, 0, false);
  // saxpy from two module loads (two CUfunctions); reduce recorded only; a kernel still queued.
  l.set_kernel_totals(
      3, {{"saxpy", 4, 4, 0, 4000}, {"_Z6reducePfi", 5, 0, 5, 0}, {"saxpy", 3, 2, 0, 2001}, {"queued", 5, 0, 0, 0}});
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 3);
  REQUIRE(p.kernels.size() == 3);
  CHECK(p.kernels[0] == KernelStats{"saxpy", 7, 6, 0, 6001});
  CHECK(p.kernels[1] == KernelStats{"_Z6reducePfi", 5, 0, 5, 0});  // ties by name
  CHECK(p.kernels[2] == KernelStats{"queued", 5, 0, 0, 0});
  CHECK(p.kernels[0].mean_host_ns() == 1000);  // per executed launch, rounded down
  CHECK(p.kernels[1].mean_host_ns() == 0);     // none ran
  CHECK(s.kernel_runs == 6);
  CHECK(s.kernel_recorded == 5);
  CHECK(s.kernel_host_ns == 6001);
  // A later read replaces the list (the map's counts are totals).
  l.set_kernel_totals(3, {{"saxpy", 8, 8, 0, 9000}});
  CHECK(proc(l.snapshot(true), 3).kernels == std::vector<KernelStats>{{"saxpy", 8, 8, 0, 9000}});
}

TEST_CASE("ledger: a kernel's books decoded from the BPF map's value", "[trace][ledger]") {
  fg_kernel_val v{};
  v.launches = 9;
  v.ran = 7;
  v.recorded = 2;
  v.host_ns = 123456789;
  std::memcpy(v.name, "_Z5saxpyfPfS_", 13);
  CHECK(kernel_stats(v) == KernelStats{"_Z5saxpyfPfS_", 9, 7, 2, 123456789});
  // The longest name the program keeps: FG_KERNEL_NAME_LEN - 1 bytes and the NUL.
  std::memset(v.name, 'k', sizeof v.name - 1);
  v.name[sizeof v.name - 1] = 0;
  CHECK(kernel_stats(v).name == std::string(FG_KERNEL_NAME_LEN - 1, 'k'));
  // No NUL at all (a value not written by the program): never read past the field.
  std::memset(v.name, 'x', sizeof v.name);
  CHECK(kernel_stats(v).name == std::string(FG_KERNEL_NAME_LEN, 'x'));
  // An empty name (the process's memory could not be read).
  std::memset(v.name, 0, sizeof v.name);
  CHECK(kernel_stats(v).name.empty());
  CHECK(kernel_stats(v).launches == 9);
}

TEST_CASE("json: a process's kernels carry launches, ran, recorded and host time", "[trace][ledger]") {
  const auto j = kernels_json({{"saxpy", 7, 6, 0, 6001}, {"_Z6reducePfi", 5, 0, 5, 0}});
  CHECK(j.dump() == R"([{"name":"saxpy","launches":7,"ran":6,"recorded":0,"host_ns":6001,"mean_host_ns":1000},)"
                    R"({"name":"_Z6reducePfi","launches":5,"ran":0,"recorded":5,"host_ns":0,"mean_host_ns":0}])");
  std::vector<KernelStats> many;
  for (size_t i = 0; i < kKernelsListed + 5; ++i) many.push_back({"k" + std::to_string(i), 1, 1, 0, 1});
  CHECK(kernels_json(many).size() == kKernelsListed);
}

TEST_CASE("ledger: counters read after the exit belong to the exited process; pids are reused", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(20, "first", 1, 5, false);
  l.apply(alloc(20, 0, MemKind::Device, 0x1, 10));
  l.apply(proc_exit(20, 40));
  l.record_call(20, "cudaMalloc", 10, true);  // read from the kernel after the exit
  CHECK_FALSE(l.running(20));

  Event again = alloc(20, 0, MemKind::Device, 0x1, 99, 60);  // a new process with the same pid
  again.comm = "second";
  l.apply(again);
  CHECK(l.running(20));
  Snapshot s = l.snapshot(true);
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].exited);
  CHECK(s.processes[0].comm == "first");
  CHECK(s.processes[0].leaked_bytes == 10);
  REQUIRE(s.processes[0].calls.size() == 1);
  CHECK(s.processes[1].comm == "second");
  CHECK(s.processes[1].live_bytes == 99);
  CHECK(s.processes[1].calls.empty());
  CHECK(s.live_bytes == 99);
}

TEST_CASE("ledger: only the thread-group leader names the process", "[trace][ledger]") {
  AllocationLedger l;
  Event e = alloc(30, 0, MemKind::Device, 0x1, 1);
  e.tid = 31;
  e.comm = "pt_worker";  // a thread's own name, taken while there is no other
  l.apply(e);
  CHECK(proc(l.snapshot(true), 30).comm == "pt_worker");
  Event lead = alloc(30, 0, MemKind::Device, 0x2, 1);
  lead.comm = "python3";
  l.apply(lead);
  e.ptr = 0x3;
  l.apply(e);
  CHECK(proc(l.snapshot(true), 30).comm == "python3");
}

TEST_CASE("ledger: expire forgets exited processes after the TTL", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(1, "a", 0, 0, false);
  l.track_process(2, "b", 0, 0, false);
  l.track_process(3, "c", 0, 0, false);
  l.apply(alloc(1, 0, MemKind::Device, 0x1, 100));
  l.apply(proc_exit(1, 1000));
  l.apply(proc_exit(2, 5000));
  CHECK(l.expire(1999, 1000) == 0);
  CHECK(l.expire(2000, 1000) == 1);
  Snapshot s = l.snapshot(true);
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].pid == 2);
  CHECK(s.processes[1].pid == 3);
  CHECK(device(s.devices, 0).peak_bytes == 100);  // system high-water marks stay
  CHECK(l.expire(100, 1000) == 0);                // a clock before the exit expires nothing
  CHECK(l.expire(6000, 1000) == 1);
  CHECK(l.snapshot(true).processes.size() == 1);
}

TEST_CASE("stacks: outstanding and leaked bytes by stack, top N, symbolized", "[trace][ledger][stacks]") {
  AllocationLedger l;
  l.track_process(70, "py", 1, 0, false);
  l.track_process(71, "py", 1, 0, false);
  l.apply(alloc(70, 0, MemKind::Device, 0x1, 100, 1, 5u));
  l.apply(alloc(70, 0, MemKind::Device, 0x2, 300, 1, 5u));
  l.apply(alloc(70, 0, MemKind::Device, 0x3, 250, 1, 6u));
  l.apply(alloc(70, 0, MemKind::Device, 0x4, 999));  // no stack
  l.apply(alloc(71, 0, MemKind::Device, 0x1, 250, 1, 6u));
  l.apply(free_of(70, 0x1));

  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 70);
  REQUIRE(p.outstanding_stacks.size() == 2);
  CHECK(p.outstanding_stacks[0].stack_id == 5);
  CHECK(p.outstanding_stacks[0].bytes == 300);
  CHECK(p.outstanding_stacks[0].allocs == 1);
  CHECK(p.outstanding_stacks[1].stack_id == 6);

  std::vector<std::pair<uint32_t, uint32_t>> asked;
  Symbolizer sym = [&](uint32_t pid, uint32_t id) {
    asked.emplace_back(pid, id);
    return std::vector<std::string>{"cudaMalloc", "frame" + std::to_string(id)};
  };
  auto top = top_stacks(s, StackSet::Outstanding, 2, sym);
  REQUIRE(top.size() == 2);
  CHECK(top[0].pid == 70);
  CHECK(top[0].stack_id == 5);
  CHECK(top[0].bytes == 300);
  CHECK(top[1].pid == 70);  // ties on bytes and allocations: lower pid first
  CHECK(top[1].stack_id == 6);
  CHECK(top[1].frames == std::vector<std::string>{"cudaMalloc", "frame6"});
  CHECK(asked.size() == 2);  // only the top N are symbolized

  l.apply(proc_exit(70, 9));
  Snapshot after = l.snapshot(true);
  const ProcessView& gone = proc(after, 70, true);
  CHECK(gone.outstanding_stacks.empty());
  REQUIRE(gone.leaked_stacks.size() == 2);
  auto leaked = top_stacks(after, StackSet::Leaked, 10);
  REQUIRE(leaked.size() == 2);
  CHECK(leaked[0].bytes == 300);
  CHECK(leaked[0].frames.empty());
  CHECK(top_stacks(after, StackSet::Outstanding, 10).size() == 1);  // pid 71's
  CHECK(render_stacks(leaked, StackSet::Leaked) ==
        "Top 2 stacks by leaked bytes:\n"
        "\t300 B in 1 allocation from pid 70 (py), stack 5:\n"
        "\t\t[not symbolized]\n"
        "\t250 B in 1 allocation from pid 70 (py), stack 6:\n"
        "\t\t[not symbolized]\n");
  top[0].allocs = 2;
  CHECK(render_stacks({top[0]}, StackSet::Outstanding) ==
        "Top 1 stacks by outstanding bytes:\n"
        "\t300 B in 2 allocations from pid 70 (py), stack 5:\n"
        "\t\tcudaMalloc\n"
        "\t\tframe5\n");
  CHECK(render_stacks({}, StackSet::Outstanding) == "No outstanding allocations with a recorded stack.\n");
  CHECK(render_stacks({}, StackSet::Outstanding, 1) ==
        "No outstanding allocations with a recorded stack.\n"
        "1 allocation has no recorded stack: the kernel's stack table had no slot for it (a larger --max-stacks "
        "helps).\n");
  CHECK(
      render_stacks({top[0]}, StackSet::Outstanding, 3)
          .ends_with(
              "\t\tframe5\n3 allocations have no recorded stack: the kernel's stack table had no slot for it (a larger "
              "--max-stacks helps).\n"));
  CHECK(stacks_json({top[0]}).dump() ==
        R"([{"pid":70,"comm":"py","stack_id":5,"bytes":300,"allocs":2,"frames":["cudaMalloc","frame5"]}])");
}

TEST_CASE("the kernel's counter totals replace the books' figures", "[trace]") {
  fgtrace::AllocationLedger l;
  l.track_process(42, "app", 1, 10, false);
  fgtrace::CallStats c;
  c.func = "cudaMemcpy";
  c.calls = 7;
  c.errors = 1;
  c.total_ns = 7000;
  l.set_call_totals(42, c);
  c.calls = 9;  // a later read: totals, not increments
  c.total_ns = 9000;
  l.set_call_totals(42, c);
  l.set_copy_totals(42, fgtrace::CopyDirection::HtoD, 4096, 1);
  l.set_copy_totals(42, fgtrace::CopyDirection::HtoD, 8192, 2);
  l.set_launch_totals(42, 3);
  l.set_launch_totals(42, 5);
  const auto snap = l.snapshot(true);
  REQUIRE(snap.processes.size() == 1);
  const auto& p = snap.processes[0];
  REQUIRE(p.calls.size() == 1);
  CHECK(p.calls[0].calls == 9);
  CHECK(p.calls[0].errors == 1);
  CHECK(p.calls[0].total_ns == 9000);
  CHECK(p.copies[static_cast<size_t>(fgtrace::CopyDirection::HtoD)].bytes == 8192);
  CHECK(p.copies[static_cast<size_t>(fgtrace::CopyDirection::HtoD)].count == 2);
  CHECK(p.launches == 5);
}

TEST_CASE("a snapshot lists the 100 largest outstanding allocations and counts them all", "[trace]") {
  fgtrace::AllocationLedger l;
  l.track_process(90, "many", 1, 0, false);
  for (uint64_t i = 1; i <= 150; ++i) {
    fgtrace::Event e;
    e.type = fgtrace::EventType::Alloc;
    e.pid = e.tid = 90;
    e.device = 0;
    e.kind = fgtrace::MemKind::Device;
    e.ptr = 0x1000 * i;
    e.size = (i % 50 + 1) * 4096;  // three allocations of each size
    e.ts_ns = i;
    l.apply(e);
  }
  const auto snap = l.snapshot(false);
  REQUIRE(snap.processes.size() == 1);
  const auto& p = snap.processes[0];
  CHECK(p.outstanding_count == 150);
  REQUIRE(p.outstanding_allocations.size() == fgtrace::kOutstandingListed);
  CHECK(p.outstanding_allocations.front().size == 50 * 4096);  // i = 49, 99, 149: the oldest first
  CHECK(p.outstanding_allocations.front().ptr == 0x1000 * 49);
  CHECK(p.outstanding_allocations[1].ptr == 0x1000 * 99);
  CHECK(p.outstanding_allocations.back().size == 17 * 4096);  // 100 = 33 sizes x 3 + 1
  for (size_t i = 1; i < p.outstanding_allocations.size(); ++i)
    CHECK(p.outstanding_allocations[i - 1].size >= p.outstanding_allocations[i].size);
}

TEST_CASE("ledger: callers of one object are summed and listed by calls, most first", "[trace][ledger]") {
  AllocationLedger l;
  l.track_process(100, "train", 1, 0, /*running_before_attach=*/false);
  // Two call sites in libtorch_cuda.so (two return addresses), one in the program, one unknown.
  l.set_caller_totals(100, {{"libtorch_cuda.so", 3, 0, 3 * MiB, 1 * MiB, 3, 1, 900},
                            {"train", 5, 1, 2 * MiB, 2 * MiB, 0, 0, 0},
                            {"libtorch_cuda.so", 4, 1, 4 * MiB, 0, 1, 1, 100},
                            {"[unknown]", 1, 0, 0, 0, 0, 0, 0}});
  Snapshot s = l.snapshot(true);
  const ProcessView& p = proc(s, 100);
  REQUIRE(p.callers.size() == 3);
  CHECK(p.callers[0] == CallerStats{"libtorch_cuda.so", 7, 1, 7 * MiB, 1 * MiB, 4, 2, 1000});
  CHECK(p.callers[1] == CallerStats{"train", 5, 1, 2 * MiB, 2 * MiB, 0, 0, 0});
  CHECK(p.callers[2] == CallerStats{"[unknown]", 1, 0, 0, 0, 0, 0, 0});
  // The time of its 4 probed calls, from the 2 timed: 1000 ns x 4 / 2.
  CHECK(p.callers[0].time_ns() == 2000);
  CHECK(p.callers[1].time_ns() == 0);
  // A later read replaces this one.
  l.set_caller_totals(100, {{"train", 6, 1, 2 * MiB, 2 * MiB, 0, 0, 0}});
  CHECK(proc(l.snapshot(true), 100).callers == std::vector<CallerStats>{{"train", 6, 1, 2 * MiB, 2 * MiB, 0, 0, 0}});
}
