#include "state.hpp"

#include <cstdio>

namespace gangway::plugin {

State& state() {
    static State s;
    return s;
}

void note_error(const char* message) noexcept {
    auto& e = state().error;
    if (e[0] == '\0') std::snprintf(e, sizeof e, "%s", message);
}

}  // namespace gangway::plugin
