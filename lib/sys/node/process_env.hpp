// This process's environment: whole, as the EnvMap the pure code takes (step
// view, GPU thresholds, allocation), read once where a command starts using
// it; or one variable at a time.
#pragma once
#include <string>
#include <string_view>

#include "../../env/step_view.hpp"  // EnvMap

namespace gangway::sys {

EnvMap process_env();

// NAME's value, or `fallback` when it is unset or empty (no variable gangway
// reads this way has a use for an empty value: a path, a port, a name).
std::string env_or(const char* name, std::string_view fallback = {});

}  // namespace gangway::sys
