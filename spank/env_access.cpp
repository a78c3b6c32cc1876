#include "env_access.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

namespace gangway::plugin {

std::optional<std::string> get_env(spank_t sp, const std::string& name) {
    // Most values fit a page on the stack; a longer one is asked for again in
    // a larger buffer (never zeroed: spank_getenv writes the terminator).
    char page[4096];
    spank_err_t rc = spank_getenv(sp, name.c_str(), page, sizeof page);
    if (rc == ESPANK_SUCCESS) return std::string(page);
    for (std::size_t size = 4 * sizeof page; rc == ESPANK_NOSPACE && size <= (1u << 26); size *= 4) {
        const std::unique_ptr<char[]> buf(new char[size]);
        rc = spank_getenv(sp, name.c_str(), buf.get(), static_cast<int>(size));
        if (rc == ESPANK_SUCCESS) return std::string(buf.get());
    }
    return std::nullopt;
}

EnvMap read_env(spank_t sp, const std::vector<std::string_view>& names) {
    EnvMap out;
    char** env = nullptr;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) {
        for (const auto& n : names)
            if (auto v = get_env(sp, std::string(n))) out.emplace(n, std::move(*v));
        return out;
    }
    for (char** e = env; *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq) continue;
        const std::string_view name(*e, static_cast<std::size_t>(eq - *e));
        const auto it = std::lower_bound(names.begin(), names.end(), name, env_name_less);
        // The first of duplicate entries wins, as with getenv.
        if (it != names.end() && *it == name) out.emplace(*it, eq + 1);
    }
    return out;
}

}  // namespace gangway::plugin
