// The kernel-shared tables' contract, checked without BPF: the event ring's size from
// --ringbuf-size and its slots' decoding, and the open-addressing tables' tags (bpf/fakegpu_events.h), which the
// collector decodes into (process, device, kind) and (process, function).
#include "collector/collector.h"
#include "collector/ring_reader.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

TEST_CASE("ring: --ringbuf-size gives the most 64-byte slots that fit, a power of two, at least 16",
          "[trace][ring]") {
  CHECK(sizeof(fg_ring_slot) == 64);  // one cache line
  CHECK(fgtrace::ring_slots(16u << 20) == 262144);  // the default: all 16 MiB
  CHECK(fgtrace::ring_slots(1u << 20) == 16384);
  CHECK(fgtrace::ring_slots(4096) == 64);
  CHECK(fgtrace::ring_slots(6000) == 64);  // 93 fit
  CHECK(fgtrace::ring_slots(64 * 128) == 128);  // exactly 128 fit
  CHECK(fgtrace::ring_slots(64 * 128 - 1) == 64);
  CHECK(fgtrace::ring_slots(0) == fgtrace::kMinRingSlots);
  CHECK(fgtrace::ring_slots(1) == 16);
}

namespace {
fg_ring_slot record_slot(uint32_t tid, uint32_t type, uint64_t ptr) {
  fg_ring_slot s{};
  s.tid = tid;
  s.tgid = 100;
  s.type = static_cast<__u8>(type);
  s.ptr = ptr;
  return s;
}

fg_ring_slot comm_slot(uint32_t tid, const char* comm) {
  fg_ring_slot s{};
  s.tid = tid;
  s.tgid = 100;
  s.type = FG_WIRE_COMM;
  char buf[FG_COMM_LEN] = {};
  std::memcpy(buf, comm, std::min(std::strlen(comm), sizeof buf));  // NUL-padded, maybe unterminated
  std::memcpy(&s.ptr, buf, 8);
  std::memcpy(&s.size, buf + 8, 8);
  return s;
}
}  // namespace

TEST_CASE("ring: a slot decodes to its event, every field in place", "[trace][ring]") {
  fg_ring_slot s{};
  s.committed = 8;
  s.tid = 4321;
  s.tgid = 4300;
  s.func = 17;
  s.ts_ns = 123456789;
  s.ptr = 0x7f0000001000;
  s.size = 1ull << 33;
  s.aux = 9;
  s.status = -2;
  s.device = 5;
  s.type = FG_EV_ALLOC;
  s.kind = FG_MEM_VMM;
  s.api = FG_API_DRIVER;
  s.source = FG_SRC_UPROBE;
  fgtrace::SlotDecoder d;
  fg_event ev{};
  REQUIRE(d.decode(s, ev));
  CHECK(ev.ts_ns == 123456789);
  CHECK(ev.tgid == 4300);
  CHECK(ev.tid == 4321);
  CHECK(ev.type == FG_EV_ALLOC);
  CHECK(ev.device == 5);
  CHECK(ev.ptr == 0x7f0000001000);
  CHECK(ev.size == (1ull << 33));
  CHECK(ev.kind == FG_MEM_VMM);
  CHECK(ev.status == -2);
  CHECK(ev.api == FG_API_DRIVER);
  CHECK(ev.source == FG_SRC_UPROBE);
  CHECK(ev.func == 17);
  CHECK(ev.aux == 9);
  CHECK(ev.comm[0] == '\0');
}

TEST_CASE("ring: a comm slot goes to the next record of its thread only, once", "[trace][ring]") {
  fgtrace::SlotDecoder d;
  fg_event ev{};
  CHECK_FALSE(d.decode(comm_slot(7, "trainer-rank-07!"), ev));  // all 16 bytes, no terminator
  CHECK_FALSE(d.decode(comm_slot(8, "other"), ev));
  CHECK(d.pending() == 2);
  REQUIRE(d.decode(record_slot(9, FG_EV_FREE, 1), ev));  // another thread's record between
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(7, FG_EV_ALLOC, 2), ev));
  CHECK(std::string(ev.comm, FG_COMM_LEN) == "trainer-rank-07!");
  CHECK(ev.ptr == 2);
  REQUIRE(d.decode(record_slot(7, FG_EV_FREE, 2), ev));  // used up
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(8, FG_EV_CTX_SWITCH, 0), ev));
  CHECK(std::string(ev.comm) == "other");
  CHECK(d.pending() == 0);
}

TEST_CASE("ring: comms whose records were lost are bounded, a thread's newest kept", "[trace][ring]") {
  fgtrace::SlotDecoder d;
  fg_event ev{};
  CHECK_FALSE(d.decode(comm_slot(1, "old"), ev));
  CHECK_FALSE(d.decode(comm_slot(1, "new"), ev));  // its record was lost: the newer one stands
  CHECK(d.pending() == 1);
  for (uint32_t tid = 2; tid < 2 + fgtrace::SlotDecoder::kMaxPending; ++tid) d.decode(comm_slot(tid, "x"), ev);
  CHECK(d.pending() == fgtrace::SlotDecoder::kMaxPending);
  REQUIRE(d.decode(record_slot(1, FG_EV_ALLOC, 1), ev));  // the oldest gave way
  CHECK(ev.comm[0] == '\0');
  REQUIRE(d.decode(record_slot(2 + fgtrace::SlotDecoder::kMaxPending - 1, FG_EV_ALLOC, 1), ev));
  CHECK(std::string(ev.comm) == "x");
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
