// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and dependency-free,
// for authenticating the preflight's TCP messages with the step's secret.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "../base/text.hpp"  // to_hex, from_hex

namespace gangway {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
public:
    Sha256();
    void update(std::string_view data);
    Digest finish();

private:
    void block(const std::uint8_t* p);
    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t buf_len_ = 0;
    std::uint64_t total_ = 0;
};

Digest sha256(std::string_view data);
Digest hmac_sha256(std::string_view key, std::string_view data);
std::string to_hex(const Digest& d);
// Constant-time comparison of two equally long byte strings.
bool equal_ct(std::string_view a, std::string_view b);

}  // namespace gangway
