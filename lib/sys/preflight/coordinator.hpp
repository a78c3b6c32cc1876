// The coordinator's state between its stages. coordinator.cpp has
// the rendezvous, cards, reach and TCP bandwidth stages; coordinator_gpu.cpp
// the GPU and RDMA ones (each node alone, then the NCCL all-reduce and the RDMA
// write rounds across nodes).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../preflight/card.hpp"
#include "../../preflight/gpu_checks.hpp"
#include "../../preflight/join.hpp"
#include "../../preflight/localize.hpp"
#include "../../preflight/schedule.hpp"
#include "internal.hpp"

namespace gangway::sys::pf {
using preflight::Card;
using preflight::Measurement;
using preflight::NodeStatus;
using preflight::Report;
using preflight::Round;

// What the rendezvous and the cards stage found (member: the speaker's index
// in Coordinator::members, the arrivals' order), and what the later stages
// need of the node.
struct NodeState : preflight::JoinedNode {
    // From the node's GPU and RDMA stages (kLocalResult), for the cross-node ones.
    std::vector<gpu::GpuResult> gpus;
    std::vector<gpu::NcclResult> nccl_runs;  // its own all-reduce(s), for the report
    bool cuda_ok = false;
    std::string nccl_lib;                // "" unless its node-alone all-reduce passed
    struct Port {
        std::string name;                // mlx5_0/1
        double rate_gbps = 0;
        bool usable = false;
    };
    std::vector<Port> ports;             // rail k is ports[k]
    bool verbs_ok = false;
};

class Coordination {
public:
    Coordination(const PreflightOptions& o, const StepFacts& s, sys::Coordinator& c, Deadline overall, const BootInfo& b)
        : opt(o), step(s), coord(c), overall(overall), boot(b) {}

    Report run();

private:
    void fail_lost(std::size_t member_index, const std::string& stage);
    bool healthy(unsigned node) const { return preflight::takes_part(nodes[node].status); }
    // Sends one command per speaker and collects one answer of `want` from each; false when aborted.
    bool exchange(const std::string& stage, const std::map<unsigned, Kv>& cmds, std::uint8_t type, std::uint8_t want,
                  Deadline d, std::map<unsigned, Kv>& answers);
    // rank_order=topology: the nodes' order tags compared (lib/env/rank_order.hpp).
    void agree_on_order();
    void stage_reach();
    void stage_bandwidth();
    void stage_local();
    gpu::Thresholds thresholds() const;
    std::vector<std::string> names_of(const std::vector<unsigned>& who) const;
    void take_gpu_facts(unsigned node, const Kv& kv);
    void stage_nccl_job();
    // Several NCCL communicators at once (groups of node indices): per node its answer.
    std::map<unsigned, Kv> nccl_runs(const std::vector<std::vector<unsigned>>& groups, double bytes, long deadline_ms);
    void stage_rdma();
    // A measured link into the report, between node indices (a Measurement's are positions).
    void add_link(unsigned from, unsigned to, const std::string& stage, const Measurement& m);
    std::vector<Measurement> run_round(const Round& r, const std::vector<unsigned>& who, unsigned round_id, long dur,
                                       std::size_t wbytes, const std::string& stage);

    const PreflightOptions& opt;
    const StepFacts& step;
    sys::Coordinator& coord;
    Deadline overall;
    const BootInfo& boot;
    std::vector<NodeState> nodes;
    // Links (node indices, from -> to) the reach stage found dead, tried
    // twice: not streamed over, so that a dead path does not hold every
    // bandwidth round for its receiver's timeout.
    std::set<std::pair<unsigned, unsigned>> dead_links;
    bool dead(unsigned from, unsigned to) const { return dead_links.count({from, to}) > 0; }
    Report rep;
    bool aborted = false;      // a task exited: its node is named, the check stops
    bool out_of_time = false;  // the check's deadline cut a stage short: nobody named for it
    unsigned next_round = 1;
    std::vector<unsigned> ring_pos;  // per node, its place in the ring; empty: SLURM's order
};

}  // namespace gangway::sys::pf
