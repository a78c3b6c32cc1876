// `gangway doctor`'s walk through plugstack.conf and the files its `include`
// lines name, in SLURM's order, for the lines that load gangway.so. SLURM
// follows includes with no guard at all; the doctor reads each file once
// (known by device and inode, whatever path or link names it) and within a
// budget of files, bytes and include paths, so that files including each
// other, or a glob that matches thousands of files, cost time linear in what
// is read and never more than the budget. Before (issue 23 item 9) it
// followed includes to a depth of 8 with no record of what it had read: five
// files each including all five took 18 s and printed 97,656 lines.
//
// Pure: the file system is behind PlugstackFiles (the doctor's reads real
// files, the unit test and the fuzzer an in-memory tree).
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugstack_check.hpp"
#include "plugstack_text.hpp"

namespace gangway {

// What the walk needs from a file system.
class PlugstackFiles {
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
    virtual ~PlugstackFiles() = default;
    // The paths an include's pattern matches, in glob(3)'s (sorted) order, as SLURM expands it.
    virtual std::vector<std::string> expand(const std::string& pattern) = 0;
    // The regular file at path, or nullopt when there is none or it cannot be read.
    virtual std::optional<Id> identify(const std::string& path) = 0;
    // At most `limit` bytes of it; nullopt when it cannot be read.
    virtual std::optional<Text> read(const std::string& path, std::size_t limit) = 0;
};

// Far above any real plugstack.conf (a few files of a few lines), far below
// what would take the doctor noticeable time.
struct PlugstackBudget {
    std::size_t files = 256;            // files read
    std::size_t bytes = 4u << 20;       // bytes read, all files together
    std::size_t paths = 4096;           // include lines followed plus the paths their patterns match
};

struct PlugstackWalk {
    std::vector<PlugstackLine> lines;  // the gangway.so lines, in SLURM's order
    std::vector<std::string> read;     // the files read, each once, the first one first
    std::vector<Remark> remarks;       // include cycles, files included again, the budget reached: one line each
    bool complete = true;              // false: the budget stopped the walk (a remark says where)
};

// Reads `conf` and what it includes. A file being read that an include names
// again (a cycle) is a problem: SLURM would read the files over and over until
// it fails. A file already read that another include names again is a note:
// SLURM reads it twice and refuses its plugins the second time (not said
// when there is a cycle, which makes most includes such repeats). Each kind
// is one remark, with the first case and how many more there were. Going past
// the budget stops the walk with a problem naming the file and the limit.
PlugstackWalk walk_plugstack(const std::string& conf, PlugstackFiles& files, const PlugstackBudget& budget = {});

}  // namespace gangway
