/* Self-test of the fake NCCL (fake_nccl.c, a TEST DOUBLE), run by
 * `build.sh OUTDIR --selftest`. It checks what gangway's integration tests
 * lean on: the unique id made in one process forms a communicator with
 * another process that only got the 128 bytes; the sum is right; both
 * communicator styles work; the log line carries one nonce per communicator;
 * a wrong nonce is refused; the hang and fail faults; abort never hangs.
 * Prints one line on success; on failure, what failed, and exits 1. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_time.h"
#include "selftest.h"

typedef int ncclResult_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct { size_t size; unsigned magic, version; int blocking; } ncclConfig_t;
typedef struct ncclComm *ncclComm_t;
ncclResult_t ncclGetUniqueId(ncclUniqueId *);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclAllReduce(const void *, void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *);
ncclResult_t ncclCommAbort(ncclComm_t);
ncclResult_t ncclCommDestroy(ncclComm_t);

enum { kInProgress = 7, kFloat32 = 7, kSum = 0 };
#define COUNT (1u << 20)


/* Polls a non-blocking communicator out of ncclInProgress, for `secs` at most. */
static ncclResult_t settle(ncclComm_t c, double secs) {
    const double end = now_s() + secs;
    ncclResult_t st = kInProgress;
    while (ncclCommGetAsyncError(c, &st) == 0 && st == kInProgress && now_s() < end) usleep(1000);
    return st;
}

static ncclResult_t nonblocking_init(ncclComm_t *c, int nranks, ncclUniqueId id, int rank) {
    ncclConfig_t cfg = {sizeof cfg, 0xcafebeefu, 21805u, 0};
    ncclResult_t r = ncclCommInitRankConfig(c, nranks, id, rank, &cfg);
    return r == kInProgress ? settle(*c, 10) : r;
}

/* Rank `rank` of 2: element i is i%7 + rank, so the sum is 2*(i%7) + 1. Two
 * rounds, the second in place on the first's result. */
static int rank_main(ncclUniqueId id, int rank, int blocking) {
    ncclComm_t c = NULL;
    ncclResult_t r = blocking ? ncclCommInitRank(&c, 2, id, rank) : nonblocking_init(&c, 2, id, rank);
    CHECK(r == 0, "rank %d: init returned %d", rank, r);
    if (r != 0) return 1;
    float *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    for (unsigned i = 0; i < COUNT; ++i) in[i] = (float)(i % 7 + rank);
    r = ncclAllReduce(in, out, COUNT, kFloat32, kSum, c, NULL);
    if (r == kInProgress) r = settle(c, 10);
    CHECK(r == 0, "rank %d: all-reduce returned %d", rank, r);
    for (unsigned i = 0; i < COUNT && r == 0; ++i)
        if (out[i] != (float)(2 * (i % 7) + 1)) {
            CHECK(0, "rank %d: element %u is %g, want %u", rank, i, out[i], 2 * (i % 7) + 1);
            break;
        }
    r = ncclAllReduce(out, out, COUNT, kFloat32, kSum, c, NULL);
    if (r == kInProgress) r = settle(c, 10);
    CHECK(r == 0 && out[5] == 22.0f, "rank %d: second round returned %d, element 5 is %g", rank, r, out[5]);
    CHECK(ncclAllReduce(in, out, 1, 9 /* float64 */, kSum, c, NULL) == 4, "rank %d: float64 accepted", rank);
    ncclCommDestroy(c);
    free(in);
    free(out);
    return failures != 0;
}

/* Two processes; the id travels through a pipe, as gangway ships it to other nodes. */
static void two_processes(const char *log) {
    int p[2];
    if (pipe(p) != 0) return;
    const pid_t pid = fork();
    if (pid == 0) {
        ncclUniqueId id;
        close(p[1]);
        const int got = (int)read(p[0], &id, sizeof id);
        _exit(got == (int)sizeof id ? rank_main(id, 1, 1) : 2);
    }
    close(p[0]);
    ncclUniqueId id;
    CHECK(ncclGetUniqueId(&id) == 0, "ncclGetUniqueId failed");
    CHECK(write(p[1], &id, sizeof id) == (ssize_t)sizeof id, "cannot write the id");
    close(p[1]);
    rank_main(id, 0, 0);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other process (rank 1) failed");

    char a[64] = "", b[64] = "", line[256];
    FILE *f = fopen(log, "r");
    int lines = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *n = strstr(line, "nonce=");
        if (n) snprintf(lines++ ? b : a, sizeof a, "%s", n);
    }
    if (f) fclose(f);
    CHECK(lines == 2 && strcmp(a, b) == 0 && strlen(a) == 6 + 16 + 1, "log: %d lines, nonces %s / %s", lines, a, b);
}

/* Three blocking ranks driven by one thread: the waits are deferred to ncclGroupEnd. */
static void one_thread_group(void) {
    ncclUniqueId id;
    ncclComm_t c[3];
    static float buf[3][4096];
    ncclGetUniqueId(&id);
    ncclGroupStart();
    for (int r = 0; r < 3; ++r) ncclCommInitRank(&c[r], 3, id, r);
    CHECK(ncclGroupEnd() == 0, "group init failed");
    for (int r = 0; r < 3; ++r)
        for (int i = 0; i < 4096; ++i) buf[r][i] = 1.0f;
    ncclGroupStart();
    for (int r = 0; r < 3; ++r) ncclAllReduce(buf[r], buf[r], 4096, kFloat32, kSum, c[r], NULL);
    CHECK(ncclGroupEnd() == 0, "group all-reduce failed");
    CHECK(buf[0][0] == 3.0f && buf[2][4095] == 3.0f, "group sum is %g, want 3", buf[0][0]);
    for (int r = 0; r < 3; ++r) ncclCommDestroy(c[r]);
}

static void faults(void) {
    ncclUniqueId id, bad;
    ncclComm_t c;
    char host[256];
    ncclGetUniqueId(&id);

    /* A wrong nonce: the root drops the connection, init fails. */
    bad = id;
    bad.internal[16] ^= 1;
    CHECK(nonblocking_init(&c, 1, bad, 0) == 2, "a wrong nonce was accepted");
    ncclCommAbort(c);

    /* A rank whose peer never comes: abort returns at once. */
    ncclConfig_t cfg = {sizeof cfg, 0xcafebeefu, 21805u, 0};
    CHECK(ncclCommInitRankConfig(&c, 2, id, 0, &cfg) == kInProgress, "init did not say in progress");
    CHECK(settle(c, 0.2) == kInProgress, "a 2-rank init with one rank completed");
    double t0 = now_s();
    ncclCommAbort(c);
    /* "at once" with room for a loaded machine: the point is that abort never waits for the peer */
    CHECK(now_s() - t0 < 5, "abort of a pending init took %.1f s", now_s() - t0);

    const char *me = getenv("SLURMD_NODENAME");
    if (!me || !*me) {
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        me = host;
    }
    setenv("GANGWAY_FAKE_NCCL_HANG_HOSTS", me, 1);
    ncclGetUniqueId(&id);
    CHECK(ncclCommInitRankConfig(&c, 1, id, 0, &cfg) == kInProgress, "hang: init did not say in progress");
    CHECK(settle(c, 0.3) == kInProgress, "hang: init completed");
    t0 = now_s();
    ncclCommAbort(c);
    CHECK(now_s() - t0 < 5, "hang: abort took %.1f s", now_s() - t0);
    unsetenv("GANGWAY_FAKE_NCCL_HANG_HOSTS");

    setenv("GANGWAY_FAKE_NCCL_FAIL_HOSTS", me, 1);
    ncclResult_t st = 0;
    CHECK(ncclCommInitRankConfig(&c, 1, id, 0, &cfg) == 2, "fail: init did not fail");
    CHECK(ncclCommGetAsyncError(c, &st) == 0 && st == 2, "fail: async error %d, want 2", st);
    ncclCommDestroy(c);
    unsetenv("GANGWAY_FAKE_NCCL_FAIL_HOSTS");
}

int main(void) {
    char log[] = "/tmp/gwfake-selftest-XXXXXX";
    const int fd = mkstemp(log);
    if (fd < 0) return 1;
    close(fd);
    unsetenv("GANGWAY_FAKE_NCCL_HANG_HOSTS");
    unsetenv("GANGWAY_FAKE_NCCL_FAIL_HOSTS");
    setenv("GANGWAY_FAKE_NCCL_LOG", log, 1);
    two_processes(log);
    unsetenv("GANGWAY_FAKE_NCCL_LOG");
    unlink(log);
    one_thread_group();
    faults();
    if (failures) return 1;
    puts("fake_nccl selftest: ok");
    return 0;
}
