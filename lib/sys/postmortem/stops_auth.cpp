#include "stops_auth.hpp"

#include <algorithm>

#include "../../base/text.hpp"
#include "../../preflight/crypto.hpp"
#include "../../slurm/drain_rules.hpp"

namespace gangway::sys::postmortem {

std::string stop_signature(std::string_view key, const StopStamp& s, std::string_view body, Signed what) {
    std::string text = std::string(what == Signed::progress ? "gangway-progress" : "gangway-stop") + " 1\njob=" + std::to_string(s.job) + "\nnode=" + s.node + "\ntime=" + std::to_string(s.time_s) + "\n";
    text.append(body);
    return to_hex(hmac_sha256(key, text));
}

StopRefusal check_stop_post(std::string_view key, const char* job, const char* node, const char* time, const char* signature,
                            std::string_view body, std::int64_t now_s, StopStamp& out, Signed what) {
    if (!job || !node || !time || !signature)
        return {400, std::string("missing header ") +
                         (!job ? kHeaderJob : !node ? kHeaderNode : !time ? kHeaderTime : kHeaderSignature) +
                         " (send records with `gangway postmortem collect`)"};
    const auto j = parse_uint<std::uint32_t>(job);
    const auto t = parse_int<std::int64_t>(time);
    if (!j || *j == 0) return {400, std::string(kHeaderJob) + " " + excerpt(job) + " is not a job id"};
    if (!slurm::is_node_name(node)) return {400, std::string(kHeaderNode) + " " + excerpt(node) + " is not a node name"};
    if (!t) return {400, std::string(kHeaderTime) + " " + excerpt(time) + " is not unix seconds"};
    StopStamp s{*j, node, *t};
    // The signature before the time: an unsigned request learns nothing from
    // which of the two it failed.
    if (!equal_ct(stop_signature(key, s, body, what), signature))
        return {401, "the signature does not match the site's key (is the key file the same on this node and the admin host?)"};
    if (*t < now_s - kStopMaxSkewS || *t > now_s + kStopMaxSkewS)
        return {403, "stale record: sent at " + std::to_string(*t) + ", now is " + std::to_string(now_s) +
                         " (more than " + std::to_string(kStopMaxSkewS) + " s apart: a replay, or a node's clock is wrong)"};
    out = std::move(s);
    return {};
}

std::string stops_read_payload(std::uint32_t job) { return "gangway-stops-read job=" + std::to_string(job); }
std::string status_read_payload(std::uint32_t job) { return "gangway-status-read job=" + std::to_string(job); }

bool munge_credential_shape(std::string_view cred) {
    if (!cred.starts_with("MUNGE:") || cred.size() > kMaxMungeCredential) return false;
    return std::all_of(cred.begin() + 6, cred.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
               c == '=' || c == ':';
    });
}

std::optional<MungeCaller> parse_unmunge(std::string_view out) {
    // "KEY: value" lines, a blank line, then the payload as it was given.
    const auto blank = out.find("\n\n");
    if (blank == std::string_view::npos) return std::nullopt;
    const std::string_view head = out.substr(0, blank + 1);
    std::optional<std::string_view> status, uid;
    for (std::size_t at = 0; at < head.size();) {
        const auto end = head.find('\n', at);
        const std::string_view line = head.substr(at, end - at);
        at = end + 1;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon);
        std::string_view value = trim_right(line.substr(colon + 1));
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        if (key == "STATUS") status = value;
        else if (key == "UID") uid = value;
    }
    if (!status || *status != "Success (0)" || !uid) return std::nullopt;
    // "name (1000)": the number in the parentheses at its end.
    const auto open = uid->rfind('(');
    if (open == std::string_view::npos || !uid->ends_with(')')) return std::nullopt;
    const auto n = parse_uint<std::uint32_t>(uid->substr(open + 1, uid->size() - open - 2));
    if (!n) return std::nullopt;
    return MungeCaller{*n, std::string(out.substr(blank + 2))};
}

std::string record_mismatch(const StopStamp& s, const NodeRecord& r) {
    if (r.node != s.node) return "the record is node " + excerpt(r.node) + "'s, the request is signed by " + s.node;
    if (r.job != s.job) return "the record is of job " + std::to_string(r.job) + ", the request names job " + std::to_string(s.job);
    if (std::find(r.job_nodes.begin(), r.job_nodes.end(), r.node) == r.job_nodes.end())
        return "node " + r.node + " is not in the record's own node list";
    for (const auto& t : r.tasks)
        if (t.node != r.node || t.job != r.job)
            return "a task line names node " + excerpt(t.node) + " job " + std::to_string(t.job) + " in node " + r.node +
                   "'s record of job " + std::to_string(r.job);
    return {};
}

}  // namespace gangway::sys::postmortem
