// The kernel-shared tables' contract, checked without BPF: the event ring's size from
// --ringbuf-size and its slots' encoding and decoding, and the open-addressing tables' tags (bpf/fakegpu_events.h), which the
// collector decodes into (process, device, kind) and (process, function).
#include "collector/collector.h"
#include "collector/ring_reader.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

TEST_CASE("ring: --ringbuf-size gives the most 32-byte slots that fit, a power of two, at least 16",
          "[trace][ring]") {
  CHECK(sizeof(fg_ring_slot) == 32);  // half a cache line
  CHECK(sizeof(fg_ring_ext) == 32);
  CHECK(fgtrace::ring_slots(16u << 20) == 524288);  // the default: all 16 MiB
  CHECK(fgtrace::ring_slots(1u << 20) == 32768);
  CHECK(fgtrace::ring_slots(4096) == 128);
  CHECK(fgtrace::ring_slots(6000) == 128);  // 187 fit
  CHECK(fgtrace::ring_slots(32 * 256) == 256);  // exactly 256 fit
  CHECK(fgtrace::ring_slots(32 * 256 - 1) == 128);
  CHECK(fgtrace::ring_slots(0) == fgtrace::kMinRingSlots);
  CHECK(fgtrace::ring_slots(1) == 16);
}

namespace {
// What the programs write for an event (bpf/fakegpu.bpf.c, emit()): the slot, and the
// extension when the event needs one.
struct Wire {
  fg_ring_slot slot{};
  fg_ring_ext ext{};
  bool extended = false;
};

Wire encode(const fg_event& e) {
  Wire w;
  w.extended = FG_WIRE_NEEDS_EXT(e.ts_ns, e.aux, e.status, e.size, e.device);
  w.slot.tid = e.tid;
  w.slot.tgid = e.tgid;
  w.slot.type = FG_WIRE_TYPE(e.type, e.kind, w.extended);
  w.slot.api_source = FG_WIRE_API_SOURCE(e.api, e.source);
  w.slot.device = static_cast<__s16>(e.device);
  w.slot.ptr = e.ptr;
  w.slot.size_func = FG_WIRE_SIZE_FUNC(e.size, e.func);
  if (w.extended) {
    w.ext.status = e.status;
    w.ext.ts_ns = e.ts_ns;
    w.ext.aux = e.aux;
    w.ext.device = e.device;
    w.ext.size_high = static_cast<__u16>(e.size >> FG_WIRE_SIZE_BITS);
  }
  return w;
}

fg_event decoded(const fg_event& e, bool* extended = nullptr) {
  const Wire w = encode(e);
  if (extended) *extended = w.extended;
  fgtrace::SlotDecoder d;
  fg_event out{};
  REQUIRE(d.decode(w.slot, w.extended ? &w.ext : nullptr, out));
  return out;
}

void check_same(const fg_event& out, const fg_event& in) {
  CHECK(out.ts_ns == in.ts_ns);
  CHECK(out.tgid == in.tgid);
  CHECK(out.tid == in.tid);
  CHECK(out.type == in.type);
  CHECK(out.device == in.device);
  CHECK(out.ptr == in.ptr);
  CHECK(out.size == in.size);
  CHECK(out.kind == in.kind);
  CHECK(out.status == in.status);
  CHECK(out.api == in.api);
  CHECK(out.source == in.source);
  CHECK(out.func == in.func);
  CHECK(out.aux == in.aux);
  CHECK(out.comm[0] == '\0');
}

fg_ring_slot record_slot(uint32_t tid, uint32_t type, uint64_t ptr) {
  fg_event e{};
  e.tid = tid;
  e.tgid = 100;
  e.type = type;
  e.ptr = ptr;
  e.func = ~0u;
  return encode(e).slot;
}

fg_ring_slot comm_slot(uint32_t tid, const char* comm) {
  fg_ring_slot s{};
  s.tid = tid;
  s.tgid = 100;
  s.type = FG_WIRE_COMM;
  char buf[FG_COMM_LEN] = {};
  std::memcpy(buf, comm, std::min(std::strlen(comm), sizeof buf));  // NUL-padded, maybe unterminated
  std::memcpy(&s.ptr, buf, 8);
  std::memcpy(&s.size_func, buf + 8, 8);
  return s;
}
}  // namespace

TEST_CASE("ring: a call's record fits one slot and decodes to its event, every field in place", "[trace][ring]") {
  fg_event e{};
  e.tid = 4321;
  e.tgid = 4300;
  e.func = 17;
  e.ptr = 0x7f0000001000;
  e.size = (1ull << 48) - 1;  // the largest a slot holds
  e.device = 5;
  e.type = FG_EV_ALLOC;
  e.kind = FG_MEM_VMM;
  e.api = FG_API_DRIVER;
  e.source = FG_SRC_UPROBE;
  bool extended = true;
  const fg_event out = decoded(e, &extended);
  CHECK_FALSE(extended);
  check_same(out, e);
  // USDT records carry no function; host memory is device -1.
  e.func = ~0u;
  e.device = -1;
  e.kind = FG_MEM_HOST;
  e.source = FG_SRC_USDT;
  e.api = FG_API_RUNTIME;
  check_same(decoded(e, &extended), e);
  CHECK_FALSE(extended);
}

TEST_CASE("ring: what a slot cannot hold goes to the extension in the next slot", "[trace][ring]") {
  fg_event e{};
  e.tid = 7;
  e.tgid = 7;
  e.type = FG_EV_ALLOC_FAIL;
  e.func = 3;
  e.kind = FG_MEM_MANAGED;
  e.api = FG_API_INTERNAL;
  e.source = FG_SRC_KERNEL;
  bool extended = false;
  SECTION("a kernel time") { e.ts_ns = 123456789; }
  SECTION("an aux value (stack id, reason, child pid)") { e.aux = 1ull << 40; }
  SECTION("an error status") { e.status = -2; }
  SECTION("a size of 2^48 or more") { e.size = ~0ull; }
  SECTION("a device outside 16 bits") { e.device = 70000; }
  SECTION("a negative device outside 16 bits") { e.device = -40000; }
  check_same(decoded(e, &extended), e);
  CHECK(extended);
}

TEST_CASE("ring: a kind outside enum fg_mem_kind and a function index of 16 bits or more decode as none",
          "[trace][ring]") {
  fg_event e{};
  e.type = FG_EV_FREE_FAIL;
  e.kind = ~0u;  // the backend's kind of a failed free of an unknown pointer
  e.func = 0x12345;
  e.status = 1;
  const fg_event out = decoded(e);
  CHECK(out.kind == ~0u);
  CHECK(out.func == ~0u);
  CHECK(out.status == 1);
}

TEST_CASE("ring: a comm slot goes to the next record of its thread only, once", "[trace][ring]") {
  fgtrace::SlotDecoder d;
  fg_event ev{};
  CHECK_FALSE(d.decode(comm_slot(7, "trainer-rank-07!"), nullptr, ev));  // all 16 bytes, no terminator
  CHECK_FALSE(d.decode(comm_slot(8, "other"), nullptr, ev));
  CHECK(d.pending() == 2);
  REQUIRE(d.decode(record_slot(9, FG_EV_FREE, 1), nullptr, ev));  // another thread's record between
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(7, FG_EV_ALLOC, 2), nullptr, ev));
  CHECK(std::string(ev.comm, FG_COMM_LEN) == "trainer-rank-07!");
  CHECK(ev.ptr == 2);
  REQUIRE(d.decode(record_slot(7, FG_EV_FREE, 2), nullptr, ev));  // used up
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(8, FG_EV_CTX_SWITCH, 0), nullptr, ev));
  CHECK(std::string(ev.comm) == "other");
  CHECK(d.pending() == 0);
}

TEST_CASE("ring: comms whose records were lost are bounded, a thread's newest kept", "[trace][ring]") {
  fgtrace::SlotDecoder d;
  fg_event ev{};
  CHECK_FALSE(d.decode(comm_slot(1, "old"), nullptr, ev));
  CHECK_FALSE(d.decode(comm_slot(1, "new"), nullptr, ev));  // its record was lost: the newer one stands
  CHECK(d.pending() == 1);
  for (uint32_t tid = 2; tid < 2 + fgtrace::SlotDecoder::kMaxPending; ++tid) d.decode(comm_slot(tid, "x"), nullptr, ev);
  CHECK(d.pending() == fgtrace::SlotDecoder::kMaxPending);
  REQUIRE(d.decode(record_slot(1, FG_EV_ALLOC, 1), nullptr, ev));  // the oldest gave way
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(2 + fgtrace::SlotDecoder::kMaxPending - 1, FG_EV_ALLOC, 1), nullptr, ev));
  CHECK(std::string(ev.comm) == "x");
}

TEST_CASE("ring: the reader drains every 10 ms while records come, backing off to 100 ms when none do",
          "[trace][ring]") {
  fgtrace::DrainPacer pacer;
  CHECK(pacer.wait_ms() == 100);  // nothing seen yet
  pacer.drained(3);
  CHECK(pacer.wait_ms() == 10);
  pacer.drained(1);
  CHECK(pacer.wait_ms() == 10);
  for (int expected : {20, 40, 80, 100, 100}) {
    pacer.drained(0);
    CHECK(pacer.wait_ms() == expected);
  }
  pacer.drained(7);  // records again: straight back to the short period
  CHECK(pacer.wait_ms() == 10);
}

TEST_CASE("tables: a book's tag gives back its process, device and kind, and is never free or forgotten",
          "[trace][tables]") {
  struct Key {
    uint32_t tgid;
    int32_t device;
    uint32_t kind;
  };
  for (const Key k : {Key{1, 0, FG_MEM_DEVICE}, Key{4194304, 255, FG_MEM_VMM}, Key{77, -1, FG_MEM_HOST},
                      Key{0xffffffffu, 5, FG_MEM_MANAGED}}) {
    const uint64_t tag = FG_BOOK_TAG(k.tgid, k.device, k.kind);
    CHECK(FG_TAG_USED(tag));
    CHECK(tag != FG_TAG_FREE);
    CHECK(tag != FG_TAG_DELETED);
    CHECK(FG_TAG_TGID(tag) == k.tgid);
    CHECK(FG_BOOK_TAG_DEVICE(tag) == k.device);
    CHECK(FG_BOOK_TAG_KIND(tag) == k.kind);
  }
  CHECK_FALSE(FG_TAG_USED(FG_TAG_FREE));
  CHECK_FALSE(FG_TAG_USED(FG_TAG_DELETED));
  CHECK(FG_BOOK_TAG(9, 1, FG_MEM_DEVICE) != FG_BOOK_TAG(9, 1, FG_MEM_MANAGED));
  CHECK(FG_BOOK_TAG(9, 1, FG_MEM_DEVICE) != FG_BOOK_TAG(10, 1, FG_MEM_DEVICE));
}

TEST_CASE("tables: a call counter's tag gives back its process and function", "[trace][tables]") {
  for (const uint32_t func : {0u, 1u, 93u, 0xffffu}) {
    const uint64_t tag = FG_CALL_TAG(31337, func);
    CHECK(FG_TAG_USED(tag));
    CHECK(FG_TAG_TGID(tag) == 31337);
    CHECK(FG_CALL_TAG_FUNC(tag) == func);
  }
}
