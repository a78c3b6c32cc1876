// `gangway doctor`: is this node's gangway installation one SLURM will load?
// Parses its options and prints the remarks: the readers are
// lib/sys/conf/install_probe (the running SLURM, the plugin's ELF,
// plugstack.conf's place), the rules lib/conf/install_rules and
// lib/conf/plugstack_check.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "../lib/conf/install_rules.hpp"
#include "../lib/conf/plugstack_check.hpp"
#include "../lib/conf/plugstack_walk.hpp"
#include "../lib/sys/conf/conf_files.hpp"
#include "../lib/sys/conf/install_probe.hpp"
#include "commands.hpp"
#include "config.h"

#ifndef GANGWAY_PLUGIN_DEFAULT
#define GANGWAY_PLUGIN_DEFAULT "/usr/lib/slurm/gangway.so"
#endif

namespace gangway::cli {

namespace {

struct Report {
    int problems = 0;
    void say(const Remark& m) {
        switch (m.level) {
            case Remark::Level::ok: std::printf("ok: %s\n", m.text.c_str()); break;
            case Remark::Level::note: std::printf("note: %s\n", m.text.c_str()); break;
            case Remark::Level::problem:
                std::printf("PROBLEM: %s\n", m.text.c_str());
                ++problems;
                break;
        }
    }
    void say(const std::vector<Remark>& ms) {
        for (const auto& m : ms) say(m);
    }
};

}  // namespace

std::string version_mismatch_warning() {
    return version_mismatch_text(GANGWAY_SLURM_BUILT_FOR, sys::running_slurm());
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
    InstallFacts facts;
    facts.built_for = GANGWAY_SLURM_BUILT_FOR;
    facts.package_version = PACKAGE_VERSION;
    r.say({Remark::Level::ok, "gangway " PACKAGE_VERSION " command, built for SLURM " GANGWAY_SLURM_BUILT_FOR});

    // 1. The running SLURM.
    facts.running = sys::running_slurm();
    r.say(running_slurm_remarks(facts));

    // 2. plugstack.conf.
    if (plugstack.empty()) {
        std::vector<std::string> notes;
        plugstack = sys::default_plugstack(notes);
        for (const auto& n : notes) r.say({Remark::Level::note, n});
    }
    sys::DiskFiles files;
    const PlugstackWalk walk = walk_plugstack(plugstack, files);
    r.say(walk.remarks);
    // Where the walk stopped before any gangway line, "no line loads gangway.so" would be a guess.
    if (walk.complete || !walk.lines.empty())
        r.say(check_plugstack(plugstack, walk.read.size(), walk.lines,
                              plugin.empty() ? std::string(GANGWAY_PLUGIN_DEFAULT) : plugin));

    // 3. The plugin file.
    facts.plugin = plugin_to_check(plugin, walk.lines, GANGWAY_PLUGIN_DEFAULT);
    facts.plugin_info = sys::inspect_plugin(facts.plugin);
    r.say(plugin_file_remarks(facts));
    if (r.problems == 0) std::puts("gangway doctor: no problems found");
    else std::printf("gangway doctor: %d problem(s)\n", r.problems);
    return r.problems ? 1 : 0;
}

}  // namespace gangway::cli
