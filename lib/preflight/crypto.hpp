// The preflight's cryptography, from OpenSSL 3's libcrypto: HMAC-SHA256
// (over SHA256_*, which takes no heap) to authenticate messages with the step's secret, constant-time
// comparison (CRYPTO_memcmp) and wiping (OPENSSL_cleanse). The launcher's
// only: the SPANK plugin runs in every slurmstepd and links no libcrypto
// (tests/plugin_contents.sh).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "../base/text.hpp"  // to_hex, from_hex

namespace gangway {

using Digest = std::array<std::uint8_t, 32>;

// Allocates nothing and cannot fail: the data port computes it on every
// connection, also when a flood has taken the task's memory.
Digest hmac_sha256(std::string_view key, std::string_view data);
std::string to_hex(const Digest& d);
// Whether a and b hold the same bytes, in time that depends on their length only.
bool equal_ct(std::string_view a, std::string_view b);
// Overwrites the bytes in a way the compiler cannot drop, then empties s.
void wipe(std::string& s);

}  // namespace gangway
