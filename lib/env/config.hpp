// Site configuration (key=value words on the plugstack.conf line) and the
// user's choices (SPANK options, GANGWAY_* environment), validated into one
// plain struct. Precedence: command line > GANGWAY_* env > site default.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check_policy.hpp"
#include "port.hpp"
#include "rank_order.hpp"

namespace gangway {

enum class Mode { Auto, Node, Task, Off };

// NODE_ADDRS (every node's data address) is set for steps of at most
// node_addrs_max= nodes: each node then resolves every node's name (N lookups
// per node, N² in the step), and the value grows with N. Above it each node
// resolves node 0's name and its own only.
inline constexpr unsigned kNodeAddrsMaxDefault = 64;
// The longest address NODE_ADDRS can hold, IPv6 text (8 groups of 4 hex
// digits and 7 colons), and its comma.
inline constexpr unsigned kAddrTextMax = 39 + 1;
// NODE_ADDRS stays below 100 KiB, clear of Linux's limit for one "NAME=value"
// string (MAX_ARG_STRLEN, 128 KiB): past it execve fails with E2BIG.
inline constexpr unsigned kNodeAddrsBytesMax = 100 * 1024;
inline constexpr unsigned kNodeAddrsMaxLimit = kNodeAddrsBytesMax / kAddrTextMax;  // 2560

// Pinning: `on` binds each task's cores and picks its NIC after the GPU its
// LOCAL_RANK selects, every GPU staying visible; `narrow` also narrows
// CUDA_VISIBLE_DEVICES to the task's own GPU(s); `off` leaves binding to SLURM.
enum class PinMode { On, Narrow, Off };

struct Config {
    Mode mode = Mode::Auto;
    std::string iface;          // data network interface; empty: use the node name's address
    std::string addr_template;  // e.g. "%h-ib": name whose address is the node's data address
    PortRange ports;
    bool batch = true;          // also set the variables in the batch script
    PinMode pin = PinMode::On;
    std::string topology;       // topology cache or hwloc XML; empty or absent file: live discovery
    std::vector<std::string> nic_include, nic_exclude;  // site NIC policy, exact names
    std::string torch_hook;     // directory put first on PYTHONPATH (torch-hook/); empty: none
    CheckSite check;            // check=, on_fail=, check_min_nodes=, check_optout=
    std::string launcher;       // launcher=: the gangway command the check runs; empty: the installed one
    std::string check_key;      // check_key=: root-only key file for the mark of a checked job (check_marker.hpp)
    unsigned node_addrs_max = kNodeAddrsMaxDefault;  // NODE_ADDRS only for steps of at most this many nodes; 0: never
    RankOrder rank_order = RankOrder::Slurm;  // rank_order=: NODE_RANK in SLURM's order or by leaf switch
    std::string topology_file;  // topology_file=: SLURM's topology file; empty: next to slurm.conf
    // postmortem_dir=: where slurmstepd keeps each task's end for the Epilog's
    // post-mortem (issue 33; %n: the host name up to its first dot); empty (the default): off.
    std::string postmortem_dir;
    // postmortem_sample=: seconds between slurmstepd's samples of each task
    // while it runs (issue 41; spank/sampler.hpp); 0: none. With postmortem_dir= only.
    unsigned postmortem_sample_s = 5;
    // watch=: seconds between the running job's reports (issue 43,
    // docs/watch.md): each rank's pace (the torch hook), and each node's
    // agent's record to fleet serve at watch_to=, signed with the key at
    // watch_key=. 0 (the default): off. With postmortem_dir= and samples only.
    unsigned watch_s = 0;
    std::string watch_to;
    std::string watch_key = "/etc/gangway/stops.key";
};

// Parses the plugstack.conf arguments. Throws gangway::Error naming the bad
// word and the known keys.
//
// Cost of this and of every value parser below (SECURITY.md, "What a parser may spend"):
// O(n) work; memory at most two copies of a value, or the names of
// nic_include=/nic_exclude= (a std::string each: 48 bytes a byte at most),
// and a refusal's message, which quotes a value's first 64 characters only.
Config parse_site_args(const std::vector<std::string>& args);

// "auto", "node", "task", "off" (and on = auto). `origin` names where the
// value came from ("--gangway", "GANGWAY_MODE", "mode=") for the message.
Mode parse_mode(std::string_view text, std::string_view origin);
std::string_view to_string(Mode m);

PinMode parse_pin(std::string_view text, std::string_view origin);
std::string_view to_string(PinMode m);

// An interface name as Linux accepts it (IFNAMSIZ, no '/', no blanks).
void check_iface_name(std::string_view name, std::string_view origin);

// A user's choices; unset fields leave the site's value.
// --gangway-on-hang: what a hang of the running job does (report: the line
// only; cancel or requeue the job), or off: the job opts out of watching.
enum class HangPolicy { report, cancel, requeue, off };
HangPolicy parse_hang_policy(std::string_view v, std::string_view origin);
const char* hang_policy_name(HangPolicy h) noexcept;

struct UserChoice {
    std::optional<HangPolicy> on_hang;
    std::optional<Mode> mode;
    std::optional<std::string> iface;
    std::optional<PinMode> pin;
    std::optional<RankOrder> rank_order;
    CheckChoice check;
};
Config apply_user(Config site, const UserChoice& user);

// "%h-ib" with node "gpu01" -> "gpu01-ib"; %% is a literal percent sign.
// The name made is a host name: longer than kMaxHostNameLength (255) is
// refused as soon as it is, so the work is O(template + 255) however many %h
// it has and however long the node's name.
std::string expand_addr_template(std::string_view tmpl, std::string_view node);

// postmortem_dir=: "/var/tmp/pm/%n" with node "node08" -> "/var/tmp/pm/node08";
// %% is a literal percent sign. Throws gangway::Error for another '%' or a
// node name that is no host name (a '/', a leading '.'). O(template * 255).
std::string expand_node_dir(std::string_view tmpl, std::string_view node);

}  // namespace gangway
