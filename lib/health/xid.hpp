// Xids in the kernel log: the NVIDIA driver writes a line per GPU fault,
// "NVRM: Xid (PCI:0000:17:00): 79, pid=..., GPU has fallen off the bus.".
// NVML reports Xids only to a process that waits for them as they happen, so
// a check between jobs reads them from /dev/kmsg (lib/sys/health/kmsg).
#pragma once
#include <string_view>
#include <vector>

#include "facts.hpp"

namespace gangway::health {

// /dev/kmsg records ("PRIO,SEQ,USEC,FLAGS;MESSAGE", one per line; lines
// that start with a blank continue a record and are passed over) -> the Xid
// lines, with their sequence numbers. Anything else is passed over.
std::vector<Xid> parse_kmsg_xids(std::string_view records);

// The newest record's sequence number, an Xid or not: the next run reads
// past it. nullopt when there is none.
std::optional<std::uint64_t> last_kmsg_seq(std::string_view records);

// Those logged after sequence number `after` (none: all of them, the first run).
std::vector<Xid> xids_after(const std::vector<Xid>& xids, std::optional<std::uint64_t> after);

}  // namespace gangway::health
