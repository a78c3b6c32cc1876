// The node's outbox of the post-mortem (docs/postmortem.md, "Nothing lost"):
// a node's record that `fleet serve` did not take (no answer, a timeout,
// 503 busy, serve restarting or down) is kept in root's outbox beside the
// job directories, DIR/outbox, and sent again by the node's next Epilog,
// Prolog or node check, oldest first, each within a few seconds. This is
// the pure part: what an entry holds, its file name, which entries the
// outbox's bounds drop, and which answers take a record out of it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::postmortem {

struct OutboxLimits {
    std::size_t max_records = 256;                  // entries kept at once
    std::uint64_t max_bytes = std::uint64_t(64) << 20;  // their files' bytes together
    std::int64_t max_age_s = 7 * 86400;             // an entry older than this is dropped unsent
};

// What the resend needs beside the record's own bytes: where it was to go
// (serve's URL) and the key file it is signed with at each try, the job and
// the node the request's stamp names.
struct OutboxEntry {
    std::string to;        // serve's URL, as the Epilog's --to gave it
    std::string key_file;  // the site's key file (root's; read at each resend)
    std::uint32_t job = 0;
    std::string node;
    std::string body;      // the record's JSON, sent as it is
};

// "gangway-outbox 1\nto=URL\nkey=FILE\njob=J\nnode=N\n\n" + body. Throws
// Error where a field would break the format (a newline, an empty field).
std::string render_outbox_entry(const OutboxEntry& e);
// The reverse; throws Error naming what is wrong (not an entry, a field
// missing or twice, a bad job id).
OutboxEntry parse_outbox_entry(std::string_view text);

// An entry's file name: "<spooled unix seconds, 12 digits>.<job>.<unique>",
// so that names sort oldest first. `unique`: hex digits (random).
std::string outbox_name(std::int64_t spooled_s, std::uint32_t job, std::string_view unique);

// A file found in the outbox, as its name and size say.
struct OutboxFile {
    std::string name;
    std::int64_t spooled_s = 0;
    std::uint32_t job = 0;
    std::uint64_t bytes = 0;
};
// nullopt for a name that is not an entry's (a temporary file, anything else).
std::optional<OutboxFile> parse_outbox_name(std::string_view name, std::uint64_t bytes);

enum class Evicted { too_old, too_many, too_big };
const char* to_string(Evicted e);  // "older than N days" is the caller's: the limits are
struct Eviction {
    OutboxFile file;
    Evicted why = Evicted::too_old;
};

// The entries the bounds drop, oldest first: every one older than
// max_age_s, then the oldest while more than max_records or max_bytes are
// kept. With `adding` (the size of an entry about to be written), room is
// made for it too: one entry and its bytes fewer. An entry stamped in the
// future (the clock was set back) counts as new.
std::vector<Eviction> outbox_evictions(std::vector<OutboxFile> files, std::int64_t now_s, const OutboxLimits& l,
                                       std::optional<std::uint64_t> adding = std::nullopt);

// What serve's answer means for a record:
//   delivered: 2xx, taken;
//   refused:   400 malformed, 403 another node's or stale, 409 a second
//              record of the node (it has this one) or a job judged,
//              413 too large: it would be refused again, so it leaves the outbox;
//   retry:     no answer (status 0: refused connection, timeout, serve
//              down), 503 busy, any other 5xx, 401 (the key file differs
//              from serve's: the admin's fix makes it pass), 404 (serve
//              without --stops-key) and anything else: kept and sent again.
enum class Delivery { delivered, refused, retry };
Delivery delivery_of(unsigned status);

}  // namespace gangway::postmortem
