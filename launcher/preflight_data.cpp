// The data side of the preflight: every speaker listens on its data address
// for reach probes and bandwidth streams from its peers, and sends its own.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "../lib/base/error.hpp"
#include "../lib/preflight/protocol.hpp"
#include "preflight_internal.hpp"

namespace gangway::cli::pf {
using namespace preflight;
using sys::after_ms;
using sys::Conn;
using sys::ms_left;

// ---------------------------------------------------------------- data side
// Every speaker listens for probes and bandwidth streams from its peers.
namespace {

void handle_data_conn(std::shared_ptr<DataState> st, sys::Fd fd) {
    auto c = sys::accept_conn(std::move(fd), st->key, after_ms(2000));
    if (!c) return;
    auto got = c->recv(after_ms(3000));
    // Unauthenticated or malformed: dropped unanswered, and told.
    if (!got) return st->rejects.note(c->fd.get(), got.error());
    if (got->type != kData) return st->rejects.note(c->fd.get(), "first message is not a data request");
    const Kv& kv = got->kv;
    try {
        if (kv_u64(kv, "to") != st->self) return;
        const auto kind = kv_str(kv, "kind");
        const auto from = static_cast<unsigned>(kv_u64(kv, "from"));
        if (kind == "probe") {
            // Unanswered, the prober says so itself: nothing to do here.
            (void)c->send(kProbeOk, {{"from", std::to_string(st->self)}}, after_ms(1000));
            // Wait for the prober to close so that it reads our answer.
            sys::wait_readable(c->fd.get(), after_ms(1000));
            return;
        }
        if (kind != "bw") return;
        const auto round = static_cast<unsigned>(kv_u64(kv, "round"));
        const long duration = static_cast<long>(kv_u64(kv, "duration_ms"));
        const long warm = static_cast<long>(kv_u64(kv, "warm_ms"));
        const Deadline end = after_ms(duration + 4000);
        std::uint64_t total = c->inbuf.size(), at_warm = 0;
        const auto t0 = Clock::now();
        auto t_warm = t0, t_last = t0;
        bool warmed = false;
        std::vector<char> buf(1 << 20);
        RxRecord rec;
        for (;;) {
            const ssize_t r = ::recv(c->fd.get(), buf.data(), buf.size(), 0);
            if (r > 0) {
                total += static_cast<std::uint64_t>(r);
                t_last = Clock::now();
                if (!warmed && t_last - t0 >= std::chrono::milliseconds(warm)) {
                    warmed = true;
                    t_warm = t_last;
                    at_warm = total;
                }
                continue;
            }
            if (r == 0) {
                rec.ok = true;
                break;
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!sys::wait_readable(c->fd.get(), end)) {
                    rec.error = "stream did not end in time";
                    break;
                }
                continue;
            }
            rec.error = std::string("receive failed: ") + std::strerror(errno);
            break;
        }
        const double secs = std::chrono::duration<double>(t_last - (warmed ? t_warm : t0)).count();
        const double bytes = static_cast<double>(warmed ? total - at_warm : total);
        rec.bps = secs > 0 ? bytes / secs : 0;
        if (rec.ok && total == 0) {
            rec.ok = false;
            rec.error = "no data arrived";
        }
        {
            std::lock_guard<std::mutex> l(st->mu);
            st->rx[{round, from}] = rec;
        }
        st->cv.notify_all();
        ::shutdown(c->fd.get(), SHUT_RDWR);
    } catch (const Error& e) {
        st->rejects.note(c->fd.get(), e.what());
    }
}

}  // namespace

void data_server(std::shared_ptr<DataState> st, sys::Fd listener) {
    while (!st->stop) {
        if (!sys::wait_readable(listener.get(), after_ms(200))) continue;
        for (;;) {
            sys::Fd fd = sys::tcp_accept(listener.get());
            if (!fd) break;
            std::thread(handle_data_conn, st, std::move(fd)).detach();
        }
    }
}

ProbeResult probe(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, int timeout_ms) {
    ProbeResult r;
    const auto t0 = Clock::now();
    const Deadline d = after_ms(timeout_ms);
    auto c = sys::connect_conn(addr, port, key, d);
    if (!c) {
        r.error = c.error();
        return r;
    }
    if (auto sent = c->send(kData, {{"kind", "probe"}, {"from", std::to_string(self)}, {"to", std::to_string(to)}}, d); !sent) {
        r.error = sent.error();
        return r;
    }
    auto got = c->recv(d);
    if (!got || got->type != kProbeOk) {
        r.error = got ? "unexpected answer" : got.error();
        return r;
    }
    r.ok = true;
    r.ms = sys::seconds_since(t0) * 1000;
    return r;
}

TxResult stream_to(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, unsigned round,
                   long duration_ms, long warm_ms, std::size_t write_bytes) {
    TxResult r;
    auto c = sys::connect_conn(addr, port, key, after_ms(2000));
    if (!c) {
        r.error = "connect to " + addr + ": " + c.error();
        return r;
    }
    const Kv hdr{{"kind", "bw"}, {"from", std::to_string(self)}, {"to", std::to_string(to)}, {"round", std::to_string(round)},
                 {"duration_ms", std::to_string(duration_ms)}, {"warm_ms", std::to_string(warm_ms)}};
    if (auto sent = c->send(kData, hdr, after_ms(2000)); !sent) {
        r.error = sent.error();
        return r;
    }
    const std::string buf(write_bytes, 'g');
    const auto stop = after_ms(duration_ms);
    while (Clock::now() < stop) {
        const ssize_t n = ::send(c->fd.get(), buf.data(), buf.size(), MSG_NOSIGNAL);
        if (n > 0) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{c->fd.get(), POLLOUT, 0};
            ::poll(&p, 1, std::max(1, ms_left(stop)));
            continue;
        }
        r.error = std::string("send failed: ") + std::strerror(errno);
        return r;
    }
    ::shutdown(c->fd.get(), SHUT_WR);
    // The receiver closes once it has read everything: then the data arrived.
    if (!sys::wait_readable(c->fd.get(), after_ms(4000))) {
        r.error = "receiver did not finish";
        return r;
    }
    r.ok = true;
    return r;
}

}  // namespace gangway::cli::pf
