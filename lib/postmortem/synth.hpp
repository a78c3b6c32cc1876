// A job's records, made up (issue 33's "a simulation"): N nodes of K ranks
// each, ending as one of the cases would leave them, for the scale
// test (tests/unit/postmortem_verdict_test.cpp) and bench/postmortem_sim.
// Deterministic: the same job gives the same records.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

enum class Scenario {
    healthy,         // every rank exits 0
    killed_rank,     // the victim SIGKILLed; the others exit 1 (gloo: closed by peer) 0.4 s on
    oom,             // the same, and the victim's step cgroup counted an oom_kill, with the kernel's line
    link_cut,        // the victim's node logs a link down; every rank exits 1 some seconds on
    xid,             // the victim's node logs Xid 79; its ranks SIGKILLed, the others exit 1
    hang,            // every rank SIGTERMed at once; the victim entered one collective fewer
    hang_late,       // the same, every rank entered every collective, the victim the newest 20 s late (SIGSTOP, then SLURM's SIGCONT)
    same_exception,  // every rank raises the same exception and exits 1
};

struct SynthJob {
    std::uint32_t job = 4242;
    std::uint32_t nodes = 64, ranks_per_node = 8;
    Scenario scenario = Scenario::healthy;
    std::uint32_t victim = 5;              // the rank the case is about
    std::uint32_t collectives = 2000;      // each dump's entered (and completed) sequence numbers
    bool dumps = true;                     // the Flight Recorder was on
    // Each dump's newest kMaxTimed collectives carry entry times, 100 ms apart,
    // each rank a few ms off, each node's clock up to 0.9 s off the others'.
    std::int64_t t_ns = 1'795'000'000'000'000'000;  // when the failure happens
};

// "gpu000", "gpu001", ...: node i's name.
std::string synth_node(std::uint32_t i);
std::vector<NodeRecord> synth_job(const SynthJob& j);

}  // namespace gangway::postmortem
