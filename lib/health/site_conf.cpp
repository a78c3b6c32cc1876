#include "site_conf.hpp"

#include <cctype>
#include <cstdio>
#include <set>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::health {
namespace {

struct Threshold {
    const char* key;
    const char* var;  // what gpu::thresholds_from_env reads
    double lo, hi;
};
// The ranges are thresholds_from_env's, so what passes here passes there.
const Threshold kThresholds[] = {
    {"h2d_gbps", "GANGWAY_H2D_GBPS", 0.001, 1e4},      {"gpu_bw_ratio", "GANGWAY_GPU_BW_RATIO", 0, 1},
    {"nccl_busbw_gbps", "GANGWAY_NCCL_BUSBW_GBPS", 0.001, 1e5}, {"nccl_ratio", "GANGWAY_NCCL_RATIO", 0, 1},
    {"rdma_ratio", "GANGWAY_RDMA_RATIO", 0, 1},
};

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return "";
    return std::string(trim_right(s.substr(b), " \t\r"));
}

// The bad lines a message lists, each quoting at most an excerpt of the
// line: a file of 64 KB of bad lines is one screen, not 64 KB of messages.
constexpr std::size_t kMaxErrorLines = 20;

// Every failure of one line: thrown as the line's message, caught by the loop.
struct Bad {
    std::string why;
};

unsigned count(const std::string& key, const std::string& v, unsigned max) {
    const auto n = parse_uint<unsigned>(v);
    if (!n || *n > max) throw Bad{origin_value(key, v) + " is not a count from 0 to " + std::to_string(max)};
    return *n;
}

std::uint64_t growth(const std::string& key, const std::string& v) {
    const auto n = parse_uint<std::uint64_t>(v);
    if (!n) throw Bad{origin_value(key, v) + " is not a whole number of counts allowed between two runs (0: none)"};
    return *n;
}

std::string g(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
}

double number(const std::string& key, const std::string& v, double lo, double hi, const char* what) {
    const auto x = parse_double(v);
    if (!x || !(*x >= lo && *x <= hi)) throw Bad{origin_value(key, v) + " is not " + what + " from " + g(lo) + " to " + g(hi)};
    return *x;
}

bool yes_no(const std::string& key, const std::string& v) {
    if (v == "yes" || v == "true" || v == "on" || v == "1") return true;
    if (v == "no" || v == "false" || v == "off" || v == "0") return false;
    throw Bad{origin_value(key, v) + " is not yes or no"};
}

std::vector<std::string> names(const std::string& key, const std::string& v) {
    auto out = split_keep_empty(v, ',');
    for (const auto& n : out) {
        bool ok = !n.empty();
        for (char c : n) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
        if (!ok) throw Bad{origin_value(key, v) + " is not a comma-separated list of device names such as mlx5_0,mlx5_3"};
    }
    return out;
}

std::string path(const std::string& key, const std::string& v) {
    if (v.empty() || v[0] != '/') throw Bad{origin_value(key, v) + " is not an absolute path"};
    return v;
}

std::string model(const std::string& key, const std::string& v) {
    bool ok = !v.empty() && v.size() <= 64;
    for (char c : v) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ' || c == '.');
    if (!ok) throw Bad{origin_value(key, v) + " is not a GPU model such as H100 or A100-SXM4-80GB (letters, digits, '-', '_', '.')"};
    return v;
}

std::vector<unsigned> xid_list(const std::string& key, const std::string& v) {
    std::vector<unsigned> out;
    if (v == "none") return out;
    for (const auto& s : split_keep_empty(v, ',')) {
        const auto n = parse_uint<unsigned>(s);
        if (!n || *n == 0 || *n > 1000) throw Bad{origin_value(key, v) + " is not a comma-separated list of Xid numbers (or none)"};
        out.push_back(*n);
    }
    return out;
}

void apply(SiteConf& c, const std::string& key, const std::string& v) {
    if (key == "gpus") c.gpus = count(key, v, 1024);
    else if (key == "gpu_model") c.gpu_model = model(key, v);
    else if (key == "nics") c.nics = count(key, v, 1024);
    else if (key == "ports") c.ports = count(key, v, 4096);
    else if (key == "port_rate") c.port_rate_gbps = number(key, v, 1, 1e5, "a rate in Gb/s");
    else if (key == "nic_include") c.nic_include = names(key, v);
    else if (key == "nic_exclude") c.nic_exclude = names(key, v);
    else if (key == "symbol_error_max") c.symbol_error_max = growth(key, v);
    else if (key == "link_downed_max") c.link_downed_max = growth(key, v);
    else if (key == "link_error_recovery_max") c.link_error_recovery_max = growth(key, v);
    else if (key == "pcie_speed") c.pcie_speed = yes_no(key, v);
    else if (key == "retired_pages_max") c.retired_pages_max = count(key, v, 1u << 20);
    else if (key == "nvlinks") c.nvlinks = count(key, v, 64);
    else if (key == "xids") c.xids = xid_list(key, v);
    else if (key == "resume_after") {
        c.resume_after = count(key, v, 100);
        if (c.resume_after == 0) throw Bad{"resume_after=0: a node needs at least 1 healthy run before it is resumed"};
    } else if (key == "retest_delay") c.retest_delay_s = number(key, v, 0, 10, "seconds");
    else if (key == "repeat_window") c.repeat_window_s = number(key, v, 1, 7 * 86400, "seconds");
    else if (key == "scontrol_timeout") c.scontrol_timeout_s = number(key, v, 1, 30, "seconds");
    else if (key == "state_file") c.state_file = path(key, v);
    else if (key == "slurm_conf") c.slurm_conf = path(key, v);
    else if (key == "gres_conf") c.gres_conf = path(key, v);
    else if (key == "nccl_lib") c.thresholds["GANGWAY_NCCL_LIB"] = path(key, v);
    else {
        for (const auto& t : kThresholds)
            if (key == t.key) {
                number(key, v, t.lo, t.hi, "a number");
                c.thresholds[t.var] = v;
                return;
            }
        throw Bad{"unknown key \"" + excerpt(key) + "\"; the keys are " + join(site_conf_keys(), ", ")};
    }
}

}  // namespace

const std::vector<std::string>& site_conf_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k = {"gpus", "gpu_model", "nics", "ports", "port_rate", "nic_include", "nic_exclude",
                                      "symbol_error_max", "link_downed_max", "link_error_recovery_max", "pcie_speed",
                                      "retired_pages_max", "nvlinks", "xids", "resume_after", "retest_delay", "repeat_window",
                                      "scontrol_timeout", "state_file", "slurm_conf", "gres_conf", "nccl_lib"};
        for (const auto& t : kThresholds) k.push_back(t.key);
        return k;
    }();
    return keys;
}

SiteConf parse_site_conf(std::string_view text, const std::string& origin) {
    SiteConf c;
    c.xids = kDefaultXids;
    std::vector<std::string> errors;
    std::set<std::string> seen;
    const auto lines = split_keep_empty(text, '\n');
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i];
        // A comment: '#' first on the line, or after a blank.
        for (std::size_t h = line.find('#'); h != std::string::npos; h = line.find('#', h + 1))
            if (h == 0 || line[h - 1] == ' ' || line[h - 1] == '\t') {
                line.erase(h);
                break;
            }
        line = trim(line);
        if (line.empty()) continue;
        const std::string where = origin + ":" + std::to_string(i + 1) + ": ";
        const auto eq = line.find('=');
        if (eq == std::string::npos) {
            errors.push_back(where + "\"" + excerpt(line) + "\" is not key=value");
            continue;
        }
        const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
        if (!seen.insert(key).second) {
            errors.push_back(where + excerpt(key) + " is given twice: keep one");
            continue;
        }
        try {
            apply(c, key, value);
        } catch (const Bad& b) {
            errors.push_back(where + b.why);
        }
    }
    if (errors.size() > kMaxErrorLines) {
        const std::size_t more = errors.size() - kMaxErrorLines;
        errors.resize(kMaxErrorLines);
        errors.push_back(origin + ": " + std::to_string(more) + " more bad line(s); fix these first");
    }
    if (!errors.empty()) throw Error(join(errors, "\n"));
    return c;
}

}  // namespace gangway::health
