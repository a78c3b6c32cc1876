#include "show_job.hpp"

#include <cctype>

#include "../base/text.hpp"
#include "../env/scontrol_text.hpp"

namespace gangway::postmortem {

std::optional<std::uint32_t> job_uid(std::string_view line) {
    const std::string u = scontrol_field(line, "UserId");  // "alice(1000)"
    const auto open = u.rfind('('), close = u.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    return parse_uint<std::uint32_t>(std::string_view(u).substr(open + 1, close - open - 1));
}

std::optional<std::uint32_t> newest_job_of(std::string_view all_jobs, std::uint32_t uid) {
    std::optional<std::uint32_t> best;
    for_each_line(all_jobs, [&](std::string_view line, std::size_t) {
        const auto id = parse_uint<std::uint32_t>(scontrol_field(line, "JobId"));
        if (id && job_uid(line) == uid && (!best || *id > *best)) best = *id;
    });
    return best;
}

}  // namespace gangway::postmortem
