// SPDX-License-Identifier: Apache-2.0
#include "server.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <array>
#include <atomic>
#include <cerrno>
#include <deque>
#include <future>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api.h"

namespace fgtrace::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using boost::system::error_code;

// ---- listen address ------------------------------------------------------------------------

std::string ListenAddress::to_string() const {
  const std::string p = std::to_string(port);
  return host.find(':') != std::string::npos ? "[" + host + "]:" + p : host + ":" + p;
}

namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

constexpr const char* kListenForm =
    "expected HOST:PORT with HOST an IP address or localhost, e.g. 127.0.0.1:9400, [::1]:9400 or 0.0.0.0:9400";

}  // namespace

std::optional<ListenAddress> parse_listen_address(std::string_view text, std::string* error) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::string_view host, port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      fail(error, "bad listen address " + quoted + ": missing ']' after the IPv6 address; " + kListenForm);
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.starts_with(':')) {
      fail(error, "bad listen address " + quoted + ": missing :PORT; " + kListenForm);
      return std::nullopt;
    }
    port = rest.substr(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      fail(error, "bad listen address " + quoted + ": missing :PORT; " + kListenForm);
      return std::nullopt;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      fail(error, "bad listen address " + quoted + ": put an IPv6 address in brackets, e.g. [::1]:9400");
      return std::nullopt;
    }
  }
  if (host.empty()) {
    fail(error, "bad listen address " + quoted + ": missing host; " + kListenForm);
    return std::nullopt;
  }
  unsigned value = 0;
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) {
    if (c < '0' || c > '9') digits = false;
    if (digits) value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (!digits || value > 65535) {
    fail(error, "bad listen address " + quoted + ": the port must be a number from 0 to 65535; " + kListenForm);
    return std::nullopt;
  }
  const std::string host_text = host == "localhost" ? "127.0.0.1" : std::string(host);
  error_code ec;
  const asio::ip::address addr = asio::ip::make_address(host_text, ec);
  if (ec) {
    fail(error, "bad listen address " + quoted + ": '" + std::string(host) +
                    "' is not an IP address (host names other than localhost are not resolved); " + kListenForm);
    return std::nullopt;
  }
  bool loopback = addr.is_loopback();
  if (addr.is_v6() && addr.to_v6().is_v4_mapped())
    loopback = asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6()).is_loopback();
  return ListenAddress{addr.to_string(), static_cast<uint16_t>(value), loopback};
}

// ---- the server ----------------------------------------------------------------------------

namespace {

// Connections being turned away with 503 at once; beyond that they are closed unanswered,
// so a flood costs a file descriptor for an instant, not a coroutine each.
constexpr size_t kMaxRejecting = 16;
// Lingering close: after the last response, read and discard what the client still sends
// (so the kernel does not reset the connection before it read the response), within bounds.
constexpr std::chrono::milliseconds kLinger{1000};
constexpr size_t kLingerBytes = 64 * 1024;
// Failed accept (EMFILE, ENFILE, ENOBUFS): wait this long instead of spinning.
constexpr std::chrono::milliseconds kAcceptBackoff{100};
// stop(): how long the I/O thread gets to finish closing before it is stopped outright.
constexpr std::chrono::seconds kStopGrace{2};

std::string describe_bind_error(const ListenAddress& addr, const error_code& ec) {
  std::string msg = "cannot listen on " + addr.to_string() + ": " + ec.message();
  if (ec == asio::error::address_in_use)
    msg += " (another program, maybe another fakegpu-trace, has this port: choose another one)";
  else if (ec == asio::error::access_denied)
    msg += " (ports below 1024 need CAP_NET_BIND_SERVICE: choose a port from 1024 on)";
  else if (ec.value() == EADDRNOTAVAIL)
    msg += " (no network interface of this machine has that address)";
  return msg;
}

}  // namespace

class Server::Impl {
 public:
  Impl(const ServerOptions& opts, ListenAddress addr) : opts_(opts), addr_(std::move(addr)) {
    config_.auth_token = opts.auth_token;
    config_.metrics = opts.metrics;
    if (config_.metrics.version.empty()) config_.metrics.version = std::string(build_version());
    state_ = std::make_shared<const State>();
  }

  ~Impl() {
    stop();
    // Coroutines still suspended (only after a forced stop) die with ioc_, below; they
    // unregister themselves from these lists, which must therefore outlive ioc_ (declared
    // before it) and hold no I/O objects of their own.
  }

  bool open(std::string* error) {
    error_code ec;
    const tcp::endpoint ep(asio::ip::make_address(addr_.host, ec), addr_.port);
    if (ec) return fail(error, "bad listen address " + addr_.to_string() + ": " + ec.message());
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return fail(error, describe_bind_error(addr_, ec));
    port_ = acceptor_.local_endpoint(ec).port();
    return true;
  }

  void run() {
    spawn(accept_loop());
    std::promise<void> finished;
    finished_ = finished.get_future();
    thread_ = std::thread([this, done = std::move(finished)]() mutable {
      for (;;) {
        try {
          ioc_.run();
          break;
        } catch (...) {
          // A handler threw (spawn() catches what coroutines throw): keep serving.
        }
      }
      done.set_value();
    });
  }

  void publish(std::shared_ptr<const State> state) {
    if (!state) return;
    {
      std::lock_guard lock(state_mu_);
      state_.swap(state);
    }
    state.reset();  // the previous State, freed outside the lock
    // One wake-up in flight at most: a slow I/O thread sees the latest State, not a backlog.
    if (!broadcast_pending_.exchange(true)) asio::post(ioc_, [this] { broadcast(); });
  }

  void stop() {
    if (stopped_.exchange(true)) return;
    if (!thread_.joinable()) return;
    asio::post(ioc_, [this] {
      stopping_ = true;
      error_code ec;
      acceptor_.close(ec);
      for (Subscriber* s : subscribers_) s->wake.cancel();
      for (beast::tcp_stream* s : sockets_) s->close();
    });
    if (finished_.wait_for(kStopGrace) != std::future_status::ready) ioc_.stop();
    thread_.join();
  }

  uint16_t port() const noexcept { return port_; }
  std::string address() const {
    ListenAddress a = addr_;
    a.port = port_;
    return a.to_string();
  }

  ServerStats stats() const noexcept {
    ServerStats s;
    s.connections_accepted = accepted_.load();
    s.connections_rejected = rejected_.load();
    s.connections_evicted = evicted_.load();
    s.connections_open = open_.load();
    s.streams_open = streams_open_.load();
    s.streams_rejected = streams_rejected_.load();
    s.streams_gone = streams_gone_.load();
    s.requests = requests_.load();
    s.bad_requests = bad_requests_.load();
    s.timeouts = timeouts_.load();
    s.idle_closed = idle_closed_.load();
    s.stream_frames_dropped = dropped_.load();
    return s;
  }

 private:
  // An event-stream reader: frames wait here until its coroutine writes them.
  struct Subscriber {
    explicit Subscriber(asio::io_context& ioc) : wake(ioc) {}
    std::deque<std::shared_ptr<const std::string>> queue;
    asio::steady_timer wake;  // cancelled when a frame is queued
  };

  // Registers a socket for stop() while its coroutine runs; counts those turned away.
  class Rejecting {
   public:
    Rejecting(Impl& s, beast::tcp_stream& stream) : s_(s), stream_(&stream) {
      s_.sockets_.insert(stream_);
      ++s_.rejecting_;
    }
    ~Rejecting() {
      s_.sockets_.erase(stream_);
      --s_.rejecting_;
    }
    Rejecting(const Rejecting&) = delete;
    Rejecting& operator=(const Rejecting&) = delete;

   private:
    Impl& s_;
    beast::tcp_stream* stream_;
  };

  // An admitted connection. It takes its request slot (overall and for its client) when
  // created, in the accept loop, so a burst of accepts cannot overshoot the limits; it
  // gives back whatever it still holds when destroyed.
  struct Conn {
    Conn(Impl& s, tcp::socket socket, asio::ip::address client) : server(s), stream(std::move(socket)), peer(client) {
      server.sockets_.insert(&stream);
      server.take_request_slot(*this);
    }
    ~Conn() {
      server.stop_waiting(*this);
      server.release_request_slot(*this);
      server.release_stream_slot(*this);
      server.sockets_.erase(&stream);
    }
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    Impl& server;
    beast::tcp_stream stream;
    const asio::ip::address peer;
    bool request_slot = false;  // counts in requests_open_ and clients_[peer]
    bool stream_slot = false;   // counts in streams_count_
    bool waiting = false;       // in waiting_: no request yet, or one partly received
    std::list<Conn*>::iterator waiting_at;
    bool evicted = false;  // closed to make room: its coroutine ends without a word
  };

  void update_open() {
    open_.store(requests_open_ + streams_count_);
    streams_open_.store(streams_count_);
  }

  void take_request_slot(Conn& c) {
    c.request_slot = true;
    ++requests_open_;
    ++clients_[c.peer];
    update_open();
  }

  void release_request_slot(Conn& c) {
    if (!c.request_slot) return;
    c.request_slot = false;
    --requests_open_;
    if (const auto it = clients_.find(c.peer); it != clients_.end() && --it->second == 0) clients_.erase(it);
    update_open();
  }

  void release_stream_slot(Conn& c) {
    if (!c.stream_slot) return;
    c.stream_slot = false;
    --streams_count_;
    update_open();
  }

  // The connection waits for a request from now: the end of waiting_ (oldest first).
  void start_waiting(Conn& c) {
    if (c.waiting) return;
    c.waiting_at = waiting_.insert(waiting_.end(), &c);
    c.waiting = true;
  }

  void stop_waiting(Conn& c) {
    if (!c.waiting) return;
    waiting_.erase(c.waiting_at);
    c.waiting = false;
  }

  size_t connections_of(const asio::ip::address& peer) const {
    const auto it = clients_.find(peer);
    return it == clients_.end() ? 0 : it->second;
  }

  // Room for a new connection from `peer`: true when there is (maybe after closing a waiting
  // connection), false when every slot it could take is being answered.
  bool make_room(const asio::ip::address& peer) {
    const bool client_full = connections_of(peer) >= opts_.max_connections_per_client;
    if (!client_full && requests_open_ < opts_.max_connections) return true;
    Conn* victim = nullptr;
    if (client_full) {
      // The client's own oldest waiting connection: one client's idle sockets never push out
      // another client's.
      for (Conn* c : waiting_)
        if (c->peer == peer) {
          victim = c;
          break;
        }
    } else {
      // The oldest waiting connection of the client holding the most.
      size_t most = 0;
      for (Conn* c : waiting_)
        if (const size_t n = connections_of(c->peer); n > most) {
          most = n;
          victim = c;
        }
    }
    if (!victim) return false;
    evict(*victim);
    return true;
  }

  void evict(Conn& c) {
    stop_waiting(c);
    release_request_slot(c);
    c.evicted = true;
    evicted_.fetch_add(1);
    c.stream.close();  // its pending read ends with operation_aborted
  }

  std::shared_ptr<const State> current_state() {
    std::lock_guard lock(state_mu_);
    return state_;
  }

  template <typename Awaitable>
  void spawn(Awaitable&& a) {
    asio::co_spawn(ioc_, std::forward<Awaitable>(a), [](std::exception_ptr) {
      // A coroutine that threw (bad_alloc) has closed its connection by unwinding; the
      // server goes on.
    });
  }

  // The client's address, IPv4-mapped IPv6 as IPv4 (one client, whichever way it came).
  static asio::ip::address client_of(const tcp::socket& socket, error_code& ec) {
    const asio::ip::address a = socket.remote_endpoint(ec).address();
    if (a.is_v6() && a.to_v6().is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
    return a;
  }

  awaitable<void> accept_loop() {
    for (;;) {
      error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (stopping_ || ec == asio::error::operation_aborted) co_return;
      if (ec) {
        asio::steady_timer backoff(ioc_);
        backoff.expires_after(kAcceptBackoff);
        co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (stopping_) co_return;
        continue;
      }
      accepted_.fetch_add(1);
      const asio::ip::address peer = client_of(socket, ec);
      if (ec) {  // already gone (reset before it was accepted)
        socket.close(ec);
        continue;
      }
      if (!make_room(peer)) {
        rejected_.fetch_add(1);
        if (rejecting_ < kMaxRejecting)
          spawn(reject(std::move(socket)));
        else
          socket.close(ec);
        continue;
      }
      spawn(session(std::make_unique<Conn>(*this, std::move(socket), peer)));
    }
  }

  bhttp::response<bhttp::string_body> to_beast(Response&& r, unsigned version, bool keep_alive) {
    bhttp::response<bhttp::string_body> res;
    res.version(version);
    res.result(static_cast<unsigned>(r.status));
    res.set(bhttp::field::server, "fakegpu-trace");
    res.set(bhttp::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) res.insert(name, value);
    res.keep_alive(keep_alive);
    res.body() = std::move(r.body);
    if (r.content_length)
      res.content_length(*r.content_length);
    else
      res.prepare_payload();
    return res;
  }

  // conn: the connection's slot; while it lingers it counts as waiting, so a newcomer may
  // close it (a client that never closes its end cannot hold the slot for kLinger).
  awaitable<void> close_gracefully(beast::tcp_stream& stream, Conn* conn = nullptr) {
    if (conn) start_waiting(*conn);
    error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(kLinger);
    std::array<char, 4096> sink;
    size_t drained = 0;
    while (!ec && !stopping_ && drained < kLingerBytes)
      drained += co_await stream.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
    stream.close();
  }

  // Writes r (within timeout) and closes the connection, gracefully unless stopping.
  awaitable<void> send_and_close(beast::tcp_stream& stream, Response r, unsigned version,
                                 std::chrono::steady_clock::duration timeout, Conn* conn = nullptr) {
    auto res = to_beast(std::move(r), version, false);
    error_code ec;
    stream.expires_after(timeout);
    co_await bhttp::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && !stopping_) co_await close_gracefully(stream, conn);
  }

  awaitable<void> reply_and_close(Conn& conn, unsigned version, int status, std::string message) {
    co_await send_and_close(conn.stream, error_response(status, message), version, opts_.write_timeout, &conn);
  }

  awaitable<void> reject(tcp::socket socket) {
    if (stopping_) co_return;  // spawned just before stop(): it would miss the close-all
    beast::tcp_stream stream(std::move(socket));
    Rejecting reg(*this, stream);
    Response r = error_response(503, "too many connections (the limit is " + std::to_string(opts_.max_connections) +
                                         ", " + std::to_string(opts_.max_connections_per_client) +
                                         " per client), all busy: try again later");
    r.headers.emplace_back("Retry-After", "1");
    co_await send_and_close(stream, std::move(r), 11, kLinger);
  }

  awaitable<void> session(std::unique_ptr<Conn> conn) {
    if (stopping_) co_return;  // spawned just before stop(): it would miss the close-all
    Conn& c = *conn;
    beast::tcp_stream& stream = c.stream;
    // Room for one request at the limits, plus the start of a pipelined next one.
    beast::flat_buffer buffer(opts_.max_header_bytes + opts_.max_body_bytes + 1024);
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(
          std::min<size_t>(opts_.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
      parser.body_limit(opts_.max_body_bytes);
      // Waiting (and so the first to be closed for a newcomer) until the request is whole.
      start_waiting(c);
      error_code ec;
      if (buffer.size() == 0) {
        // Idle: no request begun. The first bytes start the request's own clock below.
        stream.expires_after(opts_.idle_timeout);
        const size_t n = co_await stream.async_read_some(buffer.prepare(std::min<size_t>(4096, buffer.max_size())),
                                                         asio::redirect_error(asio::use_awaitable, ec));
        buffer.commit(n);
        if (stopping_ || c.evicted) co_return;
        if (ec) {
          if (ec == beast::error::timeout) idle_closed_.fetch_add(1);
          co_return;  // idle timeout, the client closed its idle connection, or a reset
        }
      }
      // The whole request (header and body) within request_timeout of its first byte,
      // however slowly it trickles.
      stream.expires_after(opts_.request_timeout);
      co_await bhttp::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      stop_waiting(c);
      if (stopping_ || c.evicted) co_return;
      if (ec) {
        if (ec == beast::error::timeout) {
          timeouts_.fetch_add(1);  // beast closed the socket: nothing can be answered
          co_return;
        }
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) {
          co_await close_gracefully(stream, &c);
          co_return;
        }
        const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
        if (ec == bhttp::error::header_limit || (ec == bhttp::error::buffer_overflow && !parser.is_header_done())) {
          bad_requests_.fetch_add(1);
          co_await reply_and_close(c, version, 431,
                                   "request header larger than " + std::to_string(opts_.max_header_bytes) + " bytes");
        } else if (ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow) {
          bad_requests_.fetch_add(1);
          co_await reply_and_close(c, version, 413,
                                   "request body larger than " + std::to_string(opts_.max_body_bytes) + " bytes");
        } else if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
          bad_requests_.fetch_add(1);
          co_await reply_and_close(c, version, 400, "malformed HTTP request: " + ec.message());
        }
        co_return;  // connection reset and the like: nobody to answer
      }

      const auto& msg = parser.get();
      requests_.fetch_add(1);
      Request req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      for (const auto& field : msg)
        req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      const bool keep_alive = msg.keep_alive();
      const unsigned version = msg.version();

      const std::shared_ptr<const State> state = current_state();
      const bool metrics = request_path(req.target) == kMetricsPath;
      if (metrics) config_.metrics.server = stats();
      const auto t0 = std::chrono::steady_clock::now();
      Response r = handle(req, *state, config_);
      if (metrics && r.status == 200)
        config_.metrics.scrape_duration_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

      if (r.stream) {
        if (streams_count_ >= opts_.max_streams) {
          streams_rejected_.fetch_add(1);
          Response busy = error_response(503, "too many event streams (the limit is " +
                                                  std::to_string(opts_.max_streams) +
                                                  "): try again later, or poll /api/v1/summary");
          busy.headers.emplace_back("Retry-After", "3");
          co_await send_and_close(stream, std::move(busy), version, opts_.write_timeout, &c);
          co_return;
        }
        // From a request connection to a stream: the request slot is free for others.
        release_request_slot(c);
        c.stream_slot = true;
        ++streams_count_;
        update_open();
        co_await stream_events(stream, version, std::move(r));
        co_return;
      }
      auto res = to_beast(std::move(r), version, keep_alive);
      stream.expires_after(opts_.write_timeout);
      co_await bhttp::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      if (ec || stopping_) co_return;
      if (!keep_alive) {
        co_await close_gracefully(stream, &c);
        co_return;
      }
    }
  }

  // The response to GET /api/v1/stream: headers and the first event now, then one event per
  // publish until the client goes away. The body ends with the connection (no length).
  awaitable<void> stream_events(beast::tcp_stream& stream, unsigned version, Response first) {
    Subscriber sub(ioc_);
    subscribers_.push_back(&sub);
    struct Unsubscribe {
      Impl& s;
      Subscriber* sub;
      ~Unsubscribe() { std::erase(s.subscribers_, sub); }
    } unsubscribe{*this, &sub};

    // A reader sends nothing after its request, so a read that completes means it went away
    // (EOF or reset; bytes it might send are discarded): the writer hears of it at once, not
    // when a later write fails (up to stream_keepalive later, or never while the kernel
    // buffers take the frames). The read is on the socket itself, beside Beast's writes.
    bool watching = true, gone = false;
    asio::steady_timer watch_done(ioc_);
    watch_done.expires_at(asio::steady_timer::time_point::max());
    std::array<char, 512> sink;
    std::function<void(error_code, size_t)> on_read = [&](error_code ec, size_t) {
      if (!ec && !stopping_) {
        stream.socket().async_read_some(asio::buffer(sink), on_read);
        return;
      }
      watching = false;
      if (ec != asio::error::operation_aborted && !stopping_) {
        gone = true;
        streams_gone_.fetch_add(1);
        sub.wake.cancel();
        error_code ignored;
        stream.socket().cancel(ignored);  // a write in progress ends now
      }
      watch_done.cancel();
    };
    stream.socket().async_read_some(asio::buffer(sink), on_read);

    bhttp::response<bhttp::empty_body> res;
    res.version(version);
    res.result(bhttp::status::ok);
    res.set(bhttp::field::server, "fakegpu-trace");
    res.set(bhttp::field::content_type, first.content_type);
    for (const auto& [name, value] : first.headers) res.insert(name, value);
    res.keep_alive(false);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    error_code ec;
    stream.expires_after(opts_.write_timeout);
    co_await bhttp::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && !gone)
      co_await asio::async_write(stream, asio::buffer(first.body), asio::redirect_error(asio::use_awaitable, ec));

    static const std::string kKeepalive = ": keepalive\n\n";
    while (!ec && !stopping_ && !gone) {
      if (sub.queue.empty()) {
        sub.wake.expires_after(opts_.stream_keepalive);
        error_code wait;
        co_await sub.wake.async_wait(asio::redirect_error(asio::use_awaitable, wait));
        if (stopping_ || gone) break;
        if (wait || !sub.queue.empty()) continue;  // woken by a frame
        // Quiet for a while: a comment keeps proxies from closing the connection.
        stream.expires_after(opts_.write_timeout);
        co_await asio::async_write(stream, asio::buffer(kKeepalive), asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      const std::shared_ptr<const std::string> frame = std::move(sub.queue.front());
      sub.queue.pop_front();
      stream.expires_after(opts_.write_timeout);
      co_await asio::async_write(stream, asio::buffer(*frame), asio::redirect_error(asio::use_awaitable, ec));
    }
    // The watcher refers to this frame: it must have finished before the frame goes.
    if (watching) {
      error_code ignored;
      stream.socket().cancel(ignored);
      co_await watch_done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    if (!ec && !stopping_ && !gone) co_await close_gracefully(stream);
  }

  // On the I/O thread after publish(): one frame, shared by every reader's queue.
  void broadcast() {
    broadcast_pending_.store(false);
    if (subscribers_.empty() || stopping_) return;
    std::shared_ptr<const std::string> frame;
    try {
      frame = std::make_shared<const std::string>(sse_event(*current_state(), config_.metrics.version));
    } catch (...) {
      return;  // out of memory: readers get the next one
    }
    const size_t cap = std::max<size_t>(opts_.stream_queue_frames, 1);
    for (Subscriber* s : subscribers_) {
      while (s->queue.size() >= cap) {
        s->queue.pop_front();
        dropped_.fetch_add(1);
      }
      s->queue.push_back(frame);
      s->wake.cancel();
    }
  }

  const ServerOptions opts_;
  const ListenAddress addr_;
  uint16_t port_ = 0;

  // Any thread.
  std::mutex state_mu_;
  std::shared_ptr<const State> state_;
  std::atomic<bool> broadcast_pending_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> accepted_{0}, rejected_{0}, evicted_{0}, open_{0}, streams_open_{0}, streams_rejected_{0},
      streams_gone_{0}, requests_{0}, bad_requests_{0}, timeouts_{0}, idle_closed_{0}, dropped_{0};

  // The I/O thread only.
  HandlerConfig config_;
  std::unordered_set<beast::tcp_stream*> sockets_;  // every open connection, for stop()
  std::vector<Subscriber*> subscribers_;
  std::list<Conn*> waiting_;                     // waiting for a request, oldest first
  std::map<asio::ip::address, size_t> clients_;  // request connections by client address
  size_t requests_open_ = 0;                     // request connections (not streams)
  size_t streams_count_ = 0;
  size_t rejecting_ = 0;
  bool stopping_ = false;

  // Last: destroyed first, with whatever coroutine frames it still holds (see ~Impl).
  asio::io_context ioc_{1};
  tcp::acceptor acceptor_{ioc_};
  std::thread thread_;
  std::future<void> finished_;
};

// ---- Server --------------------------------------------------------------------------------

std::unique_ptr<Server> Server::start(const ServerOptions& o, std::string* error) {
  const auto invalid = [&](const std::string& what) {
    fail(error, "invalid server option: " + what);
    return nullptr;
  };
  if (o.max_connections == 0) return invalid("max_connections must be at least 1");
  if (o.max_connections_per_client == 0) return invalid("max_connections_per_client must be at least 1");
  if (o.max_streams == 0) return invalid("max_streams must be at least 1");
  if (o.max_header_bytes < 256) return invalid("max_header_bytes must be at least 256");
  if (o.request_timeout.count() <= 0 || o.idle_timeout.count() <= 0 || o.write_timeout.count() <= 0)
    return invalid("timeouts must be positive");
  if (o.stream_keepalive.count() <= 0) return invalid("stream_keepalive must be positive");
  std::string why;
  const auto addr = parse_listen_address(o.listen, &why);
  if (!addr) {
    fail(error, why);
    return nullptr;
  }
  if (!addr->loopback && !o.allow_non_loopback) {
    fail(error, "refusing to listen on " + addr->to_string() +
                    ": it is not a loopback address, and the server shows every traced process's command line and "
                    "memory to whoever connects; allow it explicitly (and consider an auth token)");
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(o, *addr);
  if (!impl->open(error)) return nullptr;
  impl->run();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { stop(); }
void Server::publish(std::shared_ptr<const State> state) { impl_->publish(std::move(state)); }
void Server::stop() { impl_->stop(); }
uint16_t Server::port() const noexcept { return impl_->port(); }
std::string Server::address() const { return impl_->address(); }
ServerStats Server::stats() const noexcept { return impl_->stats(); }

}  // namespace fgtrace::server
