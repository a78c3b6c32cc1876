#include "process_env.hpp"

#include <cstdlib>
#include <cstring>

extern char** environ;

namespace gangway::sys {

EnvMap process_env() {
    EnvMap env;
    for (char** e = environ; *e; ++e)
        if (const char* eq = std::strchr(*e, '=')) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    return env;
}

std::string env_or(const char* name, std::string_view fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string(fallback);
}

}  // namespace gangway::sys
