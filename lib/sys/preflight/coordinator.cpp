// The coordinator: node 0's first task. It gathers the step's tasks and their
// nodes' cards, runs the stages (reach, bandwidth, the GPU and RDMA stages),
// names the bad nodes and links, and writes the report.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#include "../../base/error.hpp"
#include "../../env/rank_order.hpp"
#include "../../preflight/card.hpp"
#include "../../preflight/cards_check.hpp"
#include "../../preflight/confirm.hpp"
#include "../../preflight/join.hpp"
#include "../../preflight/link_retest.hpp"
#include "../../preflight/localize.hpp"
#include "../../preflight/protocol.hpp"
#include "../../preflight/reach_check.hpp"
#include "../../preflight/schedule.hpp"
#include "../../preflight/stream_link.hpp"
#include "coordinator.hpp"

namespace gangway::sys::pf {
using namespace preflight;

// Pairs measured at once when confirming: an eighth of the nodes, at least 8.
// Far fewer streams than the ring's one per node, so that a loaded host
// shares its CPU among them fairly; enough that even many suspects take a
// few rounds (a round is ~0.55 s in quick mode).
unsigned confirm_pairs(unsigned n) { return std::max(8u, n / 8); }
// A flow over a link the reach stage found dead: failed, without a stream.
constexpr const char* kNotStreamed = "not streamed: no TCP path (the reach stage's probes failed twice)";

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
    // Silence past the stage's own deadline names the node; silence cut short
    // by the check's deadline does not: the check ran out of time, not the node.
    std::vector<std::string> silent;
    for (const auto& [node, kv] : cmds)
        if (!answers.count(node)) {
            if (ms_left(overall) == 0) {
                silent.push_back(nodes[node].card.node);
                continue;
            }
            nodes[node].status = NodeStatus::unreachable;
            nodes[node].reasons.push_back("did not answer in stage " + stage + " before its deadline");
        }
    if (!silent.empty()) {
        rep.notes.push_back("stage " + stage + " was cut short by the check's deadline before " + std::to_string(silent.size()) +
                            " node(s) answered (" + gangway::join(silent, ", ") + "); not named");
        out_of_time = true;
        return false;
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
    // Probe commands: per stage position, the positions to probe.
    auto commands = [&](const std::vector<std::vector<unsigned>>& lists, int timeout) {
        std::map<unsigned, Kv> cmds;
        for (std::size_t i = 0; i < who.size(); ++i) {
            if (lists[i].empty()) continue;
            Kv kv{{"n", std::to_string(lists[i].size())}, {"timeout_ms", std::to_string(timeout)}};
            for (std::size_t k = 0; k < lists[i].size(); ++k) {
                const auto& peer = nodes[who[lists[i][k]]].card;
                const auto p = "t." + std::to_string(k) + ".";
                kv[p + "rank"] = std::to_string(peer.node_rank);
                kv[p + "addr"] = peer.data_addr;
                kv[p + "port"] = std::to_string(peer.data_port);
            }
            cmds[who[i]] = std::move(kv);
        }
        return cmds;
    };
    // The first pass's timeout allows for a loaded host; the second pass's
    // is longer still: a node is named only on failures seen in both.
    constexpr int kFirstMs = 2000, kRetryMs = 3500;
    std::map<unsigned, Kv> ans, again;
    if (!exchange("reach", commands(targets, kFirstMs), kReach, kReachResult, after_ms(kFirstMs + 2500), ans))
        sr.status = StageStatus::aborted;
    std::vector<ReachNode> probed;
    for (std::size_t i = 0; i < who.size(); ++i) {
        const auto& n = nodes[who[i]];
        auto it = ans.find(who[i]);
        probed.push_back({who[i], n.card.node, n.card.data_addr, n.status == NodeStatus::unreachable, targets[i],
                          it == ans.end() ? nullptr : &it->second, {}, nullptr});
    }
    const auto retry = retry_targets(probed);
    const bool any_retry = std::any_of(retry.begin(), retry.end(), [](const auto& v) { return !v.empty(); });
    if (any_retry && !aborted && ms_left(overall) > kRetryMs + 3000) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a pause: a burst of load may pass
        if (!exchange("reach", commands(retry, kRetryMs), kReach, kReachResult, after_ms(kRetryMs + 2500), again))
            sr.status = StageStatus::aborted;
        for (std::size_t i = 0; i < who.size(); ++i) {
            auto it = again.find(who[i]);
            if (it == again.end()) continue;
            probed[i].retry = retry[i];
            probed[i].retry_answer = &it->second;
            probed[i].unreachable = nodes[who[i]].status == NodeStatus::unreachable;
        }
    }
    const auto judged = judge_reach(probed);
    rep.links.insert(rep.links.end(), judged.links.begin(), judged.links.end());
    for (const auto& [node, why] : judged.unreachable) {
        nodes[node].status = NodeStatus::unreachable;
        nodes[node].reasons.push_back(why);
    }
    rep.findings.insert(rep.findings.end(), judged.findings.begin(), judged.findings.end());
    dead_links.insert(judged.dead.begin(), judged.dead.end());
    rep.notes.insert(rep.notes.end(), judged.notes.begin(), judged.notes.end());
    const unsigned bad = judged.newly_unreachable;
    if (bad) sr.status = sr.status == StageStatus::ok ? StageStatus::failed : sr.status, sr.detail = std::to_string(bad) + " node(s) unreachable";
    if (judged.recovered)
        sr.detail += (sr.detail.empty() ? "" : "; ") + std::to_string(judged.recovered) + " probe(s) failed once, fine when tried again";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

std::vector<Measurement> Coordination::run_round(const Round& r, const std::vector<unsigned>& who, unsigned round_id,
                                                 long dur, std::size_t wbytes, const std::string& stage) {
    std::map<unsigned, Kv> cmds;
    const long warm = std::max(50L, dur / 5);
    for (const auto& f : r) {
        if (dead(who[f.from], who[f.to])) continue;
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
    if (!cmds.empty()) exchange(stage, cmds, kBw, kBwResult, after_ms(dur + 6000), ans);
    std::vector<Measurement> ms;
    const auto end = [&](unsigned node) {
        auto it = ans.find(node);
        return StreamEnd{nodes[node].card.node, it == ans.end() ? nullptr : &it->second};
    };
    for (const auto& f : r) {
        const unsigned a = who[f.from], b = who[f.to];
        ms.push_back(dead(a, b) ? Measurement{f.from, f.to, 0, false, std::string(kNotStreamed)} : stream_link(f, end(a), end(b)));
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
    // The ring follows the order the tasks were given (rank_order=topology,
    // every node agreeing): its neighbours are the job's ring neighbours.
    if (!ring_pos.empty())
        std::stable_sort(who.begin(), who.end(), [&](unsigned a, unsigned b) { return ring_pos[a] < ring_pos[b]; });
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
    const bool some_good = std::find(a.slow.begin(), a.slow.end(), false) != a.slow.end();
    if (!some_good)  // nothing to compare against: no node can be told apart
        rep.findings.push_back("bandwidth: every link is below " + fmt_gbit(opt.slow_ratio * a.expected_bps) +
                               ": the network, a site-wide setting or the expected figure (--expect-gbps) rather than one node");
    // Confirm before accusing: suspects measured again, a few disjoint pairs
    // at a time (lib/preflight/confirm.hpp says when one is named).
    SuspectConfirmation conf(n, ring, a, opt.slow_ratio);
    unsigned confirm_rounds = 0;
    // Each pair one direction at a time: both at once share each end's CPU,
    // which a loaded host (and the namespace cluster, all on one machine)
    // cannot give twice. Measured here: a 3-node ring with one slow node set
    // the expected rate from its one fast link, which had the machine to
    // itself (36.9 Gb/s); the two healthy nodes measured both ways at once got
    // about 17 each, under half of that, so neither proved itself and the
    // slow node went unnamed. One direction alone is what the ring measured.
    while (some_good && !aborted && ms_left(overall) >= 2 * dur + 1500) {
        const auto pairs = conf.next_round(confirm_pairs(n));
        if (pairs.empty()) break;
        Round there, back;
        for (const auto& [s, p] : pairs) there.push_back({s, p}), back.push_back({p, s});
        auto ms = run_round(there, who, next_round++, dur, 1 << 20, "confirm");
        if (!aborted) {
            const auto more = run_round(back, who, next_round++, dur, 1 << 20, "confirm");
            ms.insert(ms.end(), more.begin(), more.end());
        }
        conf.record(ms);  // both directions in one record: the pair counts once, however many were slow
        ++confirm_rounds;
    }
    const auto decided = conf.decide();
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
    for (const auto& [s, why] : conf.unconfirmed()) rep.notes.push_back(nodes[who[s]].card.node + ": " + why);
    // A slow link whose ends were both fine is measured again on its own,
    // disjoint links together (link_retest.hpp).
    const auto link_name = [&](const Measurement& m) { return nodes[who[m.from]].card.node + " -> " + nodes[who[m.to]].card.node; };
    const auto choice = links_to_retest(ring, a.slow, decided, some_good, [&](unsigned f, unsigned t) { return dead(who[f], who[t]); });
    for (const auto& m : choice.no_path)
        rep.findings.push_back("link " + link_name(m) +
                               " has no TCP path (the reach stage's probes failed twice), both ends fine against other peers");
    std::vector<Flow> again_flows;
    for (const auto& m : choice.again) again_flows.push_back({m.from, m.to});
    unsigned transient = 0;
    for (const auto& r : disjoint_rounds(again_flows, 2 * confirm_pairs(n))) {
        std::vector<Measurement> again;
        if (!aborted && ms_left(overall) > dur + 1500) again = run_round(r, who, next_round++, dur, 1 << 20, "retest");
        for (const auto& f : r) {
            const auto same = [&](const Measurement& m) { return m.from == f.from && m.to == f.to; };
            const auto it = std::find_if(again.begin(), again.end(), same);
            const std::optional<Measurement> second = it != again.end() ? std::optional(*it) : std::nullopt;
            switch (judge_retest(second, opt.slow_ratio * a.expected_bps)) {
            case Retest::transient: ++transient; break;
            case Retest::not_measured: {
                const auto& m = *std::find_if(choice.again.begin(), choice.again.end(), same);
                rep.notes.push_back("link " + link_name(m) + " slow once (" + (m.ok ? fmt_gbit(m.bps) : m.error) +
                                    "), not measured again before the deadline");
                break;
            }
            case Retest::slow_twice:
                rep.findings.push_back("link " + link_name(*second) +
                                       (second->ok ? " slow: " + fmt_gbit(second->bps) : " failed: " + second->error) +
                                       " twice (both ends fine against other peers)");
                break;
            }
        }
    }
    if (aborted) sr.status = StageStatus::aborted;
    else if (slow) sr.status = StageStatus::failed, sr.detail = std::to_string(slow) + " slow node(s)";
    sr.detail += (sr.detail.empty() ? "" : "; ") + std::to_string(ring.size()) + " links in " +
                 std::to_string(ring_shifts(n, full).size() + (full ? 1 : 0)) + " ring round(s), " +
                 std::to_string(conf.links().size()) + " confirmation link(s) in " + std::to_string(confirm_rounds) +
                 " round(s), expected " + fmt_gbit(a.expected_bps);
    if (conf.cleared()) sr.detail += "; " + std::to_string(conf.cleared()) + " suspect(s) fine when measured again";
    if (transient) sr.detail += "; " + std::to_string(transient) + " slow link(s) fine when measured again";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

void Coordination::agree_on_order() {
    std::vector<std::optional<std::string>> tags(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].member < 0) continue;  // not checked in: the join stage names it
        const auto it = nodes[i].card.versions.find("rank_order");
        tags[i] = it == nodes[i].card.versions.end() ? std::string("none") : it->second;
    }
    // Outside the plugin's check (`srun gangway check` as the command) the
    // tasks were numbered by their own orders already: a difference is a finding.
    const CheckOrder d = decide_check_order(step.nodes, tags, !step.order_agreement || step.ring_order.size() == nodes.size());
    if (!step.order_agreement) {
        if (d.fall_back) rep.findings.push_back("rank_order=topology: " + d.why + ": the tasks' variables follow their own nodes' orders");
        return;
    }
    if (d.topology_ring) {
        ring_pos.assign(nodes.size(), 0);
        for (unsigned k = 0; k < step.ring_order.size(); ++k) ring_pos[step.ring_order[k]] = k;
        rep.notes.push_back("rank_order=topology: every node computed the same order; the bandwidth ring follows it (nodes listed in SLURM's order)");
    }
    if (d.fall_back) {
        rep.order_answer = order_answer(d);
        // A note, not a finding: the tasks keep SLURM's order, nothing is wrong with a node.
        rep.notes.push_back("rank_order=topology: " + d.why + "; every task keeps SLURM's rank order");
    }
}

Report Coordination::run() {
    const auto t0 = Clock::now();
    rep.time = std::time(nullptr);
    rep.job_id = step.job_id;
    rep.step_id = step.step_id;
    rep.mode = to_string(opt.check);
    rep.bootstrap = boot.pmix ? "pmix" : "tcp";
    rep.slow_ratio = opt.slow_ratio;
    // Rendezvous: every task over TCP, or (PMIx: fence #1 proved every task
    // alive) only each node's speaker. The join timeout counts from the start.
    auto tj = Clock::now();
    const Deadline join_by = std::min(overall, boot.start + std::chrono::milliseconds(static_cast<long>(opt.join_timeout_s * 1000)));
    // poll() failing is no verdict on any node: the run stops with its line, as any internal error does.
    if (auto g = coord.gather(boot.pmix ? step.nnodes : step.ntasks, join_by); !g) throw Error(g.error());
    const auto& ms = coord.members();
    const JoinShape shape{step.nnodes, step.ntasks, step.tasks_per_node, step.nodes, boot.pmix,
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
    agree_on_order();
    rep.stages.push_back({"cards", cards.failed ? StageStatus::failed : StageStatus::ok, "", 0});
    // Drop-outs between check-in and now.
    for (auto& e : coord.poll(after_ms(0)))
        if (e.lost) fail_lost(e.member, "the rendezvous");

    rep.nodes.resize(nodes.size());
    const auto go = [&] { return opt.check != CheckLevel::none && !aborted && !out_of_time; };
    if (go()) stage_reach();
    if (go()) stage_bandwidth();
    if (go()) stage_local();
    if (go()) stage_nccl_job();
    if (go()) stage_rdma();
    if (aborted) rep.stages.push_back({"abort", StageStatus::aborted, "a task exited during the check", 0});
    if (ms_left(overall) == 0) {
        rep.stages.push_back({"deadline", StageStatus::aborted, "the check's deadline passed", 0});
        // Incomplete is not healthy: said as a finding, with no node named for it.
        if (out_of_time)
            rep.findings.push_back("the check's deadline (" + std::to_string(static_cast<long>(rep.deadline_s)) + " s" +
                                   ") passed before its stages finished; no node is named for it: give it more time (--timeout)");
    }
    for (unsigned i = 0; i < nodes.size(); ++i) {
        auto& r = rep.nodes[i];
        r.name = nodes[i].card.node;
        r.addr = nodes[i].card.data_addr;
        r.status = nodes[i].status;
        r.reasons = nodes[i].reasons;
        if (const Nic* nic = find_nic(nodes[i].card, nodes[i].card.data_iface)) r.nic_mbps = nic->rate_mbps;
    }
    hold_mass_accusation(rep, opt.max_named);
    rep.seconds = sys::seconds_since(t0);
    return rep;
}

Report coordinate(const PreflightOptions& opt, const StepFacts& step, sys::Coordinator& coord, Deadline overall,
                  const BootInfo& boot) {
    Coordination c(opt, step, coord, overall, boot);
    return c.run();
}

}  // namespace gangway::sys::pf
