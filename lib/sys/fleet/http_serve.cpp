#include "http_serve.hpp"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <strings.h>

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "../../base/text.hpp"

namespace gangway::sys::fleet {

using gangway::fleet::Exposition;

struct MetricsServer::State {
    MetricsSource source;
    unsigned cache_s = 0;
    // The texts served, and why there are none. Written by one rebuild at a
    // time (the builder thread, or a scrape when cache_s is 0), read by the
    // library's thread: a scrape takes the lock for a copy, never for a rebuild.
    // Each text is one immutable buffer that every response of it points
    // into (no copy per client): a slow client holds a reference, not a copy,
    // and a rebuild replaces the pointer while responses of the old text end.
    std::mutex mu;
    std::map<Exposition, std::shared_ptr<const std::string>> texts;
    std::string error;       // the last rebuild's failure: served as 503 while there is no text, logged once until it changes
    std::chrono::steady_clock::time_point built_at;
    std::string built_version;
    std::mutex build_mu;     // one rebuild at a time
    // While the server starts, the library's messages are kept for the one
    // line a failure gets; afterwards they go to stderr.
    std::mutex log_mu;
    bool starting = false;
    std::string start_log;
    // A connection's lifetime: each open connection's descriptor and when it
    // opened. Not when its last request was answered: a client that sends a
    // request every few seconds would then keep its place for ever (the
    // library's idle timeout is reset by each request too), and 32 such
    // connections from four addresses shut Prometheus out for as long as they
    // liked. The library closes a descriptor only after telling
    // notify_connection, which takes conn_mu: the watchdog never shuts down a
    // number that names another connection by then.
    // `waiting_since`: when it began to wait for its next request's line
    // and headers (its opening, or its last request's end); `in_request`:
    // they are in and the request is being answered; `upload_since`: a
    // POST's body is on its way (its headers came then).
    struct Open {
        std::chrono::steady_clock::time_point opened;
        bool cut = false;
        std::string address;  // the client's address, without its port
        std::chrono::steady_clock::time_point waiting_since;
        bool in_request = false;
        bool uploading = false;
        std::chrono::steady_clock::time_point upload_since;
    };
    std::mutex conn_mu;
    std::condition_variable conn_cv;
    std::map<const MHD_Connection*, Open> open;
    // Open connections per client address, and how many of all may be open
    // before an address that holds one gets no more (the rest are kept for
    // addresses that hold none, such as a scraper's).
    std::map<std::string, unsigned> per_address;
    std::size_t shared_places = 0;
    std::size_t max_connections = 32;
    unsigned per_address_max = 8;
    unsigned deadline_s = 30;
    unsigned header_deadline_s = 5;
    unsigned upload_deadline_s = 10;
    bool stopping = false;
    // ExtraRoutes (null: /metrics only), and the bytes of the bodies being
    // received (the library's thread alone touches it).
    std::shared_ptr<const ExtraRoutes> routes;
    std::size_t inflight = 0;
};

namespace {

void log_line(void* cls, const char* fmt, va_list ap) {
    auto& st = *static_cast<MetricsServer::State*>(cls);
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    const std::string line(trim_right(buf));
    std::lock_guard lock(st.log_mu);
    if (st.starting) st.start_log += (st.start_log.empty() ? "" : "; ") + line;
    else std::fprintf(stderr, "gangway fleet serve: %s\n", line.c_str());
}

// A client's address as a key: its family and address bytes, not its port.
std::string address_key(const sockaddr* a) {
    if (!a) return {};
    if (a->sa_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(a);
        return std::string("4") + std::string(reinterpret_cast<const char*>(&v4->sin_addr), sizeof v4->sin_addr);
    }
    if (a->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(a);
        return std::string("6") + std::string(reinterpret_cast<const char*>(&v6->sin6_addr), sizeof v6->sin6_addr);
    }
    return {};
}

// The library asks before it takes a connection it accepted. The limits on
// live connections (not those already cut, which the library closes on its
// next turn) are kept here: 32 in all, 8 from one address, and once all but
// the newcomers' places are taken, an address that already holds one gets no
// other. Four addresses that keep 8 connections each busy thus hold at most
// 25 places, and a scraper from another address gets one at once.
//
// A connection that has waited over kStaleHeaders for its request's line
// and headers holds a place without using it (a client trickling its headers
// a byte at a time, which the idle timeout never ends): when one of the
// limits would refuse a newcomer, such a connection makes room, the
// newcomer's address's own first, else (the server full) the one of the
// address that holds the most, when that is more than the newcomer's. So
// clients that hold places with unfinished headers (a job's nodes) cannot
// keep a node's Epilog, which sends its headers at once, from /v1/stops; and
// the watchdog cuts them header_deadline_s after they began waiting anyway.
// The library's thread calls this and on_connection in turn, so the counts
// are those of the connections it has.
constexpr auto kStaleHeaders = std::chrono::seconds(1);

// Shuts connection `c` down (the library then sees it end and closes it),
// through the socket the library gives for it now: with Debian sid's
// libmicrohttpd the socket asked for when a connection started was not
// always its own later (a connection cut to make room stayed open).
void shut(const MHD_Connection* c, MetricsServer::State::Open& o) {
    if (const MHD_ConnectionInfo* fd = MHD_get_connection_info(const_cast<MHD_Connection*>(c), MHD_CONNECTION_INFO_CONNECTION_FD))
        ::shutdown(fd->connect_fd, SHUT_RDWR);
    o.cut = true;
}

MHD_Result admit(void* cls, const sockaddr* addr, socklen_t) {
    auto& st = *static_cast<MetricsServer::State*>(cls);
    std::lock_guard lock(st.conn_mu);
    const auto now = std::chrono::steady_clock::now();
    const std::string key = address_key(addr);
    std::size_t live = 0;
    std::map<std::string_view, unsigned> live_of;
    for (const auto& [_, o] : st.open)
        if (!o.cut) {
            ++live;
            ++live_of[o.address];
        }
    const unsigned mine = live_of.count(key) ? live_of[key] : 0;
    const bool over_address = mine >= st.per_address_max;
    const bool over_shared = live >= st.shared_places && mine > 0;
    const bool full = live >= st.max_connections;
    if (!over_address && !over_shared && !full) return MHD_YES;
    // The oldest stale connection of `who`, or none.
    using Entry = std::map<const MHD_Connection*, MetricsServer::State::Open>::value_type;
    const auto stale_of = [&](std::string_view who) {
        Entry* best = nullptr;
        for (auto& e : st.open) {
            const auto& o = e.second;
            if (!o.cut && !o.in_request && o.address == who && now - o.waiting_since >= kStaleHeaders &&
                (!best || o.waiting_since < best->second.waiting_since))
                best = &e;
        }
        return best;
    };
    Entry* victim = mine > 0 ? stale_of(key) : nullptr;
    if (!victim && !over_address && !over_shared) {
        std::string_view top;
        unsigned most = 0;
        for (const auto& [a, n] : live_of)
            if (n > most && stale_of(a)) {
                most = n;
                top = a;
            }
        if (most > mine) victim = stale_of(top);
    }
    if (!victim) return MHD_NO;
    shut(victim->first, victim->second);
    return MHD_YES;
}

void on_connection(void* cls, MHD_Connection* c, void**, MHD_ConnectionNotificationCode code) {
    auto& st = *static_cast<MetricsServer::State*>(cls);
    std::lock_guard lock(st.conn_mu);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (const auto it = st.open.find(c); it != st.open.end()) {
            if (const auto a = st.per_address.find(it->second.address); a != st.per_address.end() && --a->second == 0)
                st.per_address.erase(a);
            st.open.erase(it);
        }
        return;
    }
    const MHD_ConnectionInfo* from = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    std::string address = address_key(from ? from->client_addr : nullptr);
    ++st.per_address[address];
    const auto now = std::chrono::steady_clock::now();
    st.open[c] = {now, false, std::move(address), now, false, false, {}};
}

// Whether a connection has lived half its lifetime: its responses then ask
// the client to close it (Connection: close), so that a client that keeps
// asking, as Prometheus does, ends it between two requests rather than have
// the watchdog cut a response in the middle.
bool past_half_life(MetricsServer::State& st, const MHD_Connection* c) {
    if (st.deadline_s == 0) return false;
    std::lock_guard lock(st.conn_mu);
    const auto it = st.open.find(c);
    return it == st.open.end() ||
           std::chrono::steady_clock::now() - it->second.opened >= std::chrono::milliseconds(500) * st.deadline_s;
}

// Every second: a connection open for longer than the deadline is shut down
// however busy its client keeps it (a request every few seconds, or headers
// trickled a byte at a time, each of which resets the idle timeout); the
// library then sees it end and closes it. So no connection holds a place for
// more than the deadline and a second. Besides, a request's line and headers
// must have come header_deadline_s after the connection began to wait for
// them, and a POST's body upload_deadline_s after its headers (1 MiB in 10 s:
// at least 100 KiB/s), or the connection is shut down: a client that trickles
// either holds a place, or a body's bytes, for seconds, not minutes.
void watchdog(MetricsServer::State& st) {
    std::unique_lock lock(st.conn_mu);
    while (!st.conn_cv.wait_for(lock, std::chrono::seconds(1), [&] { return st.stopping; })) {
        const auto now = std::chrono::steady_clock::now();
        std::size_t cut = 0, slow = 0;
        for (auto& [conn, o] : st.open) {
            if (o.cut) continue;
            const bool old = st.deadline_s > 0 && now - o.opened >= std::chrono::seconds(st.deadline_s);
            const bool slow_headers = !o.in_request && now - o.waiting_since >= std::chrono::seconds(st.header_deadline_s);
            const bool slow_body = o.uploading && now - o.upload_since >= std::chrono::seconds(st.upload_deadline_s);
            if (!old && !slow_headers && !slow_body) continue;
            shut(conn, o);
            ++(old ? cut : slow);
        }
        if (cut)
            std::fprintf(stderr, "gangway fleet serve: closed %zu connection%s open for over %u s (--request-deadline)\n",
                         cut, cut == 1 ? "" : "s", st.deadline_s);
        (void)slow;  // a trickling client's: not logged one by one (a stranger could flood the log)
    }
}

// The source's version now ("" when it has none).
std::string version_now(const MetricsServer::State& st) { return st.source.version ? st.source.version() : std::string(); }

// Builds the texts from the source, whose version was `version` just before,
// and puts them in place; a failure keeps the texts there were (a store being
// replaced, or no memory, does not take /metrics away) and is logged once
// until it changes.
void rebuild(MetricsServer::State& st, std::string version) {
    std::lock_guard one(st.build_mu);
    Result<MetricsSource::Texts> fresh = [&]() -> Result<MetricsSource::Texts> {
        try {
            return st.source.build();
        } catch (const std::exception& e) {  // a bug or no memory: this rebuild fails, the server stays
            return Failure{e.what()};
        }
    }();
    std::lock_guard lock(st.mu);
    st.built_at = std::chrono::steady_clock::now();
    st.built_version = std::move(version);
    if (!fresh) {
        if (fresh.error() != st.error) std::fprintf(stderr, "gangway fleet serve: %s\n", fresh.error().c_str());
        st.error = fresh.error();
        return;
    }
    st.texts.clear();
    for (auto& [format, text] : *fresh) st.texts[format] = std::make_shared<const std::string>(std::move(text));
    st.error.clear();
}

// The background rebuilds: when the source's version changes (a new ingest)
// or the text is older than cache_s (the trends' windows move with the
// clock). Looks every second; a rebuild runs here, never in a scrape.
void builder(MetricsServer::State& st) {
    std::unique_lock lock(st.conn_mu);
    while (!st.conn_cv.wait_for(lock, std::chrono::seconds(1), [&] { return st.stopping; })) {
        lock.unlock();
        std::chrono::steady_clock::time_point at;
        std::string built;
        {
            std::lock_guard l(st.mu);
            at = st.built_at;
            built = st.built_version;
        }
        // The version is read once, and the rebuild records that reading.
        std::string version = version_now(st);
        if (std::chrono::steady_clock::now() - at >= std::chrono::seconds(st.cache_s) || version != built)
            rebuild(st, std::move(version));
        lock.lock();
    }
}

void release_text(void* holder) { delete static_cast<std::shared_ptr<const std::string>*>(holder); }

// A response whose body is the shared text itself: the response holds a
// reference to it until the library has sent it and destroys the response.
MHD_Response* shared_response(const std::shared_ptr<const std::string>& text) {
    auto* holder = new std::shared_ptr<const std::string>(text);
    MHD_Response* r = MHD_create_response_from_buffer_with_free_callback_cls(
        text->size(), const_cast<char*>(text->data()), &release_text, holder);
    if (!r) delete holder;
    return r;
}

// Queues r (one response per request: its headers are this connection's)
// and lets go of it; close: the connection ends after it.
MHD_Result queue(MHD_Connection* c, unsigned status, MHD_Response* r, const char* type, bool close,
                 const char* allow = nullptr) {
    if (!r) return MHD_NO;  // out of memory: the library closes the connection
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

constexpr const char* kPlain = "text/plain; charset=utf-8";

// A short message of ours (copied: it is small, and gone when this returns).
MHD_Result send_message(MHD_Connection* c, unsigned status, std::string_view body, bool close,
                        const char* allow = nullptr) {
    return queue(c, status,
                 MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY),
                 kPlain, close, allow);
}

// How a request says its body is framed. /metrics takes no body, so any
// body, Transfer-Encoding, or Content-Length but one "0", is refused: a
// request framed two ways (Transfer-Encoding and Content-Length, or two
// Content-Lengths) is how a request is smuggled past a proxy that reads
// the other framing, and the bytes after such headers are never read as a
// next request (the connection is closed).
struct Framing {
    unsigned content_lengths = 0;
    bool transfer_encoding = false;
    bool nonzero_length = false;
    std::string length;  // the (last) Content-Length's value
    bool ambiguous() const { return transfer_encoding || content_lengths > 1; }
    bool body() const { return ambiguous() || nonzero_length; }
};

MHD_Result count_framing(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto& f = *static_cast<Framing*>(cls);
    if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) f.transfer_encoding = true;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        ++f.content_lengths;
        if (!value || std::string_view(value) != "0") f.nonzero_length = true;
        f.length = value ? value : "";
    }
    return MHD_YES;
}

// A POST's body on its way in (ExtraRoutes): the request's state from its
// headers to its end, when request_completed frees it.
struct Upload {
    const ExtraRoutes::Post* route = nullptr;
    std::string body;
    std::size_t expect = 0;
    std::size_t counted = 0;  // its bytes in State::inflight (the body itself is handed on at the end)
};

int seen_mark;  // *req of a request without a body, once its headers' call has been

// The library's word that a request has ended (answered, or its connection
// gone): the connection waits for its next request's headers from now, and
// an Upload's bytes are given back.
void request_completed(void* cls, MHD_Connection* c, void** req, MHD_RequestTerminationCode) {
    auto& st = *static_cast<MetricsServer::State*>(cls);
    {
        std::lock_guard lock(st.conn_mu);
        if (const auto it = st.open.find(c); it != st.open.end()) {
            it->second.in_request = false;
            it->second.uploading = false;
            it->second.waiting_since = std::chrono::steady_clock::now();
        }
    }
    if (!*req || *req == &seen_mark) return;
    auto* u = static_cast<Upload*>(*req);
    st.inflight -= u->counted;
    delete u;
    *req = nullptr;
}

// A connection's request has its headers (in_request), and, for a POST's
// upload, its body is on its way (uploading) or has all come.
void mark_request(MetricsServer::State& st, MHD_Connection* c, bool in_request, bool uploading) {
    std::lock_guard lock(st.conn_mu);
    if (const auto it = st.open.find(c); it != st.open.end()) {
        it->second.in_request = in_request;
        if (uploading && !it->second.uploading) it->second.upload_since = std::chrono::steady_clock::now();
        it->second.uploading = uploading;
    }
}

// The headers' call of a POST to ExtraRoutes' path: refused unless framed by
// one Content-Length within the bounds; else its Upload is made.
MHD_Result start_upload(MetricsServer::State& st, MHD_Connection* c, const Framing& f, void** req, const ExtraRoutes::Post& r) {
    if (f.transfer_encoding)
        return send_message(c, MHD_HTTP_BAD_REQUEST, "bad request: Transfer-Encoding is refused; send one Content-Length\n", true);
    if (f.content_lengths == 0) return send_message(c, 411, "length required: send one Content-Length\n", true);
    if (f.content_lengths > 1) return send_message(c, MHD_HTTP_BAD_REQUEST, "bad request: more than one Content-Length\n", true);
    const auto n = parse_uint<std::uint64_t>(f.length);
    if (!n) return send_message(c, MHD_HTTP_BAD_REQUEST, "bad request: Content-Length is not a number\n", true);
    if (*n > r.max_body)
        return send_message(c, 413,
                            "content too large: at most " + std::to_string(r.max_body) + " bytes\n", true);
    // Memory is taken as the body's bytes come, not on the length a client
    // announces (a stranger's headers cost nothing); a body that would take
    // the bodies being received past max_inflight is cut there.
    auto* u = new Upload;
    u->route = &r;
    u->expect = std::size_t(*n);
    *req = u;
    mark_request(st, c, true, true);
    return MHD_YES;
}

// The library's request handler. Called once when the headers are in, once
// per piece of body, and once more when the request is complete: the answer
// goes then (an answer queued earlier costs the connection its keep-alive),
// except to a request that announces a body, which is refused at its
// headers, its body unread, and its connection closed.
MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char*, const char* upload_data,
                  size_t* upload_size, void** req) {
    auto& st = *static_cast<MetricsServer::State*>(cls);
    const std::string_view m = method;
    const bool get_or_head = m == MHD_HTTP_METHOD_GET || m == MHD_HTTP_METHOD_HEAD;
    if (!*req) {
        *req = &seen_mark;
        mark_request(st, c, true, false);
        Framing f;
        MHD_get_connection_values(c, MHD_HEADER_KIND, &count_framing, &f);
        if (const auto* p = st.routes && m == MHD_HTTP_METHOD_POST ? st.routes->post_of(url) : nullptr)
            return start_upload(st, c, f, req, *p);
        if (f.ambiguous())
            return send_message(c, MHD_HTTP_BAD_REQUEST,
                                f.transfer_encoding ? "bad request: Transfer-Encoding is refused (GET /metrics has no body)\n"
                                                    : "bad request: more than one Content-Length\n",
                                true);
        if (f.body() && !get_or_head)
            return send_message(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n", true, "GET, HEAD");
        if (f.body()) return send_message(c, MHD_HTTP_BAD_REQUEST, "bad request: GET /metrics takes no body\n", true);
        return MHD_YES;
    }
    if (*req != &seen_mark) {  // a POST to ExtraRoutes' path: its body, then the handler's answer
        auto& u = *static_cast<Upload*>(*req);
        if (*upload_size) {
            // The library stops at Content-Length: never more than expect.
            const std::size_t take = std::min(*upload_size, u.expect - u.body.size());
            if (st.inflight + take > st.routes->max_inflight) return MHD_NO;  // busy: closed, the client tries again
            if (u.body.empty()) u.body.reserve(std::min(u.expect, std::size_t(64) << 10));
            u.body.append(upload_data, take);
            u.counted += take;
            st.inflight += take;
            *upload_size = 0;
            return MHD_YES;
        }
        mark_request(st, c, true, false);  // all of it is in: the handler's time is not the client's
        const auto header = [c](const char* name) { return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name); };
        HttpReply reply;
        try {
            reply = u.route->handle(header, std::move(u.body));
        } catch (const std::exception& e) {  // a bug or no memory: this request fails, the server stays
            reply = {MHD_HTTP_INTERNAL_SERVER_ERROR, std::string("internal error: ") + e.what() + "\n"};
        }
        return send_message(c, reply.status, reply.body, true);
    }
    if (*upload_size) {  // not reached: a body is refused at the headers; dropped should the library pass one
        *upload_size = 0;
        return MHD_YES;
    }
    const bool close = past_half_life(st, c);
    if (const auto* g = st.routes && get_or_head ? st.routes->get_of(url) : nullptr) {
        HttpReply reply;
        try {
            const auto header = [c](const char* name) { return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name); };
            reply = g->handle(std::string_view(url).substr(g->prefix.size()), header);
        } catch (const std::exception& e) {
            reply = {MHD_HTTP_INTERNAL_SERVER_ERROR, std::string("internal error: ") + e.what() + "\n"};
        }
        return queue(c, reply.status,
                     MHD_create_response_from_buffer(reply.body.size(), reply.body.data(), MHD_RESPMEM_MUST_COPY),
                     reply.content_type.c_str(), close);
    }
    if (std::string_view(url) != "/metrics")
        return send_message(c, MHD_HTTP_NOT_FOUND, "not found: gangway serves /metrics only\n", close);
    if (!get_or_head)
        return send_message(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n", close, "GET, HEAD");

    const char* accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    const Exposition format = gangway::fleet::negotiate_exposition(accept ? accept : "");
    if (st.cache_s == 0) rebuild(st, version_now(st));
    std::shared_ptr<const std::string> text;
    std::string error;
    {
        std::lock_guard lock(st.mu);
        if (const auto it = st.texts.find(format); it != st.texts.end()) text = it->second;
        else error = st.error.empty() ? "no text yet" : st.error;
    }
    if (!text) return send_message(c, MHD_HTTP_SERVICE_UNAVAILABLE, error + "\n", close);
    // HEAD too: the library sends a HEAD response's headers only, with the text's length.
    return queue(c, MHD_HTTP_OK, shared_response(text), gangway::fleet::content_type(format), close);
}

}  // namespace

Result<ListenAddress> parse_listen_address(std::string_view s) {
    const std::string what = "--listen " + excerpt(s) + ": ";
    ListenAddress a;
    std::string_view port;
    if (s.starts_with('[')) {
        const auto close = s.find(']');
        if (close == std::string_view::npos || s.substr(close + 1, 1) != ":")
            return Failure{what + "write an IPv6 address as [ADDR]:PORT, e.g. [::1]:9464"};
        a.host = std::string(s.substr(1, close - 1));
        a.ipv6 = true;
        port = s.substr(close + 2);
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string_view::npos)
            return Failure{what + "give ADDR:PORT, e.g. 127.0.0.1:9464 (the address is bound as given: 0.0.0.0 for every interface)"};
        a.host = std::string(s.substr(0, colon));
        port = s.substr(colon + 1);
    }
    const auto p = parse_uint<std::uint16_t>(port);
    if (!p) return Failure{what + "the port must be a number from 0 to 65535"};
    a.port = *p;
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host.c_str(), buf) != 1)
        return Failure{what + "not a numeric " + (a.ipv6 ? "IPv6" : "IPv4") +
                       " address (names are not looked up: give the address to bind)"};
    return a;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const ListenAddress& where, MetricsSource source,
                                                             const ServeLimits& limits,
                                                             std::shared_ptr<const ExtraRoutes> routes) {
    std::unique_ptr<MetricsServer> s(new MetricsServer);
    s->state_ = std::make_unique<State>();
    s->state_->routes = std::move(routes);
    s->state_->source = std::move(source);
    s->state_->cache_s = limits.cache_s;
    // The first text before the first scrape can come (with cache_s 0, each scrape builds its own).
    if (limits.cache_s > 0) rebuild(*s->state_, version_now(*s->state_));
    s->state_->deadline_s = limits.request_deadline_s;
    s->state_->shared_places = limits.max_connections - std::min(limits.newcomer_places, limits.max_connections);
    s->state_->max_connections = limits.max_connections;
    s->state_->per_address_max = limits.per_address;
    s->state_->header_deadline_s = limits.header_deadline_s;
    s->state_->upload_deadline_s = limits.upload_deadline_s;

    sockaddr_in v4{};
    sockaddr_in6 v6{};
    const sockaddr* addr;
    if (where.ipv6) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(where.port);
        inet_pton(AF_INET6, where.host.c_str(), &v6.sin6_addr);
        addr = reinterpret_cast<const sockaddr*>(&v6);
    } else {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(where.port);
        inet_pton(AF_INET, where.host.c_str(), &v4.sin_addr);
        addr = reinterpret_cast<const sockaddr*>(&v4);
    }
    // One internal thread polling every connection (epoll): scrapes are few
    // and short, and the database is read by one request at a time.
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (where.ipv6) flags |= MHD_USE_IPv6;
    s->state_->starting = true;
    s->daemon_ = MHD_start_daemon(
        flags, where.port, &admit, s->state_.get(), &answer, s->state_.get(),
        MHD_OPTION_EXTERNAL_LOGGER, &log_line, s->state_.get(),  // first, so that every message of the library goes there
        MHD_OPTION_SOCK_ADDR, addr,
        // Twice ours: the connections admit() cut to make room are still the
        // library's until its next turn; admit() keeps the limits on the live ones.
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(2 * limits.max_connections),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(2 * limits.per_address),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(limits.request_bytes),
        MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(limits.idle_timeout_s),
        MHD_OPTION_LISTEN_BACKLOG_SIZE, static_cast<unsigned>(limits.max_connections),
        MHD_OPTION_NOTIFY_CONNECTION, &on_connection, s->state_.get(),
        MHD_OPTION_NOTIFY_COMPLETED, &request_completed, s->state_.get(),
        // Strict parsing of the request line and headers (a Host header in
        // HTTP/1.1, no spaces in the path or a header's name): what a proxy
        // in front may read otherwise is not what serve reads.
        MHD_OPTION_STRICT_FOR_CLIENT, 1,
        MHD_OPTION_END);
    std::string why;
    {
        std::lock_guard lock(s->state_->log_mu);
        s->state_->starting = false;
        why = std::move(s->state_->start_log);
    }
    if (!s->daemon_)
        return Failure{"cannot serve on " + std::string(where.ipv6 ? "[" : "") + where.host + (where.ipv6 ? "]" : "") + ":" +
                       std::to_string(where.port) + ": " + (why.empty() ? "libmicrohttpd would not start" : why) +
                       "; choose another --listen (an address of this host, a free port; one below 1024 needs root)"};
    if (const MHD_DaemonInfo* info = MHD_get_daemon_info(s->daemon_, MHD_DAEMON_INFO_BIND_PORT))
        s->port_ = info->port;
    s->watchdog_ = std::thread(watchdog, std::ref(*s->state_));
    if (limits.cache_s > 0) s->builder_ = std::thread(builder, std::ref(*s->state_));
    return s;
}

MetricsServer::~MetricsServer() {
    if (state_) {
        {
            std::lock_guard lock(state_->conn_mu);
            state_->stopping = true;
        }
        state_->conn_cv.notify_all();
        if (watchdog_.joinable()) watchdog_.join();
        if (builder_.joinable()) builder_.join();  // after the rebuild it may be in
    }
    // Closes the listening socket and every connection, and joins the thread
    // before the state it reads goes.
    if (daemon_) MHD_stop_daemon(daemon_);
}

struct StopSignals::Masks {
    sigset_t stop, old;
};

StopSignals::StopSignals() : masks_(std::make_unique<Masks>()) {
    sigemptyset(&masks_->stop);
    sigaddset(&masks_->stop, SIGTERM);
    sigaddset(&masks_->stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &masks_->stop, &masks_->old);
}

StopSignals::~StopSignals() { pthread_sigmask(SIG_SETMASK, &masks_->old, nullptr); }

int StopSignals::wait() const {
    int sig = 0;
    while (sigwait(&masks_->stop, &sig) != 0) {
    }
    return sig;
}

}  // namespace gangway::sys::fleet
