// Reading a file that someone else could have planted or swapped: opened
// first and judged by the open file (never by its name), never through a
// symbolic link, never blocking on a FIFO, never more than a bound. For the
// drain requests in the users' spool (gangway drain-request) and the site's
// check key (the plugin, as root in slurmstepd).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "../../base/result.hpp"

namespace gangway::sys {

enum class FileAccess {
    Any,      // any permission bits
    Private,  // no permission for group or others (a secret: mode 0600 or 0400)
};

// The content of `path` when it is a regular file owned by `owner`, at most
// `max_bytes` long and, for FileAccess::Private, closed to group and others;
// else why not, in words.
Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes,
                                    FileAccess access = FileAccess::Any);

}  // namespace gangway::sys
