// What a walk through SLURM's configuration files needs from a file system:
// plugstack.conf's includes (plugstack_walk.hpp) and slurm.conf's
// (slurm_conf_walk.hpp). The real one is lib/sys/conf/conf_files.hpp; the unit
// tests and the fuzzers give an in-memory tree, so the walks stay pure.
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gangway {

class ConfFiles {
public:
    // A file whatever path or link names it: device and inode.
    struct Id {
        std::uint64_t dev = 0, ino = 0;
        auto operator<=>(const Id&) const = default;
    };
    struct Text {
        std::string text;        // its first bytes, at most the limit asked for
        bool truncated = false;  // it holds more than that
    };
    virtual ~ConfFiles() = default;
    // The paths an include's pattern matches, in glob(3)'s (sorted) order, as SLURM expands it.
    virtual std::vector<std::string> expand(const std::string& pattern) = 0;
    // The regular file at path, or nullopt when there is none or it cannot be read.
    virtual std::optional<Id> identify(const std::string& path) = 0;
    // At most `limit` bytes of it; nullopt when it cannot be read.
    virtual std::optional<Text> read(const std::string& path, std::size_t limit) = 0;
};

}  // namespace gangway
