// Which of a report's node names the site does not have (the fleet ingest's
// check of a user's report against SLURM's node list, lib/env/slurm_nodes.hpp).
#pragma once
#include <string>
#include <vector>

#include "model.hpp"

namespace gangway::fleet {

// The names `rec` uses that `site` (sorted) does not have: its check's
// nodes, its figures' nodes and peers, its findings' nodes. Sorted, unique.
std::vector<std::string> names_not_in(const CheckRecord& rec, const std::vector<std::string>& site);

}  // namespace gangway::fleet
