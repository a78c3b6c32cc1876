// Directories root keeps where users may write below it (the post-mortem's
// postmortem_dir=, its job directories and each job's dump directory): walked
// from "/" one component at a time with openat(O_NOFOLLOW), so that no link
// is followed and nothing can be swapped in between the check and the use.
// The directory half of file.hpp (SECURITY.md, "Files gangway writes").
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "../../base/result.hpp"
#include "fd.hpp"

namespace gangway::sys {

// The absolute `path`, opened as root's own: every directory on the way from
// "/" root's (uid 0) and closed to group and others' writes, but that a
// sticky one (/tmp) may be on the way (nobody but root can rename or remove
// root's entries there, and the next component must be root's itself); no
// component a symbolic link. `path` itself root's and closed to group and
// others' writes; with `make`, made when missing (mode `mode`); and given
// `mode`'s permission bits it lacks (0711: others may reach what is below).
// Else one line: which directory and what is wrong with it.
Result<Fd> open_root_tree(const std::string& path, mode_t mode, bool make);

// `name` in the open directory `at`: made (mode `mode`, then owned by
// uid:gid, both set through its descriptor), or the one already there when
// it is a directory (not a link) of `uid` and, with `closed_to_others`, no
// group or other write bit. Opened with O_NOFOLLOW either way.
Result<Fd> make_dir_at(int at, const std::string& name, mode_t mode, uid_t uid, gid_t gid, bool closed_to_others);

// The names in the open directory `dirfd` (not "." or ".."), read from its
// start through a descriptor of their own (the caller's offset is left as it
// is), in the directory's order: `f(name)` for each, until it returns false
// or `max` names were seen. Returns whether it stopped before the end (f's
// false, or `max`). Nothing read: the directory could not be opened. The
// view ends at the entry's NUL: its data() is a C string for the *at calls.
template <class F>
bool for_each_name(int dirfd, std::size_t max, F&& f);

// What remove_tree_at may spend: entries removed (files, links, directories),
// how deep it goes, and how long.
struct RemoveBounds {
    std::size_t max_entries = 100'000;
    unsigned max_depth = 32;
    double max_seconds = 2;
};
struct Removed {
    std::size_t entries = 0;  // names removed
    bool whole = false;       // `name` itself is gone
};

// `name` in `at` and everything below it, within the bounds: a link is
// removed, never followed (every directory opened with O_NOFOLLOW, relative
// to its parent's descriptor); a directory on another file system is left.
// Reads each directory once, as it goes; never throws.
Removed remove_tree_at(int at, const std::string& name, const RemoveBounds& b = {});

// A directory stream, closed with its scope.
class DirStream {
public:
    explicit DirStream(int dirfd);  // "." of `dirfd`, opened anew: its own offset
    ~DirStream();
    DirStream(const DirStream&) = delete;
    DirStream& operator=(const DirStream&) = delete;
    const char* next();  // the next name, "." and ".." passed over; nullptr at the end
private:
    void* d_ = nullptr;  // DIR*
};

template <class F>
bool for_each_name(int dirfd, std::size_t max, F&& f) {
    DirStream d(dirfd);
    std::size_t seen = 0;
    while (const char* n = d.next()) {
        if (seen++ >= max || !f(std::string_view(n))) return true;
    }
    return false;
}

}  // namespace gangway::sys
