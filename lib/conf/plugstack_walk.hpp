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
// Pure: the file system is behind ConfFiles (the doctor's reads real
// files, the unit test and the fuzzer an in-memory tree).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conf_files.hpp"
#include "plugstack_check.hpp"
#include "plugstack_text.hpp"

namespace gangway {

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
PlugstackWalk walk_plugstack(const std::string& conf, ConfFiles& files, const PlugstackBudget& budget = {});

}  // namespace gangway
