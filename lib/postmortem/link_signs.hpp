// The node's links, HCAs and GPUs against the job's start: the signs of a
// job's stop that the kernel log may not hold. The Prolog's `gangway
// postmortem snapshot` keeps, in root's DIR/JOB/node.start (NodeStart), each
// configured network interface (one with an IPv4 or a non-link-local IPv6
// address, the site's data network among them) with its state and the
// kernel's carrier counters, and which RDMA devices and GPUs are present.
// The Epilog's collector reads them again and compares:
//   - a link that had carrier at the start and lost it during the job is a
//     link_down sign: its carrier_down_count grew, or (a kernel without it)
//     carrier_changes grew, or it has no carrier now (set down, unplugged,
//     gone). So a link set down mid-job and up again before the Epilog is seen;
//   - a link without carrier at the start (an unplugged port, docker0,
//     virbr0) is no sign, whatever it did since (docker0 comes and goes with
//     containers);
//   - an RDMA device or a GPU present at the start and gone at the end is a
//     hca_lost or gpu_lost sign.
// Their time is the Epilog's reading; a link the kernel's own line already
// names (kernel_signs: "Link is Down") keeps that line's time instead.
// A bridge of containers' or VMs' ports alone (docker0 with a container
// running, virbr0) is never judged. Without a snapshot (no Prolog) the rule is the end's state alone: an
// addressed link that is up without carrier is a sign, unless the kernel
// says it never had carrier (carrier_up_count 0).
// Pure: the caller reads rtnetlink and sysfs (lib/sys/postmortem/links).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

// One network interface as rtnetlink gives it.
struct LinkFacts {
    std::string name;                // eth1, ib0: at most 15 bytes, no blank or '/' (the kernel's rule)
    bool admin_up = false;           // IFF_UP
    bool carrier = false;            // IFF_RUNNING: up, with carrier (operationally up)
    bool addressed = false;          // an IPv4 or a non-link-local IPv6 address
    // A bridge none of whose ports is a NIC (or a bond, team or VLAN of one):
    // docker0, virbr0, cni0, whose carrier comes and goes with containers and
    // VMs. Never judged: it carries no traffic between the job's nodes.
    bool virtual_bridge = false;
    // The kernel's counters since the interface was made (IFLA_CARRIER_CHANGES,
    // IFLA_CARRIER_UP_COUNT, IFLA_CARRIER_DOWN_COUNT); unset where it keeps none.
    std::optional<std::uint64_t> changes, ups, downs;
    bool operator==(const LinkFacts&) const = default;
};

// What the Prolog kept: the addressed links by name, the RDMA devices
// (mlx5_0) and the GPUs (PCI bus id).
struct NodeStart {
    std::map<std::string, LinkFacts> links;
    std::set<std::string> hcas, gpus;
    bool empty() const { return links.empty() && hcas.empty() && gpus.empty(); }
    bool operator==(const NodeStart&) const = default;
};
inline constexpr std::size_t kMaxNodeStartLines = 4096;
inline constexpr std::size_t kMaxDeviceName = 64;

// The snapshot of `links` (the addressed ones, not a virtual bridge), `hcas` and `gpus`.
NodeStart node_start(const std::vector<LinkFacts>& links, const std::vector<std::string>& hcas,
                     const std::vector<std::string>& gpus);

// One line per entry: "link NAME admin=0|1 carrier=0|1[ changes=N][ ups=N][ downs=N]",
// "hca NAME", "gpu BUSID". parse_node_start throws gangway::Error naming the
// line for anything else, a name that is not 1 to kMaxDeviceName printable
// bytes without blank, or past kMaxNodeStartLines lines.
std::string render_node_start(const NodeStart& s);
NodeStart parse_node_start(std::string_view text);

// The links' signs at t_ns (the reading's time); `start` null: no snapshot.
// A link that `timed` (the kernel log's signs) already names as link_down
// gets no second sign. At most kMaxEvidence.
std::vector<Evidence> link_signs(const NodeStart* start, const std::vector<LinkFacts>& now, std::int64_t t_ns,
                                 const std::vector<Evidence>& timed = {});

// The RDMA devices and GPUs of `start` that are not in `hcas` / `gpus` now.
std::vector<Evidence> device_signs(const NodeStart& start, const std::vector<std::string>& hcas,
                                   const std::vector<std::string>& gpus, std::int64_t t_ns);

}  // namespace gangway::postmortem
