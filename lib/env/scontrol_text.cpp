#include "scontrol_text.hpp"

#include <cctype>

namespace gangway {
namespace {

// Whether s starts with a field's key: letters, digits, '_' or ':', then '='.
bool starts_field(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == ':')) ++i;
    return i > 0 && i < s.size() && s[i] == '=';
}

}  // namespace

std::string scontrol_field(std::string_view text, std::string_view key) {
    std::size_t p = 0;
    for (;;) {
        p = text.find(key, p);
        if (p == std::string_view::npos) return {};
        const std::size_t eq = p + key.size();
        if ((p == 0 || text[p - 1] == ' ' || text[p - 1] == '\n') && eq < text.size() && text[eq] == '=') break;
        p = eq;
    }
    const std::size_t start = p + key.size() + 1;
    std::size_t end = start;
    while (end < text.size() && text[end] != '\n') {
        if (text[end] == ' ' && starts_field(text.substr(end + 1))) break;
        ++end;
    }
    while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
    const std::string_view v = text.substr(start, end - start);
    return v == "(null)" ? std::string() : std::string(v);
}

}  // namespace gangway
