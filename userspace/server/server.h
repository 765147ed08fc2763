// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 server of fakegpu-trace (Boost.Beast on its own I/O thread): serves handle()
// (handler.h) for every request and keeps /api/v1/stream connections open as Server-Sent
// Events.
//
// The collector never waits for it: publish() swaps a shared_ptr under a mutex and posts one
// wake-up to the I/O thread (coalesced); requests read the latest State. Every resource a
// client can hold is bounded by a named option: header and body sizes, the time a request
// may take to arrive, the connections open at once (more get 503), the frames queued for a
// slow event-stream reader (older ones are dropped).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "handler.h"
#include "metrics.h"
#include "state.h"

namespace fgtrace::server {

inline constexpr const char* kDefaultListen = "127.0.0.1:9400";

struct ListenAddress {
  std::string host;   // an IP literal ("127.0.0.1", "::1"); "localhost" is 127.0.0.1
  uint16_t port = 0;  // 0: the kernel picks one (Server::port() tells which)
  bool loopback = false;

  std::string to_string() const;  // "127.0.0.1:9400", "[::1]:9400"
};

// "host:port" with host an IPv4 literal, "[IPv6]" or "localhost", and port 0..65535.
// nullopt with a message naming the input and the expected form in *error.
std::optional<ListenAddress> parse_listen_address(std::string_view text, std::string* error = nullptr);

struct ServerOptions {
  std::string listen = kDefaultListen;
  bool allow_non_loopback = false;  // without it an address other than loopback is refused
  std::string auth_token;           // empty: no authentication (see handler.h)
  MetricsOptions metrics;           // max_processes, version

  size_t max_header_bytes = 8 * 1024;                  // larger request headers: 431 and close
  size_t max_body_bytes = 1024;                        // larger request bodies: 413 and close
  std::chrono::milliseconds read_timeout{10'000};      // a whole request, and keep-alive idle
  std::chrono::milliseconds write_timeout{10'000};     // one response or one event frame
  size_t max_connections = 64;                         // open at once, streams included; more: 503 and close
  size_t stream_queue_frames = 4;                      // per event-stream reader; older frames are dropped
  std::chrono::milliseconds stream_keepalive{15'000};  // comment line when nothing was sent
};

// Counters for the collector's own metrics and for tests.
struct ServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_rejected = 0;  // over max_connections (503)
  uint64_t connections_open = 0;      // now, streams included
  uint64_t streams_open = 0;
  uint64_t requests = 0;
  uint64_t bad_requests = 0;           // unparsable, too large (400, 413, 431)
  uint64_t timeouts = 0;               // requests that did not arrive within read_timeout
  uint64_t stream_frames_dropped = 0;  // event frames a slow reader never got
};

class Server {
 public:
  // Binds, listens and starts the I/O thread. nullptr with a message in *error when the
  // options are invalid or the address cannot be bound (in use, not on this machine, a
  // non-loopback address without allow_non_loopback).
  static std::unique_ptr<Server> start(const ServerOptions& options, std::string* error);

  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The latest refresh; cheap and non-blocking, callable from any thread. nullptr is ignored.
  void publish(std::shared_ptr<const State> state);

  // Closes the listener and every connection and joins the I/O thread. Idempotent.
  void stop();

  uint16_t port() const noexcept;  // the bound port (useful with port 0)
  std::string address() const;     // "127.0.0.1:9400"
  ServerStats stats() const noexcept;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fgtrace::server
