// What `gangway postmortem [JOBID]` reads from `scontrol -o show job`'s
// lines (issue 33): the job's owner, its AdminComment (where fleet serve put
// the verdict's line), and the newest job of a user. Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway::postmortem {

// A field's value: scontrol_field (lib/env/scontrol_text.hpp), the one reader.

// UserId=name(UID)'s UID.
std::optional<std::uint32_t> job_uid(std::string_view line);

// The newest (highest JobId) of `uid`'s jobs in `scontrol -o show job`'s
// lines (one a job), or nullopt.
std::optional<std::uint32_t> newest_job_of(std::string_view all_jobs, std::uint32_t uid);

}  // namespace gangway::postmortem
