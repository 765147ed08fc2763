// Interprocess events (cuIpcGetEventHandle / cuIpcOpenEventHandle and their runtime twins).
//
// An event created with the interprocess flag keeps its completion state in shared memory:
// one 64-byte slot of its creator's event table, a memfd of kSlots slots created on first
// use. The slot counts the records queued on the event but not yet reached, from every
// process that holds it; the event is complete when that count is zero (an event never
// recorded is complete, as on a real GPU). The 64-byte handle names the creator (pid and
// start time), the table's descriptor there, the slot and the slot's generation; another
// process opens it like a legacy IPC memory handle (core/peer_fd.h) and maps the slot's
// page, so a record in either process is seen by query, synchronize and stream waits in
// both. Waiters sleep on the count as a futex (the shared, non-private kind, which works
// across processes on a MAP_SHARED mapping).
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
  std::atomic<uint32_t> pending;     // records queued and not yet reached (the futex word)
  std::atomic<uint32_t> generation;  // bumped each time the slot is taken: tells handles apart
  uint8_t reserved[56];
};
static_assert(sizeof(Slot) == 64);

// The shared state of one interprocess event, held by its Event.
struct Shared {
  Slot* slot = nullptr;
  uint32_t index = 0;        // slot number in the creator's table
  bool imported = false;     // opened from a handle: `map` is this process's mapping of it
  void* map = nullptr;
  size_t map_len = 0;
  int owner_pid = 0;         // creator (imported events: to stop waiting once it is gone)
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

void record_queued(Shared* s) noexcept;
void record_reached(Shared* s) noexcept;  // wakes the waiters of every process
bool complete(const Shared* s) noexcept;
void wait(const Shared* s) noexcept;      // until complete (or the creator is gone)

// In a forked child: the parent's table is the parent's; the child makes its own.
void after_fork_child() noexcept;

}  // namespace fg::event_ipc
