#include "ingest.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../node/fd.hpp"
#include "../../fleet/site_nodes.hpp"
#include "../node/dirs.hpp"
#include "../node/file.hpp"

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
    sys::for_each_name(dirfd, SIZE_MAX, [&](std::string_view n) {
        out.emplace_back(n);
        return true;
    });
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

// Through the one reader (file.hpp), in the words the rejected/ log has always used.
Read read_claimed(int work, const std::string& name, std::size_t max_bytes) {
    sys::ReadOptions o{max_bytes};
    o.follow_links = false;
    o.written_by_owner_only = true;  // a writer's file has one name and mode 0600 (spool_report)
    auto f = sys::read_file_at(work, name, o);
    Read r;
    r.owner = f.st.st_uid;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(f.st.st_mode & 07777));
    switch (f.problem) {
        case sys::ReadProblem::none:
            // A file that grew or shrank while read: its size at the open is not what was read.
            if (f.text.size() != std::uint64_t(f.st.st_size)) r.error = "changed while it was read";
            r.text = std::move(f.text);
            break;
        case sys::ReadProblem::link:
            r.error = "a symbolic link, not a report";
            break;
        case sys::ReadProblem::open:
            r.error = "cannot open it: " + std::string(std::strerror(f.err));
            break;
        case sys::ReadProblem::stat:
            r.error = "cannot stat it: " + std::string(std::strerror(f.err));
            break;
        case sys::ReadProblem::not_regular:
            r.error = "not a regular file";
            break;
        case sys::ReadProblem::hard_links:
            r.error = std::to_string(f.st.st_nlink) + " hard links to it: a report has one name, so that its owner is its writer";
            break;
        case sys::ReadProblem::written_by_others:
            r.error = std::string("mode ") + mode + ": others than its owner may write it, so its owner need not be its writer";
            break;
        case sys::ReadProblem::too_large:
            r.error = std::uint64_t(f.st.st_size) > max_bytes
                          ? std::to_string(f.st.st_size) + " bytes, over the limit of " + std::to_string(max_bytes)
                          : "changed while it was read";
            break;
        default:
            r.error = "changed while it was read";
            break;
    }
    return r;
}

// A report's time within what the store keeps and what a clock may be ahead:
// refused, not clamped, outside. A clamped time would store a figure at a
// time the check did not run (a check dated 2100 would still be the newest
// for its five minutes, and one dated 1990 would fold into a day it never
// saw); a refused file waits in rejected/ with the reason, and a node whose
// clock is wrong shows up there.
std::string time_refusal(std::int64_t t, std::int64_t now, int keep_days) {
    const std::int64_t oldest = now - std::int64_t(keep_days) * 86400;
    if (t > now + kMaxClockSkewS)
        return "the report's time " + std::to_string(t) + " is " + std::to_string(t - now) +
               " s ahead of this host's clock (at most " + std::to_string(kMaxClockSkewS) +
               "): check the writer's clock";
    if (t < oldest)
        return "the report's time " + std::to_string(t) + " is older than the store's " + std::to_string(keep_days) +
               " days (--keep-days)";
    return {};
}

// What one user has added in this ingest (UserCaps).
struct Tally {
    std::set<std::string> nodes;
    std::size_t series = 0, findings = 0;
};

// The refusal of a user's check that would take the user over a cap, else "".
// Counted only when it is stored (tally_in).
std::string over_user_caps(const Tally& t, const gangway::fleet::CheckRecord& rec, const UserCaps& caps) {
    std::size_t nodes = t.nodes.size();
    for (const auto& n : rec.check.nodes) nodes += t.nodes.count(n) ? 0 : 1;
    auto over = [&](const char* what, std::size_t n, std::size_t cap) {
        return "uid " + std::to_string(rec.check.uid) + "'s reports in this ingest would have " + std::to_string(n) +
               " " + what + ", over the limit of " + std::to_string(cap) + " a user (fleet ingest --user-caps)";
    };
    if (nodes > caps.nodes) return over("nodes", nodes, caps.nodes);
    if (t.series + rec.figures.size() > caps.series) return over("figures", t.series + rec.figures.size(), caps.series);
    if (t.findings + rec.findings.size() > caps.findings)
        return over("findings", t.findings + rec.findings.size(), caps.findings);
    return {};
}
// The refusal of a user's check that names nodes the site does not have, else "".
std::string not_the_sites(const std::vector<std::string>& unknown, const std::string& source) {
    if (unknown.empty()) return {};
    return "names " + std::to_string(unknown.size()) + " node" + (unknown.size() == 1 ? "" : "s") +
           " that SLURM's node list (" + source + ") does not have, \"" + unknown.front() +
           "\" first: a user's report names only the site's nodes";
}

void tally_in(Tally& t, const gangway::fleet::CheckRecord& rec) {
    t.nodes.insert(rec.check.nodes.begin(), rec.check.nodes.end());
    t.series += rec.figures.size();
    t.findings += rec.findings.size();
}

}  // namespace

Result<IngestResult> ingest(const IngestOptions& o, Store& store) {
    Fd spool(::open(o.spool.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!spool) return Failure{"cannot open the fleet spool " + o.spool + ": " + errno_text() + " (see gangway-fleet(8))"};
    struct stat st{};
    if (::fstat(spool.get(), &st) != 0) return Failure{"cannot stat the fleet spool " + o.spool + ": " + errno_text()};
    if (st.st_uid != ::geteuid() || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
        return Failure{"the fleet spool " + o.spool + " must be this user's and, when others may write it, sticky: " +
                       "chown root " + o.spool + " && chmod 1733 " + o.spool};
    auto work = own_subdir(spool.get(), o.spool, "work");
    if (!work) return Failure{work.error()};
    auto rejected = own_subdir(spool.get(), o.spool, "rejected");
    if (!rejected) return Failure{rejected.error()};

    IngestResult res;
    // Names in the log are the users' (a newline or an escape sequence could
    // forge a line or rewrite the admin's terminal): printed through the
    // readers' one sanitiser, printable_name (C0, DEL, C1 and bytes that are
    // not UTF-8 as '?'), whole up to NAME_MAX.
    auto shown = [](const std::string& name) { return printable_name(name, 255); };

    // Claims are named PID.SEQ: names of the ingest's own, never longer than
    // a user's name allows (PID. + a name of 250 characters was over
    // NAME_MAX, and that one file stopped every ingest). What each claim was
    // called is kept here, for the lines and for rejected/.
    const std::string me = std::to_string(::getpid());
    const std::string prefix = me + ".";
    std::size_t seq = 0;
    std::map<std::string, std::string> was_named;  // claim -> its name in the spool
    // Renames `name` of `from` to work/PID.SEQ, never over a name there (a
    // claim left by a dead ingest of our PID may hold one): the next SEQ then.
    // A file system without RENAME_NOREPLACE gets a look first (only ingests,
    // as root, make names in work/, and none other has our PID now).
    auto claim = [&](int from, const std::string& name) -> std::optional<std::string> {
        for (;;) {
            const std::string mine = prefix + std::to_string(seq++);
            int r = ::renameat2(from, name.c_str(), work->get(), mine.c_str(), RENAME_NOREPLACE);
            if (r != 0 && errno == EINVAL) {
                struct stat there{};
                if (::fstatat(work->get(), mine.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) continue;
                r = ::renameat(from, name.c_str(), work->get(), mine.c_str());
            }
            if (r == 0) return mine;
            if (errno != EEXIST) return std::nullopt;
        }
    };
    // Claims of an ingest that died (or of an earlier one with our PID): ours now.
    for (const auto& n : names_in(work->get())) {
        const auto dot = n.find('.');
        if (dot == std::string::npos || (n.compare(0, dot, me) != 0 && alive(n.substr(0, dot)))) continue;
        if (auto mine = claim(work->get(), n)) was_named[*mine] = "work/" + n;
    }
    // New files: claimed by rename. Names starting with '.' are writers' files
    // still being written (write_file_atomic's private names).
    for (const auto& n : names_in(spool.get())) {
        if (n[0] == '.' || n == "work" || n == "rejected") continue;
        if (auto mine = claim(spool.get(), n)) {
            was_named[*mine] = n;
        } else if (errno != ENOENT) {  // ENOENT: another ingest has it
            // One file, one line: it stays in the spool, and the others are ingested.
            ++res.rejected;
            res.lines.push_back(shown(n) + ": cannot claim it (" + errno_text() + "), left in " + o.spool);
        }
    }

    std::map<std::uint32_t, Tally> users;
    // The site's nodes, read at the first user's report that needs them.
    std::optional<SiteNodes> site;
    std::set<std::string> refused_names;
    bool unchecked = false;  // a user's report was stored without its names checked
    const SeriesAllowance allowance{o.user_caps.store_series, o.now - std::int64_t(o.keep_days) * 86400, o.now};
    for (const auto& claimed : names_in(work->get())) {
        if (claimed.rfind(prefix, 0) != 0 || !was_named.count(claimed)) continue;  // another live ingest's
        const std::string& name = was_named[claimed];
        Read r = read_claimed(work->get(), claimed, o.limits.max_bytes);
        std::optional<gangway::fleet::CheckRecord> rec;
        if (r.error.empty()) {
            try {
                rec = gangway::fleet::parse_report(r.text, r.owner, o.limits);
            } catch (const Error& e) {
                r.error = e.what();
            }
            // The text is no longer needed: a 32 MiB file is not kept to the end.
            std::string().swap(r.text);
            if (rec) r.error = time_refusal(rec->check.time, o.now, o.keep_days);
            if (rec && r.error.empty() && r.owner != 0) {
                if (!site) site = read_site_nodes(o.site_nodes);
                if (site->known) {
                    const auto unknown = gangway::fleet::names_not_in(*rec, site->names);
                    r.error = not_the_sites(unknown, site->source);
                    for (const auto& n : unknown) {
                        if (!refused_names.insert(n).second) continue;
                        // The names passed slurm::is_node_name (the parse): letters, digits, '.', '_', '-'.
                        if (res.names.size() < kMaxNameLines)
                            res.names.push_back(n + " (in " + shown(name) + ", uid " + std::to_string(r.owner) + ")");
                        else ++res.more_names;
                    }
                }
            }
            if (rec && r.error.empty() && r.owner != 0) r.error = over_user_caps(users[r.owner], *rec, o.user_caps);
            if (!r.error.empty()) rec.reset();
        }
        // Set aside for the admin under its name (a name already there is
        // replaced); when that cannot be (a directory over a file, or a
        // directory that is not empty), under the claim's own name.
        auto set_aside = [&] {
            ++res.rejected;
            const char* base = name.rfind("work/", 0) == 0 ? name.c_str() + 5 : name.c_str();
            std::string where = "set aside in " + o.spool + "/rejected";
            if (::renameat(work->get(), claimed.c_str(), rejected->get(), base) != 0) {
                const std::string own = "claim-" + claimed;
                if (::renameat(work->get(), claimed.c_str(), rejected->get(), own.c_str()) == 0) {
                    where += "/" + own;
                } else {
                    const std::string why = errno_text();
                    where = ::unlinkat(work->get(), claimed.c_str(), 0) == 0
                                ? "removed (it could not be set aside: " + why + ")"
                                : "left in " + o.spool + "/work/" + claimed + " (" + why + ")";
                }
            }
            res.lines.push_back(shown(name) + " (uid " + std::to_string(r.owner) + "): " + r.error + "; " + where);
        };
        if (!rec) {
            set_aside();
            continue;
        }
        auto stored = store.insert(*rec, allowance);
        if (!stored) return Failure{"storing " + shown(name) + ": " + stored.error() + " (it stays in " + o.spool + "/work for the next ingest)"};
        if (stored->what == Inserted::over_allowance) {
            r.error = "uid " + std::to_string(r.owner) + "'s reports added " + std::to_string(stored->user_before) +
                      " series to the store in the last " + std::to_string(o.keep_days) + " days, and this one adds more than the " +
                      std::to_string(o.user_caps.store_series - std::min(stored->user_before, o.user_caps.store_series)) +
                      " left of the limit of " + std::to_string(o.user_caps.store_series) + " a user (fleet ingest --user-series)";
            set_aside();
            continue;
        }
        const bool fresh = stored->what == Inserted::stored;
        ++(fresh ? res.stored : res.duplicates);
        if (fresh && r.owner != 0) {
            tally_in(users[r.owner], *rec);
            if (site && !site->known && o.site_nodes.from != NodesFrom::none) unchecked = true;
        }
        ::unlinkat(work->get(), claimed.c_str(), 0);
    }
    if (site && site->known) res.names_source = site->source;
    if (unchecked)
        res.note = "users' reports were stored without their node names checked: SLURM's node list could not be read (" +
                   site->why_not + "); give --nodes-from FILE (the site's slurm.conf), or --nodes-from none to check no name";
    auto folded = store.fold(o.now, o.keep_days);
    if (!folded) return Failure{folded.error()};
    res.folded = *folded;
    return res;
}

}  // namespace gangway::sys::fleet
