// Every file gangway writes goes through write_file_atomic: the topology
// cache (`gangway topo --write-cache`, usually run as root), the drain
// requests in the spool other users can write (1733), the report and the
// heatmap. And the file root's Epilog reads from that spool, and the site's
// check key the plugin reads as root, are read with read_owned_file. So:
//  - the reader opens first and checks the open file, so that nothing can be
//    swapped in between, and never follows a link or blocks on a FIFO;
//  - the writer never follows a link another user planted (at the final name
//    or at any name it uses on the way), never writes into a file that is
//    already there, and leaves either the whole new file or nothing.
// (SECURITY.md, "Files gangway writes", says which file is written how.)
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "../../base/result.hpp"

namespace gangway::sys {

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
Result<void> write_file_atomic(const std::string& dir, const std::string& name, const std::string& text, mode_t mode,
                               std::string_view what = {});

// The same for a path: its directory ("." when it has none) and its last component.
Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode, std::string_view what = {});

}  // namespace gangway::sys
