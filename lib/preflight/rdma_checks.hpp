// The pure half of the verbs stage: parsing what sysfs says about an RDMA
// port, judging it (state, physical state, rate and width, MTU, a RoCE v2
// GID), choosing the GID index and the queue-pair attributes of the RDMA
// write test, and the queue-pair details exchanged between nodes. Reading
// sysfs and the verbs calls live in lib/sys/stages/verbs_stage.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wire.hpp"  // Kv

namespace gangway::verbs {

struct Gid {
    unsigned index = 0;
    std::string gid;    // "fe80:0000:0000:0000:0202:c9ff:fe00:0001" as sysfs writes it
    std::string type;   // gid_attrs/types/N: "IB/RoCE v1", "RoCE v2"; "" when absent (IB)
    std::string ndev;   // gid_attrs/ndevs/N: the netdev of a RoCE GID
};

struct Port {
    std::string hca;            // mlx5_0
    unsigned port = 1;
    int state = -1;             // 4 ACTIVE
    std::string state_name;     // ACTIVE
    int phys_state = -1;        // 5 LinkUp
    std::string phys_name;      // LinkUp
    std::string link_layer;     // InfiniBand, Ethernet
    double rate_gbps = 0;       // 200
    unsigned width = 0;         // 4 (4X); 0 unknown
    std::string speed;          // HDR, NDR, ... "" unknown
    std::vector<Gid> gids;      // non-zero entries only
    int netdev_mtu = -1;        // RoCE: the MTU of the port's netdev; -1 unknown
    int active_mtu = -1;        // bytes, from ibv_query_port when libibverbs is there; -1 unknown
};

// "4: ACTIVE" -> {4, "ACTIVE"}; {-1, text} when there is no number.
// This and parse_rate read a sysfs attribute (at most kMaxAttr, 1 MiB): O(n),
// a few copies of it at most (SECURITY.md, "What a parser may spend").
std::pair<int, std::string> parse_state(const std::string& sysfs);
struct Rate {
    double gbps = 0;
    unsigned width = 0;
    std::string speed;
};
// "200 Gb/sec (4X HDR)", "100 Gb/sec (2X HDR)", "25 Gb/sec (1X EDR)", "40 Gb/sec (4X QDR)" -> {200, 4, "HDR"}.
Rate parse_rate(const std::string& sysfs);
bool zero_gid(const std::string& gid);
// ::ffff:a.b.c.d, i.e. an IPv4 address in a RoCE GID.
bool ipv4_mapped(const std::string& gid);
bool roce(const Port& p);  // link layer Ethernet
inline constexpr int kPortActive = 4, kPhysLinkUp = 5;  // sysfs "4: ACTIVE", "5: LinkUp"
bool port_up(const Port& p);  // ACTIVE and LinkUp: may carry RDMA traffic
// "mlx5_0/1": a port's one name in every report, record and counter key.
std::string port_name(const Port& p);

// The GID index for the test: the given one (site/user) when the table has it;
// IB: 0; RoCE: the first RoCE v2 GID with an IPv4 address (what NCCL prefers),
// else the first RoCE v2 GID that is not link-local, else the first RoCE v2 GID.
// nullopt with `why` when there is none.
std::optional<unsigned> choose_gid(const Port& p, std::optional<int> wanted, std::string& why);

// IB MTU enum (1..5: 256..4096 bytes) and back.
unsigned mtu_bytes(unsigned mtu_enum);
unsigned mtu_enum(unsigned bytes);  // largest enum <= bytes; 0 when below 256
// A RoCE port's active MTU from its netdev MTU: the largest IB MTU that fits
// in the netdev MTU less the RoCE v2 headers (GRH 40, UDP 8, BTH 12, XRC 4,
// AtomicETH 28, ICRC 4: 96 bytes), as the kernel computes it.
unsigned roce_active_mtu_bytes(int netdev_mtu);

struct QpAttrs {
    unsigned path_mtu = 0;        // enum
    unsigned timeout = 0;         // local ACK timeout, 4.096 us * 2^timeout
    unsigned retry_cnt = 0, rnr_retry = 0, min_rnr_timer = 0;
    unsigned max_rd_atomic = 1;
    bool is_global = false;       // GRH: always on RoCE
    unsigned sgid_index = 0, hop_limit = 0;
};
// Short timeouts: a dead path fails the test within about 0.3 s rather than
// NCCL's ~30 s (timeout 20, retry_cnt 7): timeout 14 (~67 ms a try), 3
// retries. path_mtu: the smaller of both sides' active MTU. RoCE v2 needs a
// GRH with hop limit 255 to cross routers.
QpAttrs choose_qp_attrs(const Port& local, unsigned local_mtu_bytes, unsigned remote_mtu_bytes, unsigned gid_index);
// How long a dead path takes to fail: 4.096 us * 2^timeout * (retry_cnt + 1), ms.
double retry_budget_ms(const QpAttrs& a);

// What one side of an RC connection tells the other (through the bootstrap).
struct QpInfo {
    std::uint16_t lid = 0;
    std::uint32_t qpn = 0, psn = 0, rkey = 0;
    std::uint64_t addr = 0;     // the peer writes into [addr, addr + len)
    std::uint64_t len = 0;
    std::string gid;            // 32 hex digits, raw GID bytes
    unsigned mtu = 0;           // active MTU in bytes
};
// Keys prefixed with `prefix` ("qp.3.") so several travel in one message.
void qp_info_to_kv(const QpInfo& q, const std::string& prefix, preflight::Kv& out);
QpInfo qp_info_from_kv(const preflight::Kv& kv, const std::string& prefix);  // throws gangway::Error
// "fe80:0000:...:0001" -> 32 hex digits; throws gangway::Error when malformed.
std::string gid_hex(const std::string& sysfs_gid);

// The best rate and width among the ports that are ACTIVE: what a node's
// rails run at, so a port below it trained down. {0, 0} when none is.
struct BestRate {
    double gbps = 0;
    unsigned width = 0;
};
BestRate best_active_rate(const std::vector<Port>& ports);

struct PortVerdict {
    std::string name;                 // mlx5_0/1
    bool usable = true;               // may carry RDMA traffic (active and linked up)
    std::vector<std::string> problems;
};
// expected_gbps: the site's figure, else the best rate among `ports` (a node's
// rails run at one rate; a port below it trained down). A port is judged:
// state ACTIVE, phys LinkUp, rate and width, MTU (an active MTU below 4096
// when known; RoCE: a netdev MTU below 4096+96 bytes), a RoCE v2 GID on
// Ethernet ports.
std::vector<PortVerdict> judge_ports(const std::vector<Port>& ports, std::optional<double> expected_gbps,
                                     std::optional<int> wanted_gid);

// RDMA write bandwidth of one link against its port rate: slow below ratio.
bool rdma_slow(double bytes_per_s, double port_rate_gbps, double ratio);

}  // namespace gangway::verbs
