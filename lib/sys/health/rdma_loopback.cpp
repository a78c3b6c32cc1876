#include "rdma_loopback.hpp"

#include <chrono>
#include <cstdio>

#include "../../base/error.hpp"
#include "../stages/verbs_stage.hpp"

namespace gangway::sys {
using preflight::StageStatus;

StageOutcome run_rdma_loopback(const std::vector<verbs::Port>& ports, const LoopbackOptions& o) {
    const auto t0 = std::chrono::steady_clock::now();
    gpu::StageVerdict v;
    std::vector<std::string> figures;
    unsigned tested = 0;
    for (const auto& p : ports) {
        if (!verbs::port_up(p)) continue;  // the port checks name it already
        const std::string name = p.hca + "/" + std::to_string(p.port);
        std::string why;
        const auto gid = verbs::choose_gid(p, o.t.gid_index, why);
        if (!gid) {
            v.findings.push_back({name, why});
            continue;
        }
        ++tested;
        try {
            constexpr std::size_t kBytes = std::size_t(8) << 20, kMsg = std::size_t(1) << 20;
            RdmaEndpoint a(p, *gid, kBytes), b(p, *gid, kBytes);
            a.connect(b.local());
            b.connect(a.local());
            const double bps = a.write_for(o.ms, kMsg);
            char f[96];
            std::snprintf(f, sizeof f, "%s %.1f Gb/s", name.c_str(), bps * 8 / 1e9);
            figures.push_back(f);
            const double rate = o.t.ib_rate_gbps.value_or(p.rate_gbps);
            if (verbs::rdma_slow(bps, rate, o.t.rdma_ratio)) {
                char b2[160];
                std::snprintf(b2, sizeof b2, "RDMA loopback write %.1f Gb/s, expected >= %.1f Gb/s (%.2f x %g Gb/s)",
                              bps * 8 / 1e9, o.t.rdma_ratio * rate, o.t.rdma_ratio, rate);
                v.findings.push_back({name, b2});
            }
        } catch (const Error& e) {
            v.findings.push_back({name, std::string("RDMA loopback write failed: ") + e.what()});
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!tested && v.findings.empty()) return to_outcome("rdma", gpu::skipped("no RDMA port is up", false, "rdma"), secs);
    v.status = v.findings.empty() ? StageStatus::ok : StageStatus::failed;
    std::string detail = std::to_string(tested) + " port(s)";
    for (const auto& f : figures) detail += ", " + f;
    v.detail = detail;
    return to_outcome("rdma", v, secs);
}

}  // namespace gangway::sys
