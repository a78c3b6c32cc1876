// This process's environment as the EnvMap the pure code takes (step view,
// GPU thresholds, allocation), read once where a command starts using it.
#pragma once
#include "../../env/step_view.hpp"  // EnvMap

namespace gangway::sys {

EnvMap process_env();

}  // namespace gangway::sys
