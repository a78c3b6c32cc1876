// Reading the task's environment in slurmstepd, whatever its length.
#pragma once
#include <optional>
#include <string>

#include "spank_api.hpp"

namespace gangway::plugin {

std::optional<std::string> get_env(spank_t sp, const std::string& name);

}  // namespace gangway::plugin
