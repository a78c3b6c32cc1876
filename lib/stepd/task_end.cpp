// A task's end as one key=value line (task_end.hpp). This file is in
// libgangway_core, which the plugin links: no JSON library, no engine code,
// and the writer is a handful of appends (slurmstepd runs it for every task).
// The reader is the Epilog's, as root, of a file root wrote; it is strict all
// the same (a fixed order, each key once, every number whole and in range),
// so that a line is either exactly what a plugin wrote or refused.
#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "task_end.hpp"

namespace gangway::postmortem {
namespace {

constexpr std::string_view kHead = "gangway-task 1";

// The keys, in the order format writes them and parse requires them.
constexpr std::array<std::string_view, 10> kKeys = {"t_ns", "node",        "job",       "step",      "rank",
                                                    "local_rank", "pid", "wait_status", "oom_kills", "requeue"};

bool node_byte_ok(char c) { return c > ' ' && c < 0x7f && c != '='; }

[[noreturn]] void refuse(const std::string& why) {
    throw Error("the task record " + why + ": not a line gangway's plugin writes");
}

template <class T>
T number(std::string_view key, std::string_view v) {
    std::optional<T> n;
    if constexpr (std::is_signed_v<T>)
        n = parse_int<T>(v);
    else
        n = parse_uint<T>(v);
    if (!n) refuse("has " + std::string(key) + "=" + excerpt(v) + ", not a number in range");
    return *n;
}

}  // namespace

namespace {

// " key=" then the number: one std::to_chars each for the signed and the
// unsigned fields (the longest line, a 255-byte node name and every number
// at its widest, is 452 bytes: it always fits kMaxTaskLine).
char* key(char* p, std::string_view k) {
    *p++ = ' ';
    p = std::copy(k.begin(), k.end(), p);
    *p++ = '=';
    return p;
}
char* put(char* p, std::string_view k, std::uint64_t v) { return std::to_chars(key(p, k), p + 64, v).ptr; }
char* put_signed(char* p, std::string_view k, std::int64_t v) { return std::to_chars(key(p, k), p + 64, v).ptr; }

}  // namespace

std::size_t format_task_end(const TaskEnd& t, char (&out)[kMaxTaskLine]) noexcept {
    char* p = std::copy(kHead.begin(), kHead.end(), out);
    p = put_signed(p, kKeys[0], t.t_ns);
    p = key(p, kKeys[1]);
    const std::size_t n = std::min(t.node.size(), kMaxNodeName);
    for (std::size_t i = 0; i < n; ++i) *p++ = node_byte_ok(t.node[i]) ? t.node[i] : '?';
    if (n == 0) *p++ = '?';
    p = put(p, kKeys[2], t.job);
    p = put(p, kKeys[3], t.step);
    p = put(p, kKeys[4], t.rank);
    p = put(p, kKeys[5], t.local_rank);
    p = put_signed(p, kKeys[6], t.pid);
    p = put_signed(p, kKeys[7], t.wait_status);
    p = put(p, kKeys[8], t.oom_kills);
    p = key(p, kKeys[9]);
    *p++ = t.requeue_on_fail ? '1' : '0';
    *p++ = '\n';
    return static_cast<std::size_t>(p - out);
}

std::string format_task_end(const TaskEnd& t) {
    char line[kMaxTaskLine];
    return std::string(line, format_task_end(t, line));
}

TaskEnd parse_task_end(std::string_view line) {
    if (line.size() > kMaxTaskLine)
        refuse("is " + std::to_string(line.size()) + " bytes, over " + std::to_string(kMaxTaskLine));
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (line.substr(0, kHead.size()) != kHead || (line.size() > kHead.size() && line[kHead.size()] != ' '))
        refuse("does not start with \"" + std::string(kHead) + "\" (" + excerpt(line, 32) + ")");
    const std::string_view rest = line.size() > kHead.size() ? line.substr(kHead.size() + 1) : std::string_view();
    const auto fields = split_keep_empty(rest, ' ');
    if (fields.size() != kKeys.size())
        refuse("has " + std::to_string(fields.size()) + " fields, not " + std::to_string(kKeys.size()));
    TaskEnd t;
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
        const std::string_view f = fields[i];
        const auto eq = f.find('=');
        if (eq == std::string_view::npos || f.substr(0, eq) != kKeys[i])
            refuse("has \"" + excerpt(f, 32) + "\" where " + std::string(kKeys[i]) + "= belongs");
        const std::string_view v = f.substr(eq + 1);
        switch (i) {
            case 0: t.t_ns = number<std::int64_t>(kKeys[i], v); break;
            case 1:
                if (v.empty() || v.size() > kMaxNodeName) refuse("has a node name of " + std::to_string(v.size()) + " bytes");
                for (char c : v)
                    if (!node_byte_ok(c)) refuse("has a node name with a byte that is not printable ASCII");
                t.node = std::string(v);
                break;
            case 2: t.job = number<std::uint32_t>(kKeys[i], v); break;
            case 3: t.step = number<std::uint32_t>(kKeys[i], v); break;
            case 4: t.rank = number<std::uint32_t>(kKeys[i], v); break;
            case 5: t.local_rank = number<std::uint32_t>(kKeys[i], v); break;
            case 6: t.pid = number<std::int32_t>(kKeys[i], v); break;
            case 7: t.wait_status = number<int>(kKeys[i], v); break;
            case 8: t.oom_kills = number<std::uint64_t>(kKeys[i], v); break;
            case 9:
                if (v != "0" && v != "1") refuse("has requeue=" + excerpt(v, 16) + ", not 0 or 1");
                t.requeue_on_fail = v == "1";
                break;
        }
    }
    return t;
}

}  // namespace gangway::postmortem
