#include "spool.hpp"

#include <sys/stat.h>

#include "../../base/text.hpp"
#include "../node/file.hpp"

namespace gangway::sys::fleet {

Result<std::string> new_check_id(std::string_view what, std::int64_t time) {
    auto r = sys::random_bytes(8);
    if (!r) return Failure{"no check id: " + r.error()};
    std::string id;
    for (char c : what.substr(0, 96))
        id += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
    return id + "." + std::to_string(time) + "." + to_hex(*r);
}

bool spool_exists(const std::string& dir) {
    struct stat st{};
    return !dir.empty() && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> spool_report(const std::string& dir, const std::string& id, const std::string& text) {
    const std::string name = id + ".json";
    if (auto w = sys::write_file_atomic(dir, name, text, 0600, "the fleet report"); !w) return Failure{w.error()};
    return dir + "/" + name;
}

}  // namespace gangway::sys::fleet
