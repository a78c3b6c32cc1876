#include "schedule.hpp"

#include <algorithm>
#include <set>

namespace gangway::preflight {

std::vector<std::vector<unsigned>> reach_targets(unsigned n, unsigned random_peers, std::uint64_t seed) {
    std::vector<std::vector<unsigned>> out(n);
    std::uint64_t x = seed ^ 0x9e3779b97f4a7c15ull;
    auto next = [&x] {  // splitmix64: deterministic, identical on every node
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    for (unsigned i = 0; i < n; ++i) {
        std::set<unsigned> t;
        if (n >= 2) {
            t.insert((i + 1) % n);
            t.insert((i + n - 1) % n);
            t.insert(0);
        }
        const unsigned want = std::min<unsigned>(n - 1, static_cast<unsigned>(t.size() - t.count(i)) + random_peers);
        for (unsigned tries = 0; n >= 2 && t.size() - t.count(i) < want && tries < 64 * (random_peers + 1); ++tries)
            t.insert(static_cast<unsigned>(next() % n));
        t.erase(i);
        out[i].assign(t.begin(), t.end());
    }
    return out;
}

std::vector<unsigned> ring_shifts(unsigned n, bool full, unsigned max_rounds) {
    std::vector<unsigned> s;
    if (n < 2) return s;
    auto add = [&](unsigned k) {
        if (k >= 1 && k < n && std::find(s.begin(), s.end(), k) == s.end() && s.size() < max_rounds) s.push_back(k);
    };
    add(1);
    if (full) {
        add(n / 2);
        add(2);
        add(n - 1);
    }
    return s;
}

Round ring_round(unsigned n, unsigned shift) {
    Round r;
    if (n < 2 || shift % n == 0) return r;
    for (unsigned i = 0; i < n; ++i) r.push_back({i, (i + shift) % n});
    return r;
}

std::vector<Round> pair_rounds(unsigned n) {
    std::vector<Round> rounds;
    if (n < 2) return rounds;
    if (n == 2) return {Round{{0, 1}}};
    Round even, odd, closing;
    for (unsigned i = 0; i < n; ++i) {
        const Flow f{i, (i + 1) % n};
        if (i == n - 1 && n % 2) closing.push_back(f);  // (n-1, 0) meets link 0's node 0
        else (i % 2 ? odd : even).push_back(f);
    }
    for (auto* r : {&even, &odd, &closing})
        if (!r->empty()) rounds.push_back(std::move(*r));
    return rounds;
}

std::vector<Round> disjoint_rounds(const std::vector<Flow>& flows, unsigned max_flows) {
    std::vector<Round> out;
    std::vector<std::set<unsigned>> senders, receivers;
    for (const auto& f : flows) {
        std::size_t k = 0;
        while (k < out.size() && (out[k].size() >= max_flows || senders[k].count(f.from) || receivers[k].count(f.to))) ++k;
        if (k == out.size()) out.emplace_back(), senders.emplace_back(), receivers.emplace_back();
        out[k].push_back(f);
        senders[k].insert(f.from);
        receivers[k].insert(f.to);
    }
    return out;
}

}  // namespace gangway::preflight
