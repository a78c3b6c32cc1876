// The site's node check file (/etc/gangway/node-check.conf): key=value
// lines stating what the node is expected to have and how strict to be.
// Nothing in it is needed: without it the node is judged against its own
// hardware (each link's maximum, the best rate among its ports). node-check.conf(5)
// lists the keys.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::health {

struct SiteConf {
    // What the node has: unset, SLURM's configuration says (gres.hpp), or nothing is expected.
    std::optional<unsigned> gpus;          // gpus=8
    std::string gpu_model;                 // gpu_model=H100 (a part of the driver's name)
    std::optional<unsigned> nics;          // nics=8: compute RDMA NICs
    std::optional<unsigned> ports;         // ports=8: their ports
    std::optional<double> port_rate_gbps;  // port_rate=400: each port's rate, Gb/s
    std::vector<std::string> nic_include, nic_exclude;  // which NICs are compute NICs (as the plugin's keys)
    // Growth allowed between two runs.
    std::uint64_t symbol_error_max = 10, link_downed_max = 0, link_error_recovery_max = 0;
    bool pcie_speed = true;                // judge link speeds (pcie_speed=no: widths only)
    unsigned retired_pages_max = 60;       // retired pages of one GPU
    std::optional<unsigned> nvlinks;       // nvlinks=18: NVLinks up on each NVLink GPU (unset: as many as the node's best GPU)
    std::vector<unsigned> xids;            // the Xids that fail a GPU (kDefaultXids)
    unsigned resume_after = 2;             // healthy runs before a node gangway drained is resumed
    double retest_delay_s = 0.5;           // before a failed check is measured again
    double repeat_window_s = 3600;         // a failure of the last run older than this does not count
    double scontrol_timeout_s = 10;        // each scontrol call
    std::string state_file = "/var/lib/gangway/node-check.state";
    std::string slurm_conf, gres_conf;     // "": next to $SLURM_CONF, else /etc/slurm
    // The full level's thresholds, as the GANGWAY_* variables of gpu::thresholds_from_env
    // that each key stands for (h2d_gbps -> GANGWAY_H2D_GBPS ...).
    std::map<std::string, std::string> thresholds;
};

// Xids that say the GPU or its memory is broken (NVIDIA's Xid catalogue): 48
// double-bit ECC, 61/62 microcontroller halt, 64 page retirement or row
// remap failure, 74 NVLink, 79 fallen off the bus, 92 high single-bit rate,
// 95 uncontained ECC, 119/120 GSP, 140 unrecovered ECC. Application faults
// (13, 31, 43) and informational ones (63, 94) are not in it.
inline const std::vector<unsigned> kDefaultXids = {48, 61, 62, 64, 74, 79, 92, 95, 119, 120, 140};

// `origin` names the file in messages. Throws gangway::Error whose message
// has one line per bad line ("node-check.conf:3: ..."), each saying what is
// wrong and what is wanted.
SiteConf parse_site_conf(std::string_view text, const std::string& origin);

// The keys, in the order node-check.conf(5) lists them.
const std::vector<std::string>& site_conf_keys();

}  // namespace gangway::health
