// SPDX-License-Identifier: Apache-2.0
// The kernel-shared tables' contract, checked without BPF: the ring buffer's size from
// --ringbuf-size, its wake-up policy and its records' encoding and decoding, and the
// open-addressing tables' tags (bpf/fakegpu_events.h), which the collector decodes into
// (process, device, kind) and (process, function).
#include "collector/collector.h"
#include "collector/ring_reader.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

TEST_CASE("ring: --ringbuf-size takes a power of two that is a multiple of the page size, and names the fix",
          "[trace][ring]") {
  using fgtrace::ringbuf_size_problem;
  CHECK(ringbuf_size_problem(16u << 20, 4096).empty());  // the default
  CHECK(ringbuf_size_problem(4096, 4096).empty());       // one page
  CHECK(ringbuf_size_problem(uint64_t{1} << 31, 4096).empty());
  CHECK(ringbuf_size_problem(65536, 65536).empty());
  const std::string rule =
      "a BPF ring buffer's size is a power of two and a multiple of the page size, from 4KiB to 2GiB";
  CHECK(ringbuf_size_problem(0, 4096) == "0 bytes: " + rule + " (16MiB by default)");
  CHECK(ringbuf_size_problem(6000, 4096) == "6000 bytes: " + rule + "; the nearest are 4KiB and 8KiB");
  CHECK(ringbuf_size_problem(3 * 4096, 4096) == "12288 bytes: " + rule + "; the nearest are 8KiB and 16KiB");
  CHECK(ringbuf_size_problem((16u << 20) + 1, 4096) == "16777217 bytes: " + rule + "; the nearest are 16MiB and 32MiB");
  CHECK(ringbuf_size_problem(2048, 4096) == "2048 bytes: " + rule + "; use 4KiB");
  CHECK(ringbuf_size_problem(uint64_t{1} << 32, 4096) == "4GiB is too large: " + rule);
  // 64 KiB pages (some arm64 kernels): a power of two below a page is not one.
  CHECK(ringbuf_size_problem(16384, 65536) ==
        "16384 bytes: a BPF ring buffer's size is a power of two and a multiple of the page size, from 64KiB to "
        "2GiB; use 64KiB");
}

TEST_CASE("ring: the programs wake the reader only for a ring buffer filling faster than its timer", "[trace][ring]") {
  // Each CPU checks every `every` records (at most 1/16 of the ring buffer in records of the
  // largest size, 96 bytes, across all CPUs), and wakes the reader once a quarter is used.
  const fgtrace::WakeupPolicy def = fgtrace::wakeup_policy(16u << 20, 2);
  CHECK(def.every == 4096);  // 16 MiB / 16 / 96 / 2 = 5461
  CHECK(def.fill_bytes == 4u << 20);
  const fgtrace::WakeupPolicy page = fgtrace::wakeup_policy(4096, 2);
  CHECK(page.every == 1);
  CHECK(page.fill_bytes == 1024);
  CHECK(fgtrace::wakeup_policy(uint64_t{1} << 31, 1).every == 65536);  // the most
  CHECK(fgtrace::wakeup_policy(uint64_t{1} << 31, 1).fill_bytes == 1u << 29);
  CHECK(fgtrace::wakeup_policy(16u << 20, 0).every == 8192);  // no CPU count: taken as one
}

namespace {
// What the programs write for an event (bpf/ring.bpf.h, emit()): the record, its extension
// when it needs one, the process block (comm, parent, time) on a process's first record.
std::vector<unsigned char> encode(const fg_event& e, bool first = false, uint64_t first_ts = 0) {
  fg_record r{};
  r.tgid = e.tgid;
  r.tid = e.tid;
  r.ptr = e.ptr;
  r.size = e.size;
  r.device = e.device;
  r.func = FG_REC_FUNC(e.func);
  r.type_kind = FG_REC_TYPE_KIND(e.type, e.kind);
  r.api_source = FG_REC_API_SOURCE(e.api, e.source);
  std::vector<unsigned char> out(sizeof r);
  std::memcpy(out.data(), &r, sizeof r);
  if (FG_REC_NEEDS_EXT(e.ts_ns, e.aux, e.status)) {
    fg_record_ext x{};
    x.ts_ns = e.ts_ns;
    x.aux = e.aux;
    x.status = e.status;
    out.resize(out.size() + sizeof x);
    std::memcpy(out.data() + sizeof r, &x, sizeof x);
  }
  if (first) {
    fg_record_proc p{};
    std::memcpy(p.comm, e.comm, FG_COMM_LEN);
    p.ts_ns = first_ts;
    p.ppid = e.ppid;
    const size_t at = out.size();
    out.resize(at + sizeof p);
    std::memcpy(out.data() + at, &p, sizeof p);
  }
  return out;
}

fg_event decoded(const fg_event& e, size_t* size = nullptr, bool first = false, uint64_t first_ts = 0) {
  const auto wire = encode(e, first, first_ts);
  if (size) *size = wire.size();
  fg_event out{};
  REQUIRE(fgtrace::decode_record(wire.data(), wire.size(), out));
  return out;
}

fg_event call_event(uint32_t pid, uint32_t type, uint32_t func, uint32_t kind, uint32_t api, uint32_t source) {
  fg_event e{};
  e.tid = pid;
  e.tgid = pid;
  e.type = type;
  e.func = func;
  e.kind = kind;
  e.api = api;
  e.source = source;
  return e;
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
  CHECK(std::string(out.comm, strnlen(out.comm, FG_COMM_LEN)) == std::string(in.comm, strnlen(in.comm, FG_COMM_LEN)));
}
}  // namespace

TEST_CASE("ring: a call's record is 32 bytes and decodes to its event, every field in place", "[trace][ring]") {
  CHECK(sizeof(fg_record) == 32);
  CHECK(sizeof(fg_record_ext) == 24);
  fg_event e = call_event(4300, FG_EV_ALLOC, 17, FG_MEM_VMM, FG_API_DRIVER, FG_SRC_UPROBE);
  e.tid = 4321;
  e.ptr = 0x7f0000001000;
  e.size = ~0ull;    // any size
  e.device = 70000;  // any device
  size_t size = 0;
  check_same(decoded(e, &size), e);
  CHECK(size == FG_REC_BASE);
  // USDT records carry no function; host memory is device -1.
  e.func = ~0u;
  e.device = -1;
  e.kind = FG_MEM_HOST;
  e.source = FG_SRC_USDT;
  e.api = FG_API_RUNTIME;
  check_same(decoded(e, &size), e);
  CHECK(size == FG_REC_BASE);
}

TEST_CASE("ring: a time, an aux value or an error status comes in the extension", "[trace][ring]") {
  fg_event e = call_event(7, FG_EV_ALLOC_FAIL, 3, FG_MEM_MANAGED, FG_API_INTERNAL, FG_SRC_KERNEL);
  SECTION("a kernel time") { e.ts_ns = 123456789; }
  SECTION("an aux value (stack id, reason, child pid)") { e.aux = 1ull << 40; }
  SECTION("an error status") { e.status = -2; }
  size_t size = 0;
  check_same(decoded(e, &size), e);
  CHECK(size == FG_REC_WITH_EXT);
}

TEST_CASE("ring: a process's first record carries its comm, parent and time, after the extension if there is one",
          "[trace][ring]") {
  fg_event e = call_event(9, FG_EV_ALLOC, ~0u, FG_MEM_DEVICE, FG_API_RUNTIME, FG_SRC_USDT);
  std::memcpy(e.comm, "trainer-rank-07!", FG_COMM_LEN);  // all 16 bytes, no terminator
  e.ppid = 4;
  size_t size = 0;
  fg_event out = decoded(e, &size, true, 777);
  e.ts_ns = 777;  // a record without its own time takes the block's
  check_same(out, e);
  CHECK(out.ppid == 4);
  CHECK(size == FG_REC_WITH_PROC);
  e.type = FG_EV_PROC_FORK;
  e.source = FG_SRC_KERNEL;
  e.aux = 12345;  // the child
  e.ts_ns = 99;   // the extension's time comes first
  out = decoded(e, &size, true, 777);
  check_same(out, e);
  CHECK(std::string(out.comm, FG_COMM_LEN) == "trainer-rank-07!");
  CHECK(out.ppid == 4);
  CHECK(size == FG_REC_WITH_EXT_PROC);
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

TEST_CASE("ring: a record of a size no record has is refused", "[trace][ring]") {
  const std::vector<unsigned char> bytes(128, 0xab);
  fg_event out{};
  for (size_t size : {size_t{0}, size_t{8}, size_t{31}, size_t{33}, size_t{40}, size_t{48}, size_t{72}, size_t{128}}) {
    INFO(size);
    CHECK_FALSE(fgtrace::decode_record(bytes.data(), size, out));
  }
  for (size_t size :
       {size_t{FG_REC_BASE}, size_t{FG_REC_WITH_EXT}, size_t{FG_REC_WITH_PROC}, size_t{FG_REC_WITH_EXT_PROC}}) {
    INFO(size);
    CHECK(fgtrace::decode_record(bytes.data(), size, out));
  }
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

TEST_CASE("tables: a caller's tag gives back its process and the caller's hash, never free or forgotten",
          "[trace][tables]") {
  for (const uint64_t caller : {0ull, 0x401136ull, 0x7f3a1c2b4d5eull, 0xffffffffffffull}) {
    const uint64_t tag = FG_CALLER_TAG(4194304, caller);
    CHECK(FG_TAG_USED(tag));
    CHECK(tag != FG_TAG_FREE);
    CHECK(tag != FG_TAG_DELETED);
    CHECK(FG_TAG_TGID(tag) == 4194304);
    CHECK(FG_CALLER_TAG_HASH(tag) == FG_CALLER_HASH(caller));
  }
  // The collector tells a claimed slot not yet filled (caller 0) from the unknown caller's by
  // the hash: the unknown caller's is 0, and neighbouring return addresses differ.
  CHECK(FG_CALLER_HASH(0) == 0);
  CHECK(FG_CALLER_HASH(0x401136) != 0);
  CHECK(FG_CALLER_TAG(7, 0x401136) != FG_CALLER_TAG(7, 0x40113b));
  CHECK(FG_CALLER_TAG(7, 0x401136) != FG_CALLER_TAG(8, 0x401136));
}
