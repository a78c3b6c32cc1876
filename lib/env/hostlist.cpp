#include "hostlist.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {
namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }

// Splits on separators that are not inside brackets: "a[1,2],b" -> "a[1,2]", "b".
std::vector<std::string_view> tokens(std::string_view expr) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        const bool end = i == expr.size();
        if (!end && expr[i] == '[') ++depth;
        if (!end && expr[i] == ']') --depth;
        if (depth < 0) throw Error("hostlist \"" + std::string(expr) + "\": ']' without '['");
        if (end || (depth == 0 && is_separator(expr[i]))) {
            if (i > start) out.push_back(expr.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0) throw Error("hostlist \"" + std::string(expr) + "\": '[' is never closed");
    return out;
}

unsigned long parse_number(std::string_view s, std::string_view token) {
    const auto v = parse_uint<unsigned long>(s);
    if (!v)
        throw Error("hostlist \"" + std::string(token) + "\": \"" + std::string(s) +
                    "\" is not a number in a range");
    return *v;
}

std::string padded(unsigned long v, std::size_t width) {
    std::string s = std::to_string(v);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    return s;
}

// Expands one token. SLURM takes the LAST bracket group as the range and
// expands earlier groups recursively inside the prefix; text after the
// bracket is a suffix shared by every host (23.11+ syntax).
void expand_token(std::string_view token, std::string_view whole, std::vector<std::string>& out) {
    const auto open = token.rfind('[');
    if (open == std::string_view::npos) {
        if (token.find(']') != std::string_view::npos)
            throw Error("hostlist \"" + std::string(whole) + "\": ']' without '['");
        out.emplace_back(token);
        return;
    }
    const auto close = token.find(']', open);
    if (close == std::string_view::npos)
        throw Error("hostlist \"" + std::string(whole) + "\": '[' is never closed");
    const std::string_view prefix = token.substr(0, open);
    const std::string_view body = token.substr(open + 1, close - open - 1);
    const std::string_view suffix = token.substr(close + 1);
    if (suffix.find_first_of("[]") != std::string_view::npos)
        throw Error("hostlist \"" + std::string(whole) + "\": nested or misplaced brackets");
    if (body.empty()) throw Error("hostlist \"" + std::string(whole) + "\": empty brackets");

    std::vector<std::string> prefixes;
    expand_token(prefix, whole, prefixes);

    std::vector<std::string> numbers;
    for (const std::string& field : split_keep_empty(body, ',')) {
        const std::string_view item = field;
        if (item.empty()) throw Error("hostlist \"" + std::string(whole) + "\": empty item in brackets");
        const auto dash = item.find('-');
        const std::string_view lo_s = item.substr(0, dash);
        const std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
        const unsigned long lo = parse_number(lo_s, whole), hi = parse_number(hi_s, whole);
        if (lo > hi)
            throw Error("hostlist \"" + std::string(whole) + "\": range " + std::string(item) +
                        " runs backwards");
        if (hi - lo >= kMaxHostlistHosts || numbers.size() + (hi - lo) >= kMaxHostlistHosts)
            throw Error("hostlist \"" + std::string(whole) + "\": more than " +
                        std::to_string(kMaxHostlistHosts) + " hosts");
        // Width comes from the low bound only, as in SLURM: [08-11] -> 08 09 10 11.
        // Counted, not `v <= hi`: that never ends when hi is the largest unsigned long.
        for (unsigned long k = 0; k <= hi - lo; ++k) numbers.push_back(padded(lo + k, lo_s.size()));
    }
    for (const auto& p : prefixes)
        for (const auto& n : numbers) {
            if (out.size() >= kMaxHostlistHosts)
                throw Error("hostlist \"" + std::string(whole) + "\": more than " +
                            std::to_string(kMaxHostlistHosts) + " hosts");
            out.push_back(p + n + std::string(suffix));
        }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expr) {
    std::vector<std::string> out;
    for (auto token : tokens(expr)) expand_token(token, expr, out);
    return out;
}

}  // namespace gangway
