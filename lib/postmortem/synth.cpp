#include "synth.hpp"

#include <csignal>
#include <cstdio>

namespace gangway::postmortem {

namespace {
constexpr std::int64_t kMs = 1'000'000;
int exit_status(int code) { return code << 8; }  // as waitpid gives it (W_EXITCODE)
}  // namespace

std::string synth_node(std::uint32_t i) {
    char b[16];
    std::snprintf(b, sizeof b, "gpu%03u", i);
    return b;
}

std::vector<NodeRecord> synth_job(const SynthJob& j) {
    std::vector<NodeRecord> out(j.nodes);
    std::vector<std::string> names;
    for (std::uint32_t n = 0; n < j.nodes; ++n) names.push_back(synth_node(n));
    const std::uint32_t victim_node = j.ranks_per_node ? j.victim / j.ranks_per_node : 0;
    for (std::uint32_t n = 0; n < j.nodes; ++n) {
        NodeRecord& r = out[n];
        r.node = names[n];
        r.job = j.job;
        r.job_nodes = names;
        r.window_start_ns = j.t_ns - 3600 * 1000 * kMs;
        r.window_end_ns = j.t_ns + 120 * 1000 * kMs;
        for (std::uint32_t l = 0; l < j.ranks_per_node; ++l) {
            const std::uint32_t rank = n * j.ranks_per_node + l;
            TaskEnd t;
            t.node = r.node, t.job = j.job, t.step = 0, t.rank = rank, t.local_rank = l;
            t.pid = std::int32_t(10'000 + rank);
            // The cascade's spread: 0.4 s, then a few milliseconds a rank.
            const std::int64_t later = 400 * kMs + std::int64_t(rank % 97) * 3 * kMs;
            const bool victim = rank == j.victim, on_victim_node = n == victim_node;
            switch (j.scenario) {
                case Scenario::healthy: t.t_ns = j.t_ns + later; break;
                case Scenario::killed_rank:
                case Scenario::oom:
                    t.t_ns = victim ? j.t_ns : j.t_ns + later;
                    t.wait_status = victim ? SIGKILL : exit_status(1);
                    if (j.scenario == Scenario::oom && on_victim_node) t.oom_kills = 1;
                    break;
                case Scenario::link_cut:
                    // gloo's timeout, 5 s, on every rank: the cut node's own not first.
                    t.t_ns = j.t_ns + 5000 * kMs + later;
                    t.wait_status = exit_status(1);
                    break;
                case Scenario::xid:
                    t.t_ns = on_victim_node ? j.t_ns + 800 * kMs : j.t_ns + later - 200 * kMs;
                    t.wait_status = on_victim_node ? SIGKILL : exit_status(1);
                    break;
                case Scenario::hang:
                case Scenario::hang_late:
                    t.t_ns = j.t_ns + std::int64_t(rank % 13) * kMs;
                    t.wait_status = SIGTERM;
                    break;
                case Scenario::same_exception:
                    t.t_ns = j.t_ns + std::int64_t(rank % 13) * kMs;
                    t.wait_status = exit_status(1);
                    break;
            }
            r.tasks.push_back(t);
            if (j.dumps && j.scenario != Scenario::healthy) {
                RankDump d;
                d.rank = rank;
                const std::uint32_t entered =
                    j.scenario == Scenario::hang && victim && j.collectives ? j.collectives - 1 : j.collectives;
                for (std::uint32_t s = 0; s < entered; ++s) d.entered.push_back(s);
                for (std::uint32_t s = 0; s + 1 < j.collectives; ++s) d.completed.push_back(s);
                // Times: the others entered the newest one 20 s before SLURM's
                // SIGTERM (t_ns) and waited; hang_late's victim entered it 50 ms before.
                const std::int64_t skew = std::int64_t(n % 7) * 300 * kMs - 900 * kMs;
                for (std::uint32_t s = entered > kMaxTimed ? entered - kMaxTimed : 0; s < entered; ++s) {
                    const std::int64_t jitter = std::int64_t((rank * 2654435761u + s * 40503u) % 41) * kMs - 20 * kMs;
                    std::int64_t at = j.t_ns - 20'000 * kMs - std::int64_t(j.collectives - 1 - s) * 100 * kMs + jitter;
                    if (j.scenario == Scenario::hang_late && victim && s + 1 == j.collectives) at = j.t_ns - 50 * kMs;
                    d.timed.push_back({s, at + skew, 0, 0});
                }
                if (j.scenario == Scenario::same_exception) d.exception = "ValueError: loss is nan";
                if (j.scenario == Scenario::killed_rank && !victim)
                    d.exception = "RuntimeError: [gloo] Connection closed by peer";
                r.dumps.push_back(std::move(d));
            }
        }
        if (n == victim_node) {
            Evidence e;
            e.t_ns = j.t_ns;
            switch (j.scenario) {
                case Scenario::oom:
                    e.t_ns = j.t_ns - 5 * kMs;
                    e.sign = Sign::oom_kill;
                    e.pid = std::int32_t(10'000 + j.victim);
                    e.text = "Out of memory: Killed process " + std::to_string(e.pid) + " (python3)";
                    r.evidence.push_back(e);
                    break;
                case Scenario::link_cut:
                    e.sign = Sign::link_down;
                    e.device = "eth1";
                    e.text = "eth1: Link is Down";
                    r.evidence.push_back(e);
                    break;
                case Scenario::xid:
                    e.sign = Sign::gpu_xid;
                    e.device = "0000:17:00.0";
                    e.code = 79;
                    e.text = "NVRM: Xid (PCI:0000:17:00): 79, pid=" + std::to_string(10'000 + j.victim) +
                             ", GPU has fallen off the bus.";
                    r.evidence.push_back(e);
                    break;
                default: break;
            }
        }
    }
    return out;
}

}  // namespace gangway::postmortem
