#include "rdma_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "../base/error.hpp"

namespace gangway::verbs {

std::pair<int, std::string> parse_state(const std::string& s) {
    auto c = s.find(':');
    if (c == std::string::npos) return {-1, s};
    int code = -1;
    try {
        code = std::stoi(s.substr(0, c));
    } catch (...) {
        return {-1, s};
    }
    auto name = s.substr(c + 1);
    name.erase(0, name.find_first_not_of(' '));
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    return {code, name};
}

Rate parse_rate(const std::string& s) {
    Rate r;
    try {
        r.gbps = std::stod(s);
    } catch (...) {
        return r;
    }
    auto open = s.find('(');
    auto close = s.find(')', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) return r;
    std::istringstream in(s.substr(open + 1, close - open - 1));
    std::string w, sp;
    in >> w >> sp;
    if (!w.empty() && (w.back() == 'X' || w.back() == 'x')) {
        try {
            r.width = static_cast<unsigned>(std::stoul(w.substr(0, w.size() - 1)));
        } catch (...) {
        }
    }
    r.speed = sp;
    return r;
}

bool zero_gid(const std::string& gid) {
    for (char c : gid)
        if (c != '0' && c != ':') return false;
    return true;
}

bool ipv4_mapped(const std::string& gid) {
    // 0000:0000:0000:0000:0000:ffff:XXXX:XXXX
    const std::string h = gid.size() >= 39 ? gid : "";
    return h.compare(0, 30, "0000:0000:0000:0000:0000:ffff:") == 0;
}

bool roce(const Port& p) { return p.link_layer == "Ethernet"; }

namespace {
bool link_local(const std::string& gid) { return gid.compare(0, 4, "fe80") == 0; }
bool v2(const Gid& g) { return g.type.find("RoCE v2") != std::string::npos; }
}  // namespace

std::optional<unsigned> choose_gid(const Port& p, std::optional<int> wanted, std::string& why) {
    if (wanted) {
        for (const auto& g : p.gids)
            if (static_cast<int>(g.index) == *wanted) return g.index;
        why = "GID index " + std::to_string(*wanted) + " (GANGWAY_IB_GID_INDEX or NCCL_IB_GID_INDEX) is empty on " + p.hca +
              "/" + std::to_string(p.port);
        return std::nullopt;
    }
    if (!roce(p)) {
        for (const auto& g : p.gids)
            if (g.index == 0) return 0u;
        why = "no GID 0 on " + p.hca + "/" + std::to_string(p.port) + " (port not initialised by the subnet manager?)";
        return std::nullopt;
    }
    for (const auto& g : p.gids)
        if (v2(g) && ipv4_mapped(g.gid)) return g.index;
    for (const auto& g : p.gids)
        if (v2(g) && !link_local(g.gid)) return g.index;
    for (const auto& g : p.gids)
        if (v2(g)) return g.index;
    why = "no RoCE v2 GID on " + p.hca + "/" + std::to_string(p.port) +
          " (give its netdev an IP address; RoCE v1 does not cross routers)";
    return std::nullopt;
}

unsigned mtu_bytes(unsigned e) { return e >= 1 && e <= 5 ? 128u << e : 0; }

unsigned mtu_enum(unsigned bytes) {
    unsigned e = 0;
    for (unsigned k = 1; k <= 5; ++k)
        if (mtu_bytes(k) <= bytes) e = k;
    return e;
}

unsigned roce_active_mtu_bytes(int netdev_mtu) {
    if (netdev_mtu <= 96) return 0;
    return mtu_bytes(mtu_enum(static_cast<unsigned>(netdev_mtu - 96)));
}

QpAttrs choose_qp_attrs(const Port& local, unsigned local_mtu, unsigned remote_mtu, unsigned gid_index) {
    QpAttrs a;
    unsigned m = std::min(local_mtu ? local_mtu : 1024u, remote_mtu ? remote_mtu : 1024u);
    a.path_mtu = std::max(1u, mtu_enum(m));
    a.timeout = 14;
    a.retry_cnt = 3;
    a.rnr_retry = 3;
    a.min_rnr_timer = 12;
    a.max_rd_atomic = 1;
    a.sgid_index = gid_index;
    if (roce(local)) {
        a.is_global = true;
        a.hop_limit = 255;
    } else {
        // IB within one subnet: LID routing, no GRH.
        a.is_global = false;
        a.hop_limit = 0;
    }
    return a;
}

double retry_budget_ms(const QpAttrs& a) { return 4.096e-3 * std::ldexp(1.0, static_cast<int>(a.timeout)) * (a.retry_cnt + 1); }

std::string gid_hex(const std::string& s) {
    std::string h;
    for (char c : s) {
        if (c == ':') continue;
        if (!std::isxdigit(static_cast<unsigned char>(c))) throw Error("malformed GID \"" + s + "\"");
        h += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (h.size() != 32) throw Error("malformed GID \"" + s + "\": not 128 bits");
    return h;
}

void qp_info_to_kv(const QpInfo& q, const std::string& p, preflight::Kv& out) {
    out[p + "lid"] = std::to_string(q.lid);
    out[p + "qpn"] = std::to_string(q.qpn);
    out[p + "psn"] = std::to_string(q.psn);
    out[p + "rkey"] = std::to_string(q.rkey);
    out[p + "addr"] = std::to_string(q.addr);
    out[p + "len"] = std::to_string(q.len);
    out[p + "gid"] = q.gid;
    out[p + "mtu"] = std::to_string(q.mtu);
}

QpInfo qp_info_from_kv(const preflight::Kv& kv, const std::string& p) {
    using preflight::kv_u64;
    QpInfo q;
    auto bounded = [&](const char* k, std::uint64_t max) {
        const auto v = kv_u64(kv, p + k);
        if (v > max) throw Error("malformed message: \"" + p + k + "\" is out of range");
        return v;
    };
    q.lid = static_cast<std::uint16_t>(bounded("lid", 0xffff));
    q.qpn = static_cast<std::uint32_t>(bounded("qpn", 0xffffff));
    q.psn = static_cast<std::uint32_t>(bounded("psn", 0xffffff));
    q.rkey = static_cast<std::uint32_t>(bounded("rkey", 0xffffffffu));
    q.addr = kv_u64(kv, p + "addr");
    q.len = kv_u64(kv, p + "len");
    q.mtu = static_cast<unsigned>(bounded("mtu", 4096));
    q.gid = preflight::kv_str(kv, p + "gid");
    if (!q.gid.empty() && (q.gid.size() != 32 || q.gid.find_first_not_of("0123456789abcdef") != std::string::npos))
        throw Error("malformed message: \"" + p + "gid\" is not 32 hex digits");
    return q;
}

bool port_up(const Port& p) { return p.state == kPortActive && p.phys_state == kPhysLinkUp; }

std::string port_name(const Port& p) { return p.hca + "/" + std::to_string(p.port); }

BestRate best_active_rate(const std::vector<Port>& ports) {
    BestRate b;
    for (const auto& p : ports)
        if (p.state == kPortActive) {
            b.gbps = std::max(b.gbps, p.rate_gbps);
            b.width = std::max(b.width, p.width);
        }
    return b;
}

std::vector<PortVerdict> judge_ports(const std::vector<Port>& ports, std::optional<double> expected, std::optional<int> wanted_gid) {
    const auto [best, best_width] = best_active_rate(ports);
    const double want = expected ? *expected : best;
    std::vector<PortVerdict> out;
    for (const auto& p : ports) {
        PortVerdict v;
        v.name = port_name(p);
        if (p.state != kPortActive) {
            v.usable = false;
            v.problems.push_back("port is " + (p.state_name.empty() ? std::string("in an unknown state") : p.state_name) +
                                 ", not ACTIVE" + (p.state == 2 ? " (INIT: no subnet manager has configured it)" : ""));
        }
        if (p.phys_state != kPhysLinkUp) {
            v.usable = false;
            v.problems.push_back("physical link is " + (p.phys_name.empty() ? std::string("unknown") : p.phys_name) +
                                 ", not LinkUp (cable, transceiver or switch port)");
        }
        if (v.usable && want > 0 && p.rate_gbps + 1e-9 < want) {
            char b[160];
            std::snprintf(b, sizeof b, "rate %g Gb/s, expected %g Gb/s", p.rate_gbps, want);
            std::string s = b;
            if (p.width && best_width && p.width < best_width)
                s += " (trained at " + std::to_string(p.width) + "X instead of " + std::to_string(best_width) +
                     "X: a lane is down)";
            else if (!expected)
                s += " (the node's other ports run faster)";
            v.problems.push_back(s);
        }
        if (v.usable && !roce(p) && p.active_mtu > 0 && p.active_mtu < 4096)
            v.problems.push_back("active MTU " + std::to_string(p.active_mtu) + ", expected 4096 (subnet manager or switch setting)");
        if (v.usable && roce(p)) {
            std::string why;
            if (!choose_gid(p, wanted_gid, why)) v.problems.push_back(why);
            if (p.netdev_mtu > 0 && roce_active_mtu_bytes(p.netdev_mtu) < 4096)
                v.problems.push_back("netdev MTU " + std::to_string(p.netdev_mtu) + " limits RDMA to " +
                                     std::to_string(roce_active_mtu_bytes(p.netdev_mtu)) +
                                     "-byte packets (set MTU 9000 for 4096)");
        }
        out.push_back(std::move(v));
    }
    return out;
}

bool rdma_slow(double bps, double rate_gbps, double ratio) { return rate_gbps > 0 && bps * 8 / 1e9 < ratio * rate_gbps; }

}  // namespace gangway::verbs
