// A node's card: what it says about itself before any traffic is sent, and
// the comparison of all cards (a node whose GPU count, NIC rate or software
// versions differ from the majority is a finding).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "wire.hpp"

namespace gangway::preflight {

struct Nic {
    std::string name;        // eth1, mlx5_0/1
    std::string kind;        // "net" (/sys/class/net) or "ib" (/sys/class/infiniband port)
    std::string state;       // operstate ("up", "down", "lowerlayerdown"), or IB port state ("ACTIVE")
    long rate_mbps = -1;     // -1 when the driver does not say
    std::vector<std::string> addrs;
};

struct Card {
    unsigned node_rank = 0;           // SLURM_NODEID
    std::string node;                 // the SLURM node name
    std::string hostname;
    std::string data_iface;           // NCCL_SOCKET_IFNAME's interface, e.g. eth1
    std::string data_addr;            // NODE_ADDR
    unsigned data_port = 0;           // where this node's speaker listens for probes and bandwidth tests
    std::vector<Nic> nics;
    unsigned gpus = 0;
    std::map<std::string, std::string> versions;  // driver, cuda, nccl, kernel, gangway: "none" when absent
};

// A card's encoded size at most (NICs past it are left out), so that a hello
// fits the frame limit before authentication (kMaxFirstFrame, wire.hpp).
inline constexpr std::size_t kMaxCardBytes = 48u << 10;

// Prefixed keys ("card.*") so a card travels inside a larger message.
void card_to_kv(const Card& c, Kv& out);
// Throws gangway::Error when malformed. At most 4,096 NICs; O(n log n) in the
// message's size, memory at most 48 bytes a byte of it (SECURITY.md).
Card card_from_kv(const Kv& kv);

const Nic* find_nic(const Card& c, const std::string& name);

// The NICs a node's card carries: its data interface and its IB ports, the
// only ones that compare_cards and the data-interface check read. A host's
// other interfaces (container veths, bridges, SR-IOV functions) stay home:
// 134 of them made each hello 20 KB, and at 2,048 nodes the coordinator's
// rendezvous 40 MB, 620 MB of memory and seconds of one core (BENCHMARKS.md,
// "The coordinator at scale").
std::vector<Nic> card_nics(std::vector<Nic> all, const std::string& data_iface);

struct Mismatch {
    unsigned node_rank;
    std::string what;      // "gpus", "nic rate eth1", "version nccl"
    std::string value;     // this node's
    std::string expected;  // the majority's
};

// Cards whose GPU count, data-NIC rate, IB port rates or versions differ from
// the majority value of the cards given. Ties keep the value of the lowest
// node rank as the reference.
std::vector<Mismatch> compare_cards(const std::vector<Card>& cards);

}  // namespace gangway::preflight
