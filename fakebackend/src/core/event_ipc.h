// SPDX-License-Identifier: Apache-2.0
// Interprocess events (cuIpcGetEventHandle / cuIpcOpenEventHandle and their runtime twins).
//
// An event created with the interprocess flag keeps its completion state in shared memory:
// one 64-byte slot of its creator's event table, a memfd of kSlots slots created on first
// use. Every record, from any process holding the event, takes the next sequence number
// (`issued`); when it is reached, `done` rises to it unless a later record got there first.
// The event is complete when `done` has caught up with `issued` (an event never recorded is
// complete, as on a real GPU), and a synchronize or stream wait waits for the records made
// before it only: for `done` to reach the `issued` it saw, whatever is recorded meanwhile.
// A record reached after a later one changes nothing, as on a GPU, where an event stands for
// its most recent record. The 64-byte handle names the creator (pid and start time), the
// table's descriptor there, the slot and the slot's generation; another process opens it
// like a legacy IPC memory handle (core/peer_fd.h) and maps the slot's page, so a record in
// either process is seen by query, synchronize and stream waits in both. Waiters sleep on
// `done` as a futex (the shared, non-private kind, which works across processes on a
// MAP_SHARED mapping).
//
// Limits: a process that dies while one of its records on a shared event is still queued
// leaves that record pending; a waiter in another process stops waiting once the event's
// creator has exited (nothing could complete it then).
#pragma once
#include "core/errors.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace fg {
struct Event;
}

namespace fg::event_ipc {

inline constexpr uint32_t kSlots = 4096;

struct alignas(64) Slot {
  std::atomic<uint32_t> issued;      // sequence number of the latest record
  std::atomic<uint32_t> done;        // the latest sequence number reached (the futex word)
  std::atomic<uint32_t> generation;  // bumped each time the slot is taken: tells handles apart
  uint8_t reserved[52];
};
static_assert(sizeof(Slot) == 64);

// The shared state of one interprocess event, held by its Event.
struct Shared {
  Slot* slot = nullptr;
  uint32_t index = 0;     // slot number in the creator's table
  bool imported = false;  // opened from a handle: `map` is this process's mapping of it
  void* map = nullptr;
  size_t map_len = 0;
  int owner_pid = 0;  // creator (imported events: to stop waiting once it is gone)
  uint64_t owner_start = 0;
  unsigned char handle[64] = {};  // what cuIpcGetEventHandle hands out for it
};

// A slot of this process's table for a new interprocess event; OutOfMemory when all
// kSlots are taken or the table cannot be made. Freed (the slot, or an imported event's
// mapping) when the last reference goes: the event's, or a stream wait's still queued.
Status create(std::shared_ptr<Shared>* out);
// Opens a handle made by another process: InvalidContext for this process's own handle
// (as the real driver answers), InvalidValue for anything that is not a live handle.
Status open(const unsigned char handle[64], std::shared_ptr<Shared>* out);
// The 64-byte handle of an own or imported event.
void handle_of(const Shared* s, unsigned char out[64]) noexcept;

// A record was queued: its sequence number, for record_reached.
uint32_t record_queued(Shared* s) noexcept;
void record_reached(Shared* s, uint32_t seq) noexcept;  // wakes the waiters of every process
uint32_t latest(const Shared* s) noexcept;              // the sequence number of the latest record
bool reached(const Shared* s, uint32_t seq) noexcept;   // record `seq` (or a later one) reached
// Until record `seq` (or a later one) is reached, or the event's creator is gone.
void wait(const Shared* s, uint32_t seq) noexcept;

// In a forked child: the parent's table is the parent's; the child makes its own.
void after_fork_child() noexcept;

}  // namespace fg::event_ipc
