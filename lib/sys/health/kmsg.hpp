// The kernel log's records (/dev/kmsg) for the Xids the NVIDIA driver wrote.
// Root reads them (or anyone where dmesg_restrict is 0); the device gives one
// record per read, from the oldest the ring buffer still holds, and EAGAIN
// after the newest. Under a fixture root, <root>/dev/kmsg is a plain file of
// records, one per line.
#pragma once
#include <string>

#include "../../base/result.hpp"

namespace gangway::sys {

// At most `max_bytes` of records; Failure when it cannot be opened (not root).
Result<std::string> read_kmsg(const std::string& root, std::size_t max_bytes = std::size_t(16) << 20);

}  // namespace gangway::sys
