// What the node check does with SLURM: from the node's state and reason as
// `scontrol show node` prints them and this run's verdict, drain, resume or
// leave it. Rules: drain only a node nobody else took out of service; resume
// only a drain whose reason is the one gangway wrote (kept in the state
// file), after SiteConf::resume_after healthy runs; never touch an admin's
// or another tool's drain or down node.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "confirm.hpp"
#include "record.hpp"

namespace gangway::health {

struct SlurmNode {
    std::string name;
    std::string state;   // "IDLE+DRAIN", "DOWN*", "MIXED"
    std::string reason;  // without SLURM's " [user@time]"; "" none
    // slurm::NodeState's rules (lib/slurm/node_state.hpp), the post-mortem's too:
    bool drain() const;  // DRAIN, DRAINING or DRAINED
    bool down() const;   // DOWN, FAIL, or not responding (*, NOT_RESPONDING); never POWER*
};
// `scontrol show node NAME` (one record, either layout: -o or not). Throws
// gangway::Error when it names no node.
SlurmNode parse_show_node(std::string_view text);

// The drain reason: "gangway: " and the first confirmed failure's line,
// "(+N more)" when there are others, cut to kMaxReason characters and kept to
// characters that need no quoting.
inline constexpr std::size_t kMaxReason = 160;
std::string drain_reason(const std::vector<Record>& records);

enum class Action { none, drain, resume, forget };  // forget: gangway's drain is gone (an admin resumed): clear it
struct Decision {
    Action action = Action::none;
    std::string reason;  // drain: the reason to write
    std::string why;     // for the log: why this, or why nothing
};
// `ours`: the reason the state file says gangway wrote ("" none).
Decision decide(const SlurmNode& node, Verdict v, const std::vector<Record>& records, unsigned healthy_runs,
                unsigned resume_after, const std::string& ours);

// Whether the run must ask SLURM at all: a confirmed failure, or a drain of
// its own to resume. A healthy node that gangway never drained costs
// slurmctld nothing, however many nodes run the check at once.
bool needs_slurm(Verdict v, unsigned healthy_runs, unsigned resume_after, const std::string& ours);

}  // namespace gangway::health
