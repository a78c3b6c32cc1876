// A read of fleet serve that MUNGE authenticates, both sides: `gangway
// postmortem JOB --from URL` (GET /v1/stops/JOB) and `gangway status JOB`
// (GET /v1/status/JOB) make a credential whose payload names the request
// (stops_read_payload, status_read_payload) and send it in kHeaderMunge;
// serve asks `unmunge` who made it (once: munged refuses a replay) and for
// which request. I/O: each returns a Result whose failure is one line.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../../base/result.hpp"
#include "../net/http_client.hpp"
#include "stops_auth.hpp"

namespace gangway::sys::postmortem {

// The client's side: `munge -s PAYLOAD` (GANGWAY_MUNGE, else munge): the
// credential, or why not, saying what to do (is munged running here?).
Result<std::string> munge_credential(const std::string& payload);
// Then GET u's host for `target` with it, 10 s at most: the answer, whatever its status.
Result<HttpAnswer> munge_get(const HttpUrl& u, const std::string& target, const std::string& credential);

// Who made a MUNGE credential, as `unmunge` says, or why not.
Result<MungeCaller> munge_caller(const std::string& unmunge, std::string_view cred);

// serve's side: the uid of the reader whose credential was made for
// `payload`; a failure is the 401's reason ("not a MUNGE credential",
// "MUNGE refused the credential: ...", "the credential was made for another
// request").
Result<std::uint32_t> munge_reader(const std::string& unmunge, std::string_view cred, std::string_view payload);

}  // namespace gangway::sys::postmortem
