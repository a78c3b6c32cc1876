// Files in directories that other users can write (the drain spool, 1733):
// the reader opens first and checks the open file, so that nothing can be
// swapped in between, and never follows a link or blocks on a FIFO; the
// writer never follows a link another user planted, nor writes into a file
// that is already there.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "../../base/result.hpp"
#include "owned_file.hpp"  // the reader

namespace gangway::sys {

// Writes `text` to dir/name through a fresh private name in dir (created
// with O_CREAT|O_EXCL|O_NOFOLLOW, mode `mode` less the umask) renamed over
// dir/name once complete: a reader sees the whole file or none.
Result<void> write_file_atomic(const std::string& dir, const std::string& name, const std::string& text,
                               mode_t mode = 0666);

// The same for a path: its directory and its last component.
Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode = 0666);

}  // namespace gangway::sys
