#include "task_exit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <string>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/env/step_view.hpp"
#include "../lib/stepd/task_end.hpp"
#include "../lib/stepd/step_cgroup.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/node/dirs.hpp"
#include "../lib/sys/node/file.hpp"
#include "log.hpp"
#include "state.hpp"

namespace gangway::plugin::task_exit {
namespace {

// What prepare() decided, for every task_exit of the step (the same process).
struct Step {
    std::string dir;   // <postmortem_dir>/<job>; empty: no record
    std::string node;
    std::uint32_t job = 0, step = 0;
};
Step& step_state() {
    static Step s;
    return s;
}

// The line for a directory prepare() could not make or use: out of line,
// so that only a failure builds it (the plugin's size, issue 32 item 6).
[[gnu::cold, gnu::noinline]] void dir_problem(const std::string& base, const std::string& why) {
    log_error(concat({"postmortem_dir: ", base, ": ", why,
                      "; no post-mortem record for this step (ask your administrator to check postmortem_dir=)"}));
}

std::uint64_t step_oom_kills(unsigned local_task) {
    const sys::ReadOptions small = [] {
        sys::ReadOptions o(16 * 1024);
        o.over = sys::ReadOptions::Over::Truncate;
        o.follow_links = false;
        return o;
    }();
    const auto self = sys::read_file("/proc/self/cgroup", small);
    if (!self) return 0;
    const auto files = postmortem::step_oom_files(*self, local_task);
    if (!files) return 0;
    std::uint64_t n = 0;
    for (const auto* f : {&files->step, &files->task}) {
        if (f->empty()) continue;
        if (const auto counters = sys::read_file(*f, small)) n += postmortem::parse_oom_kill(*counters);
    }
    return n;
}

// `why`, and that this task or step (`of`) has no record: out of line too.
[[gnu::cold, gnu::noinline]] void no_record(const char* why, const char* of) {
    log_error(concat({why, "; no post-mortem record for this ", of}));
}

}  // namespace

void prepare(spank_t sp) {
    const Config& site = state().site;
    if (site.postmortem_dir.empty()) return;
    std::uint32_t job = 0, step = 0, uid = 0, gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
        return;
    // The batch script, the extern and the interactive step end as the job
    // does: only the job's own steps (srun) are evidence.
    if (step == kBatchStep || step == kExternStep || step == kInteractiveStep) return;
    spank_get_item(sp, S_JOB_UID, &uid);
    spank_get_item(sp, S_JOB_GID, &gid);
    auto& s = step_state();
    // The kernel's host name, never the job's environment: a step launched
    // from a batch script carries the script's SLURMD_NODENAME (its first
    // node's) until slurmstepd sets each task's own.
    s.node = sys::short_host_name();
    std::string base;
    try {
        base = expand_node_dir(site.postmortem_dir, s.node);
    } catch (const Error& e) {
        no_record(e.what(), "step");
        return;
    }
    // The base: root's, 0711, made where missing, under directories no user
    // can write (sys/node/dirs.hpp), walked without following a link; the
    // job's directory root's 0711 in it; the dumps' the job's owner's, 0700.
    // Others may reach their own dump directory, never list root's records.
    char n[16];
    const std::string job_name(n, static_cast<std::size_t>(std::to_chars(n, n + sizeof n, job).ptr - n));
    auto b = sys::open_root_tree(base, 0711, true);
    if (!b) return dir_problem(base, b.error());
    auto j = sys::make_dir_at(b->get(), job_name, 0711, 0, 0, true);
    if (!j) return dir_problem(base, j.error());
    if (auto u = sys::make_dir_at(j->get(), "user", 0700, uid, gid, false); !u) return dir_problem(base, job_name + "/" + u.error());
    std::string dir = concat({base, "/", job_name});
    const std::string user = concat({dir, "/user"});
    if (spank_setenv(sp, "GANGWAY_POSTMORTEM_DIR", user.c_str(), 1) != ESPANK_SUCCESS)
        log_info("postmortem_dir: cannot set GANGWAY_POSTMORTEM_DIR in the job's environment");
    s.dir = std::move(dir);
    s.job = job;
    s.step = step;
}

void record(spank_t sp) {
    const auto& s = step_state();
    if (s.dir.empty()) return;
    postmortem::TaskEnd t;
    struct timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    t.t_ns = static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
    t.node = s.node;
    t.job = s.job;
    t.step = s.step;
    int local = -1, status = 0;
    pid_t pid = 0;
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &t.rank) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || local < 0 ||
        spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return;
    if (spank_get_item(sp, S_TASK_PID, &pid) == ESPANK_SUCCESS) t.pid = pid;
    t.local_rank = static_cast<std::uint32_t>(local);
    t.wait_status = status;
    t.oom_kills = step_oom_kills(t.local_rank);
    const auto& on_fail = state().cli.check.on_fail;
    t.requeue_on_fail = on_fail.value_or(state().site.check.on_fail) == OnFail::requeue;
    // The name and the line in fixed buffers: no allocation but the name's.
    char name[32] = "task.";
    char* p = std::to_chars(name + 5, name + 15, t.step).ptr;  // 10 digits at most, each
    *p++ = '.';
    p = std::to_chars(p, p + 10, t.rank).ptr;
    char line[postmortem::kMaxTaskLine];
    const std::size_t len = postmortem::format_task_end(t, line);
    if (auto w = sys::write_file_atomic(s.dir, std::string(name, p), std::string_view(line, len), 0600,
                                        "the task's end", sys::Durability::page_cache);
        !w)
        no_record(w.error().c_str(), "task");
}

const std::string& job_dir() noexcept { return step_state().dir; }
std::uint32_t step_id() noexcept { return step_state().step; }

}  // namespace gangway::plugin::task_exit
