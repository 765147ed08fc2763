// The kernel-shared tables' contract, checked without BPF: the event ring's size from
// --ringbuf-size, and the open-addressing tables' tags (bpf/fakegpu_events.h), which the
// collector decodes into (process, device, kind) and (process, function).
#include "collector/collector.h"

#include <catch2/catch.hpp>

TEST_CASE("ring: --ringbuf-size gives the most 88-byte slots that fit, a power of two, at least 16",
          "[trace][ring]") {
  CHECK(sizeof(fg_ring_slot) == 88);
  CHECK(fgtrace::ring_slots(16u << 20) == 131072);  // the default: 11.5 MB of records
  CHECK(fgtrace::ring_slots(1u << 20) == 8192);     // 11915 fit
  CHECK(fgtrace::ring_slots(4096) == 32);           // 46 fit
  CHECK(fgtrace::ring_slots(88 * 64) == 64);        // exactly 64 fit
  CHECK(fgtrace::ring_slots(88 * 64 - 1) == 32);
  CHECK(fgtrace::ring_slots(0) == fgtrace::kMinRingSlots);
  CHECK(fgtrace::ring_slots(1) == 16);
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
