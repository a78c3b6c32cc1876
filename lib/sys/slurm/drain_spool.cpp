#include "drain_spool.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "../../base/text.hpp"
#include "../node/file.hpp"  // random_bytes

namespace gangway::sys {

bool drain_spool_exists(const std::string& dir) {
    struct stat st{};
    return !dir.empty() && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> write_drain_request(const std::string& dir, const preflight::DrainRequest& d) {
    std::string name = d.file;
    auto w = write_file_atomic(dir, name, d.text, 0644, "the drain request");
    struct stat planted{};
    if (!w && ::lstat((dir + "/" + d.file).c_str(), &planted) == 0 && planted.st_uid != ::geteuid()) {
        if (const auto r = random_bytes(8)) {
            name = d.file + "," + to_hex(*r);
            w = write_file_atomic(dir, name, d.text, 0644, "the drain request");
        }
    }
    if (!w) return Failure{w.error()};
    return name;
}

}  // namespace gangway::sys
