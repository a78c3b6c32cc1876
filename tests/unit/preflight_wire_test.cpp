#include "catch_compat.hpp"

#include <openssl/evp.h>

#include <random>

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/crypto.hpp"
#include "../../lib/preflight/wire.hpp"

using namespace gangway;
using namespace gangway::preflight;

namespace {
std::string hmac_hex(const std::string& key, const std::string& data) { return to_hex(hmac_sha256(key, data)); }
}  // namespace

TEST_CASE("HMAC-SHA256 over SHA256_*: RFC 4231 test cases") {
    CHECK(hmac_hex(std::string(20, '\x0b'), "Hi There") ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hmac_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hmac_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    CHECK(hmac_hex(from_hex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::string(50, '\xcd')) ==
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    // Case 5 truncates to 128 bits.
    CHECK(hmac_hex(std::string(20, '\x0c'), "Test With Truncation").substr(0, 32) == "a3b6167473100ee06e0c796c2955552b");
    CHECK(hmac_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK(hmac_hex(std::string(131, '\xaa'),
                   "This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
                   "be hashed before being used by the HMAC algorithm.") ==
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("HMAC-SHA256 over SHA256_* equals libcrypto's EVP HMAC for keys and messages of every length") {
    // Around the block (64 bytes) and the digest (32 bytes), where a padding mistake shows.
    std::mt19937 rng(4231);
    const auto bytes = [&](std::size_t n) {
        std::string s(n, '\0');
        for (auto& c : s) c = static_cast<char>(rng() & 0xff);
        return s;
    };
    for (std::size_t klen : {0, 1, 31, 32, 33, 63, 64, 65, 128, 200})
        for (std::size_t mlen : {0, 1, 55, 56, 63, 64, 65, 119, 120, 1000}) {
            const auto key = bytes(klen), msg = bytes(mlen);
            unsigned char want[32];
            std::size_t len = 0;
            static const unsigned char none = 0;
            REQUIRE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.empty() ? &none : reinterpret_cast<const unsigned char*>(key.data()),
                              key.size(), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), want, sizeof want, &len) != nullptr);
            REQUIRE(len == 32);
            INFO("key " << klen << " bytes, message " << mlen << " bytes");
            CHECK(hmac_sha256(key, msg) == Digest(std::to_array(want)));
        }
}

TEST_CASE("hex and constant-time compare") {
    CHECK(from_hex("00ff10") == std::string("\x00\xff\x10", 3));
    CHECK_THROWS_AS(from_hex("abc"), Error);
    CHECK_THROWS_AS(from_hex("zz"), Error);
    CHECK(equal_ct("abc", "abc"));
    CHECK_FALSE(equal_ct("abc", "abd"));
    CHECK_FALSE(equal_ct("abc", "ab"));
    CHECK(equal_ct("", ""));
}

TEST_CASE("wipe overwrites a secret and empties it") {
    std::string key(32, '\x5a');
    const char* p = key.data();
    wipe(key);
    CHECK(key.empty());
    CHECK(std::string_view(p, 32) == std::string(32, '\0'));  // the same buffer, still ours: capacity kept
}

TEST_CASE("key=value payloads round-trip, escapes included; malformed ones are rejected") {
    Kv kv{{"a", "1"}, {"we=ird\nkey%", "line1\nline2=x%y"}, {"empty", ""}};
    CHECK(decode_kv(encode_kv(kv)) == kv);
    CHECK_THROWS_WITH(decode_kv("a=1"), Catch::Matchers::ContainsSubstring("newline"));
    CHECK_THROWS_WITH(decode_kv("noequals\n"), Catch::Matchers::ContainsSubstring("key=value"));
    CHECK_THROWS_WITH(decode_kv("a=1\na=2\n"), Catch::Matchers::ContainsSubstring("twice"));
    CHECK_THROWS(decode_kv("a=%4\n"));
    CHECK_THROWS(decode_kv("a=%zz\n"));
    CHECK(kv_u64({{"n", "42"}}, "n") == 42);
    CHECK_THROWS_WITH(kv_u64({{"n", "-1"}}, "n"), Catch::Matchers::ContainsSubstring("\"n\""));
    CHECK_THROWS_WITH(kv_str({}, "rank"), Catch::Matchers::ContainsSubstring("rank"));
    CHECK(kv_f64({{"x", "2.5"}}, "x") == 2.5);
    CHECK_THROWS(kv_f64({{"x", "2.5z"}}, "x"));
}

TEST_CASE("frames: sealed by one side, opened by the other") {
    const std::string key = "k", nonce(kNonceBytes, 'n'), cnonce(kNonceBytes, 'c');
    Channel client(key, nonce, cnonce, Role::client), server(key, nonce, cnonce, Role::server);
    const auto f1 = client.seal(7, "hello");
    const auto len = Channel::body_length(std::string_view(f1).substr(0, 4));
    CHECK(len == f1.size() - 4);
    auto got = server.open(std::string_view(f1).substr(4));
    CHECK(got.type == 7);
    CHECK(got.payload == "hello");
    const auto f2 = server.seal(8, "back");
    CHECK(client.open(std::string_view(f2).substr(4)).payload == "back");
}

TEST_CASE("frames: forged, replayed, reflected, cross-connection and oversized frames are refused") {
    const std::string nonce(kNonceBytes, 'n'), cnonce(kNonceBytes, 'c');
    Channel client("key", nonce, cnonce, Role::client), server("key", nonce, cnonce, Role::server);
    const auto f1 = client.seal(1, "rank=1\n");
    SECTION("wrong key") {
        Channel other("other-key", nonce, cnonce, Role::server);
        CHECK_THROWS_WITH(other.open(std::string_view(f1).substr(4)), Catch::Matchers::ContainsSubstring("authentication"));
    }
    SECTION("a flipped payload byte") {
        auto bad = f1;
        bad[4 + 9] ^= 1;
        CHECK_THROWS_WITH(server.open(std::string_view(bad).substr(4)), Catch::Matchers::ContainsSubstring("authentication"));
    }
    SECTION("replayed") {
        server.open(std::string_view(f1).substr(4));
        CHECK_THROWS_WITH(server.open(std::string_view(f1).substr(4)), Catch::Matchers::ContainsSubstring("sequence"));
    }
    SECTION("reflected back to its sender") {
        CHECK_THROWS_WITH(client.open(std::string_view(f1).substr(4)), Catch::Matchers::ContainsSubstring("authentication"));
    }
    SECTION("replayed on another connection (other server nonce)") {
        Channel server2("key", std::string(kNonceBytes, 'm'), cnonce, Role::server);
        CHECK_THROWS_WITH(server2.open(std::string_view(f1).substr(4)), Catch::Matchers::ContainsSubstring("authentication"));
    }
    SECTION("a server's frame replayed to another client (other client nonce)") {
        const auto f2 = server.seal(2, "verdict=ok\n");
        Channel client2("key", nonce, std::string(kNonceBytes, 'd'), Role::client);
        CHECK_THROWS_WITH(client2.open(std::string_view(f2).substr(4)), Catch::Matchers::ContainsSubstring("authentication"));
    }
    SECTION("length limits") {
        CHECK_THROWS_WITH(Channel::body_length(std::string("\x7f\xff\xff\xff", 4)), Catch::Matchers::ContainsSubstring("limit"));
        CHECK_THROWS_WITH(Channel::body_length(std::string("\0\0\0\x05", 4)), Catch::Matchers::ContainsSubstring("too short"));
        CHECK_THROWS_WITH(Channel::body_length(std::string("\0\x10\0\0", 4), kMaxFirstFrame),
                          Catch::Matchers::ContainsSubstring("before authentication"));
        CHECK_THROWS(server.open("short"));
        CHECK_THROWS(client.seal(1, std::string(kMaxFrame, 'x')));
    }
}

TEST_CASE("GANGWAY_SECRET must be 64 hex digits") {
    CHECK(key_from_secret(std::string(64, 'a')).size() == 32);
    CHECK_THROWS_WITH(key_from_secret("abc"), Catch::Matchers::ContainsSubstring("64 hex digits"));
    CHECK_THROWS_WITH(key_from_secret(std::string(64, 'x')), Catch::Matchers::ContainsSubstring("not hex"));
}
