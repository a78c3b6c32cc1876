// The doctor's readers (install_probe.hpp).
#include "install_probe.hpp"

#include <fcntl.h>

#include <cstdlib>

#include "../../base/text.hpp"
#include "../../conf/plugstack_text.hpp"
#include "../../conf/slurm_conf_walk.hpp"
#include "../node/file.hpp"
#include "../run/subprocess.hpp"
#include "conf_files.hpp"

namespace gangway::sys {

preflight::PluginInfo inspect_plugin(const std::string& path) {
    ReadOptions o{std::size_t(256) << 20};
    o.over = ReadOptions::Over::Truncate;
    o.regular_only = false;
    auto r = read_file_at(AT_FDCWD, path, o);
    if (!r.ok() || r.text.empty()) {
        preflight::PluginInfo info;
        info.error = "cannot be read";
        return info;
    }
    return preflight::plugin_info(r.text);
}

std::optional<RunningSlurm> running_slurm() {
    const std::vector<std::vector<std::string>> probes{
        {"srun", "--version"}, {"sinfo", "--version"}, {"slurmd", "-V"}, {"/usr/sbin/slurmd", "-V"}};
    for (const auto& argv : probes) {
        const auto r = run_command(argv, 5, 64 * 1024);
        if (!r || r->status != 0) continue;
        if (auto v = preflight::slurm_version_in(r->output)) return RunningSlurm{v->text(), join(argv, " ")};
    }
    return std::nullopt;
}

std::string default_plugstack(std::vector<std::string>& notes) {
    const char* env = std::getenv("SLURM_CONF");
    const std::string slurm_conf = env && *env ? env : "/etc/slurm/slurm.conf";
    DiskFiles files;
    const SlurmConf conf = read_slurm_conf(slurm_conf, files);
    for (const auto& m : conf.remarks) notes.push_back("slurm.conf: " + m);
    const std::string named = plugstack_config(conf.text);
    return named.empty() ? dirname_of(slurm_conf) + "/plugstack.conf" : named;
}

}  // namespace gangway::sys
