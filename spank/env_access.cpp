#include "env_access.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace gangway::plugin {

std::optional<std::string> get_env(spank_t sp, const std::string& name) {
    std::vector<char> buf(4096);
    for (;;) {
        const spank_err_t rc = spank_getenv(sp, name.c_str(), buf.data(), static_cast<int>(buf.size()));
        if (rc == ESPANK_SUCCESS) return std::string(buf.data());
        if (rc != ESPANK_NOSPACE || buf.size() > (1u << 24)) return std::nullopt;
        buf.resize(buf.size() * 4);
    }
}

namespace {

// Index of `name` in the sorted `names`, or names.size().
std::size_t name_index(const std::vector<std::string>& names, std::string_view name) {
    const auto it = std::lower_bound(names.begin(), names.end(), name,
                                     [](const std::string& a, std::string_view b) { return a < b; });
    return it != names.end() && *it == name ? static_cast<std::size_t>(it - names.begin()) : names.size();
}

}  // namespace

EnvMap read_env(spank_t sp, const std::vector<std::string>& names) {
    EnvMap out;
    char** env = nullptr;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) {
        for (const auto& n : names)
            if (auto v = get_env(sp, n)) out.emplace(n, std::move(*v));
        return out;
    }
    for (char** e = env; *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq) continue;
        const std::size_t i = name_index(names, std::string_view(*e, static_cast<std::size_t>(eq - *e)));
        // The first of duplicate entries wins, as with getenv.
        if (i < names.size()) out.emplace(names[i], eq + 1);
    }
    return out;
}

bool env_equals(spank_t sp, const std::vector<std::string>& names, const std::vector<std::optional<std::string>>& expected) {
    constexpr std::size_t kMaxNames = 256;
    char** env = nullptr;
    if (names.size() > kMaxNames || expected.size() != names.size() ||
        spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
        return false;
    bool seen[kMaxNames] = {};
    std::size_t matched = 0;
    for (char** e = env; *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq) continue;
        const std::size_t i = name_index(names, std::string_view(*e, static_cast<std::size_t>(eq - *e)));
        if (i == names.size() || seen[i]) continue;  // not wanted, or a later duplicate read_env ignores
        seen[i] = true;
        if (!expected[i] || *expected[i] != eq + 1) return false;
        ++matched;
    }
    const auto present = static_cast<std::size_t>(
        std::count_if(expected.begin(), expected.end(), [](const auto& v) { return v.has_value(); }));
    return matched == present;
}

}  // namespace gangway::plugin
