// The node's outbox of the post-mortem, on disk (lib/postmortem/outbox.hpp
// is its pure part; docs/postmortem.md, "Nothing lost"): DIR/outbox under
// the site's postmortem_dir= (%n expanded), root's, 0700, one file per
// record that fleet serve did not take (root, 0600, written whole or not at
// all), bounded in records, bytes and age. `keep_in_outbox` is the
// Epilog's, after a send that got no answer or a busy one; `resend_outbox`
// is the next Epilog's, Prolog's and node check's: oldest first, each
// record signed afresh at its try, within a time budget, stopping at the
// first record serve does not take (it is down or busy: the rest would wait
// as long). One resend at a time (a lock on the directory); another run
// finding it held leaves the outbox to it.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../postmortem/outbox.hpp"
#include "../net/http_client.hpp"

namespace gangway::sys::postmortem {

inline constexpr const char* kOutboxDir = "outbox";
inline constexpr double kResendWithinS = 5;

// DIR/outbox (DIR: the node's postmortem directory, %n expanded).
std::string outbox_path(const std::string& dir);

// Writes `e` into DIR/outbox (made root's, 0700, where missing; one already
// there must be a directory of this user's closed to others, not a link),
// first dropping what the bounds say (outbox_evictions, with room for it).
// `lines` gets one line per record dropped. The file's name, or one line.
Result<std::string> keep_in_outbox(const std::string& dir, const gangway::postmortem::OutboxEntry& e, std::int64_t now_s,
                                   std::vector<std::string>& lines,
                                   const gangway::postmortem::OutboxLimits& limits = {});

struct ResendOptions {
    std::optional<HttpUrl> to;  // the site's URL now (the Epilog's, the Prolog's); unset: each entry's own
    std::string key_file;       // likewise; "": each entry's own
    double within_s = kResendWithinS;
    std::int64_t now_s = 0;
    gangway::postmortem::OutboxLimits limits;
};

struct Resent {
    unsigned delivered = 0;  // taken by serve
    unsigned refused = 0;    // refused for good (or unreadable): removed
    unsigned dropped = 0;    // dropped by the bounds, unsent
    unsigned left = 0;       // still in the outbox
    bool busy = false;       // another run holds the outbox
    std::vector<std::string> lines;  // one per record delivered, refused or dropped, and why the rest wait
};

// Sends the outbox's records again (see above). A missing outbox is an
// empty one; a Failure only where the outbox cannot be used at all.
Result<Resent> resend_outbox(const std::string& dir, const ResendOptions& o);

// A node's record to serve at `to` (a URL), signed with the key in
// `key_file`, as the Epilog's collector sends it: where serve gave no answer
// or a busy one, kept in DIR's outbox for the next Epilog, Prolog or node
// check to send; where serve answered (it is up), the outbox's older records
// go after it, within kResendWithinS. Each line through `say`. Returns
// whether serve took it.
bool send_or_keep(const std::string& dir, std::uint32_t job, const std::string& node, const std::string& to,
                  const std::string& key_file, const std::string& body, const std::function<void(const std::string&)>& say);

}  // namespace gangway::sys::postmortem
