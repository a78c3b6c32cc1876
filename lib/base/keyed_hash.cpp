#include "keyed_hash.hpp"

#include <random>

namespace gangway {

const SipKey& process_hash_key() {
    static const SipKey key = [] {
        SipKey k{};
        std::random_device rd;  // libstdc++: getrandom(2), else /dev/urandom
        for (std::size_t i = 0; i < k.size(); i += 4) {
            const unsigned v = rd();
            for (std::size_t j = 0; j < 4; ++j) k[i + j] = static_cast<std::uint8_t>(v >> (8 * j));
        }
        return k;
    }();
    return key;
}

}  // namespace gangway
