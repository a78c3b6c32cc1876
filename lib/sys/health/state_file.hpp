// The node check's state file (health::State) on disk: root's, in a
// directory only its owner can write, replaced whole through a private name
// (sys::write_file_atomic: O_CREAT|O_EXCL|O_NOFOLLOW, then rename), so a run
// killed half-way leaves the previous file, and no link planted in its place
// is ever written through.
#pragma once
#include <string>

#include "../../base/result.hpp"
#include "../../health/state.hpp"

namespace gangway::sys {

// A missing file is a first run: an empty State. Failure: the file cannot be
// read (a link, not ours, too large) or is not a state file.
Result<health::State> load_state(const std::string& path);

// Creates the directory (0700) when missing; refuses one that others can
// write or that is not this user's.
Result<void> save_state(const std::string& path, const health::State& s);

}  // namespace gangway::sys
