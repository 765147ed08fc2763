// SPDX-License-Identifier: Apache-2.0
// A fuzz input read front to back as the fields a target decodes; past its end every byte
// is 0, so any input is a complete sequence of fields.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace fuzz {

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ >= end_; }
  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() | u8() << 8); }
  uint32_t u32() { return static_cast<uint32_t>(u16() | static_cast<uint32_t>(u16()) << 16); }
  uint64_t u64() { return u32() | static_cast<uint64_t>(u32()) << 32; }
  // n bytes (zero-padded past the end).
  std::vector<uint8_t> take(size_t n) {
    std::vector<uint8_t> out(n, 0);
    const size_t have = std::min<size_t>(n, static_cast<size_t>(end_ - p_));
    if (have) std::memcpy(out.data(), p_, have);
    p_ += have;
    return out;
  }
  // A string of at most `max` bytes, its length from the next byte (shorter at the end).
  std::string text(size_t max) {
    const size_t n = std::min<size_t>(u8() % (max + 1), static_cast<size_t>(end_ - p_));
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace fuzz
