#include "munge_read.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include <utility>
#include <vector>

#include "../../base/text.hpp"
#include "../node/process_env.hpp"
#include "../run/deadline.hpp"
#include "../run/subprocess.hpp"

namespace gangway::sys::postmortem {

Result<std::string> munge_credential(const std::string& payload) {
    const auto cred = run_command({env_or("GANGWAY_MUNGE", "munge"), "-s", payload}, 5);
    if (!cred || cred->status != 0)
        return Failure{"cannot get a MUNGE credential (munge -s): " + (cred ? quiet_text(cred->output, 200) : cred.error()) +
                       "; is munged running here?"};
    return std::string(trim_right(cred->output));
}

Result<HttpAnswer> munge_get(const HttpUrl& u, const std::string& target, const std::string& credential) {
    const std::vector<std::pair<std::string, std::string>> headers{{kHeaderMunge, credential}};
    return http_request(u, "GET", target, headers, {}, after_ms(10000));
}

// `unmunge` reads the credential from a private file: the runner gives no stdin.
Result<MungeCaller> munge_caller(const std::string& unmunge, std::string_view cred) {
    if (!munge_credential_shape(cred)) return Failure{"not a MUNGE credential"};
    char path[] = "/tmp/gangway-stops-cred.XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) return Failure{std::string("cannot keep the credential: ") + std::strerror(errno)};
    const bool written = ::write(fd, cred.data(), cred.size()) == ssize_t(cred.size());
    ::close(fd);
    Result<CommandOutput> out = Failure{"cannot keep the credential"};
    if (written) out = run_command({unmunge, "--input=" + std::string(path)}, 5);
    ::unlink(path);
    if (!out) return Failure{out.error()};
    const auto who = parse_unmunge(out->output);
    if (!who) return Failure{"MUNGE refused the credential: " + quiet_text(out->output.substr(0, out->output.find('\n')), 120)};
    return *who;
}

Result<std::uint32_t> munge_reader(const std::string& unmunge, std::string_view cred, std::string_view payload) {
    const auto who = munge_caller(unmunge, cred);
    if (!who) return Failure{who.error()};
    if (who->payload != payload) return Failure{"the credential was made for another request"};
    return who->uid;
}

}  // namespace gangway::sys::postmortem
