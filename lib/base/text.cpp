#include "text.hpp"

#include <cctype>
#include <algorithm>

#include "error.hpp"

namespace gangway {

std::vector<std::string> split_keep_empty(std::string_view s, char sep) {
    std::vector<std::string> out;
    for (;;) {
        const auto pos = s.find(sep);
        out.emplace_back(s.substr(0, pos));
        if (pos == std::string_view::npos) return out;
        s.remove_prefix(pos + 1);
    }
}

std::vector<std::string> split_nonempty(std::string_view s, char sep) {
    std::vector<std::string> out;
    for (auto& field : split_keep_empty(s, sep))
        if (!field.empty()) out.push_back(std::move(field));
    return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    return join(parts, sep, [](const std::string& p) -> const std::string& { return p; });
}

std::string concat(std::initializer_list<std::string_view> parts) {
    std::size_t n = 0;
    for (const auto p : parts) n += p.size();
    std::string s;
    s.reserve(n);
    for (const auto p : parts) s.append(p);
    return s;
}

std::string origin_value(std::string_view origin, std::string_view value) {
    return std::string(origin) + (origin.ends_with('=') ? "" : "=") + excerpt(value);
}

std::string excerpt(std::string_view s, std::size_t max) {
    std::string out(s.substr(0, max));
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    if (s.size() > max) out += "... (" + std::to_string(s.size()) + " characters)";
    return out;
}

std::size_t utf8_length(std::string_view s, std::size_t i) {
    if (i >= s.size()) return 0;
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (table 3-7)
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    }
    if (len == 0 || i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        const unsigned char b = byte(i + k);
        if (k == 1 ? b < lo || b > hi : b < 0x80 || b > 0xBF) return 0;
    }
    return len;
}

std::string printable_name(std::string_view s, std::size_t max) {
    std::string out;
    out.reserve(std::min(s.size(), max) + 3);
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_length(s, i);
        const unsigned char c = static_cast<unsigned char>(s[i]);
        // C1 controls are U+0080..U+009F: 0xC2 0x80..0x9F in UTF-8.
        const bool control = len == 0 || (len == 1 && (c < 0x20 || c == 0x7f)) ||
                             (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0);
        const std::size_t take = len ? len : 1;  // a C1 control is one '?' for its two bytes
        if (out.size() + take > max) {
            out += "...";
            break;
        }
        if (control) out += '?';
        else out.append(s.substr(i, len));
        i += take;
    }
    return out;
}

std::string size_text(std::size_t bytes) {
    return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

std::string_view trim_right(std::string_view s, std::string_view chars) {
    const auto last = s.find_last_not_of(chars);
    return s.substr(0, last == std::string_view::npos ? 0 : last + 1);
}

std::optional<double> parse_double(std::string_view s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string to_hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        s += digits[c >> 4];
        s += digits[c & 15];
    }
    return s;
}

std::string from_hex(std::string_view hex) {
    auto val = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    if (hex.size() % 2) throw Error("hex string has an odd number of digits");
    std::string out;
    out.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int hi = val(hex[i]), lo = val(hex[i + 1]);
        if (hi < 0 || lo < 0) throw Error("not a hex string (character \"" + std::string(1, hi < 0 ? hex[i] : hex[i + 1]) + "\")");
        out += char(hi << 4 | lo);
    }
    return out;
}

std::string quiet_text(std::string_view s, std::size_t max) {
    std::string r(s.substr(0, max));
    for (auto& c : r)
        if (!std::isprint(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '`' || c == '\\' || c == '$') c = ' ';
    return r;
}

std::string xml_escape(const std::string& s) {
    std::string o;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_length(s, i);
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else if (len == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
                 (len == 3 && s.compare(i, 2, "\xEF\xBF") == 0 && static_cast<unsigned char>(s[i + 2]) >= 0xBE))
            o += '?';  // not an XML 1.0 Char: a parser would refuse the whole file
        else {
            o.append(s, i, len);
            i += len;
            continue;
        }
        ++i;
    }
    return o;
}

}  // namespace gangway
