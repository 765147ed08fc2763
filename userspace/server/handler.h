// SPDX-License-Identifier: Apache-2.0
// The HTTP routes as a pure function: a parsed request and the latest published State in,
// a response out. No sockets, no clock, no globals: unit-tested directly
// (tests/unit/test_server_handler.cpp); server.cpp only moves bytes.
//
//   GET /                      the dashboard page (assets under /assets/)
//   GET /metrics               Prometheus text format 0.0.4 (metrics.h)
//   GET /healthz               "ok": the server runs (no authentication)
//   GET /api/v1/summary        api.h, schema in API.md
//   GET /api/v1/processes
//   GET /api/v1/processes/{pid}
//   GET /api/v1/devices
//   GET /api/v1/history        the server's bounded history (?since=UNIX_MS: newer samples only;
//                              ?points=N: at most N, evenly spread, the newest included)
//   GET /api/v1/stream         Server-Sent Events: Response::stream tells the server to keep
//                              the connection and send one event per publish
//
// Errors: 404 unknown path, 405 other methods than GET and HEAD (with Allow), 400 a pid that
// is not a number or a bad target, 401 with WWW-Authenticate: Bearer when a token is set and
// the request lacks it, 500 if rendering fails. Error bodies are JSON:
//   {"status":404,"error":"Not Found","message":"no route for /x"}
// HEAD answers as GET would, without the body (content_length carries its length).
// When a token is configured every route but /healthz and the static assets needs it, as
// "Authorization: Bearer <token>" or (RFC 6750 §2.3, for browsers: the page's address and
// EventSource cannot send headers) the access_token query parameter; the header wins.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics.h"
#include "state.h"

namespace fgtrace::server {

struct Request {
  std::string method;  // "GET", "HEAD", … (case-sensitive, as HTTP says)
  std::string target;  // origin form: "/api/v1/processes/42?pretty"
  std::vector<std::pair<std::string, std::string>> headers;

  // The first header of that name, compared case-insensitively.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/-Length
  std::optional<uint64_t> content_length;                    // HEAD: the length GET would send (body is empty)
  bool stream = false;  // GET /api/v1/stream accepted: body is the first event; keep the
                        // connection open and send sse_event() frames after it
};

struct HandlerConfig {
  std::string auth_token;  // empty: no authentication
  MetricsOptions metrics;  // version is also the API's; the server sets scrape_duration_s
};

inline constexpr std::string_view kMetricsPath = "/metrics";
inline constexpr std::string_view kStreamPath = "/api/v1/stream";
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr const char* kJsonContentType = "application/json";
inline constexpr const char* kStreamContentType = "text/event-stream";
inline constexpr unsigned kStreamRetryMs = 3000;  // the SSE "retry:" the page reconnects after

// Never throws: a failure while rendering is a 500.
Response handle(const Request& req, const State& state, const HandlerConfig& config = {});

// The path of a target: up to '?' or '#'.
std::string_view request_path(std::string_view target) noexcept;

// Whether `given` equals `expected`, in time that depends only on their lengths.
bool token_matches(std::string_view given, std::string_view expected) noexcept;

// A JSON error response ({"status":..,"error":reason,"message":..}).
Response error_response(int status, std::string_view message);

// The standard reason phrase ("Not Found"), "Unknown" for others.
const char* reason_phrase(int status) noexcept;

}  // namespace fgtrace::server
