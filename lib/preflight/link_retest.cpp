#include "link_retest.hpp"

#include <set>
#include <utility>

namespace gangway::preflight {

RetestChoice links_to_retest(const std::vector<Measurement>& ring, const std::vector<bool>& slow,
                             const std::vector<NodeBw>& decided, bool some_good,
                             const std::function<bool(unsigned, unsigned)>& dead) {
    RetestChoice out;
    if (!some_good) return out;
    auto named = [&](unsigned i) { return i < decided.size() && decided[i].slow; };
    std::set<std::pair<unsigned, unsigned>> seen;
    for (std::size_t k = 0; k < ring.size() && k < slow.size(); ++k) {
        const Measurement& m = ring[k];
        if (!slow[k] || named(m.from) || named(m.to) || !seen.insert({m.from, m.to}).second) continue;
        (dead && dead(m.from, m.to) ? out.no_path : out.again).push_back(m);
    }
    return out;
}

Retest judge_retest(const std::optional<Measurement>& again, double slow_bps) {
    if (!again) return Retest::not_measured;
    return again->ok && again->bps >= slow_bps ? Retest::transient : Retest::slow_twice;
}

}  // namespace gangway::preflight
