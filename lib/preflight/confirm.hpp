// Confirming the bandwidth stage's suspects before naming any. The ring
// rounds measure every node's links at once; on a loaded host (daemons,
// other jobs, a machine shared by many namespace nodes) that alone makes
// healthy links slow, so a slow ring link is only a suspicion. Each suspect
// is measured again, both directions, against a peer, a few disjoint pairs
// per round, and is named slow only when its links are slow against peers
// that proved themselves fine (a good node of the ring, or a node measured
// fine since) at least kSlowNeeded times. One fine confirmation clears it:
// a node with a slow NIC is never fast. A suspect not confirmed either way
// before the deadline or its tries run out is not named; the coordinator
// reports it as a note, which does not change the verdict.
// Pure: positions in, pairs to measure out, measurements in, decisions out.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "localize.hpp"

namespace gangway::preflight {

class SuspectConfirmation {
public:
    static constexpr unsigned kSlowNeeded = 2;  // slow links against proven peers to name a node
    static constexpr unsigned kMaxTries = 4;    // confirmation pairs per suspect

    SuspectConfirmation(unsigned n, const std::vector<Measurement>& ring, const BwAnalysis& a, double ratio);

    // The next round: disjoint pairs (suspect, peer), at most max_pairs, each to
    // be measured both ways (the coordinator measures one direction of every
    // pair, then the other: both at once share a loaded host's CPU). Empty when every suspect is decided or out
    // of tries or peers. Ends: every pair planned counts against kMaxTries.
    std::vector<std::pair<unsigned, unsigned>> next_round(unsigned max_pairs);
    // The round's measurements (both directions of each pair planned).
    void record(const std::vector<Measurement>& ms);

    // Per node: decide_nodes' figures (ring medians) and the verdict above.
    std::vector<NodeBw> decide() const;
    // Suspects neither cleared nor named, with what was measured: for notes.
    std::vector<std::pair<unsigned, std::string>> unconfirmed() const;
    // Every confirmation measurement, in order.
    const std::vector<Measurement>& links() const { return links_; }
    // Suspects cleared by a fine confirmation or explained by a named neighbour.
    unsigned cleared() const;

private:
    struct Node {
        bool suspect = false;
        bool fine = false;        // proved fine: good in the ring, or a fine confirmation
        unsigned tries = 0;       // confirmation pairs it was measured in
        double ring_rate = 0;     // median of its ring links: the better peers first
    };
    bool slow(const Measurement& m) const { return !m.ok || m.bps < limit_; }
    unsigned hits(unsigned s) const;  // its slow confirmation links against proven peers
    bool named(unsigned s) const { return !nodes_[s].fine && hits(s) >= kSlowNeeded; }
    bool explained(unsigned s) const;  // every slow ring link of it ends at a named node
    bool pending(unsigned s) const;

    unsigned n_;
    std::vector<Measurement> ring_;
    BwAnalysis a_;
    double limit_;  // ratio * expected: a link below it is slow
    std::vector<Node> nodes_;
    std::vector<Measurement> links_;
    std::vector<unsigned> pair_of_;  // per link: which planned pair measured it
    unsigned next_pair_ = 0;
    std::map<std::pair<unsigned, unsigned>, unsigned> measured_;  // unordered pair -> times planned
    std::vector<std::pair<unsigned, unsigned>> planned_;          // the round next_round returned last
};

}  // namespace gangway::preflight
