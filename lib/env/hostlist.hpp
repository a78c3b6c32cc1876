// SLURM hostlist expressions ("gpu-[08-11],login1", "rack[1-2]-n[01-02]-ib")
// expanded the way SLURM's own hostlist.c does, so the plugin needs no libslurm.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

// Expands `expr` into host names, in order, duplicates kept (SLURM keeps them
// too). Throws gangway::Error naming the bad part on malformed input.
std::vector<std::string> expand_hostlist(std::string_view expr);

// Safety valve against a typo such as node[1-99999999]: SLURM refuses ranges
// larger than MAX_SLURM_NODES (64K) as well.
inline constexpr std::size_t kMaxHostlistHosts = 65536;

}  // namespace gangway
