#include "send.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "../../base/text.hpp"
#include "stops_auth.hpp"
#include "../node/file.hpp"

namespace gangway::sys::postmortem {

namespace pm = gangway::postmortem;

Result<std::string> read_stops_key(const std::string& path) {
    auto key = read_owned_file(path, ::geteuid(), kStopsKeyMaxBytes, FileAccess::Private);
    if (!key) return Failure{"the site's key " + path + ": " + key.error()};
    if (key->empty()) return Failure{"the site's key " + path + " is empty"};
    return key;
}

Sent send_stop(const HttpUrl& to, std::string_view key, std::uint32_t job, const std::string& node, std::string_view body,
               int tries, double try_s, Signed what) {
    Sent out;
    for (int attempt = 0; attempt < tries; ++attempt) {
        if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(500));
        // Stamped at each try: a retry is a new request, not a replay.
        const StopStamp s{job, node, static_cast<std::int64_t>(std::time(nullptr))};
        const std::vector<std::pair<std::string, std::string>> headers{
            {"Content-Type", "application/json"},
            {kHeaderJob, std::to_string(job)},
            {kHeaderNode, node},
            {kHeaderTime, std::to_string(s.time_s)},
            {kHeaderSignature, stop_signature(key, s, body, what)},
        };
        const auto a = http_request(to, "POST", what == Signed::progress ? kProgressPath : kStopsPath, headers, body, after_ms(static_cast<long>(try_s * 1000)), 65536);
        out.status = a ? a->status : 0;
        out.delivery = pm::delivery_of(out.status);
        if (!a) {
            out.line = "could not send job " + std::to_string(job) + "'s record of " + node + ": " + a.error();
            continue;
        }
        const std::string said = printable_name(trim_right(a->body), 200);
        if (out.delivery == pm::Delivery::delivered) {
            out.line = said;
            return out;
        }
        out.line = "could not send job " + std::to_string(job) + "'s record of " + node + ": fleet serve answered " +
                   std::to_string(a->status) + ": " + said;
        if (a->status < 500) break;
    }
    return out;
}

}  // namespace gangway::sys::postmortem
