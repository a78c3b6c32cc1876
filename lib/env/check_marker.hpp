// The mark of a checked job (GANGWAY_CHECKED), which lets the steps inside a
// job that passed its check start without a second one. Where users may opt
// out of checks anyway, the job's id is mark enough. Where the site's check
// is mandatory (check_optout=no), the mark must be one the user cannot make:
// a SipHash tag of the job and its user under the site's key (check_key=, a
// root-only file, the same on every node, as munge.key), which only the
// plugin in slurmstepd reads. Pure: the plugin reads the file and the items.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../base/siphash.hpp"

namespace gangway {

// The site's key: its first 16 bytes key SipHash, the rest (if any) is
// hashed with every mark. Wiped when it goes (it is root's secret, and
// slurmstepd's tasks are forked from the process that holds it).
class CheckKey {
public:
    // `bytes`: the file's content, 16 to 4096 bytes. Throws gangway::Error.
    explicit CheckKey(std::string_view bytes);
    ~CheckKey();
    CheckKey(const CheckKey&) = delete;
    CheckKey& operator=(const CheckKey&) = delete;
    // "JOB:TAG", TAG 16 hex digits.
    std::string mark(std::uint32_t job, std::uint32_t uid) const;

private:
    SipKey key_{};
    std::string rest_;
};

inline constexpr std::size_t kCheckKeyMinBytes = 16, kCheckKeyMaxBytes = 4096;

// Whether the value of GANGWAY_CHECKED proves that job `job` was checked.
// `expected`: the job's mark under the site's key, empty without one.
// `optout`: users may skip the check anyway (check_optout=yes), so the job's
// id alone (or any mark that starts with it) will do.
bool mark_proves_check(std::string_view value, std::uint32_t job, std::string_view expected, bool optout);

}  // namespace gangway
