#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "../base/saturate.hpp"
#include "../base/text.hpp"

namespace gangway::preflight {

const char* to_string(NodeStatus s) {
    switch (s) {
        case NodeStatus::ok: return "ok";
        case NodeStatus::slow: return "slow";
        case NodeStatus::mismatch: return "mismatch";
        case NodeStatus::faulty: return "faulty";
        case NodeStatus::unreachable: return "unreachable";
        case NodeStatus::missing: return "missing";
        case NodeStatus::lost: return "lost";
    }
    return "?";
}

bool takes_part(NodeStatus s) { return s == NodeStatus::ok || s == NodeStatus::mismatch || s == NodeStatus::slow; }

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::ok: return "ok";
        case Verdict::degraded: return "degraded";
        case Verdict::unreachable: return "unreachable";
    }
    return "?";
}

Verdict parse_verdict(std::string_view word) {
    if (word == to_string(Verdict::ok)) return Verdict::ok;
    if (word == to_string(Verdict::degraded)) return Verdict::degraded;
    return Verdict::unreachable;
}

Verdict verdict(const Report& r) {
    Verdict v = Verdict::ok;
    for (const auto& n : r.nodes) {
        if (n.status == NodeStatus::unreachable || n.status == NodeStatus::missing || n.status == NodeStatus::lost)
            return Verdict::unreachable;
        if (n.status != NodeStatus::ok) v = Verdict::degraded;
    }
    if (!r.findings.empty()) v = Verdict::degraded;
    return v;
}

int exit_code(Verdict v) {
    switch (v) {
        case Verdict::ok: return kExitOk;
        case Verdict::degraded: return kExitDegraded;
        case Verdict::unreachable: return kExitUnreachable;
    }
    return kExitCannotCheck;
}

std::vector<std::string> bad_nodes(const Report& r) {
    std::vector<std::string> out;
    for (const auto& n : r.nodes)
        if (n.status != NodeStatus::ok) out.push_back(n.name);
    return out;
}

namespace {

std::string fmt(const char* f, double x) {
    char b[64];
    std::snprintf(b, sizeof b, f, x);
    return b;
}

std::string gbit(std::optional<double> bps) { return bps ? fmt("%.2f", *bps * 8 / 1e9) : "-"; }

}  // namespace

std::string render_table(const Report& r) {
    std::string out;
    const auto v = verdict(r);
    out += "gangway preflight (" + r.mode + ", " + std::to_string(r.nodes.size()) + " nodes, " + fmt("%.2f s", r.seconds) +
           "): " + to_string(v) + "\n";
    std::size_t w = 4;
    for (const auto& n : r.nodes) w = std::max(w, n.name.size());
    char line[512];
    std::snprintf(line, sizeof line, "  %-*s  %-15s  %-11s  %8s  %8s  %8s  %s\n", int(w), "node", "address", "status",
                  "tx Gb/s", "rx Gb/s", "expected", "reason");
    out += line;
    const std::string exp = r.expected_bps > 0 ? fmt("%.2f", r.expected_bps * 8 / 1e9) : "-";
    for (const auto& n : r.nodes) {
        std::string reason;
        for (const auto& x : n.reasons) reason += (reason.empty() ? "" : "; ") + x;
        std::snprintf(line, sizeof line, "  %-*s  %-15s  %-11s  %8s  %8s  %8s  %s\n", int(w), n.name.c_str(),
                      n.addr.empty() ? "-" : n.addr.c_str(), to_string(n.status), gbit(n.tx_bps).c_str(), gbit(n.rx_bps).c_str(), exp.c_str(),
                      reason.c_str());
        out += line;
    }
    for (const auto& l : r.links) {
        if (l.ok || l.from >= r.nodes.size() || l.to >= r.nodes.size()) continue;
        out += "  link " + r.nodes[l.from].name + " -> " + r.nodes[l.to].name + " (" + l.stage + "): " +
               (l.bps ? gbit(l.bps) + " Gb/s" : std::string("failed")) + (l.error.empty() ? "" : " " + l.error) + "\n";
    }
    for (const auto& f : r.findings) out += "  finding: " + f + "\n";
    for (const auto& f : r.notes) out += "  note: " + f + "\n";
    for (const auto& s : r.stages)
        if (s.status != StageStatus::ok)
            out += "  stage " + s.name + ": " + to_string(s.status) + (s.detail.empty() ? "" : " (" + s.detail + ")") + "\n";
    return out;
}

}  // namespace gangway::preflight
