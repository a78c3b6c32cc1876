// How a stage of the preflight ended. Held as an enum; spelt as text only at
// the edges: the report's table and JSON, and the speakers' answers to the
// coordinator (s.I.status of kLocalResult), which keep their words.
#pragma once
#include <optional>
#include <string_view>

namespace gangway::preflight {

// skipped: the stage could not run here and is not required (no GPUs, fewer
// than two nodes); aborted: its deadline passed or a task was lost.
enum class StageStatus { ok, failed, skipped, aborted };
const char* to_string(StageStatus s);  // "ok", "failed", "skipped", "aborted"
// The words of to_string; nullopt for any other (a speaker of another
// version), which the coordinator counts as neither ok nor failed.
std::optional<StageStatus> parse_stage_status(std::string_view text);

}  // namespace gangway::preflight
