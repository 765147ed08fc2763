// SPDX-License-Identifier: Apache-2.0
// The ledger segment's contract (fakegpu/ledger_format.h): what a reader accepts.
#include <fakegpu/ledger_format.h>

#include <catch2/catch.hpp>

#include <memory>

namespace lg = fg::ledger;

namespace {
std::unique_ptr<lg::Header> creator_header() {
  auto h = std::make_unique<lg::Header>();
  std::memcpy(h->magic, lg::kMagic, sizeof lg::kMagic);
  h->version = lg::kVersion;
  h->header_size = sizeof(lg::Header);
  h->file_size = lg::file_size();
  h->max_devices = lg::kMaxDevices;
  h->max_procs = lg::kMaxProcs;
  h->device_entry_size = sizeof(lg::DeviceEntry);
  h->proc_slot_size = sizeof(lg::ProcSlot);
  return h;
}
}  // namespace

TEST_CASE("ledger format: a reader accepts its own layout and nothing else", "[ledger_format]") {
  auto h = creator_header();
  CHECK(lg::header_valid(*h, lg::file_size()));
  CHECK_FALSE(lg::header_valid(*h, lg::file_size() - 4096));  // a truncated file
  h->version = lg::kVersion + 1;
  CHECK_FALSE(lg::header_valid(*h, lg::file_size()));
  h = creator_header();
  h->proc_slot_size += 64;
  CHECK_FALSE(lg::header_valid(*h, lg::file_size()));
  h = creator_header();
  h->magic[0] = 'X';
  CHECK_FALSE(lg::header_valid(*h, lg::file_size()));
}

TEST_CASE("ledger format: tables are aligned and the default path names the version", "[ledger_format]") {
  CHECK(lg::device_table_offset() % 64 == 0);
  CHECK(lg::proc_table_offset() % 4096 == 0);
  CHECK(lg::proc_table_offset() >= lg::device_table_offset() + sizeof(lg::DeviceEntry) * lg::kMaxDevices);
  CHECK(lg::file_size() >= lg::proc_table_offset() + sizeof(lg::ProcSlot) * lg::kMaxProcs);
  CHECK(lg::file_size() % 4096 == 0);
  CHECK(lg::default_path_for(1000) == "/dev/shm/fakegpu-1000.v" + std::to_string(lg::kVersion) + ".ledger");
}

TEST_CASE("ledger format: scans cover every slot ever claimed and no more", "[ledger_format]") {
  auto h = creator_header();
  CHECK(lg::slots_in_use(*h) == 0);  // a new segment: nothing to scan
  lg::note_slot_claimed(*h, 2);
  CHECK(lg::slots_in_use(*h) == 3);
  lg::note_slot_claimed(*h, 0);  // a lower slot reused: the limit never goes down
  CHECK(lg::slots_in_use(*h) == 3);
  lg::note_slot_claimed(*h, lg::kMaxProcs - 1);
  CHECK(lg::slots_in_use(*h) == lg::kMaxProcs);
  h->slot_limit.store(~0u);  // a damaged value never makes a scan leave the table
  CHECK(lg::slots_in_use(*h) == lg::kMaxProcs);
}
