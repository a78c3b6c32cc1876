#include "shared_dir_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../../base/text.hpp"
#include "../net/sock.hpp"

namespace gangway::sys {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// A name no other process picks: the pid and random bytes, hidden by the dot
// so that the Epilog's glob (gangway-drain.JOB.*) never sees it.
Result<std::string> private_name(const std::string& name) {
    auto r = random_bytes(8);
    if (!r) return Failure{r.error()};
    return "." + name + ".tmp." + std::to_string(::getpid()) + "." + to_hex(*r);
}

}  // namespace

Result<void> write_file_atomic(const std::string& dir, const std::string& name, const std::string& text, mode_t mode) {
    const auto tmp_name = private_name(name);
    if (!tmp_name) return Failure{tmp_name.error()};
    const std::string tmp = dir + "/" + *tmp_name, path = dir + "/" + name;
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
    if (!fd) return Failure{errno_text("cannot write " + path)};
    std::size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const auto why = errno_text("cannot write " + path);
            ::unlink(tmp.c_str());
            return Failure{why};
        }
        off += static_cast<std::size_t>(n);
    }
    if (::close(fd.release()) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const auto why = errno_text("cannot write " + path);
        ::unlink(tmp.c_str());
        return Failure{why};
    }
    return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return write_file_atomic(".", path, text, mode);
    return write_file_atomic(slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1), text, mode);
}

}  // namespace gangway::sys
