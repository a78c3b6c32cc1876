#include "slurm_action.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "../slurm/node_state.hpp"
#include "../slurm/scontrol_text.hpp"

namespace gangway::health {

bool SlurmNode::drain() const { return slurm::parse_node_state(state).drained(); }

bool SlurmNode::down() const { return slurm::parse_node_state(state).down(); }

SlurmNode parse_show_node(std::string_view text) {
    SlurmNode n;
    n.name = scontrol_field(text, "NodeName");
    if (n.name.empty()) {
        const auto first = text.substr(0, text.find('\n'));
        throw Error("scontrol named no node: \"" + std::string(first.substr(0, 120)) + "\"");
    }
    n.state = scontrol_field(text, "State");
    // Reason runs to the end of its line; SLURM adds " [user@time]".
    for (std::size_t at = text.find("Reason="); at != std::string_view::npos; at = text.find("Reason=", at + 1)) {
        if (at != 0 && text[at - 1] != ' ' && text[at - 1] != '\n') continue;
        std::string_view r = text.substr(at + 7);
        r = r.substr(0, r.find('\n'));
        if (r.ends_with("]"))
            if (const auto open = r.rfind(" ["); open != std::string_view::npos && r.find('@', open) != std::string_view::npos)
                r = r.substr(0, open);
        n.reason = std::string(trim_right(r));
        if (n.reason == "(null)" || n.reason == "none") n.reason.clear();
        break;
    }
    return n;
}

std::string drain_reason(const std::vector<Record>& records) {
    const auto bad = failed(records, true);
    if (bad.empty()) return "";
    // SLURM stores the reason as given; scontrol's own parser splits on blanks
    // only inside quotes, and the state file keeps it on one line.
    const std::string more = bad.size() > 1 ? " (+" + std::to_string(bad.size() - 1) + " more)" : "";
    return quiet_text("gangway: " + bad.front()->reason, kMaxReason - more.size()) + more;
}

bool needs_slurm(Verdict v, unsigned healthy_runs, unsigned resume_after, const std::string& ours) {
    if (v == Verdict::failed) return true;
    return v == Verdict::healthy && !ours.empty() && healthy_runs >= resume_after;
}

Decision decide(const SlurmNode& node, Verdict v, const std::vector<Record>& records, unsigned healthy_runs,
                unsigned resume_after, const std::string& ours) {
    Decision d;
    const bool ours_now = !ours.empty() && node.drain() && node.reason == ours;
    if (!ours.empty() && !ours_now) {
        // Someone resumed the node, or wrote another reason: the drain is no longer gangway's.
        d.action = Action::forget;
        d.why = "the drain gangway wrote is gone (now " + (node.state.empty() ? std::string("?") : node.state) +
                (node.reason.empty() ? "" : ", reason \"" + node.reason + "\"") + ")";
    }
    if (v == Verdict::failed) {
        if (ours_now) {
            d.why = "already drained by gangway: " + node.reason;
        } else if (node.drain() || node.down()) {
            // An admin's, another tool's or SLURM's own: theirs to lift.
            d.action = d.action == Action::forget ? Action::forget : Action::none;
            d.why = "not draining: the node is " + node.state + (node.reason.empty() ? "" : " (\"" + node.reason + "\")") +
                    ", which is not gangway's to change";
        } else {
            d.action = Action::drain;
            d.reason = drain_reason(records);
            d.why = "draining: " + d.reason;
        }
        return d;
    }
    if (v == Verdict::healthy && ours_now) {
        if (healthy_runs >= resume_after) {
            d.action = Action::resume;
            d.why = "resuming: " + std::to_string(healthy_runs) + " healthy runs in a row since gangway drained it (\"" + ours + "\")";
        } else {
            d.why = "healthy " + std::to_string(healthy_runs) + " of the " + std::to_string(resume_after) + " runs that resume it";
        }
    }
    return d;
}

}  // namespace gangway::health
