// sys::Scontrol, gangway's one SLURM client, against a stand-in scontrol
// (GANGWAY_SCONTROL, as the script tests and the Epilog helper use it): each
// call's argv exactly (no shell: a reason is one argument whatever it holds),
// its failures named, and its deadline. And the drain spool's writer.
#include "catch_compat.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "../../lib/sys/slurm/drain_spool.hpp"
#include "../../lib/sys/slurm/scontrol.hpp"
#include "temp_dir.hpp"

using namespace gangway;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

// A stand-in scontrol in `dir`: appends each argument on a line of its own,
// then "--", to dir/argv, then runs `then` (its answer).
std::string fake_scontrol(const std::filesystem::path& dir, const std::string& then) {
    const auto path = dir / "scontrol";
    std::ofstream(path) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >>" << (dir / "argv").string()
                        << "\necho -- >>" << (dir / "argv").string() << "\n"
                        << then << "\n";
    ::chmod(path.c_str(), 0755);
    return path.string();
}

struct Env {
    const char* name;
    Env(const char* n, const std::string& v) : name(n) { ::setenv(n, v.c_str(), 1); }
    ~Env() { ::unsetenv(name); }
};

}  // namespace

TEST_CASE("scontrol client: GANGWAY_SCONTROL names the program", "[scontrol]") {
    ::unsetenv("GANGWAY_SCONTROL");
    CHECK(sys::scontrol_client(7).path == "scontrol");
    CHECK(sys::scontrol_client(7).timeout_s == 7);
    Env e("GANGWAY_SCONTROL", "/opt/slurm/bin/scontrol");
    CHECK(sys::scontrol_client(7).path == "/opt/slurm/bin/scontrol");
}

TEST_CASE("scontrol client: each call's argv, no shell", "[scontrol]") {
    test::TempDir t;
    Env e("GANGWAY_SCONTROL", fake_scontrol(t.path, "echo 'JobId=42 ExcNodeList=node03'"));
    const auto s = sys::scontrol_client(30);

    const auto shown = sys::show_job(s, "42");
    REQUIRE(shown);
    CHECK(*shown == "JobId=42 ExcNodeList=node03\n");
    REQUIRE(sys::requeue_job(s, "42"));
    REQUIRE(sys::exclude_nodes(s, "42", "node[03,10]"));
    REQUIRE(sys::show_node(s, "node10"));
    const std::string reason = "gpu 3: xid 79; $(touch pwned) `id` 'x'";
    REQUIRE(sys::drain_node(s, "node10", reason));
    REQUIRE(sys::resume_node(s, "node10"));
    CHECK(test::file_text(t.path / "argv") ==
          "-o\nshow\njob\n42\n--\n"
          "requeue\n42\n--\n"
          "update\nJobId=42\nExcNodeList=node[03,10]\n--\n"
          "show\nnode\nnode10\n--\n"
          "update\nNodeName=node10\nState=DRAIN\nReason=" + reason + "\n--\n"
          "update\nNodeName=node10\nState=RESUME\n--\n");
    CHECK(!std::filesystem::exists("pwned"));
}

TEST_CASE("scontrol client: a refusal is a Failure naming the call", "[scontrol]") {
    test::TempDir t;
    Env e("GANGWAY_SCONTROL", fake_scontrol(t.path, "echo 'scontrol: error: Requeue of job 42 failed:'; echo 'Only batch jobs' >&2; exit 1"));
    const auto r = sys::requeue_job(sys::scontrol_client(30), "42");
    REQUIRE(!r);
    CHECK(r.error() == "scontrol requeue 42 failed (exit 1): scontrol: error: Requeue of job 42 failed: Only batch jobs");
}

TEST_CASE("scontrol client: a hung slurmctld costs the client's timeout, no more", "[scontrol]") {
    test::TempDir t;
    Env e("GANGWAY_SCONTROL", fake_scontrol(t.path, "while :; do sleep 1; done"));
    const auto r = sys::exclude_nodes(sys::scontrol_client(0.5), "42", "node10");
    REQUIRE(!r);
    CHECK_THAT(r.error(), StartsWith("scontrol update JobId=42 ExcNodeList=node10: "));
    CHECK_THAT(r.error(), ContainsSubstring("did not finish within 0.5 s"));
    CHECK(test::file_text(t.path / "argv") == "update\nJobId=42\nExcNodeList=node10\n--\n");  // it had been called
}

TEST_CASE("drain spool: one request file, whole, readable by the Epilog", "[scontrol]") {
    test::TempDir t;
    CHECK(!sys::drain_spool_exists(""));
    CHECK(!sys::drain_spool_exists((t.path / "none").string()));
    std::ofstream(t.path / "plain") << "x";
    CHECK(!sys::drain_spool_exists((t.path / "plain").string()));
    CHECK(sys::drain_spool_exists(t.path.string()));

    const preflight::DrainRequest d{"node10", "gangway-drain.42.node10", "node=node10\njob=42\nreason=slow\n"};
    const auto w = sys::write_drain_request(t.path.string(), d);
    REQUIRE(w);
    CHECK(*w == d.file);
    CHECK(test::file_text(t.path / d.file) == d.text);
    struct stat st{};
    REQUIRE(::stat((t.path / d.file).c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);

    const auto missing = sys::write_drain_request((t.path / "none").string(), d);
    REQUIRE(!missing);
    CHECK_THAT(missing.error(), ContainsSubstring("drain request"));
}
