// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 server of fakegpu-trace (Boost.Beast on its own I/O thread): serves handle()
// (handler.h) for every request and keeps /api/v1/stream connections open as Server-Sent
// Events.
//
// The collector never waits for it: publish() swaps a shared_ptr under a mutex and posts one
// wake-up to the I/O thread (coalesced); requests read the latest State. Every resource a
// client can hold is bounded by a named option: header and body sizes, the time a request
// may take to arrive once begun, the time a connection may sit idle, the connections open at
// once overall and per client address, the event streams open at once, the frames queued for
// a slow event-stream reader (older ones are dropped).
//
// Idle and slow clients cannot starve others: a connection is "waiting" from its accept (or
// its previous response) until its request has arrived whole. When a new connection finds
// its client at max_connections_per_client, that client's oldest waiting connection is
// closed to make room; when the server is at max_connections, the oldest waiting connection
// of the client holding the most is. Only when none is waiting (all are being answered) does
// the new one get 503. Event streams have their own limit (max_streams; more get 503), so
// readers that never leave cannot take the room requests need, and a reader that goes away
// is noticed at once (a pending read on its socket ends), not at the next write.
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
  std::chrono::milliseconds request_timeout{10'000};   // a request, once begun, must arrive whole within this
  std::chrono::milliseconds idle_timeout{30'000};      // a connection with no request begun (new, or
                                                       // keep-alive after a response) is closed after this
  std::chrono::milliseconds write_timeout{10'000};     // one response or one event frame
  size_t max_connections = 64;                         // request connections open at once (streams apart)
  size_t max_connections_per_client = 32;              // of those, from one client address
  size_t max_streams = 128;                            // event streams open at once; more: 503
  size_t stream_queue_frames = 4;                      // per event-stream reader; older frames are dropped
  std::chrono::milliseconds stream_keepalive{15'000};  // comment line when nothing was sent
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

  uint16_t port() const noexcept;      // the bound port (useful with port 0)
  std::string address() const;         // "127.0.0.1:9400"
  ServerStats stats() const noexcept;  // metrics.h; also the fakegpu_http_* families of /metrics

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fgtrace::server
