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
        const std::string_view name(*e, static_cast<std::size_t>(eq - *e));
        const auto it = std::lower_bound(names.begin(), names.end(), name,
                                         [](const std::string& a, std::string_view b) { return a < b; });
        // The first of duplicate entries wins, as with getenv.
        if (it != names.end() && *it == name) out.emplace(*it, eq + 1);
    }
    return out;
}

}  // namespace gangway::plugin
