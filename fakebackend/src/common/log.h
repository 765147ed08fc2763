// SPDX-License-Identifier: Apache-2.0
// Logging: FAKEGPU_LOG=off|error|warn|info|debug|trace (default warn), to stderr, with the
// FakeGPU seed's prefixes ([FakeCUDA], [FakeCUDA-Driver], [FakeNVML], [FakeGPU]).
#pragma once
#include <cstdarg>

namespace fg::log {

enum class Level : int { Off = 0, Error, Warn, Info, Debug, Trace };
enum class Src : int { Core, Runtime, Driver, Nvml };

// Current level; read once from the environment (log.cpp).
Level level() noexcept;
inline bool enabled(Level l) noexcept { return static_cast<int>(l) <= static_cast<int>(level()); }

[[gnu::format(printf, 3, 4)]] void write(Level l, Src s, const char* fmt, ...) noexcept;

}  // namespace fg::log

#define FG_LOG(lvl, src, ...)                                                    \
  do {                                                                           \
    if (::fg::log::enabled(::fg::log::Level::lvl))                               \
      ::fg::log::write(::fg::log::Level::lvl, ::fg::log::Src::src, __VA_ARGS__); \
  } while (0)
