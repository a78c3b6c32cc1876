// The kernel log as /dev/kmsg gives it (the kernel's
// Documentation/ABI/testing/dev-kmsg): one record a line,
// "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE", the message's unprintable bytes
// escaped as \xNN, its dictionary ("SUBSYSTEM=pci") on the lines after it,
// each starting with a blank.
//
// Users write into that log too, without any privilege: a process names
// itself (prctl PR_SET_NAME, 15 characters) and the kernel starts its
// segfault line with that name; a mount in a user namespace makes the kernel
// log "tmpfs: Unknown parameter '<any text>'"; root's daemons write records
// of their own through /dev/kmsg. So this is the one place that decides
// which record is evidence of what a driver saw, and every reader of
// kernel-log evidence (the node check's Xids, the post-mortem) asks it:
//   - the kernel printed it: facility 0 (PRIO is facility * 8 + level; a
//     record written into /dev/kmsg gets facility 1, "user", or the one its
//     <N> prefix names, and the kernel never lets that be 0);
//   - its message STARTS with the driver's tag: what follows a tag in the
//     middle of a line is whatever the line quotes.
// What a reader takes from the rest of the message must still be checked
// strictly (a process name can be the whole tag: xid.hpp's bus id rule).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "../base/text.hpp"

namespace gangway::health {

struct KmsgRecord {
    unsigned facility = 0;    // 0: the kernel's own printk
    unsigned level = 0;       // 0 (emergency) to 7 (debug)
    std::uint64_t seq = 0;    // consecutive per record since boot
    std::string_view message; // a view into the text the record came from
    std::uint64_t usec = 0;   // microseconds since boot (the kernel's local clock) when it was logged
};

// One line of /dev/kmsg -> its record; nullopt for a dictionary line or a
// line not in that form.
std::optional<KmsgRecord> parse_kmsg_record(std::string_view line);

// f(const KmsgRecord&) for each record of `records`, in order.
template <class F>
void for_each_kmsg_record(std::string_view records, F&& f) {
    for_each_line(records, [&](std::string_view line, std::size_t) {
        if (const auto r = parse_kmsg_record(line)) f(*r);
    });
}

// THE rule: the message after `tag` when the kernel printed the record and
// its message starts with `tag`; nullopt for any other record.
std::optional<std::string_view> kernel_text(const KmsgRecord& r, std::string_view tag);

// Records the ring buffer overwrote before a read reached them: records
// after `after` (the last one the previous read saw; none: the first read)
// missing from `records`. The sequence numbers are consecutive, so a record
// whose number is past the next one expected (the first one after `after`,
// or after the record before it) follows a gap: a flood of messages wrapped
// the buffer between two reads, or overtook this read (EPIPE). A number
// lower than expected (a record already seen, a reboot's new log) is no loss.
struct KmsgLoss {
    std::uint64_t records = 0;        // 0: nothing lost
    std::uint64_t first = 0, last = 0;  // the first and last sequence numbers lost
};
KmsgLoss kmsg_lost(std::string_view records, std::optional<std::uint64_t> after);

}  // namespace gangway::health
