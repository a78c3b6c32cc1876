// What `gangway doctor` reads on this node for lib/conf/install_rules: the
// plugin file's ELF, which SLURM runs (its commands' --version), and where
// plugstack.conf is. Each reader is bounded; none fails the command.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../../conf/install_rules.hpp"

namespace gangway::sys {

// What a shared object says about itself, read from the file (the plugin is
// linked -z now and its spank_* symbols only resolve inside SLURM, so it
// cannot be dlopen'ed here). At most 256 MiB: a path may name /dev/zero or a
// huge file (read as far as the limit), or a FIFO (not waited on).
preflight::PluginInfo inspect_plugin(const std::string& path);

// srun and sinfo on login nodes, slurmd on compute nodes (often not on
// PATH): the first that prints a version. Each run is bounded (5 s: a client
// without slurm.conf looks the controller up in DNS).
std::optional<RunningSlurm> running_slurm();

// SLURM's plugstack.conf: PlugStackConfig in slurm.conf ($SLURM_CONF, else
// /etc/slurm/slurm.conf) or a file it includes, else next to slurm.conf.
// What the Include lines could not reach is told in `notes`.
std::string default_plugstack(std::vector<std::string>& notes);

}  // namespace gangway::sys
