// One exception type for everything lib rejects. Its message is meant for the
// user as it stands: it says what is wrong and what to do, without the
// "gangway:" prefix, which the caller adds once.
#pragma once
#include <stdexcept>
#include <string>

namespace gangway {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace gangway
