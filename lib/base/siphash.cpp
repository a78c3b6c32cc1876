#include "siphash.hpp"

namespace gangway {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    return v;
}

struct State {
    std::uint64_t v0, v1, v2, v3;
    void round() {
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
    }
    void absorb(std::uint64_t m) {  // two compression rounds: the "2" of 2-4
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
};

}  // namespace

std::uint64_t siphash24(const SipKey& key, std::string_view message) noexcept {
    const std::uint64_t k0 = load_le(key.data(), 8), k1 = load_le(key.data() + 8, 8);
    State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
            k1 ^ 0x7465646279746573ull};
    const auto* p = reinterpret_cast<const std::uint8_t*>(message.data());
    const std::size_t n = message.size(), whole = n - n % 8;
    for (std::size_t i = 0; i < whole; i += 8) s.absorb(load_le(p + i, 8));
    // The last block: the bytes left over and the length's low byte on top.
    s.absorb(load_le(p + whole, n - whole) | (std::uint64_t{n & 0xff} << 56));
    s.v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) s.round();  // four finalisation rounds: the "4"
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace gangway
