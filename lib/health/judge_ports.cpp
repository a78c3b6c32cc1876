// RDMA ports: state, physical state, rate, and the growth of their link
// error counters between two runs.
#include <cstdio>

#include "judge.hpp"

namespace gangway::health {
namespace {

std::string g(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
}

}  // namespace

std::vector<Record> judge_ports(const std::vector<PortFacts>& ports, std::optional<double> site_rate) {
    std::vector<verbs::Port> plain;
    for (const auto& f : ports) plain.push_back(f.port);
    const auto best = verbs::best_active_rate(plain);
    const double want = site_rate ? *site_rate : best.gbps;
    std::vector<Record> out;
    for (const auto& f : ports) {
        const auto& p = f.port;
        const std::string n = verbs::port_name(p);
        const std::string state = p.state_name.empty() ? "unknown" : p.state_name;
        Record st{Check::port_state, n, state, "", "ACTIVE", Status::ok, "", false};
        if (p.state != 4) {
            st.status = Status::failed;
            st.reason = n + " port " + state + ", not ACTIVE" + (p.state == 2 ? " (no subnet manager has configured it)" : "");
        }
        out.push_back(std::move(st));
        const std::string phys = p.phys_name.empty() ? "unknown" : p.phys_name;
        Record ph{Check::port_phys, n, phys, "", "LinkUp", Status::ok, "", false};
        if (p.phys_state != 5) {
            ph.status = Status::failed;
            ph.reason = n + " physical link " + phys + ", not LinkUp (cable, transceiver or switch port)";
        }
        out.push_back(std::move(ph));
        Record r{Check::port_rate, n, g(p.rate_gbps), "Gb/s", want > 0 ? g(want) : "", Status::ok, "", false};
        if (!verbs::port_up(p)) {
            r.status = Status::skipped;
            r.reason = "the port is not up";
        } else if (want > 0 && p.rate_gbps + 1e-9 < want) {
            r.status = Status::failed;
            r.reason = n + " rate " + r.figure + " of " + r.expected + " Gb/s";
            if (p.width && best.width && p.width < best.width)
                r.reason += " (" + std::to_string(p.width) + "X of " + std::to_string(best.width) + "X: a lane is down)";
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::map<std::string, std::uint64_t> counter_values(const std::vector<PortFacts>& ports) {
    std::map<std::string, std::uint64_t> out;
    for (const auto& f : ports)
        for (const auto& [k, v] : f.counters) out[verbs::port_name(f.port) + " " + k] = v;
    return out;
}

std::vector<Record> judge_counters(const std::vector<PortFacts>& ports, const std::map<std::string, std::uint64_t>* previous,
                                   const SiteConf& c) {
    std::vector<Record> out;
    for (const auto& f : ports)
        for (const char* k : kErrorCounters) {
            const auto it = f.counters.find(k);
            if (it == f.counters.end()) continue;
            const std::string dev = verbs::port_name(f.port) + " " + k;
            const std::uint64_t max = std::string(k) == "symbol_error" ? c.symbol_error_max
                                      : std::string(k) == "link_downed" ? c.link_downed_max
                                                                        : c.link_error_recovery_max;
            Record r{Check::port_errors, dev, "", "counts", "<= " + std::to_string(max), Status::ok, "", false};  // since the last run
            const auto before = previous ? previous->find(dev) : std::map<std::string, std::uint64_t>::const_iterator{};
            if (!previous || before == previous->end()) {
                r.status = Status::skipped;
                r.reason = "no earlier reading: this one is the next run's baseline";
            } else if (it->second < before->second) {
                r.status = Status::skipped;
                r.reason = "the counter went back (a reset or driver reload): a new baseline";
            } else {
                const std::uint64_t grew = it->second - before->second;
                r.figure = std::to_string(grew);
                if (grew > max) {
                    r.status = Status::failed;
                    r.reason = dev + " +" + r.figure + " since the last run (at most " + std::to_string(max) + ")";
                }
            }
            out.push_back(std::move(r));
        }
    return out;
}

}  // namespace gangway::health
