// SPDX-License-Identifier: Apache-2.0
// Unit tests: decoding of fakegpu-trace ring-buffer records (struct fg_event).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "../../userspace/core/event.h"
#include "../../userspace/core/ledger.h"

namespace {

fg_event raw_event() {
  fg_event e;
  std::memset(&e, 0, sizeof e);
  e.ts_ns = 123456789;
  e.tgid = 4242;
  e.tid = 4243;
  e.type = FG_EV_ALLOC;
  e.device = 1;
  e.ptr = 0x7f0000001000;
  e.size = 1 << 20;
  e.kind = FG_MEM_MANAGED;
  e.status = 0;
  e.api = FG_API_DRIVER;
  e.source = FG_SRC_USDT;
  e.func = 7;
  e.aux = 0;
  std::memcpy(e.comm, "python3", 8);
  return e;
}

}  // namespace

TEST_CASE("decode: a well-formed record becomes an Event with every field", "[trace][event]") {
  fg_event raw = raw_event();
  raw.aux = 18;  // stack id 17
  fgtrace::DecodeError err = fgtrace::DecodeError::TooShort;
  auto ev = fgtrace::decode(&raw, sizeof raw, &err);
  REQUIRE(ev);
  CHECK(err == fgtrace::DecodeError::None);
  CHECK(ev->ts_ns == 123456789);
  CHECK(ev->pid == 4242);
  CHECK(ev->tid == 4243);
  CHECK(ev->type == fgtrace::EventType::Alloc);
  CHECK(ev->device == 1);
  CHECK(ev->ptr == 0x7f0000001000);
  CHECK(ev->size == 1048576);
  CHECK(ev->kind == fgtrace::MemKind::Managed);
  CHECK(ev->status == 0);
  CHECK(ev->api == fgtrace::Api::Driver);
  CHECK(ev->source == fgtrace::Source::Usdt);
  REQUIRE(ev->func);
  CHECK(*ev->func == 7);
  CHECK(ev->aux == 18);
  REQUIRE(ev->stack_id);
  CHECK(*ev->stack_id == 17);
  CHECK_FALSE(ev->child_pid);
  CHECK(ev->comm == "python3");
}

TEST_CASE("decode: short and long records are refused with the reason", "[trace][event]") {
  std::vector<unsigned char> buf(sizeof(fg_event) + 8, 0);
  fg_event raw = raw_event();
  std::memcpy(buf.data(), &raw, sizeof raw);
  fgtrace::DecodeError err = fgtrace::DecodeError::None;

  CHECK_FALSE(fgtrace::decode(buf.data(), sizeof(fg_event) - 1, &err));
  CHECK(err == fgtrace::DecodeError::TooShort);
  CHECK_FALSE(fgtrace::decode(buf.data(), 0, &err));
  CHECK(err == fgtrace::DecodeError::TooShort);
  CHECK_FALSE(fgtrace::decode(nullptr, sizeof(fg_event), &err));
  CHECK(err == fgtrace::DecodeError::TooShort);
  CHECK_FALSE(fgtrace::decode(buf.data(), sizeof(fg_event) + 8, &err));
  CHECK(err == fgtrace::DecodeError::TooLong);
  CHECK_FALSE(fgtrace::decode(buf.data(), sizeof(fg_event) + 1));  // no error pointer: fine
  CHECK(fgtrace::decode(buf.data(), sizeof(fg_event)));
  CHECK(std::string(fgtrace::to_string(fgtrace::DecodeError::TooLong)) ==
        "record longer than struct fg_event (another FAKEGPU_EVENTS_ABI?)");
}

TEST_CASE("decode: an unaligned record is read correctly", "[trace][event]") {
  std::vector<unsigned char> buf(sizeof(fg_event) + 1, 0);
  fg_event raw = raw_event();
  std::memcpy(buf.data() + 1, &raw, sizeof raw);
  auto ev = fgtrace::decode(buf.data() + 1, sizeof(fg_event));
  REQUIRE(ev);
  CHECK(ev->ptr == 0x7f0000001000);
  CHECK(ev->comm == "python3");
}

TEST_CASE("decode: unknown event types are refused, unknown enums decode to Unknown", "[trace][event]") {
  fg_event raw = raw_event();
  fgtrace::DecodeError err = fgtrace::DecodeError::None;
  for (uint32_t bad : {0u, 10u, 0xffffffffu}) {
    raw.type = bad;
    CHECK_FALSE(fgtrace::decode(&raw, sizeof raw, &err));
    CHECK(err == fgtrace::DecodeError::UnknownType);
  }
  // The backend's failed free of an unknown pointer: device -1, kind -1.
  raw = raw_event();
  raw.type = FG_EV_FREE_FAIL;
  raw.device = -1;
  raw.kind = static_cast<__u32>(-1);
  raw.status = 1;
  raw.api = 9;
  raw.source = 9;
  raw.func = ~0u;
  auto ev = fgtrace::decode(&raw, sizeof raw);
  REQUIRE(ev);
  CHECK(ev->type == fgtrace::EventType::FreeFail);
  CHECK(ev->device == -1);
  CHECK(ev->kind == fgtrace::MemKind::Unknown);
  CHECK(ev->status == 1);
  CHECK(ev->api == fgtrace::Api::Unknown);
  CHECK(ev->source == fgtrace::Source::Unknown);
  CHECK_FALSE(ev->func);
  // Kinds the contract does not book (3 registered, 5 IPC-mapped) are Unknown too.
  raw.kind = 3;
  CHECK(fgtrace::decode(&raw, sizeof raw)->kind == fgtrace::MemKind::Unknown);
  raw.kind = FG_MEM_VMM;
  CHECK(fgtrace::decode(&raw, sizeof raw)->kind == fgtrace::MemKind::Vmm);
}

TEST_CASE("decode: aux means the child pid, the stack id or the implicit-free reason", "[trace][event]") {
  fg_event raw = raw_event();
  raw.type = FG_EV_PROC_FORK;
  raw.aux = 5000;
  auto fork = fgtrace::decode(&raw, sizeof raw);
  REQUIRE(fork);
  REQUIRE(fork->child_pid);
  CHECK(*fork->child_pid == 5000);
  CHECK_FALSE(fork->stack_id);

  raw.type = FG_EV_ALLOC;
  raw.aux = 0;  // no stack
  CHECK_FALSE(fgtrace::decode(&raw, sizeof raw)->stack_id);
  raw.aux = 1;  // stack id 0
  CHECK(fgtrace::decode(&raw, sizeof raw)->stack_id.value() == 0);

  raw.type = FG_EV_IMPLICIT_FREE;
  raw.aux = 2;
  CHECK(fgtrace::decode(&raw, sizeof raw)->reason == fgtrace::ImplicitReason::ProcessExit);
  raw.aux = 1;
  CHECK(fgtrace::decode(&raw, sizeof raw)->reason == fgtrace::ImplicitReason::CtxDestroy);
  raw.aux = 3;
  CHECK(fgtrace::decode(&raw, sizeof raw)->reason == fgtrace::ImplicitReason::DeviceReset);
  raw.aux = 0;
  CHECK(fgtrace::decode(&raw, sizeof raw)->reason == fgtrace::ImplicitReason::Unknown);
  raw.aux = 99;
  CHECK(fgtrace::decode(&raw, sizeof raw)->reason == fgtrace::ImplicitReason::Unknown);
}

TEST_CASE("decode: a comm that fills all 16 bytes is bounded", "[trace][event]") {
  fg_event raw = raw_event();
  std::memcpy(raw.comm, "ABCDEFGHIJKLMNOP", 16);  // no terminating NUL
  auto ev = fgtrace::decode(&raw, sizeof raw);
  REQUIRE(ev);
  CHECK(ev->comm == "ABCDEFGHIJKLMNOP");
  std::memset(raw.comm, 0, sizeof raw.comm);
  CHECK(fgtrace::decode(&raw, sizeof raw)->comm.empty());
}

TEST_CASE("decode: enum names", "[trace][event]") {
  using namespace fgtrace;
  CHECK(std::string(to_string(EventType::ImplicitFree)) == "implicit_free");
  CHECK(std::string(to_string(EventType::ProcFork)) == "proc_fork");
  CHECK(std::string(to_string(MemKind::Vmm)) == "vmm");
  CHECK(std::string(to_string(MemKind::Unknown)) == "unknown");
  CHECK(std::string(to_string(Source::Usdt)) == "usdt");
  CHECK(std::string(to_string(Source::Uprobe)) == "uprobe");
  CHECK(std::string(to_string(Api::Runtime)) == "runtime");
}

TEST_CASE("ledger: consume() decodes records and counts the bad ones", "[trace][event][ledger]") {
  fgtrace::AllocationLedger ledger;
  fg_event raw = raw_event();
  CHECK(ledger.consume(&raw, sizeof raw));
  CHECK_FALSE(ledger.consume(&raw, sizeof raw - 8));
  raw.type = 0;
  CHECK_FALSE(ledger.consume(&raw, sizeof raw));
  CHECK(ledger.counters().bad_records == 2);
  CHECK(ledger.counters().events == 1);
  auto snap = ledger.snapshot(true);
  REQUIRE(snap.processes.size() == 1);
  CHECK(snap.processes[0].pid == 4242);
  REQUIRE(snap.processes[0].books.size() == 1);
  CHECK(snap.processes[0].books[0].live_bytes == 1048576);
  CHECK(snap.processes[0].books[0].kind == fgtrace::MemKind::Managed);
}

TEST_CASE("decode_into: one Event reused record after record carries nothing over", "[trace][event]") {
  fgtrace::Event ev;
  fg_event fork = raw_event();
  fork.type = FG_EV_PROC_FORK;
  fork.aux = 5151;  // the child
  fork.func = ~0u;
  REQUIRE(fgtrace::decode_into(fork, ev));
  REQUIRE(ev.child_pid);
  CHECK(*ev.child_pid == 5151);
  CHECK_FALSE(ev.func);
  CHECK(ev.comm == "python3");

  fg_event alloc = raw_event();
  alloc.aux = 3;  // stack id 2
  std::memset(alloc.comm, 0, sizeof alloc.comm);
  REQUIRE(fgtrace::decode_into(alloc, ev));
  CHECK(ev.type == fgtrace::EventType::Alloc);
  CHECK_FALSE(ev.child_pid);
  REQUIRE(ev.stack_id);
  CHECK(*ev.stack_id == 2);
  REQUIRE(ev.func);
  CHECK(*ev.func == 7);
  CHECK(ev.comm.empty());

  fg_event implicit = raw_event();
  implicit.type = FG_EV_IMPLICIT_FREE;
  implicit.aux = 2;                                    // process exit
  std::memcpy(implicit.comm, "0123456789abcdef", 16);  // all 16 bytes, no terminator
  REQUIRE(fgtrace::decode_into(implicit, ev));
  CHECK_FALSE(ev.stack_id);
  CHECK(ev.reason == fgtrace::ImplicitReason::ProcessExit);
  CHECK(ev.comm == "0123456789abcdef");

  fg_event free = raw_event();
  free.type = FG_EV_FREE;
  REQUIRE(fgtrace::decode_into(free, ev));
  CHECK(ev.reason == fgtrace::ImplicitReason::Unknown);

  fgtrace::DecodeError err = fgtrace::DecodeError::None;
  free.type = 99;
  CHECK_FALSE(fgtrace::decode_into(free, ev, &err));
  CHECK(err == fgtrace::DecodeError::UnknownType);
}

TEST_CASE("ledger: consume(fg_event) books what consume(bytes) books", "[trace][event][ledger]") {
  fgtrace::AllocationLedger by_bytes, by_record;
  fg_event a = raw_event();
  fg_event b = raw_event();
  b.ptr += 4096;
  b.size = 4096;
  std::memset(b.comm, 0, sizeof b.comm);
  fg_event f = raw_event();
  f.type = FG_EV_FREE;
  f.size = 0;  // the books know the size
  std::memset(f.comm, 0, sizeof f.comm);
  fg_event bad = raw_event();
  bad.type = 0;
  for (const fg_event* r : {&a, &b, &f, &bad}) {
    CHECK(by_bytes.consume(r, sizeof *r) == (r != &bad));
    CHECK(by_record.consume(*r) == (r != &bad));
  }
  CHECK(by_record.counters().bad_records == 1);
  CHECK(by_record.counters().events == 3);
  const auto x = by_bytes.snapshot(true), y = by_record.snapshot(true);
  REQUIRE(y.processes.size() == 1);
  CHECK(y.processes[0].comm == "python3");
  REQUIRE(y.processes[0].books.size() == 1);
  CHECK(y.processes[0].books[0].live_bytes == 4096);
  CHECK(y.processes[0].books[0].peak_bytes == 1048576 + 4096);
  CHECK(y.processes[0].books[0].outstanding == 1);
  REQUIRE(x.processes.size() == 1);
  REQUIRE(x.processes[0].books.size() == 1);
  CHECK(x.processes[0].books[0].live_bytes == y.processes[0].books[0].live_bytes);
  CHECK(x.processes[0].books[0].peak_bytes == y.processes[0].books[0].peak_bytes);
  CHECK(x.processes[0].books[0].frees == y.processes[0].books[0].frees);
}
