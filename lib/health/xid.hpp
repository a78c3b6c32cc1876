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

#include "facts.hpp"

namespace gangway::health {

// The driver's tag: the start of an Xid record's message.
inline constexpr std::string_view kXidTag = "NVRM: Xid (PCI:";

// A bus id as the driver or sysfs writes it, hex digits only:
// DOMAIN:BUS:DEVICE[.FUNCTION], a domain of 4 to 8 digits, bus and device of
// 2 (device at most 1f), function 0-7 -> sysfs's spelling, "0000:17:00.0"
// (lower case, a 4-digit domain where it fits, function 0 when not given);
// nullopt for anything else.
std::optional<std::string> pci_bus_id(std::string_view s);

// A bus id as a GPU library reports it (cuDeviceGetPCIBusId, NVML: an
// 8-digit domain, upper case) in sysfs's spelling, so that it names the
// device's directory: pci_bus_id's, else the text as it is, in lower case.
std::string sysfs_bus_id(std::string_view library_id);

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
