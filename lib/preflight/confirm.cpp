#include "confirm.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

namespace gangway::preflight {
namespace {

std::pair<unsigned, unsigned> key(unsigned a, unsigned b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

}  // namespace

SuspectConfirmation::SuspectConfirmation(unsigned n, const std::vector<Measurement>& ring, const BwAnalysis& a, double ratio)
    : n_(n), ring_(ring), a_(a), limit_(ratio * a.expected_bps), nodes_(n) {
    for (unsigned s : a_.suspects)
        if (s < n_) nodes_[s].suspect = true;
    for (unsigned g : a_.good)
        if (g < n_) nodes_[g].fine = true;
    const auto figures = ring_figures(n_, ring_);
    for (unsigned i = 0; i < n_; ++i) {
        std::vector<double> v;
        if (figures[i].tx_bps) v.push_back(*figures[i].tx_bps);
        if (figures[i].rx_bps) v.push_back(*figures[i].rx_bps);
        nodes_[i].ring_rate = median(v);
    }
}

unsigned SuspectConfirmation::hits(unsigned s) const {
    std::set<unsigned> rounds;  // a pair measured once counts once, however many directions were slow
    for (std::size_t k = 0; k < links_.size(); ++k) {
        const auto& m = links_[k];
        if (m.from != s && m.to != s) continue;
        const unsigned peer = m.from == s ? m.to : m.from;
        if (peer < n_ && nodes_[peer].fine && slow(m)) rounds.insert(pair_of_[k]);
    }
    return static_cast<unsigned>(rounds.size());
}

bool SuspectConfirmation::explained(unsigned s) const {
    std::set<unsigned> named_now;
    for (unsigned i = 0; i < n_; ++i)
        if (nodes_[i].suspect && named(i)) named_now.insert(i);
    return explained_by(s, ring_, a_.slow, named_now);
}

bool SuspectConfirmation::pending(unsigned s) const {
    const Node& x = nodes_[s];
    return x.suspect && !x.fine && !named(s) && !explained(s) && x.tries < kMaxTries;
}

std::vector<std::pair<unsigned, unsigned>> SuspectConfirmation::next_round(unsigned max_pairs) {
    std::vector<std::pair<unsigned, unsigned>> round;
    std::vector<bool> used(n_);
    for (unsigned s : a_.suspects) {
        if (round.size() >= max_pairs) break;
        if (s >= n_ || used[s] || !pending(s)) continue;
        // A proven peer first (a second one when the first was slow), then an
        // unproven one measured fast in the ring; the same unproven pair twice tells nothing new.
        std::optional<unsigned> best;
        auto rank = [&](unsigned p) {
            const auto it = measured_.find(key(s, p));
            const unsigned times = it == measured_.end() ? 0 : it->second;
            return std::tuple(nodes_[p].fine ? 0 : 1, times, -nodes_[p].ring_rate);
        };
        for (unsigned p = 0; p < n_; ++p) {
            if (p == s || used[p] || named(p)) continue;
            const auto it = measured_.find(key(s, p));
            const unsigned times = it == measured_.end() ? 0 : it->second;
            if (times >= (nodes_[p].fine ? kSlowNeeded : 1)) continue;
            if (!best || rank(p) < rank(*best)) best = p;
        }
        if (!best) continue;  // none free in this round, or none left at all
        used[s] = used[*best] = true;
        nodes_[s].tries++;
        measured_[key(s, *best)]++;
        round.emplace_back(s, *best);
    }
    planned_ = round;
    return round;
}

void SuspectConfirmation::record(const std::vector<Measurement>& ms) {
    const unsigned first_pair = next_pair_;
    for (std::size_t i = 0; i < planned_.size(); ++i) {
        const auto [s, p] = planned_[i];
        bool any = false, fine = true;
        for (const auto& m : ms) {
            if (key(m.from, m.to) != key(s, p)) continue;
            links_.push_back(m);
            pair_of_.push_back(first_pair + static_cast<unsigned>(i));
            any = true;
            fine = fine && !slow(m);
        }
        if (any && fine) nodes_[s].fine = nodes_[p].fine = true;
    }
    next_pair_ = first_pair + static_cast<unsigned>(planned_.size());
    planned_.clear();
}

std::vector<NodeBw> SuspectConfirmation::decide() const {
    auto out = ring_figures(n_, ring_);
    for (unsigned s = 0; s < n_; ++s) {
        if (!named(s)) continue;
        std::string why;
        for (const auto& m : links_) {
            if (m.from != s && m.to != s) continue;
            const unsigned peer = m.from == s ? m.to : m.from;
            if (peer >= n_ || !nodes_[peer].fine || !slow(m)) continue;
            why += (why.empty() ? "" : ", ") + std::string(m.from == s ? "sending " : "receiving ") +
                   (m.ok ? fmt_gbit(m.bps) : "failed (" + m.error + ")");
        }
        out[s].slow = true;
        out[s].reason = "slow against " + std::to_string(hits(s)) + " peers that measured fine (" + why + "), expected " +
                        fmt_gbit(a_.expected_bps);
    }
    return out;
}

std::vector<std::pair<unsigned, std::string>> SuspectConfirmation::unconfirmed() const {
    std::vector<std::pair<unsigned, std::string>> out;
    for (unsigned s : a_.suspects) {
        if (s >= n_ || nodes_[s].fine || named(s) || explained(s)) continue;
        const auto h = hits(s);
        std::string why = nodes_[s].tries == 0
                              ? "not measured again before the deadline"
                              : "measured again " + std::to_string(nodes_[s].tries) + " time(s): slow against a proven peer " +
                                    std::to_string(h) + " time(s) of the " + std::to_string(kSlowNeeded) + " needed";
        out.emplace_back(s, "slow in the ring round, " + why + "; not named");
    }
    return out;
}

unsigned SuspectConfirmation::cleared() const {
    unsigned c = 0;
    for (unsigned s : a_.suspects)
        if (s < n_ && (nodes_[s].fine || (!named(s) && explained(s)))) ++c;
    return c;
}

}  // namespace gangway::preflight
