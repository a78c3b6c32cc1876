#include "show_job.hpp"

#include <cctype>

#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

// Whether s starts with a field's key: letters, digits, '_' or ':', then '='.
bool starts_field(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == ':')) ++i;
    return i > 0 && i < s.size() && s[i] == '=';
}

}  // namespace

std::string job_field(std::string_view line, std::string_view key) {
    const std::string k = std::string(key) + "=";
    std::size_t p = 0;
    // At the line's start or after a blank: "NodeList=" is not "ReqNodeList=".
    for (;;) {
        p = line.find(k, p);
        if (p == std::string_view::npos) return {};
        if (p == 0 || line[p - 1] == ' ' || line[p - 1] == '\n') break;
        p += k.size();
    }
    const std::size_t start = p + k.size();
    std::size_t end = start;
    while (end < line.size() && line[end] != '\n') {
        if (line[end] == ' ' && starts_field(line.substr(end + 1))) break;
        ++end;
    }
    std::string v(trim_right(line.substr(start, end - start)));
    return v == "(null)" ? std::string() : v;
}

std::optional<std::uint32_t> job_uid(std::string_view line) {
    const std::string u = job_field(line, "UserId");  // "alice(1000)"
    const auto open = u.rfind('('), close = u.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    return parse_uint<std::uint32_t>(std::string_view(u).substr(open + 1, close - open - 1));
}

std::optional<std::uint32_t> newest_job_of(std::string_view all_jobs, std::uint32_t uid) {
    std::optional<std::uint32_t> best;
    for_each_line(all_jobs, [&](std::string_view line, std::size_t) {
        const auto id = parse_uint<std::uint32_t>(job_field(line, "JobId"));
        if (id && job_uid(line) == uid && (!best || *id > *best)) best = *id;
    });
    return best;
}

}  // namespace gangway::postmortem
