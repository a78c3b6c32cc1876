#include "check.hpp"

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "log.hpp"
#include "state.hpp"

#ifndef GANGWAY_LAUNCHER
#define GANGWAY_LAUNCHER "/usr/bin/gangway"
#endif

namespace gangway::plugin::check {
namespace {

constexpr const char* kSbatchCheckOptionVar = "SLURM_SPANK__SLURM_SPANK_OPTION_gangway_gangway_check";

// "NAME=value" is an entry of variable `name`.
bool names(std::string_view entry, std::string_view name) {
    return entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=';
}

// The task's environment as SLURM will exec the command with it, with `extra` on top.
std::vector<std::string> task_env(spank_t sp, const VarList& extra) {
    char** envp = nullptr;
    if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp)
        throw Error("cannot read the task's environment for the preflight check");
    std::vector<std::string> env;
    for (char** e = envp; *e; ++e) {
        const std::string_view kv = *e;
        bool replaced = false;
        for (const auto& [name, value] : extra) replaced = replaced || names(kv, name);
        if (!replaced) env.emplace_back(kv);
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
}

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& kv : env)
        if (names(kv, name)) return kv.substr(name.size() + 1);
    return "";
}

// srun as the job's PATH finds it (the batch script would run the same one).
std::string find_srun(const std::vector<std::string>& env) {
    const std::string p = find_in_path(env_value(env, "PATH"), "srun");
    return p.empty() ? "/usr/bin/srun" : p;
}

// SIGCHLD at its default and blocked for the wait, so that sigtimedwait wakes
// the moment the check ends (a task started with SIGCHLD ignored would have
// its children reaped by the kernel, and waitpid would never see the check).
// The child gets the task's own mask back before it execs.
class ChildSignal {
public:
    ChildSignal() {
        struct sigaction dfl{};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(SIGCHLD, &dfl, &old_action_);
        sigemptyset(&chld_);
        sigaddset(&chld_, SIGCHLD);
        ::sigprocmask(SIG_BLOCK, &chld_, &old_mask_);
    }
    ~ChildSignal() {
        ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
        ::sigaction(SIGCHLD, &old_action_, nullptr);
    }
    ChildSignal(const ChildSignal&) = delete;
    ChildSignal& operator=(const ChildSignal&) = delete;
    const sigset_t& task_mask() const { return old_mask_; }
    // Until a child changes state or `ms` pass.
    void wait(long ms) const {
        timespec ts{ms / 1000, (ms % 1000) * 1000000};
        siginfo_t info;
        ::sigtimedwait(&chld_, &info, &ts);
    }

private:
    struct sigaction old_action_{};
    sigset_t chld_{}, old_mask_{};
};

// The pipe the check answers the rank order's agreement on: the write end
// goes to the check (not close-on-exec, named in GANGWAY_CHECK_ORDER_FD), the
// read end stays here. Both are closed by the time the command starts.
class AnswerPipe {
public:
    AnswerPipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) return;
        read_ = fds[0];
        write_ = fds[1];
        // Only the write end reaches the check; the task execs its command
        // after this is gone, so it inherits neither.
        ::fcntl(write_, F_SETFD, 0);
    }
    ~AnswerPipe() {
        close_write();
        if (read_ >= 0) ::close(read_);
    }
    AnswerPipe(const AnswerPipe&) = delete;
    AnswerPipe& operator=(const AnswerPipe&) = delete;
    bool ok() const { return read_ >= 0; }
    int write_end() const { return write_; }
    void close_write() {
        if (write_ >= 0) ::close(write_);
        write_ = -1;
    }
    // After the check ended: what it wrote, at most the answer's limit, never waiting.
    std::string take() {
        close_write();
        std::string out;
        if (read_ < 0) return out;
        ::fcntl(read_, F_SETFL, O_NONBLOCK);
        char buf[512];
        while (out.size() <= kOrderAnswerMaxBytes) {  // past the limit: no answer (parse_order_answer)
            const ssize_t n = ::read(read_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
        return out;
    }

private:
    int read_ = -1, write_ = -1;
};

// Whether this task has already left slurmstepd's mount namespace: a
// container plugin listed before gangway in plugstack.conf (pyxis joins the
// container's namespaces in its task_init) ran first, so the launcher's path
// is looked up in the image. Read only when the check cannot start, so that a
// launch pays nothing for it.
bool in_other_mount_ns() {
    char self[64] = {}, parent[64] = {};
    const std::string parent_ns = "/proc/" + std::to_string(::getppid()) + "/ns/mnt";
    const ssize_t a = ::readlink("/proc/self/ns/mnt", self, sizeof self - 1);
    const ssize_t b = ::readlink(parent_ns.c_str(), parent, sizeof parent - 1);
    return a > 0 && b > 0 && std::strcmp(self, parent) != 0;
}

// The check's exit status. The launcher keeps its own deadline; this one only
// stops a check that hangs past it (a stuck srun, a stopped node) from holding
// the task for ever: TERM, then KILL, and "could not check" (5).
int run_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& env, double backstop_s) {
    std::vector<char*> av, ev;
    for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
    for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
    av.push_back(nullptr);
    ev.push_back(nullptr);
    ChildSignal sig;
    // posix_spawn, not fork: glibc's shares the task's memory until the exec
    // (no page tables copied, no copy-on-write faults in the task afterwards),
    // which a fork of slurmstepd's task process paid on every check.
    posix_spawnattr_t attr;
    ::posix_spawnattr_init(&attr);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    ::posix_spawnattr_setsigmask(&attr, &sig.task_mask());
    pid_t pid = -1;
    const int err = ::posix_spawn(&pid, av[0], nullptr, &attr, av.data(), ev.data());
    ::posix_spawnattr_destroy(&attr);
    if (err != 0 && in_other_mount_ns())
        throw Error(std::string("cannot start the preflight check ") + av[0] + ": " + std::strerror(err) +
                    ": the task is already inside a container (a plugin listed before gangway in plugstack.conf, "
                    "such as pyxis, entered it); ask your SLURM administrator to list gangway before it");
    if (err != 0)
        throw Error(std::string("cannot start the preflight check ") + av[0] + ": " + std::strerror(err) +
                    "; ask your SLURM administrator (plugstack.conf launcher=)");
    using clock = std::chrono::steady_clock;
    const auto stop_at = clock::now() + std::chrono::milliseconds(static_cast<long>(backstop_s * 1000));
    bool termed = false;
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
        if (r < 0 && errno != EINTR) return 5;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop_at - clock::now()).count();
        if (left <= 0) {
            ::kill(pid, termed ? SIGKILL : SIGTERM);
            if (!termed) log_error("the preflight check ran past its deadline; stopping it");
            termed = true;
            sig.wait(2000);
            continue;
        }
        sig.wait(std::min<long>(left, 1000));
    }
}

}  // namespace

std::string launcher_path(const Config& cfg) { return cfg.launcher.empty() ? GANGWAY_LAUNCHER : cfg.launcher; }

std::string find_in_path(std::string_view path_var, std::string_view name) {
    for (const auto& dir : split_nonempty(path_var, ':')) {
        std::string p = dir + "/" + std::string(name);
        if (::access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
}

std::string before_command(spank_t sp, const Config& cfg, const StepView& step, const CheckPlan& plan, const VarList& extra,
                           bool order_answer) {
    AnswerPipe answer;
    VarList vars = extra;
    if (order_answer && answer.ok()) add_var(vars, "GANGWAY_CHECK_ORDER_FD", std::to_string(answer.write_end()));
    std::vector<std::string> env = task_env(sp, vars);
    const std::string launcher = launcher_path(cfg);
    CheckCall call;
    call.launcher = launcher;
    if (step.kind == StepKind::Batch) {
        call.srun = find_srun(env);
        // A batch check's report: where the user finds it afterwards, named after the job.
        if (env_value(env, "GANGWAY_REPORT").empty()) {
            char cwd[4096];
            if (::getcwd(cwd, sizeof cwd)) {
                // A number only: the variable is the user's to set, and it becomes part of a file name.
                const auto restarts = parse_uint<unsigned>(env_value(env, "SLURM_RESTART_COUNT"));
                call.report = std::string(cwd) + "/gangway-check-" + std::to_string(step.job_id) +
                              (restarts.value_or(0) == 0 ? "" : "." + std::to_string(*restarts)) + ".json";
            }
        }
    }
    // Whole seconds are enough for a backstop; parse_double would link
    // libstdc++'s floating-point parser (some 40 KB) into every slurmstepd.
    const std::string given_text = env_value(env, "GANGWAY_CHECK_TIMEOUT");
    const auto given = parse_uint<unsigned>(std::string_view(given_text).substr(0, given_text.find('.')));
    const double timeout = given && *given > 0 && *given <= 3600 ? *given + 1 : 60;
    const int rc = run_and_wait(check_argv(plan, step, call), env, timeout + (step.kind == StepKind::Batch ? 120 : 60));
    const std::string said = answer.take();
    const bool speaks = step.kind == StepKind::Batch || step.rank.value_or(0) == 0;
    // 3 and 4 are verdicts (degraded, unreachable); anything else means no verdict.
    const std::string what = rc == 3 || rc == 4 ? "the preflight check failed (exit " + std::to_string(rc) +
                                                      "; its verdict above names the nodes)"
                                                : "the preflight check could not run (exit " + std::to_string(rc) +
                                                      "; see the lines above)";
    if (rc != 0 && plan.on_fail != OnFail::warn) {
        if (speaks)
            log_error(what + ": the command was not started (--gangway-on-fail=" + std::string(to_string(plan.on_fail)) +
                      ")");
        ::_exit(rc);
    }
    if (rc != 0 && speaks) log_error(what + "; starting the command anyway (--gangway-on-fail=warn)");
    // Steps inside this job are not checked again unless their srun asks. Where
    // the site's check is mandatory the mark is one the user cannot make
    // (check_marker.hpp); elsewhere the job's id will do.
    const std::string& mark = state().check_mark;
    const std::string job = mark.empty() ? std::to_string(step.job_id) : mark;
    if (spank_setenv(sp, kCheckedVar, job.c_str(), 1) != ESPANK_SUCCESS)
        throw Error(std::string("cannot set ") + kCheckedVar + " in the task's environment");
    // sbatch's --gangway-check reaches every srun of the script through this
    // variable, as if each srun had been given it: the script's sruns must
    // ask on their own command line.
    if (step.kind == StepKind::Batch) spank_unsetenv(sp, kSbatchCheckOptionVar);
    return said;
}

}  // namespace gangway::plugin::check
