#include "state.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::health {
namespace {

constexpr std::string_view kHeader = "gangway-node-check-state 1";

// "WORD rest of the line" -> {WORD, rest}.
std::pair<std::string_view, std::string_view> head(std::string_view line) {
    const auto sp = line.find(' ');
    if (sp == std::string_view::npos) return {line, {}};
    return {line.substr(0, sp), line.substr(sp + 1)};
}

// No line breaks in what goes on one line (a reason from SLURM, a device name).
std::string one_line(std::string s) {
    for (auto& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace

State parse_state(std::string_view text) {
    const auto lines = split_nonempty(text, '\n');
    if (lines.empty() || lines[0] != kHeader)
        throw Error("is not a node check state file (its first line is not \"" + std::string(kHeader) + "\")");
    State s;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        if (lines[i][0] == '#') continue;
        const auto [word, rest] = head(lines[i]);
        auto bad = [&, w = word] { return Error("line " + std::to_string(i + 1) + " (" + std::string(w) + ") is malformed"); };
        if (word == "time") {
            const auto t = parse_int<std::int64_t>(rest);
            if (!t) throw bad();
            s.time = *t;
        } else if (word == "healthy_runs") {
            const auto n = parse_uint<unsigned>(rest);
            if (!n) throw bad();
            s.healthy_runs = *n;
        } else if (word == "drained") {
            s.drained = std::string(rest);
        } else if (word == "kmsg_seq") {
            const auto n = parse_uint<std::uint64_t>(rest);
            if (!n) throw bad();
            s.kmsg_seq = *n;
        } else if (word == "counter") {
            // "counter mlx5_0/1 link_downed 3": the name is all but the last word.
            const auto sp = rest.rfind(' ');
            if (sp == std::string_view::npos) throw bad();
            const auto v = parse_uint<std::uint64_t>(rest.substr(sp + 1));
            if (!v) throw bad();
            s.counters[std::string(rest.substr(0, sp))] = *v;
        } else if (word == "failed") {
            const auto [check, device] = head(rest);
            const auto c = parse_check(check);
            if (!c || device.empty()) throw bad();
            s.failed.insert({*c, std::string(device)});
        } else {
            throw bad();
        }
    }
    return s;
}

std::string render_state(const State& s) {
    std::string out = std::string(kHeader) + "\n";
    out += "# written by gangway node-check after each run; removing it starts afresh\n";
    out += "time " + std::to_string(s.time) + "\n";
    out += "healthy_runs " + std::to_string(s.healthy_runs) + "\n";
    if (!s.drained.empty()) out += "drained " + one_line(s.drained) + "\n";
    if (s.kmsg_seq) out += "kmsg_seq " + std::to_string(*s.kmsg_seq) + "\n";
    for (const auto& [k, v] : s.counters) out += "counter " + one_line(k) + " " + std::to_string(v) + "\n";
    for (const auto& k : s.failed) out += std::string("failed ") + to_string(k.check) + " " + one_line(k.device) + "\n";
    return out;
}

}  // namespace gangway::health
