#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../base/saturate.hpp"

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

std::string num(double x) {
    if (!std::isfinite(x)) return "null";
    return fmt("%.6g", x);
}

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

std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else o += c;
    }
    return o;
}

std::string json_escape(const std::string& s) {
    std::string o;
    for (unsigned char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\t': o += "\\t"; break;
            default:
                if (c < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    o += b;
                }
                else o += char(c);
        }
    }
    return o;
}

std::string render_json(const Report& r) {
    auto q = [](const std::string& s) { return "\"" + json_escape(s) + "\""; };
    auto opt = [](std::optional<double> x) { return x ? num(*x) : std::string("null"); };
    std::string o = "{\n";
    o += "  \"schema\": \"gangway-preflight/1\",\n";
    o += "  \"verdict\": " + q(to_string(verdict(r))) + ",\n";
    o += "  \"exit_code\": " + std::to_string(exit_code(verdict(r))) + ",\n";
    o += "  \"job_id\": " + q(r.job_id) + ",\n  \"step_id\": " + q(r.step_id) + ",\n";
    o += "  \"mode\": " + q(r.mode) + ",\n  \"bootstrap\": " + q(r.bootstrap) + ",\n";
    o += "  \"seconds\": " + num(r.seconds) + ",\n";
    o += "  \"deadline_s\": " + num(r.deadline_s) + ",\n";
    o += "  \"expected_bps\": " + num(r.expected_bps) + ",\n";
    o += "  \"slow_ratio\": " + num(r.slow_ratio) + ",\n";
    o += "  \"nodes\": [";
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& n = r.nodes[i];
        o += i ? ",\n" : "\n";
        o += "    {\"name\": " + q(n.name) + ", \"addr\": " + q(n.addr) + ", \"status\": " + q(to_string(n.status)) +
             ", \"tx_bps\": " + opt(n.tx_bps) + ", \"rx_bps\": " + opt(n.rx_bps) +
             ", \"nic_mbps\": " + std::to_string(n.nic_mbps) + ", \"reasons\": [";
        for (std::size_t k = 0; k < n.reasons.size(); ++k) o += (k ? ", " : "") + q(n.reasons[k]);
        o += "]}";
    }
    o += "\n  ],\n  \"links\": [";
    for (std::size_t i = 0; i < r.links.size(); ++i) {
        const auto& l = r.links[i];
        o += i ? ",\n" : "\n";
        const std::string from = l.from < r.nodes.size() ? r.nodes[l.from].name : "?";
        const std::string to = l.to < r.nodes.size() ? r.nodes[l.to].name : "?";
        o += "    {\"from\": " + q(from) + ", \"to\": " + q(to) + ", \"stage\": " + q(l.stage) +
             ", \"ok\": " + (l.ok ? "true" : "false") + ", \"bps\": " + opt(l.bps) + ", \"ms\": " + opt(l.ms) +
             ", \"error\": " + q(l.error) + "}";
    }
    o += "\n  ],\n  \"stages\": [";
    for (std::size_t i = 0; i < r.stages.size(); ++i) {
        const auto& s = r.stages[i];
        o += i ? ",\n" : "\n";
        o += "    {\"name\": " + q(s.name) + ", \"status\": " + q(to_string(s.status)) + ", \"detail\": " + q(s.detail) +
             ", \"seconds\": " + num(s.seconds) + "}";
    }
    auto node_name = [&](unsigned i) { return q(i < r.nodes.size() ? r.nodes[i].name : "?"); };
    o += "\n  ],\n  \"gpus\": [";
    for (std::size_t i = 0; i < r.gpus.size(); ++i) {
        const auto& g = r.gpus[i];
        o += (i ? ",\n" : "\n") + std::string("    {\"node\": ") + node_name(g.node) + ", \"index\": " + std::to_string(g.index) +
             ", \"name\": " + q(g.name) + ", \"bus_id\": " + q(g.bus_id) + ", \"pcie_gen\": " + std::to_string(g.pcie_gen) +
             ", \"pcie_width\": " + std::to_string(g.pcie_width) + ", \"h2d_gbps\": " + opt(g.h2d_gbps) +
             ", \"d2h_gbps\": " + opt(g.d2h_gbps) + ", \"error\": " + q(g.error) + "}";
    }
    o += "\n  ],\n  \"nccl\": [";
    for (std::size_t i = 0; i < r.nccl.size(); ++i) {
        const auto& n = r.nccl[i];
        o += (i ? ",\n" : "\n") + std::string("    {\"node\": ") + node_name(n.node) + ", \"ranks\": " + std::to_string(n.nranks) +
             ", \"bytes\": " + std::to_string(saturate<long long>(n.bytes)) + ", \"algbw_gbps\": " + opt(n.algbw_gbps) + ", \"busbw_gbps\": " + opt(n.busbw_gbps) +
             ", \"data_ok\": " + (n.data_ok ? "true" : "false") + ", \"error\": " + q(n.error) + "}";
    }
    o += "\n  ],\n  \"ports\": [";
    for (std::size_t i = 0; i < r.ports.size(); ++i) {
        const auto& p = r.ports[i];
        o += (i ? ",\n" : "\n") + std::string("    {\"node\": ") + node_name(p.node) + ", \"name\": " + q(p.name) +
             ", \"rate_gbps\": " + num(p.rate_gbps) + ", \"usable\": " + (p.usable ? "true" : "false") + "}";
    }
    o += "\n  ],\n  \"findings\": [";
    for (std::size_t i = 0; i < r.findings.size(); ++i) o += (i ? ", " : "") + q(r.findings[i]);
    o += "],\n  \"notes\": [";
    for (std::size_t i = 0; i < r.notes.size(); ++i) o += (i ? ", " : "") + q(r.notes[i]);
    o += "]\n}\n";
    return o;
}

}  // namespace gangway::preflight
