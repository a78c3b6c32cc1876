// The site's nodes as SLURM names them, from what the admin host can read:
// `scontrol -o show node`'s text, or slurm.conf's NodeName lines (with its
// Include lines followed: lib/conf/slurm_conf_walk.hpp). The fleet ingest checks a
// user's report against them (a report of 2,048 nodes that do not exist
// would otherwise add their series to the store and to `fleet metrics` as if
// they did). Pure: the caller reads the text.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

// At most this many names are taken from one text (16 times SLURM's own
// MAX_SLURM_NODES, 65,536): past it, no more names are added, so that a file
// of many "n[1-65536]" lines costs no more than that.
inline constexpr std::size_t kMaxSiteNodes = std::size_t(1) << 20;

// `scontrol -o show node`'s text: each line's leading NodeName=NAME (NAME up
// to the first blank; slurmctld's own word, first on its line). Sorted, unique.
std::vector<std::string> node_names_from_scontrol(std::string_view text);

// slurm.conf's NodeName= lines (the key in any case; NodeName=DEFAULT is
// none), each value a hostlist expanded (hostlist.hpp). A line whose hostlist
// does not expand is passed over (slurmctld would refuse it). Sorted, unique.
std::vector<std::string> node_names_from_slurm_conf(std::string_view text);

}  // namespace gangway
