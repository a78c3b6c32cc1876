#include "stage_status.hpp"

namespace gangway::preflight {

const char* to_string(StageStatus s) {
    switch (s) {
        case StageStatus::ok: return "ok";
        case StageStatus::failed: return "failed";
        case StageStatus::skipped: return "skipped";
        case StageStatus::aborted: return "aborted";
    }
    return "?";
}

std::optional<StageStatus> parse_stage_status(std::string_view text) {
    for (auto s : {StageStatus::ok, StageStatus::failed, StageStatus::skipped, StageStatus::aborted})
        if (text == to_string(s)) return s;
    return std::nullopt;
}

}  // namespace gangway::preflight
