#include "process_env.hpp"

#include <cstring>

extern char** environ;

namespace gangway::sys {

EnvMap process_env() {
    EnvMap env;
    for (char** e = environ; *e; ++e)
        if (const char* eq = std::strchr(*e, '=')) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    return env;
}

}  // namespace gangway::sys
