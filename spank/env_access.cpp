#include "env_access.hpp"

#include <vector>

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

}  // namespace gangway::plugin
