// Catch2 v2 (Debian 12: one header) and v3 (Debian 13 and later: a library and
// headers per part) for the unit tests, which are written in v3's names:
// Catch::Matchers::ContainsSubstring, StartsWith, EndsWith and Approx.
// configure defines GANGWAY_CATCH2 to the major version it found.
#pragma once
#if GANGWAY_CATCH2 >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#include <string>
namespace Catch::Matchers {
// v3's name of v2's Contains (v3's Contains matches ranges).
inline StdString::ContainsMatcher ContainsSubstring(const std::string& s, CaseSensitive::Choice cs = CaseSensitive::Yes) {
    return Contains(s, cs);
}
}  // namespace Catch::Matchers
#endif
