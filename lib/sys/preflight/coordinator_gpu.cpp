// The coordinator's GPU and RDMA stages: this node's stages on every node at
// once (cuda, nccl, verbs), then the job-wide comparison of GPU copy
// bandwidth, the NCCL all-reduce across nodes (localised by two-node pairs
// when it fails or is slow), and RDMA writes per rail in ring rounds.
#include <algorithm>
#include <cstdio>
#include <set>

#include "../../base/error.hpp"
#include "../../preflight/gpu_checks.hpp"
#include "../../preflight/nccl_job.hpp"
#include "../../preflight/protocol.hpp"
#include "../../preflight/crypto.hpp"
#include "../node/process_env.hpp"
#include "../../preflight/rdma_checks.hpp"
#include "../../preflight/rdma_rail.hpp"
#include "../stages/stage.hpp"
#include "coordinator.hpp"

namespace gangway::sys::pf {
using namespace preflight;

// cuda, nccl (this node's GPUs) and verbs on every healthy node at once; a
// node whose stage failed is faulty. A stage skipped everywhere keeps the
// common reason ("no GPUs"): skipping is not a failure unless required.
void Coordination::stage_local() {
    std::map<unsigned, Kv> cmds, answers;
    const long left = ms_left(overall);
    // Half the time left for this node's three stages, half for the cross-node ones.
    const long per_stage = std::max<long>(1000, left / 6);
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (healthy(i))
            cmds[i] = Kv{{"full", opt.check == CheckLevel::full ? "1" : "0"},
                         {"timeout_ms", std::to_string(per_stage)},
                         {"nccl_lib", opt.nccl_lib}};
    if (cmds.empty()) return;
    if (!exchange("gpu/rdma", cmds, kLocal, kLocalResult, after_ms(3 * per_stage + 2000), answers)) return;
    std::map<std::string, StageResult> merged;  // by stage name, in first-seen order below
    std::vector<std::string> order;
    std::map<std::string, std::set<std::string>> skip_reasons;
    std::map<std::string, std::pair<std::string, unsigned>> ok_detail;  // a stage's first ok node's detail, and how many
    for (const auto& [node, kv] : answers) {
        try {
            take_gpu_facts(node, kv);
            const auto n = std::min<std::uint64_t>(kv_u64(kv, "n"), 16);
            for (std::uint64_t i = 0; i < n; ++i) {
                const auto p = "s." + std::to_string(i) + ".";
                const std::string name = kv_str(kv, p + "name"), detail = kv_str(kv, p + "detail");
                const auto status = parse_stage_status(kv_str(kv, p + "status"));  // nullopt: neither ok nor failed
                const double secs = std::stod(kv_str(kv, p + "seconds"));
                if (!merged.count(name)) {
                    merged[name] = {name, StageStatus::skipped, "", 0};
                    order.push_back(name);
                }
                auto& m = merged[name];
                m.seconds = std::max(m.seconds, secs);
                auto& ns = nodes[node];
                if (name == "cuda") ns.cuda_ok = status == StageStatus::ok;
                if (name == "verbs") ns.verbs_ok = status == StageStatus::ok;
                if (status == StageStatus::failed || status == StageStatus::aborted) {
                    m.status = StageStatus::failed;
                    m.detail += (m.detail.empty() ? "" : "; ") + ns.card.node + ": " + detail;
                    if (ns.status == NodeStatus::ok || ns.status == NodeStatus::mismatch) ns.status = NodeStatus::faulty;
                    ns.reasons.push_back(name + " " + to_string(*status) + ": " + detail);
                    const auto nf = std::min<std::uint64_t>(kv_u64(kv, p + "findings"), 64);
                    for (std::uint64_t j = 0; j < nf; ++j)
                        rep.findings.push_back(ns.card.node + ": " + name + ": " + kv_str(kv, p + "f." + std::to_string(j)));
                } else if (status == StageStatus::ok) {
                    if (m.status == StageStatus::skipped) m.status = StageStatus::ok;
                    auto& od = ok_detail[name];
                    if (od.second++ == 0) od.first = ns.card.node + ": " + detail;
                } else {
                    skip_reasons[name].insert(detail);
                }
            }
        } catch (const std::exception& e) {
            nodes[node].reasons.push_back(std::string("bad GPU/RDMA stage answer: ") + e.what());
            if (nodes[node].status == NodeStatus::ok) nodes[node].status = NodeStatus::faulty;
        }
    }
    for (unsigned i = 0; i < nodes.size(); ++i) {
        for (const auto& g : nodes[i].gpus)
            rep.gpus.push_back(sys::gpu_record(i, g));
        for (const auto& r : nodes[i].nccl_runs) rep.nccl.push_back(sys::nccl_record(i, r));
        for (const auto& p : nodes[i].ports) rep.ports.push_back({i, p.name, p.rate_gbps, p.usable});
    }
    // Every GPU of the job against the others: a node whose GPUs are all
    // equally slow passes its own comparison but not this one.
    std::vector<gpu::JobGpu> job;
    for (unsigned i = 0; i < nodes.size(); ++i)
        if (nodes[i].cuda_ok)
            for (const auto& g : nodes[i].gpus) job.push_back({i, g});
    const auto t = thresholds();
    std::set<std::string> told;  // H2D and D2H of one GPU: one mention in the stage's detail
    for (const auto& f : gpu::job_copy_outliers(job, t.outlier_z)) {
        auto& ns = nodes[f.node];
        if (merged.count("cuda") && told.insert(ns.card.node + f.finding.what).second) {
            auto& m = merged["cuda"];
            m.status = StageStatus::failed;
            m.detail += (m.detail.empty() ? "" : "; ") + ns.card.node + ": " + f.finding.what + " slow against the job";
        }
        if (ns.status == NodeStatus::ok || ns.status == NodeStatus::mismatch) ns.status = NodeStatus::faulty;
        ns.reasons.push_back("cuda: " + f.finding.what + ": " + f.finding.problem);
        rep.findings.push_back(ns.card.node + ": cuda: " + f.finding.what + ": " + f.finding.problem);
    }
    for (const auto& name : order) {
        auto& m = merged[name];
        if (m.status == StageStatus::skipped || (m.status == StageStatus::ok && m.detail.empty())) {
            std::string why;
            for (const auto& r : skip_reasons[name]) why += (why.empty() ? "" : "; ") + r;
            if (m.status == StageStatus::skipped) m.detail = why;
            else if (!why.empty()) m.detail = "skipped on some nodes: " + why;
            // An ok stage shows one node's figures, as a sample of what passed.
            if (m.status == StageStatus::ok && ok_detail.count(name)) {
                const auto& [d, count] = ok_detail[name];
                m.detail = d + (count > 1 ? " (and " + std::to_string(count - 1) + " more node(s))" : "") +
                           (m.detail.empty() ? "" : "; " + m.detail);
            }
        }
        rep.stages.push_back(m);
    }
}

// The thresholds of the coordinator's environment (the same GANGWAY_*
// variables reach every task of the step); the defaults when malformed: the
// node stages have already reported that.
gpu::Thresholds Coordination::thresholds() const {
    try {
        return gpu::thresholds_from_env(sys::process_env());
    } catch (const Error&) {
        return {};
    }
}

std::vector<std::string> Coordination::names_of(const std::vector<unsigned>& who) const {
    std::vector<std::string> out;
    for (unsigned i : who) out.push_back(nodes[i].card.node);
    return out;
}

// What the cross-node stages need from a node's kLocalResult (its per-GPU
// figures, NCCL library and compute ports; stage_local reads the statuses).
void Coordination::take_gpu_facts(unsigned node, const Kv& kv) {
    auto& ns = nodes[node];
    auto get = [&](const std::string& k) -> std::string { auto it = kv.find(k); return it == kv.end() ? "" : it->second; };
    const auto ng = std::min<std::uint64_t>(get("gpus").empty() ? 0 : kv_u64(kv, "gpus"), 64);
    for (std::uint64_t j = 0; j < ng; ++j) {
        const auto g = "g." + std::to_string(j) + ".";
        gpu::GpuResult r;
        r.index = static_cast<int>(kv_u64(kv, g + "index"));
        r.name = get(g + "name");
        r.bus_id = get(g + "bus");
        r.error = get(g + "error");
        if (!get(g + "gen").empty()) r.pcie_gen = static_cast<int>(kv_u64(kv, g + "gen"));
        if (!get(g + "width").empty()) r.pcie_width = static_cast<int>(kv_u64(kv, g + "width"));
        if (!get(g + "h2d").empty()) r.h2d_gbps = kv_f64(kv, g + "h2d");
        if (!get(g + "d2h").empty()) r.d2h_gbps = kv_f64(kv, g + "d2h");
        ns.gpus.push_back(r);
    }
    ns.nccl_lib = get("nccl_lib");
    const auto nr = std::min<std::uint64_t>(get("nccl_runs").empty() ? 0 : kv_u64(kv, "nccl_runs"), 8);
    for (std::uint64_t j = 0; j < nr; ++j) {
        const auto q = "n." + std::to_string(j) + ".";
        gpu::NcclResult r;
        r.scope = "node";
        r.nranks = static_cast<unsigned>(kv_u64(kv, q + "ranks"));
        r.bytes = static_cast<double>(kv_u64(kv, q + "bytes"));
        r.seconds = kv_f64(kv, q + "seconds");
        r.data_ok = get(q + "data_ok") == "1";
        r.error = get(q + "error");
        ns.nccl_runs.push_back(r);
    }
    const auto np = std::min<std::uint64_t>(get("ports").empty() ? 0 : kv_u64(kv, "ports"), 64);
    for (std::uint64_t k = 0; k < np; ++k) {
        const auto q = "p." + std::to_string(k) + ".";
        ns.ports.push_back({get(q + "name"), kv_f64(kv, q + "rate"), get(q + "usable") == "1"});
    }
}

// Several NCCL communicators at once, one per group of nodes (a node in at
// most one group): the group's first node makes the unique id, then every
// node joins with its GPUs as consecutive ranks. Per node: its answer
// ({ok, error, seconds, data_ok}); a node that did not take part has none.
std::map<unsigned, Kv> Coordination::nccl_runs(const std::vector<std::vector<unsigned>>& groups, double bytes, long deadline_ms) {
    std::map<unsigned, Kv> cmds, ids, out;
    for (const auto& g : groups)
        if (g.size() >= 2) cmds[g[0]] = Kv{{"phase", "id"}, {"lib", nodes[g[0]].nccl_lib}};
    if (cmds.empty() || !exchange("nccl-job", cmds, kNccl, kNcclResult, after_ms(10000), ids)) return out;
    cmds.clear();
    for (const auto& g : groups) {
        if (g.size() < 2) continue;
        auto it = ids.find(g[0]);
        if (it == ids.end()) continue;
        if (kv_str(it->second, "ok") != "1") {
            out[g[0]] = it->second;  // could not make a unique id: its bootstrap interface
            continue;
        }
        unsigned nranks = 0;
        for (unsigned node : g) nranks += static_cast<unsigned>(nodes[node].gpus.size());
        unsigned first = 0;
        for (unsigned node : g) {
            const auto devices = static_cast<unsigned>(nodes[node].gpus.size());
            cmds[node] = Kv{{"phase", "run"},
                            {"lib", nodes[node].nccl_lib},
                            {"id", kv_str(it->second, "id")},
                            {"nranks", std::to_string(nranks)},
                            {"first_rank", std::to_string(first)},
                            {"devices", std::to_string(devices)},
                            {"bytes", std::to_string(static_cast<std::uint64_t>(bytes))},
                            {"iterations", opt.check == CheckLevel::full ? "20" : "5"},
                            {"deadline_ms", std::to_string(deadline_ms)}};
            first += devices;
        }
    }
    if (!cmds.empty()) exchange("nccl-job", cmds, kNccl, kNcclResult, after_ms(deadline_ms + 4000), out);
    return out;
}

// The all-reduce the job will run: every node that passed its nccl stage,
// all their GPUs in one communicator, with each node's own libnccl. When it
// fails or is slow, two-node communicators along the ring (pair_rounds) name
// the node that fails or is slow with both its neighbours.
void Coordination::stage_nccl_job() {
    if (nodes.size() < 2) return;
    const auto t0 = Clock::now();
    StageResult sr{"nccl-job", StageStatus::skipped, "", 0};
    std::vector<unsigned> who;
    unsigned with_gpus = 0;
    for (unsigned i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].gpus.empty()) ++with_gpus;
        if (healthy(i) && !nodes[i].gpus.empty() && !nodes[i].nccl_lib.empty()) who.push_back(i);
    }
    if (who.size() < 2) {
        sr.detail = with_gpus == 0 ? "no GPUs" : "fewer than two nodes passed the nccl stage";
        rep.stages.push_back(sr);
        return;
    }
    const auto t = thresholds();
    // Half of what is left for the job's communicator, the rest for localising.
    const long deadline_ms = std::max<long>(2000, ms_left(overall) / 2 - 4000);
    auto answers = nccl_runs({who}, t.nccl_bytes, deadline_ms);
    if (aborted) return;
    // A node's part in an all-reduce, from the answers of one nccl_runs.
    const auto part = [&](unsigned node, const std::map<unsigned, Kv>& got) {
        auto it = got.find(node);
        return NcclAnswer{nodes[node].card.node, static_cast<unsigned>(nodes[node].gpus.size()),
                          it == got.end() ? nullptr : &it->second};
    };
    std::vector<NcclAnswer> parts;
    unsigned min_gpus = ~0u;
    for (unsigned node : who) {
        parts.push_back(part(node, answers));
        min_gpus = std::min(min_gpus, static_cast<unsigned>(nodes[node].gpus.size()));
    }
    gpu::NcclResult r = job_allreduce(parts, t.nccl_bytes);
    const auto m = gpu::gpu_model(nodes[who[0]].gpus[0].name);
    r.model = m.key;
    std::vector<double> rates;
    for (const auto& p : nodes[who[0]].ports)
        if (p.usable) rates.push_back(p.rate_gbps);
    r.expected_busbw = gpu::expected_busbw(m, min_gpus, static_cast<unsigned>(who.size()), rates, t);
    auto v = gpu::judge_nccl({r}, t);
    sr.status = v.status;
    sr.detail = std::to_string(who.size()) + " nodes, " + v.detail;
    for (const auto& f : v.findings) rep.findings.push_back(f.what + ": " + f.problem);

    // Localise with two-node communicators, when there are more than two nodes and time.
    if (v.status == StageStatus::failed && who.size() > 2) {
        const auto rounds = pair_rounds(static_cast<unsigned>(who.size()));
        const long pair_ms = std::max<long>(1500, (ms_left(overall) - 2000) / static_cast<long>(rounds.size()) - 4000);
        std::vector<NcclPair> pairs;
        bool complete = true;
        for (const auto& round : rounds) {
            if (aborted || ms_left(overall) < pair_ms + 4000) {
                complete = false;
                break;
            }
            std::vector<std::vector<unsigned>> groups;
            for (const auto& f : round) groups.push_back({who[f.from], who[f.to]});
            auto got = nccl_runs(groups, t.nccl_bytes, pair_ms);
            for (const auto& f : round) {
                pairs.push_back(nccl_pair(f, part(who[f.from], got), part(who[f.to], got)));
                add_link(who[f.from], who[f.to], "nccl-pair", pair_link(pairs.back(), t.nccl_bytes));
            }
        }
        if (complete) {
            const auto blame = blame_pairs(static_cast<unsigned>(who.size()), pairs, names_of(who), r, t.busbw_ratio, opt.slow_ratio);
            for (const auto& [k, why] : blame.faulty) {
                nodes[who[k]].status = NodeStatus::faulty;
                nodes[who[k]].reasons.push_back(why);
            }
            rep.findings.insert(rep.findings.end(), blame.findings.begin(), blame.findings.end());
            const auto named = blame.faulty.size();
            sr.detail += "; two-node pairs: " + (named ? std::to_string(named) + " node(s) named" : std::string("no single node to blame"));
        } else {
            sr.detail += "; no time left to localise with two-node pairs (raise --timeout)";
        }
    }
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

// RDMA writes between nodes on each rail (the k-th compute port of every
// node) in ring-shift rounds: every node writes to its successor while its
// predecessor writes to it, as NCCL's ring does. Queue-pair details travel
// through the coordinator; short retry counts make a dead path fail in
// about 0.3 s. A node slow or failing both ways on a rail is faulty.
void Coordination::stage_rdma() {
    if (nodes.size() < 2) return;
    const auto t0 = Clock::now();
    StageResult sr{"rdma", StageStatus::skipped, "", 0};
    std::vector<unsigned> who;
    unsigned with_ports = 0;
    std::size_t rails = ~std::size_t(0);
    for (unsigned i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].ports.empty()) ++with_ports;
        if (healthy(i) && nodes[i].verbs_ok && !nodes[i].ports.empty()) {
            who.push_back(i);
            rails = std::min(rails, nodes[i].ports.size());
        }
    }
    if (who.size() < 2) {
        sr.detail = with_ports == 0 ? "no RDMA devices" : "fewer than two nodes passed the verbs stage";
        rep.stages.push_back(sr);
        return;
    }
    const auto t = thresholds();
    const unsigned n = static_cast<unsigned>(who.size());
    const long dur = opt.round_ms > 0 ? opt.round_ms : (opt.check == CheckLevel::full ? 1000 : 300);
    const auto shifts = ring_shifts(n, opt.check == CheckLevel::full);
    sr.status = StageStatus::ok;
    unsigned slow_nodes = 0, links = 0;
    std::size_t rail = 0;
    std::vector<double> rates;
    // One measurement of a rail: every shift's round, each link once.
    const auto measure = [&](std::size_t which) {
        std::vector<Measurement> ring;
        for (unsigned shift : shifts) {
            if (ms_left(overall) < dur + 3000) break;
            const Round round = ring_round(n, shift);
            std::map<unsigned, Kv> cmds, prep, conn, go, done;
            for (unsigned node : who)
                cmds[node] = Kv{{"phase", "prep"}, {"rail", std::to_string(which)}, {"send", "1"}, {"recv", "1"},
                                {"bytes", std::to_string(8 << 20)}};
            if (!exchange("rdma", cmds, kRdma, kRdmaResult, after_ms(5000), prep)) break;
            const auto answer = [](const std::map<unsigned, Kv>& m, unsigned node) {
                auto it = m.find(node);
                return it == m.end() ? nullptr : &it->second;
            };
            const auto ok = [&](const std::map<unsigned, Kv>& m, unsigned node) {
                const Kv* a = answer(m, node);
                return a && kv_str(*a, "ok") == "1";
            };
            cmds.clear();
            for (const auto& f : round) {
                const unsigned from = who[f.from], to = who[f.to];
                if (!ok(prep, from) || !ok(prep, to)) continue;
                auto& c = cmds[from];
                c["phase"] = "connect";
                for (const auto& [k, v] : prep[to])
                    if (k.rfind("r.", 0) == 0) c["to." + k.substr(2)] = v;
                auto& d = cmds[to];
                d["phase"] = "connect";
                for (const auto& [k, v] : prep[from])
                    if (k.rfind("s.", 0) == 0) d["from." + k.substr(2)] = v;
            }
            if (!cmds.empty() && !exchange("rdma", cmds, kRdma, kRdmaResult, after_ms(5000), conn)) break;
            cmds.clear();
            for (const auto& [node, kv] : conn)
                if (kv_str(kv, "ok") == "1") cmds[node] = Kv{{"phase", "go"}, {"ms", std::to_string(dur)}, {"msg_bytes", std::to_string(1 << 20)}};
            if (!cmds.empty() && !exchange("rdma", cmds, kRdma, kRdmaResult, after_ms(dur + 4000), go)) break;
            cmds.clear();
            for (unsigned node : who) cmds[node] = Kv{{"phase", "done"}};
            exchange("rdma", cmds, kRdma, kRdmaResult, after_ms(3000), done);
            const auto end = [&](unsigned node) {
                return RdmaEnd{nodes[node].card.node, answer(prep, node), answer(conn, node), answer(go, node)};
            };
            for (const auto& f : round) {
                const unsigned from = who[f.from], to = who[f.to];
                const Measurement m = rdma_link(f, end(from), end(to));
                if (m.ok) rates.push_back(m.bps);
                add_link(from, to, "rdma " + nodes[from].ports[which].name, m);
                ring.push_back(m);
                ++links;
            }
        }
        return ring;
    };
    for (; rail < rails && !aborted; ++rail) {
        std::vector<Measurement> ring = measure(rail);
        if (ring.empty()) break;
        std::vector<RailPort> ports;
        for (unsigned node : who) ports.push_back({nodes[node].card.node, nodes[node].ports[rail].name, nodes[node].ports[rail].rate_gbps});
        const auto first = blame_rail(static_cast<unsigned>(rail), ports, ring, t.ib_rate_gbps, t.rdma_ratio);
        // Confirm before accusing (rdma_rail.hpp): the rail measured again.
        std::optional<RailBlame> again;
        if ((first.failed || !first.faulty.empty()) && !aborted && ms_left(overall) >= long(shifts.size()) * (dur + 3000)) {
            const auto ring2 = measure(rail);
            if (!ring2.empty()) again = blame_rail(static_cast<unsigned>(rail), ports, ring2, t.ib_rate_gbps, t.rdma_ratio);
        }
        const auto confirmed = confirm_rail(first, again, ports);
        const RailBlame& blame = confirmed.blame;
        rep.notes.insert(rep.notes.end(), confirmed.notes.begin(), confirmed.notes.end());
        for (const auto& [k, why] : blame.faulty) {
            nodes[who[k]].status = NodeStatus::faulty;
            nodes[who[k]].reasons.push_back(why);
            ++slow_nodes;
        }
        rep.findings.insert(rep.findings.end(), blame.findings.begin(), blame.findings.end());
        if (blame.failed) sr.status = StageStatus::failed;
    }
    if (slow_nodes) sr.status = StageStatus::failed;
    sr.detail = std::to_string(links) + " link(s) on " + std::to_string(rail) + " of " + std::to_string(rails) + " rail(s)";
    if (!rates.empty()) sr.detail += ", median " + fmt_gbit(median(rates));
    if (slow_nodes) sr.detail += ", " + std::to_string(slow_nodes) + " faulty node(s)";
    if (rail < rails) sr.detail += "; time ran out (raise --timeout)";
    sr.seconds = sys::seconds_since(t0);
    rep.stages.push_back(sr);
}

}  // namespace gangway::sys::pf
