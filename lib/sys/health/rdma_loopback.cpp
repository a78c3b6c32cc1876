#include "rdma_loopback.hpp"

#include <cstdio>

#include "../stages/verbs_stage.hpp"

namespace gangway::sys {
using preflight::StageStatus;

namespace {

// Two endpoints on one port, each connected to the other, and `ms` of writes
// from the first into the second: bytes per second, or the step that failed.
Result<double> loopback_write(const verbs::Port& p, unsigned gid, std::size_t bytes, long ms, std::size_t msg) {
    auto a = RdmaEndpoint::open(p, gid, bytes);
    if (!a) return Failure{a.error()};
    auto b = RdmaEndpoint::open(p, gid, bytes);
    if (!b) return Failure{b.error()};
    if (auto c = (*a)->connect((*b)->local()); !c) return Failure{c.error()};
    if (auto c = (*b)->connect((*a)->local()); !c) return Failure{c.error()};
    return (*a)->write_for(ms, msg);
}

}  // namespace

StageOutcome run_rdma_loopback(const std::vector<verbs::Port>& ports, const LoopbackOptions& o) {
    const auto t0 = Clock::now();
    gpu::StageVerdict v;
    std::vector<std::string> figures;
    unsigned tested = 0;
    for (const auto& p : ports) {
        if (!verbs::port_up(p)) continue;  // the port checks name it already
        const std::string name = verbs::port_name(p);
        std::string why;
        const auto gid = verbs::choose_gid(p, o.t.gid_index, why);
        if (!gid) {
            v.findings.push_back({name, why});
            continue;
        }
        ++tested;
        constexpr std::size_t kBytes = std::size_t(8) << 20, kMsg = std::size_t(1) << 20;
        const auto bps = loopback_write(p, *gid, kBytes, o.ms, kMsg);
        if (!bps) {
            v.findings.push_back({name, "RDMA loopback write failed: " + bps.error()});
            continue;
        }
        char f[96];
        std::snprintf(f, sizeof f, "%s %.1f Gb/s", name.c_str(), *bps * 8 / 1e9);
        figures.push_back(f);
        const double rate = o.t.ib_rate_gbps.value_or(p.rate_gbps);
        if (verbs::rdma_slow(*bps, rate, o.t.rdma_ratio)) {
            char b2[160];
            std::snprintf(b2, sizeof b2, "RDMA loopback write %.1f Gb/s, expected >= %.1f Gb/s (%.2f x %g Gb/s)",
                          *bps * 8 / 1e9, o.t.rdma_ratio * rate, o.t.rdma_ratio, rate);
            v.findings.push_back({name, b2});
        }
    }
    const double secs = seconds_since(t0);
    if (!tested && v.findings.empty()) return to_outcome("rdma", gpu::skipped("no RDMA port is up", false, "rdma"), secs);
    v.status = v.findings.empty() ? StageStatus::ok : StageStatus::failed;
    std::string detail = std::to_string(tested) + " port(s)";
    for (const auto& f : figures) detail += ", " + f;
    v.detail = detail;
    return to_outcome("rdma", v, secs);
}

}  // namespace gangway::sys
