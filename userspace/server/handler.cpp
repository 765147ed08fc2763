// SPDX-License-Identifier: Apache-2.0
#include "handler.h"

#include <charconv>
#include <exception>
#include <limits>

#include "api.h"
#include "assets.h"

namespace fgtrace::server {

using nlohmann::ordered_json;

namespace {

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

constexpr std::string_view kProcessPrefix = "/api/v1/processes/";

enum class Route { Page, Asset, Metrics, Healthz, Summary, Processes, Process, Devices, History, Stream, None };

Route route(std::string_view path, const Asset** asset) {
  if (path == "/" || path == "/index.html") {
    *asset = find_asset("/index.html");
    return *asset ? Route::Page : Route::None;
  }
  if (path.starts_with("/assets/")) {
    *asset = find_asset(path);
    return *asset ? Route::Asset : Route::None;
  }
  if (path == kMetricsPath) return Route::Metrics;
  if (path == "/healthz") return Route::Healthz;
  if (path == "/api/v1/summary") return Route::Summary;
  if (path == "/api/v1/processes") return Route::Processes;
  if (path == "/api/v1/devices") return Route::Devices;
  if (path == "/api/v1/history") return Route::History;
  if (path == kStreamPath) return Route::Stream;
  if (path.starts_with(kProcessPrefix) && path.find('/', kProcessPrefix.size()) == std::string_view::npos)
    return Route::Process;
  return Route::None;
}

std::optional<uint32_t> parse_pid(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v == 0 || v > std::numeric_limits<uint32_t>::max())
    return std::nullopt;
  return static_cast<uint32_t>(v);
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of query parameter `key` ("since" in "/x?since=5&y"), undecoded; nullopt when absent.
std::optional<std::string_view> query_param(std::string_view target, std::string_view key) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  if (const size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    if (param.size() > key.size() && param.substr(0, key.size()) == key && param[key.size()] == '=')
      return param.substr(key.size() + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

bool parse_u64(std::string_view text, uint64_t& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty();
}

// RFC 6750 §2.3: the access_token query parameter, %XX-decoded ('+' is kept: tokens are
// often base64).
std::optional<std::string> query_token(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  if (const size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  constexpr std::string_view kKey = "access_token=";
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    if (param.starts_with(kKey)) {
      const std::string_view raw = param.substr(kKey.size());
      std::string out;
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '%' && i + 2 < raw.size() && hex_value(raw[i + 1]) >= 0 && hex_value(raw[i + 2]) >= 0) {
          out += static_cast<char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
          i += 2;
        } else {
          out += raw[i];
        }
      }
      return out;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

// nullopt: authorized. The Authorization header wins; without one, the access_token query
// parameter (what a browser can put in the page's address, and EventSource can send).
std::optional<Response> check_auth(const Request& req, const HandlerConfig& config) {
  if (config.auth_token.empty()) return std::nullopt;
  std::string given;
  bool present = false;
  if (const auto header = req.header("Authorization")) {
    const std::string_view v = trim(*header);
    constexpr std::string_view kScheme = "Bearer";
    if (v.size() > kScheme.size() && iequals(v.substr(0, kScheme.size()), kScheme) &&
        (v[kScheme.size()] == ' ' || v[kScheme.size()] == '\t')) {
      given = std::string(trim(v.substr(kScheme.size())));
      present = !given.empty();
    }
  } else if (auto token = query_token(req.target)) {
    given = std::move(*token);
    present = !given.empty();
  }
  if (present && token_matches(given, config.auth_token)) return std::nullopt;
  Response r = error_response(401, present ? "the bearer token is not valid"
                                           : "this server needs a bearer token: send \"Authorization: Bearer <token>\" "
                                             "(in a browser: open /?access_token=<token>)");
  // RFC 6750 §3: no error code when no credentials were sent.
  r.headers.emplace_back("WWW-Authenticate", present ? "Bearer realm=\"fakegpu-trace\", error=\"invalid_token\""
                                                     : "Bearer realm=\"fakegpu-trace\"");
  return r;
}

Response json_response(const ordered_json& j) {
  Response r;
  r.content_type = kJsonContentType;
  r.body = dump_json(j);
  r.body += '\n';
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

Response asset_response(const Asset& a, bool page) {
  Response r;
  r.content_type = std::string(a.content_type);
  r.body = std::string(a.body);
  r.headers.emplace_back("Cache-Control", "no-cache");
  if (page) {
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                           "frame-ancestors 'none'");
    r.headers.emplace_back("Referrer-Policy", "no-referrer");  // the address may hold ?access_token=
  }
  return r;
}

Response dispatch(const Request& req, const State& state, const HandlerConfig& config) {
  if (req.target.empty() || req.target.front() != '/')
    return error_response(400, "the request target must be a path starting with '/'");
  const std::string_view path = request_path(req.target);
  const Asset* asset = nullptr;
  const Route rt = route(path, &asset);
  if (rt == Route::None) return error_response(404, "no route for " + std::string(path));
  if (req.method != "GET" && req.method != "HEAD") {
    Response r = error_response(405, "method " + req.method + " is not allowed: use GET or HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  const std::string_view version = config.metrics.version.empty() ? build_version()
                                                                  : std::string_view(config.metrics.version);
  switch (rt) {
    case Route::Asset: return asset_response(*asset, false);  // static code, no data
    case Route::Healthz: {
      Response r;
      r.content_type = "text/plain; charset=utf-8";
      r.body = "ok\n";
      r.headers.emplace_back("Cache-Control", "no-store");
      return r;
    }
    default: break;
  }
  if (auto denied = check_auth(req, config)) return std::move(*denied);
  switch (rt) {
    case Route::Page: return asset_response(*asset, true);
    case Route::Metrics: {
      Response r;
      r.content_type = kMetricsContentType;
      r.body = render_metrics(state.snapshot, state.devices, config.metrics);
      r.headers.emplace_back("Cache-Control", "no-store");
      return r;
    }
    case Route::Summary: return json_response(api_summary(state, version));
    case Route::Processes: return json_response(api_processes(state));
    case Route::Devices: return json_response(api_devices(state));
    case Route::History: {
      uint64_t since = 0, points = 0;
      if (const auto text = query_param(req.target, "since"); text && !parse_u64(*text, since))
        return error_response(400, "bad since '" + std::string(*text) +
                                       "': expected a time in milliseconds since the Unix epoch (time_unix_ms)");
      if (const auto text = query_param(req.target, "points"); text && (!parse_u64(*text, points) || points == 0))
        return error_response(400,
                              "bad points '" + std::string(*text) + "': expected how many samples at most, 1 or more");
      return json_response(api_history(state, since, static_cast<size_t>(points)));
    }
    case Route::Process: {
      const std::string_view text = path.substr(kProcessPrefix.size());
      const auto pid = parse_pid(text);
      if (!pid)
        return error_response(400, "bad pid '" + std::string(text) + "': expected a process id from 1 to 4294967295");
      auto j = api_process(state, *pid);
      if (!j) return error_response(404, "no process " + std::to_string(*pid) + " in the books");
      return json_response(*j);
    }
    case Route::Stream: {
      Response r;
      r.content_type = kStreamContentType;
      r.body = "retry: " + std::to_string(kStreamRetryMs) + "\n\n" + sse_event(state, version);
      r.headers.emplace_back("Cache-Control", "no-store");
      r.headers.emplace_back("X-Accel-Buffering", "no");  // reverse proxies: do not buffer events
      r.stream = req.method == "GET";
      return r;
    }
    default: return error_response(500, "unhandled route");
  }
}

}  // namespace

std::optional<std::string_view> Request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return std::string_view(v);
  return std::nullopt;
}

std::string_view request_path(std::string_view target) noexcept {
  const size_t end = target.find_first_of("?#");
  return end == std::string_view::npos ? target : target.substr(0, end);
}

bool token_matches(std::string_view given, std::string_view expected) noexcept {
  // Walks all of `given` whatever matches, so the time tells nothing about the token beyond
  // its length.
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < given.size(); ++i) {
    const char e = expected.empty() ? '\0' : expected[i % expected.size()];
    diff |= static_cast<unsigned>(static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(e));
  }
  return diff == 0 && !expected.empty();
}

const char* reason_phrase(int status) noexcept {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

Response error_response(int status, std::string_view message) {
  Response r;
  r.status = status;
  r.content_type = kJsonContentType;
  r.body = dump_json({{"status", status}, {"error", reason_phrase(status)}, {"message", message}});
  r.body += '\n';
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

Response handle(const Request& req, const State& state, const HandlerConfig& config) {
  Response r;
  try {
    r = dispatch(req, state, config);
  } catch (const std::exception& e) {
    try {
      r = error_response(500, std::string("rendering failed: ") + e.what());
    } catch (...) {
      r = Response{500, "text/plain", "rendering failed\n", {}, std::nullopt, false};
    }
  }
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (req.method == "HEAD") {
    r.content_length = r.body.size();
    r.body.clear();
    r.stream = false;
  }
  return r;
}

}  // namespace fgtrace::server
