// Root's task samples (task_samples.hpp): /proc's fields and the file's lines.
#include "task_samples.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::postmortem {

char state_letter(TaskState s) noexcept {
    switch (s) {
        case TaskState::sleeping: return 'S';
        case TaskState::running: return 'R';
        case TaskState::disk_wait: return 'D';
        case TaskState::stopped: return 'T';
        case TaskState::gone: break;
    }
    return 'X';
}

std::optional<TaskState> parse_state_letter(char c) noexcept {
    switch (c) {
        case 'S': case 'I': case 'W': case 'P': case 'K': return TaskState::sleeping;
        case 'R': return TaskState::running;
        case 'D': return TaskState::disk_wait;
        case 'T': case 't': return TaskState::stopped;
        case 'Z': case 'X': case 'x': return TaskState::gone;
        default: return std::nullopt;
    }
}

std::optional<char> stat_state(std::string_view stat) noexcept {
    const auto paren = stat.rfind(')');
    if (paren == std::string_view::npos || paren + 2 >= stat.size() || stat[paren + 1] != ' ') return std::nullopt;
    return stat[paren + 2];
}

std::optional<SchedStat> parse_schedstat(std::string_view text) noexcept {
    // Two decimal fields, each followed by a blank: a loop of its own (the
    // plugin carries no 64-bit from_chars for this alone).
    std::uint64_t v[2] = {};
    std::size_t i = 0;
    for (auto& x : v) {
        const std::size_t from = i;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            if (x > (UINT64_MAX - 9) / 10) return std::nullopt;
            x = x * 10 + std::uint64_t(text[i] - '0');
        }
        if (i == from || i >= text.size() || text[i] != ' ') return std::nullopt;
        ++i;
    }
    return SchedStat{v[0], v[1]};
}

std::optional<std::uint32_t> pressure_some_avg10(std::string_view text) noexcept {
    constexpr std::string_view kSome = "some avg10=";
    if (!text.starts_with(kSome)) return std::nullopt;
    std::uint32_t whole = 0, frac = 0, digits = 0;
    std::size_t i = kSome.size();
    const std::size_t from = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && i - from < 3; ++i) whole = whole * 10 + std::uint32_t(text[i] - '0');
    if (i == from || whole > 100) return std::nullopt;
    if (i < text.size() && text[i] == '.')
        for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
            if (digits < 2) frac = frac * 10 + std::uint32_t(text[i] - '0'), ++digits;
    while (digits < 2) frac *= 10, ++digits;
    return std::min<std::uint32_t>(10000, whole * 100 + frac);
}

std::size_t parse_pids(std::string_view text, int* out, std::size_t max) noexcept {
    std::size_t n = 0;
    while (!text.empty() && n < max) {
        const auto end = text.find_first_of(" \n");
        if (const auto pid = parse_int<int>(text.substr(0, end)); pid && *pid > 0) out[n++] = *pid;
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return n;
}

namespace {

constexpr std::string_view kHead = "gangway-samples 1 step=";

// ' ' then the number (20 digits at most).
char* put(char* p, std::uint64_t v) {
    *p++ = ' ';
    return std::to_chars(p, p + 20, v).ptr;
}

[[noreturn]] void refuse(std::size_t line, const std::string& why) {
    throw Error("the task samples' line " + std::to_string(line) + " " + why + ": not a file gangway's plugin writes");
}

}  // namespace

std::size_t format_sample_header(std::uint32_t step, std::int64_t interval_ns, char (&out)[kMaxSampleLine]) noexcept {
    char* p = std::copy(kHead.begin(), kHead.end(), out);
    p = std::to_chars(p, p + 10, step).ptr;
    constexpr std::string_view kInterval = " interval_ms=";
    p = std::copy(kInterval.begin(), kInterval.end(), p);
    p = std::to_chars(p, p + 20, std::uint64_t(interval_ns < 0 ? 0 : interval_ns / 1'000'000)).ptr;
    *p++ = '\n';
    return std::size_t(p - out);
}

std::size_t format_sample_line(const TaskSample& s, char (&out)[kMaxSampleLine]) noexcept {
    // 20 + 11 + 2 + 21 + 21 + 11 + 1 bytes at most: within kMaxSampleLine.
    char* p = std::to_chars(out, out + 20, std::uint64_t(s.t_ns < 0 ? 0 : s.t_ns)).ptr;
    p = put(p, s.rank);
    *p++ = ' ';
    *p++ = state_letter(s.state);
    p = put(p, s.cpu_ns);
    p = put(p, s.wait_ns);
    p = put(p, s.procs);
    *p++ = '\n';
    return std::size_t(p - out);
}

std::size_t format_pressure_line(const PressureSample& p, char (&out)[kMaxSampleLine]) noexcept {
    char* o = out;
    *o++ = 'P';
    o = put(o, std::uint64_t(p.t_ns < 0 ? 0 : p.t_ns));
    o = put(o, p.cpu);
    o = put(o, p.memory);
    o = put(o, p.io);
    *o++ = ' ';
    *o++ = p.scope == PressureScope::step ? 's' : 'n';
    *o++ = '\n';
    return std::size_t(o - out);
}

StepSamples parse_samples(std::string_view text) {
    StepSamples r;
    bool head = false;
    for_each_line(text, [&](std::string_view line, std::size_t n) {
        if (!head) {
            const auto iv = line.find(" interval_ms=");
            if (!line.starts_with(kHead) || iv == std::string_view::npos) refuse(n, "is not \"gangway-samples 1 step=S interval_ms=N\"");
            const auto step = parse_uint<std::uint32_t>(line.substr(kHead.size(), iv - kHead.size()));
            const auto ms = parse_uint<std::uint32_t>(line.substr(iv + 13));
            if (!step || !ms) refuse(n, "has a step or interval that is not a whole number");
            r.step = *step;
            r.interval_ns = std::int64_t(*ms) * 1'000'000;
            head = true;
            return;
        }
        if (r.rows.size() >= kMaxSampleRounds * kMaxSampledTasks)
            refuse(n, "is past " + std::to_string(kMaxSampleRounds * kMaxSampledTasks) + " rows");
        std::string_view f[6];
        std::size_t k = 0;
        while (k < 6 && !line.empty()) {
            const auto sp = line.find(' ');
            f[k++] = line.substr(0, sp);
            line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
        }
        if (k == 6 && line.empty() && f[0] == "P") {
            if (r.pressure.size() >= kMaxSampleRounds) refuse(n, "is past " + std::to_string(kMaxSampleRounds) + " pressure lines");
            PressureSample p;
            p.step = r.step;
            const auto t = parse_int<std::int64_t>(f[1]);
            const auto cpu = parse_uint<std::uint32_t>(f[2]), mem = parse_uint<std::uint32_t>(f[3]), io = parse_uint<std::uint32_t>(f[4]);
            if (!t || !cpu || !mem || !io || *cpu > 10000 || *mem > 10000 || *io > 10000 || (f[5] != "n" && f[5] != "s"))
                refuse(n, "is not a pressure line (P T_NS CPU MEMORY IO n|s)");
            p.t_ns = *t, p.cpu = *cpu, p.memory = *mem, p.io = *io;
            p.scope = f[5] == "s" ? PressureScope::step : PressureScope::node;
            r.pressure.push_back(p);
            return;
        }
        if (k != 6 || !line.empty()) refuse(n, "is not six fields (T_NS RANK STATE CPU_NS WAIT_NS PROCS)");
        TaskSample s;
        s.step = r.step;
        const auto t = parse_int<std::int64_t>(f[0]);
        const auto rank = parse_uint<std::uint32_t>(f[1]);
        const auto state = f[2].size() == 1 ? parse_state_letter(f[2][0]) : std::nullopt;
        const auto cpu = parse_uint<std::uint64_t>(f[3]);
        const auto wait = parse_uint<std::uint64_t>(f[4]);
        const auto procs = parse_uint<std::uint32_t>(f[5]);
        if (!t || !rank || !state || !cpu || !wait || !procs) refuse(n, "has a field out of range");
        s.t_ns = *t, s.rank = *rank, s.state = *state, s.cpu_ns = *cpu, s.wait_ns = *wait, s.procs = *procs;
        r.rows.push_back(s);
    });
    if (!head) refuse(1, "is missing (an empty file)");
    return r;
}

}  // namespace gangway::postmortem
