#include "rendezvous.hpp"

#include <poll.h>

#include <cerrno>
#include <map>
#include <set>
#include <thread>

#include "../../base/error.hpp"
#include "../../preflight/protocol.hpp"

namespace gangway::sys {
using namespace preflight;

Coordinator::Coordinator(std::string key, Fd listener) : key_(std::move(key)), listener_(std::move(listener)) {}

namespace {

struct Pending {
    Conn conn;
    Clock::time_point since;
};

// The connection to drop to make room: the oldest that has sent nothing for
// 100 ms (a task sends its nonce on connecting), else the oldest whose hello
// is incomplete after 1 s; none while the others may still be tasks.
std::size_t victim(const std::vector<Pending>& pending) {
    const auto now = Clock::now();
    for (std::size_t i = 0; i < pending.size(); ++i)
        if (pending[i].conn.inbuf.empty() && !pending[i].conn.ch && now - pending[i].since >= std::chrono::milliseconds(100))
            return i;
    for (std::size_t i = 0; i < pending.size(); ++i)
        if (now - pending[i].since >= std::chrono::seconds(1)) return i;
    return pending.size();
}

// An authenticated connection's first frame as a member (without its
// connection yet), or why it is refused.
Result<Member> admit(Conn::Got& hello, bool open, const std::set<unsigned>& ranks) {
    if (hello.type != kHello) return Failure{"first message is not a hello"};
    Member m;
    try {  // kv_u64 (pure) throws for a missing or malformed number: the hello's fault
        m.rank = static_cast<unsigned>(kv_u64(hello.kv, "rank"));
        m.node_rank = static_cast<unsigned>(kv_u64(hello.kv, "node_rank"));
        m.local = static_cast<unsigned>(kv_u64(hello.kv, "local"));
    } catch (const Error& e) {
        return Failure{e.what()};
    }
    m.speaker = kv_str(hello.kv, "speaker") == "1";
    if (ranks.count(m.rank)) return Failure{"rank checked in twice"};
    if (!open) return Failure{"closed right after its hello"};
    m.hello = std::move(hello.kv);
    return m;
}

}  // namespace

Result<void> Coordinator::gather(unsigned expected, Deadline d) {
    std::vector<Pending> pending;  // oldest first
    const std::size_t cap = waiting_cap(kMaxPending);
    std::set<unsigned> ranks;
    for (const auto& m : members_) ranks.insert(m.rank);
    std::vector<pollfd> pfds;
    while (ranks.size() < expected && ms_left(d) > 0) {
        // The listener is watched only while there is room: a full queue waits
        // in the kernel's backlog, and the loop does not spin on it.
        const bool room = pending.size() < cap || victim(pending) < pending.size();
        pfds.clear();
        for (auto& p : pending) pfds.push_back({p.conn.fd.get(), POLLIN, 0});
        pfds.push_back({room ? listener_.get() : -1, POLLIN, 0});
        const int r = ::poll(pfds.data(), pfds.size(), std::min(ms_left(d), room ? 200 : 20));
        if (r < 0 && errno != EINTR) return Failure{"poll failed in the rendezvous"};
        const bool incoming = pfds.back().revents & POLLIN;
        // Hellos first: they free their places.
        std::vector<Pending> keep;
        for (std::size_t i = 0; i < pending.size(); ++i) {
            auto& p = pending[i];
            const auto rev = r > 0 ? pfds[i].revents : 0;
            if (!rev) {
                if (Clock::now() < p.since + std::chrono::seconds(5)) keep.push_back(std::move(p));
                else rejects_.note(p.conn.fd.get(), "no hello within 5 s");
                continue;
            }
            std::vector<Conn::Got> got;
            const auto pumped = p.conn.pump(got);
            const bool open = bool(pumped);
            if (got.empty()) {
                if (open && Clock::now() < p.since + std::chrono::seconds(5)) keep.push_back(std::move(p));
                else rejects_.note(p.conn.fd.get(), open ? "no hello within 5 s" : pumped.error());
                continue;
            }
            auto m = admit(got[0], open, ranks);
            if (!m) {
                rejects_.note(p.conn.fd.get(), m.error());
                continue;
            }
            m->conn = std::move(p.conn);
            m->conn.max_body = kMaxFrame;  // authenticated: the task's results may be larger
            ranks.insert(m->rank);
            members_.push_back(std::move(*m));
        }
        pending = std::move(keep);
        if (!incoming) continue;
        // New connections, at most a quarter of the places per round so that
        // each is read before it can be the oldest.
        for (std::size_t k = 0; k < std::max<std::size_t>(cap / 4, 1); ++k) {
            if (pending.size() >= cap) {
                const auto v = victim(pending);
                if (v == pending.size()) break;
                rejects_.note(pending[v].conn.fd.get(), "more than " + std::to_string(cap) +
                                                            " connections waiting for their hello: the oldest idle one dropped");
                pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(v));
            }
            auto a = guard_.accept(listener_.get(), rejects_);
            if (!a.fd) {
                if (a.again) continue;
                break;
            }
            auto c = accept_conn(std::move(a.fd), key_, after_ms(1000));
            if (c) pending.push_back({std::move(*c), Clock::now()});
        }
    }
    return {};
}

bool Coordinator::send(Member& m, std::uint8_t type, const Kv& kv, Deadline d) {
    if (!m.alive) return false;
    const auto sent = m.conn.send(type, kv, d);
    if (sent) return true;
    m.alive = false;
    m.lost_reason = sent.error();
    return false;
}

std::vector<Coordinator::Event> Coordinator::poll(Deadline d) {
    std::vector<Event> events;
    std::vector<pollfd> pfds;
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < members_.size(); ++i) {
        if (!members_[i].alive) continue;
        // Frames already buffered count at once.
        pfds.push_back({members_[i].conn.fd.get(), POLLIN, 0});
        idx.push_back(i);
    }
    do {
        const int r = ::poll(pfds.data(), pfds.size(), ms_left(d));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return events;
        for (std::size_t k = 0; k < pfds.size(); ++k) {
            if (!pfds[k].revents) continue;
            auto& m = members_[idx[k]];
            std::vector<Conn::Got> got;
            const auto open = m.conn.pump(got);
            for (auto& g : got) events.push_back({idx[k], g.type, std::move(g.kv), false});
            if (!open) {
                m.alive = false;
                m.lost_reason = open.error();
                events.push_back({idx[k], 0, {}, true});
            }
        }
    } while (events.empty() && ms_left(d) > 0);
    return events;
}

Result<Conn> join(const std::vector<std::string>& addrs, unsigned port, const std::string& key, const Kv& hello, Deadline d,
                  std::string* used) {
    std::map<std::string, std::string> last;
    while (ms_left(d) > 0) {
        for (const auto& a : addrs) {
            auto c = connect_conn(a, port, key, std::min(d, after_ms(700)));
            if (!c) {
                last[a] = c.error();
                continue;
            }
            if (auto sent = c->send(kHello, hello, d); !sent) {
                last[a] = sent.error();
                continue;
            }
            if (used) *used = a;
            return c;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, ms_left(d))));
    }
    std::string err;
    for (const auto& [a, e] : last) err += (err.empty() ? "" : "; ") + a + ":" + std::to_string(port) + ": " + e;
    if (err.empty()) err = "no address to try";
    return Failure{err};
}

}  // namespace gangway::sys
