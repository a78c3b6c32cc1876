/* What gangway.so costs one slurmstepd, phase by phase, without SLURM: this
 * program plays slurmstepd's part of the SPANK protocol on one node. For each
 * round it forks a fresh process (a new slurmstepd is a new process, so every
 * round is cold, as in a real step), which dlopens the plugin, calls
 * slurm_spank_init, init_post_opt and user_init in the remote context, then
 * forks one child per local task that calls task_init, as slurmstepd does
 * before it execs a task, and task_post_fork for each in the step process;
 * when they have ended it calls task_exit for each, in the step process, with
 * the task's pid and wait status, then slurm_spank_exit, as slurmstepd does. The step is described by the SLURM_* variables of
 * this program's environment (the job environment SPANK reads).
 *
 *   stepd_sim [--rounds N] [--tasks N] [--usage] PLUGIN [PLUGSTACK ARGS...]
 *   stepd_sim [--rounds N] [--tasks N] [--usage] none   (the same protocol, no plugin)
 *
 * Prints the median wall and CPU microseconds of each phase over the rounds.
 * With --usage, a last line on stderr, whether the rounds passed or failed:
 * "stepd_sim: usage: maxrss_kb=K cpu_us=C", the largest resident set of any
 * step process or its tasks (Linux folds a waited-for child's peak into its
 * parent's, so a step's covers its tasks) and the CPU time of all of them
 * (tests/plugin_budget.sh holds the plugin to a budget with it).
 * Under `valgrind --tool=callgrind` (one round) it gives instruction counts,
 * which do not depend on the machine's load. bench/plugin_path.sh runs it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

/* --- the SPANK host: what slurmstepd gives a plugin ----------------------- */
static int g_task = -1; /* local task id inside a task child (or task_exit's task), -1 in the step */
static pid_t g_task_pid = 0; /* task_exit's task */
static int g_task_status = 0;
static unsigned g_tasks = 2;
static char** g_env;      /* the job's environment (a copy: the plugin edits it) */
static size_t g_env_n, g_env_cap;

/* Kept NULL-terminated: S_JOB_ENV hands out the array itself. */
static void env_append(char* kv) {
    if (g_env_n + 2 > g_env_cap) {
        g_env_cap = g_env_cap ? 2 * g_env_cap : 64;
        g_env = realloc(g_env, g_env_cap * sizeof *g_env);
    }
    g_env[g_env_n++] = kv;
    g_env[g_env_n] = NULL;
}

static long find_env(const char* name) {
    const size_t n = strlen(name);
    for (size_t i = 0; i < g_env_n; ++i)
        if (strncmp(g_env[i], name, n) == 0 && g_env[i][n] == '=') return (long)i;
    return -1;
}

spank_context_t spank_context(void) { return S_CTX_REMOTE; }
int spank_remote(spank_t sp) { (void)sp; return 1; }
const char* spank_strerror(spank_err_t err) { return err == ESPANK_SUCCESS ? "Success" : "error"; }
void slurm_info(const char* fmt, ...) { (void)fmt; }
/* One write per line: the tasks of a step log at once, and three stdio calls
 * on unbuffered stderr interleaved their lines (tests/plugin_faults.sh counts them). */
void slurm_error(const char* fmt, ...) {
    char line[1024];
    int n = snprintf(line, sizeof line, "stepd_sim: plugin error: ");
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line) n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 1) n = (int)sizeof line - 1;  /* truncated: the newline takes the NUL's place */
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) return;
}
spank_err_t spank_option_register(spank_t sp, struct spank_option* opt) { (void)sp; (void)opt; return ESPANK_SUCCESS; }

spank_err_t spank_getenv(spank_t sp, const char* var, char* buf, int len) {
    (void)sp;
    const long i = find_env(var);
    if (i < 0) return ESPANK_ENV_NOEXIST;
    const char* v = strchr(g_env[i], '=') + 1;
    if ((int)strlen(v) >= len) return ESPANK_NOSPACE;
    strcpy(buf, v);
    return ESPANK_SUCCESS;
}

/* slurmstepd's spank_setenv goes through setenvf (src/common/env.c, SLURM
 * 22.05 to 26.05), which formats the value into a zeroed ENV_BUFSIZE (256 KiB)
 * buffer first: each call clears 256 KiB. Played here as it is, so that the
 * plugin's spank_setenv calls cost what they cost in slurmstepd;
 * STEPD_SETENVF_BUFFER=0 leaves it out (plugin_path.sh --callgrind counts the
 * plugin's own instructions). */
static size_t g_setenvf_buffer = 256 * 1024;
static unsigned long g_setenvs;  /* spank_setenv calls in this process */

spank_err_t spank_setenv(spank_t sp, const char* var, const char* val, int overwrite) {
    (void)sp;
    const long i = find_env(var);
    if (i >= 0 && !overwrite) return ESPANK_ENV_EXISTS;
    ++g_setenvs;
    const size_t size = g_setenvf_buffer > strlen(val) ? g_setenvf_buffer : strlen(val) + 1;
    char* value = calloc(1, size + 2 * sizeof(size_t));
    if (!value) return ESPANK_ERROR;
    snprintf(value, size, "%s", val);
    char* kv = NULL;
    const int n = asprintf(&kv, "%s=%s", var, value);
    free(value);
    if (n < 0) return ESPANK_ERROR;
    if (i >= 0) {
        free(g_env[i]);
        g_env[i] = kv;
        return ESPANK_SUCCESS;
    }
    env_append(kv);
    return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char* var) {
    (void)sp;
    const long i = find_env(var);
    if (i >= 0) {
        free(g_env[i]);
        g_env[i] = g_env[--g_env_n];
        g_env[g_env_n] = NULL;
    }
    return ESPANK_SUCCESS;
}

static uint32_t env_u32(const char* name, uint32_t dflt) {
    const long i = find_env(name);
    return i < 0 ? dflt : (uint32_t)strtoul(strchr(g_env[i], '=') + 1, NULL, 10);
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...) {
    (void)sp;
    va_list ap;
    va_start(ap, item);
    spank_err_t rc = ESPANK_SUCCESS;
    const uint32_t node = env_u32("SLURM_NODEID", 0), first_rank = env_u32("SIM_FIRST_RANK", 0);
    switch (item) {
        case S_JOB_ENV: *va_arg(ap, char***) = g_env; break;
        case S_JOB_ID: *va_arg(ap, uint32_t*) = env_u32("SLURM_JOB_ID", 1); break;
        case S_JOB_STEPID: *va_arg(ap, uint32_t*) = env_u32("SLURM_STEP_ID", 0); break;
        case S_JOB_NNODES: *va_arg(ap, uint32_t*) = env_u32("SLURM_STEP_NUM_NODES", 1); break;
        case S_JOB_NODEID: *va_arg(ap, uint32_t*) = node; break;
        case S_JOB_TOTAL_TASK_COUNT: *va_arg(ap, uint32_t*) = env_u32("SLURM_STEP_NUM_TASKS", g_tasks); break;
        case S_JOB_LOCAL_TASK_COUNT: *va_arg(ap, uint32_t*) = g_tasks; break;
        case S_TASK_GLOBAL_ID:
            if (g_task < 0) rc = ESPANK_NOT_TASK;
            else *va_arg(ap, uint32_t*) = first_rank + (uint32_t)g_task;
            break;
        case S_TASK_ID:
            if (g_task < 0) rc = ESPANK_NOT_TASK;
            else *va_arg(ap, int*) = g_task;
            break;
        case S_TASK_PID:
            if (g_task < 0) rc = ESPANK_NOT_TASK;
            else *va_arg(ap, pid_t*) = g_task_pid;
            break;
        case S_TASK_EXIT_STATUS:
            if (g_task < 0) rc = ESPANK_NOT_TASK;
            else *va_arg(ap, int*) = g_task_status;
            break;
        /* SIM_JOB_UID: the job's owner, another than the simulator's own (tests/plugin_faults.sh). */
        case S_JOB_UID: *va_arg(ap, uid_t*) = env_u32("SIM_JOB_UID", getuid()); break;
        case S_JOB_GID: *va_arg(ap, gid_t*) = env_u32("SIM_JOB_GID", getgid()); break;
        default: rc = ESPANK_NOT_AVAIL; break;
    }
    va_end(ap);
    return rc;
}

/* --- timing ----------------------------------------------------------------- */
enum { P_LOAD, P_INIT, P_USER_INIT, P_TASK_INIT, P_STEP, NPHASES };
static const char* const phase_name[NPHASES] = {"dlopen", "init+init_post_opt", "user_init", "task_init (per task)",
                                                "whole step (fork to last task)"};

/* Minor page faults so far: each costs 13-20 us on a VM like this one's, and a
 * forked task faults in every page of code and data it touches. */
static double faults(int who) {
    struct rusage u;
    getrusage(who, &u);
    return (double)u.ru_minflt;
}

static double now_us(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

typedef int (*spank_fn)(spank_t, int, char**);

/* Blocks taken to leave the heap nearly full: a singly linked list through the blocks. */
struct hog_block {
    struct hog_block* next;
    size_t size;
};
static struct hog_block* hog_push(struct hog_block* list, void* p) {
    struct hog_block* b = p;
    b->next = list;
    b->size = malloc_usable_size(p);
    return b;
}
/* Frees blocks until `bytes` are free again (all of them for (size_t)-1). */
static void hog_release(struct hog_block** list, size_t bytes) {
    size_t freed = 0;
    while (*list && freed < bytes) {
        struct hog_block* b = *list;
        *list = b->next;
        freed += b->size;
        free(b);
    }
}

/* One slurmstepd: returns wall and CPU time per phase through `out` (a pipe). */
static void one_step(const char* plugin, int ac, char** av, int out) {
    double wall[NPHASES] = {0}, cpu[NPHASES] = {0}, flt[NPHASES] = {0}, w, c, f, user_setenvs = 0;
    spank_fn task_init = NULL, task_exit = NULL, task_post_fork = NULL, spank_exit = NULL;
    struct hog_block* hog = NULL;
    if (strcmp(plugin, "none") != 0) {
        w = now_us(CLOCK_MONOTONIC), c = now_us(CLOCK_PROCESS_CPUTIME_ID), f = faults(RUSAGE_SELF);
        void* h = dlopen(plugin, RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
            fprintf(stderr, "stepd_sim: %s\n", dlerror());
            _exit(2);
        }
        wall[P_LOAD] = now_us(CLOCK_MONOTONIC) - w, cpu[P_LOAD] = now_us(CLOCK_PROCESS_CPUTIME_ID) - c;
        flt[P_LOAD] = faults(RUSAGE_SELF) - f;
        spank_fn init = (spank_fn)dlsym(h, "slurm_spank_init");
        spank_fn post = (spank_fn)dlsym(h, "slurm_spank_init_post_opt");
        spank_fn user = (spank_fn)dlsym(h, "slurm_spank_user_init");
        task_init = (spank_fn)dlsym(h, "slurm_spank_task_init");
        task_exit = (spank_fn)dlsym(h, "slurm_spank_task_exit");
        task_post_fork = (spank_fn)dlsym(h, "slurm_spank_task_post_fork");
        spank_exit = (spank_fn)dlsym(h, "slurm_spank_exit");
        w = now_us(CLOCK_MONOTONIC), c = now_us(CLOCK_PROCESS_CPUTIME_ID), f = faults(RUSAGE_SELF);
        if (init && init(NULL, ac, av) != 0) _exit(3);
        if (post && post(NULL, ac, av) != 0) _exit(3);
        wall[P_INIT] = now_us(CLOCK_MONOTONIC) - w, cpu[P_INIT] = now_us(CLOCK_PROCESS_CPUTIME_ID) - c;
        flt[P_INIT] = faults(RUSAGE_SELF) - f;
        /* STEPD_USER_INIT_AS_KB: user_init runs with only this much address
         * space beyond what the process has, so that its allocations fail
         * (tests/plugin_faults.sh: the plugin must survive it, issue 15 item 11). */
        const unsigned as_kb = env_u32("STEPD_USER_INIT_AS_KB", 0);
        if (as_kb) {
            unsigned long pages = 0;
            FILE* st = fopen("/proc/self/statm", "r");
            if (!st || fscanf(st, "%lu", &pages) != 1) _exit(7);
            fclose(st);
            const struct rlimit rl = {pages * (unsigned long)sysconf(_SC_PAGESIZE) + as_kb * 1024ul, RLIM_INFINITY};
            if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(7);
            /* The heap's free space too, but for the last STEPD_USER_INIT_AS_KB. */
            for (size_t sz = 1 << 20; sz >= 16; sz /= 2)
                for (void* p; (p = malloc(sz)) != NULL;) hog = hog_push(hog, p);
            hog_release(&hog, as_kb * 1024ul);
        }
        w = now_us(CLOCK_MONOTONIC), c = now_us(CLOCK_PROCESS_CPUTIME_ID), f = faults(RUSAGE_SELF);
        const unsigned long set0 = g_setenvs;
        if (user && user(NULL, ac, av) != 0) _exit(3);
        user_setenvs = (double)(g_setenvs - set0);
        if (as_kb) {
            const struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
            setrlimit(RLIMIT_AS, &rl);
            hog_release(&hog, (size_t)-1);
        }
        wall[P_USER_INIT] = now_us(CLOCK_MONOTONIC) - w, cpu[P_USER_INIT] = now_us(CLOCK_PROCESS_CPUTIME_ID) - c;
        flt[P_USER_INIT] = faults(RUSAGE_SELF) - f;
    }
    /* Tasks: each child times its own task_init and reports through a pipe. */
    int fds[2];
    if (pipe(fds) != 0) _exit(4);
    pid_t pids[256];
    if (g_tasks > 256) _exit(4);
    for (unsigned t = 0; t < g_tasks; ++t) {
        if ((pids[t] = fork()) == 0) {
            close(fds[0]);
            g_task = (int)t;
            char buf[32];
            snprintf(buf, sizeof buf, "%u", t);
            spank_setenv(NULL, "SLURM_LOCALID", buf, 1);
            snprintf(buf, sizeof buf, "%u", env_u32("SIM_FIRST_RANK", 0) + t);
            spank_setenv(NULL, "SLURM_PROCID", buf, 1);
            double r[4] = {0, 0, 0, 0};
            const double tw = now_us(CLOCK_MONOTONIC), tc = now_us(CLOCK_THREAD_CPUTIME_ID), tf = faults(RUSAGE_THREAD);
            const unsigned long set0 = g_setenvs;
            const int rc = task_init ? task_init(NULL, ac, av) : 0;
            r[0] = now_us(CLOCK_MONOTONIC) - tw, r[1] = now_us(CLOCK_THREAD_CPUTIME_ID) - tc, r[2] = faults(RUSAGE_THREAD) - tf;
            r[3] = (double)(g_setenvs - set0);
            if (write(fds[1], r, sizeof r) != (ssize_t)sizeof r) _exit(5);
            _exit(rc == 0 ? 0 : 6);
        }
        /* slurmstepd calls task_post_fork in the step process after each fork. */
        if (task_post_fork) {
            g_task = (int)t, g_task_pid = pids[t];
            task_post_fork(NULL, ac, av);
            g_task = -1;
        }
    }
    close(fds[1]);
    double r[4], task_setenvs = 0;
    while (read(fds[0], r, sizeof r) == (ssize_t)sizeof r)
        wall[P_TASK_INIT] += r[0] / g_tasks, cpu[P_TASK_INIT] += r[1] / g_tasks, flt[P_TASK_INIT] += r[2] / g_tasks,
            task_setenvs += r[3] / g_tasks;
    int st, bad = 0;
    for (unsigned t = 0; t < g_tasks; ++t) {
        if (waitpid(pids[t], &st, 0) != pids[t]) _exit(4);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        /* slurmstepd calls task_exit in the step process as each task ends. */
        if (task_exit) {
            g_task = (int)t, g_task_pid = pids[t], g_task_status = st;
            task_exit(NULL, ac, av);
            g_task = -1;
        }
    }
    /* And slurm_spank_exit once, at the step's end. */
    if (spank_exit) spank_exit(NULL, ac, av);
    if (bad) {
        fprintf(stderr, "stepd_sim: a task_init failed\n");
        _exit(6);
    }
    double rec[3 * NPHASES + 2];
    memcpy(rec, wall, sizeof wall);
    memcpy(rec + NPHASES, cpu, sizeof cpu);
    memcpy(rec + 2 * NPHASES, flt, sizeof flt);
    rec[3 * NPHASES] = user_setenvs, rec[3 * NPHASES + 1] = task_setenvs;
    if (write(out, rec, sizeof rec) != (ssize_t)sizeof rec) _exit(5);
    _exit(0);
}

static int cmp(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static int g_usage = 0;

/* The --usage line: every step process is waited for by now. */
static int report_usage(int rc) {
    if (!g_usage) return rc;
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    const double cpu = u.ru_utime.tv_sec * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_sec * 1e6 + u.ru_stime.tv_usec;
    fprintf(stderr, "stepd_sim: usage: maxrss_kb=%ld cpu_us=%.0f\n", u.ru_maxrss, cpu);
    return rc;
}

int main(int argc, char** argv) {
    unsigned rounds = 20;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "--usage") == 0) g_usage = 1, --i;
        else if (i + 1 >= argc) break;
        else if (strcmp(argv[i], "--rounds") == 0) rounds = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--tasks") == 0) g_tasks = (unsigned)atoi(argv[i + 1]);
        else break;
    }
    if (i >= argc || rounds == 0 || g_tasks == 0) {
        fprintf(stderr, "usage: stepd_sim [--rounds N] [--tasks N] [--usage] PLUGIN|none [PLUGSTACK ARGS...]\n");
        return 2;
    }
    const char* plugin = argv[i];
    int ac = argc - i - 1;
    char** av = argv + i + 1;
    extern char** environ;
    for (char** e = environ; *e; ++e) env_append(strdup(*e));
    double* wall = calloc((size_t)rounds * NPHASES, sizeof *wall);
    double* cpu = calloc((size_t)rounds * NPHASES, sizeof *cpu);
    double* flt = calloc((size_t)rounds * NPHASES, sizeof *flt);
    double setenvs[2] = {0, 0};  /* the last round's spank_setenv calls: user_init, each task_init */
    const char* buffer = getenv("STEPD_SETENVF_BUFFER");
    if (buffer) g_setenvf_buffer = (size_t)strtoul(buffer, NULL, 10);
    for (unsigned r = 0; r < rounds; ++r) {
        int fds[2];
        if (pipe(fds) != 0) return 4;
        const double w0 = now_us(CLOCK_MONOTONIC);
        const pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            one_step(plugin, ac, av, fds[1]);
        }
        close(fds[1]);
        double rec[3 * NPHASES + 2];
        const ssize_t got = read(fds[0], rec, sizeof rec);
        close(fds[0]);
        int st;
        waitpid(pid, &st, 0);
        if (got != (ssize_t)sizeof rec || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "stepd_sim: round %u failed (exit %d)\n", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            return report_usage(1);
        }
        rec[P_STEP] = now_us(CLOCK_MONOTONIC) - w0;
        for (int p = 0; p < NPHASES; ++p)
            wall[p * rounds + r] = rec[p], cpu[p * rounds + r] = rec[NPHASES + p], flt[p * rounds + r] = rec[2 * NPHASES + p];
        setenvs[0] = rec[3 * NPHASES], setenvs[1] = rec[3 * NPHASES + 1];
    }
    printf("%s, %u rounds, %u tasks: median wall / CPU microseconds, minor page faults\n", plugin, rounds, g_tasks);
    for (int p = 0; p < NPHASES; ++p) {
        qsort(wall + p * rounds, rounds, sizeof *wall, cmp);
        qsort(cpu + p * rounds, rounds, sizeof *cpu, cmp);
        qsort(flt + p * rounds, rounds, sizeof *flt, cmp);
        printf("  %-32s %10.1f %10.1f %8.1f\n", phase_name[p], wall[p * rounds + rounds / 2],
               p == P_STEP ? 0.0 : cpu[p * rounds + rounds / 2], p == P_STEP ? 0.0 : flt[p * rounds + rounds / 2]);
    }
    printf("  spank_setenv calls: user_init %.0f, each task_init %.1f (each clears %zu bytes, as SLURM's setenvf)\n",
           setenvs[0], setenvs[1], g_setenvf_buffer);
    return report_usage(0);
}
