// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed hash built to be a MAC
// for short messages. The plugin uses it for the mark of a checked job
// (lib/env/check_marker): a MAC the job's user cannot forge without the
// site's key, computed inside slurmstepd where linking libcrypto into every
// step is not worth it for one 64-bit tag. The launcher's cryptography stays
// OpenSSL's (lib/preflight/crypto).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace gangway {

using SipKey = std::array<std::uint8_t, 16>;

// The 64-bit tag of `message` under `key`, as the reference implementation
// returns it (its little-endian bytes are the paper's test vectors).
std::uint64_t siphash24(const SipKey& key, std::string_view message) noexcept;

}  // namespace gangway
