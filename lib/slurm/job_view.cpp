#include "job_view.hpp"

#include <array>
#include <utility>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::slurm {
namespace {

constexpr std::array<std::pair<std::string_view, JobState>, 13> kStates{{
    {"PENDING", JobState::pending},
    {"RUNNING", JobState::running},
    {"SUSPENDED", JobState::suspended},
    {"COMPLETING", JobState::completing},
    {"COMPLETED", JobState::completed},
    {"CANCELLED", JobState::cancelled},
    {"FAILED", JobState::failed},
    {"TIMEOUT", JobState::timeout},
    {"NODE_FAIL", JobState::node_fail},
    {"PREEMPTED", JobState::preempted},
    {"BOOT_FAIL", JobState::boot_fail},
    {"DEADLINE", JobState::deadline},
    {"OUT_OF_MEMORY", JobState::out_of_memory},
}};

bool state_word(std::string_view w) {
    if (w.empty()) return false;
    for (const char c : w)
        if (!((c >= 'A' && c <= 'Z') || c == '_')) return false;
    return true;
}

// A node field (NodeList, ExcNodeList, BatchHost): "" for none or "(null)";
// no blank and no control character in a hostlist SLURM prints.
std::string node_field(std::string_view v, std::string_view line) {
    if (v == "(null)") return {};
    for (const char c : v)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
            throw Error("squeue printed a node field with a blank or a control character: \"" + quiet_text(line, 200) + "\"");
    return std::string(v);
}

}  // namespace

JobState job_state_from(std::string_view word) {
    for (const auto& [w, s] : kStates)
        if (w == word) return s;
    return JobState::other;
}

std::vector<JobView> parse_job_views(std::string_view squeue_text) {
    std::vector<JobView> out;
    for_each_line(squeue_text, [&](std::string_view line, std::size_t) {
        line = trim_right(line);
        if (line.empty()) return;
        std::vector<std::string_view> f;
        for (std::string_view rest = line;;) {
            const auto bar = rest.find('|');
            f.push_back(rest.substr(0, bar));
            if (bar == std::string_view::npos) break;
            rest.remove_prefix(bar + 1);
        }
        const auto bad = [&](const std::string& what) {
            return Error("squeue printed " + what + " in \"" + quiet_text(line, 200) + "\" (want " + kJobFormat + ")");
        };
        if (f.size() != 6) throw bad(std::to_string(f.size()) + " fields, not 6,");
        JobView v;
        const auto id = parse_uint<std::uint32_t>(f[0]);
        const auto uid = parse_uint<std::uint32_t>(f[2]);
        if (!id || *id == 0) throw bad("a job id that is not one");
        if (!uid) throw bad("a uid that is not one");
        if (!state_word(f[1])) throw bad("a state that is not a word");
        v.id = *id;
        v.uid = *uid;
        v.state_word = std::string(f[1]);
        v.state = job_state_from(f[1]);
        v.nodes = node_field(f[3], line);
        v.excluded = node_field(f[4], line);
        v.batch_host = f[5] == "n/a" ? std::string() : node_field(f[5], line);  // "n/a" while pending
        out.push_back(std::move(v));
    });
    return out;
}

std::optional<JobView> view_of(const std::vector<JobView>& views, std::uint32_t id) {
    for (const auto& v : views)
        if (v.id == id) return v;
    return std::nullopt;
}

std::optional<std::uint32_t> newest_job_of(const std::vector<JobView>& views, std::uint32_t uid) {
    std::optional<std::uint32_t> best;
    for (const auto& v : views)
        if (v.uid == uid && (!best || v.id > *best)) best = v.id;
    return best;
}

std::string admin_comment_format() { return "admin_comment:" + std::to_string(kAdminCommentWidth); }

std::string parse_admin_comment(std::string_view squeue_text) {
    squeue_text = trim_right(squeue_text, "\n");
    if (squeue_text.find('\n') != std::string_view::npos)
        throw Error("squeue printed more than one AdminComment line for one job");
    const std::string_view c = trim_right(squeue_text, " \t\r");
    return c == "(null)" ? std::string() : std::string(c);
}

}  // namespace gangway::slurm
