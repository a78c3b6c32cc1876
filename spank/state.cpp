#include "state.hpp"

namespace gangway::plugin {

State& state() {
    static State s;
    return s;
}

void note_error(const std::string& message) {
    if (state().error.empty()) state().error = message;
}

}  // namespace gangway::plugin
