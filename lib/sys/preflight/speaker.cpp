// The speaker: each node's first task. It checks in with a card of its node,
// then runs what the coordinator asks (reach probes, bandwidth rounds, the
// node's GPU and RDMA stages) and waits for the verdict.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>

#include "../../base/error.hpp"
#include "../../preflight/card.hpp"
#include "../../preflight/protocol.hpp"
#include "../node/addrs.hpp"
#include "../devices/node_card.hpp"
#include "../node/sysfs.hpp"
#include "config.h"
#include "internal.hpp"

namespace gangway::sys::pf {
using namespace preflight;

namespace {

Card my_card(const StepFacts& s, unsigned data_port) {
    Card c;
    c.node_rank = s.node_rank;
    c.node = s.node_rank < s.nodes.size() ? s.nodes[s.node_rank] : sys::env_or("SLURMD_NODENAME");
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    c.hostname = host;
    c.data_iface = s.data_iface;
    c.data_addr = s.node_addr;
    c.data_port = data_port;
    auto nics = sys::live_net_nics();
    const auto root = sys::sysfs_root();
    for (auto& n : sys::read_nics(root))
        if (n.kind == "ib") nics.push_back(n);
    c.nics = card_nics(std::move(nics), c.data_iface);
    c.gpus = sys::count_gpus(root);
    c.versions = sys::read_versions("/");
    c.versions["gangway"] = PACKAGE_VERSION;
    // The rank order this node computed (rank_order=topology): compared across
    // the cards like a version, so that nodes whose topology files differ are
    // named instead of starting with two ranks of one number.
    if (const auto order = sys::env_or("GANGWAY_NODE_ORDER"); !order.empty()) c.versions["rank_order"] = order;
    return c;
}

// kReach: connect probes to the peers named, all at once.
Kv probe_peers(const Kv& cmd, const StepFacts& s) {
    const auto n = kv_u64(cmd, "n");
    const int timeout = static_cast<int>(kv_u64(cmd, "timeout_ms"));
    std::vector<ProbeResult> res(n);
    std::vector<std::thread> th;
    th.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n, 4096)));  // no allocation once threads run
    for (std::uint64_t i = 0; i < n && i < 4096; ++i) {
        const auto p = "t." + std::to_string(i) + ".";
        const auto to = static_cast<unsigned>(kv_u64(cmd, p + "rank"));
        const auto addr = kv_str(cmd, p + "addr");
        const auto port = static_cast<unsigned>(kv_u64(cmd, p + "port"));
        // Out of memory inside a thread would end the task (std::terminate): a probe that fails.
        auto one = [&, i, to, addr, port] {
            try {
                res[i] = probe(s.key, s.node_rank, to, addr, port, timeout);
            } catch (const std::exception& e) {
                res[i].error = e.what();
            }
        };
        // A thread that cannot start (a node out of threads or memory) probes
        // here instead: a throw would destroy the threads already running,
        // which ends the process (std::terminate; seen in preflight_hostile.sh).
        try {
            th.emplace_back(one);
        } catch (const std::exception&) {  // std::system_error, or std::bad_alloc for the thread's state
            one();
        }
    }
    for (auto& t : th) t.join();
    Kv out{{"n", std::to_string(n)}};
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto p = "r." + std::to_string(i) + ".";
        out[p + "ok"] = res[i].ok ? "1" : "0";
        out[p + "ms"] = std::to_string(res[i].ms);
        out[p + "error"] = res[i].error;
    }
    return out;
}

// kBw: this node's part of one bandwidth round: stream to its peer, and the
// data listener's record of the stream it received.
Kv bandwidth_round(const Kv& cmd, const StepFacts& s, DataState& data) {
    const auto round = static_cast<unsigned>(kv_u64(cmd, "round"));
    const long dur = static_cast<long>(kv_u64(cmd, "duration_ms"));
    const long warm = static_cast<long>(kv_u64(cmd, "warm_ms"));
    const auto wbytes = static_cast<std::size_t>(std::clamp<std::uint64_t>(kv_u64(cmd, "write_bytes"), 4096, 16 << 20));
    TxResult tx;
    std::thread sender;
    const bool sends = kv_str(cmd, "send") == "1", recvs = kv_str(cmd, "recv") == "1";
    if (sends) {
        const auto to = static_cast<unsigned>(kv_u64(cmd, "to_rank"));
        const auto addr = kv_str(cmd, "to_addr");
        const auto port = static_cast<unsigned>(kv_u64(cmd, "to_port"));
        try {
            sender = std::thread([&, to, addr, port] {
                try {
                    tx = stream_to(s.key, s.node_rank, to, addr, port, round, dur, warm, wbytes);
                } catch (const std::exception& e) {  // out of memory: this stream is lost, not the task
                    tx.error = std::string("the stream could not be sent: ") + e.what();
                }
            });
        } catch (const std::exception& e) {  // this round's stream is lost, not the process
            tx.error = std::string("no thread to send: ") + e.what();
        }
    }
    RxRecord rx;
    if (recvs) {
        const auto from = static_cast<unsigned>(kv_u64(cmd, "from_rank"));
        std::unique_lock<std::mutex> l(data.mu);
        const bool arrived = data.cv.wait_until(l, after_ms(dur + 4500), [&] { return data.rx.count({round, from}); });
        if (arrived) rx = data.rx[{round, from}];
        else rx.error = "no stream arrived from the peer";
    }
    if (sender.joinable()) sender.join();
    return {{"round", std::to_string(round)},
            {"rx_ok", rx.ok ? "1" : "0"},
            {"rx_bps", std::to_string(rx.bps)},
            {"rx_error", rx.error},
            {"tx_ok", tx.ok ? "1" : "0"},
            {"tx_error", tx.error}};
}

}  // namespace

Result<Kv> client_session(const PreflightOptions& opt, const StepFacts& s, bool speaker, Deadline verdict_by,
                          std::shared_ptr<DataState> data, unsigned data_port) {
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
    const Deadline join_by = std::min(verdict_by, after_ms(static_cast<long>(opt.join_timeout_s * 1000)));
    const std::string node0 = s.nodes.empty() ? std::string("node 0") : s.nodes[0];
    auto c = sys::join(addrs, s.port + 1, s.key, hello, join_by);
    if (!c) return Failure{"could not reach the coordinator on " + node0 + " (" + c.error() + ")"};
    // Until the welcome says node 0's deadline; a margin after it for the verdict.
    Deadline wait_until = verdict_by + std::chrono::seconds(5);
    GpuSpeaker gpus;
    for (;;) {
        auto got = c->recv(wait_until);
        if (!got) return Failure{"lost the coordinator on " + node0 + " (" + got.error() + ")"};
        const Kv& cmd = got->kv;
        if (got->type == kVerdict) return std::move(got->kv);
        if (got->type == kWelcome) {
            if (auto it = cmd.find("deadline_ms"); it != cmd.end())
                wait_until = after_ms(static_cast<long>(kv_u64(cmd, "deadline_ms"))) + std::chrono::seconds(5);
            continue;
        }
        if (!speaker) continue;
        std::uint8_t answer_type = 0;
        Kv answer;
        try {
            switch (got->type) {
                case kReach: answer_type = kReachResult, answer = probe_peers(cmd, s); break;
                case kLocal: answer_type = kLocalResult, answer = gpus.local_stages(cmd); break;
                case kNccl: answer_type = kNcclResult, answer = gpus.nccl(cmd); break;
                case kRdma: answer_type = kRdmaResult, answer = gpus.rdma(cmd); break;
                case kBw: answer_type = kBwResult, answer = bandwidth_round(cmd, s, *data); break;
                default: continue;
            }
        } catch (const Error& e) {
            return Failure{std::string("bad command from the coordinator: ") + e.what()};
        }
        if (auto sent = c->send(answer_type, answer, wait_until); !sent) return Failure{sent.error()};
    }
}

}  // namespace gangway::sys::pf
