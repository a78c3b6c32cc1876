// The sampler (sampler.hpp). Written small: it is in every slurmstepd of a
// site (BENCHMARKS.md, "The plugin's size"): fixed buffers, open/read,
// each round's lines kept as text in a ring.
// Compiled for size as all of the plugin is (lib/base/optimize_size.hpp).
#include "sampler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "../lib/stepd/step_cgroup.hpp"
#include "../lib/stepd/task_samples.hpp"
#include "../lib/sys/node/file.hpp"
#include "log.hpp"
#include "state.hpp"
#include "task_exit.hpp"
#include "watch.hpp"

namespace gangway::plugin::sampler {
namespace pm = postmortem;
namespace {

struct Task {
    int pid = 0;
    std::uint32_t rank = 0;
    bool ended = false;
    char procs_file[160] = {};  // its cgroup's process list; empty: its descendants by /proc's children files
};

// Shared between slurmstepd's thread (add_task, end_task, stop) and the
// sampler's: `tasks` under `mu`; the rest set before the thread starts, or
// the thread's own.
struct Sampler {
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    std::vector<Task> tasks;
    pthread_t thread{};
    bool started = false, failed = false;
    int wake = -1;
    std::string dir;
    char name[24] = {};
    std::uint32_t step = 0;
    std::int64_t interval_ns = pm::kDefaultSampleNs;
    std::string ring[pm::kMaxSampleRounds];  // the thread's: each round's lines
    std::size_t next = 0;
    std::string proc_cgroup;  // slurmstepd's /proc/self/cgroup, read once: each task's cgroup is found from it
    std::string pressure[3];  // cpu, memory, io: the step cgroup's (v2) or the node's files
    pm::PressureScope scope = pm::PressureScope::node;
    char problem[256] = {};  // the thread's first failure, said by stop()
};
Sampler* the = nullptr;  // never freed (sampler.hpp)

struct Lock {
    explicit Lock(pthread_mutex_t& m) : m_(m) { pthread_mutex_lock(&m_); }
    ~Lock() { pthread_mutex_unlock(&m_); }
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    pthread_mutex_t& m_;
};

// A small kernel file (/proc, cgroupfs) into buf, its length returned; 0 on any failure.
std::size_t read_small(const char* path, char* buf, std::size_t cap) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return 0;
    const ssize_t n = ::read(fd, buf, cap);
    ::close(fd);
    return n > 0 ? std::size_t(n) : 0;
}

pm::TaskSample sample(const Task& t, std::int64_t now) {
    pm::TaskSample s;
    s.t_ns = now, s.step = the->step, s.rank = t.rank;
    // The task's processes: its cgroup's, else the task and its descendants
    // through each main thread's children file (a torchrun's workers, a
    // shell's program), breadth first.
    int pids[pm::kMaxProcsPerTask];
    std::size_t n = 0;
    char buf[4096], path[64];
    if (t.procs_file[0]) n = pm::parse_pids(std::string_view(buf, read_small(t.procs_file, buf, sizeof buf)), pids, pm::kMaxProcsPerTask);
    if (n == 0) {
        pids[n++] = t.pid;
        for (std::size_t i = 0; i < n && n < pm::kMaxProcsPerTask; ++i) {
            std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", pids[i], pids[i]);
            n += pm::parse_pids(std::string_view(buf, read_small(path, buf, sizeof buf)), pids + n, pm::kMaxProcsPerTask - n);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(path, sizeof path, "/proc/%d/stat", pids[i]);
        const auto letter = pm::stat_state(std::string_view(buf, read_small(path, buf, sizeof buf)));
        const auto st = letter ? pm::parse_state_letter(*letter) : std::nullopt;
        if (!st || *st == pm::TaskState::gone) continue;
        ++s.procs;
        if (*st > s.state) s.state = *st;
        std::snprintf(path, sizeof path, "/proc/%d/schedstat", pids[i]);
        if (const auto v = pm::parse_schedstat(std::string_view(buf, read_small(path, buf, sizeof buf))))
            s.cpu_ns += v->cpu_ns, s.wait_ns += v->wait_ns;
    }
    return s;
}

void round() {
    struct timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    const std::int64_t now = std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    std::string& lines = the->ring[the->next];
    lines.clear();
    char line[pm::kMaxSampleLine];
    {
        // Held through the reads (a few small files a task, none that
        // blocks): add_task and end_task wait at most that long.
        Lock l(the->mu);
        for (const auto& t : the->tasks)
            if (!t.ended) lines.append(line, pm::format_sample_line(sample(t, now), line));
    }
    if (lines.empty()) return;
    pm::PressureSample ps;
    ps.t_ns = now, ps.step = the->step, ps.scope = the->scope;
    std::uint32_t* share[3] = {&ps.cpu, &ps.memory, &ps.io};
    char buf[256];
    for (int i = 0; i < 3; ++i)
        if (const auto v = pm::pressure_some_avg10(std::string_view(buf, read_small(the->pressure[i].c_str(), buf, sizeof buf)))) *share[i] = *v;
    lines.append(line, pm::format_pressure_line(ps, line));
    the->next = (the->next + 1) % pm::kMaxSampleRounds;
    // Oldest round first: the ring from `next` on, then from its start.
    std::string text(line, pm::format_sample_header(the->step, the->interval_ns, line));
    for (std::size_t i = 0; i < pm::kMaxSampleRounds; ++i) text += the->ring[(the->next + i) % pm::kMaxSampleRounds];
    if (auto w = sys::write_file_atomic(the->dir, the->name, text, 0600, "the task samples", sys::Durability::page_cache);
        !w && !the->problem[0])
        std::snprintf(the->problem, sizeof the->problem, "%s", w.error().c_str());
}

void* run(void*) {
    try {
        const int ms = int(the->interval_ns / 1'000'000);
        for (;;) {
            pollfd p{the->wake, POLLIN, 0};
            const int n = ::poll(&p, 1, ms);
            if (n > 0 || (n < 0 && errno != EINTR)) break;
            if (n == 0) round();
        }
    } catch (...) {
        if (!the->problem[0]) std::snprintf(the->problem, sizeof the->problem, "the sampler stopped on an error");
    }
    return nullptr;
}

bool start() {
    the->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (the->wake < 0) return false;
    // The thread takes no signal: slurmstepd's own threads handle them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    const int rc = pthread_create(&the->thread, &attr, run, nullptr);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        ::close(the->wake);
        return false;
    }
    pthread_setname_np(the->thread, "gangway-sample");  // ps -L, top -H and bench/sampler_cost.sh find it by name
    return the->started = true;
}

}  // namespace

void add_task(spank_t sp) {
    const unsigned every_s = state().site.postmortem_sample_s;
    if (every_s == 0 || task_exit::job_dir().empty() || (the && the->failed)) return;
    pid_t pid = 0;
    std::uint32_t rank = 0;
    int local = -1;
    if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS || pid <= 0 || local < 0)
        return;
    if (!the) {
        the = new Sampler;
        the->dir = task_exit::job_dir();
        the->step = task_exit::step_id();
        std::snprintf(the->name, sizeof the->name, "samples.%u", the->step);
        the->interval_ns = std::int64_t(every_s) * 1'000'000'000;
        char self[4096];
        the->proc_cgroup.assign(self, read_small("/proc/self/cgroup", self, sizeof self));
        // The step cgroup's pressure where cgroup v2 keeps it, else the node's.
        const auto dir = pm::step_v2_dir(the->proc_cgroup);
        if (dir && ::access((*dir + "/cpu.pressure").c_str(), R_OK) == 0) {
            the->scope = pm::PressureScope::step;
            the->pressure[0] = *dir + "/cpu.pressure", the->pressure[1] = *dir + "/memory.pressure", the->pressure[2] = *dir + "/io.pressure";
        } else {
            the->pressure[0] = "/proc/pressure/cpu", the->pressure[1] = "/proc/pressure/memory", the->pressure[2] = "/proc/pressure/io";
        }
    }
    Task t;
    t.pid = pid, t.rank = rank;
    if (const auto f = pm::task_procs_file(the->proc_cgroup, unsigned(local));
        f && f->size() < sizeof t.procs_file && ::access(f->c_str(), R_OK) == 0)
        std::memcpy(t.procs_file, f->c_str(), f->size() + 1);
    {
        Lock l(the->mu);
        if (the->tasks.size() >= pm::kMaxSampledTasks) return;
        the->tasks.push_back(t);
    }
    if (!the->started && !start()) {
        the->failed = true;
        log_error("postmortem_sample: cannot start the sampler thread; no task samples for this step (the rest of the post-mortem is kept)");
        return;
    }
    watch::start_agent(the->dir, the->step);  // once a step: its records are these samples
}

void end_task(spank_t sp) {
    pid_t pid = 0;
    if (!the || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) return;
    Lock l(the->mu);
    for (auto& t : the->tasks)
        if (t.pid == pid) t.ended = true;
}

void stop() noexcept {
    if (!the || !the->started) return;
    const std::uint64_t one = 1;
    if (::write(the->wake, &one, sizeof one) != sizeof one) return;  // never join a thread that was not told
    pthread_join(the->thread, nullptr);
    the->started = false;
    ::close(the->wake);
    if (the->problem[0]) {
        char msg[400];
        std::snprintf(msg, sizeof msg, "postmortem_sample: %s; the step's task samples are incomplete", the->problem);
        log_error(msg);
    }
}

}  // namespace gangway::plugin::sampler
