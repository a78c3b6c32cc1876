// The coordinator: node 0's first task. It gathers the step's tasks and their
// nodes' cards, runs the stages (reach, bandwidth, the GPU and RDMA stages),
// names the bad nodes and links, and writes the report.
#include <algorithm>
#include <cstdio>
#include <set>

#include "../lib/preflight/card.hpp"
#include "../lib/preflight/cards_check.hpp"
#include "../lib/preflight/join.hpp"
#include "../lib/preflight/localize.hpp"
#include "../lib/preflight/protocol.hpp"
#include "../lib/preflight/reach_check.hpp"
#include "../lib/preflight/schedule.hpp"
#include "../lib/preflight/stream_link.hpp"
#include "preflight_coordinator.hpp"

namespace gangway::cli::pf {
using namespace preflight;
using sys::after_ms;
using sys::Conn;
using sys::ms_left;

void Coordination::fail_lost(std::size_t mi, const std::string& stage) {
    auto& m = coord.members()[mi];
    if (m.node_rank < nodes.size()) mark_lost(nodes[m.node_rank], m.rank, stage, m.lost_reason);
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
    StageResult sr{"reach", StageStatus::ok, "", 0};
    if (who.size() < 2) {
        sr.status = StageStatus::skipped;
        sr.detail = "fewer than 2 nodes";
        rep.stages.push_back(sr);
        return;
    }
    std::uint64_t seed = std::hash<std::string>{}(step.job_id + "." + step.step_id);
    const auto targets = reach_targets(static_cast<unsigned>(who.size()), opt.check == CheckLevel::full ? 6 : 3, seed);
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
        sr.status = StageStatus::aborted;
    }
    std::vector<ReachNode> probed;
    for (std::size_t i = 0; i < who.size(); ++i) {
        const auto& n = nodes[who[i]];
        auto it = ans.find(who[i]);
        probed.push_back({who[i], n.card.node, n.card.data_addr, n.status == NodeStatus::unreachable, targets[i],
                          it == ans.end() ? nullptr : &it->second});
    }
    const auto judged = judge_reach(probed);
    rep.links.insert(rep.links.end(), judged.links.begin(), judged.links.end());
    for (const auto& [node, why] : judged.unreachable) {
        nodes[node].status = NodeStatus::unreachable;
        nodes[node].reasons.push_back(why);
    }
    rep.findings.insert(rep.findings.end(), judged.findings.begin(), judged.findings.end());
    const unsigned bad = judged.newly_unreachable;
    if (bad) sr.status = sr.status == StageStatus::ok ? StageStatus::failed : sr.status, sr.detail = std::to_string(bad) + " node(s) unreachable";
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
    const auto end = [&](unsigned node) {
        auto it = ans.find(node);
        return StreamEnd{nodes[node].card.node, it == ans.end() ? nullptr : &it->second};
    };
    for (const auto& f : r) {
        const unsigned a = who[f.from], b = who[f.to];
        ms.push_back(stream_link(f, end(a), end(b)));
        add_link(a, b, stage, ms.back());
    }
    return ms;
}

Deadline gpu_step_deadline(const PreflightOptions& opt, Clock::time_point start, Deadline overall) {
    if (!opt.timeout_default || opt.check == CheckLevel::none) return overall;
    return std::max(overall, start + std::chrono::milliseconds(static_cast<long>(kDefaultGpuTimeoutS * 1000)));
}

void Coordination::add_link(unsigned from, unsigned to, const std::string& stage, const Measurement& m) {
    LinkResult l;
    l.from = from;
    l.to = to;
    l.stage = stage;
    l.ok = m.ok;
    if (m.ok) l.bps = m.bps;
    l.error = m.error;
    rep.links.push_back(l);
}

void Coordination::stage_bandwidth() {
    const auto t0 = Clock::now();
    StageResult sr{"bandwidth", StageStatus::ok, "", 0};
    std::vector<unsigned> who;
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (healthy(i)) who.push_back(i);
    if (who.size() < 2) {
        sr.status = StageStatus::skipped;
        sr.detail = "fewer than 2 reachable nodes";
        rep.stages.push_back(sr);
        return;
    }
    const bool full = opt.check == CheckLevel::full;
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
        sr.status = StageStatus::aborted;
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
        if (explained_by(s, ring, a.slow, slow_confirmed)) continue;
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
                               (m.ok ? " slow: " + fmt_gbit(m.bps) : " failed: " + m.error) +
                               " (both ends fine against other peers)");
    }
    if (aborted) sr.status = StageStatus::aborted;
    else if (slow) sr.status = StageStatus::failed, sr.detail = std::to_string(slow) + " slow node(s)";
    sr.detail += (sr.detail.empty() ? "" : "; ") + std::to_string(ring.size()) + " links in " +
                 std::to_string(ring_shifts(n, full).size() + (full ? 1 : 0)) + " ring round(s), " +
                 std::to_string(confirm.size()) + " confirmation link(s), expected " + fmt_gbit(a.expected_bps);
    if (transient) sr.detail += "; " + std::to_string(transient) + " slow link(s) fine when measured again";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

Report Coordination::run() {
    const auto t0 = Clock::now();
    rep.job_id = step.job_id;
    rep.step_id = step.step_id;
    rep.mode = to_string(opt.check);
    rep.bootstrap = boot.pmix ? "pmix" : "tcp";
    rep.slow_ratio = opt.slow_ratio;
    // Rendezvous: every task over TCP, or (PMIx: fence #1 proved every task
    // alive) only each node's speaker. The join timeout counts from the start.
    auto tj = Clock::now();
    const Deadline join_by = std::min(overall, boot.start + std::chrono::milliseconds(static_cast<long>(opt.join_timeout_s * 1000)));
    coord.gather(boot.pmix ? step.nnodes : step.ntasks, join_by);
    const auto& ms = coord.members();
    const JoinShape shape{step.nnodes, step.ntasks, step.tasks_per_node, step.nodes, step.node_addrs, boot.pmix,
                          opt.join_timeout_s};
    std::vector<Arrival> arrivals;  // in the members' order: a node's member indexes both
    for (const auto& m : ms) arrivals.push_back({m.node_rank, m.speaker, m.hello});
    auto joined = account_join(shape, arrivals);
    StageResult join = join_stage(shape, joined, ms.size(), boot.fence_s, boot.note, coord.rejected());
    join.seconds = sys::seconds_since(tj) + boot.fence_s;
    rep.stages.push_back(join);
    // The cards say nothing of the deadline below: judged now, reported after the welcome.
    auto cards = check_cards(std::move(joined));
    nodes.resize(cards.nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) static_cast<JoinedNode&>(nodes[i]) = std::move(cards.nodes[i]);
    // The default deadline is the step's, not node 0's: the GPU one when any
    // node has GPUs. Every task learns it here and waits for the verdict as long.
    if (std::any_of(nodes.begin(), nodes.end(), [](const NodeState& n) { return n.member >= 0 && n.card.gpus > 0; }))
        overall = gpu_step_deadline(opt, boot.start, overall);
    rep.deadline_s = std::chrono::duration<double>(overall - boot.start).count();
    for (auto& m : coord.members()) coord.send(m, kWelcome, {{"deadline_ms", std::to_string(ms_left(overall))}}, after_ms(1000));

    rep.findings.insert(rep.findings.end(), cards.findings.begin(), cards.findings.end());
    rep.stages.push_back({"cards", cards.failed ? StageStatus::failed : StageStatus::ok, "", 0});
    // Drop-outs between check-in and now.
    for (auto& e : coord.poll(after_ms(0)))
        if (e.lost) fail_lost(e.member, "the rendezvous");

    rep.nodes.resize(nodes.size());
    if (opt.check != CheckLevel::none && !aborted) stage_reach();
    if (opt.check != CheckLevel::none && !aborted) stage_bandwidth();
    if (opt.check != CheckLevel::none && !aborted) stage_local();
    if (opt.check != CheckLevel::none && !aborted) stage_nccl_job();
    if (opt.check != CheckLevel::none && !aborted) stage_rdma();
    if (aborted) rep.stages.push_back({"abort", StageStatus::aborted, "a task exited during the check", 0});
    if (ms_left(overall) == 0) rep.stages.push_back({"deadline", StageStatus::aborted, "the check's deadline passed", 0});
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

Report coordinate(const PreflightOptions& opt, const StepFacts& step, sys::Coordinator& coord, Deadline overall,
                  const BootInfo& boot) {
    Coordination c(opt, step, coord, overall, boot);
    return c.run();
}

}  // namespace gangway::cli::pf
