// The one file access of the tree, at the I/O edge (as ninja's DiskInterface):
// every whole-file read (SLURM's files, the topology files, sysfs attributes,
// the fleet's reports, the site's key), every file gangway writes, and the
// random bytes the names and secrets take. One implementation, so a FIFO, a
// link or a huge file is handled the same way wherever a file is read.
//
// Reading: read_file_at opens once, then checks the open file (nothing can
// be swapped in between) against the ReadOptions the caller asks for, and
// reads at most max_bytes (and one byte more, to know there is more).
//
// Writing: every file gangway writes goes through write_file_atomic: the
// topology cache (`gangway topo --write-cache`, usually run as root), the
// drain requests in the spool other users can write (1733), the report and
// the heatmap. And the files root's Epilog reads from that spool, and the
// site's check key the plugin reads as root, are read with read_owned_file.
// So:
//  - the reader opens first and checks the open file, so that nothing can be
//    swapped in between, and never follows a link or blocks on a FIFO;
//  - the writer never follows a link another user planted (at the final name
//    or at any name it uses on the way), never writes into a file that is
//    already there, and leaves either the whole new file or nothing.
// (SECURITY.md, "Files gangway writes", says which file is written how.)
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "../../base/result.hpp"

namespace gangway::sys {

// What a read refuses or keeps. max_bytes has no default: every read is bounded.
struct ReadOptions {
    explicit ReadOptions(std::size_t max) : max_bytes(max) {}
    std::size_t max_bytes;
    enum class Over {
        Refuse,    // a file longer than max_bytes is a failure (ReadProblem::too_large)
        Truncate,  // its first max_bytes are kept, and FileRead::truncated says so
    } over = Over::Refuse;
    bool follow_links = true;  // false: O_NOFOLLOW, a symbolic link is refused (ReadProblem::link)
    // false: opened with O_NONBLOCK, so a FIFO put in a file's place returns at
    // once (and, with regular_only, is refused). true only where a pipe may be
    // meant: an hwloc XML named on the command line, the kernel's own sysfs.
    bool may_block = false;
    bool regular_only = true;              // anything else (a FIFO, a device, a directory) is refused
    std::optional<uid_t> owner;            // the file must be owned by this uid
    bool closed_to_others = false;         // no permission bit at all for group or others (a secret)
    bool written_by_owner_only = false;    // no group or other write bit, and one name (no hard link)
};

enum class ReadProblem { none, open, link, stat, not_regular, owner, open_to_others, written_by_others, hard_links, too_large, read };

// What read_file_at found: the text, or the problem with the errno (open,
// stat, read) and what the open file is (st: for the fleet's "the owner is
// the writer", also filled, without following a link, when the open failed).
struct FileRead {
    std::string text;
    bool truncated = false;  // Over::Truncate, and the file held more than max_bytes
    ReadProblem problem = ReadProblem::none;
    int err = 0;
    struct stat st{};
    bool ok() const { return problem == ReadProblem::none; }
};

// `name` relative to the directory descriptor `dirfd` (AT_FDCWD: a path).
// Never throws for the file's sake; the caller words the problem (describe()
// gives the usual line).
FileRead read_file_at(int dirfd, const std::string& name, const ReadOptions& o);

// The one line for a problem: which file and what is wrong with it.
std::string describe(const std::string& path, const FileRead& r, const ReadOptions& o);

// The whole text, or describe()'s line.
Result<std::string> read_file(const std::string& path, const ReadOptions& o);

// A site's configuration file (node-check.conf, gres.conf): links followed
// (sites link them), never waited on (a FIFO in its place is refused at
// once, "PATH is not a regular file"), at most kMaxConfigBytes.
inline constexpr std::size_t kMaxConfigBytes = 1u << 20;
Result<std::string> read_config_file(const std::string& path);

// n bytes from getrandom(2): private file names, nonces, the step's secret.
Result<std::string> random_bytes(std::size_t n);

enum class FileAccess {
    Any,      // any permission bits (a drain request)
    Private,  // no permission for group or others (a secret: the site's check key, mode 0600 or 0400)
};

// The content of `path` when it is a regular file owned by `owner`, at most
// `max_bytes` long and, for FileAccess::Private, closed to group and others;
// else why not (a link, not a regular file, owned by someone else, open to
// others, larger than the limit).
Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes,
                                    FileAccess access = FileAccess::Any);

// Writes `text` to dir/name, all of it or nothing:
//  1. opens `dir` once (O_DIRECTORY) and does everything else relative to that
//     descriptor, so the file lands in that directory even if a path
//     component is swapped meanwhile;
//  2. creates a private name there, ".NAME.tmp.PID.<16 random hex digits>"
//     (getrandom: no other process can guess it and plant a link first), with
//     openat(O_CREAT|O_EXCL|O_NOFOLLOW), mode `mode` less the umask: a link or
//     anything else already at that name is an error, never followed;
//  3. writes, fsyncs, and renameat()s it over dir/name. rename replaces
//     whatever name was there (a link planted at dir/name is replaced, never
//     written through: the file becomes a regular file of ours).
// On any failure the private name is removed and the one line says which
// file (`what`, e.g. "the topology cache", then the path), why, and what to
// do. `name` must be a plain file name (no '/').
// Durability::page_cache skips the fsync of step 3: the file is still whole
// or absent for every reader while the machine runs, but a crash may leave
// it empty or gone. For records read moments later on the same machine,
// worth nothing after a crash (the post-mortem's task lines: an fsync per
// task's end cost slurmstepd milliseconds on a busy disk, BENCHMARKS.md).
enum class Durability { fsync, page_cache };
Result<void> write_file_atomic(const std::string& dir, const std::string& name, std::string_view text, mode_t mode,
                               std::string_view what = {}, Durability durability = Durability::fsync);

// The same for a path: its directory ("." when it has none) and its last component.
Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode, std::string_view what = {});

}  // namespace gangway::sys
