// sys::Scontrol, gangway's one SLURM client, against a stand-in scontrol
// (GANGWAY_SCONTROL, as the script tests and the Epilog helper use it): each
// call's argv exactly (no shell: a reason is one argument whatever it holds),
// its failures named, and its deadline. sacctmgr likewise (GANGWAY_SACCTMGR),
// and where the post-mortem's line goes (set_job_line): slurmctld while it
// takes it, else slurmdbd's record, else nowhere, said. And the drain
// spool's writer.
#include "catch_compat.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "../../lib/slurm/scontrol_text.hpp"
#include "../../lib/sys/postmortem/admin_comment.hpp"
#include "../../lib/sys/slurm/drain_spool.hpp"
#include "../../lib/sys/slurm/scontrol.hpp"
#include "temp_dir.hpp"

using namespace gangway;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

// A stand-in scontrol (or `name`) in `dir`: appends each argument on a line of its own,
// then "--", to dir/argv, then runs `then` (its answer).
std::string fake_scontrol(const std::filesystem::path& dir, const std::string& then, const char* name = "scontrol") {
    const auto path = dir / name;
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
    Env e("GANGWAY_SCONTROL", fake_scontrol(t.path, "true"));
    const auto s = sys::scontrol_client(30);

    REQUIRE(sys::requeue_job(s, "42"));
    REQUIRE(sys::exclude_nodes(s, "42", "node[03,10]"));
    REQUIRE(sys::show_node(s, "node10"));
    const std::string reason = "gpu 3: xid 79; $(touch pwned) `id` 'x'";
    REQUIRE(sys::drain_node(s, "node10", reason));
    REQUIRE(sys::resume_node(s, "node10"));
    CHECK(test::file_text(t.path / "argv") ==
          "requeue\n42\n--\n"
          "update\nJobId=42\nExcNodeList=node[03,10]\n--\n"
          "show\nnode\nnode10\n--\n"
          "update\nNodeName=node10\nState=DRAIN\nReason=" + reason + "\n--\n"
          "update\nNodeName=node10\nState=RESUME\n--\n");
    CHECK(!std::filesystem::exists("pwned"));
}

TEST_CASE("squeue client: a job's view and AdminComment from SLURM's own fields, as argv", "[scontrol][slurm]") {
    test::TempDir t;
    Env e("GANGWAY_SQUEUE", fake_scontrol(t.path,
                                          "case \"$*\" in *admin_comment*) printf '%-1024s\\n' 'gangway: job 42 line';;"
                                          " *) echo '42|RUNNING|1000|node[08,11]|node10|node08';; esac",
                                          "squeue"));
    const auto s = sys::scontrol_client(30);
    CHECK(s.squeue == (t.path / "squeue").string());
    const auto v = sys::job_view(s, "42");
    REQUIRE(v);
    CHECK(v->id == 42u);
    CHECK(v->state == slurm::JobState::running);
    CHECK(v->uid == 1000u);
    CHECK(v->nodes == "node[08,11]");
    CHECK(v->excluded == "node10");
    const auto c = sys::job_admin_comment(s, "42");
    REQUIRE(c);
    CHECK(*c == "gangway: job 42 line");
    const auto mine = sys::jobs_of_user(s, 1000);
    REQUIRE(mine);
    CHECK(mine->size() == 1);
    CHECK(test::file_text(t.path / "argv") ==
          "--noheader\n--states=all\n--jobs=42\n--format=%A|%T|%U|%N|%x|%B\n--\n"
          "--noheader\n--states=all\n--jobs=42\n--Format=admin_comment:1024\n--\n"
          "--noheader\n--states=all\n--user=1000\n--format=%A|%T|%U|%N|%x|%B\n--\n");
    // Another job's line only: no view of job 43; not a job id: squeue is not asked.
    const auto other = sys::job_view(s, "43");
    REQUIRE(!other);
    CHECK(other.error() == "squeue -j 43 printed no line of job 43");
    CHECK(!sys::job_view(s, "43 -u 0"));
}

TEST_CASE("squeue client: unknown job and output not in the format are Failures naming the call", "[scontrol][slurm]") {
    test::TempDir t;
    {
        Env e("GANGWAY_SQUEUE", fake_scontrol(t.path, "echo 'slurm_load_jobs error: Invalid job id specified'; exit 1", "squeue"));
        const auto v = sys::job_view(sys::scontrol_client(30), "42");
        REQUIRE(!v);
        CHECK_THAT(v.error(), StartsWith("squeue --noheader --states=all --jobs=42 --format=%A|%T|%U|%N|%x|%B failed (exit 1): slurm_load_jobs error"));
    }
    Env e("GANGWAY_SQUEUE", fake_scontrol(t.path, "echo 'JobId=42 JobName=x NodeList=n9'", "squeue2"));
    const auto v = sys::job_view(sys::scontrol_client(30), "42");
    REQUIRE(!v);
    CHECK_THAT(v.error(), StartsWith("squeue -j 42: squeue printed 1 fields, not 6, in \"JobId=42 JobName=x NodeList=n9\""));
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

TEST_CASE("scontrol show config: a key's value, whole", "[scontrol]") {
    const std::string text =
        "Configuration data as of 2026-11-27T22:00:00\n"
        "AccountingStorageBackupHost = (null)\n"
        "AccountingStorageTypeX  = nothing\n"
        "AccountingStorageType   = accounting_storage/slurmdbd\n"
        "AccountingStoreFlags    = (null)\n"
        "ClusterName             = gangway cluster  \n";
    CHECK(scontrol_config_field(text, "AccountingStorageType") == "accounting_storage/slurmdbd");
    CHECK(scontrol_config_field(text, "ClusterName") == "gangway cluster");
    CHECK(scontrol_config_field(text, "AccountingStorageBackupHost").empty());
    CHECK(scontrol_config_field(text, "AccountingStorage").empty());
    CHECK(scontrol_config_field(text, "Missing").empty());
    CHECK(scontrol_config_field("", "ClusterName").empty());
}

TEST_CASE("sacctmgr client: GANGWAY_SACCTMGR names the program; the line is one argument", "[scontrol]") {
    ::unsetenv("GANGWAY_SACCTMGR");
    CHECK(sys::sacctmgr_client(7).path == "sacctmgr");
    CHECK(sys::sacctmgr_client(7).timeout_s == 7);
    test::TempDir t;
    const auto path = t.path / "sacctmgr";
    std::ofstream(path) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >>" << (t.path / "argv").string()
                        << "\necho ' Modified jobs...'\n";
    ::chmod(path.c_str(), 0755);
    Env e("GANGWAY_SACCTMGR", path.string());
    const std::string line = "gangway: job 42 step 0 stopped by n2 (rank 3, local 1): killed by SIGKILL at 12:03:05.210; "
                             "'q' \"dq\" $(touch pwned) a=b,c";
    REQUIRE(sys::set_accounting_admin_comment(sys::sacctmgr_client(30), "42", line));
    CHECK(test::file_text(t.path / "argv") == "-i\nmodify\njob\nwhere\njobid=42\nset\nAdminComment=" + line + "\n");
    CHECK(!std::filesystem::exists("pwned"));
}

namespace {

// SLURM as serve meets it after a job's end, in stand-ins: scontrol takes an
// AdminComment only while dir/pending exists (else "Job has already
// finished", exit 1) and answers `show config` with dir/storage's
// AccountingStorageType; sacctmgr refuses (slurmdbd has no record of the
// job) until it has been called dir/late times, then takes it. Both append
// their calls to dir/calls.
struct FinishedJob {
    test::TempDir t;
    Env scontrol{"GANGWAY_SCONTROL", write("scontrol", R"SH(case "$1" in
  update) [ -e "$D/pending" ] && exit 0; echo "slurm_update error: Job has already finished"; exit 1 ;;
  show) echo "AccountingStorageHost   = dbd"; echo "AccountingStorageType   = $(cat "$D/storage")"; exit 0 ;;
esac
exit 2)SH")};
    Env sacctmgr{"GANGWAY_SACCTMGR", write("sacctmgr", R"SH(n=$(grep -c '^sacctmgr' "$D/calls"); [ "$n" -gt "$(cat "$D/late")" ] && exit 0
echo " Nothing modified"; exit 1)SH")};
    explicit FinishedJob(const std::string& storage, int late = 0) {
        std::ofstream(t.path / "storage") << storage << "\n";
        std::ofstream(t.path / "late") << late << "\n";
    }
    std::string write(const std::string& name, const std::string& body) {
        const auto path = t.path / name;
        std::ofstream(path) << "#!/bin/bash\nD=" << t.path.string() << "\necho \"" << name << " $*\" >>\"$D/calls\"\n" << body
                            << "\n";
        ::chmod(path.c_str(), 0755);
        return path.string();
    }
    std::string calls() const { return test::file_text(t.path / "calls"); }
};

const std::string kLine = "gangway: job 42 step 0 stopped by n2 (rank 3, local 1): killed by SIGKILL at 12:03:05.210";

}  // namespace

TEST_CASE("the post-mortem's line: slurmctld's while it takes it (a requeued job, pending)", "[scontrol][admin-comment]") {
    FinishedJob slurm("accounting_storage/slurmdbd");
    std::ofstream(slurm.t.path / "pending");
    std::vector<std::string> said;
    CHECK(sys::postmortem::set_job_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                        [&](const std::string& l) { said.push_back(l); }) == sys::postmortem::LinePlace::slurmctld);
    CHECK(slurm.calls() == "scontrol update JobId=42 AdminComment=" + kLine + "\n");
    CHECK(said.empty());
}

TEST_CASE("the post-mortem's line: a finished job's goes to slurmdbd's record, asked again until it has the job",
          "[scontrol][admin-comment]") {
    FinishedJob slurm("accounting_storage/slurmdbd", 2);
    std::vector<std::string> said;
    CHECK(sys::postmortem::set_job_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                        [&](const std::string& l) { said.push_back(l); }, {5, 0}) ==
          sys::postmortem::LinePlace::accounting);
    const std::string modify = "sacctmgr -i modify job where jobid=42 set AdminComment=" + kLine + "\n";
    CHECK(slurm.calls() == "scontrol update JobId=42 AdminComment=" + kLine + "\nscontrol show config\n" + modify + modify + modify);
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0], ContainsSubstring("sacct -j 42 -o AdminComment, at try 3"));
}

TEST_CASE("the post-mortem's line: slurmdbd never has the job: bounded, said", "[scontrol][admin-comment]") {
    FinishedJob slurm("accounting_storage/slurmdbd", 100);
    std::vector<std::string> said;
    CHECK(sys::postmortem::set_job_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                        [&](const std::string& l) { said.push_back(l); }, {4, 0}) ==
          sys::postmortem::LinePlace::nowhere);
    std::size_t tries = 0;
    for (std::size_t p = 0; (p = slurm.calls().find("\nsacctmgr ", p)) != std::string::npos; ++p) ++tries;
    CHECK(tries == 4);
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "job 42: AdminComment not set: scontrol update JobId=42 AdminComment=... failed (exit 1): slurm_update error: "
                     "Job has already finished; and slurmdbd's record, 4 tries: sacctmgr -i modify job where jobid=42 set "
                     "AdminComment=... failed (exit 1):  Nothing modified");
}

TEST_CASE("the post-mortem's line: a site without slurmdbd: one line says where the line is", "[scontrol][admin-comment]") {
    FinishedJob slurm("accounting_storage/none");
    std::vector<std::string> said;
    CHECK(sys::postmortem::set_job_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                        [&](const std::string& l) { said.push_back(l); }) == sys::postmortem::LinePlace::nowhere);
    CHECK(slurm.calls() == "scontrol update JobId=42 AdminComment=" + kLine + "\nscontrol show config\n");  // no sacctmgr
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0], StartsWith("job 42: the line is only in `gangway postmortem 42` and `gangway fleet stops`: "));
    CHECK_THAT(said[0], ContainsSubstring("AccountingStorageType=accounting_storage/none"));
    CHECK_THAT(said[0], ContainsSubstring("slurmdbd's record of the job would keep it"));
}

TEST_CASE("the post-mortem's line: before a requeue, slurmdbd's record of the run that stopped; without slurmdbd, nothing said",
          "[scontrol][admin-comment]") {
    {
        FinishedJob slurm("accounting_storage/slurmdbd");
        std::vector<std::string> said;
        CHECK(sys::postmortem::set_stopped_run_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                                    [&](const std::string& l) { said.push_back(l); }) ==
              sys::postmortem::LinePlace::accounting);
        CHECK(slurm.calls() == "scontrol show config\nsacctmgr -i modify job where jobid=42 set AdminComment=" + kLine + "\n");
        REQUIRE(said.size() == 1);
        CHECK(said[0] == "job 42: the line is the AdminComment of slurmdbd's record of the run that stopped (sacct -D -j 42 -o AdminComment)");
    }
    FinishedJob slurm("accounting_storage/none");
    std::vector<std::string> said;
    CHECK(sys::postmortem::set_stopped_run_line(sys::scontrol_client(30), sys::sacctmgr_client(30), "42", kLine,
                                                [&](const std::string& l) { said.push_back(l); }) ==
          sys::postmortem::LinePlace::nowhere);
    CHECK(slurm.calls() == "scontrol show config\n");
    CHECK(said.empty());
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
