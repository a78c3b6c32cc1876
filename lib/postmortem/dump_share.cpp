#include "dump_share.hpp"

#include <algorithm>
#include <set>

#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

std::size_t digits(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 10) v /= 10, ++n;
    return n;
}

// The bytes the newest k numbers of `s` take in the JSON (each with its comma: an upper bound).
std::size_t list_bytes(const std::vector<std::uint64_t>& s, std::size_t k) {
    std::size_t n = 0;
    for (std::size_t i = s.size() > k ? s.size() - k : 0; i < s.size(); ++i) n += digits(s[i]) + 1;
    return n;
}

void keep_newest(std::vector<std::uint64_t>& s, std::size_t k) {
    if (s.size() > k) s.erase(s.begin(), s.end() - static_cast<std::ptrdiff_t>(k));
}

}  // namespace

DumpCut fit_dumps(NodeRecord& r, std::size_t max_bytes) {
    DumpCut c;
    // 1. Only ranks root's task lines place here.
    std::set<std::uint32_t> here;
    for (const auto& t : r.tasks) here.insert(t.rank);
    const auto foreign = std::remove_if(r.dumps.begin(), r.dumps.end(), [&](const RankDump& d) { return !here.count(d.rank); });
    c.foreign = static_cast<std::size_t>(r.dumps.end() - foreign);
    r.dumps.erase(foreign, r.dumps.end());
    const std::size_t limit = max_bytes > kNotesReserve ? max_bytes - kNotesReserve : 0;
    if (r.dumps.empty() || to_json(r).size() <= limit) {
        c.dumps = r.dumps.size();
        return c;
    }

    // 2. The user's budget: what root's part leaves.
    std::vector<RankDump> dumps = std::move(r.dumps);
    r.dumps.clear();
    const std::size_t root = to_json(r).size();
    const std::size_t budget = limit > root ? limit - root : 0;
    // The order whole dumps go in (rule 3), last first: those without an
    // exception, then the highest rank. The kept ones stay at the front.
    std::stable_sort(dumps.begin(), dumps.end(), [](const RankDump& a, const RankDump& b) {
        if (a.exception.empty() != b.exception.empty()) return !a.exception.empty();
        return a.rank < b.rank;
    });
    // Each dump's bytes without its numbers (its rank, exception, group), from the writer itself.
    std::vector<std::size_t> fixed(dumps.size());
    {
        NodeRecord one;
        const std::size_t empty = to_json(one).size();
        for (std::size_t i = 0; i < dumps.size(); ++i) {
            RankDump bare;
            bare.rank = dumps[i].rank, bare.exception = dumps[i].exception, bare.group = dumps[i].group;
            one.dumps.assign(1, std::move(bare));
            fixed[i] = to_json(one).size() - empty + 1;
        }
    }
    auto one_cost = [&](std::size_t i, std::size_t k) {
        return fixed[i] + list_bytes(dumps[i].entered, k) + list_bytes(dumps[i].completed, k);
    };
    auto cost = [&](std::size_t k) {
        std::size_t sum = 0;
        for (std::size_t i = 0; i < dumps.size(); ++i) sum += one_cost(i, k);
        return sum;
    };
    std::size_t longest = 0;
    for (const auto& d : dumps) longest = std::max({longest, d.entered.size(), d.completed.size()});
    // 2. The largest k that fits, by bisection (the cost grows with k).
    std::size_t lo = 0, hi = longest;
    while (lo < hi) {
        const std::size_t mid = (lo + hi + 1) / 2;
        if (cost(mid) <= budget) lo = mid;
        else hi = mid - 1;
    }
    const std::size_t k = std::max(lo, std::min(kMinSeqsKept, longest));
    // 3. The dumps that fit with k each, from the front.
    std::size_t n = 0;
    for (std::size_t sum = 0; n < dumps.size() && (sum += one_cost(n, k)) <= budget;) ++n;
    for (std::size_t i = 0; i < n; ++i) {
        auto& d = dumps[i];
        if (d.entered.size() > k || d.completed.size() > k) ++c.trimmed;
        keep_newest(d.entered, k);
        keep_newest(d.completed, k);
    }
    c.dropped = dumps.size() - n;
    dumps.resize(n);
    r.dumps = std::move(dumps);
    // The estimate is an upper bound; the record itself has the last word.
    while (!r.dumps.empty() && to_json(r).size() > limit) {
        r.dumps.pop_back();
        ++c.dropped;
    }
    c.kept = c.trimmed ? k : 0;
    c.dumps = r.dumps.size();
    return c;
}

std::string describe(const DumpCut& c, std::size_t max_bytes) {
    if (!c.any()) return {};
    std::vector<std::string> parts;
    if (c.foreign) parts.push_back(std::to_string(c.foreign) + " naming a rank that ran no task here left out");
    if (c.trimmed) parts.push_back(std::to_string(c.trimmed) + " cut to their newest " + std::to_string(c.kept) + " collectives");
    if (c.dropped) parts.push_back(std::to_string(c.dropped) + " left out whole (those without an exception, the highest ranks, first)");
    std::string s = "rank dumps: ";
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
    if (c.trimmed || c.dropped) s += " (to fit the record limit of " + size_text(max_bytes) + "; the evidence of root kept whole)";
    return s + "; " + std::to_string(c.dumps) + " kept";
}

}  // namespace gangway::postmortem
