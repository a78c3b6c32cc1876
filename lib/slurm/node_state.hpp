// A node's state as SLURM prints it (`scontrol show node`'s State=, sinfo's
// %T): the one rule for "down" and "drained", which the post-mortem's lost
// node and drain (lib/postmortem, fleet serve) and the node check's drain
// (lib/health/slurm_action) share. Words are matched whole: the base state
// (IDLE, MIXED, DOWN, ...) and each "+FLAG" (DRAIN, NOT_RESPONDING,
// POWERED_DOWN, ...), with the one-character marks SLURM appends to a word
// ('*' not responding, '~' powered off, '#' powering up, '%' powering down,
// '!' power down pending, '$' maintenance, '@' reboot pending, '^' reboot
// issued, '-' planned). Pure.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gangway::slurm {

struct NodeState {
    std::string base;                // "IDLE", "DOWN", "MIXED"; "" when none was given
    std::vector<std::string> flags;  // "DRAIN", "NOT_RESPONDING", "POWERED_DOWN", without their marks
    bool no_response_mark = false;   // a '*' after a word: slurmctld hears nothing from the node

    bool has(std::string_view word) const;  // the base or a flag, whole
    // Lost to SLURM: base DOWN, a FAIL flag (or base), NOT_RESPONDING, or '*'.
    // Never a power-saving state (POWERED_DOWN, POWERING_DOWN, POWER_DOWN,
    // "~", "%"): an idle node that power saving switched off is not lost.
    bool down() const;
    // Taken out of service: DRAIN, DRAINING or DRAINED.
    bool drained() const;
};

// `word`: the state as printed ("IDLE+CLOUD+POWERED_DOWN", "DOWN*+DRAIN",
// "IDLE*"). Blanks around it are ignored; an empty word gives an empty state
// (neither down nor drained).
NodeState parse_node_state(std::string_view word);

// The State= of `scontrol show node NODE`'s text (either layout), parsed:
// its first State= word, which SLURM prints before the Reason an admin wrote.
NodeState node_state_of(std::string_view show_node);

}  // namespace gangway::slurm
