// SLURM's configuration files as they are on this node, for the walks of
// lib/conf (plugstack.conf's includes for `gangway doctor`, slurm.conf's for
// the doctor and the node check).
#pragma once
#include "../../conf/conf_files.hpp"

namespace gangway::sys {

class DiskFiles : public ConfFiles {
public:
    std::vector<std::string> expand(const std::string& pattern) override;
    std::optional<Id> identify(const std::string& path) override;
    // Opened without waiting: a FIFO put in a regular file's place since
    // identify() is refused, never waited on.
    std::optional<Text> read(const std::string& path, std::size_t limit) override;
};

}  // namespace gangway::sys
