// `gangway doctor`: is this node's gangway installation one SLURM will load?
// SLURM refuses a plugin built for another major.minor release and says only
// "Incompatible Slurm plugin version" (at verbose level), so this command
// compares, and names what to rebuild: the running SLURM (srun/sinfo/slurmd
// --version), the SLURM the plugin .so was built for (its plugin_version
// symbol, read from the ELF file: the plugin is linked -z now and its spank_*
// symbols only resolve inside SLURM, so it cannot be dlopen'ed here), the
// SLURM this command was built for, and the plugstack.conf line.
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../lib/base/text.hpp"
#include "../lib/conf/plugstack_check.hpp"
#include "../lib/conf/plugstack_text.hpp"
#include "../lib/conf/plugstack_walk.hpp"
#include "../lib/conf/slurm_conf_walk.hpp"
#include "../lib/sys/conf/conf_files.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/run/subprocess.hpp"
#include "../lib/preflight/elf_plugin.hpp"
#include "../lib/preflight/version_text.hpp"
#include "commands.hpp"
#include "config.h"

#ifndef GANGWAY_PLUGIN_DEFAULT
#define GANGWAY_PLUGIN_DEFAULT "/usr/lib/slurm/gangway.so"
#endif

namespace gangway::cli {
using preflight::SlurmVersion;
using preflight::slurm_version_from_number;
using preflight::slurm_version_in;

namespace {

std::string rebuild_hint(const SlurmVersion& running) {
    return "rebuild gangway against SLURM " + running.release() +
           "'s headers (libslurm-dev or slurm-devel " + running.release() +
           ", or ./configure --with-slurm=PREFIX) and reinstall it: contrib/dev/build-deb.sh, "
           "rpmbuild -ba contrib/rpm/gangway.spec, or make install";
}

// At most 256 MiB: a plugin path may name /dev/zero or a huge file (read as
// far as the limit, as before), or a FIFO (not waited on). "" when it cannot
// be read.
std::string read_plugin_file(const std::string& path) {
    sys::ReadOptions o{std::size_t(256) << 20};
    o.over = sys::ReadOptions::Over::Truncate;
    o.regular_only = false;
    auto r = sys::read_file_at(AT_FDCWD, path, o);
    return r.ok() ? std::move(r.text) : std::string();
}

// A command's output, "" when it cannot run or fails: through sys::run_command
// (argv, a deadline, TERM then KILL, a cap). A client without slurm.conf
// looks the controller up in DNS: never wait long for it.
std::string run_capture(const std::vector<std::string>& argv) {
    const auto r = sys::run_command(argv, 5, 64 * 1024);
    return r && r->status == 0 ? r->output : std::string();
}

// What a shared object says about itself, read from the file.
preflight::PluginInfo inspect_plugin(const std::string& path) {
    const std::string f = read_plugin_file(path);
    if (f.empty()) {
        preflight::PluginInfo info;
        info.error = "cannot be read";
        return info;
    }
    return preflight::plugin_info(f);
}

// SLURM's plugstack.conf: PlugStackConfig in slurm.conf or a file it
// includes, else next to slurm.conf. What the Include lines could not reach
// is told as notes (`notes`).
std::string default_plugstack(std::vector<std::string>& notes) {
    const char* env = std::getenv("SLURM_CONF");
    const std::string slurm_conf = env && *env ? env : "/etc/slurm/slurm.conf";
    sys::DiskFiles files;
    const SlurmConf conf = read_slurm_conf(slurm_conf, files);
    for (const auto& m : conf.remarks) notes.push_back("slurm.conf: " + m);
    const std::string named = plugstack_config(conf.text);
    return named.empty() ? dirname_of(slurm_conf) + "/plugstack.conf" : named;
}

struct Report {
    int problems = 0;
    void ok(const std::string& s) { std::printf("ok: %s\n", s.c_str()); }
    void note(const std::string& s) { std::printf("note: %s\n", s.c_str()); }
    void problem(const std::string& s) {
        std::printf("PROBLEM: %s\n", s.c_str());
        ++problems;
    }
    void say(const Remark& m) {
        switch (m.level) {
            case Remark::Level::ok: ok(m.text); break;
            case Remark::Level::note: note(m.text); break;
            case Remark::Level::problem: problem(m.text); break;
        }
    }
};

}  // namespace

std::optional<std::pair<std::string, std::string>> running_slurm_version() {
    // srun and sinfo on login nodes, slurmd on compute nodes (often not on PATH).
    const std::vector<std::vector<std::string>> probes{
        {"srun", "--version"}, {"sinfo", "--version"}, {"slurmd", "-V"}, {"/usr/sbin/slurmd", "-V"}};
    for (const auto& argv : probes) {
        const std::string out = run_capture(argv);
        if (auto v = slurm_version_in(out)) return std::make_pair(v->text(), join(argv, " "));
    }
    return std::nullopt;
}

std::string version_mismatch_warning() {
    const auto built = slurm_version_in(GANGWAY_SLURM_BUILT_FOR);
    const auto running = running_slurm_version();
    if (!built || !running) return {};
    const auto run = slurm_version_in(running->first);
    if (!run || built->same_release(*run)) return {};
    return "gangway: warning: built for SLURM " + built->release() + " but `" + running->second + "` is SLURM " +
           running->first + ": SLURM will refuse the plugin (\"Incompatible Slurm plugin version\"); " +
           rebuild_hint(*run) + "; `gangway doctor` checks the installation";
}

int cmd_doctor(int argc, char** argv) {
    std::string plugin, plugstack;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--plugin" || a == "--plugstack") && i + 1 < argc) {
            (a == "--plugin" ? plugin : plugstack) = argv[++i];
        } else if (a.rfind("--plugin=", 0) == 0) {
            plugin = a.substr(9);
        } else if (a.rfind("--plugstack=", 0) == 0) {
            plugstack = a.substr(12);
        } else if (a == "--help" || a == "-h") {
            std::puts("usage: gangway doctor [--plugin PATH] [--plugstack FILE]\n"
                      "Checks that SLURM will load gangway on this node: the running SLURM release against the\n"
                      "one the plugin and this command were built for, and the plugstack.conf line. Prints one\n"
                      "line per check, PROBLEM: lines saying what to fix; exits 1 if there is a problem.\n"
                      "--plugin    the gangway.so to check (default: the one plugstack.conf loads, else\n"
                      "            " GANGWAY_PLUGIN_DEFAULT ")\n"
                      "--plugstack the plugstack.conf to read (default: PlugStackConfig of $SLURM_CONF or\n"
                      "            /etc/slurm/slurm.conf, else plugstack.conf next to it)");
            return 0;
        } else {
            std::fprintf(stderr, "gangway doctor: unknown option \"%s\"; see `gangway doctor --help`\n", a.c_str());
            return 2;
        }
    }
    Report r;
    const auto built = slurm_version_in(GANGWAY_SLURM_BUILT_FOR);
    r.ok("gangway " PACKAGE_VERSION " command, built for SLURM " GANGWAY_SLURM_BUILT_FOR);

    // 1. The running SLURM.
    std::optional<SlurmVersion> running;
    if (auto rv = running_slurm_version()) {
        running = slurm_version_in(rv->first);
        r.ok("running SLURM " + rv->first + " (" + rv->second + ")");
        if (built && running && !built->same_release(*running))
            r.problem("this gangway command was built for SLURM " + built->release() + " but SLURM " + running->text() +
                      " runs here: " + rebuild_hint(*running));
    } else {
        r.note("no srun, sinfo or slurmd found: cannot tell which SLURM runs here");
    }

    // 2. plugstack.conf.
    if (plugstack.empty()) {
        std::vector<std::string> notes;
        plugstack = default_plugstack(notes);
        for (const auto& n : notes) r.note(n);
    }
    sys::DiskFiles files;
    const PlugstackWalk walk = walk_plugstack(plugstack, files);
    const std::vector<PlugstackLine>& lines = walk.lines;
    for (const auto& m : walk.remarks) r.say(m);
    // Where the walk stopped before any gangway line, "no line loads gangway.so" would be a guess.
    if (walk.complete || !lines.empty())
        for (const auto& m : check_plugstack(plugstack, walk.read.size(), lines,
                                             plugin.empty() ? std::string(GANGWAY_PLUGIN_DEFAULT) : plugin))
            r.say(m);

    // 3. The plugin file.
    plugin = plugin_to_check(plugin, lines, GANGWAY_PLUGIN_DEFAULT);
    const preflight::PluginInfo info = inspect_plugin(plugin);
    if (!info.error.empty()) {
        r.problem(plugin + " " + info.error + ": install gangway's plugin there (make install, or the gangway package)");
    } else {
        const SlurmVersion pv = slurm_version_from_number(*info.plugin_version);
        const std::string what = plugin + " (gangway " + info.gangway_version.value_or("?") + ", built for SLURM " +
                                 pv.text() + ")";
        if (info.plugin_type.value_or("") != "spank")
            r.problem(plugin + " has plugin_type \"" + info.plugin_type.value_or("") + "\", not spank");
        if (running && !pv.same_release(*running))
            r.problem(plugin + " was built for SLURM " + pv.release() + " but SLURM " + running->text() +
                      " runs here: srun and slurmd refuse it (\"Incompatible Slurm plugin version\"); " +
                      rebuild_hint(*running));
        else
            r.ok(what + (running ? ": SLURM " + running->release() + " will load it" : ""));
        if (built && !pv.same_release(*built))
            r.problem("the plugin (SLURM " + pv.release() + ") and this command (SLURM " + built->release() +
                      ") come from different builds: install both from one build");
        else if (info.gangway_version && *info.gangway_version != PACKAGE_VERSION)
            r.note("the plugin is gangway " + *info.gangway_version + ", this command " PACKAGE_VERSION);
    }
    if (r.problems == 0) std::puts("gangway doctor: no problems found");
    else std::printf("gangway doctor: %d problem(s)\n", r.problems);
    return r.problems ? 1 : 0;
}

}  // namespace gangway::cli
