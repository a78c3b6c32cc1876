#include "state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <cerrno>
#include <cstring>

#include "../../base/error.hpp"
#include "../node/file.hpp"
#include "../run/deadline.hpp"

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

namespace {

// The state's directory, made when missing; refused when others could swap its files.
Result<void> own_dir(const std::string& path) {
    const std::string dir = dir_of(path);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return Failure{"cannot create " + dir + ": " + std::strerror(errno)};
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0) return Failure{"cannot use " + dir + ": " + std::strerror(errno)};
    if (st.st_uid != ::geteuid() || (st.st_mode & 022))
        return Failure{"not using " + path + ": " + dir + " is writable by others or not this user's; make it " +
                       "owned by root with mode 0700 or 0755"};
    return {};
}

}  // namespace

Result<void> save_state(const std::string& path, const health::State& s) {
    if (auto d = own_dir(path); !d) return d;
    return write_file_atomic(path, health::render_state(s), 0600);
}

StateLock::~StateLock() {
    if (fd_ >= 0) ::close(fd_);  // and with it the lock
}

Result<StateLock> lock_state(const std::string& path, double wait_s) {
    if (auto d = own_dir(path); !d) return Failure{d.error()};
    const std::string lock = path + ".lock";
    StateLock l;
    l.fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (l.fd_ < 0) return Failure{"cannot open " + lock + ": " + std::strerror(errno)};
    const Deadline end = after_s(wait_s);
    while (::flock(l.fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) return Failure{"cannot lock " + lock + ": " + std::strerror(errno)};
        if (Clock::now() >= end) return Failure{"another gangway node-check holds " + lock};
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return l;
}

}  // namespace gangway::sys
