// `gangway fleet serve`: /metrics for Prometheus to scrape, served by GNU
// libmicrohttpd (Debian's libmicrohttpd-dev), not by a server of our own.
// Why libmicrohttpd rather than cpp-httplib: Debian 12's cpp-httplib (0.11.4)
// is a shared library that pulls in OpenSSL's libssl, zlib and brotli, and it
// bounds neither the number of headers a client may send nor the queue of
// accepted connections; libmicrohttpd bounds both itself (a memory pool per
// connection for the request line and headers, a connection limit, a limit
// per client address, an idle timeout) and serves from one thread. What it
// lacks, a deadline for a whole request, a watchdog thread here adds.
//
// The server answers GET and HEAD of /metrics with the text its source
// gives, in the format the client's Accept header asks for (OpenMetrics for
// Prometheus 2.42, the classic text format otherwise); 404 for any other
// path, 405 for any other method; 400 and closed for a request with a body,
// a Transfer-Encoding or two Content-Lengths (but for ExtraRoutes' POST). Every client is served from one
// copy of the text. It binds exactly the address it is told
// (a numeric address: no name lookup, no default of every interface).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <string_view>
#include <thread>

#include "../../base/result.hpp"
#include "../../fleet/openmetrics.hpp"

struct MHD_Daemon;

namespace gangway::sys::fleet {

// The limits on what a client can make the server hold (SECURITY.md).
struct ServeLimits {
    unsigned max_connections = 32;     // open connections in all; more are refused at accept
    unsigned per_address = 8;          // open connections from one client address
    unsigned newcomer_places = 8;      // of max_connections, the last ones go only to an address that holds
                                       // none: a few busy clients cannot take every place from a scraper
    std::size_t request_bytes = 16384; // request line and headers of one request; more: 431 and closed
    unsigned idle_timeout_s = 10;      // a connection silent this long is closed
    unsigned request_deadline_s = 30;  // a connection open this long is shut down (0: never), however busy its
                                       // client keeps it (each request, or each byte of one, resets the idle
                                       // timeout); its responses after half of it close it (Connection: close)
    unsigned header_deadline_s = 5;    // a request's line and headers must come within this of the connection's
                                       // opening or its last answer (an idle keep-alive ends then too)
    unsigned upload_deadline_s = 10;   // a POST's body (ExtraRoutes) must come within this of its headers
    unsigned cache_s = 300;            // the text is rebuilt when older than this, or when the source
                                       // changed (MetricsSource::version); 0: on every scrape, which waits for it
};

// What /metrics serves. `build` makes the text in every format at once (one
// read of the store for both), or says why there is none (then a scrape gets
// 503 and the reason, and the next rebuild tries again). `version`, when
// given, is cheap and changes when what build reads has changed (the store's
// last ingest): the text is rebuilt then, in the background, so that a scrape
// never waits for a rebuild (one takes about a minute at a large site:
// BENCHMARKS.md).
struct MetricsSource {
    using Texts = std::map<gangway::fleet::Exposition, std::string>;
    std::function<Result<Texts>()> build;
    std::function<std::string()> version;
};

// The routes besides /metrics that `fleet serve --stops-key` turns on (issue
// 33, issue 43): POSTs of exactly a Post's `path`, the only requests that may
// carry a body, and GET/HEAD of paths under a Get's `prefix`. A POST there
// must say its length with one Content-Length of at most its max_body (no
// Transfer-Encoding, so no chunked body): else 400, 411 or 413 and closed,
// the body unread. Bodies being received take at most max_inflight bytes in
// all, counted as they come (a body that would pass it: its connection
// closed), and each must come within ServeLimits::upload_deadline_s of its
// headers. The handlers run on the server's thread, one at a time: they must
// be quick (the slow work, SLURM's calls, is theirs to do on another thread).
struct HttpReply {
    unsigned status = 200;
    std::string body;
    std::string content_type = "text/plain; charset=utf-8";
};
struct ExtraRoutes {
    using Header = std::function<const char*(const char*)>;  // the request's header of that name, or null
    struct Post {
        std::string path;
        std::size_t max_body = std::size_t(1) << 20;
        std::function<HttpReply(const Header& header, std::string body)> handle;
    };
    struct Get {
        std::string prefix;
        // rest: the path after prefix.
        std::function<HttpReply(std::string_view rest, const Header& header)> handle;
    };
    std::vector<Post> posts;
    std::vector<Get> gets;
    std::size_t max_inflight = std::size_t(8) << 20;
    const Post* post_of(std::string_view path) const {
        for (const auto& p : posts)
            if (p.handle && p.path == path) return &p;
        return nullptr;
    }
    const Get* get_of(std::string_view path) const {
        for (const auto& g : gets)
            if (g.handle && path.starts_with(g.prefix)) return &g;
        return nullptr;
    }
};

// "ADDR:PORT" with a numeric IPv4 address, or "[ADDR]:PORT" with an IPv6
// one; port 0 lets the kernel choose (MetricsServer::port says which).
struct ListenAddress {
    std::string host;  // as given, without brackets
    std::uint16_t port = 0;
    bool ipv6 = false;
};
Result<ListenAddress> parse_listen_address(std::string_view s);

class MetricsServer {
public:
    // Builds the first text (a failure is served as 503 until a rebuild
    // succeeds), binds and starts serving on a thread of the library's, and
    // rebuilds on another (cache_s > 0); stops in the destructor.
    static Result<std::unique_ptr<MetricsServer>> start(const ListenAddress& where, MetricsSource source,
                                                        const ServeLimits& limits = {},
                                                        std::shared_ptr<const ExtraRoutes> routes = nullptr);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    std::uint16_t port() const { return port_; }

    struct State;  // the request handler's view (http_serve.cpp)

private:
    MetricsServer() = default;
    MHD_Daemon* daemon_ = nullptr;
    std::unique_ptr<State> state_;
    std::thread watchdog_;  // the request deadline
    std::thread builder_;   // the background rebuilds
    std::uint16_t port_ = 0;
};

// SIGTERM and SIGINT blocked in this thread, and in every thread started
// while it lives (the server's: so the signal comes to wait() and nowhere
// else), the old mask back when it ends. Make it before the server.
class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    int wait() const;  // blocks until SIGTERM or SIGINT comes; returns which

private:
    struct Masks;
    std::unique_ptr<Masks> masks_;
};

}  // namespace gangway::sys::fleet
