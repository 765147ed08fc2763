// SPDX-License-Identifier: Apache-2.0
#include "event.h"

#include <cstddef>
#include <cstring>
#include <iterator>

#include <linux/bpf.h>

namespace fgtrace {

// The contract, checked where it is read: the same bytes as the BPF side (clang -target bpf,
// LP64 little endian). A change here without a FAKEGPU_EVENTS_ABI bump is a bug.
static_assert(FAKEGPU_EVENTS_ABI == 8, "contract changed: review decode() and these offsets");
static_assert(sizeof(fg_event) == 88);
static_assert(alignof(fg_event) == 8);
static_assert(offsetof(fg_event, ts_ns) == 0);
static_assert(offsetof(fg_event, tgid) == 8);
static_assert(offsetof(fg_event, tid) == 12);
static_assert(offsetof(fg_event, type) == 16);
static_assert(offsetof(fg_event, device) == 20);
static_assert(offsetof(fg_event, ptr) == 24);
static_assert(offsetof(fg_event, size) == 32);
static_assert(offsetof(fg_event, kind) == 40);
static_assert(offsetof(fg_event, status) == 44);
static_assert(offsetof(fg_event, api) == 48);
static_assert(offsetof(fg_event, source) == 50);
static_assert(offsetof(fg_event, func) == 52);
static_assert(offsetof(fg_event, aux) == 56);
static_assert(offsetof(fg_event, comm) == 64);
static_assert(offsetof(fg_event, ppid) == 80);
static_assert(FG_COMM_LEN == 16);
static_assert(sizeof(fg_book_key) == 16);
static_assert(sizeof(fg_book) == 64);
static_assert(sizeof(fg_config) == 28);
static_assert(sizeof(fg_alloc_rec) == 40);
static_assert(sizeof(fg_kernel_key) == 16 && sizeof(fg_kernel_val) == 32 + FG_KERNEL_NAME_LEN &&
              offsetof(fg_kernel_val, host_ns) == 24 && offsetof(fg_kernel_val, name) == 32);
static_assert(sizeof(fg_book_slot) == 64);  // one cache line per book's shared part
static_assert(sizeof(fg_book_counts) == 48);
static_assert(sizeof(fg_caller_val) == 56 && (FG_CALLER_SLOTS & (FG_CALLER_SLOTS - 1)) == 0);
static_assert(sizeof(fg_caller_file) == 40 + FG_OBJECT_NAME_LEN && offsetof(fg_caller_file, name) == 40);
// The ring buffer's record (bpf/fakegpu_events.h): 32 bytes, then its extension and comm.
static_assert(sizeof(fg_record) == 32 && offsetof(fg_record, ptr) == 8 && offsetof(fg_record, size) == 16 &&
              offsetof(fg_record, device) == 24 && offsetof(fg_record, func) == 28 &&
              offsetof(fg_record, type_kind) == 30 && offsetof(fg_record, api_source) == 31);
static_assert(sizeof(fg_record_ext) == 24 && offsetof(fg_record_ext, aux) == 8 &&
              offsetof(fg_record_ext, status) == 16);
static_assert(FG_REC_BASE == 32 && FG_REC_WITH_EXT == 56 && FG_REC_WITH_PROC == 64 && FG_REC_WITH_EXT_PROC == 88);
// --stacks: a stack's file frames are the kernel's struct bpf_stack_build_id, byte for byte.
static_assert(sizeof(fg_file_frame) == sizeof(bpf_stack_build_id) && FG_BUILD_ID_SIZE == BPF_BUILD_ID_SIZE);
static_assert(offsetof(fg_file_frame, build_id) == offsetof(bpf_stack_build_id, build_id) &&
              offsetof(fg_file_frame, offset_or_ip) == offsetof(bpf_stack_build_id, offset));
static_assert(int{FG_FRAME_EMPTY} == int{BPF_STACK_BUILD_ID_EMPTY} &&
              int{FG_FRAME_FILE} == int{BPF_STACK_BUILD_ID_VALID} && int{FG_FRAME_IP} == int{BPF_STACK_BUILD_ID_IP});
static_assert(sizeof(fg_stack_files) == 8 + FG_STACK_DEPTH * 32 && sizeof(fg_exec_path) == FG_PATH_LEN);
static_assert(FG_EV_PROC_EXEC < 16 && FG_MEM_KINDS <= FG_REC_KIND_OTHER);  // they fit the record's `type_kind`
static_assert(FG_API_INTERNAL < 16 && FG_SRC_KERNEL < 16);                 // and `api_source`
static_assert((FG_BOOK_SLOTS & (FG_BOOK_SLOTS - 1)) == 0);
static_assert(FG_STAT_ALLOC_MAP_FULL < FG_STAT_MAX);

namespace {

// The names of the contract's values, indexed by them: one table per enum says both which
// values decode and what they print as. nullptr: no such value (0 is no event type;
// FG_MEM_REGISTERED is never booked, so never recorded).
constexpr const char* kEventNames[] = {nullptr,     "alloc",      "free",      "implicit_free", "alloc_fail",
                                       "free_fail", "ctx_switch", "proc_exit", "proc_fork",     "proc_exec"};
constexpr const char* kSourceNames[] = {"usdt", "uprobe", "kernel"};
constexpr const char* kApiNames[] = {"runtime", "driver", "internal"};
static_assert(std::size(kEventNames) == FG_EV_PROC_EXEC + 1 && std::size(kSourceNames) == FG_SRC_KERNEL + 1 &&
              std::size(kApiNames) == FG_API_INTERNAL + 1);

template <size_t N>
const char* name_in(const char* const (&names)[N], uint64_t value) {
  return value < N ? names[value] : nullptr;
}

const char* or_unknown(const char* name) { return name ? name : "unknown"; }

MemKind kind_of(uint32_t raw) {
  const bool carried = raw == FG_MEM_DEVICE || raw == FG_MEM_MANAGED || raw == FG_MEM_HOST || raw == FG_MEM_VMM;
  return carried ? static_cast<MemKind>(raw) : MemKind::Unknown;
}

Source source_of(uint16_t raw) { return name_in(kSourceNames, raw) ? static_cast<Source>(raw) : Source::Unknown; }

Api api_of(uint16_t raw) { return name_in(kApiNames, raw) ? static_cast<Api>(raw) : Api::Unknown; }

}  // namespace

std::optional<Event> decode(const void* data, size_t size, DecodeError* error) {
  DecodeError ignored;
  DecodeError& err = error ? *error : ignored;
  if (size < sizeof(fg_event) || data == nullptr) {
    err = DecodeError::TooShort;
    return std::nullopt;
  }
  if (size > sizeof(fg_event)) {
    err = DecodeError::TooLong;
    return std::nullopt;
  }
  fg_event raw;
  std::memcpy(&raw, data, sizeof raw);  // the record need not be aligned for us
  Event ev;
  if (!decode_into(raw, ev, &err)) return std::nullopt;
  return ev;
}

bool decode_into(const fg_event& raw, Event& ev, DecodeError* error) {
  DecodeError ignored;
  DecodeError& err = error ? *error : ignored;
  if (!name_in(kEventNames, raw.type)) {
    err = DecodeError::UnknownType;
    return false;
  }
  ev.ts_ns = raw.ts_ns;
  ev.pid = raw.tgid;
  ev.tid = raw.tid;
  ev.type = static_cast<EventType>(raw.type);
  ev.device = raw.device;
  ev.ptr = raw.ptr;
  ev.size = raw.size;
  ev.kind = kind_of(raw.kind);
  ev.status = raw.status;
  ev.api = api_of(raw.api);
  ev.source = source_of(raw.source);
  ev.func = raw.func != ~0u ? std::optional<uint32_t>(raw.func) : std::nullopt;
  ev.aux = raw.aux;
  ev.child_pid.reset();
  ev.stack_id.reset();
  ev.reason = ImplicitReason::Unknown;
  switch (ev.type) {
    case EventType::ProcFork: ev.child_pid = static_cast<uint32_t>(raw.aux); break;
    case EventType::Alloc:
      // aux = stack id + 1, so that 0 (the field's default) means "no stack".
      if (raw.aux != 0 && raw.aux <= 0x100000000ull) ev.stack_id = static_cast<uint32_t>(raw.aux - 1);
      break;
    case EventType::ImplicitFree:
      if (raw.aux >= 1 && raw.aux <= 3) ev.reason = static_cast<ImplicitReason>(raw.aux);
      break;
    default: break;
  }
  // comm is NUL-padded by bpf_get_current_comm but need not be terminated: bound the read.
  // Most records carry none (only a process's first does).
  if (raw.comm[0] == '\0')
    ev.comm.clear();
  else
    ev.comm.assign(raw.comm, ::strnlen(raw.comm, sizeof raw.comm));
  err = DecodeError::None;
  return true;
}

const char* to_string(EventType t) noexcept { return or_unknown(name_in(kEventNames, static_cast<uint32_t>(t))); }
const char* to_string(Source s) noexcept { return or_unknown(name_in(kSourceNames, static_cast<uint16_t>(s))); }
const char* to_string(Api a) noexcept { return or_unknown(name_in(kApiNames, static_cast<uint16_t>(a))); }

const char* to_string(DecodeError e) noexcept {
  switch (e) {
    case DecodeError::None: return "ok";
    case DecodeError::TooShort: return "record shorter than struct fg_event";
    case DecodeError::TooLong: return "record longer than struct fg_event (another FAKEGPU_EVENTS_ABI?)";
    case DecodeError::UnknownType: return "unknown event type";
  }
  return "unknown";
}

}  // namespace fgtrace
