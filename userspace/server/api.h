// SPDX-License-Identifier: Apache-2.0
// The JSON API (/api/v1/...): pure functions of a published State. Schema with examples:
// userspace/server/API.md. Every document starts with the same envelope (schema, time,
// time_unix_ms, sequence) so a client can tell which refresh it comes from.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "state.h"

namespace fgtrace::server {

inline constexpr const char* kApiSchema = "fakegpu-trace/api/v1";

// Devices at or above this share of their memory in use raise a "device_full" alert.
inline constexpr double kDeviceFullRatio = 0.90;
// Alerts are capped (the page lists them all): leaks beyond this are counted in one alert.
inline constexpr size_t kMaxLeakAlerts = 20;

// "2025-06-01T12:00:00.250Z"
std::string iso8601_utc(uint64_t unix_ms);

// GET /api/v1/processes: one entry per process (totals, per-device figures, call counts).
nlohmann::ordered_json api_processes(const State& state);
// GET /api/v1/devices: the GPUs (DeviceInfo) joined with the traced books, and the traced
// pinned host memory ("host") on its own.
nlohmann::ordered_json api_devices(const State& state);
// GET /api/v1/processes/{pid}: the envelope and the process's fields at the top level: its
// /api/v1/processes entry plus books, kernel books, calls, copies, stacks. nullopt: no such
// pid in the snapshot. A reused pid shows the running process, else the latest to start.
std::optional<nlohmann::ordered_json> api_process(const State& state, uint32_t pid);
// Leaks, lost events and nearly full devices, as the page's alert list.
nlohmann::ordered_json api_alerts(const State& state);
// GET /api/v1/summary and each /api/v1/stream event: everything the page needs at once.
nlohmann::ordered_json api_summary(const State& state, std::string_view version);

// GET /api/v1/history: the kept samples, oldest first (schema in API.md). since_unix_ms:
// only samples after that time (the page asks for what it lacks). max_points > 0: at most
// that many, evenly spread over the span asked for, the newest always included.
nlohmann::ordered_json api_history(const State& state, uint64_t since_unix_ms = 0, size_t max_points = 0);

// Compact JSON; invalid UTF-8 (a comm is any bytes the kernel holds) becomes U+FFFD instead
// of throwing.
std::string dump_json(const nlohmann::ordered_json& j);

// One Server-Sent Events frame carrying api_summary: "id: <sequence>\ndata: <json>\n\n".
std::string sse_event(const State& state, std::string_view version);

}  // namespace fgtrace::server
