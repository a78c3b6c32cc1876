#include "node_card.hpp"

#include "../node/file.hpp"
#include "ib_ports.hpp"
#include "../node/pci_devices.hpp"
#include "../node/sysfs.hpp"
#include "../../base/saturate.hpp"
#include "../../base/text.hpp"
#include "../../preflight/version_text.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace gangway::sys {
namespace fs = std::filesystem;

std::vector<preflight::Nic> read_nics(const std::string& root) {
    std::vector<preflight::Nic> out;
    for (const auto& p : entries(sysfs_base(root) + "/sys/class/net")) {
        const auto name = p.filename().string();
        if (name == "lo" || name == "bonding_masters") continue;
        preflight::Nic n;
        n.name = name;
        n.kind = "net";
        n.state = first_line(p / "operstate");
        if (n.state.empty()) n.state = "unknown";
        // Mb/s; -1 (or nothing) when the link is down.
        n.rate_mbps = parse_int<long>(first_line(p / "speed")).value_or(-1);
        if (n.rate_mbps <= 0) n.rate_mbps = -1;
        out.push_back(std::move(n));
    }
    // The ports from the one RDMA port reader, only what a card compares.
    for (const auto& p : read_ib_ports(root, {}, PortDetail::brief)) {
        preflight::Nic n;
        n.name = verbs::port_name(p);
        n.kind = "ib";
        // "4: ACTIVE" -> ACTIVE; rate "400 Gb/sec (4X NDR)" -> 400000
        n.state = p.state_name.empty() ? "unknown" : p.state_name;
        // A rate no port has (inf, nan, 1e300, negative) is unknown, not undefined behaviour.
        const double gbps = p.rate_gbps;
        n.rate_mbps = gbps > 0 && gbps < 1e9 ? saturate<long>(gbps * 1000) : -1;
        out.push_back(std::move(n));
    }
    return out;
}

std::vector<preflight::Nic> live_net_nics() {
    std::vector<preflight::Nic> out;
    ifaddrs* ifa = nullptr;
    if (::getifaddrs(&ifa) != 0) return out;
    std::map<std::string, std::vector<std::string>> addrs;
    std::vector<std::string> names;
    for (auto* p = ifa; p; p = p->ifa_next) {
        if (!p->ifa_name || std::find(names.begin(), names.end(), p->ifa_name) != names.end()) {
        } else {
            names.push_back(p->ifa_name);
        }
        if (!p->ifa_addr || (p->ifa_addr->sa_family != AF_INET && p->ifa_addr->sa_family != AF_INET6)) continue;
        char buf[64] = {};
        const void* src = p->ifa_addr->sa_family == AF_INET
                              ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(p->ifa_addr)->sin_addr)
                              : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(p->ifa_addr)->sin6_addr);
        if (::inet_ntop(p->ifa_addr->sa_family, src, buf, sizeof buf)) addrs[p->ifa_name].push_back(buf);
    }
    ::freeifaddrs(ifa);
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (const auto& name : names) {
        if (name.size() >= IFNAMSIZ) continue;
        preflight::Nic n;
        n.name = name;
        n.kind = "net";
        n.addrs = addrs[name];
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
        if (s >= 0 && ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0)
            n.state = !(ifr.ifr_flags & IFF_UP) ? "down" : (ifr.ifr_flags & IFF_RUNNING) ? "up" : "lowerlayerdown";
        else
            n.state = "unknown";
        ethtool_cmd ec{};
        ec.cmd = ETHTOOL_GSET;
        ifr.ifr_data = reinterpret_cast<char*>(&ec);
        if (s >= 0 && ::ioctl(s, SIOCETHTOOL, &ifr) == 0) {
            const auto speed = ethtool_cmd_speed(&ec);
            n.rate_mbps = (speed == 0 || speed == static_cast<std::uint32_t>(SPEED_UNKNOWN)) ? -1 : static_cast<long>(speed);
        }
        // Where /sys shows this very interface, its operstate is the better word.
        const fs::path sys = fs::path("/sys/class/net") / name;
        if (first_line(sys / "ifindex") == std::to_string(::if_nametoindex(name.c_str()))) {
            const auto st = first_line(sys / "operstate");
            if (!st.empty() && st != "unknown") n.state = st;
        }
        out.push_back(std::move(n));
    }
    if (s >= 0) ::close(s);
    return out;
}

unsigned count_gpus(const std::string& root) {
    // The node check's and the pinning's GPUs (pci_gpus, is_gpu_pci), NVIDIA's of them.
    const auto gpus = pci_gpus(root);
    return static_cast<unsigned>(std::count_if(gpus.begin(), gpus.end(), [](const PciFunction& f) { return f.vendor == 0x10de; }));
}

std::map<std::string, std::string> read_versions(const std::string& root) {
    std::map<std::string, std::string> v;
    const std::string b = sysfs_base(root);
    v["kernel"] = first_line(b + "/proc/sys/kernel/osrelease");
    if (v["kernel"].empty()) v["kernel"] = "none";

    std::string drv = first_line(b + "/sys/module/nvidia/version");
    if (drv.empty()) drv = preflight::driver_version_from_proc(first_line(b + "/proc/driver/nvidia/version"));
    v["driver"] = drv.empty() ? "none" : drv;

    // Through the one reader, bounded: a few hundred bytes, never a FIFO waited on.
    ReadOptions o{kMaxAttr};
    std::string cuda = preflight::cuda_version_from_json(read_file_at(AT_FDCWD, b + "/usr/local/cuda/version.json", o).text);
    if (cuda.empty()) cuda = preflight::cuda_version_from_txt(first_line(b + "/usr/local/cuda/version.txt"));
    v["cuda"] = cuda.empty() ? "none" : cuda;

    // The newest release file in the first directory that has one.
    std::string nccl;
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                            "/usr/local/cuda/lib64", "/usr/local/lib", "/opt/nccl/lib"}) {
        for (const auto& p : entries(b + dir))
            if (auto n = preflight::nccl_version_from_soname(p.filename().string());
                !n.empty() && (nccl.empty() || preflight::version_less(nccl, n)))
                nccl = n;
        if (!nccl.empty()) break;
    }
    v["nccl"] = nccl.empty() ? "none" : nccl;
    return v;
}

}  // namespace gangway::sys
