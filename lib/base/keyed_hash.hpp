// The hash for tables keyed by names from outside (node names, devices, peer
// classes from users' reports). libstdc++'s std::hash of a string is
// MurmurHash64A under a fixed seed, and its block mixing is invertible: for
// any 16 bytes there are 2^64 others that leave its state the same, so 14
// such choices in a 224-byte name give 16,384 names of one hash, and a table
// of them is one list (`fleet show` took 6 to 18 s, issue 31 item 6).
// SipHash-2-4 (siphash.hpp) under a key drawn at random once per process
// cannot be collided by someone who cannot read the key: a lookup walks a
// chain of expected length O(1) whatever the names.
#pragma once
#include <cstddef>
#include <string_view>

#include "siphash.hpp"

namespace gangway {

// The process's key: 16 random bytes (std::random_device, getrandom(2) on
// Linux), drawn on first use.
const SipKey& process_hash_key();

// A hasher for std::unordered_map/set of strings (transparent: a
// std::string_view finds a std::string key without a copy).
struct KeyedHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return static_cast<std::size_t>(siphash24(process_hash_key(), s));
    }
};

}  // namespace gangway
