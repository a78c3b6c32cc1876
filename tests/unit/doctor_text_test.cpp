// `gangway doctor`'s pure half: SLURM versions (lib/preflight/version_text),
// plugstack.conf and slurm.conf as text (lib/conf/plugstack_text) and the
// verdict on the plugstack lines (lib/conf/plugstack_check).
#include "catch_compat.hpp"

#include "../../lib/conf/install_rules.hpp"
#include "../../lib/conf/plugstack_check.hpp"
#include "../../lib/conf/plugstack_text.hpp"
#include "../../lib/conf/plugstack_walk.hpp"
#include "memory_files.hpp"
#include "../../lib/preflight/version_text.hpp"

using namespace gangway;
using preflight::slurm_version_from_number;
using preflight::slurm_version_in;

TEST_CASE("SLURM versions from its commands' output") {
    auto v = slurm_version_in("slurm 22.05.8\n");
    REQUIRE(v);
    CHECK(v->major == 22);
    CHECK(v->minor == 5);
    CHECK(v->micro == 8);
    CHECK(v->text() == "22.05.8");
    CHECK(v->release() == "22.05");
    CHECK(slurm_version_in("slurm-wlm 23.11.1-1")->text() == "23.11.1");
    // The first complete N.N.N counts; a shorter one before it does not.
    CHECK(slurm_version_in("v2.1 then 20.11.9.2")->text() == "20.11.9");
    CHECK_FALSE(slurm_version_in("slurm 24.05"));
    CHECK_FALSE(slurm_version_in(""));
    CHECK_FALSE(slurm_version_in("22..05.8"));
    // A number starts where digits start: "x122" is 122, never 22.
    CHECK(slurm_version_in("x122.05.8")->major == 122);
    // Numbers are read to 6 digits: a longer first part is no version, a longer last one is cut.
    CHECK_FALSE(slurm_version_in("1234567.1.1"));
    CHECK(slurm_version_in("22.05.1234567")->micro == 123456);
    CHECK(slurm_version_in("22.05.8")->same_release(*slurm_version_in("22.05.2")));
    CHECK_FALSE(slurm_version_in("22.05.8")->same_release(*slurm_version_in("23.05.8")));
    CHECK_FALSE(slurm_version_in("23.02.1")->same_release(*slurm_version_in("23.11.1")));
}

TEST_CASE("SLURM versions from a plugin's plugin_version number") {
    CHECK(slurm_version_from_number(0x170B00).text() == "23.11.0");
    CHECK(slurm_version_from_number(0x160508).text() == "22.05.8");
    CHECK(slurm_version_from_number(0xff170B00).release() == "23.11");  // only the low 24 bits
}

TEST_CASE("the lines of plugstack.conf that load gangway.so or include others") {
    const std::string text =
        "# site plugins\n"
        "required /usr/lib/slurm/gangway.so iface=eth1 pin=off # data network\n"
        "optional other.so\n"
        "include plugstack.conf.d/*.conf\n"
        "include /abs/*.conf\n"
        "include\n"
        "\n"
        "   optional   gangway.so\r\n"
        "required /opt/gangway.so.bak\n"
        "gangway.so\n"
        "#required /x/gangway.so\n";
    const auto l = plugstack_lines(text, "/etc/slurm/plugstack.conf");
    REQUIRE(l.size() == 4);
    CHECK(l[0].file == "/etc/slurm/plugstack.conf");
    CHECK(l[0].line == 2);
    CHECK_FALSE(l[0].include);
    CHECK(l[0].kind == "required");
    CHECK(l[0].path == "/usr/lib/slurm/gangway.so");
    CHECK(l[0].args == std::vector<std::string>{"iface=eth1", "pin=off"});
    CHECK(l[1].include);
    CHECK(l[1].line == 4);
    CHECK(l[1].path == "/etc/slurm/plugstack.conf.d/*.conf");  // relative to the file's directory
    CHECK(l[2].path == "/abs/*.conf");
    CHECK(l[3].line == 8);
    CHECK(l[3].kind == "optional");
    CHECK(l[3].path == "gangway.so");
    CHECK(l[3].args.empty());
    CHECK(plugstack_lines("include x.conf", "plugstack.conf")[0].path == "./x.conf");
    CHECK(plugstack_lines("", "p").empty());
}

TEST_CASE("where slurm.conf puts plugstack.conf") {
    CHECK(plugstack_config("ClusterName=c\nPlugStackConfig = /etc/slurm/ps.conf # ours\n") == "/etc/slurm/ps.conf");
    CHECK(plugstack_config("plugstackconfig=/a\nPlugStackConfig=/b\n") == "/a");
    CHECK(plugstack_config("#PlugStackConfig=/b\nPlugStackConfig=\n") == "");
    CHECK(plugstack_config("") == "");
    CHECK(dirname_of("/etc/slurm/slurm.conf") == "/etc/slurm");
    CHECK(dirname_of("/slurm.conf") == "/");
    CHECK(dirname_of("slurm.conf") == ".");
}

namespace {

PlugstackLine line(const std::string& file, int n, const std::string& kind, const std::string& path,
                   std::vector<std::string> args = {}) {
    return {file, n, false, kind, path, std::move(args)};
}

std::vector<std::string> texts(const std::vector<Remark>& rs, Remark::Level level) {
    std::vector<std::string> out;
    for (const auto& r : rs)
        if (r.level == level) out.push_back(r.text);
    return out;
}

}  // namespace

TEST_CASE("plugstack.conf that cannot be read, or loads no gangway.so") {
    auto r = check_plugstack("/etc/slurm/plugstack.conf", 0, {}, "/usr/lib/slurm/gangway.so");
    REQUIRE(r.size() == 1);
    CHECK(r[0].level == Remark::Level::problem);
    CHECK(r[0].text ==
          "/etc/slurm/plugstack.conf does not exist or cannot be read: create it with the line `required "
          "/usr/lib/slurm/gangway.so` (or `include plugstack.conf.d/*.conf`) on login and compute nodes");
    r = check_plugstack("/etc/slurm/plugstack.conf", 1, {}, "/p/gangway.so");
    CHECK(r.at(0).text ==
          "no line of /etc/slurm/plugstack.conf loads gangway.so: add `required /p/gangway.so [iface=...]` (or `include "
          "/etc/slurm/plugstack.conf.d/*.conf`)");
    CHECK_THAT(check_plugstack("/etc/slurm/plugstack.conf", 3, {}, "/p/gangway.so").at(0).text,
               Catch::Matchers::StartsWith("no line of /etc/slurm/plugstack.conf or its includes loads gangway.so"));
}

TEST_CASE("a plugstack line: required once, absolute, with arguments the plugin takes") {
    auto r = check_plugstack("p", 1, {line("p", 3, "required", "/x/gangway.so", {"iface=eth1", "pin=off"})}, "-");
    REQUIRE(r.size() == 1);
    CHECK(r[0].level == Remark::Level::ok);
    CHECK(r[0].text == "p:3 loads /x/gangway.so (required); iface=eth1 pin=off");
    CHECK(check_plugstack("p", 1, {line("p", 3, "required", "/x/gangway.so")}, "-").at(0).text ==
          "p:3 loads /x/gangway.so (required)");

    r = check_plugstack("p", 1, {line("p", 1, "optional", "gangway.so")}, "-");
    CHECK(texts(r, Remark::Level::problem) ==
          std::vector<std::string>{"p:1 loads gangway.so as optional: SLURM then ignores its failures and tasks start without "
                                   "their variables; use required"});
    CHECK(texts(r, Remark::Level::note) ==
          std::vector<std::string>{"p:1: gangway.so is relative: SLURM looks for it in its PluginDir"});
    CHECK(texts(r, Remark::Level::ok).size() == 1);

    r = check_plugstack("p", 1, {line("p", 1, "requird", "/x/gangway.so")}, "-");
    CHECK(texts(r, Remark::Level::problem) == std::vector<std::string>{"p:1: \"requird\" is not required or optional"});

    r = check_plugstack("p", 1, {line("p", 1, "required", "/x/gangway.so", {"bogus=1"})}, "-");
    REQUIRE(texts(r, Remark::Level::problem).size() == 1);
    CHECK_THAT(texts(r, Remark::Level::problem)[0], Catch::Matchers::StartsWith("p:1: ") && Catch::Matchers::ContainsSubstring("bogus"));
    CHECK(texts(r, Remark::Level::ok).empty());

    r = check_plugstack("p", 2, {line("p", 1, "required", "/x/gangway.so"), line("p.d/a.conf", 4, "required", "/x/gangway.so")}, "-");
    CHECK(r.at(0).text == "gangway.so is loaded 2 times (p:1, p.d/a.conf:4): keep one line");
    CHECK(texts(r, Remark::Level::ok).size() == 2);
}

TEST_CASE("the plugin file the doctor inspects") {
    const std::vector<PlugstackLine> abs{line("p", 1, "required", "/opt/gangway.so")};
    const std::vector<PlugstackLine> rel{line("p", 1, "required", "gangway.so")};
    CHECK(plugin_to_check("/mine.so", abs, "/default.so") == "/mine.so");
    CHECK(plugin_to_check("", abs, "/default.so") == "/opt/gangway.so");
    CHECK(plugin_to_check("", rel, "/default.so") == "/default.so");
    CHECK(plugin_to_check("", {}, "/default.so") == "/default.so");
}

namespace {

using test::MemoryFiles;

const std::string kLoad = "required /usr/lib/slurm/gangway.so\n";

}  // namespace

TEST_CASE("plugstack includes: every file read once, cycles told in one line (issue 23 item 9)") {
    // Five files each including all five, itself too: the doctor read 5^8
    // files and took 18 s before; now each file once.
    MemoryFiles fs;
    fs.files["/etc/slurm/plugstack.conf"] = "include plugstack.conf.d/*.conf\n";
    for (int i = 1; i <= 5; ++i) fs.files["/etc/slurm/plugstack.conf.d/f" + std::to_string(i) + ".conf"] =
        "include /etc/slurm/plugstack.conf.d/*.conf\n" + (i == 3 ? kLoad : "");
    const auto w = walk_plugstack("/etc/slurm/plugstack.conf", fs);
    CHECK(w.complete);
    CHECK(w.read.size() == 6);
    CHECK(fs.reads == 6);
    CHECK(fs.identifies == 1 + 5 + 5 * 5);  // conf, its 5 matches, each file's 5 matches
    REQUIRE(w.lines.size() == 1);
    CHECK(w.lines[0].file == "/etc/slurm/plugstack.conf.d/f3.conf");
    CHECK(w.lines[0].line == 2);
    REQUIRE(w.remarks.size() == 1);
    CHECK(w.remarks[0].level == Remark::Level::problem);
    CHECK(w.remarks[0].text ==
          "/etc/slurm/plugstack.conf.d/f1.conf:1 includes /etc/slurm/plugstack.conf.d/f1.conf, which is being read: a "
          "cycle (/etc/slurm/plugstack.conf.d/f1.conf -> /etc/slurm/plugstack.conf.d/f1.conf); SLURM does not guard "
          "against it and reads the files over and over until srun and slurmstepd run out of open files and fail; "
          "remove the include (and 14 more such includes)");

    // Twenty files, each including all twenty: linear in the includes.
    MemoryFiles big;
    big.files["/p.conf"] = "include /d/*.conf\n";
    for (int i = 0; i < 20; ++i) big.files["/d/" + std::to_string(i) + ".conf"] = "include /d/*.conf\ninclude /d/*.conf\n";
    const auto b = walk_plugstack("/p.conf", big);
    CHECK(b.read.size() == 21);
    CHECK(big.reads == 21);
    CHECK(big.identifies == 1 + 20 + 20 * 2 * 20);
}

TEST_CASE("plugstack includes: a file included twice, or through a link, is read once") {
    MemoryFiles fs;
    fs.files["/p.conf"] = "include /a.conf\ninclude /b.conf\n";
    fs.files["/a.conf"] = "include /c.conf\n";
    fs.files["/b.conf"] = "include /c-link.conf\n";
    fs.files["/c.conf"] = kLoad;
    fs.links["/c-link.conf"] = "/c.conf";
    const auto w = walk_plugstack("/p.conf", fs);
    CHECK(w.read == std::vector<std::string>{"/p.conf", "/a.conf", "/c.conf", "/b.conf"});
    CHECK(w.lines.size() == 1);
    REQUIRE(w.remarks.size() == 1);
    CHECK(w.remarks[0].level == Remark::Level::note);
    CHECK(w.remarks[0].text ==
          "/b.conf:1 includes /c-link.conf again (first read through /a.conf:1): SLURM reads it twice and refuses its "
          "plugins the second time; include it once");
    // plugstack.conf including itself by another name.
    fs.files["/c.conf"] = "include /p.conf\n";
    const auto self = walk_plugstack("/p.conf", fs);
    REQUIRE(self.remarks.size() == 1);
    CHECK_THAT(self.remarks[0].text, Catch::Matchers::StartsWith("/c.conf:1 includes /p.conf, which is being read: a "
                                                                 "cycle (/p.conf -> /a.conf -> /c.conf -> /p.conf)"));
    // Missing files and empty globs are skipped, as SLURM skips them.
    MemoryFiles none;
    none.files["/p.conf"] = "include /nowhere/*.conf\ninclude /missing.conf\n" + kLoad;
    const auto n = walk_plugstack("/p.conf", none);
    CHECK(n.remarks.empty());
    CHECK(n.lines.size() == 1);
    CHECK(walk_plugstack("/absent.conf", none).read.empty());
}

TEST_CASE("plugstack includes: a budget of files, bytes and include paths") {
    // A glob matching 300 files: 256 read, then one problem line.
    MemoryFiles many;
    many.files["/p.conf"] = "include /d/*\n";
    for (int i = 0; i < 300; ++i) many.files["/d/" + std::to_string(1000 + i)] = "# nothing\n";
    auto w = walk_plugstack("/p.conf", many);
    CHECK_FALSE(w.complete);
    CHECK(w.read.size() == 256);
    CHECK(many.reads == 256);
    REQUIRE(w.remarks.size() == 1);
    CHECK(w.remarks[0].level == Remark::Level::problem);
    CHECK(w.remarks[0].text ==
          "plugstack.conf and its includes go past 256 files (at /d/1255): the doctor stopped reading there and did "
          "not check the rest, which SLURM reads at every job step; keep plugstack.conf to a few small files");

    // Bytes: all files together, and the file that goes past is not read further.
    MemoryFiles large;
    large.files["/p.conf"] = "include /big\n" + kLoad;
    large.files["/big"] = std::string(5u << 20, '#');
    w = walk_plugstack("/p.conf", large);
    CHECK(large.bytes_read <= (4u << 20) + 64);
    REQUIRE(w.remarks.size() == 1);
    CHECK_THAT(w.remarks[0].text, Catch::Matchers::StartsWith("plugstack.conf and its includes go past 4 MiB (at /big)"));
    CHECK(w.lines.empty());  // the walk stopped before the line after the include

    // Include lines that each match nothing still count.
    MemoryFiles lines;
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "include /none" + std::to_string(i) + "/*\n";
    lines.files["/p.conf"] = text;
    w = walk_plugstack("/p.conf", lines, {.files = 256, .bytes = 4u << 20, .paths = 100});
    REQUIRE(w.remarks.size() == 1);
    CHECK_THAT(w.remarks[0].text, Catch::Matchers::StartsWith("plugstack.conf and its includes go past 100 include paths "
                                                              "(at /p.conf:101)"));
}

// lib/conf/install_rules: the running SLURM against the builds' releases.
namespace {
InstallFacts install_facts(const char* running, std::uint32_t plugin_number) {
    InstallFacts f;
    f.built_for = "22.05.8";
    f.package_version = "1.0";
    if (running) f.running = RunningSlurm{running, "srun --version"};
    f.plugin = "/usr/lib/slurm/gangway.so";
    f.plugin_info.plugin_version = plugin_number;
    f.plugin_info.plugin_type = "spank";
    f.plugin_info.gangway_version = "1.0";
    return f;
}
int problems(const std::vector<Remark>& rs) {
    int n = 0;
    for (const auto& r : rs) n += r.level == Remark::Level::problem;
    return n;
}
}  // namespace

TEST_CASE("the installation's verdict: one build, the running release") {
    const auto same = install_facts("22.05.11", 0x160508);
    CHECK(problems(running_slurm_remarks(same)) == 0);
    CHECK(problems(plugin_file_remarks(same)) == 0);
    CHECK(plugin_file_remarks(same).front().text.find("SLURM 22.05 will load it") != std::string::npos);
    CHECK(version_mismatch_text(same.built_for, same.running).empty());

    // Another release runs: the command, the plugin and the warning say what to rebuild.
    const auto other = install_facts("24.11.1", 0x160508);
    CHECK(problems(running_slurm_remarks(other)) == 1);
    const auto pr = plugin_file_remarks(other);
    REQUIRE(problems(pr) == 1);
    CHECK(pr.front().text.find("Incompatible Slurm plugin version") != std::string::npos);
    CHECK(pr.front().text.find("rebuild gangway against SLURM 24.11") != std::string::npos);
    CHECK(version_mismatch_text(other.built_for, other.running).find("`srun --version` is SLURM 24.11.1") !=
          std::string::npos);

    // The plugin from another build than the command's.
    CHECK(problems(plugin_file_remarks(install_facts("24.11.1", 0x180b01))) == 1);
    CHECK(problems(plugin_file_remarks(install_facts(nullptr, 0x180b01))) == 1);

    // Unknown running SLURM: a note, no problem, no warning.
    const auto unknown = install_facts(nullptr, 0x160508);
    REQUIRE(running_slurm_remarks(unknown).size() == 1);
    CHECK(running_slurm_remarks(unknown).front().level == Remark::Level::note);
    CHECK(version_mismatch_text(unknown.built_for, unknown.running).empty());

    // An unreadable plugin, and one of another type.
    auto bad = same;
    bad.plugin_info = {};
    bad.plugin_info.error = "cannot be read";
    REQUIRE(problems(plugin_file_remarks(bad)) == 1);
    CHECK(plugin_file_remarks(bad).front().text == "/usr/lib/slurm/gangway.so cannot be read: install gangway's plugin "
                                                   "there (make install, or the gangway package)");
    auto typed = same;
    typed.plugin_info.plugin_type = "auth";
    CHECK(problems(plugin_file_remarks(typed)) == 1);
    auto newer = same;
    newer.plugin_info.gangway_version = "1.1";
    CHECK(plugin_file_remarks(newer).back().level == Remark::Level::note);
}
