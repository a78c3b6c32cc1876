#include "version_text.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gangway::preflight {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The run of digits and dots at `at`, which must start with a digit.
std::string dotted_at(std::string_view s, std::size_t at) {
    if (at >= s.size() || !digit(s[at])) return "";
    std::size_t end = at;
    while (end < s.size() && (digit(s[end]) || s[end] == '.')) ++end;
    return std::string(s.substr(at, end - at));
}

std::size_t skip_space(std::string_view s, std::size_t at) {
    while (at < s.size() && space(s[at])) ++at;
    return at;
}

// The numbers of a dotted version ("12.4.1"), one at a time, up to its first
// character that is neither a digit nor a dot: a dot ends a number (an empty
// one is 0), and a version with a dot has a number after its last one.
class Parts {
public:
    explicit Parts(std::string_view v) : v_(v) {}
    std::optional<unsigned long> next() {
        if (ended_) return std::nullopt;
        unsigned long n = 0;
        bool any = false;
        for (; at_ < v_.size(); ++at_) {
            const char c = v_[at_];
            if (digit(c)) {
                n = n * 10 + static_cast<unsigned long>(c - '0');
                any = true;
            } else if (c == '.') {
                ++at_;
                dotted_ = true;
                return n;
            } else {
                break;
            }
        }
        ended_ = true;
        if (any || dotted_) return n;
        return std::nullopt;
    }

private:
    std::string_view v_;
    std::size_t at_ = 0;
    bool ended_ = false, dotted_ = false;
};

}  // namespace

std::string driver_version_from_proc(std::string_view line) {
    constexpr std::string_view key = "Kernel Module";
    const auto k = line.find(key);
    if (k == std::string_view::npos) return "";
    auto at = k + key.size();
    // The open module names the architecture: "Kernel Module for x86_64".
    if (line.substr(at, 5) == " for ") {
        at += 5;
        while (at < line.size() && !space(line[at])) ++at;
    }
    if (at >= line.size() || !space(line[at])) return "";
    return dotted_at(line, skip_space(line, at));
}

std::string cuda_version_from_json(std::string_view text) {
    const auto key = text.find("\"cuda\"");
    if (key == std::string_view::npos) return "";
    auto at = skip_space(text, key + 6);
    if (at >= text.size() || text[at] != ':') return "";
    at = skip_space(text, at + 1);
    if (at >= text.size() || text[at] != '{') return "";
    const auto close = text.find('}', at);
    const auto obj = text.substr(at, close == std::string_view::npos ? std::string_view::npos : close - at);
    const auto ver = obj.find("\"version\"");
    if (ver == std::string_view::npos) return "";
    auto v = skip_space(obj, ver + 9);
    if (v >= obj.size() || obj[v] != ':') return "";
    v = skip_space(obj, v + 1);
    if (v >= obj.size() || obj[v] != '"') return "";
    const auto out = dotted_at(obj, v + 1);
    return v + 1 + out.size() < obj.size() && obj[v + 1 + out.size()] == '"' ? out : "";
}

std::string cuda_version_from_txt(std::string_view line) {
    constexpr std::string_view key = "CUDA Version ";
    const auto k = line.find(key);
    return k == std::string_view::npos ? "" : dotted_at(line, k + key.size());
}

std::string nccl_version_from_soname(std::string_view name) {
    constexpr std::string_view prefix = "libnccl.so.";
    if (name.substr(0, prefix.size()) != prefix) return "";
    const auto v = name.substr(prefix.size());
    // Exactly three numbers: the soname link libnccl.so.2 names no release.
    int dots = 0;
    bool after_dot = true;
    for (char c : v) {
        if (c == '.') {
            if (after_dot) return "";
            ++dots;
            after_dot = true;
        } else if (digit(c)) {
            after_dot = false;
        } else {
            return "";
        }
    }
    return dots == 2 && !after_dot ? std::string(v) : "";
}

bool version_less(std::string_view a, std::string_view b) {
    // Number by number, the shorter version's missing numbers 0: one pass,
    // nothing kept (a vector of each side's numbers was 8 bytes a byte).
    Parts pa(a), pb(b);
    for (;;) {
        const auto x = pa.next(), y = pb.next();
        if (!x && !y) return false;
        if (x.value_or(0) != y.value_or(0)) return x.value_or(0) < y.value_or(0);
    }
}

namespace {

std::string two_digits(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

}  // namespace

std::string SlurmVersion::text() const { return release() + "." + std::to_string(micro); }

std::string SlurmVersion::release() const { return std::to_string(major) + "." + two_digits(minor); }

std::optional<SlurmVersion> slurm_version_in(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!digit(text[i]) || (i > 0 && digit(text[i - 1]))) continue;
        int part[3] = {0, 0, 0};
        std::size_t j = i;
        int k = 0;
        for (; k < 3; ++k) {
            const std::size_t start = j;
            // Six digits at most: no number overflows an int, and no longer run is a release.
            while (j < text.size() && digit(text[j]) && j - start < 6) part[k] = part[k] * 10 + (text[j++] - '0');
            if (j == start) break;
            if (k < 2) {
                if (j >= text.size() || text[j] != '.') break;
                ++j;
            }
        }
        if (k == 3) return SlurmVersion{part[0], part[1], part[2]};
    }
    return std::nullopt;
}

SlurmVersion slurm_version_from_number(std::uint32_t n) {
    return SlurmVersion{static_cast<int>((n >> 16) & 0xff), static_cast<int>((n >> 8) & 0xff), static_cast<int>(n & 0xff)};
}

}  // namespace gangway::preflight
