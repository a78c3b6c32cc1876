#include "state_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../../base/error.hpp"
#include "../node/shared_dir_file.hpp"

namespace gangway::sys {
namespace {

constexpr std::size_t kMaxStateBytes = 1 << 20;  // a few hundred lines on a large node

std::string dir_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<health::State> load_state(const std::string& path) {
    struct stat st{};
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return health::State{};
    auto text = read_owned_file(path, ::geteuid(), kMaxStateBytes);
    if (!text) return Failure{text.error()};
    try {
        return health::parse_state(*text);
    } catch (const Error& e) {
        return Failure{path + " " + e.what()};
    }
}

Result<void> save_state(const std::string& path, const health::State& s) {
    const std::string dir = dir_of(path);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return Failure{"cannot create " + dir + ": " + std::strerror(errno)};
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0) return Failure{"cannot use " + dir + ": " + std::strerror(errno)};
    if (st.st_uid != ::geteuid() || (st.st_mode & 022))
        return Failure{"not writing " + path + ": " + dir + " is writable by others or not this user's; make it " +
                       "owned by root with mode 0700 or 0755"};
    return write_file_atomic(path, health::render_state(s), 0600);
}

}  // namespace gangway::sys
