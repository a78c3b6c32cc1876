// The words of gangway run/check's --check and --on-fail. Parsed once where
// the command line and GANGWAY_* are read (cmd_run.cpp); everything after
// compares the enums, and to_string gives the word back for messages and the
// report's "mode".
#include <string>

#include "../lib/base/error.hpp"
#include "preflight.hpp"

namespace gangway::cli {

CheckLevel parse_check_level(std::string_view t) {
    for (auto c : {CheckLevel::none, CheckLevel::quick, CheckLevel::full})
        if (t == to_string(c)) return c;
    throw Error("--check must be none, quick or full, not \"" + std::string(t) + "\"");
}

std::string_view to_string(CheckLevel c) {
    switch (c) {
        case CheckLevel::none: return "none";
        case CheckLevel::quick: return "quick";
        case CheckLevel::full: return "full";
    }
    return "quick";
}

OnFail parse_on_fail(std::string_view t) {
    for (auto f : {OnFail::abort, OnFail::warn, OnFail::requeue})
        if (t == to_string(f)) return f;
    throw Error("--on-fail must be abort, warn or requeue, not \"" + std::string(t) + "\"");
}

std::string_view to_string(OnFail f) {
    switch (f) {
        case OnFail::abort: return "abort";
        case OnFail::warn: return "warn";
        case OnFail::requeue: return "requeue";
    }
    return "abort";
}

}  // namespace gangway::cli
