#include "subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../node/fd.hpp"
#include "deadline.hpp"

extern char** environ;

namespace gangway::sys {
namespace {

// posix_spawn's attributes and file actions, destroyed however we leave.
struct Spawn {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    Spawn() {
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_init(&actions);
    }
    ~Spawn() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    Spawn(const Spawn&) = delete;
    Spawn& operator=(const Spawn&) = delete;
};

void reap(pid_t pid) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
}

// Whether the child has ended, leaving it unreaped (WNOWAIT): while it is a
// zombie its pid, and so its process group's id, cannot be reused, and the
// group may still be signalled safely.
bool ended(pid_t pid) {
    siginfo_t info{};
    for (;;) {
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) return info.si_pid == pid;
        if (errno != EINTR) return true;  // not our child any more: nothing to wait for
    }
}

// The deadline has passed: SIGTERM to the group, up to `grace_s` for the
// command to end, then SIGKILL to whatever of the group is left (a child the
// command left behind too), then the command reaped.
Failure stop(pid_t pid, const std::string& name, double timeout_s, double grace_s) {
    ::kill(-pid, SIGTERM);
    const Deadline until = after_s(std::max(0.0, grace_s));
    while (!ended(pid) && Clock::now() < until) ::usleep(5000);
    ::kill(-pid, SIGKILL);
    reap(pid);
    char b[64];
    std::snprintf(b, sizeof b, " did not finish within %g s", timeout_s);
    return Failure{name + b};
}

}  // namespace

Result<CommandOutput> run_command(const std::vector<std::string>& argv, double timeout_s, std::size_t max_bytes, double grace_s) {
    if (argv.empty()) return Failure{"no command to run"};
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Failure{std::string("cannot run ") + argv[0] + ": pipe: " + std::strerror(errno)};
    Fd rd(fds[0]), wr(fds[1]);
    // posix_spawn, not fork: this process may have threads (a stage left
    // behind by its deadline), and spawn runs nothing of ours in the child.
    Spawn sp;
    posix_spawnattr_setflags(&sp.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&sp.attr, 0);
    // The command starts with every signal at its default and none blocked,
    // but for the termination signals its caller blocks: a caller that must
    // finish what it started (the requeue of on_fail.cpp, whose step SLURM
    // tears down as soon as slurmctld takes it) has its command finish it
    // too, rather than die of the SIGTERM the whole step gets.
    sigset_t mine, mask, all;
    pthread_sigmask(SIG_BLOCK, nullptr, &mine);
    sigemptyset(&mask);
    for (const int s : {SIGTERM, SIGINT, SIGHUP})
        if (sigismember(&mine, s) == 1) sigaddset(&mask, s);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&sp.attr, &mask);
    posix_spawnattr_setsigdefault(&sp.attr, &all);
    posix_spawn_file_actions_addopen(&sp.actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&sp.actions, wr.get(), 1);
    posix_spawn_file_actions_adddup2(&sp.actions, wr.get(), 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    if (const int e = ::posix_spawnp(&pid, args[0], &sp.actions, &sp.attr, args.data(), environ); e != 0)
        return Failure{"cannot run " + argv[0] + ": " + std::strerror(e)};
    wr.reset();
    CommandOutput out;
    const Deadline end = after_s(timeout_s);
    char buf[4096];
    for (;;) {
        const int left = ms_left(end);
        if (left == 0) return stop(pid, argv[0], timeout_s, grace_s);
        pollfd p{rd.get(), POLLIN, 0};
        const int n = ::poll(&p, 1, left);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) continue;
        const ssize_t got = ::read(rd.get(), buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;  // the command closed its output: it has ended, or soon will
        if (out.output.size() < max_bytes) out.output.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), max_bytes - out.output.size()));
    }
    // Output closed; the process itself gets what is left of the deadline.
    for (;;) {
        int st = 0;
        const pid_t r = ::waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            return out;
        }
        if (r < 0 && errno != EINTR) return out;
        if (Clock::now() >= end) return stop(pid, argv[0], timeout_s, grace_s);
        ::usleep(5000);
    }
}

}  // namespace gangway::sys
