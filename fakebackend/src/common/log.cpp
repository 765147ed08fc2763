// SPDX-License-Identifier: Apache-2.0
#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fg::log {
namespace {

Level parse_level() noexcept {
  const char* v = std::getenv("FAKEGPU_LOG");
  if (!v || !*v) return Level::Warn;
  static constexpr struct {
    const char* name;
    Level level;
  } kNames[] = {
      {"off", Level::Off},   {"error", Level::Error}, {"warn", Level::Warn},
      {"info", Level::Info}, {"debug", Level::Debug}, {"trace", Level::Trace},
  };
  for (const auto& n : kNames)
    if (std::strcmp(v, n.name) == 0) return n.level;
  std::fprintf(stderr,
               "[FakeGPU] FAKEGPU_LOG=\"%s\" is not a level; use off, error, warn, info, debug or trace (using warn)\n",
               v);
  return Level::Warn;
}

}  // namespace

Level level() noexcept {
  static const Level l = parse_level();
  return l;
}

void write(Level l, Src s, const char* fmt, ...) noexcept {
  static constexpr const char* kPrefix[] = {"[FakeGPU]", "[FakeCUDA]", "[FakeCUDA-Driver]", "[FakeNVML]"};
  static constexpr const char* kLevel[] = {"", "error: ", "warning: ", "", "", ""};
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "%s %s", kPrefix[static_cast<int>(s)], kLevel[static_cast<int>(l)]);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && n < static_cast<int>(sizeof buf)) n += std::vsnprintf(buf + n, sizeof buf - n, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n >= static_cast<int>(sizeof buf) - 1) n = sizeof buf - 2;
  buf[n++] = '\n';
  // One write(2) per line so lines of concurrent threads and processes do not interleave.
  ssize_t rc = ::write(STDERR_FILENO, buf, static_cast<size_t>(n));
  (void)rc;
}

}  // namespace fg::log
