// SPDX-License-Identifier: Apache-2.0
// Unit tests: the pure HTTP handler (userspace/server/handler.h): routes, status codes, HEAD,
// bearer-token authentication, the embedded page.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "../../userspace/server/assets.h"
#include "../../userspace/server/handler.h"

using namespace fgtrace;
using namespace fgtrace::server;
using nlohmann::json;

namespace {

Request get(std::string target, std::string method = "GET") {
  Request r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.headers = {{"Host", "127.0.0.1:9400"}, {"User-Agent", "test"}};
  return r;
}

Request with_auth(Request r, std::string value, std::string name = "Authorization") {
  r.headers.emplace_back(std::move(name), std::move(value));
  return r;
}

std::string header(const Response& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "<none>";
}

State small_state() {
  AllocationLedger l;
  l.track_process(4242, "python3", 1, 0, false);
  Event e;
  e.type = EventType::Alloc;
  e.pid = e.tid = 4242;
  e.device = 0;
  e.kind = MemKind::Device;
  e.ptr = 0x1;
  e.size = 1 << 20;
  l.apply(e);
  State s;
  s.snapshot = l.snapshot(true);
  s.sequence = 3;
  return s;
}

json body_json(const Response& r) { return json::parse(r.body); }

}  // namespace

TEST_CASE("handler: every route answers GET", "[server][handler]") {
  const State s = small_state();

  const Response page = handle(get("/"), s);
  CHECK(page.status == 200);
  CHECK(page.content_type == "text/html; charset=utf-8");
  CHECK(page.body.find("<table id=\"processes\">") != std::string::npos);
  CHECK(header(page, "Content-Security-Policy").find("default-src 'self'") == 0);
  CHECK(header(page, "X-Content-Type-Options") == "nosniff");
  CHECK(handle(get("/index.html"), s).body == page.body);

  const Response chart = handle(get("/assets/chart.min.js"), s);
  CHECK(chart.status == 200);
  CHECK(chart.content_type == "text/javascript; charset=utf-8");
  CHECK_FALSE(chart.body.empty());
  CHECK(handle(get("/assets/app.js"), s).body.find("window.fakegpuState") != std::string::npos);
  CHECK(handle(get("/assets/style.css"), s).content_type == "text/css; charset=utf-8");

  const Response metrics = handle(get("/metrics"), s);
  CHECK(metrics.status == 200);
  CHECK(metrics.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(metrics.body.find("fakegpu_process_memory_bytes{pid=\"4242\"") != std::string::npos);

  const Response health = handle(get("/healthz"), s);
  CHECK(health.status == 200);
  CHECK(health.body == "ok\n");

  for (const char* route : {"/api/v1/summary", "/api/v1/processes", "/api/v1/devices", "/api/v1/processes/4242"}) {
    INFO(route);
    const Response r = handle(get(route), s);
    CHECK(r.status == 200);
    CHECK(r.content_type == "application/json");
    CHECK(header(r, "Cache-Control") == "no-store");
    CHECK(body_json(r)["sequence"] == 3);
  }
  CHECK(body_json(handle(get("/api/v1/processes/4242"), s))["comm"] == "python3");
  // The query string is not part of the route.
  CHECK(handle(get("/api/v1/processes?pretty=1"), s).status == 200);
  CHECK(handle(get("/metrics?x"), s).status == 200);
}

TEST_CASE("handler: the event stream is handed to the server", "[server][handler]") {
  const Response r = handle(get("/api/v1/stream"), small_state(), {});
  CHECK(r.status == 200);
  CHECK(r.stream);
  CHECK(r.content_type == "text/event-stream");
  CHECK(r.body.rfind("retry: 3000\n\nid: 3\ndata: {", 0) == 0);
  CHECK(header(r, "X-Accel-Buffering") == "no");
  const Response head = handle(get("/api/v1/stream", "HEAD"), small_state(), {});
  CHECK_FALSE(head.stream);
  CHECK(head.body.empty());
}

TEST_CASE("handler: errors are JSON with the right status", "[server][handler]") {
  const State s = small_state();

  SECTION("404 for an unknown path") {
    for (const char* path : {"/nope", "/api/v1", "/api/v1/processes/4242/x/", "/assets/missing.js", "/metrics/"}) {
      INFO(path);
      const Response r = handle(get(path), s);
      CHECK(r.status == 404);
      CHECK(r.content_type == "application/json");
      const json j = body_json(r);
      CHECK(j["status"] == 404);
      CHECK(j["error"] == "Not Found");
    }
    const json j = body_json(handle(get("/nope?a=b"), s));
    CHECK(j["message"] == "no route for /nope");
  }
  SECTION("404 for a pid that is not in the books") {
    const Response r = handle(get("/api/v1/processes/99"), s);
    CHECK(r.status == 404);
    CHECK(body_json(r)["message"] == "no process 99 in the books");
  }
  SECTION("400 for a pid that is not one") {
    for (const char* pid : {"abc", "0", "-1", "42x", "4294967296", "99999999999", "%34%32", "", "1.5"}) {
      INFO(pid);
      const Response r = handle(get(std::string("/api/v1/processes/") + pid), s);
      CHECK(r.status == 400);
      CHECK(body_json(r)["error"] == "Bad Request");
    }
    CHECK(handle(get("/api/v1/processes/4294967295"), s).status == 404);  // the largest pid parses
  }
  SECTION("400 for a target that is not a path") {
    CHECK(handle(get("http://example.com/metrics"), s).status == 400);
    CHECK(handle(get("*", "OPTIONS"), s).status == 400);
    CHECK(handle(get(""), s).status == 400);
  }
  SECTION("405 for methods other than GET and HEAD, with Allow") {
    for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "get"}) {
      INFO(method);
      const Response r = handle(get("/metrics", method), s);
      CHECK(r.status == 405);
      CHECK(header(r, "Allow") == "GET, HEAD");
      CHECK(body_json(r)["error"] == "Method Not Allowed");
    }
    CHECK(handle(get("/nope", "POST"), s).status == 404);
  }
}

TEST_CASE("handler: HEAD is GET without the body", "[server][handler]") {
  const State s = small_state();
  for (const char* path : {"/", "/metrics", "/api/v1/summary", "/healthz", "/nope", "/api/v1/processes/x"}) {
    INFO(path);
    const Response g = handle(get(path), s);
    const Response h = handle(get(path, "HEAD"), s);
    CHECK(h.status == g.status);
    CHECK(h.content_type == g.content_type);
    CHECK(h.body.empty());
    REQUIRE(h.content_length.has_value());
    CHECK(*h.content_length == g.body.size());
    CHECK_FALSE(g.content_length.has_value());
  }
}

TEST_CASE("handler: with a token, data needs Authorization: Bearer", "[server][handler]") {
  const State s = small_state();
  HandlerConfig c;
  c.auth_token = "s3cret-token";

  SECTION("missing") {
    const Response r = handle(get("/metrics"), s, c);
    CHECK(r.status == 401);
    CHECK(header(r, "WWW-Authenticate") == "Bearer realm=\"fakegpu-trace\"");
    CHECK(body_json(r)["error"] == "Unauthorized");
    CHECK(r.body.find("s3cret") == std::string::npos);
    CHECK(handle(get("/metrics", "HEAD"), s, c).status == 401);
  }
  SECTION("wrong, or not a bearer token") {
    for (const char* value : {"Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token2", "Basic czNjcmV0LXRva2Vu",
                              "s3cret-token", "Bearer", "Bearer ", "Bearers3cret-token"}) {
      INFO(value);
      const Response r = handle(with_auth(get("/api/v1/summary"), value), s, c);
      CHECK(r.status == 401);
      CHECK(header(r, "WWW-Authenticate").rfind("Bearer realm=\"fakegpu-trace\"", 0) == 0);
    }
    CHECK(header(handle(with_auth(get("/metrics"), "Bearer nope"), s, c), "WWW-Authenticate") ==
          "Bearer realm=\"fakegpu-trace\", error=\"invalid_token\"");
  }
  SECTION("right: any case of the header name and the scheme") {
    CHECK(handle(with_auth(get("/metrics"), "Bearer s3cret-token"), s, c).status == 200);
    CHECK(handle(with_auth(get("/metrics"), "bearer  s3cret-token ", "authorization"), s, c).status == 200);
    CHECK(handle(with_auth(get("/api/v1/stream"), "BEARER s3cret-token", "AUTHORIZATION"), s, c).stream);
    CHECK(handle(with_auth(get("/api/v1/processes/4242"), "Bearer s3cret-token"), s, c).status == 200);
  }
  SECTION("the page needs it too; the static assets and /healthz do not") {
    const Response page = handle(get("/"), s, c);
    CHECK(page.status == 401);
    CHECK(body_json(page)["message"].get<std::string>().find("/?access_token=<token>") != std::string::npos);
    CHECK(handle(with_auth(get("/"), "Bearer s3cret-token"), s, c).status == 200);
    CHECK(header(handle(with_auth(get("/"), "Bearer s3cret-token"), s, c), "Referrer-Policy") == "no-referrer");
    CHECK(handle(get("/assets/app.js"), s, c).status == 200);
    CHECK(handle(get("/assets/chart.min.js"), s, c).status == 200);
    CHECK(handle(get("/healthz"), s, c).status == 200);
  }
  SECTION("or the access_token query parameter (RFC 6750), for browsers") {
    CHECK(handle(get("/?access_token=s3cret-token"), s, c).status == 200);
    CHECK(handle(get("/api/v1/stream?x=1&access_token=s3cret%2Dtoken"), s, c).stream);  // %XX decoded
    CHECK(handle(get("/api/v1/processes/4242?access_token=s3cret-token#frag"), s, c).status == 200);
    CHECK(handle(get("/metrics?access_token=wrong"), s, c).status == 401);
    CHECK(handle(get("/metrics?access_token="), s, c).status == 401);
    CHECK(handle(get("/metrics?xaccess_token=s3cret-token"), s, c).status == 401);
    CHECK(handle(get("/metrics?access_token=s3cret-token%"), s, c).status == 401);
    // A header, even a wrong one, wins over the query.
    CHECK(handle(with_auth(get("/metrics?access_token=s3cret-token"), "Bearer nope"), s, c).status == 401);
  }
  SECTION("a bad pid is only judged once authorized") {
    CHECK(handle(get("/api/v1/processes/abc"), s, c).status == 401);
    CHECK(handle(with_auth(get("/api/v1/processes/abc"), "Bearer s3cret-token"), s, c).status == 400);
  }
}

TEST_CASE("handler: token comparison", "[server][handler]") {
  CHECK(token_matches("abc", "abc"));
  CHECK_FALSE(token_matches("abd", "abc"));
  CHECK_FALSE(token_matches("ab", "abc"));
  CHECK_FALSE(token_matches("abcd", "abc"));
  CHECK_FALSE(token_matches("", "abc"));
  CHECK_FALSE(token_matches("", ""));  // an empty token never authorizes
  CHECK_FALSE(token_matches("x", ""));
}

TEST_CASE("handler: helpers", "[server][handler]") {
  CHECK(request_path("/a/b?c=d#e") == "/a/b");
  CHECK(request_path("/a#x") == "/a");
  CHECK(request_path("/") == "/");
  Request r = get("/");
  r.headers.emplace_back("X-Thing", "1");
  r.headers.emplace_back("x-thing", "2");
  CHECK(r.header("X-THING") == std::optional<std::string_view>("1"));
  CHECK_FALSE(r.header("Missing").has_value());
  CHECK(find_asset("/index.html") != nullptr);
  CHECK(find_asset("/nope") == nullptr);
  CHECK(assets().size() == 4);
}
