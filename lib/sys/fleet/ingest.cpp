#include "ingest.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../fd.hpp"

namespace gangway::sys::fleet {
namespace {

std::string errno_text() { return std::strerror(errno); }

// SPOOL/SUB, made when missing (0700), and refused when it is not a
// directory of ours: a user may create names in the sticky spool too.
Result<Fd> own_subdir(int spool, const std::string& spool_path, const char* sub) {
    if (::mkdirat(spool, sub, 0700) != 0 && errno != EEXIST)
        return Failure{"cannot make " + spool_path + "/" + sub + ": " + errno_text()};
    Fd fd(::openat(spool, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
        return Failure{spool_path + "/" + sub + " is not a directory of this user's (another user made it?): remove it and ingest again"};
    return fd;
}

std::vector<std::string> names_in(int dirfd) {
    std::vector<std::string> out;
    const int dup = ::dup(dirfd);
    if (dup < 0) return out;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return out;
    }
    // The copy shares its offset with `dirfd`: start from the top every time.
    ::rewinddir(d);
    while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

bool alive(const std::string& pid_text) {
    const auto pid = parse_int<pid_t>(pid_text);
    return pid && *pid > 0 && (::kill(*pid, 0) == 0 || errno == EPERM);
}

struct Read {
    std::string text;
    uid_t owner = 0;
    std::string error;  // set: reject
};

Read read_claimed(int work, const std::string& name, std::size_t max_bytes) {
    Read r;
    Fd fd(::openat(work, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        r.error = errno == ELOOP ? "a symbolic link, not a report" : "cannot open it: " + errno_text();
        struct stat st{};
        if (::fstatat(work, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) r.owner = st.st_uid;
        return r;
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) {
        r.error = "cannot stat it: " + errno_text();
        return r;
    }
    r.owner = st.st_uid;
    if (!S_ISREG(st.st_mode)) {
        r.error = "not a regular file";
        return r;
    }
    if (std::uint64_t(st.st_size) > max_bytes) {
        r.error = std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(max_bytes);
        return r;
    }
    r.text.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < r.text.size()) {
        const ssize_t n = ::read(fd.get(), r.text.data() + got, r.text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += std::size_t(n);
    }
    // A file that grows while read is cut at its size at the open: read one more byte to be sure.
    char extra;
    if (got != r.text.size() || ::read(fd.get(), &extra, 1) > 0) r.error = "changed while it was read";
    return r;
}

}  // namespace

Result<IngestResult> ingest(const IngestOptions& o, Store& store) {
    Fd spool(::open(o.spool.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!spool) return Failure{"cannot open the fleet spool " + o.spool + ": " + errno_text() + " (see gangway(1), FLEET)"};
    struct stat st{};
    if (::fstat(spool.get(), &st) != 0) return Failure{"cannot stat the fleet spool " + o.spool + ": " + errno_text()};
    if (st.st_uid != ::geteuid() || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
        return Failure{"the fleet spool " + o.spool + " must be this user's and, when others may write it, sticky: " +
                       "chown root " + o.spool + " && chmod 1733 " + o.spool};
    auto work = own_subdir(spool.get(), o.spool, "work");
    if (!work) return Failure{work.error()};
    auto rejected = own_subdir(spool.get(), o.spool, "rejected");
    if (!rejected) return Failure{rejected.error()};

    const std::string me = std::to_string(::getpid());
    // Claims of an ingest that died: ours now.
    for (const auto& n : names_in(work->get())) {
        const auto dot = n.find('.');
        if (dot == std::string::npos || alive(n.substr(0, dot))) continue;
        ::renameat(work->get(), n.c_str(), work->get(), (me + n.substr(dot)).c_str());
    }
    // New files: claimed by rename. Names starting with '.' are writers' files
    // still being written (write_file_atomic's private names).
    for (const auto& n : names_in(spool.get())) {
        if (n[0] == '.' || n == "work" || n == "rejected") continue;
        if (::renameat(spool.get(), n.c_str(), work->get(), (me + "." + n).c_str()) != 0 && errno != ENOENT)
            return Failure{"cannot claim " + o.spool + "/" + n + ": " + errno_text()};
    }

    IngestResult res;
    const std::string prefix = me + ".";
    for (const auto& claimed : names_in(work->get())) {
        if (claimed.rfind(prefix, 0) != 0) continue;  // another live ingest's
        const std::string name = claimed.substr(prefix.size());
        Read r = read_claimed(work->get(), claimed, o.limits.max_bytes);
        std::optional<gangway::fleet::CheckRecord> rec;
        if (r.error.empty()) {
            const auto source = r.owner == 0 ? gangway::fleet::Source::node_check : gangway::fleet::Source::job_check;
            try {
                rec = gangway::fleet::parse_report(r.text, source, r.owner, o.limits);
            } catch (const Error& e) {
                r.error = e.what();
            }
        }
        if (!rec) {
            ++res.rejected;
            res.lines.push_back(name + " (uid " + std::to_string(r.owner) + "): " + r.error);
            // Set aside for the admin; a name already there is replaced.
            if (::renameat(work->get(), claimed.c_str(), rejected->get(), name.c_str()) != 0)
                ::unlinkat(work->get(), claimed.c_str(), 0);
            continue;
        }
        auto stored = store.insert(*rec);
        if (!stored) return Failure{"storing " + name + ": " + stored.error() + " (it stays in " + o.spool + "/work for the next ingest)"};
        ++(*stored ? res.stored : res.duplicates);
        ::unlinkat(work->get(), claimed.c_str(), 0);
    }
    auto folded = store.fold(o.now, o.keep_days);
    if (!folded) return Failure{folded.error()};
    res.folded = *folded;
    return res;
}

}  // namespace gangway::sys::fleet
