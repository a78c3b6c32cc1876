// sys::run_command, gangway's one way to run another program: its output and
// status, its cap, and what happens at the deadline: SIGTERM to the command's
// process group first (a client may let go cleanly), SIGKILL after the grace.
#include "catch_compat.hpp"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "../../lib/sys/run/subprocess.hpp"
#include "temp_dir.hpp"

using namespace gangway;
using Catch::Matchers::ContainsSubstring;

namespace {

// Whether a process still runs: gone, or a zombie waiting for its reaper, is not.
bool running_now(const std::string& pid_text) {
    const std::string pid = pid_text.substr(0, pid_text.find('\n'));
    REQUIRE(!pid.empty());
    std::ifstream in("/proc/" + pid + "/stat");
    if (!in) return false;
    std::string line;
    std::getline(in, line);
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// SIGKILL is delivered, not awaited: a process of the group other than the
// one reaped may take a moment to end. Asked again for up to 10 s (a bound on
// the wait, not a measure: it ends at once when the process is gone).
bool running(const std::string& pid_text) {
    for (int i = 0; i < 1000; ++i) {
        if (!running_now(pid_text)) return false;
        ::usleep(10000);
    }
    return true;
}

}  // namespace

TEST_CASE("run_command: output, status and the cap", "[subprocess]") {
    auto r = sys::run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 30);
    REQUIRE(r);
    CHECK(r->status == 3);
    CHECK_THAT(r->output, ContainsSubstring("out"));
    CHECK_THAT(r->output, ContainsSubstring("err"));

    // More than the cap: the rest is read and dropped, the command still ends well.
    r = sys::run_command({"sh", "-c", "head -c 200000 /dev/zero"}, 30, 1000);
    REQUIRE(r);
    CHECK(r->status == 0);
    CHECK(r->output.size() == 1000);

    const auto none = sys::run_command({"/nonexistent/gangway-no-such-program"}, 30);
    REQUIRE(!none);
    CHECK_THAT(none.error(), ContainsSubstring("cannot run /nonexistent/gangway-no-such-program"));
}

TEST_CASE("run_command: at the deadline a command gets SIGTERM first", "[subprocess]") {
    test::TempDir t;
    const auto flag = t.path / "term";
    const auto ready = t.path / "ready";
    // Traps TERM, says so in a file and exits; SIGKILL straight away would leave no file.
    const std::string script = "trap 'echo term >" + flag.string() + "; exit 0' TERM; : >" + ready.string() +
                               "; while :; do sleep 0.05; done";
    const auto r = sys::run_command({"sh", "-c", script}, 1.5);
    REQUIRE(!r);
    CHECK_THAT(r.error(), ContainsSubstring("did not finish within 1.5 s"));
    REQUIRE(std::filesystem::exists(ready));  // it was running when the deadline came
    CHECK(test::file_text(flag) == "term\n");
}

TEST_CASE("run_command: a command that ignores SIGTERM is killed after the grace, its group too", "[subprocess]") {
    test::TempDir t;
    const auto me = t.path / "pid";
    const auto child = t.path / "child";
    // The shell and a child of its own both ignore TERM (an ignored signal stays
    // ignored across exec); each notes its pid.
    const std::string script = "trap '' TERM; echo $$ >" + me.string() + "; sleep 1000 & echo $! >" + child.string() +
                               "; wait; while :; do sleep 1; done";
    const auto r = sys::run_command({"sh", "-c", script}, 1, 64 * 1024, 0.2);
    REQUIRE(!r);
    CHECK_THAT(r.error(), ContainsSubstring("did not finish within 1 s"));
    // Both were there, and neither is any more: SIGKILL reached the whole group.
    CHECK(!running(test::file_text(me)));
    CHECK(!running(test::file_text(child)));
}

TEST_CASE("run_command: termination signals its caller blocks stay blocked in the command", "[subprocess]") {
    // gangway run's requeue blocks SIGTERM so that the step SLURM tears down
    // does not stop it half done; its scontrol must not die of that SIGTERM
    // either (SLURM 26.05: the requeue was taken, scontrol was killed, and no
    // node was excluded).
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    REQUIRE(pthread_sigmask(SIG_BLOCK, &term, &old) == 0);
    const auto blocked = sys::run_command({"sh", "-c", "kill -TERM $$; echo alive"}, 30);
    REQUIRE(pthread_sigmask(SIG_SETMASK, &old, nullptr) == 0);
    REQUIRE(blocked);
    CHECK(blocked->status == 0);
    CHECK_THAT(blocked->output, ContainsSubstring("alive"));

    // Not blocked by the caller: the command dies of it as before.
    const auto open = sys::run_command({"sh", "-c", "kill -TERM $$; echo alive"}, 30);
    REQUIRE(open);
    CHECK(open->status != 0);
    CHECK(open->output.find("alive") == std::string::npos);
}
