// `gangway doctor`'s verdict on the installation (SLURM refuses a plugin
// built for another major.minor release and says only "Incompatible Slurm
// plugin version", at verbose level): which SLURM runs here against the one
// the plugin and the command were built for, and what to rebuild. Plain
// facts in (what lib/sys/conf/install_probe read), remarks out; the doctor
// prints them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../preflight/elf_plugin.hpp"
#include "../preflight/version_text.hpp"
#include "plugstack_check.hpp"

namespace gangway {

// The running SLURM, and the command that told it ("srun --version").
struct RunningSlurm {
    std::string version;  // as the command printed it
    std::string probe;
};

// What the doctor knows. `built`: GANGWAY_SLURM_BUILT_FOR, the command's
// own; `plugin`: the file inspected and what its ELF says.
struct InstallFacts {
    std::string built_for;
    std::string package_version;
    std::optional<RunningSlurm> running;
    std::string plugin;
    preflight::PluginInfo plugin_info;
};

// What to do when releases differ: rebuild against the running one's headers.
std::string rebuild_hint(const preflight::SlurmVersion& running);

// The remarks on the running SLURM (the first check) and on the plugin file
// (the third); plugstack.conf's are check_plugstack's.
std::vector<Remark> running_slurm_remarks(const InstallFacts& f);
std::vector<Remark> plugin_file_remarks(const InstallFacts& f);

// The one-line warning every command prints when the running SLURM is not
// the one it was built for; "" when they agree or either is unknown.
std::string version_mismatch_text(const std::string& built_for, const std::optional<RunningSlurm>& running);

}  // namespace gangway
