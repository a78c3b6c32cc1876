// Text helpers with one spelling for the whole tree, so that every parser
// agrees on what "a,,b", "12abc" or " 7" means: fields and lists, numbers
// without exceptions, hex. Pure: nothing here reads the environment (that is
// sys::env_or, lib/sys/node/process_env.hpp).
#pragma once
#include <charconv>
#include <concepts>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace gangway {

// Every field between separators: n separators give n + 1 fields, so "" is
// one empty field and "a,,b" is {"a", "", "b"}. For grammars in which an
// empty field is an error the caller reports (cpu lists, hostlist ranges).
std::vector<std::string> split_keep_empty(std::string_view s, char sep);

// The non-empty fields only: "", "," and "a,,b," give {}, {} and {"a", "b"}.
// For lists in which an empty entry means nothing (words, PATH-like lists).
std::vector<std::string> split_nonempty(std::string_view s, char sep);

// parts[0] + sep + parts[1] + ...; "" for no parts.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// The parts one after the other, in one allocation: a path or a line built
// from pieces without a temporary per `+` (the plugin's post-mortem paths).
std::string concat(std::initializer_list<std::string_view> parts);

// The same for any range, each item turned into text by `to_text`.
template <class Range, class ToText>
std::string join(const Range& items, std::string_view sep, ToText&& to_text) {
    std::string out;
    bool first = true;
    for (const auto& item : items) {
        if (!first) out += sep;
        first = false;
        out += to_text(item);
    }
    return out;
}

// "ORIGIN=VALUE" for a message about a value and where it came from ("--gangway",
// "GANGWAY_PIN", "plugstack.conf: pin="): an origin already ending in '=' gets none added.
// The value as excerpt() quotes it: a message stays one short line.
std::string origin_value(std::string_view origin, std::string_view value);

// Outside input as a message may quote it: at most `max` characters of it
// (then "..." and its whole length), control characters as '?', so that a
// refusal stays one short line however long or odd the input was (a node
// list of 64 KB, with newlines between its hosts).
std::string excerpt(std::string_view s, std::size_t max = 64);

// Text for a SLURM reason (a drain's) and the one-line files that carry it:
// control characters, quotes, '`', '$' and '\' as blanks, so that
// scontrol's parser, a shell that echoes it and a line-based file all take it
// as it is; at most `max` bytes. The node check's drain reasons use it; a
// job's drains (the Epilog's, the post-mortem's) keep to the stricter
// slurm::reason_text, whose "(job J)" mark must not be forged.
std::string quiet_text(std::string_view s, std::size_t max);

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when
// the bytes there are not one (Unicode's table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF). For the writers that must not pass
// arbitrary bytes on (names to a terminal, XML, OpenMetrics labels).
std::size_t utf8_length(std::string_view s, std::size_t i);

// A name from outside (a node, a device, a peer class, a spool file's name)
// as every reader prints it: well-formed UTF-8 kept, every control character
// (C0, DEL, C1) and every byte that is not UTF-8 as '?', and at most `max`
// bytes of it (cut at a character, then "..."). So a name can neither end a
// line, forge another, move a terminal's cursor, cut a printf("%s") short at
// a NUL, nor widen a table or a plot without bound; two names that print
// alike are still two rows. Each of the fleet's readers and the ingest's log
// print names through this one function.
inline constexpr std::size_t kPrintableNameMax = 64;
std::string printable_name(std::string_view s, std::size_t max = kPrintableNameMax);

// Text for XML 1.0 content or an attribute: < > & " escaped, and every
// character XML 1.0 forbids (C0 controls but tab, newline and carriage
// return; U+FFFE, U+FFFF; any byte that is not UTF-8) written as '?', so that
// an SVG stays well-formed whatever a name holds.
std::string xml_escape(const std::string& s);

// `s` without the characters of `chars` at its end.
std::string_view trim_right(std::string_view s, std::string_view chars = " \t\r\n");

// A size limit as a message names it: "16 MiB" when whole mebibytes, else "1024 bytes".
std::string size_text(std::size_t bytes);

// Calls f(line, number) for each line of `text` (1-based, without its '\n'),
// in place: a copy of every line (a std::string each) cost 32 bytes for each
// empty one, 32 times the text. The newline that ends the last line starts no line.
template <class F>
void for_each_line(std::string_view text, F&& f) {
    std::size_t number = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        f(text.substr(0, nl), ++number);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
}

namespace detail {
template <class T>
std::optional<T> parse_whole(std::string_view s, int base) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}
}  // namespace detail

// A number that is the whole of `s` and fits T, else nullopt; nothing throws.
// Unlike std::stoi, strtoul and atoi, "12abc", " 12", "+12" and "" are not
// numbers, and a number out of T's range is not silently wrapped or clamped.
// Base 16 takes the digits alone: strip a "0x" first.
template <std::unsigned_integral T = unsigned>
std::optional<T> parse_uint(std::string_view s, int base = 10) {
    return detail::parse_whole<T>(s, base);  // from_chars takes no '-' for unsigned types
}
template <std::signed_integral T = int>
std::optional<T> parse_int(std::string_view s, int base = 10) {
    return detail::parse_whole<T>(s, base);
}
// Decimal or exponent notation, and "inf" and "nan" as printf and
// std::to_string write them; the same whole-string rule, and no locale.
std::optional<double> parse_double(std::string_view s);

// Lower-case hex digits of the bytes: "\x00\xff" gives "00ff".
std::string to_hex(std::string_view bytes);
// The bytes of a hex string (either case). Throws gangway::Error on an odd
// number of digits or a character that is not one.
std::string from_hex(std::string_view hex);

}  // namespace gangway
