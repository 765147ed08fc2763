// SPDX-License-Identifier: Apache-2.0
// The integrity check's answer against the vectors of shared/research/export-tables.md §3
// (the same computation that passed NVIDIA's 13.0 runtime).
#include "core/integrity.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using fg::integrity::Digest;

namespace {
std::string hex(const Digest& d) {
  std::string s;
  char b[3];
  for (uint8_t x : d) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

fg::integrity::Inputs vector_inputs() {
  fg::integrity::Inputs in;
  in.driver_version = 13000;
  in.version = 13002;
  in.pid = 0x1234;
  in.tid = 0x5678;
  in.cudart_table = 0x7f0000001000;
  in.integrity_table = 0x7f0000002000;
  in.slot1 = 0x7f0000003000;
  in.unix_seconds = 0x6a000000;
  return in;
}
}  // namespace

TEST_CASE("integrity: MD2 gives RFC 1319's digests", "[integrity]") {
  CHECK(hex(fg::integrity::md2(nullptr, 0)) == "8350e5a3e24c153df2275c9f80692773");
  const uint8_t abc[] = {'a', 'b', 'c'};
  CHECK(hex(fg::integrity::md2(abc, 3)) == "da853b0d3f88d99b30283a69e6ded6bb");
  const std::string alpha = "abcdefghijklmnopqrstuvwxyz";  // two blocks: padding after a full one
  CHECK(hex(fg::integrity::md2(reinterpret_cast<const uint8_t*>(alpha.data()), alpha.size())) ==
        "4e8ddff3650292ab5a4108c3aa47940b");
}

TEST_CASE("integrity: the third call's answer is the HMAC-MD2 of the driver's identity", "[integrity]") {
  auto in = vector_inputs();
  SECTION("no devices") { CHECK(hex(fg::integrity::answer(in)) == "5d07d5829324c4173dabb6aaa4a437a8"); }
  SECTION("one device: UUID 00..0f at PCI 0000:01:00") {
    fg::integrity::DeviceId d;
    for (int i = 0; i < 16; ++i) d.uuid[i] = static_cast<uint8_t>(i);
    d.pci_bus = 1;
    in.devices.push_back(d);
    CHECK(hex(fg::integrity::answer(in)) == "0bfa40bde175c908ce143ae0c5c39616");
    // Bus and device swapped is another identity (the runtime then reports error 103).
    in.devices[0].pci_bus = 0;
    in.devices[0].pci_device = 1;
    CHECK(hex(fg::integrity::answer(in)) != "0bfa40bde175c908ce143ae0c5c39616");
  }
}

TEST_CASE("integrity: the first two calls get the driver's fixed answers", "[integrity]") {
  auto in = vector_inputs();
  in.version = 13000;
  CHECK(hex(fg::integrity::answer(in)) == "5c67cb031c184133e8d14c1faa83d38e");
  in.version = 13001;
  CHECK(hex(fg::integrity::answer(in)) == "5c67cb031c184118e8d14c1faa83d38e");
}
