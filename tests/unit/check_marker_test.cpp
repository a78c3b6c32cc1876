#include "catch_compat.hpp"

#include <set>
#include <string>

#include "../../lib/base/error.hpp"
#include "../../lib/base/siphash.hpp"
#include "../../lib/env/check_marker.hpp"

using namespace gangway;

namespace {

SipKey counting_key() {
    SipKey k{};
    for (unsigned i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i);
    return k;
}

std::string counting_message(unsigned n) {
    std::string m;
    for (unsigned i = 0; i < n; ++i) m += static_cast<char>(i);
    return m;
}

}  // namespace

TEST_CASE("SipHash-2-4 gives the reference test vectors") {
    // Key 00..0f and messages 00..(n-1), from the SipHash paper's appendix and
    // the reference implementation's table (read there as little-endian words).
    const SipKey k = counting_key();
    CHECK(siphash24(k, "") == 0x726fdb47dd0e0e31ull);
    CHECK(siphash24(k, counting_message(15)) == 0xa129ca6149be45e5ull);
    // Every length from 0 to 64 gives a different tag (the length byte and each block count).
    std::set<std::uint64_t> seen;
    for (unsigned n = 0; n <= 64; ++n) seen.insert(siphash24(k, counting_message(n)));
    CHECK(seen.size() == 65);
}

TEST_CASE("a job's mark is bound to the key, the job and its user") {
    const std::string bytes = counting_message(32);
    const CheckKey key(bytes);
    const std::string m = key.mark(42, 1000);
    CHECK(m.rfind("42:", 0) == 0);
    CHECK(m.size() == 3 + 16);
    CHECK(key.mark(42, 1000) == m);
    CHECK(key.mark(43, 1000) != m);
    CHECK(key.mark(42, 1001) != m);
    // Every byte of the file counts, the ones past the SipHash key too.
    std::string other = bytes;
    other[31] ^= 1;
    CHECK(CheckKey(other).mark(42, 1000) != m);
    other = bytes;
    other[0] ^= 1;
    CHECK(CheckKey(other).mark(42, 1000) != m);
}

TEST_CASE("a key file of the wrong size is refused with what to do") {
    CHECK_THROWS_WITH(CheckKey(std::string(15, 'x')), Catch::Matchers::ContainsSubstring("dd if=/dev/urandom"));
    CHECK_THROWS_AS(CheckKey(std::string(4097, 'x')), Error);
    CHECK_NOTHROW(CheckKey(std::string(16, 'x')));
}

TEST_CASE("what proves that a job was checked (issue 23, item 6)") {
    const CheckKey key(counting_message(32));
    const std::string mark = key.mark(42, 1000);
    // Where the site's check is mandatory, only the job's mark under the key does.
    CHECK(mark_proves_check(mark, 42, mark, false));
    CHECK_FALSE(mark_proves_check("42", 42, mark, false));  // the job's id: anyone can read it
    CHECK_FALSE(mark_proves_check("42:0000000000000000", 42, mark, false));
    std::string flipped = mark;
    flipped.back() = flipped.back() == '0' ? '1' : '0';
    CHECK_FALSE(mark_proves_check(flipped, 42, mark, false));
    CHECK_FALSE(mark_proves_check(key.mark(41, 1000), 42, mark, false));  // another job's mark
    CHECK_FALSE(mark_proves_check(mark + "0", 42, mark, false));
    // Without a key nothing proves it there: every step is checked.
    CHECK_FALSE(mark_proves_check("42", 42, "", false));
    CHECK_FALSE(mark_proves_check(mark, 42, "", false));
    // Where users may opt out anyway, the job's id will do, as before, and a mark too.
    CHECK(mark_proves_check("42", 42, "", true));
    CHECK(mark_proves_check(mark, 42, "", true));
    CHECK_FALSE(mark_proves_check("420", 42, "", true));
    CHECK_FALSE(mark_proves_check("4", 42, "", true));
    CHECK_FALSE(mark_proves_check("", 42, "", true));
}
