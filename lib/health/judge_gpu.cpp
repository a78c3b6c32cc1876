// GPUs as the driver sees them (NVML, the kernel log's Xids) and the
// preflight's stages run on this node (cuda, nccl, rdma).
#include <algorithm>
#include <cstdio>

#include "../base/text.hpp"
#include "judge.hpp"

namespace gangway::health {
namespace {

bool fatal_code(int e) {
    // The driver is there but cannot serve the GPUs: the node cannot run GPU jobs.
    return e == kNvmlDriverNotLoaded || e == kNvmlGpuIsLost || e == kNvmlLibRmVersionMismatch || e == kNvmlUnknown;
}

Record rec(Check c, const std::string& dev, std::string figure, std::string expected) {
    return {c, dev, std::move(figure), "", std::move(expected), Status::ok, "", false};
}

}  // namespace

std::vector<Record> judge_nvml(const NvmlFacts& n, const std::vector<std::string>& nvidia_on_bus, const SiteConf& c) {
    std::vector<Record> out;
    if (nvidia_on_bus.empty() && n.gpus.empty()) return out;  // no NVIDIA GPU: nothing to ask NVML
    if (!n.loaded || n.init_error) {
        Record r = rec(Check::gpu_nvml, "node", "", "");
        r.status = n.loaded && fatal_code(n.init_error) ? Status::failed : Status::skipped;
        r.reason = r.status == Status::failed ? "NVML cannot reach the GPUs: " + n.why : n.why;
        out.push_back(std::move(r));
        return out;
    }
    for (const auto& bus : nvidia_on_bus)
        if (std::none_of(n.gpus.begin(), n.gpus.end(), [&](const NvmlGpu& g) { return g.bus_id == bus; })) {
            Record r = rec(Check::gpu_driver, "gpu " + bus, "absent", "present");
            r.status = Status::failed;
            r.reason = "gpu " + bus + " on the PCI bus, not seen by the driver";
            out.push_back(std::move(r));
        }
    for (std::size_t i = 0; i < n.gpus.size(); ++i) {
        const auto& gpu = n.gpus[i];
        const std::string dev = gpu.bus_id.empty() ? "gpu (NVML index " + std::to_string(i) + ")" : "gpu " + gpu.bus_id;
        if (gpu.error) {
            Record r = rec(Check::gpu_nvml, dev, std::to_string(gpu.error), "0");
            r.status = fatal_code(gpu.error) ? Status::failed : Status::skipped;
            r.reason = r.status == Status::failed ? dev + " " + gpu.error_text : "NVML: " + gpu.error_text;
            const bool lost = r.status == Status::failed;
            out.push_back(std::move(r));
            if (lost) continue;  // nothing more can be asked of it
        }
        if (gpu.pages_pending || gpu.pages_retired) {
            Record r = rec(Check::gpu_pages, dev, gpu.pages_retired ? std::to_string(*gpu.pages_retired) : "",
                           "<= " + std::to_string(c.retired_pages_max));
            r.unit = "pages";
            if (gpu.pages_pending.value_or(false)) {
                r.status = Status::failed;
                r.reason = dev + " page retirement pending (reset the GPU)";
            } else if (gpu.pages_retired && *gpu.pages_retired > c.retired_pages_max) {
                r.status = Status::failed;
                r.reason = dev + " " + r.figure + " retired pages (at most " + std::to_string(c.retired_pages_max) + ")";
            }
            out.push_back(std::move(r));
        }
        if (gpu.rows_pending || gpu.rows_failed) {
            Record r = rec(Check::gpu_rows, dev, gpu.rows_failed.value_or(false) ? "failed" : gpu.rows_pending.value_or(false) ? "pending" : "none", "none");
            if (gpu.rows_failed.value_or(false)) {
                r.status = Status::failed;
                r.reason = dev + " row remapping failed (replace the GPU)";
            } else if (gpu.rows_pending.value_or(false)) {
                r.status = Status::failed;
                r.reason = dev + " row remapping pending (reset the GPU)";
            }
            out.push_back(std::move(r));
        }
        if (gpu.ecc_uncorrected) {
            Record r = rec(Check::gpu_ecc, dev, std::to_string(*gpu.ecc_uncorrected), "0");
            r.unit = "errors";
            if (*gpu.ecc_uncorrected > 0) {
                r.status = Status::failed;
                r.reason = dev + " " + r.figure + " uncorrectable ECC errors since the driver loaded";
            }
            out.push_back(std::move(r));
        }
        if (gpu.nvlinks_up) {
            // The site's count, else the most links up on a GPU of the same
            // model here: on an HGX board every GPU has the same links, and
            // PCIe cards (no link up anywhere) are not judged. A link down on
            // every GPU at once (an NVSwitch tray) needs the site's nvlinks=.
            unsigned best = 0;
            for (const auto& o : n.gpus)
                if (o.name == gpu.name && o.nvlinks_up) best = std::max(best, *o.nvlinks_up);
            const unsigned want = c.nvlinks.value_or(best);
            if (want > 0) {
                Record r = rec(Check::gpu_nvlink, dev, std::to_string(*gpu.nvlinks_up), ">= " + std::to_string(want));
                r.unit = "links";
                if (*gpu.nvlinks_up < want) {
                    r.status = Status::failed;
                    r.reason = dev + " NVLink " + r.figure + " of " + std::to_string(want) + " up" +
                               (c.nvlinks ? std::string(" (node-check.conf nvlinks=)")
                                          : " (the node's best " + (gpu.name.empty() ? std::string("GPU") : gpu.name) +
                                                " has " + std::to_string(best) + ")");
                }
                out.push_back(std::move(r));
            }
        }
    }
    return out;
}

std::vector<Record> judge_xids(const std::vector<Xid>& xids, const std::vector<unsigned>& fatal,
                               const std::vector<std::string>& node_gpus, const KmsgLoss& lost) {
    std::vector<Record> out;
    const std::string list = join(fatal, ",", [](unsigned x) { return std::to_string(x); });
    std::size_t strangers = 0;
    const Xid* first_stranger = nullptr;
    for (const auto& x : xids) {
        if (std::find(node_gpus.begin(), node_gpus.end(), x.bus_id) == node_gpus.end()) {
            if (!strangers++) first_stranger = &x;
            continue;
        }
        if (std::find(fatal.begin(), fatal.end(), x.xid) == fatal.end()) continue;
        Record r = rec(Check::gpu_xid, "gpu " + x.bus_id, std::to_string(x.xid), "none of " + list);
        r.status = Status::failed;
        r.reason = "gpu " + x.bus_id + " Xid " + r.figure + " in the kernel log";
        out.push_back(std::move(r));
    }
    if (first_stranger) {
        Record r = rec(Check::gpu_xid, "node", std::to_string(strangers), "");
        r.unit = "records";
        r.status = Status::skipped;
        r.reason = std::to_string(strangers) + " Xid record(s) in the kernel log name no NVIDIA GPU of this node (the first: " +
                   first_stranger->bus_id + ", Xid " + std::to_string(first_stranger->xid) + "): not judged";
        out.push_back(std::move(r));
    }
    if (lost.records) {
        Record r = rec(Check::gpu_xid, "node", std::to_string(lost.records), "");
        r.unit = "records";
        r.status = Status::skipped;
        r.reason = "the kernel log lost " + std::to_string(lost.records) + " record(s) before this run read them (numbers " +
                   std::to_string(lost.first) + " to " + std::to_string(lost.last) +
                   "): a flood of kernel messages, which any user can cause, wrapped its buffer; an Xid among them is not "
                   "judged (journalctl -k may still hold it)";
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<Record> stage_records(Check c, const preflight::StageResult& s, const std::vector<gpu::Finding>& findings,
                                  const std::vector<gpu::GpuResult>& gpus) {
    using preflight::StageStatus;
    std::vector<Record> out;
    if (s.status == StageStatus::aborted) return out;
    if (s.status == StageStatus::skipped) {
        out.push_back({c, "node", "", "", "", Status::skipped, s.detail, false});
        return out;
    }
    std::vector<bool> used(findings.size());
    for (const auto& gr : gpus) {
        if (gr.bus_id.empty()) continue;
        Record r{c, "gpu " + gr.bus_id, "", "", "", Status::ok, "", false};
        if (gr.h2d_gbps && gr.d2h_gbps) {
            char b[32];
            std::snprintf(b, sizeof b, "%.1f", std::min(*gr.h2d_gbps, *gr.d2h_gbps));
            r.figure = b;
            r.unit = "GB/s";  // the slower copy direction
        }
        for (std::size_t i = 0; i < findings.size(); ++i)
            if (findings[i].what.find(gr.bus_id) != std::string::npos) {
                if (r.status != Status::failed) r.reason = "gpu " + gr.bus_id + " " + findings[i].problem;
                r.status = Status::failed;
                used[i] = true;
            }
        out.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < findings.size(); ++i)
        if (!used[i])
            out.push_back({c, findings[i].what, "", "", "", Status::failed, findings[i].what + ": " + findings[i].problem, false});
    if (s.status == StageStatus::failed && findings.empty())
        out.push_back({c, "node", "", "", "", Status::failed, std::string(to_string(c)) + ": " + s.detail, false});
    if (out.empty()) out.push_back({c, "node", "", "", "", Status::ok, "", false});
    return out;
}

}  // namespace gangway::health
