#include "check_marker.hpp"

#include <string.h>  // explicit_bzero

#include <cstdio>

#include "../base/error.hpp"

namespace gangway {

CheckKey::CheckKey(std::string_view bytes) {
    if (bytes.size() < kCheckKeyMinBytes || bytes.size() > kCheckKeyMaxBytes)
        throw Error("plugstack.conf: check_key= names a file of " + std::to_string(bytes.size()) +
                    " bytes, not 16 to 4096; make one with `dd if=/dev/urandom of=FILE bs=32 count=1` "
                    "and copy it to every node");
    for (std::size_t i = 0; i < key_.size(); ++i) key_[i] = static_cast<std::uint8_t>(bytes[i]);
    rest_.assign(bytes.substr(key_.size()));
}

CheckKey::~CheckKey() {
    explicit_bzero(key_.data(), key_.size());
    if (!rest_.empty()) explicit_bzero(rest_.data(), rest_.size());
}

std::string CheckKey::mark(std::uint32_t job, std::uint32_t uid) const {
    // Domain and version first, so that no other use of the key can make a mark.
    std::string msg = "gangway-checked-v1";
    msg += '\0';
    msg += std::to_string(job);
    msg += '\0';
    msg += std::to_string(uid);
    msg += '\0';
    msg += rest_;
    const std::uint64_t tag = siphash24(key_, msg);
    explicit_bzero(msg.data(), msg.size());
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(tag));
    return std::to_string(job) + ":" + hex;
}

bool mark_proves_check(std::string_view value, std::uint32_t job, std::string_view expected, bool optout) {
    if (!expected.empty() && value.size() == expected.size()) {
        // Every byte compared whatever the first difference: no timing to learn the tag from.
        unsigned char diff = 0;
        for (std::size_t i = 0; i < value.size(); ++i) diff |= static_cast<unsigned char>(value[i] ^ expected[i]);
        if (diff == 0) return true;
    }
    if (!optout) return false;
    const std::string id = std::to_string(job);
    return value == id || (value.size() > id.size() && value.starts_with(id) && value[id.size()] == ':');
}

}  // namespace gangway
