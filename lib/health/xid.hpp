// Xids in the kernel log: the NVIDIA driver writes a line per GPU fault,
// "NVRM: Xid (PCI:0000:17:00): 79, pid=..., GPU has fallen off the bus.".
// NVML reports Xids only to a process that waits for them as they happen, so
// a check between jobs reads them from /dev/kmsg (lib/sys/health/kmsg).
// Only records kmsg_record.hpp takes for the driver's own count, and only
// with a bus id in the driver's strict form: users can put the tag's text
// into the kernel log (a process's name, a mount option), never that.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../base/pci_bus_id.hpp"  // the driver's bus ids, read by the one parser
#include "facts.hpp"

namespace gangway::health {

// The driver's tag: the start of an Xid record's message.
inline constexpr std::string_view kXidTag = "NVRM: Xid (PCI:";

// /dev/kmsg records -> the driver's Xid records (kernel_text with kXidTag,
// then "BUSID): NUMBER" and "," or the end), with their sequence numbers.
// Anything else is passed over.
std::vector<Xid> parse_kmsg_xids(std::string_view records);

// The newest record's sequence number, an Xid or not: the next run reads
// past it. nullopt when there is none.
std::optional<std::uint64_t> last_kmsg_seq(std::string_view records);

// Those logged after sequence number `after` (none: all of them, the first run).
std::vector<Xid> xids_after(const std::vector<Xid>& xids, std::optional<std::uint64_t> after);

}  // namespace gangway::health
