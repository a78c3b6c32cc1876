#include "preflight.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <set>
#include <thread>

#include "../lib/error.hpp"
#include "../lib/hostlist.hpp"
#include "../lib/preflight/bootstrap.hpp"
#include "../lib/preflight/card.hpp"
#include "../lib/preflight/localize.hpp"
#include "../lib/preflight/protocol.hpp"
#include "../lib/preflight/schedule.hpp"
#include "../lib/preflight/wire.hpp"
#include "../lib/step_view.hpp"
#include "../lib/sys/net_io.hpp"
#include "../lib/sys/gpu_stages.hpp"
#include "../lib/sys/node_card.hpp"
#include "../lib/sys/rendezvous.hpp"
#include "config.h"
#include "pmix_bootstrap.hpp"

extern char** environ;

namespace gangway::cli {
using namespace preflight;
using sys::after_ms;
using sys::Clock;
using sys::Conn;
using sys::Deadline;
using sys::ms_left;

namespace {

std::string env_or(const char* name, const std::string& dflt = "") {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : dflt;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= s.size() && !s.empty()) {
        auto e = s.find(sep, pos);
        if (e == std::string::npos) e = s.size();
        if (e > pos) out.push_back(s.substr(pos, e - pos));
        pos = e + 1;
    }
    return out;
}

std::string fmt_gbps(double bps) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f Gb/s", bps * 8 / 1e9);
    return b;
}

// ---------------------------------------------------------------- data side
// Every speaker listens for probes and bandwidth streams from its peers.
struct RxRecord {
    bool ok = false;
    double bps = 0;
    std::string error;
};

struct DataState {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::pair<unsigned, unsigned>, RxRecord> rx;  // (round, from) -> record
    std::string key;
    unsigned self = 0;
    std::atomic<bool> stop{false};
};

void handle_data_conn(std::shared_ptr<DataState> st, sys::Fd fd) {
    std::string err;
    auto c = sys::accept_conn(std::move(fd), st->key, after_ms(2000), err);
    if (!c) return;
    std::uint8_t type = 0;
    auto kv = c->recv(type, after_ms(3000), err);
    if (!kv || type != kData) return;  // unauthenticated or malformed: dropped unanswered
    try {
        if (kv_u64(*kv, "to") != st->self) return;
        const auto& kind = kv_str(*kv, "kind");
        const auto from = static_cast<unsigned>(kv_u64(*kv, "from"));
        if (kind == "probe") {
            c->send(kProbeOk, {{"from", std::to_string(st->self)}}, after_ms(1000), err);
            // Wait for the prober to close so that it reads our answer.
            sys::wait_readable(c->fd.get(), after_ms(1000));
            return;
        }
        if (kind != "bw") return;
        const auto round = static_cast<unsigned>(kv_u64(*kv, "round"));
        const long duration = static_cast<long>(kv_u64(*kv, "duration_ms"));
        const long warm = static_cast<long>(kv_u64(*kv, "warm_ms"));
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
    } catch (const Error&) {
        return;
    }
}

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

struct ProbeResult {
    bool ok = false;
    double ms = 0;
    std::string error;
};

ProbeResult probe(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, int timeout_ms) {
    ProbeResult r;
    const auto t0 = Clock::now();
    const Deadline d = after_ms(timeout_ms);
    std::string err;
    auto c = sys::connect_conn(addr, port, key, d, err);
    if (!c) {
        r.error = err;
        return r;
    }
    if (!c->send(kData, {{"kind", "probe"}, {"from", std::to_string(self)}, {"to", std::to_string(to)}}, d, err)) {
        r.error = err;
        return r;
    }
    std::uint8_t type = 0;
    auto kv = c->recv(type, d, err);
    if (!kv || type != kProbeOk) {
        r.error = kv ? "unexpected answer" : err;
        return r;
    }
    r.ok = true;
    r.ms = sys::seconds_since(t0) * 1000;
    return r;
}

struct TxResult {
    bool ok = false;
    std::string error;
};

TxResult stream_to(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, unsigned round,
                   long duration_ms, long warm_ms, std::size_t write_bytes) {
    TxResult r;
    std::string err;
    auto c = sys::connect_conn(addr, port, key, after_ms(2000), err);
    if (!c) {
        r.error = "connect to " + addr + ": " + err;
        return r;
    }
    const Kv hdr{{"kind", "bw"}, {"from", std::to_string(self)}, {"to", std::to_string(to)}, {"round", std::to_string(round)},
                 {"duration_ms", std::to_string(duration_ms)}, {"warm_ms", std::to_string(warm_ms)}};
    if (!c->send(kData, hdr, after_ms(2000), err)) {
        r.error = err;
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

// ---------------------------------------------------------------- the speaker
Card my_card(const StepFacts& s, unsigned data_port) {
    Card c;
    c.node_rank = s.node_rank;
    c.node = s.node_rank < s.nodes.size() ? s.nodes[s.node_rank] : env_or("SLURMD_NODENAME");
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    c.hostname = host;
    c.data_iface = s.data_iface;
    c.data_addr = s.node_addr;
    c.data_port = data_port;
    c.nics = sys::live_net_nics();
    for (auto& n : sys::read_nics("/"))
        if (n.kind == "ib") c.nics.push_back(n);
    c.gpus = sys::count_gpus("/");
    c.versions = sys::read_versions("/");
    c.versions["gangway"] = PACKAGE_VERSION;
    return c;
}

// This node's GPU and RDMA stages (lib/sys/gpu_stages), their results as
// key=value pairs for the coordinator: s.I.{name,status,detail,seconds,findings},
// s.I.f.J the findings' text.
Kv run_local_stages_kv(const Kv& cmd) {
    sys::LocalStagesOptions o;
    o.full = kv_str(cmd, "full") == "1";
    o.timeout_s = std::max(1.0, static_cast<double>(kv_u64(cmd, "timeout_ms")) / 1000.0);
    o.nccl_lib = kv_str(cmd, "nccl_lib");
    for (char** e = environ; *e; ++e)
        if (const char* eq = std::strchr(*e, '=')) o.env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    std::vector<sys::StageOutcome> outs;
    try {
        outs = sys::run_local_stages(o);
    } catch (const Error& e) {  // bad GANGWAY_* thresholds on this node
        for (const char* st : {"cuda", "nccl", "verbs"}) outs.push_back({{st, "failed", e.what(), 0}, {}});
    }
    Kv out{{"n", std::to_string(outs.size())}};
    for (std::size_t i = 0; i < outs.size() && i < 16; ++i) {
        const auto p = "s." + std::to_string(i) + ".";
        const auto& r = outs[i].result;
        out[p + "name"] = r.name;
        out[p + "status"] = r.status;
        out[p + "detail"] = r.detail;
        out[p + "seconds"] = std::to_string(r.seconds);
        const std::size_t nf = std::min<std::size_t>(outs[i].findings.size(), 64);
        out[p + "findings"] = std::to_string(nf);
        for (std::size_t j = 0; j < nf; ++j)
            out[p + "f." + std::to_string(j)] = outs[i].findings[j].what + ": " + outs[i].findings[j].problem;
    }
    return out;
}

// The speaker's (and the plain task's) side of the conversation; returns the
// verdict message, or nullopt with `err`.
std::optional<Kv> client_session(const PreflightOptions& opt, const StepFacts& s, bool speaker, Deadline overall,
                                 std::string& err, std::shared_ptr<DataState> data, unsigned data_port) {
    Kv hello{{"rank", std::to_string(s.rank)},
             {"node_rank", std::to_string(s.node_rank)},
             {"local", std::to_string(s.local)},
             {"speaker", speaker ? "1" : "0"}};
    if (speaker) card_to_kv(my_card(s, data_port), hello);
    // Data network first; the management name of node 0 when that fails, so a
    // node with a dead data link still checks in and is named unreachable.
    std::vector<std::string> addrs{s.primary_addr};
    if (!s.nodes.empty())
        for (const auto& a : sys::resolve_host(s.nodes[0]))
            if (!a.v6 && to_string(a) != s.primary_addr) {
                addrs.push_back(to_string(a));
                break;
            }
    const Deadline join_by = std::min(overall, after_ms(static_cast<long>(opt.join_timeout_s * 1000)));
    auto c = sys::join(addrs, s.port + 1, s.key, hello, join_by, err);
    if (!c) {
        err = "could not reach the coordinator on " + (s.nodes.empty() ? std::string("node 0") : s.nodes[0]) + " (" + err + ")";
        return std::nullopt;
    }
    const Deadline wait_until = overall + std::chrono::seconds(5);
    for (;;) {
        std::uint8_t type = 0;
        auto kv = c->recv(type, wait_until, err);
        if (!kv) {
            err = "lost the coordinator on " + (s.nodes.empty() ? std::string("node 0") : s.nodes[0]) + " (" + err + ")";
            return std::nullopt;
        }
        if (type == kVerdict) return kv;
        if (type == kWelcome || !speaker) continue;
        try {
            if (type == kReach) {
                const auto n = kv_u64(*kv, "n");
                const int timeout = static_cast<int>(kv_u64(*kv, "timeout_ms"));
                std::vector<ProbeResult> res(n);
                std::vector<std::thread> th;
                for (std::uint64_t i = 0; i < n && i < 4096; ++i) {
                    const auto p = "t." + std::to_string(i) + ".";
                    const auto to = static_cast<unsigned>(kv_u64(*kv, p + "rank"));
                    const auto addr = kv_str(*kv, p + "addr");
                    const auto port = static_cast<unsigned>(kv_u64(*kv, p + "port"));
                    th.emplace_back([&, i, to, addr, port] { res[i] = probe(s.key, s.node_rank, to, addr, port, timeout); });
                }
                for (auto& t : th) t.join();
                Kv out{{"n", std::to_string(n)}};
                for (std::uint64_t i = 0; i < n; ++i) {
                    const auto p = "r." + std::to_string(i) + ".";
                    out[p + "ok"] = res[i].ok ? "1" : "0";
                    out[p + "ms"] = std::to_string(res[i].ms);
                    out[p + "error"] = res[i].error;
                }
                if (!c->send(kReachResult, out, wait_until, err)) return std::nullopt;
            } else if (type == kLocal) {
                if (!c->send(kLocalResult, run_local_stages_kv(*kv), wait_until, err)) return std::nullopt;
            } else if (type == kBw) {
                const auto round = static_cast<unsigned>(kv_u64(*kv, "round"));
                const long dur = static_cast<long>(kv_u64(*kv, "duration_ms"));
                const long warm = static_cast<long>(kv_u64(*kv, "warm_ms"));
                const auto wbytes = static_cast<std::size_t>(std::clamp<std::uint64_t>(kv_u64(*kv, "write_bytes"), 4096, 16 << 20));
                TxResult tx;
                std::thread sender;
                const bool sends = kv_str(*kv, "send") == "1", recvs = kv_str(*kv, "recv") == "1";
                if (sends) {
                    const auto to = static_cast<unsigned>(kv_u64(*kv, "to_rank"));
                    const auto addr = kv_str(*kv, "to_addr");
                    const auto port = static_cast<unsigned>(kv_u64(*kv, "to_port"));
                    sender = std::thread([&, to, addr, port] {
                        tx = stream_to(s.key, s.node_rank, to, addr, port, round, dur, warm, wbytes);
                    });
                }
                RxRecord rx;
                if (recvs) {
                    const auto from = static_cast<unsigned>(kv_u64(*kv, "from_rank"));
                    std::unique_lock<std::mutex> l(data->mu);
                    const bool got = data->cv.wait_until(l, after_ms(dur + 4500), [&] { return data->rx.count({round, from}); });
                    if (got) rx = data->rx[{round, from}];
                    else rx.error = "no stream arrived from the peer";
                }
                if (sender.joinable()) sender.join();
                Kv out{{"round", std::to_string(round)},
                       {"rx_ok", rx.ok ? "1" : "0"},
                       {"rx_bps", std::to_string(rx.bps)},
                       {"rx_error", rx.error},
                       {"tx_ok", tx.ok ? "1" : "0"},
                       {"tx_error", tx.error}};
                if (!c->send(kBwResult, out, wait_until, err)) return std::nullopt;
            }
        } catch (const Error& e) {
            err = std::string("bad command from the coordinator: ") + e.what();
            return std::nullopt;
        }
    }
}

// ---------------------------------------------------------------- coordinator
struct NodeState {
    int member = -1;              // speaker's index in Coordinator::members
    Card card;
    NodeStatus status = NodeStatus::ok;
    std::vector<std::string> reasons;
    unsigned tasks_seen = 0;
};

// What the bootstrap before the coordination found.
struct BootInfo {
    bool pmix = false;     // every task passed PMIx fence #1: only speakers join over TCP
    double fence_s = 0;    // fence #1's duration
    std::string note;      // why PMIx was not used, when it was tried
    Clock::time_point start = Clock::now();  // the join timeout counts from here
};

class Coordination {
public:
    Coordination(const PreflightOptions& o, const StepFacts& s, sys::Coordinator& c, Deadline overall, const BootInfo& b)
        : opt(o), step(s), coord(c), overall(overall), boot(b) {}

    Report run();

private:
    void fail_lost(std::size_t member_index, const std::string& stage);
    bool healthy(unsigned node) const { return nodes[node].status == NodeStatus::ok || nodes[node].status == NodeStatus::mismatch || nodes[node].status == NodeStatus::slow; }
    // Sends one command per speaker and collects one answer of `want` from each; false when aborted.
    bool exchange(const std::string& stage, const std::map<unsigned, Kv>& cmds, std::uint8_t type, std::uint8_t want,
                  Deadline d, std::map<unsigned, Kv>& answers);
    void stage_reach();
    void stage_bandwidth();
    void stage_local();
    std::vector<Measurement> run_round(const Round& r, const std::vector<unsigned>& who, unsigned round_id, long dur,
                                       std::size_t wbytes, const std::string& stage);

    const PreflightOptions& opt;
    const StepFacts& step;
    sys::Coordinator& coord;
    Deadline overall;
    const BootInfo& boot;
    std::vector<NodeState> nodes;
    Report rep;
    bool aborted = false;
    unsigned next_round = 1;
};

void Coordination::fail_lost(std::size_t mi, const std::string& stage) {
    auto& m = coord.members()[mi];
    const unsigned node = m.node_rank;
    if (node < nodes.size() && nodes[node].status != NodeStatus::lost) {
        nodes[node].status = NodeStatus::lost;
        nodes[node].reasons.push_back("task " + std::to_string(m.rank) + " exited during " + stage + " (" + m.lost_reason + ")");
    }
    aborted = true;
}

bool Coordination::exchange(const std::string& stage, const std::map<unsigned, Kv>& cmds, std::uint8_t type,
                            std::uint8_t want, Deadline d, std::map<unsigned, Kv>& answers) {
    d = std::min(d, overall);
    for (const auto& [node, kv] : cmds) {
        auto& m = coord.members()[nodes[node].member];
        if (!coord.send(m, type, kv, d)) fail_lost(nodes[node].member, stage);
    }
    if (aborted) return false;
    while (answers.size() < cmds.size()) {
        auto ev = coord.poll(d);
        if (ev.empty()) break;  // deadline
        for (auto& e : ev) {
            if (e.lost) {
                fail_lost(e.member, stage);
                continue;
            }
            const auto& m = coord.members()[e.member];
            if (e.type == want && m.speaker && cmds.count(m.node_rank)) answers[m.node_rank] = std::move(e.kv);
        }
        if (aborted) return false;
    }
    for (const auto& [node, kv] : cmds)
        if (!answers.count(node)) {
            nodes[node].status = NodeStatus::unreachable;
            nodes[node].reasons.push_back("did not answer in stage " + stage + " before its deadline");
        }
    return true;
}

void Coordination::stage_reach() {
    const auto t0 = Clock::now();
    std::vector<unsigned> who;
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (healthy(i)) who.push_back(i);
    StageResult sr{"reach", "ok", "", 0};
    if (who.size() < 2) {
        sr.status = "skipped";
        sr.detail = "fewer than 2 nodes";
        rep.stages.push_back(sr);
        return;
    }
    std::uint64_t seed = std::hash<std::string>{}(step.job_id + "." + step.step_id);
    const auto targets = reach_targets(static_cast<unsigned>(who.size()), opt.check == "full" ? 6 : 3, seed);
    const int timeout = 1500;
    std::map<unsigned, Kv> cmds;
    for (std::size_t i = 0; i < who.size(); ++i) {
        Kv kv{{"n", std::to_string(targets[i].size())}, {"timeout_ms", std::to_string(timeout)}};
        for (std::size_t k = 0; k < targets[i].size(); ++k) {
            const auto& peer = nodes[who[targets[i][k]]].card;
            const auto p = "t." + std::to_string(k) + ".";
            kv[p + "rank"] = std::to_string(peer.node_rank);
            kv[p + "addr"] = peer.data_addr;
            kv[p + "port"] = std::to_string(peer.data_port);
        }
        cmds[who[i]] = std::move(kv);
    }
    std::map<unsigned, Kv> ans;
    if (!exchange("reach", cmds, kReach, kReachResult, after_ms(timeout + 2500), ans)) {
        sr.status = "aborted";
    }
    std::map<unsigned, std::pair<unsigned, unsigned>> in, out;  // node -> (probes, failures)
    for (std::size_t i = 0; i < who.size(); ++i) {
        auto it = ans.find(who[i]);
        if (it == ans.end()) continue;
        for (std::size_t k = 0; k < targets[i].size(); ++k) {
            const unsigned to = who[targets[i][k]];
            const auto p = "r." + std::to_string(k) + ".";
            LinkResult l;
            l.from = who[i];
            l.to = to;
            l.stage = "reach";
            try {
                l.ok = kv_str(it->second, p + "ok") == "1";
                l.ms = kv_f64(it->second, p + "ms");
                l.error = kv_str(it->second, p + "error");
            } catch (const Error& e) {
                l.ok = false;
                l.error = e.what();
            }
            if (!l.ok) l.ms.reset();
            out[l.from].first++;
            in[l.to].first++;
            if (!l.ok) {
                out[l.from].second++;
                in[l.to].second++;
            }
            rep.links.push_back(l);
        }
    }
    unsigned bad = 0;
    for (unsigned node : who) {
        const auto [pi, fi] = in[node];
        const auto [po, fo] = out[node];
        if ((pi && fi == pi) || (po && fo == po)) {
            if (nodes[node].status != NodeStatus::unreachable) ++bad;
            nodes[node].status = NodeStatus::unreachable;
            nodes[node].reasons.push_back("TCP to " + nodes[node].card.data_addr + " failed from " + std::to_string(fi) + "/" +
                                          std::to_string(pi) + " peers, from it to " + std::to_string(fo) + "/" +
                                          std::to_string(po) + " peers");
        }
    }
    // Links that failed between nodes that are otherwise fine stay as link findings.
    for (auto& l : rep.links)
        if (l.stage == "reach" && !l.ok && nodes[l.from].status != NodeStatus::unreachable &&
            nodes[l.to].status != NodeStatus::unreachable)
            rep.findings.push_back("TCP " + nodes[l.from].card.node + " -> " + nodes[l.to].card.node + " failed: " + l.error);
    if (bad) sr.status = sr.status == "ok" ? "failed" : sr.status, sr.detail = std::to_string(bad) + " node(s) unreachable";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

std::vector<Measurement> Coordination::run_round(const Round& r, const std::vector<unsigned>& who, unsigned round_id,
                                                 long dur, std::size_t wbytes, const std::string& stage) {
    std::map<unsigned, Kv> cmds;
    const long warm = std::max(50L, dur / 5);
    for (const auto& f : r) {
        const unsigned a = who[f.from], b = who[f.to];
        auto& ca = cmds[a];
        auto& cb = cmds[b];
        ca["send"] = "1";
        ca["to_rank"] = std::to_string(b);
        ca["to_addr"] = nodes[b].card.data_addr;
        ca["to_port"] = std::to_string(nodes[b].card.data_port);
        cb["recv"] = "1";
        cb["from_rank"] = std::to_string(a);
    }
    for (auto& [node, kv] : cmds) {
        kv.emplace("send", "0");
        kv.emplace("recv", "0");
        kv["round"] = std::to_string(round_id);
        kv["duration_ms"] = std::to_string(dur);
        kv["warm_ms"] = std::to_string(warm);
        kv["write_bytes"] = std::to_string(wbytes);
    }
    std::map<unsigned, Kv> ans;
    exchange(stage, cmds, kBw, kBwResult, after_ms(dur + 6000), ans);
    std::vector<Measurement> ms;
    for (const auto& f : r) {
        const unsigned a = who[f.from], b = who[f.to];
        Measurement m;
        m.from = f.from;
        m.to = f.to;
        auto ib = ans.find(b);
        auto ia = ans.find(a);
        try {
            if (ib == ans.end()) throw Error("no answer from " + nodes[b].card.node);
            m.ok = kv_str(ib->second, "rx_ok") == "1";
            m.bps = kv_f64(ib->second, "rx_bps");
            m.error = kv_str(ib->second, "rx_error");
            if (ia != ans.end() && kv_str(ia->second, "tx_ok") != "1") {
                m.ok = false;
                m.error = "sender: " + kv_str(ia->second, "tx_error") + (m.error.empty() ? "" : "; receiver: " + m.error);
            }
        } catch (const Error& e) {
            m.ok = false;
            m.error = e.what();
        }
        ms.push_back(m);
        LinkResult l;
        l.from = a;
        l.to = b;
        l.stage = stage;
        l.ok = m.ok;
        if (m.ok) l.bps = m.bps;
        l.error = m.error;
        rep.links.push_back(l);
    }
    return ms;
}

void Coordination::stage_bandwidth() {
    const auto t0 = Clock::now();
    StageResult sr{"bandwidth", "ok", "", 0};
    std::vector<unsigned> who;
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (healthy(i)) who.push_back(i);
    if (who.size() < 2) {
        sr.status = "skipped";
        sr.detail = "fewer than 2 reachable nodes";
        rep.stages.push_back(sr);
        return;
    }
    const bool full = opt.check == "full";
    const long dur = opt.round_ms > 0 ? opt.round_ms : (full ? 1000 : 500);
    const unsigned n = static_cast<unsigned>(who.size());
    std::vector<Measurement> ring;
    std::vector<std::size_t> link_index;  // ring measurement -> rep.links index
    for (unsigned shift : ring_shifts(n, full)) {
        const auto ms = run_round(ring_round(n, shift), who, next_round++, dur, 1 << 20, "bandwidth");
        ring.insert(ring.end(), ms.begin(), ms.end());
        if (aborted) break;
    }
    if (full && !aborted) {  // a second size: many small writes
        const auto ms = run_round(ring_round(n, 1), who, next_round++, dur, 64 << 10, "bandwidth-64k");
        ring.insert(ring.end(), ms.begin(), ms.end());
    }
    if (aborted) {  // a task is gone: its node is named, the others' figures are incomplete
        sr.status = "aborted";
        sr.detail = "a task exited during the round";
        sr.seconds = sys::seconds_since(t0);
        rep.stages.push_back(sr);
        return;
    }
    std::optional<double> expect;
    if (opt.expect_gbps) expect = *opt.expect_gbps * 1e9 / 8;
    auto a = analyse_rounds(n, ring, opt.slow_ratio, expect);
    rep.expected_bps = a.expected_bps;
    // Confirm suspects one good peer each; a suspect whose only slow links are
    // with an already confirmed slow node is explained by it and not tested.
    std::vector<Measurement> confirm;
    std::set<unsigned> slow_confirmed;
    std::vector<unsigned> good = a.good;
    for (unsigned s : a.suspects) {
        if (aborted || ms_left(overall) < dur + 1500) break;
        bool explained = true;
        for (std::size_t k = 0; k < ring.size(); ++k)
            if (a.slow[k] && (ring[k].from == s || ring[k].to == s)) {
                const unsigned other = ring[k].from == s ? ring[k].to : ring[k].from;
                if (!slow_confirmed.count(other)) explained = false;
            }
        if (explained && !slow_confirmed.empty()) continue;
        if (good.empty()) break;
        const unsigned g = good.front();
        const auto ms = run_round(Round{{s, g}, {g, s}}, who, next_round++, dur, 1 << 20, "confirm");
        confirm.insert(confirm.end(), ms.begin(), ms.end());
        bool bad = false;
        for (const auto& m : ms)
            if (!m.ok || m.bps < opt.slow_ratio * a.expected_bps) bad = true;
        if (bad) slow_confirmed.insert(s);
        else good.push_back(s);
    }
    const auto decided = decide_nodes(n, ring, a, confirm, opt.slow_ratio);
    unsigned slow = 0;
    for (unsigned i = 0; i < n; ++i) {
        auto& ns = nodes[who[i]];
        if (decided[i].tx_bps) rep.nodes[who[i]].tx_bps = decided[i].tx_bps;
        if (decided[i].rx_bps) rep.nodes[who[i]].rx_bps = decided[i].rx_bps;
        if (decided[i].slow && (ns.status == NodeStatus::ok || ns.status == NodeStatus::mismatch)) {
            ns.status = NodeStatus::slow;
            ns.reasons.push_back(decided[i].reason);
            ++slow;
        }
    }
    // A slow link whose ends were both fine against other peers is measured
    // again on its own: a link slow twice is a finding, once is noise (on a
    // busy host, concurrent streams do not share the CPU fairly).
    unsigned transient = 0;
    for (std::size_t k = 0; k < ring.size(); ++k) {
        if (!a.slow[k] || decided[ring[k].from].slow || decided[ring[k].to].slow) continue;
        const auto& m = ring[k];
        if (!aborted && ms_left(overall) > dur + 1500) {
            const auto again = run_round(Round{{m.from, m.to}}, who, next_round++, dur, 1 << 20, "retest");
            if (!again.empty() && again[0].ok && again[0].bps >= opt.slow_ratio * a.expected_bps) {
                ++transient;
                continue;
            }
        }
        rep.findings.push_back("link " + nodes[who[m.from]].card.node + " -> " + nodes[who[m.to]].card.node +
                               (m.ok ? " slow: " + fmt_gbps(m.bps) : " failed: " + m.error) +
                               " (both ends fine against other peers)");
    }
    if (aborted) sr.status = "aborted";
    else if (slow) sr.status = "failed", sr.detail = std::to_string(slow) + " slow node(s)";
    sr.detail += (sr.detail.empty() ? "" : "; ") + std::to_string(ring.size()) + " links in " +
                 std::to_string(ring_shifts(n, full).size() + (full ? 1 : 0)) + " ring round(s), " +
                 std::to_string(confirm.size()) + " confirmation link(s), expected " + fmt_gbps(a.expected_bps);
    if (transient) sr.detail += "; " + std::to_string(transient) + " slow link(s) fine when measured again";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

// cuda, nccl (this node's GPUs) and verbs on every healthy node at once; a
// node whose stage failed is faulty. A stage skipped everywhere keeps the
// common reason ("no GPUs"): skipping is not a failure unless required.
void Coordination::stage_local() {
    std::map<unsigned, Kv> cmds, answers;
    const long left = ms_left(overall);
    const long per_stage = std::max<long>(1000, left / 4);
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (healthy(i))
            cmds[i] = Kv{{"full", opt.check == "full" ? "1" : "0"},
                         {"timeout_ms", std::to_string(per_stage)},
                         {"nccl_lib", opt.nccl_lib}};
    if (cmds.empty()) return;
    if (!exchange("gpu/rdma", cmds, kLocal, kLocalResult, after_ms(3 * per_stage + 2000), answers)) return;
    std::map<std::string, StageResult> merged;  // by stage name, in first-seen order below
    std::vector<std::string> order;
    std::map<std::string, std::set<std::string>> skip_reasons;
    for (const auto& [node, kv] : answers) {
        try {
            const auto n = std::min<std::uint64_t>(kv_u64(kv, "n"), 16);
            for (std::uint64_t i = 0; i < n; ++i) {
                const auto p = "s." + std::to_string(i) + ".";
                const std::string name = kv_str(kv, p + "name"), status = kv_str(kv, p + "status"),
                                  detail = kv_str(kv, p + "detail");
                const double secs = std::stod(kv_str(kv, p + "seconds"));
                if (!merged.count(name)) {
                    merged[name] = {name, "skipped", "", 0};
                    order.push_back(name);
                }
                auto& m = merged[name];
                m.seconds = std::max(m.seconds, secs);
                auto& ns = nodes[node];
                if (status == "failed" || status == "aborted") {
                    m.status = "failed";
                    m.detail += (m.detail.empty() ? "" : "; ") + ns.card.node + ": " + detail;
                    if (ns.status == NodeStatus::ok || ns.status == NodeStatus::mismatch) ns.status = NodeStatus::faulty;
                    ns.reasons.push_back(name + " " + status + ": " + detail);
                    const auto nf = std::min<std::uint64_t>(kv_u64(kv, p + "findings"), 64);
                    for (std::uint64_t j = 0; j < nf; ++j)
                        rep.findings.push_back(ns.card.node + ": " + name + ": " + kv_str(kv, p + "f." + std::to_string(j)));
                } else if (status == "ok") {
                    if (m.status == "skipped") m.status = "ok";
                } else {
                    skip_reasons[name].insert(detail);
                }
            }
        } catch (const std::exception& e) {
            nodes[node].reasons.push_back(std::string("bad GPU/RDMA stage answer: ") + e.what());
            if (nodes[node].status == NodeStatus::ok) nodes[node].status = NodeStatus::faulty;
        }
    }
    for (const auto& name : order) {
        auto& m = merged[name];
        if (m.status == "skipped" || (m.status == "ok" && m.detail.empty())) {
            std::string why;
            for (const auto& r : skip_reasons[name]) why += (why.empty() ? "" : "; ") + r;
            if (m.status == "skipped") m.detail = why;
            else if (!why.empty()) m.detail = "skipped on some nodes: " + why;
        }
        rep.stages.push_back(m);
    }
}

Report Coordination::run() {
    const auto t0 = Clock::now();
    rep.job_id = step.job_id;
    rep.step_id = step.step_id;
    rep.mode = opt.check;
    rep.bootstrap = boot.pmix ? "pmix" : "tcp";
    rep.slow_ratio = opt.slow_ratio;
    nodes.resize(step.nnodes);
    // Rendezvous: every task over TCP, or (PMIx: fence #1 proved every task
    // alive) only each node's speaker. The join timeout counts from the start.
    auto tj = Clock::now();
    const Deadline join_by = std::min(overall, boot.start + std::chrono::milliseconds(static_cast<long>(opt.join_timeout_s * 1000)));
    coord.gather(boot.pmix ? step.nnodes : step.ntasks, join_by);
    StageResult join{"rendezvous", "ok", "", 0};
    auto& ms = coord.members();
    if (boot.pmix)
        for (unsigned i = 0; i < nodes.size(); ++i)
            nodes[i].tasks_seen = i < step.tasks_per_node.size() ? step.tasks_per_node[i] : 1;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        auto& m = ms[i];
        if (m.node_rank >= nodes.size()) continue;
        if (!boot.pmix) nodes[m.node_rank].tasks_seen++;
        if (m.speaker && nodes[m.node_rank].member < 0) {
            try {
                nodes[m.node_rank].card = card_from_kv(m.hello);
                nodes[m.node_rank].member = static_cast<int>(i);
            } catch (const Error& e) {
                nodes[m.node_rank].reasons.push_back(std::string("bad card: ") + e.what());
            }
        }
    }
    unsigned missing = 0;
    for (unsigned i = 0; i < nodes.size(); ++i) {
        auto& n = nodes[i];
        n.card.node_rank = i;
        if (n.card.node.empty()) n.card.node = i < step.nodes.size() ? step.nodes[i] : "node#" + std::to_string(i);
        if (n.card.data_addr.empty() && i < step.node_addrs.size()) n.card.data_addr = step.node_addrs[i];
        const unsigned want = i < step.tasks_per_node.size() ? step.tasks_per_node[i] : 1;
        if (n.member < 0 && boot.pmix) {
            n.status = NodeStatus::missing;
            n.reasons.push_back("its tasks passed the PMIx fence but its first task never checked in over TCP within " +
                                std::to_string(static_cast<int>(opt.join_timeout_s)) + " s");
            ++missing;
        } else if (n.member < 0) {
            n.status = NodeStatus::missing;
            n.reasons.push_back("never checked in (" + std::to_string(n.tasks_seen) + "/" + std::to_string(want) +
                                " tasks) within " + std::to_string(static_cast<int>(opt.join_timeout_s)) + " s");
            ++missing;
        } else if (n.tasks_seen < want) {
            n.status = NodeStatus::missing;
            n.reasons.push_back(std::to_string(want - n.tasks_seen) + " of its " + std::to_string(want) +
                                " tasks never checked in");
            ++missing;
        }
    }
    join.seconds = sys::seconds_since(tj) + boot.fence_s;
    if (boot.pmix) {
        char f[32];
        std::snprintf(f, sizeof f, "%.3f", boot.fence_s);
        join.detail = std::to_string(step.ntasks) + "/" + std::to_string(step.ntasks) + " tasks in the PMIx fence (" + f +
                      " s), " + std::to_string(ms.size()) + "/" + std::to_string(step.nnodes) + " nodes over TCP";
    } else {
        join.detail = std::to_string(ms.size()) + "/" + std::to_string(step.ntasks) + " tasks";
        if (!boot.note.empty()) join.detail += "; not PMIx: " + boot.note;
    }
    if (coord.rejected()) join.detail += ", " + std::to_string(coord.rejected()) + " connection(s) rejected";
    if (missing) join.status = "failed";
    rep.stages.push_back(join);
    for (auto& m : ms) coord.send(m, kWelcome, {}, after_ms(1000));

    // Cards.
    {
        StageResult cs{"cards", "ok", "", 0};
        std::vector<Card> cards;
        for (auto& n : nodes)
            if (n.member >= 0) cards.push_back(n.card);
        for (const auto& mm : compare_cards(cards)) {
            auto& n = nodes[mm.node_rank];
            rep.findings.push_back(n.card.node + ": " + mm.what + " is " + mm.value + ", the others have " + mm.expected);
            if (n.status == NodeStatus::ok) n.status = NodeStatus::mismatch;
            n.reasons.push_back(mm.what + " " + mm.value + " (others " + mm.expected + ")");
            cs.status = "failed";
        }
        for (auto& n : nodes) {
            if (n.member < 0) continue;
            const Nic* nic = find_nic(n.card, n.card.data_iface);
            std::string why;
            if (!nic) why = "data interface " + n.card.data_iface + " does not exist";
            else if (nic->state != "up" && nic->state != "unknown") why = "data interface " + nic->name + " is " + nic->state;
            else if (std::find(nic->addrs.begin(), nic->addrs.end(), n.card.data_addr) == nic->addrs.end())
                why = "data interface " + nic->name + " lacks address " + n.card.data_addr;
            if (!why.empty()) {
                n.status = NodeStatus::unreachable;
                n.reasons.push_back(why);
                cs.status = "failed";
            }
        }
        rep.stages.push_back(cs);
    }
    // Drop-outs between check-in and now.
    for (auto& e : coord.poll(after_ms(0)))
        if (e.lost) fail_lost(e.member, "the rendezvous");

    rep.nodes.resize(nodes.size());
    if (opt.check != "none" && !aborted) stage_reach();
    if (opt.check != "none" && !aborted) stage_bandwidth();
    if (opt.check != "none" && !aborted) stage_local();
    if (aborted) rep.stages.push_back({"abort", "aborted", "a task exited during the check", 0});
    if (ms_left(overall) == 0) rep.stages.push_back({"deadline", "aborted", "the check's deadline passed", 0});
    for (unsigned i = 0; i < nodes.size(); ++i) {
        auto& r = rep.nodes[i];
        r.name = nodes[i].card.node;
        r.addr = nodes[i].card.data_addr;
        r.status = nodes[i].status;
        r.reasons = nodes[i].reasons;
        if (const Nic* nic = find_nic(nodes[i].card, nodes[i].card.data_iface)) r.nic_mbps = nic->rate_mbps;
    }
    rep.seconds = sys::seconds_since(t0);
    return rep;
}

}  // namespace

StepFacts step_facts_from_env(bool insecure) {
    EnvMap env;
    for (const auto& name : step_env_names())
        if (const char* v = std::getenv(name.c_str())) env[name] = v;
    const StepView view = make_step_view(facts_from_env(env));
    StepFacts s;
    s.nodes = view.nodes;
    s.nnodes = static_cast<unsigned>(view.nodes.size());
    s.node_rank = view.node_index;
    s.tasks_per_node = view.tasks_per_node;
    s.ntasks = view.total_tasks;
    if (!view.rank || !view.local_rank)
        throw Error("SLURM_PROCID/SLURM_LOCALID are not set: run gangway run/check as a step's task, e.g. srun gangway check");
    s.rank = *view.rank;
    s.local = *view.local_rank;
    s.job_id = std::to_string(view.job_id);
    s.step_id = std::to_string(view.step_id);
    s.primary_addr = env_or("PRIMARY_ADDR", env_or("MASTER_ADDR"));
    const auto port = env_or("PRIMARY_PORT", env_or("MASTER_PORT"));
    s.node_addr = env_or("NODE_ADDR");
    if (s.primary_addr.empty() || port.empty() || s.node_addr.empty())
        throw Error("PRIMARY_ADDR, PRIMARY_PORT and NODE_ADDR are not set: the gangway plugin sets them; check that "
                    "plugstack.conf loads gangway.so and the step is not --gangway=off");
    try {
        const unsigned long p = std::stoul(port);
        if (p == 0 || p + 2 > 65535) throw Error("");
        s.port = static_cast<unsigned>(p);
    } catch (...) {
        throw Error("PRIMARY_PORT \"" + port + "\" is not a port number below 65534");
    }
    s.node_addrs = split(env_or("NODE_ADDRS"), ',');
    std::string iface = env_or("NCCL_SOCKET_IFNAME", env_or("GANGWAY_IFACE"));
    if (!iface.empty() && iface[0] == '=') iface.erase(0, 1);
    if (auto c = iface.find(','); c != std::string::npos) iface.resize(c);
    if (iface.empty() || iface[0] == '^') {
        iface.clear();
        for (const auto& nic : sys::live_net_nics())
            for (const auto& a : nic.addrs)
                if (a == s.node_addr) iface = nic.name;
    }
    s.data_iface = iface;
    if (insecure) {
        s.key = insecure_key();
    } else {
        const auto secret = env_or("GANGWAY_SECRET");
        if (secret.empty())
            throw Error("GANGWAY_SECRET is not set: the gangway plugin creates it in srun for the step; check that "
                        "plugstack.conf loads a gangway.so that supports the preflight (or use --insecure for a test "
                        "outside SLURM)");
        s.key = key_from_secret(secret);
    }
    return s;
}

namespace {

double seconds_left(Deadline d) { return std::max(0.0, std::chrono::duration<double>(d - Clock::now()).count()); }

// The verdict message (TCP kVerdict or PMIx fence #2) as a task's outcome.
void take_verdict(const Kv& v, Outcome& out) {
    try {
        out.exit_code = static_cast<int>(kv_u64(v, "exit_code"));
        const auto& vs = kv_str(v, "verdict");
        out.verdict = vs == "ok" ? Verdict::ok : vs == "degraded" ? Verdict::degraded : Verdict::unreachable;
        out.bad_nodes = split(kv_str(v, "bad"), ',');
        out.message = kv_str(v, "summary");
    } catch (const Error& e) {
        out.verdict = Verdict::unreachable;
        out.exit_code = kExitCannotCheck;
        out.message = e.what();
    }
}

}  // namespace

Outcome run_preflight(const PreflightOptions& opt, const StepFacts& s) {
    Outcome out;
    const auto start = Clock::now();
    const Deadline overall = start + std::chrono::milliseconds(static_cast<long>(opt.timeout_s * 1000));
    const bool coordinator = s.node_rank == 0 && s.local == 0;
    const bool speaker = s.local == 0;
    out.coordinator = coordinator;

    // The bootstrap: PMIx when the step has it (and --bootstrap allows), else TCP.
    BootInfo boot;
    boot.start = start;
    BootstrapChoice choice;
    try {
        choice = choose_bootstrap(parse_bootstrap_mode(opt.bootstrap), pmix_built(), pmix_in_env());
    } catch (const Error& e) {
        choice.error = e.what();
    }
    if (!choice.error.empty()) {
        out.exit_code = kExitCannotCheck;
        out.message = choice.error;
        return out;
    }

    // The speaker's listener for probes and bandwidth streams: PORT+2 of the
    // step's block on its data address, any free port when that is taken.
    auto data = std::make_shared<DataState>();
    data->key = s.key;
    data->self = s.node_rank;
    unsigned data_port = 0;
    std::thread data_thread;
    if (speaker && opt.check != "none") {
        sys::Fd l;
        try {
            l = sys::tcp_listen(s.node_addr, s.port + 2, 256);
        } catch (const Error&) {
            try {
                l = sys::tcp_listen(s.node_addr, 0, 256);
            } catch (const Error& e) {
                // No data address to listen on: check in anyway, the cards say why.
                l = sys::tcp_listen("", 0, 256);
            }
        }
        data_port = sys::local_port(l.get());
        data_thread = std::thread(data_server, data, std::move(l));
    }
    std::optional<PmixSession> px;
    std::unique_ptr<NodeExitBarrier> exit_barrier;
    auto finish = [&] {
        data->stop = true;
        if (data_thread.joinable()) data_thread.join();
        if (px) pmix_finalize(*px, 2);
    };

    // The coordinator listens before fence #1, so that tasks falling back to
    // TCP queue up in the backlog until it gathers.
    sys::Fd listener;
    if (coordinator) {
        // Raise the descriptor limit for thousands of tasks.
        rlimit rl{};
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            ::setrlimit(RLIMIT_NOFILE, &rl);
        }
        try {
            listener = sys::tcp_listen("", s.port + 1, 8192);
        } catch (const Error& e) {
            finish();
            out.exit_code = kExitCannotCheck;
            out.message = std::string("the rendezvous cannot start: ") + e.what() +
                          " (another program holds PRIMARY_PORT+1 on node 0)";
            return out;
        }
    }

    // PMIx fence #1: every task of the step is alive. Half the join timeout, so
    // that a missing task leaves the TCP rendezvous time to name its node.
    if (choice.try_pmix) {
        const Deadline f1 = std::min(overall, start + std::chrono::milliseconds(static_cast<long>(
                                                          fence1_timeout_s(opt.join_timeout_s) * 1000)));
        std::string err;
        px = pmix_init(std::max(0.5, seconds_left(f1)), err);
        if (px) {
            err = pmix_step_mismatch(px->rank, px->size, s.rank, s.ntasks);
            const auto tf = Clock::now();
            if (err.empty() && pmix_fence(*px, nullptr, false, std::max(0.2, seconds_left(f1)), err)) {
                boot.pmix = true;
                boot.fence_s = sys::seconds_since(tf);
            }
        } else if (parse_bootstrap_mode(opt.bootstrap) == BootstrapMode::pmix) {
            finish();
            out.exit_code = kExitCannotCheck;
            out.message = "--bootstrap=pmix: " + err;
            return out;
        }
        if (!boot.pmix) boot.note = err;
        if (boot.pmix) {
            const unsigned here = s.node_rank < s.tasks_per_node.size() ? s.tasks_per_node[s.node_rank] : 1;
            exit_barrier = std::make_unique<NodeExitBarrier>(
                "gangway." + std::to_string(::getuid()) + "." + s.job_id + "." + s.step_id + "." + std::to_string(s.node_rank),
                speaker, here);
        }
    }
    // PMIx fence #2 hands rank 0's verdict to every task: until the check's
    // deadline and the margin the TCP verdict has too.
    auto fence2 = [&](const Kv* mine, std::string& err) {
        return pmix_fence(*px, mine, true, seconds_left(overall) + 5, err);
    };

    if (!coordinator) {
        std::string err;
        std::optional<Kv> v;
        if (!(boot.pmix && !speaker)) v = client_session(opt, s, speaker, overall, err, data, data_port);
        if (boot.pmix) {  // every task takes part in fence #2; a speaker that lost node 0 may still learn the verdict there
            std::string ferr;
            if (fence2(nullptr, ferr)) {
                if (!v) {
                    auto pv = pmix_get(*px, 0, std::max(1.0, seconds_left(overall) + 5), ferr);
                    if (pv) v = std::move(pv);
                    else if (!speaker) err = "the verdict did not arrive over PMIx (" + ferr + ")";
                }
            } else if (!v) {
                err = speaker ? err + "; " + ferr : "the verdict did not arrive over PMIx (" + ferr + "): a task of the step exited or hung";
            }
            // Finalize at once, all tasks close together: a task's command that
            // gangway run starts fences anew, and a fence begun while a task of
            // the same node is still in its old PMIx session fails.
            pmix_finalize(*px, 2);
            exit_barrier->arrive(2);
        }
        finish();
        if (!v) {
            out.verdict = Verdict::unreachable;
            out.exit_code = kExitUnreachable;
            out.message = err;
            return out;
        }
        take_verdict(*v, out);
        return out;
    }

    sys::Coordinator coord(s.key, std::move(listener));
    // This node's speaker talks to the coordinator like every other.
    std::string self_err;
    std::thread self_speaker([&] { client_session(opt, s, true, overall, self_err, data, data_port); });
    Coordination c(opt, s, coord, overall, boot);
    Report rep = c.run();
    Verdict v = verdict(rep);
    out.verdict = v;
    out.exit_code = exit_code(v);
    out.bad_nodes = bad_nodes(rep);
    std::string bad;
    for (const auto& b : out.bad_nodes) bad += (bad.empty() ? "" : ",") + b;
    out.message = std::string("preflight ") + to_string(v) + (bad.empty() ? "" : ": " + bad);
    Kv vk{{"verdict", to_string(v)}, {"exit_code", std::to_string(out.exit_code)}, {"bad", bad}, {"summary", out.message}};
    for (auto& m : coord.members()) coord.send(m, kVerdict, vk, after_ms(1000));
    coord.close_listener();
    self_speaker.join();
    if (boot.pmix) {
        const auto t2 = Clock::now();
        std::string ferr;
        if (!fence2(&vk, ferr)) {
            // A task that passed fence #1 is gone: it never got the verdict.
            rep.stages.push_back({"verdict", "failed", "the PMIx fence handing the verdict to every task failed: " + ferr,
                                  sys::seconds_since(t2)});
            rep.findings.push_back("a task exited or hung before the verdict reached it (" + ferr + ")");
            out.verdict = Verdict::unreachable;
            out.exit_code = kExitUnreachable;
            out.message += "; " + ferr;
        }
        pmix_finalize(*px, 2);  // at once, as the other tasks do
        exit_barrier->arrive(2);
    }
    finish();
    out.report = std::move(rep);
    return out;
}

}  // namespace gangway::cli
