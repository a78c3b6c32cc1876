#include "node_state.hpp"

#include <algorithm>

#include "scontrol_text.hpp"

namespace gangway::slurm {
namespace {

constexpr std::string_view kMarks = "*~#!%$@^-";

}  // namespace

bool NodeState::has(std::string_view word) const {
    return base == word || std::find(flags.begin(), flags.end(), word) != flags.end();
}

bool NodeState::down() const { return has("DOWN") || has("FAIL") || has("NOT_RESPONDING") || no_response_mark; }

bool NodeState::drained() const { return has("DRAIN") || has("DRAINING") || has("DRAINED"); }

NodeState parse_node_state(std::string_view word) {
    NodeState s;
    while (!word.empty() && (word.front() == ' ' || word.front() == '\t')) word.remove_prefix(1);
    while (!word.empty() && (word.back() == ' ' || word.back() == '\t' || word.back() == '\r' || word.back() == '\n'))
        word.remove_suffix(1);
    bool first = true;
    while (!word.empty()) {
        const std::size_t plus = word.find('+');
        std::string_view w = word.substr(0, plus);
        word = plus == std::string_view::npos ? std::string_view() : word.substr(plus + 1);
        while (!w.empty() && kMarks.find(w.back()) != std::string_view::npos) {
            if (w.back() == '*') s.no_response_mark = true;
            w.remove_suffix(1);
        }
        if (first) s.base = std::string(w);
        else if (!w.empty()) s.flags.emplace_back(w);
        first = false;
    }
    return s;
}

NodeState node_state_of(std::string_view show_node) { return parse_node_state(scontrol_field(show_node, "State")); }

}  // namespace gangway::slurm
