// The running job's node agent (watch.hpp).
#include "watch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>

#include "../lib/sys/node/addrs.hpp"
#include "check.hpp"
#include "log.hpp"
#include "state.hpp"

namespace gangway::plugin::watch {
namespace {

struct Agent {
    bool wanted = false;
    std::uint32_t job = 0, uid = 0;
    HangPolicy on_hang = HangPolicy::report;
    pid_t pid = 0;
    int pipe_end = -1;  // the write end: closed, the agent ends
};
Agent& agent() {
    static Agent a;
    return a;
}

std::string number(std::uint64_t v) {
    char b[24];
    return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}

}  // namespace

void prepare(spank_t sp) {
    const Config& site = state().site;
    auto& a = agent();
    a.on_hang = state().cli.on_hang.value_or(HangPolicy::report);
    if (site.watch_s == 0 || site.watch_to.empty() || site.postmortem_dir.empty() || site.postmortem_sample_s == 0 ||
        a.on_hang == HangPolicy::off)
        return;
    std::uint32_t step = 0;
    if (spank_get_item(sp, S_JOB_ID, &a.job) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &a.uid) != ESPANK_SUCCESS)
        return;
    if (step >= 0xfffffff0u) return;  // the batch script, the extern and the interactive step: no ranks
    a.wanted = true;
    if (spank_setenv(sp, "GANGWAY_WATCH_INTERVAL", number(site.watch_s).c_str(), 1) != ESPANK_SUCCESS)
        log_info("watch: cannot set GANGWAY_WATCH_INTERVAL in the job's environment; the ranks report no pace");
}

void start_agent(const std::string& job_dir, std::uint32_t step) {
    auto& a = agent();
    if (!a.wanted || a.pid > 0) return;
    a.wanted = false;  // one try a step
    const Config& site = state().site;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return log_error("watch: no pipe for the node agent; this step is not watched");
    const std::string path = check::launcher_path(site);
    const std::string args[] = {"gangway", "watch-node", "--job-dir", job_dir, "--job", number(a.job), "--step", number(step),
                                "--node", sys::short_host_name(), "--uid", number(a.uid), "--interval", number(site.watch_s),
                                "--to", site.watch_to, "--key", site.watch_key, "--on-hang",
                                hang_policy_name(a.on_hang)};
    char* argv[sizeof args / sizeof args[0] + 1];
    for (std::size_t i = 0; i < sizeof args / sizeof args[0]; ++i) argv[i] = const_cast<char*>(args[i].c_str());
    argv[sizeof args / sizeof args[0]] = nullptr;
    char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    char* envp[] = {path_env, nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, p[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
    const int rc = posix_spawn(&a.pid, path.c_str(), &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    ::close(p[0]);
    if (rc != 0) {
        a.pid = 0;
        ::close(p[1]);
        return log_error("watch: cannot start " + path + " watch-node; this step is not watched");
    }
    a.pipe_end = p[1];
}

void stop() noexcept {
    auto& a = agent();
    if (a.pipe_end >= 0) ::close(a.pipe_end);
    a.pipe_end = -1;
    if (a.pid > 0) ::waitpid(a.pid, nullptr, WNOHANG);  // else slurmstepd's own wait, or init, reaps it
    a.pid = 0;
}

}  // namespace gangway::plugin::watch
