// The installation's verdict (install_rules.hpp).
#include "install_rules.hpp"

namespace gangway {
using preflight::SlurmVersion;
using preflight::slurm_version_from_number;
using preflight::slurm_version_in;

namespace {
Remark ok(std::string s) { return {Remark::Level::ok, std::move(s)}; }
Remark note(std::string s) { return {Remark::Level::note, std::move(s)}; }
Remark problem(std::string s) { return {Remark::Level::problem, std::move(s)}; }

std::optional<SlurmVersion> running_version(const InstallFacts& f) {
    return f.running ? slurm_version_in(f.running->version) : std::nullopt;
}
}  // namespace

std::string rebuild_hint(const SlurmVersion& running) {
    return "rebuild gangway against SLURM " + running.release() +
           "'s headers (libslurm-dev or slurm-devel " + running.release() +
           ", or ./configure --with-slurm=PREFIX) and reinstall it: contrib/dev/build-deb.sh, "
           "rpmbuild -ba contrib/rpm/gangway.spec, or make install";
}

std::vector<Remark> running_slurm_remarks(const InstallFacts& f) {
    std::vector<Remark> out;
    if (!f.running) {
        out.push_back(note("no srun, sinfo or slurmd found: cannot tell which SLURM runs here"));
        return out;
    }
    out.push_back(ok("running SLURM " + f.running->version + " (" + f.running->probe + ")"));
    const auto built = slurm_version_in(f.built_for);
    const auto running = running_version(f);
    if (built && running && !built->same_release(*running))
        out.push_back(problem("this gangway command was built for SLURM " + built->release() + " but SLURM " +
                              running->text() + " runs here: " + rebuild_hint(*running)));
    return out;
}

std::vector<Remark> plugin_file_remarks(const InstallFacts& f) {
    std::vector<Remark> out;
    const preflight::PluginInfo& info = f.plugin_info;
    if (!info.error.empty() || !info.plugin_version) {
        out.push_back(problem(f.plugin + " " + (info.error.empty() ? "has no plugin_version" : info.error) +
                              ": install gangway's plugin there (make install, or the gangway package)"));
        return out;
    }
    const auto built = slurm_version_in(f.built_for);
    const auto running = running_version(f);
    const SlurmVersion pv = slurm_version_from_number(*info.plugin_version);
    if (info.plugin_type.value_or("") != "spank")
        out.push_back(problem(f.plugin + " has plugin_type \"" + info.plugin_type.value_or("") + "\", not spank"));
    if (running && !pv.same_release(*running))
        out.push_back(problem(f.plugin + " was built for SLURM " + pv.release() + " but SLURM " + running->text() +
                              " runs here: srun and slurmd refuse it (\"Incompatible Slurm plugin version\"); " +
                              rebuild_hint(*running)));
    else
        out.push_back(ok(f.plugin + " (gangway " + info.gangway_version.value_or("?") + ", built for SLURM " + pv.text() +
                         ")" + (running ? ": SLURM " + running->release() + " will load it" : "")));
    if (built && !pv.same_release(*built))
        out.push_back(problem("the plugin (SLURM " + pv.release() + ") and this command (SLURM " + built->release() +
                              ") come from different builds: install both from one build"));
    else if (info.gangway_version && *info.gangway_version != f.package_version)
        out.push_back(note("the plugin is gangway " + *info.gangway_version + ", this command " + f.package_version));
    return out;
}

std::string version_mismatch_text(const std::string& built_for, const std::optional<RunningSlurm>& running) {
    const auto built = slurm_version_in(built_for);
    if (!built || !running) return {};
    const auto run = slurm_version_in(running->version);
    if (!run || built->same_release(*run)) return {};
    return "gangway: warning: built for SLURM " + built->release() + " but `" + running->probe + "` is SLURM " +
           running->version + ": SLURM will refuse the plugin (\"Incompatible Slurm plugin version\"); " +
           rebuild_hint(*run) + "; `gangway doctor` checks the installation";
}

}  // namespace gangway
