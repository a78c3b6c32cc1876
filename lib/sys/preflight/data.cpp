// The data side of the preflight: every speaker listens on its data address
// for reach probes and bandwidth streams from its peers, and sends its own.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "../../base/error.hpp"
#include "../../preflight/protocol.hpp"
#include "../net/accept_guard.hpp"
#include "internal.hpp"

namespace gangway::sys::pf {
using namespace preflight;

// ---------------------------------------------------------------- data side
// Every speaker listens for probes and bandwidth streams from its peers.
namespace {

// A handler's place, given back when it ends.
struct HandlerSlot {
    std::shared_ptr<DataState> st;
    ~HandlerSlot() {
        std::lock_guard<std::mutex> l(st->gate_mu);
        --st->handlers;
    }
};

// A connection in st.waiting while its handler waits for the first frame, so
// that the acceptor can drop the oldest; out of it on every way out, also an
// exception, while the descriptor is still open (declared after the Conn that
// owns it): a number left behind could name another connection later.
class WaitingEntry {
public:
    WaitingEntry(DataState& st, int fd) : st_(st), fd_(fd) {
        std::lock_guard<std::mutex> l(st_.gate_mu);
        st_.waiting[fd_] = Clock::now();
    }
    ~WaitingEntry() { (void)leave(); }
    WaitingEntry(const WaitingEntry&) = delete;
    WaitingEntry& operator=(const WaitingEntry&) = delete;
    // Whether it was still there: false when the acceptor dropped it (and told why).
    bool leave() {
        std::lock_guard<std::mutex> l(st_.gate_mu);
        return st_.waiting.erase(fd_) > 0;
    }

private:
    DataState& st_;
    int fd_;
};

void serve_data_conn(const std::shared_ptr<DataState>& st, int raw_fd) {
    sys::Fd fd(raw_fd);
    auto c = sys::accept_conn(std::move(fd), st->key, after_ms(2000));
    if (!c) return;
    WaitingEntry waiting(*st, c->fd.get());  // c's descriptor: open until c goes
    auto got = c->recv(after_ms(3000));
    if (!waiting.leave()) return;  // dropped by the acceptor, which told it
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

// A handler thread: an exception that escaped would end the task
// (std::terminate). Out of memory (std::bad_alloc) is the one to expect, from
// a flood of connections: it costs this connection only, told if there is
// memory left to tell it.
void handle_data_conn(std::shared_ptr<DataState> st, int raw_fd) noexcept {
    HandlerSlot slot{st};
    try {
        serve_data_conn(st, raw_fd);
    } catch (const std::exception& e) {
        try {
            st->rejects.note(-1, std::string("a connection's handler ended: ") + e.what());
        } catch (...) {
        }
    }
}

}  // namespace

namespace {

// Shuts down the oldest connection waiting for its first frame for at least
// `age` (its handler then ends), telling why; whether there was one. With gate_mu held.
bool drop_oldest_waiting(DataState& st, std::chrono::milliseconds age, const std::string& why) {
    auto oldest = st.waiting.end();
    for (auto it = st.waiting.begin(); it != st.waiting.end(); ++it)
        if (oldest == st.waiting.end() || it->second < oldest->second) oldest = it;
    if (oldest == st.waiting.end() || Clock::now() - oldest->second < age) return false;
    st.rejects.note(oldest->first, why);
    ::shutdown(oldest->first, SHUT_RDWR);
    st.waiting.erase(oldest);
    return true;
}

// Starts a handler for fd, or closes it and tells why.
void serve(const std::shared_ptr<DataState>& st, sys::Fd fd, std::size_t waiting_cap) {
    std::unique_lock<std::mutex> l(st->gate_mu);
    if (st->waiting.size() >= waiting_cap)
        drop_oldest_waiting(*st, std::chrono::milliseconds(200),
                            "more than " + std::to_string(waiting_cap) + " connections waiting for their request: the oldest dropped");
    if (st->handlers >= kMaxDataHandlers) {
        st->rejects.note(fd.get(), "more than " + std::to_string(kMaxDataHandlers) + " connections at once: closed at once");
        return;
    }
    ++st->handlers;
    try {
        // The descriptor passes as a number: a thread that fails to start leaves it here.
        std::thread t(handle_data_conn, st, fd.get());
        (void)fd.release();
        t.detach();
    } catch (const std::exception& e) {
        // No thread (RLIMIT_NPROC, memory: std::system_error, or std::bad_alloc
        // for its state): this connection is closed, and the oldest waiting
        // one, if any, makes room for the next.
        --st->handlers;
        st->rejects.note(fd.get(), std::string("no thread to serve it (") + e.what() + "): closed at once");
        drop_oldest_waiting(*st, std::chrono::milliseconds(0), "dropped to free a thread");
    }
}

}  // namespace

void data_server(std::shared_ptr<DataState> st, sys::Fd listener) {
    sys::AcceptGuard guard;
    const std::size_t waiting_cap = sys::waiting_cap(kMaxDataHandlers);
    while (!st->stop) {
        if (!sys::wait_readable(listener.get(), after_ms(200))) continue;
        for (int k = 0; k < 256; ++k) {
            try {
                auto a = guard.accept(listener.get(), st->rejects);
                if (a.fd) serve(st, std::move(a.fd), waiting_cap);
                else if (!a.again) break;
            } catch (const std::bad_alloc&) {
                break;  // out of memory (a flood): that connection is closed, the port still listens
            }
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

}  // namespace gangway::sys::pf
