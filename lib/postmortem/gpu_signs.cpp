#include "gpu_signs.hpp"

#include <string>

#include "../base/text.hpp"

namespace gangway::postmortem {

std::vector<Evidence> gpu_signs(const health::NvmlFacts& nvml, std::int64_t t_ns) {
    std::vector<Evidence> out;
    for (const auto& g : nvml.gpus) {
        if (out.size() >= kMaxEvidence) break;
        std::string what;
        if (g.pages_pending.value_or(false)) what = "a page retirement waits for a reset";
        if (g.rows_failed.value_or(false)) what += std::string(what.empty() ? "" : ", ") + "a row remapping failed";
        else if (g.rows_pending.value_or(false)) what += std::string(what.empty() ? "" : ", ") + "a row remapping waits for a reset";
        if (what.empty()) continue;
        Evidence e;
        e.t_ns = t_ns;
        e.sign = Sign::retired_pages;
        e.device = printable_name(g.bus_id, 64);
        e.code = g.pages_retired.value_or(0);
        const std::string pages = g.pages_retired ? " (" + std::to_string(*g.pages_retired) + " pages retired)" : "";
        e.text = printable_name("GPU " + g.bus_id + ": " + what + pages + ", by NVML at the job's end", kMaxEvidenceText - 4);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace gangway::postmortem
