// SPDX-License-Identifier: Apache-2.0
// Decoding of the collector's ring-buffer records (struct fg_event, bpf/fakegpu_events.h)
// into a C++ Event with enums. The ring-buffer callback hands every record to decode(),
// which checks the size before reading a byte: a record of any other size is a contract
// mismatch (a BPF object built from another FAKEGPU_EVENTS_ABI), never "mostly right".
#pragma once
#include <linux/types.h>  // __u32 & co. for the contract header

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "../../bpf/fakegpu_events.h"

namespace fgtrace {

enum class EventType : uint32_t {
  Alloc = FG_EV_ALLOC,
  Free = FG_EV_FREE,
  ImplicitFree = FG_EV_IMPLICIT_FREE,
  AllocFail = FG_EV_ALLOC_FAIL,
  FreeFail = FG_EV_FREE_FAIL,
  CtxSwitch = FG_EV_CTX_SWITCH,
  ProcExit = FG_EV_PROC_EXIT,
  ProcFork = FG_EV_PROC_FORK,
  ProcExec = FG_EV_PROC_EXEC,
};

// The kinds a record carries: Device, Managed, Host or Vmm; anything else on the wire (the
// backend passes -1 for the kind of a failed free of an unknown pointer) decodes to Unknown.
using fakegpu::MemKind;
using fakegpu::to_string;

enum class Source : uint16_t {
  Usdt = FG_SRC_USDT,
  Uprobe = FG_SRC_UPROBE,
  Kernel = FG_SRC_KERNEL,
  Unknown = 0xffff,
};

enum class Api : uint16_t {
  Runtime = FG_API_RUNTIME,
  Driver = FG_API_DRIVER,
  Internal = FG_API_INTERNAL,
  Unknown = 0xffff,
};

// Why an implicit free happened: the fakegpu:implicit_free USDT `reason` argument, carried in
// fg_event.aux of FG_EV_IMPLICIT_FREE records.
enum class ImplicitReason : uint32_t {
  Unknown = 0,
  CtxDestroy = 1,
  ProcessExit = 2,  // the backend's exit handler: what the program never freed (a leak)
  DeviceReset = 3,
};

inline constexpr int32_t kHostDevice = -1;  // device -1: host memory or unknown device

struct Event {
  uint64_t ts_ns = 0;
  uint32_t pid = 0;  // tgid
  uint32_t tid = 0;
  EventType type = EventType::Alloc;
  int32_t device = kHostDevice;
  uint64_t ptr = 0;
  uint64_t size = 0;
  MemKind kind = MemKind::Unknown;
  int32_t status = 0;
  Api api = Api::Unknown;
  Source source = Source::Unknown;
  std::optional<uint32_t> func;                     // index into the collector's function table
  uint64_t aux = 0;                                 // raw aux field
  std::optional<uint32_t> child_pid;                // ProcFork: the child tgid (aux)
  std::optional<uint32_t> stack_id;                 // Alloc: user stack id (aux = id + 1; 0 = none)
  ImplicitReason reason = ImplicitReason::Unknown;  // ImplicitFree: aux
  std::string comm;                                 // task comm, up to FG_COMM_LEN - 1 characters
};

enum class DecodeError {
  None,
  TooShort,     // fewer bytes than sizeof(fg_event)
  TooLong,      // more bytes than sizeof(fg_event): a newer contract
  UnknownType,  // fg_event.type outside enum fg_event_type
};

// The record as an Event, or nullopt (with the reason in *error when given).
std::optional<Event> decode(const void* data, size_t size, DecodeError* error = nullptr);
// The same for a whole record, into `ev` (every field rewritten; false: unknown type, `ev`
// unspecified). The collector's per-record path: it reuses one Event and its comm string.
bool decode_into(const fg_event& raw, Event& ev, DecodeError* error = nullptr);

const char* to_string(EventType t) noexcept;
const char* to_string(Source s) noexcept;  // "usdt", "uprobe", "kernel", "unknown"
const char* to_string(Api a) noexcept;     // "runtime", "driver", "internal", "unknown"
const char* to_string(DecodeError e) noexcept;

}  // namespace fgtrace
