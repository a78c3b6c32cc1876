#include "gpu_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::gpu {
namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

std::optional<double> env_num(const EnvMap& env, const char* name, double lo, double hi) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) return std::nullopt;
    try {
        std::size_t used = 0;
        const double v = std::stod(it->second, &used);
        if (used != it->second.size() || !(v >= lo && v <= hi)) throw Error("");
        return v;
    } catch (...) {
        char range[64];
        std::snprintf(range, sizeof range, "%g..%g", lo, hi);
        throw Error(std::string(name) + "=\"" + excerpt(it->second) + "\" is not a number in " + range +
                    ": fix or unset it (see gangway(1), GPU AND RDMA STAGES)");
    }
}

}  // namespace

// Expected figures. Sources (public; collected in the project's research notes):
//  * 8-GPU all-reduce busbw with NCCL_ALGO=Ring (NVLS and Tree inflate busbw,
//    sjeaugey in NVIDIA/nccl-tests#212 and #196):
//      H100 SXM ~370 GB/s: "450 GB/s line rate minus ~20% protocol overhead",
//        sjeaugey, NVIDIA/nccl-tests#212 (also GTC25 slide 370 -> 480 with NVLS).
//      H200 365.6 GB/s with NVLS off, 8 GiB: stas00/ml-engineering network/README.md, section SHARP.
//      B200 682.2 GB/s Ring: stas00/ml-engineering network/README.md, section SHARP.
//      A100 SXM4 ~232 GB/s (232.54 measured, 80% of 300 GB/s): NVIDIA/nccl-tests#175;
//        stas00/ml-engineering network/README.md.
//  * PCIe generation of each part: NVIDIA product datasheets (H100/H200/B200:
//    PCIe Gen5 x16; A100, L40S: PCIe Gen4 x16). GH200/GB200 reach host memory
//    over NVLink-C2C, not PCIe, so no copy figure applies.
GpuModel gpu_model(const std::string& device_name) {
    const auto n = lower(device_name);
    GpuModel m;
    if (has(n, "gh200") || has(n, "gb200") || has(n, "gb300")) {
        m.key = has(n, "gh200") ? "GH200" : has(n, "gb200") ? "GB200" : "GB300";
        m.host_over_pcie = false;
    } else if (has(n, "h200")) {
        m.key = has(n, "nvl") ? "H200-NVL" : "H200";
        m.pcie_gen_max = 5;
        if (m.key == "H200") m.ring_busbw_8 = 365.6;
    } else if (has(n, "h100")) {
        m.key = has(n, "pcie") ? "H100-PCIe" : has(n, "nvl") ? "H100-NVL" : "H100-SXM";
        m.pcie_gen_max = 5;
        if (m.key == "H100-SXM") m.ring_busbw_8 = 370;
    } else if (has(n, "b200")) {
        m.key = "B200";
        m.pcie_gen_max = 5;
        m.ring_busbw_8 = 682.2;
    } else if (has(n, "a100")) {
        m.key = has(n, "pcie") ? "A100-PCIe" : "A100-SXM";
        m.pcie_gen_max = 4;
        if (m.key == "A100-SXM") m.ring_busbw_8 = 232;
    } else if (has(n, "l40s")) {
        m.key = "L40S";
        m.pcie_gen_max = 4;
    } else if (has(n, "l40")) {
        m.key = "L40";
        m.pcie_gen_max = 4;
    }
    // Every PCIe-attached part above is an x16 card or module (NVIDIA's
    // product briefs: "PCIe Gen5 x16", "PCIe Gen4 x16").
    if (m.pcie_gen_max) m.pcie_width_max = 16;
    return m;
}

int pcie_gen_from_speed(const std::string& s) {
    double gts = 0;
    try {
        gts = std::stod(s);
    } catch (...) {
        return 0;
    }
    // PCIe signalling rates: Gen1 2.5, Gen2 5, Gen3 8, Gen4 16, Gen5 32, Gen6 64 GT/s.
    const struct { double gts; int gen; } table[] = {{2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}};
    for (const auto& e : table)
        if (std::fabs(gts - e.gts) < 0.01) return e.gen;
    return 0;
}

// Pinned-memory copy plateau for x16 links:
//   Gen5: 55 GB/s measured with nvbandwidth (host_to_device_memcpy_ce 55.43,
//     device_to_host 55.06 on H200: stas00/ml-engineering network/README.md);
//     Azure's ND H100 v5 health check gates at 48 GB/s (azurehpc-health-checks
//     conf/nd96isr_h100_v5.conf, check_gpu_bw 48).
//   Gen4, Gen3, Gen6: derived, not measured here: the raw x16 rate
//     (31.5, 15.75, 126 GB/s) times Gen5's measured efficiency (55 / 63 = 0.87).
//     Azure's ND A100 v4 gate (21 GB/s, conf/nd96asr_v4.conf) sits at 0.78 of
//     the Gen4 figure, in line with its Gen5 gate.
std::optional<double> expected_copy_gbps(int gen, int width) {
    double x16 = 0;
    switch (gen) {
        case 3: x16 = 13.7; break;
        case 4: x16 = 27.5; break;
        case 5: x16 = 55.0; break;
        case 6: x16 = 110.0; break;
        default: return std::nullopt;
    }
    if (width <= 0) width = 16;
    return x16 * std::min(width, 16) / 16.0;
}

// NCCL over the network reaches 46-48 GB/s busbw per NDR 400G NIC (AddyLaddy,
// NVIDIA/nccl-tests#290) and ~24 GB/s per HDR 200G NIC (sjeaugey,
// NVIDIA/nccl-tests#119): 0.94 of the line rate in bytes.
double nic_busbw_gbps(double rate_gbps) { return rate_gbps / 8 * 0.94; }

Thresholds thresholds_from_env(const EnvMap& env) {
    Thresholds t;
    if (auto it = env.find("GANGWAY_REQUIRE"); it != env.end())
        for (const auto& s : split(it->second, ',')) {
            if (s == "cuda") t.require_cuda = true;
            else if (s == "nccl") t.require_nccl = true;
            else if (s == "verbs") t.require_verbs = true;
            else if (s == "all") t.require_cuda = t.require_nccl = t.require_verbs = true;
            else
                throw Error("GANGWAY_REQUIRE names \"" + excerpt(s) + "\": the GPU and RDMA stages are cuda, nccl and verbs (or all)");
        }
    t.copy_gbps = env_num(env, "GANGWAY_H2D_GBPS", 0.001, 1e4);
    if (auto v = env_num(env, "GANGWAY_COPY_BYTES", 1 << 20, 16.0 * (1ull << 30))) t.copy_bytes = std::floor(*v);
    if (auto v = env_num(env, "GANGWAY_GPU_BW_RATIO", 0, 1)) t.copy_ratio = *v;
    t.busbw_gbps = env_num(env, "GANGWAY_NCCL_BUSBW_GBPS", 0.001, 1e5);
    if (auto v = env_num(env, "GANGWAY_NCCL_RATIO", 0, 1)) t.busbw_ratio = *v;
    if (auto v = env_num(env, "GANGWAY_NCCL_BYTES", 1 << 20, 64.0 * (1ull << 30))) t.nccl_bytes = std::floor(*v);
    if (auto it = env.find("GANGWAY_NCCL_LIB"); it != env.end()) t.nccl_lib = it->second;
    t.ib_rate_gbps = env_num(env, "GANGWAY_IB_RATE_GBPS", 1, 1e5);
    if (auto v = env_num(env, "GANGWAY_RDMA_RATIO", 0, 1)) t.rdma_ratio = *v;
    if (auto v = env_num(env, "GANGWAY_IB_GID_INDEX", 0, 65535)) t.gid_index = static_cast<int>(*v);
    else if (auto w = env_num(env, "NCCL_IB_GID_INDEX", -1, 65535); w && *w >= 0) t.gid_index = static_cast<int>(*w);
    if (auto v = env_num(env, "GANGWAY_OUTLIER_Z", 0.5, 100)) t.outlier_z = *v;
    return t;
}

double algbw_gbps(double bytes, double seconds) { return seconds > 0 ? bytes / 1e9 / seconds : 0; }

double allreduce_busbw_gbps(double algbw, unsigned n) {
    if (n == 0) return 0;
    return algbw * 2.0 * (n - 1) / n;
}

std::vector<std::size_t> low_outliers(const std::vector<double>& values, double z) {
    std::vector<std::size_t> out;
    if (values.size() < 4) return out;
    const double m = median(values), d = mad(values);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double x = values[i];
        if (!(x < 0.9 * m)) continue;
        if (d > 0 && 0.6745 * (x - m) / d >= -z) continue;
        out.push_back(i);
    }
    return out;
}

std::optional<unsigned> allocated_gpus(const EnvMap& env) {
    auto get = [&](const char* k) -> const std::string* {
        auto it = env.find(k);
        return it == env.end() ? nullptr : &it->second;
    };
    if (const auto* v = get("CUDA_VISIBLE_DEVICES")) {
        // "NoDevFiles" is what SLURM writes when the step has no GPUs; a -1 or
        // an empty list hides every device.
        if (*v == "NoDevFiles" || v->empty()) return 0u;
        unsigned n = 0;
        for (const auto& e : split(*v, ',')) {
            if (e == "-1") break;
            ++n;
        }
        return n;
    }
    for (const char* k : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"})
        if (const auto* v = get(k); v && !v->empty()) return static_cast<unsigned>(split(*v, ',').size());
    if (const auto* v = get("SLURM_GPUS_ON_NODE"); v && !v->empty()) {
        try {
            return static_cast<unsigned>(std::stoul(*v));
        } catch (...) {
        }
    }
    return std::nullopt;
}

std::string fmt_gbps(double gbps) {
    char b[32];
    // Two significant digits below 1 GB/s, where one decimal would read 0.0
    // for a link that crawls (a figure a site sets low, or a test double's).
    std::snprintf(b, sizeof b, gbps < 1 ? "%.2g GB/s" : "%.1f GB/s", gbps);
    return b;
}

std::vector<JobFinding> job_copy_outliers(const std::vector<JobGpu>& gpus, double z) {
    std::vector<JobFinding> out;
    for (int dir = 0; dir < 2; ++dir) {
        std::vector<double> vals;
        std::vector<std::size_t> at;
        for (std::size_t i = 0; i < gpus.size(); ++i)
            if (const auto& v = dir ? gpus[i].gpu.d2h_gbps : gpus[i].gpu.h2d_gbps; v && gpus[i].gpu.error.empty()) {
                vals.push_back(*v);
                at.push_back(i);
            }
        for (auto k : low_outliers(vals, z)) {
            const auto& g = gpus[at[k]];
            out.push_back({g.node,
                           {"gpu " + std::to_string(g.gpu.index) + (g.gpu.bus_id.empty() ? "" : " (" + g.gpu.bus_id + ")"),
                            std::string(dir ? "D2H " : "H2D ") + fmt_gbps(vals[k]) + " is an outlier against the job's " +
                                std::to_string(vals.size()) + " GPUs (median " + fmt_gbps(median(vals)) + ")"}});
        }
    }
    return out;
}

StageVerdict skipped(const std::string& why, bool required, const std::string& stage) {
    StageVerdict v;
    v.status = required ? preflight::StageStatus::failed : preflight::StageStatus::skipped;
    v.detail = required ? why + ", but the " + stage + " stage is required (GANGWAY_REQUIRE or --require)" : why;
    return v;
}

StageVerdict judge_cuda(const std::vector<GpuResult>& gpus, std::optional<unsigned> expected_count, unsigned visible,
                        const Thresholds& t) {
    StageVerdict v;
    if (expected_count && *expected_count != visible)
        v.findings.push_back({"gpus", "CUDA sees " + std::to_string(visible) + " GPU(s), the allocation has " +
                                          std::to_string(*expected_count) +
                                          " (a GPU fell off the bus, or CUDA_VISIBLE_DEVICES is wrong)"});
    auto who = [](const GpuResult& g) { return "gpu " + std::to_string(g.index) + (g.bus_id.empty() ? "" : " (" + g.bus_id + ")"); };
    std::vector<double> h2d, d2h;
    std::vector<std::size_t> h2d_at, d2h_at;
    std::set<std::pair<std::size_t, int>> flagged;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto& g = gpus[i];
        if (!g.error.empty()) {
            v.findings.push_back({who(g), g.error});
            continue;
        }
        const GpuModel m = gpu_model(g.name);
        std::optional<double> expect = t.copy_gbps;
        std::string basis = "site figure";
        if (!expect && m.host_over_pcie) {
            // The link the GPU trained at, never above what the part supports.
            int gen = g.pcie_gen ? g.pcie_gen : m.pcie_gen_max;
            if (m.pcie_gen_max && gen > m.pcie_gen_max) gen = m.pcie_gen_max;
            expect = expected_copy_gbps(gen, g.pcie_width);
            basis = (m.key.empty() ? std::string("unknown model") : m.key) + " PCIe Gen" + std::to_string(gen) + " x" +
                    std::to_string(g.pcie_width ? g.pcie_width : 16);
        }
        if (m.pcie_gen_max && g.pcie_gen && g.pcie_gen < m.pcie_gen_max)
            v.findings.push_back({who(g), "PCIe link can train at Gen" + std::to_string(g.pcie_gen) + " only, the " + m.key +
                                              " supports Gen" + std::to_string(m.pcie_gen_max) + " (riser, slot or BIOS setting)"});
        // A link trained on fewer lanes meets the figure for its width, so the
        // copy figures alone would pass it.
        if (m.pcie_width_max && g.pcie_width && g.pcie_width < m.pcie_width_max)
            v.findings.push_back({who(g), "PCIe link trained at x" + std::to_string(g.pcie_width) + ", the " + m.key + " has x" +
                                              std::to_string(m.pcie_width_max) + " (riser, slot or a lane fault)"});
        for (int dir = 0; dir < 2; ++dir) {
            const auto& val = dir ? g.d2h_gbps : g.h2d_gbps;
            if (!val) continue;
            (dir ? d2h : h2d).push_back(*val);
            (dir ? d2h_at : h2d_at).push_back(i);
            if (expect && *val < t.copy_ratio * *expect) {
                char b[64];
                std::snprintf(b, sizeof b, "%.2f x ", t.copy_ratio);
                v.findings.push_back({who(g), std::string(dir ? "D2H " : "H2D ") + fmt_gbps(*val) + ", expected >= " +
                                                  fmt_gbps(t.copy_ratio * *expect) + " (" + b + fmt_gbps(*expect) + ", " +
                                                  basis + ")"});
                flagged.insert({i, dir});
            }
        }
    }
    // Relative to the node's other GPUs: catches a slow GPU when no figure applies
    // (the coordinator compares across the job's GPUs: job_copy_outliers).
    for (int dir = 0; dir < 2; ++dir) {
        const auto& vals = dir ? d2h : h2d;
        for (auto k : low_outliers(vals, t.outlier_z)) {
            const auto at = (dir ? d2h_at : h2d_at)[k];
            if (flagged.count({at, dir})) continue;  // already below the figure
            const auto& g = gpus[at];
            v.findings.push_back({who(g), std::string(dir ? "D2H " : "H2D ") + fmt_gbps(vals[k]) +
                                              " is an outlier against this node's other GPUs (median " + fmt_gbps(median(vals)) + ")"});
        }
    }
    std::string detail = std::to_string(gpus.size()) + " GPU(s)";
    unsigned computed = 0;
    std::string note;
    for (const auto& g : gpus) {
        computed += g.kernel_ok;
        if (note.empty()) note = g.kernel_note;
    }
    if (computed) detail += ", computation right on " + std::to_string(computed);
    if (!note.empty()) detail += ", computation not checked (" + note + ")";
    if (!h2d.empty()) detail += ", H2D median " + fmt_gbps(median(h2d));
    if (!d2h.empty()) detail += ", D2H median " + fmt_gbps(median(d2h));
    if (!v.findings.empty()) {
        v.status = preflight::StageStatus::failed;
        detail = std::to_string(v.findings.size()) + " problem(s); " + detail;
    }
    v.detail = detail;
    return v;
}

std::optional<double> expected_busbw(const GpuModel& m, unsigned gpus_per_node, unsigned nodes,
                                     const std::vector<double>& nic_rates_gbps, const Thresholds& t) {
    if (t.busbw_gbps) return t.busbw_gbps;
    std::optional<double> intra;
    if (gpus_per_node == 8 && m.ring_busbw_8) intra = m.ring_busbw_8;
    if (nodes <= 1) return intra;
    if (nic_rates_gbps.empty()) return std::nullopt;
    double net = 0;
    for (double r : nic_rates_gbps) net += nic_busbw_gbps(r);
    return intra ? std::min(*intra, net) : net;
}

StageVerdict judge_nccl(const std::vector<NcclResult>& runs, const Thresholds& t) {
    StageVerdict v;
    std::string detail;
    for (const auto& r : runs) {
        std::string line = r.scope + " (" + std::to_string(r.nranks) + " ranks): ";
        if (!r.error.empty()) {
            v.findings.push_back({"nccl " + r.scope, r.error});
            line += "failed";
        } else {
            const double alg = algbw_gbps(r.bytes, r.seconds);
            const double bus = allreduce_busbw_gbps(alg, r.nranks);
            char b[64];
            std::snprintf(b, sizeof b, " at %.0f MiB", r.bytes / (1 << 20));
            line += "algbw " + fmt_gbps(alg) + ", busbw " + fmt_gbps(bus) + b;
            if (!r.data_ok) v.findings.push_back({"nccl " + r.scope, "the all-reduce returned wrong values"});
            if (r.expected_busbw && r.nranks > 1 && bus < t.busbw_ratio * *r.expected_busbw) {
                std::snprintf(b, sizeof b, "%.2f x ", t.busbw_ratio);
                v.findings.push_back({"nccl " + r.scope, "busbw " + fmt_gbps(bus) + ", expected >= " +
                                                             fmt_gbps(t.busbw_ratio * *r.expected_busbw) + " (" + b +
                                                             fmt_gbps(*r.expected_busbw) +
                                                             (r.model.empty() ? "" : ", " + r.model) + ")"});
            } else if (!r.expected_busbw) {
                line += " (no expected figure; set GANGWAY_NCCL_BUSBW_GBPS)";
            }
        }
        detail += (detail.empty() ? "" : "; ") + line;
    }
    if (!v.findings.empty()) v.status = preflight::StageStatus::failed;
    v.detail = detail;
    return v;
}

std::vector<std::string> site_packages_dirs(const EnvMap& env, const std::vector<std::string>& pys) {
    std::vector<std::string> prefixes;
    for (const char* k : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (auto it = env.find(k); it != env.end() && !it->second.empty()) prefixes.push_back(it->second);
    if (auto it = env.find("HOME"); it != env.end() && !it->second.empty()) prefixes.push_back(it->second + "/.local");
    prefixes.push_back("/usr/local");
    prefixes.push_back("/usr");
    std::vector<std::string> out;
    for (const auto& p : prefixes)
        for (const auto& py : pys) {
            out.push_back(p + "/lib/" + py + "/site-packages");
            if (p == "/usr" || p == "/usr/local") out.push_back(p + "/lib/" + py + "/dist-packages");
        }
    return out;
}

std::vector<std::string> nccl_candidates(const std::string& explicit_path, const std::vector<std::string>& site_packages,
                                         const std::string& ld_library_path, const std::string& ldconfig_output) {
    std::vector<std::string> out;
    auto add = [&](const std::string& p) {
        if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    };
    if (!explicit_path.empty()) {
        add(explicit_path);
        return out;  // the user's choice, nothing else
    }
    for (const auto& sp : site_packages) add(sp + "/nvidia/nccl/lib/libnccl.so.2");
    for (const auto& d : split(ld_library_path, ':')) add(d + "/libnccl.so.2");
    // ldconfig -p: "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2"
    std::istringstream in(ldconfig_output);
    std::string line;
    while (std::getline(in, line)) {
        auto s = line.find_first_not_of(" \t");
        if (s == std::string::npos || line.compare(s, 13, "libnccl.so.2 ") != 0) continue;
        auto arrow = line.find("=> ");
        if (arrow != std::string::npos) add(line.substr(arrow + 3));
    }
    return out;
}

}  // namespace gangway::gpu
