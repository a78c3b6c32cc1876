// slurm.conf as SLURM reads it: the file with each `Include FILE` line
// replaced by that file's text, in place, so that what the node check reads
// (NodeName= lines and their Gres=, NodeName=DEFAULT included) and what the
// doctor reads (PlugStackConfig=) is what slurmctld and slurmd see at a site
// that keeps its nodes in an included file. Before, only slurm.conf itself
// was read, and a node whose Gres= line is in an Include had no GPU count to
// be checked against.
//
// SLURM's rule (slurm.conf(5), "INCLUDE MODIFIERS"): a line that begins with
// the word Include (any case), blanks, then a file name; %c in the name is
// the ClusterName; a name that does not begin with '/' is looked for in the
// directory of slurm.conf (the first file), whichever file includes it.
// No glob: SLURM takes the name as written.
//
// Pure: the files are behind ConfFiles (lib/sys/conf/conf_files.hpp on a node).
// Bounded (SECURITY.md, "What a parser may spend"): each file is read once
// (known by device and inode), within a budget of files and bytes; a cycle,
// a file included again, one that cannot be read and the budget reached are
// one remark each, and the walk goes on with what it could read.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "conf_files.hpp"

namespace gangway {

// Far above a real site's (slurm.conf and a few included node and partition
// files: a 10,000-node site's are about 1 MiB).
struct SlurmConfBudget {
    std::size_t files = 64;
    std::size_t bytes = 16u << 20;  // all files together
    // Include lines followed (one stat each); the remarks are at most 16 lines and a count.
    std::size_t includes = 4096;
};

struct SlurmConf {
    std::string text;                  // the lines, each Include replaced by the file's text
    std::vector<std::string> read;     // the files read, slurm.conf first; empty: slurm.conf could not be read
    std::vector<std::string> remarks;  // one line each: what was not followed, and why
};

SlurmConf read_slurm_conf(const std::string& path, ConfFiles& files, const SlurmConfBudget& budget = {});

}  // namespace gangway
