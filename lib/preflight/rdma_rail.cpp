#include "rdma_rail.hpp"

#include <algorithm>

#include "../base/error.hpp"

namespace gangway::preflight {

namespace {

bool passed(const Kv* answer) { return answer && kv_str(*answer, "ok") == "1"; }

std::string why(const std::string& node, const Kv* answer) {
    return node + ": " + (answer ? kv_str(*answer, "error") : std::string("no answer"));
}

}  // namespace

Measurement rdma_link(const Flow& f, const RdmaEnd& from, const RdmaEnd& to) {
    Measurement m{f.from, f.to, 0, true, ""};
    if (!passed(from.prep)) m.ok = false, m.error = why(from.node, from.prep);
    else if (!passed(to.prep)) m.ok = false, m.error = why(to.node, to.prep);
    else if (!passed(from.connect)) m.ok = false, m.error = why(from.node, from.connect);
    else if (!passed(to.connect)) m.ok = false, m.error = why(to.node, to.connect);
    else if (!passed(from.go)) m.ok = false, m.error = why(from.node, from.go);
    else m.bps = kv_f64(*from.go, "bps");
    return m;
}

RailBlame blame_rail(unsigned rail, const std::vector<RailPort>& ports, const std::vector<Measurement>& ring,
                     std::optional<double> site_rate_gbps, double ratio) {
    const auto n = static_cast<unsigned>(ports.size());
    for (const auto& m : ring)
        if (m.from >= n || m.to >= n) throw Error("an RDMA link of a position beyond the rail's " + std::to_string(n) + " ports");
    RailBlame out;
    for (const auto& p : ports) out.port_rate_gbps = std::max(out.port_rate_gbps, p.rate_gbps);
    if (site_rate_gbps) out.port_rate_gbps = *site_rate_gbps;
    const double port_bps = out.port_rate_gbps * 1e9 / 8;
    const auto b = blame_ring(n, ring, ratio, port_bps);
    std::vector<std::string> names;
    for (const auto& p : ports) names.push_back(p.node);
    const std::string r = "rail " + std::to_string(rail);
    for (unsigned k : b.blamed)
        out.faulty.emplace_back(k, "rdma " + r + " (" + ports[k].port + "): its writes to and from " +
                                       "its ring neighbours fail or are slow (" + describe_links(k, ring, names, fmt_gbit) + ")");
    if (!b.some_good)
        out.findings.push_back("rdma " + r + ": every link fails or is below " + fmt_gbit(ratio * out.port_rate_gbps * 1e9 / 8) +
                               ": the fabric, a site-wide setting (GID, MTU, permissions) or the expected rate "
                               "(GANGWAY_IB_RATE_GBPS) rather than one node");
    for (std::size_t k = 0; k < ring.size(); ++k)
        if (b.analysis.slow[k]) {
            out.failed = true;
            const auto& m = ring[k];
            out.findings.push_back("rdma " + names[m.from] + " -> " + names[m.to] + " " + r +
                                   (m.ok ? ": " + fmt_gbit(m.bps) + " on a " + fmt_gbit(port_bps) + " port" : ": " + m.error));
        }
    return out;
}

ConfirmedRail confirm_rail(const RailBlame& first, const std::optional<RailBlame>& again, const std::vector<RailPort>& ports) {
    ConfirmedRail out;
    if (!again) {
        out.blame = first;
        return out;
    }
    out.blame.port_rate_gbps = again->port_rate_gbps;
    out.blame.failed = first.failed && again->failed;
    if (out.blame.failed) out.blame.findings = again->findings;
    for (const auto& f : again->faulty) {
        const bool both = std::any_of(first.faulty.begin(), first.faulty.end(), [&](const auto& x) { return x.first == f.first; });
        if (both) out.blame.faulty.push_back(f);
    }
    for (const auto& f : first.faulty) {
        const unsigned k = f.first;
        const bool kept = std::any_of(out.blame.faulty.begin(), out.blame.faulty.end(), [&](const auto& x) { return x.first == k; });
        if (!kept) out.notes.push_back((k < ports.size() ? ports[k].node : "?") + ": " + f.second + "; fine when measured again, not named");
    }
    if (first.failed && !again->failed) out.notes.push_back("rdma: a link slow once, fine when measured again");
    return out;
}

}  // namespace gangway::preflight
