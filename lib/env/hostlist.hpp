// SLURM hostlist expressions ("gpu-[08-11],login1", "rack[1-2]-n[01-02]-ib")
// expanded the way SLURM's own hostlist.c does, so the plugin needs no libslurm.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

// Safety valve against a typo such as node[1-99999999]: SLURM refuses ranges
// larger than MAX_SLURM_NODES (64K) as well.
inline constexpr std::size_t kMaxHostlistHosts = 65536;

// The longest name a node list may expand to. No host has a longer one (DNS
// names end at 253 characters; Linux's own host name at 64), and without a
// bound a long prefix, suffix or zero-padded bound is copied into each of up
// to 65,536 names: 8 KB of node list made 520 MB (issue 23, item 1).
inline constexpr std::size_t kMaxHostNameLength = 255;

// Expands `expr` into host names, in order, duplicates kept (SLURM keeps them
// too). Throws gangway::Error naming the bad part on malformed input, and on
// more than kMaxHostlistHosts names or one longer than kMaxHostNameLength.
//
// Cost (SECURITY.md, "What a parser may spend"): every name's count and
// length are known from the expression before any name is made; then each
// name is written once. Work: O(n + the names' characters), at most
// 65,536 x 255 characters (16 MiB); n is expr's length, every byte of it read
// a bounded number of times. Memory: the names (a std::string each) and their
// vector, at most 65,536 x (255 + 1 + 2 x 32) bytes, about 20 MiB, plus the
// parsed items of the token being expanded, 24 bytes for each (an item takes
// at least 2 bytes of input: 12 n at most).
std::vector<std::string> expand_hostlist(std::string_view expr);

}  // namespace gangway
