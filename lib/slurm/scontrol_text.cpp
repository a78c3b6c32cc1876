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

std::string scontrol_config_field(std::string_view text, std::string_view key) {
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (line.substr(0, key.size()) != key) continue;
        line.remove_prefix(key.size());
        while (!line.empty() && blank(line.front())) line.remove_prefix(1);
        if (line.empty() || line.front() != '=') continue;  // a longer key ("AccountingStorageTypeX")
        line.remove_prefix(1);
        while (!line.empty() && blank(line.front())) line.remove_prefix(1);
        while (!line.empty() && blank(line.back())) line.remove_suffix(1);
        return line == "(null)" ? std::string() : std::string(line);
    }
    return {};
}

}  // namespace gangway
