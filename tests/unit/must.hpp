// For tests of I/O that returns a Result (lib/base/result.hpp): the value, or
// the failure's line thrown as gangway::Error, so that a test reads as one
// expression and CHECK_THROWS_WITH still sees the user's message.
#pragma once
#include <utility>

#include "../../lib/base/error.hpp"
#include "../../lib/base/result.hpp"

namespace gangway {

template <class T>
T must(Result<T> r) {
    if (!r) throw Error(r.error());
    return std::move(*r);
}

inline void must(Result<void> r) {
    if (!r) throw Error(r.error());
}

}  // namespace gangway
