// How a node's Epilog proves that a NodeRecord it POSTs to `fleet serve`'s
// /v1/stops is root's (issue 33, docs/postmortem.md): HMAC-SHA256 under the
// site's key (the check's key file, which only root on the nodes and the
// admin host can read) over a stamp (the job, the node, the time) and the
// body. The stamp travels in headers, so the server checks the signature and
// the time before it parses a byte of the body; a stamp older (or newer)
// than kStopMaxSkewS is refused, and within that window a replay is a second
// record of a node that has sent (gather.hpp refuses it). Pure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "../../postmortem/record.hpp"

namespace gangway::sys::postmortem {

inline constexpr std::size_t kMaxStopBody = std::size_t(1) << 20;  // 1 MiB: 4,096 tasks and 256 lines fit
inline constexpr std::int64_t kStopMaxSkewS = 300;                 // the nodes' clocks against the admin host's
inline constexpr const char* kStopsPath = "/v1/stops";

// The headers of the stamp.
inline constexpr const char* kHeaderJob = "X-Gangway-Job";
inline constexpr const char* kHeaderNode = "X-Gangway-Node";
inline constexpr const char* kHeaderTime = "X-Gangway-Time";
inline constexpr const char* kHeaderSignature = "X-Gangway-Signature";
// GET /v1/stops/JOB: the caller's MUNGE credential (`munge -s PAYLOAD`), whose
// payload is stops_read_payload(JOB). serve decodes it with `unmunge` (MUNGE
// says who made it, once: a replay is refused by munged) and answers the
// job's owner (SLURM's UserId, stored with the stop), root and serve's own
// user only.
inline constexpr const char* kHeaderMunge = "X-Gangway-Munge";
inline constexpr std::size_t kMaxMungeCredential = 4096;

struct StopStamp {
    std::uint32_t job = 0;
    std::string node;
    std::int64_t time_s = 0;  // unix seconds when the node sent it
};

// What a signed POST carries: a node's record of a stopped job (/v1/stops),
// or a node's progress record of a running one (/v1/progress, issue 43).
// Signed apart, so that a record of one kind is never taken as the other.
enum class Signed : std::uint8_t { stop, progress };
inline constexpr const char* kProgressPath = "/v1/progress";

// The signature's hex (64 digits) over "gangway-stop 1\njob=J\nnode=N\ntime=T\n"
// (or "gangway-progress 1\n...") + body.
std::string stop_signature(std::string_view key, const StopStamp& s, std::string_view body, Signed what = Signed::stop);

// What the server answers a POST it refuses, or status 0 when it takes it.
struct StopRefusal {
    unsigned status = 0;  // 400 malformed stamp, 401 bad signature, 403 stale time
    std::string why;      // one line for the client and the server's log
    explicit operator bool() const { return status != 0; }
};

// Checks the stamp's header values (as the client sent them; null: absent),
// then the signature (constant time), then the time against now_s. On success
// `out` holds the stamp. The body is not parsed here.
using gangway::postmortem::NodeRecord;

StopRefusal check_stop_post(std::string_view key, const char* job, const char* node, const char* time, const char* signature,
                            std::string_view body, std::int64_t now_s, StopStamp& out, Signed what = Signed::stop);

// The payload a reader's credential carries for JOB: a credential made for
// one job does not read another.
std::string stops_read_payload(std::uint32_t job);
// GET /v1/status/JOB's (issue 43): the running job's pace, straggler and hang.
std::string status_read_payload(std::uint32_t job);
inline constexpr const char* kStatusPath = "/v1/status/";

// Whether a credential is a MUNGE credential's text ("MUNGE:" and base64,
// at most kMaxMungeCredential): nothing else reaches unmunge.
bool munge_credential_shape(std::string_view cred);

// `unmunge`'s output: the uid of a credential whose STATUS is Success, with
// its payload; nullopt for any other (expired, replayed, rewound, invalid).
struct MungeCaller {
    std::uint32_t uid = 0;
    std::string payload;
};
std::optional<MungeCaller> parse_unmunge(std::string_view output);

// After parsing: "" when the record is the stamp's (its node and job), every
// task is of that node and job, and the node is in the record's job_nodes;
// else the one line why not (a record naming another node or job).
std::string record_mismatch(const StopStamp& s, const NodeRecord& r);

}  // namespace gangway::sys::postmortem
