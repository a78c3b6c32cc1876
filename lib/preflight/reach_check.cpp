#include "reach_check.hpp"

#include <algorithm>
#include <map>

#include "../base/error.hpp"

namespace gangway::preflight {
namespace {

struct Attempt {
    bool ok = false;
    double ms = 0;
    std::string error;
};

// Probe k of an answer; a malformed one is that probe's failure, its error the parser's.
Attempt read_attempt(const Kv& answer, std::size_t k) {
    const auto p = "r." + std::to_string(k) + ".";
    Attempt a;
    try {
        a.ok = kv_str(answer, p + "ok") == "1";
        a.ms = kv_f64(answer, p + "ms");
        a.error = kv_str(answer, p + "error");
    } catch (const Error& e) {
        a.ok = false;
        a.error = e.what();
    }
    return a;
}

struct Link {
    unsigned from = 0, to = 0;  // positions
    std::vector<Attempt> attempts;
    bool ok() const {
        return std::any_of(attempts.begin(), attempts.end(), [](const Attempt& a) { return a.ok; });
    }
};

// Every probe of every pass, one Link per (prober, target), in first-seen order.
std::vector<Link> collect(const std::vector<ReachNode>& nodes) {
    std::vector<Link> links;
    std::map<std::pair<unsigned, unsigned>, std::size_t> index;
    auto add = [&](unsigned i, const std::vector<unsigned>& targets, const Kv* answer) {
        if (!answer) return;
        for (std::size_t k = 0; k < targets.size(); ++k) {
            const unsigned t = targets[k];
            if (t >= nodes.size()) throw Error("a reach target beyond the stage's " + std::to_string(nodes.size()) + " nodes");
            auto [it, fresh] = index.emplace(std::pair{i, t}, links.size());
            if (fresh) links.push_back({i, t, {}});
            links[it->second].attempts.push_back(read_attempt(*answer, k));
        }
    };
    for (unsigned i = 0; i < nodes.size(); ++i) add(i, nodes[i].targets, nodes[i].answer);
    for (unsigned i = 0; i < nodes.size(); ++i) add(i, nodes[i].retry, nodes[i].retry_answer);
    return links;
}

struct Count {
    unsigned probes = 0, failures = 0, once = 0;  // links; failed; failed but attempted only once
    bool all_failed() const { return probes && failures == probes; }
};

}  // namespace

std::vector<std::vector<unsigned>> retry_targets(const std::vector<ReachNode>& nodes) {
    const auto n = static_cast<unsigned>(nodes.size());
    std::vector<std::vector<unsigned>> out(n);
    std::vector<Count> in(n), from(n);
    std::vector<bool> reaches(n), reached(n);
    auto add = [&](unsigned i, unsigned t) {
        if (std::find(out[i].begin(), out[i].end(), t) == out[i].end()) out[i].push_back(t);
    };
    for (const auto& l : collect(nodes)) {
        in[l.to].probes++, from[l.from].probes++;
        if (l.ok()) {
            reaches[l.from] = reached[l.to] = true;
            continue;
        }
        in[l.to].failures++, from[l.from].failures++;
        add(l.from, l.to);
    }
    auto probes_already = [&](unsigned c, unsigned x) {
        return std::find(nodes[c].targets.begin(), nodes[c].targets.end(), x) != nodes[c].targets.end() ||
               std::find(out[c].begin(), out[c].end(), x) != out[c].end();
    };
    for (unsigned x = 0; x < n; ++x) {
        // Two more probers for a node nobody reached: peers that reached others.
        unsigned extra = 0;
        for (unsigned d = 1; d < n && extra < 2 && in[x].all_failed(); ++d) {
            const unsigned c = (x + d) % n;
            if (nodes[c].answer && reaches[c] && !probes_already(c, x)) add(c, x), ++extra;
        }
        // Two more targets for a node that reached nobody: peers others reached.
        extra = 0;
        for (unsigned d = 1; d < n && extra < 2 && from[x].all_failed() && nodes[x].answer; ++d) {
            const unsigned t = (x + d) % n;
            if (reached[t] && !probes_already(x, t)) add(x, t), ++extra;
        }
    }
    return out;
}

ReachCheck judge_reach(const std::vector<ReachNode>& nodes) {
    ReachCheck out;
    const auto links = collect(nodes);
    std::vector<Count> in(nodes.size()), out_of(nodes.size());
    for (const auto& l : links) {
        LinkResult r;
        r.from = nodes[l.from].node;
        r.to = nodes[l.to].node;
        r.stage = "reach";
        r.ok = l.ok();
        const auto& shown = r.ok ? *std::find_if(l.attempts.begin(), l.attempts.end(), [](const Attempt& a) { return a.ok; })
                                 : l.attempts.back();
        if (r.ok) r.ms = shown.ms;
        r.error = shown.error;
        out.links.push_back(r);
        out_of[l.from].probes++, in[l.to].probes++;
        if (r.ok) {
            if (!l.attempts.front().ok) ++out.recovered;
            continue;
        }
        out_of[l.from].failures++, in[l.to].failures++;
        if (l.attempts.size() < 2) out_of[l.from].once++, in[l.to].once++;
    }
    std::vector<bool> unreachable(nodes.size()), noted(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        unreachable[i] = nodes[i].unreachable;
        const bool none_in = in[i].all_failed(), none_out = out_of[i].all_failed();
        if (!none_in && !none_out) continue;
        // Named only on failures tried twice: one pass alone may be the host's load.
        if ((none_in ? in[i].once : 0) + (none_out ? out_of[i].once : 0) > 0 && !unreachable[i]) {
            out.notes.push_back(nodes[i].name + ": every TCP probe " + (none_in ? "to" : "from") +
                                " it failed once and was not tried again before the deadline; not named");
            noted[i] = true;
            continue;
        }
        if (!unreachable[i]) ++out.newly_unreachable;
        unreachable[i] = true;
        out.unreachable.emplace_back(nodes[i].node, "TCP to " + nodes[i].addr + " failed from " + std::to_string(in[i].failures) +
                                                        "/" + std::to_string(in[i].probes) + " peers, from it to " +
                                                        std::to_string(out_of[i].failures) + "/" +
                                                        std::to_string(out_of[i].probes) + " peers, each tried twice");
    }
    // A link that failed between nodes that are otherwise fine stays a link
    // finding when it failed twice, a note when once.
    for (std::size_t k = 0; k < links.size(); ++k) {
        const auto& l = links[k];
        if (out.links[k].ok || unreachable[l.from] || unreachable[l.to] || noted[l.from] || noted[l.to]) continue;
        const std::string what = "TCP " + nodes[l.from].name + " -> " + nodes[l.to].name + " failed";
        if (l.attempts.size() >= 2) {
            out.findings.push_back(what + " twice: " + out.links[k].error);
            out.dead.emplace_back(nodes[l.from].node, nodes[l.to].node);
        } else out.notes.push_back(what + " once (" + out.links[k].error + "), not tried again before the deadline");
    }
    return out;
}

}  // namespace gangway::preflight
