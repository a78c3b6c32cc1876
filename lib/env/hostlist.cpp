#include "hostlist.hpp"

#include <charconv>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {
namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }

Error bad(std::string_view whole, const std::string& why) {
    return Error("hostlist \"" + excerpt(whole) + "\": " + why);
}

Error too_many(std::string_view whole) {
    return bad(whole, "more than " + std::to_string(kMaxHostlistHosts) + " hosts");
}

// Brackets must balance before anything is expanded (so a list that is
// malformed at its end is refused as such, whatever comes before): one pass.
void check_brackets(std::string_view expr) {
    int depth = 0;
    for (char c : expr) {
        if (c == '[') ++depth;
        if (c == ']' && --depth < 0) throw bad(expr, "']' without '['");
    }
    if (depth != 0) throw bad(expr, "'[' is never closed");
}

std::size_t digits(unsigned long v) {
    std::size_t n = 1;
    while (v >= 10) v /= 10, ++n;
    return n;
}

unsigned long parse_number(std::string_view s, std::string_view whole) {
    const auto v = parse_uint<unsigned long>(s);
    if (!v) throw bad(whole, "\"" + excerpt(s) + "\" is not a number in a range");
    return *v;
}

// One item of a bracket group: lo-hi, each name's number padded to `width`
// (the low bound's digits, as in SLURM: [08-11] -> 08 09 10 11).
struct Range {
    unsigned long lo = 0, hi = 0;
    std::size_t width = 0;
};

void append_number(std::string& out, unsigned long v, std::size_t width) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    const std::size_t n = static_cast<std::size_t>(end - buf);
    if (n < width) out.append(width - n, '0');
    out.append(buf, n);
}

// A token as SLURM reads it: text, a bracket group, text, ..., text. Every
// group multiplies the names: SLURM expands the last group as the range and
// the earlier ones inside the prefix, which gives the product of the groups
// in order, the last varying fastest. Parsed once, left to right, with each
// name's count and greatest length known before any name is made. A group of
// one value ("[0]", "[7-7]") turns nothing: it is written into the text
// around it, so that only groups that turn are left, at most 16 (each at
// least doubles the names, at most 65,536).
struct Token {
    std::vector<std::string> text;       // groups + 1 pieces, maybe empty; together at most 255 characters
    std::vector<Range> ranges;           // every group's items, group after group
    std::vector<std::size_t> group_end;  // one past each group's last item in `ranges`
};

Token parse_token(std::string_view token, std::string_view whole, std::size_t room) {
    Token t;
    std::string text;  // the text before the next group that turns
    std::size_t longest = 0, names = 1, start = 0;
    auto add_text = [&](std::string_view s) {
        longest += s.size();
        if (longest > kMaxHostNameLength)
            throw bad(whole, "a host name would be longer than " + std::to_string(kMaxHostNameLength) + " characters");
        text += s;
    };
    for (std::size_t open = token.find('['); open != std::string_view::npos; open = token.find('[', start)) {
        add_text(token.substr(start, open - start));
        const auto close = token.find(']', open);  // balanced: check_brackets
        const std::string_view body = token.substr(open + 1, close - open - 1);
        if (body.find('[') != std::string_view::npos) throw bad(whole, "nested or misplaced brackets");
        if (body.empty()) throw bad(whole, "empty brackets");
        std::size_t count = 0, widest = 0;
        for (std::size_t pos = 0;;) {
            const auto comma = body.find(',', pos);
            const std::string_view item = body.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
            if (item.empty()) throw bad(whole, "empty item in brackets");
            const auto dash = item.find('-');
            const std::string_view lo_s = item.substr(0, dash);
            const std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
            // The width first: a zero-padded bound longer than a name is
            // refused before its digits are read as a number.
            const std::size_t width = lo_s.size();
            if (longest + width > kMaxHostNameLength)
                throw bad(whole, "a host name would be longer than " + std::to_string(kMaxHostNameLength) + " characters");
            const unsigned long lo = parse_number(lo_s, whole), hi = parse_number(hi_s, whole);
            if (lo > hi) throw bad(whole, "range " + excerpt(item) + " runs backwards");
            // Counted, not summed first: hi - lo + 1 wraps for the whole range of unsigned long.
            if (hi - lo >= kMaxHostlistHosts - count) throw too_many(whole);
            count += hi - lo + 1;
            widest = std::max(widest, std::max(width, digits(hi)));
            t.ranges.push_back({lo, hi, width});
            if (comma == std::string_view::npos) break;
            pos = comma + 1;
        }
        longest += widest;
        if (longest > kMaxHostNameLength)
            throw bad(whole, "a host name would be longer than " + std::to_string(kMaxHostNameLength) + " characters");
        if (count == 1) {
            append_number(text, t.ranges.back().lo, t.ranges.back().width);
            t.ranges.pop_back();
        } else {
            if (count > room / names) throw too_many(whole);
            names *= count;
            t.text.push_back(std::move(text));
            text.clear();
            t.group_end.push_back(t.ranges.size());
        }
        start = close + 1;
    }
    add_text(token.substr(start));
    t.text.push_back(std::move(text));
    if (names > room) throw too_many(whole);
    return t;
}

// Every name of a parsed token, in SLURM's order: an odometer over the
// groups (the last turning fastest). The name is kept between names and
// rewritten only from the group that turned.
void expand_token(const Token& t, std::vector<std::string>& out) {
    const std::size_t groups = t.group_end.size();
    std::vector<std::size_t> item(groups), first(groups), mark(groups + 1);  // mark: where text[g] starts in `name`
    std::vector<unsigned long> value(groups);
    for (std::size_t g = 0; g < groups; ++g) {
        first[g] = item[g] = g == 0 ? 0 : t.group_end[g - 1];
        value[g] = t.ranges[item[g]].lo;
    }
    std::string name;
    std::size_t from = 0;  // the first group whose number changed: the name is rewritten from there
    for (;;) {
        name.resize(mark[from]);
        for (std::size_t g = from; g < groups; ++g) {
            mark[g] = name.size();
            name += t.text[g];
            append_number(name, value[g], t.ranges[item[g]].width);
        }
        mark[groups] = name.size();
        name += t.text.back();
        out.push_back(name);  // a copy: exactly the name's size, where `name` keeps its capacity
        std::size_t g = groups;
        for (; g > 0; --g) {
            const std::size_t k = g - 1;
            if (value[k] < t.ranges[item[k]].hi) {
                ++value[k];
                break;
            }
            if (++item[k] < t.group_end[k]) {
                value[k] = t.ranges[item[k]].lo;
                break;
            }
            item[k] = first[k];
            value[k] = t.ranges[item[k]].lo;
        }
        if (g == 0) return;
        from = g - 1;
    }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expr) {
    check_brackets(expr);
    std::vector<std::string> out;
    // Tokens are separated by separators outside brackets: "a[1,2],b" -> "a[1,2]", "b".
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        const bool end = i == expr.size();
        if (!end && expr[i] == '[') ++depth;
        if (!end && expr[i] == ']') --depth;
        if (!end && (depth != 0 || !is_separator(expr[i]))) continue;
        if (i > start) {
            if (out.size() == kMaxHostlistHosts) throw too_many(expr);
            expand_token(parse_token(expr.substr(start, i - start), expr, kMaxHostlistHosts - out.size()), out);
        }
        start = i + 1;
    }
    return out;
}

}  // namespace gangway
