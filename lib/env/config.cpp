#include "config.hpp"

#include <cctype>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

constexpr std::string_view kKnownKeys = "mode, iface, addr_template, port_range, batch, pin, topology, nic_include, nic_exclude, torch_hook, check, on_fail, check_min_nodes, check_optout, check_key, launcher, node_addrs_max, rank_order, topology_file, postmortem_dir, postmortem_sample, watch, watch_to, watch_key";

bool parse_bool(std::string_view v, std::string_view key) {
    if (v == "1" || v == "yes" || v == "true" || v == "on") return true;
    if (v == "0" || v == "no" || v == "false" || v == "off") return false;
    throw Error("plugstack.conf: " + std::string(key) + "=" + excerpt(v) +
                " is not a yes/no value; use yes or no");
}

PortRange parse_range(std::string_view v) {
    const auto bad = [&] {
        return Error("plugstack.conf: port_range=" + excerpt(v) +
                     " is not LO-HI with 1024 <= LO and LO+3 <= HI <= 65535; for example port_range=61000-65535");
    };
    const auto dash = v.find('-');
    if (dash == std::string_view::npos) throw bad();
    // Parsed as 16-bit ports: a larger LO cannot wrap LO+3 round to a small number.
    const auto lo = parse_uint<std::uint16_t>(v.substr(0, dash)), hi = parse_uint<std::uint16_t>(v.substr(dash + 1));
    if (!lo || !hi || *lo < 1024 || *lo + kPortBlock - 1 > *hi) throw bad();
    return {*lo, *hi};
}

std::vector<std::string> split_names(std::string_view v, const std::string& key) {
    std::vector<std::string> out = split_keep_empty(v, ',');  // an empty name is an error, not nothing
    for (const auto& name : out) {
        bool ok = !name.empty();
        for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
        if (!ok)
            throw Error("plugstack.conf: " + key + "=" + excerpt(v) +
                        " is not a comma-separated list of device names such as mlx5_0,mlx5_3");
    }
    return out;
}

unsigned parse_node_addrs_max(std::string_view v) {
    const auto n = parse_uint<std::uint32_t>(v);
    if (!n)
        throw Error("plugstack.conf: node_addrs_max=" + excerpt(v) +
                    " is not a node count from 0 to " + std::to_string(kNodeAddrsMaxLimit) +
                    "; for example node_addrs_max=64 (0: never set NODE_ADDRS)");
    if (*n > kNodeAddrsMaxLimit)
        throw Error("plugstack.conf: node_addrs_max=" + excerpt(v) + " lets NODE_ADDRS reach " +
                    std::to_string(static_cast<unsigned long long>(*n) * kAddrTextMax) + " bytes (" +
                    std::to_string(kAddrTextMax) + " a node with IPv6 addresses), past the " +
                    std::to_string(kNodeAddrsBytesMax / 1024) +
                    " KiB kept clear of Linux's 128 KiB limit for one variable; use at most " +
                    std::to_string(kNodeAddrsMaxLimit) + " (0: never set NODE_ADDRS)");
    return *n;
}

}  // namespace

PinMode parse_pin(std::string_view t, std::string_view origin) {
    if (t == "on" || t == "yes" || t == "1" || t == "auto") return PinMode::On;
    if (t == "narrow") return PinMode::Narrow;
    if (t == "off" || t == "no" || t == "0") return PinMode::Off;
    throw Error(origin_value(origin, t) +
                " is not a pinning mode; use on (cores and NIC follow the task's GPU), narrow (also "
                "CUDA_VISIBLE_DEVICES) or off");
}

std::string_view to_string(PinMode m) {
    switch (m) {
        case PinMode::On: return "on";
        case PinMode::Narrow: return "narrow";
        case PinMode::Off: return "off";
    }
    return "on";
}

Mode parse_mode(std::string_view t, std::string_view origin) {
    if (t == "auto" || t == "on" || t == "yes" || t == "1") return Mode::Auto;
    if (t == "node") return Mode::Node;
    if (t == "task") return Mode::Task;
    if (t == "off" || t == "no" || t == "0") return Mode::Off;
    throw Error(origin_value(origin, t) +
                " is not a mode; use auto, node (one task per node, e.g. torchrun), task (one task per GPU) or off");
}

std::string_view to_string(Mode m) {
    switch (m) {
        case Mode::Auto: return "auto";
        case Mode::Node: return "node";
        case Mode::Task: return "task";
        case Mode::Off: return "off";
    }
    return "auto";
}

void check_iface_name(std::string_view name, std::string_view origin) {
    bool ok = !name.empty() && name.size() < 16 && name != "." && name != "..";
    for (char c : name)
        if (c == '/' || c == ':' || c == ',' || c == '=' || static_cast<unsigned char>(c) <= ' ') ok = false;
    if (!ok)
        throw Error(origin_value(origin, name) +
                    " is not an interface name; give one such as ib0 or eth1 (see `ip -br link`)");
}

Config parse_site_args(const std::vector<std::string>& args) {
    Config c;
    for (const auto& word : args) {
        const auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0)
            throw Error("plugstack.conf: \"" + excerpt(word) + "\" is not key=value; known keys: " + std::string(kKnownKeys));
        const std::string key = word.substr(0, eq);
        const std::string_view val = std::string_view(word).substr(eq + 1);
        if (key == "mode") {
            c.mode = parse_mode(val, "plugstack.conf: mode=");
        } else if (key == "iface") {
            check_iface_name(val, "plugstack.conf: iface=");
            c.iface = val;
        } else if (key == "addr_template") {
            if (val.find("%h") == std::string_view::npos)
                throw Error("plugstack.conf: addr_template=" + excerpt(val) +
                            " has no %h (the SLURM node name); for example addr_template=%h-ib");
            expand_addr_template(val, "x");  // rejects a stray %
            c.addr_template = val;
        } else if (key == "port_range") {
            c.ports = parse_range(val);
        } else if (key == "batch") {
            c.batch = parse_bool(val, key);
        } else if (key == "pin") {
            c.pin = parse_pin(val, "plugstack.conf: pin=");
        } else if (key == "topology") {
            if (val.empty() || val.front() != '/')
                throw Error("plugstack.conf: topology=" + excerpt(val) +
                            " is not an absolute path; write the cache with `gangway topo --write-cache PATH`");
            c.topology = val;
        } else if (key == "torch_hook") {
            if (val.empty() || val.front() != '/' || val.find(':') != std::string_view::npos)
                throw Error("plugstack.conf: torch_hook=" + excerpt(val) +
                            " is not an absolute directory without ':'; give the directory gangway installed it in, "
                            "for example torch_hook=/usr/lib/x86_64-linux-gnu/gangway/torch-hook");
            c.torch_hook = val;
        } else if (key == "check") {
            c.check.level = parse_check_level(val, "plugstack.conf: check=");
        } else if (key == "on_fail") {
            c.check.on_fail = parse_on_fail(val, "plugstack.conf: on_fail=");
        } else if (key == "check_min_nodes") {
            const auto n = parse_uint<std::uint32_t>(val);
            if (!n || *n < 2 || *n > 100000)
                throw Error("plugstack.conf: check_min_nodes=" + excerpt(val) +
                            " is not a node count from 2 to 100000; for example check_min_nodes=2 checks every "
                            "multi-node job");
            c.check.min_nodes = *n;
        } else if (key == "check_optout") {
            c.check.optout = parse_bool(val, key);
        } else if (key == "check_key") {
            if (val.empty() || val.front() != '/')
                throw Error("plugstack.conf: check_key=" + std::string(val) +
                            " is not an absolute path; give the root-only key file, for example "
                            "check_key=/etc/gangway/check.key");
            c.check_key = val;
        } else if (key == "launcher") {
            if (val.empty() || val.front() != '/')
                throw Error("plugstack.conf: launcher=" + excerpt(val) +
                            " is not an absolute path; give the gangway command's path, for example "
                            "launcher=/usr/bin/gangway");
            c.launcher = val;
        } else if (key == "rank_order") {
            c.rank_order = parse_rank_order(val, "plugstack.conf: rank_order=");
        } else if (key == "topology_file") {
            if (val.empty() || val.front() != '/')
                throw Error("plugstack.conf: topology_file=" + excerpt(val) +
                            " is not an absolute path; give SLURM's topology file, for example "
                            "topology_file=/etc/slurm/topology.conf");
            c.topology_file = val;
        } else if (key == "postmortem_dir") {
            if (val.empty() || val.front() != '/' || val.find("/../") != std::string_view::npos || val.ends_with("/.."))
                throw Error("plugstack.conf: postmortem_dir=" + excerpt(val) +
                            " is not an absolute path; give a root-only node-local directory, for example "
                            "postmortem_dir=/var/spool/gangway/postmortem");
            expand_node_dir(val, "x");  // rejects a stray %
            c.postmortem_dir = val;
        } else if (key == "postmortem_sample") {
            const auto n = parse_uint<unsigned>(val);
            if (!n || *n > 300)
                throw Error("plugstack.conf: postmortem_sample=" + excerpt(val) +
                            " is not a number of seconds from 0 to 300; for example postmortem_sample=5 (0: no samples)");
            c.postmortem_sample_s = *n;
        } else if (key == "watch") {
            const auto n = parse_uint<unsigned>(val);
            if (!n || *n > 3600)
                throw Error("plugstack.conf: watch=" + excerpt(val) +
                            " is not a number of seconds from 0 to 3600; for example watch=10 (0: off)");
            c.watch_s = *n;
        } else if (key == "watch_to") {
            if (!val.starts_with("http://") || val.size() <= 7 || val.find_first_of(" \t\"'") != std::string_view::npos)
                throw Error("plugstack.conf: watch_to=" + excerpt(val) +
                            " is not fleet serve's URL; for example watch_to=http://admin:9464");
            c.watch_to = val;
        } else if (key == "watch_key") {
            if (val.empty() || val.front() != '/')
                throw Error("plugstack.conf: watch_key=" + excerpt(val) +
                            " is not an absolute path; give the site's key file, for example watch_key=/etc/gangway/stops.key");
            c.watch_key = val;
        } else if (key == "node_addrs_max") {
            c.node_addrs_max = parse_node_addrs_max(val);
        } else if (key == "nic_include" || key == "nic_exclude") {
            auto& list = key == "nic_include" ? c.nic_include : c.nic_exclude;
            list = split_names(val, key);
        } else {
            throw Error("plugstack.conf: unknown key \"" + excerpt(key) + "\"; known keys: " + std::string(kKnownKeys) +
                        " (see gangway.so(8))");
        }
    }
    return c;
}

Config apply_user(Config c, const UserChoice& u) {
    if (u.mode) c.mode = *u.mode;
    if (u.iface) c.iface = *u.iface;
    if (u.pin) c.pin = *u.pin;
    if (u.rank_order) c.rank_order = *u.rank_order;
    return c;
}

std::string expand_addr_template(std::string_view t, std::string_view node) {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] != '%') {
            out += t[i];
        } else if (i + 1 < t.size() && t[i + 1] == 'h') {
            out += node;
            ++i;
        } else if (i + 1 < t.size() && t[i + 1] == '%') {
            out += '%';
            ++i;
        } else {
            throw Error("plugstack.conf: addr_template=" + excerpt(t) + " has a '%' that is neither %h nor %%");
        }
        // A host name: checked as it grows, so that many %h cost no more
        // than the name's bound (without it, %h n times over a node name of
        // n characters made n^2).
        if (out.size() > kMaxHostNameLength)
            throw Error("plugstack.conf: addr_template=" + excerpt(t) + " makes \"" + excerpt(out) +
                        "\", longer than a host name can be (" + std::to_string(kMaxHostNameLength) +
                        " characters); for example addr_template=%h-ib");
    }
    return out;
}

std::string expand_node_dir(std::string_view t, std::string_view node) {
    // The node's name becomes a path component: one that could leave the
    // directory, or that is not a host name, is refused.
    bool ok = !node.empty() && node.size() <= kMaxHostNameLength && node.front() != '.';
    for (char c : node) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
    if (!ok) throw Error("postmortem_dir: the node name \"" + excerpt(node) + "\" cannot be a directory's name");
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] != '%') {
            out += t[i];
        } else if (i + 1 < t.size() && (t[i + 1] == 'n' || t[i + 1] == '%')) {
            if (t[++i] == 'n') out += node;
            else out += '%';
        } else {
            throw Error("plugstack.conf: postmortem_dir=" + excerpt(t) + " has a '%' that is neither %n nor %%");
        }
    }
    return out;
}

const char* hang_policy_name(HangPolicy h) noexcept {
    switch (h) {
        case HangPolicy::cancel: return "cancel";
        case HangPolicy::requeue: return "requeue";
        case HangPolicy::off: return "off";
        case HangPolicy::report: break;
    }
    return "report";
}

HangPolicy parse_hang_policy(std::string_view v, std::string_view origin) {
    for (HangPolicy h : {HangPolicy::report, HangPolicy::cancel, HangPolicy::requeue, HangPolicy::off})
        if (v == hang_policy_name(h)) return h;
    throw Error(std::string(origin) + "=" + excerpt(v) +
                " is not report, cancel, requeue or off; for example --gangway-on-hang=cancel (off: no watching)");
}

}  // namespace gangway
