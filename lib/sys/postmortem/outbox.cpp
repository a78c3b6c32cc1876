#include "outbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../node/fd.hpp"
#include "../node/dirs.hpp"
#include "../node/file.hpp"
#include "../run/deadline.hpp"
#include "send.hpp"
#include "stops_auth.hpp"

namespace gangway::sys::postmortem {

namespace pm = gangway::postmortem;

namespace {

// At most this many names are looked at in one pass: only root writes
// there, and the bounds keep it far below.
constexpr std::size_t kMaxNames = 65536;
// A private name write_file_atomic left behind (a crash mid-write) is removed after this long.
constexpr std::int64_t kStaleTempS = 600;
// A try shorter than this is not started: the budget is spent.
constexpr double kMinTryS = 0.5;

// DIR/outbox, opened without following a link: nullopt where it is missing
// and `create` is false; made 0700 where missing and `create` is true.
Result<std::optional<Fd>> open_outbox(const std::string& dir, bool create) {
    const std::string shown = outbox_path(dir);
    Fd base(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!base) {
        if (errno == ENOENT && !create) return std::optional<Fd>();
        return Failure{"cannot open the post-mortem directory " + dir + ": " + std::strerror(errno)};
    }
    if (create && ::mkdirat(base.get(), kOutboxDir, 0700) == 0 && ::fchmodat(base.get(), kOutboxDir, 0700, 0) != 0)
        return Failure{"cannot set the mode of " + shown + ": " + std::strerror(errno)};
    Fd fd(::openat(base.get(), kOutboxDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT && !create) return std::optional<Fd>();
        return Failure{"cannot open " + shown + ": " + std::strerror(errno) + " (it must be a directory of root's, mode 0700)"};
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return Failure{"cannot stat " + shown + ": " + std::strerror(errno)};
    if (st.st_uid != ::geteuid() || (st.st_mode & 077))
        return Failure{shown + " is not a directory of uid " + std::to_string(::geteuid()) +
                       " closed to others: remove it, or make it root's with mode 0700"};
    return std::optional<Fd>(std::move(fd));
}

// The entries in the outbox (and stale temporary files removed).
std::vector<pm::OutboxFile> list_outbox(int fd, std::int64_t now_s) {
    std::vector<pm::OutboxFile> out;
    for_each_name(fd, kMaxNames, [&](std::string_view name) {
        struct stat st{};
        if (::fstatat(fd, name.data(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return true;
        if (auto f = pm::parse_outbox_name(name, static_cast<std::uint64_t>(st.st_size))) {
            out.push_back(std::move(*f));
        } else if (name.starts_with(".") && name.find(".tmp.") != std::string_view::npos && now_s - st.st_mtime > kStaleTempS) {
            ::unlinkat(fd, name.data(), 0);
        }
        return true;
    });
    std::sort(out.begin(), out.end(), [](const pm::OutboxFile& a, const pm::OutboxFile& b) {
        return a.spooled_s != b.spooled_s ? a.spooled_s < b.spooled_s : a.name < b.name;
    });
    return out;
}

std::string ago(std::int64_t now_s, std::int64_t then_s) { return std::to_string(std::max<std::int64_t>(now_s - then_s, 0)) + " s ago"; }

// Removes what the bounds drop; one line each.
void evict(int fd, const std::string& shown, std::vector<pm::OutboxFile>& files, std::int64_t now_s, const pm::OutboxLimits& l,
           std::optional<std::uint64_t> adding, std::vector<std::string>& lines, unsigned& dropped) {
    for (const auto& e : pm::outbox_evictions(files, now_s, l, adding)) {
        ::unlinkat(fd, e.file.name.c_str(), 0);
        ++dropped;
        lines.push_back("job " + std::to_string(e.file.job) + ": its record, kept in " + shown + " since " +
                        ago(now_s, e.file.spooled_s) + ", is dropped unsent: " + pm::to_string(e.why) + " (" +
                        std::to_string(l.max_records) + " records, " + std::to_string(l.max_bytes >> 20) + " MiB, " +
                        std::to_string(l.max_age_s / 86400) + " days)");
        files.erase(std::remove_if(files.begin(), files.end(), [&](const pm::OutboxFile& f) { return f.name == e.file.name; }),
                    files.end());
    }
}

}  // namespace

std::string outbox_path(const std::string& dir) { return dir + "/" + kOutboxDir; }

Result<std::string> keep_in_outbox(const std::string& dir, const pm::OutboxEntry& e, std::int64_t now_s,
                                   std::vector<std::string>& lines, const pm::OutboxLimits& limits) {
    std::string text;
    try {
        text = pm::render_outbox_entry(e);
    } catch (const Error& err) {
        return Failure{err.what()};
    }
    auto fd = open_outbox(dir, true);
    if (!fd) return Failure{fd.error()};
    const std::string shown = outbox_path(dir);
    auto files = list_outbox((*fd)->get(), now_s);
    unsigned dropped = 0;
    evict((*fd)->get(), shown, files, now_s, limits, text.size(), lines, dropped);
    const auto unique = random_bytes(8);
    if (!unique) return Failure{unique.error()};
    const std::string name = pm::outbox_name(now_s, e.job, to_hex(*unique));
    if (auto w = write_file_atomic(shown, name, text, 0600, "the post-mortem's outbox"); !w) return Failure{w.error()};
    return shown + "/" + name;
}

Result<Resent> resend_outbox(const std::string& dir, const ResendOptions& o) {
    Resent r;
    auto opened = open_outbox(dir, false);
    if (!opened) return Failure{opened.error()};
    if (!*opened) return r;  // no outbox: nothing ever waited here
    const int fd = (*opened)->get();
    const std::string shown = outbox_path(dir);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        r.busy = true;
        return r;  // another run is sending them now; the lock goes with the descriptor
    }
    const Deadline until = after_s(o.within_s);
    auto files = list_outbox(fd, o.now_s);
    evict(fd, shown, files, o.now_s, o.limits, std::nullopt, r.lines, r.dropped);

    std::map<std::string, Result<std::string>> keys;  // each key file read once
    std::string wait_why;
    std::size_t i = 0;
    for (; i < files.size(); ++i) {
        const auto& f = files[i];
        const double left = seconds_left(until);
        if (left < kMinTryS) {
            wait_why = "this run's " + std::to_string(static_cast<int>(o.within_s)) + " s are spent";
            break;
        }
        const std::string job = "job " + std::to_string(f.job);
        ReadOptions ro(kMaxStopBody + 16384);
        ro.follow_links = false;
        ro.owner = ::geteuid();
        ro.closed_to_others = true;
        const auto read = read_file_at(fd, f.name, ro);
        pm::OutboxEntry e;
        std::string bad = read.ok() ? std::string() : describe(shown + "/" + f.name, read, ro);
        if (bad.empty()) {
            try {
                e = pm::parse_outbox_entry(read.text);
            } catch (const Error& err) {
                bad = shown + "/" + f.name + ": " + err.what();
            }
        }
        Result<HttpUrl> url = o.to ? Result<HttpUrl>(*o.to) : bad.empty() ? parse_http_url(e.to) : Result<HttpUrl>(Failure{bad});
        if (bad.empty() && !url) bad = shown + "/" + f.name + ": its URL " + url.error();
        if (!bad.empty()) {
            ::unlinkat(fd, f.name.c_str(), 0);
            ++r.refused;
            r.lines.push_back(job + ": a record in the outbox that cannot be sent is removed: " + bad);
            continue;
        }
        const std::string key_file = o.key_file.empty() ? e.key_file : o.key_file;
        auto k = keys.find(key_file);
        if (k == keys.end()) {
            k = keys.emplace(key_file, read_stops_key(key_file)).first;
            if (!k->second) r.lines.push_back(k->second.error() + "; the records signed with it stay in the outbox");
        }
        if (!k->second) {
            ++r.left;
            continue;
        }
        // Signed now: the stamp is this try's, so serve's replay window takes it.
        const Sent s = send_stop(*url, *k->second, e.job, e.node, e.body, 1, std::min(kSendTryS, left));
        if (s.delivery == pm::Delivery::delivered) {
            ::unlinkat(fd, f.name.c_str(), 0);
            ++r.delivered;
            r.lines.push_back(job + ": node " + e.node + "'s record, kept in the outbox since " + ago(o.now_s, f.spooled_s) +
                              ", delivered: " + s.line);
        } else if (s.delivery == pm::Delivery::refused) {
            ::unlinkat(fd, f.name.c_str(), 0);
            ++r.refused;
            r.lines.push_back(job + ": node " + e.node + "'s record, kept in the outbox since " + ago(o.now_s, f.spooled_s) +
                              ", refused for good and removed: " + s.line);
        } else {
            // serve is down, busy or refuses the key: the others would fare the same now.
            wait_why = s.line;
            break;
        }
    }
    r.left += static_cast<unsigned>(files.size() - i);
    if (r.left && !wait_why.empty())
        r.lines.push_back(std::to_string(r.left) + " record(s) wait in " + shown + " (" + wait_why +
                          "); the node's next Epilog, Prolog or node check sends them again");
    return r;
}

bool send_or_keep(const std::string& dir, std::uint32_t job, const std::string& node, const std::string& to,
                  const std::string& key_file, const std::string& body, const std::function<void(const std::string&)>& say) {
    const std::string mine = "job " + std::to_string(job) + ": ";
    const auto url = parse_http_url(to);
    if (!url) {
        say(mine + "not sent: --to: " + url.error() + " (fix GANGWAY_POSTMORTEM_URL)");
        return false;
    }
    const auto key = read_stops_key(key_file);
    const Sent sent = key ? send_stop(*url, *key, job, node, body) : Sent{gangway::postmortem::Delivery::retry, 0, key.error()};
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    switch (sent.delivery) {
        case gangway::postmortem::Delivery::delivered: break;
        case gangway::postmortem::Delivery::refused: say(mine + "not sent to " + to + ", refused for good: " + sent.line); break;
        case gangway::postmortem::Delivery::retry: {
            std::vector<std::string> lines;
            // The key's path as given, made absolute: the resend may run elsewhere.
            const std::string key_path = std::filesystem::absolute(key_file).lexically_normal().string();
            const auto kept = keep_in_outbox(dir, {to, key_path, job, node, body}, now, lines);
            for (const auto& l : lines) say(mine + l);
            if (kept)
                say(mine + "not sent to " + to + ": " + sent.line + "; kept in " + outbox_path(dir) +
                    ", sent again by the node's next Epilog, Prolog or node check");
            else say(mine + "not sent to " + to + ": " + sent.line + "; and not kept to send again: " + kept.error());
            return false;
        }
    }
    // serve answered: the records that waited go now, oldest first.
    ResendOptions ro;
    ro.to = *url;
    ro.key_file = key_file;
    ro.now_s = now;
    const auto resent = resend_outbox(dir, ro);
    if (!resent) say(mine + resent.error());
    else
        for (const auto& l : resent->lines) say(l);
    return sent.delivery == gangway::postmortem::Delivery::delivered;
}

}  // namespace gangway::sys::postmortem
