#include "ib_ports.hpp"

#include <algorithm>
#include <filesystem>

#include "../../base/text.hpp"
#include "../node/sysfs.hpp"

namespace gangway::sys {
namespace fs = std::filesystem;
namespace {

void read_gids(const std::string& root, const fs::path& pd, verbs::Port& p) {
    for (const auto& g : entries(pd / "gids")) {
        const auto text = first_line(g);
        if (text.empty() || verbs::zero_gid(text)) continue;
        const auto index = parse_uint<unsigned>(g.filename().string());
        if (!index) continue;
        verbs::Gid gid;
        gid.index = *index;
        gid.gid = text;
        gid.type = first_line(pd / "gid_attrs" / "types" / g.filename());
        gid.ndev = first_line(pd / "gid_attrs" / "ndevs" / g.filename());
        if (p.netdev_mtu < 0 && !gid.ndev.empty())
            if (const auto mtu = parse_int<int>(first_line(sysfs_base(root) + "/sys/class/net/" + gid.ndev + "/mtu")))
                p.netdev_mtu = *mtu;
        p.gids.push_back(std::move(gid));
    }
}

}  // namespace

std::string ib_class_dir(const std::string& root) { return sysfs_base(root) + "/sys/class/infiniband"; }

std::vector<std::string> ib_devices(const std::string& root) {
    std::vector<std::string> out;
    for (const auto& dev : entries(ib_class_dir(root))) out.push_back(dev.filename().string());
    return out;
}

std::string ib_port_dir(const std::string& root, const std::string& hca, unsigned port) {
    return ib_class_dir(root) + "/" + hca + "/ports/" + std::to_string(port);
}

std::vector<verbs::Port> read_ib_ports(const std::string& root, const std::vector<std::string>& hcas, PortDetail detail) {
    std::vector<verbs::Port> out;
    for (const auto& dev : entries(ib_class_dir(root))) {
        const auto hca = dev.filename().string();
        if (!hcas.empty() && std::find(hcas.begin(), hcas.end(), hca) == hcas.end()) continue;
        for (const auto& pd : entries(dev / "ports")) {
            const auto number = parse_uint<unsigned>(pd.filename().string());
            if (!number) continue;
            verbs::Port p;
            p.hca = hca;
            p.port = *number;
            std::tie(p.state, p.state_name) = verbs::parse_state(first_line(pd / "state"));
            const auto r = verbs::parse_rate(first_line(pd / "rate"));
            p.rate_gbps = r.gbps;
            p.width = r.width;
            p.speed = r.speed;
            if (detail == PortDetail::full) {
                std::tie(p.phys_state, p.phys_name) = verbs::parse_state(first_line(pd / "phys_state"));
                p.link_layer = first_line(pd / "link_layer");
                read_gids(root, pd, p);
            }
            out.push_back(std::move(p));
        }
    }
    return out;
}

}  // namespace gangway::sys
