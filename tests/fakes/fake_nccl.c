/* TEST DOUBLE -- not NVIDIA's NCCL. A fake libnccl.so.2 for GPU-less CI machines
 * and the namespace test cluster, paired with fake_cuda.c (whose "device
 * memory" is host memory, so the buffers here are plain host pointers).
 *
 * It does a real, tiny all-reduce between processes over TCP, so the 128-byte
 * unique id must really travel from the process that made it to every rank,
 * on every node, as gangway ships it:
 *   - ncclGetUniqueId starts a "root" thread listening on an ephemeral TCP port
 *     and writes {magic, address, port, random nonce} into the id;
 *   - each rank's communicator has a worker thread that connects to the root
 *     and says hello {magic, nranks, rank, nonce}; the root acknowledges once
 *     all nranks have joined (init is collective, as NCCL's is);
 *   - per all-reduce each rank sends {u64 count, count floats}; the root sums
 *     them in rank order and sends the sum back to every rank.
 * Only float32 sum is supported: it is all gangway's nccl stage runs.
 * Peers are assumed to share one byte order (they are one test cluster).
 *
 * Communicators behave as NCCL's non-blocking ones (ncclInProgress, then
 * ncclCommGetAsyncError), or blocking ones whose calls wait -- deferred to
 * ncclGroupEnd inside a group, as NCCL defers them, so one thread can drive
 * several ranks.
 *
 * Environment:
 *   GANGWAY_FAKE_NCCL_ADDR=IPv4   address peers reach the root at (else NODE_ADDR,
 *                                 else 127.0.0.1); read by ncclGetUniqueId
 *   GANGWAY_FAKE_NCCL_HANG_HOSTS  on these nodes init never completes (until abort)
 *   GANGWAY_FAKE_NCCL_NET_HANG_HOSTS  on these nodes only a communicator with more
 *                                 ranks than GANGWAY_FAKE_GPUS (one that spans nodes)
 *                                 hangs: a broken network path, the node alone is fine
 *   GANGWAY_FAKE_NCCL_NET_SLOW_HOSTS  on these nodes every all-reduce of a communicator
 *                                 that spans nodes waits 300 ms first (a slow path)
 *   GANGWAY_FAKE_NCCL_NET_CORRUPT_HOSTS  on these nodes a communicator that spans
 *                                 nodes reads one element of each sum off by one
 *   GANGWAY_FAKE_NCCL_FAIL_HOSTS  on these nodes init fails at once (ncclSystemError)
 *   GANGWAY_FAKE_NCCL_LOG=path    each completed init appends
 *                                 "host=H rank=R nranks=N nonce=<16 hex>" */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "fake_host.h"
#include "fake_time.h"

/* Our own declarations of the NCCL ABI (nccl.h is not on these machines). */
typedef int ncclResult_t;
enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
};
enum { ncclSum = 0, ncclFloat32 = 7 };
typedef struct { char internal[128]; } ncclUniqueId;
/* The leading fields of ncclConfig_t, laid out as gangway's Config (nccl_stage.cpp). */
typedef struct {
    size_t size;
    unsigned magic, version;
    int blocking;
} ncclConfig_t;
typedef struct ncclComm *ncclComm_t;

#define MAGIC "GWFAKE01"
#define IDLE_S 120   /* the root gives up after this long without a message */
#define CONNECT_S 60 /* a rank retries connecting to the root this long */
#define MAX_RANKS 4096

/* What the 128-byte unique id holds (the rest is zero). */
struct id_fields {
    char magic[8];
    struct in_addr addr; /* network order, as are port */
    uint16_t port, pad;
    unsigned char nonce[8]; /* tells this communicator's root from a stale one on a reused port */
};
struct hello {
    char magic[8];
    uint32_t nranks, rank;
    unsigned char nonce[8];
};

struct ncclComm {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* state, abort and op changes */
    pthread_t worker;
    int has_worker, blocking;
    int state; /* what ncclCommGetAsyncError reports: ncclInProgress while init or an op runs */
    int abort;
    int fd; /* the root connection (-1: none); abort shuts it down to wake a blocked worker */
    int rank, nranks;
    struct id_fields id;
    int op_ready; /* the one all-reduce in flight, handed to the worker */
    const float *send;
    float *recv;
    size_t count;
    int in_group;
    struct ncclComm *group_next;
};

/* Blocking communicators whose waits ncclGroupEnd owes, per calling thread. */
static _Thread_local int group_depth;
static _Thread_local struct ncclComm *group_head;

/* ------------------------------------------------------------ sockets */

/* MSG_NOSIGNAL: a peer gone must be an error code, not a SIGPIPE killing gangway. */
static int send_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* 0: all read; 1: the peer closed before the first byte; -1: error, timeout or short. */
static int recv_all(int fd, void *buf, size_t n) {
    char *p = buf;
    const size_t want = n;
    while (n > 0) {
        const ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0 && n == want) return 1;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void tune(int fd, int idle_timeout) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (idle_timeout) {
        const struct timeval tv = {IDLE_S, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
}

/* ------------------------------------------------------------ the root */

struct root {
    int lfd;
    unsigned char nonce[8];
};

/* One all-reduce round: 1 to go on, 0 when a rank closed (the communicator is
 * gone) or broke the protocol. The sum runs in rank order, so every rank gets
 * bit-identical floats. */
static int serve_round(const int *fds, uint32_t n, float **acc, size_t *cap, float *chunk, size_t chunk_len) {
    uint64_t count = 0;
    for (uint32_t r = 0; r < n; ++r) {
        uint64_t c;
        if (recv_all(fds[r], &c, sizeof c) != 0 || (r > 0 && c != count)) return 0;
        count = c;
    }
    if (count > SIZE_MAX / sizeof(float)) return 0;
    if (count > *cap) {
        float *p = realloc(*acc, count * sizeof(float));
        if (!p) return 0;
        *acc = p;
        *cap = count;
    }
    if (recv_all(fds[0], *acc, count * sizeof(float)) < 0) return 0;
    for (uint32_t r = 1; r < n; ++r)
        for (size_t off = 0; off < count; off += chunk_len) {
            const size_t len = count - off < chunk_len ? count - off : chunk_len;
            if (recv_all(fds[r], chunk, len * sizeof(float)) != 0) return 0;
            for (size_t i = 0; i < len; ++i) (*acc)[off + i] += chunk[i];
        }
    for (uint32_t r = 0; r < n; ++r)
        if (send_all(fds[r], *acc, count * sizeof(float)) != 0) return 0;
    return 1;
}

static void *root_main(void *arg) {
    struct root root = *(struct root *)arg;
    free(arg);
    int *fds = NULL;
    uint32_t nranks = 0, joined = 0;
    float *acc = NULL, *chunk = NULL;
    size_t cap = 0;
    const size_t chunk_len = 1 << 18;

    /* Gather: a connection with a wrong nonce, rank or nranks is dropped, and
     * its rank sees init fail. */
    while (nranks == 0 || joined < nranks) {
        struct pollfd p = {root.lfd, POLLIN, 0};
        const int k = poll(&p, 1, IDLE_S * 1000);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) goto out;
        const int fd = accept4(root.lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        tune(fd, 1);
        struct hello h;
        if (recv_all(fd, &h, sizeof h) != 0 || memcmp(h.magic, MAGIC, 8) != 0 || memcmp(h.nonce, root.nonce, 8) != 0 ||
            h.nranks == 0 || h.nranks > MAX_RANKS || (nranks && h.nranks != nranks) || h.rank >= h.nranks ||
            (fds && fds[h.rank] >= 0)) {
            close(fd);
            continue;
        }
        if (!fds) {
            if (!(fds = malloc(h.nranks * sizeof *fds))) {
                close(fd);
                goto out;
            }
            nranks = h.nranks;
            for (uint32_t r = 0; r < nranks; ++r) fds[r] = -1;
        }
        fds[h.rank] = fd;
        ++joined;
    }
    close(root.lfd);
    root.lfd = -1;
    for (uint32_t r = 0; r < nranks; ++r)
        if (send_all(fds[r], "K", 1) != 0) goto out;

    if (!(chunk = malloc(chunk_len * sizeof *chunk))) goto out;
    while (serve_round(fds, nranks, &acc, &cap, chunk, chunk_len)) {
    }
out:
    /* Closing every connection ends every rank still waiting on us with an error. */
    if (root.lfd >= 0) close(root.lfd);
    for (uint32_t r = 0; fds && r < nranks; ++r)
        if (fds[r] >= 0) close(fds[r]);
    free(fds);
    free(acc);
    free(chunk);
    return NULL;
}

ncclResult_t ncclGetVersion(int *version) {
    if (!version) return ncclInvalidArgument;
    *version = 21805; /* 2.18.5: has non-blocking communicators */
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *out) {
    if (!out) return ncclInvalidArgument;
    struct id_fields f;
    memset(&f, 0, sizeof f);
    memcpy(f.magic, MAGIC, 8);
    const char *addr = getenv("GANGWAY_FAKE_NCCL_ADDR");
    if (!addr || !*addr) addr = getenv("NODE_ADDR");
    if (!addr || !*addr) addr = "127.0.0.1";
    if (inet_pton(AF_INET, addr, &f.addr) != 1) {
        fprintf(stderr, "fake_nccl: \"%s\" is not an IPv4 address (GANGWAY_FAKE_NCCL_ADDR or NODE_ADDR)\n", addr);
        return ncclInvalidArgument;
    }
    if (getrandom(f.nonce, sizeof f.nonce, 0) != (ssize_t)sizeof f.nonce) return ncclSystemError;

    struct root *root = malloc(sizeof *root);
    if (!root) return ncclSystemError;
    memcpy(root->nonce, f.nonce, sizeof f.nonce);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = 0};
    socklen_t len = sizeof sa;
    pthread_attr_t attr;
    pthread_t t;
    root->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (root->lfd < 0 || bind(root->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(root->lfd, 256) != 0 ||
        getsockname(root->lfd, (struct sockaddr *)&sa, &len) != 0)
        goto fail;
    f.port = sa.sin_port;
    /* Detached: the root outlives this call and ends by itself (all ranks
     * gone, or IDLE_S of silence); nothing joins it. */
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    const int rc = pthread_create(&t, &attr, root_main, root);
    pthread_attr_destroy(&attr);
    if (rc != 0) goto fail;
    memset(out, 0, sizeof *out);
    memcpy(out->internal, &f, sizeof f);
    return ncclSuccess;
fail:
    if (root->lfd >= 0) close(root->lfd);
    free(root);
    return ncclSystemError;
}

/* ------------------------------------------------------------ a rank's worker */

static int aborted(struct ncclComm *c) {
    pthread_mutex_lock(&c->mu);
    const int a = c->abort;
    pthread_mutex_unlock(&c->mu);
    return a;
}

/* Sleeps up to `seconds`, cut short by an abort; whether aborted. */
static int sleep_unless_aborted(struct ncclComm *c, double seconds) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    const long ns = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&c->mu);
    while (!c->abort && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
    }
    const int a = c->abort;
    pthread_mutex_unlock(&c->mu);
    return a;
}

static void set_fd(struct ncclComm *c, int fd) {
    pthread_mutex_lock(&c->mu);
    c->fd = fd;
    pthread_mutex_unlock(&c->mu);
}

/* Connects to the root, retrying while it is not there yet (another node's
 * gangway may still be starting), for CONNECT_S. Non-blocking connect in short
 * slices: shutdown() does not interrupt a connect(), so an abort is seen here
 * by polling. On success c->fd is the connection. */
static int connect_root(struct ncclComm *c) {
    const double deadline = now_s() + CONNECT_S;
    const struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = c->id.addr, .sin_port = c->id.port};
    for (;;) {
        const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) return ncclSystemError;
        set_fd(c, fd);
        int ok = connect(fd, (const struct sockaddr *)&sa, sizeof sa) == 0;
        if (!ok && errno == EINPROGRESS)
            while (!aborted(c) && now_s() < deadline) {
                struct pollfd p = {fd, POLLOUT, 0};
                const int k = poll(&p, 1, 100);
                if (k < 0 && errno != EINTR) break;
                if (k > 0) {
                    int err = 0;
                    socklen_t len = sizeof err;
                    ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
                    break;
                }
            }
        if (ok && !aborted(c)) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            tune(fd, 0);
            return ncclSuccess;
        }
        set_fd(c, -1);
        close(fd);
        if (now_s() >= deadline || sleep_unless_aborted(c, 0.1)) return ncclSystemError;
    }
}

static void log_join(const struct ncclComm *c) {
    const char *path = getenv("GANGWAY_FAKE_NCCL_LOG");
    if (!path || !*path) return;
    char host[256], line[512];
    const unsigned char *n = c->id.nonce;
    const int len = snprintf(line, sizeof line, "host=%s rank=%d nranks=%d nonce=%02x%02x%02x%02x%02x%02x%02x%02x\n",
                             fake_node_name(host, sizeof host), c->rank, c->nranks, n[0], n[1], n[2], n[3], n[4], n[5],
                             n[6], n[7]);
    /* One write() to an O_APPEND file: lines from concurrent ranks never interleave. */
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)len) < 0) {
    }
    close(fd);
}

static int join(struct ncclComm *c) {
    int rc = connect_root(c);
    if (rc != ncclSuccess) return rc;
    struct hello h = {.nranks = (uint32_t)c->nranks, .rank = (uint32_t)c->rank};
    memcpy(h.magic, MAGIC, 8);
    memcpy(h.nonce, c->id.nonce, 8);
    char ack = 0;
    if (send_all(c->fd, &h, sizeof h) != 0) return ncclSystemError;
    /* Blocks until every rank has joined; EOF: the root rejected us or went away. */
    if (recv_all(c->fd, &ack, 1) != 0) return ncclSystemError;
    return ack == 'K' ? ncclSuccess : ncclInternalError;
}

static void set_state(struct ncclComm *c, int state) {
    pthread_mutex_lock(&c->mu);
    c->state = state;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void *worker_main(void *arg) {
    struct ncclComm *c = arg;
    const char *local = getenv("GANGWAY_FAKE_GPUS");
    const int spans_nodes = c->nranks > (local ? atoi(local) : 0);
    if (fake_this_host_listed("GANGWAY_FAKE_NCCL_HANG_HOSTS") ||
        (spans_nodes && fake_this_host_listed("GANGWAY_FAKE_NCCL_NET_HANG_HOSTS"))) {
        /* A hung init: stays ncclInProgress until the caller gives up and aborts. */
        pthread_mutex_lock(&c->mu);
        while (!c->abort) pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    int rc = join(c);
    if (rc == ncclSuccess) log_join(c);
    set_state(c, rc);
    while (rc == ncclSuccess) {
        pthread_mutex_lock(&c->mu);
        while (!c->op_ready && !c->abort) pthread_cond_wait(&c->cv, &c->mu);
        const int stop = c->abort;
        const float *send = c->send;
        float *recv = c->recv;
        const uint64_t count = c->count;
        pthread_mutex_unlock(&c->mu);
        if (stop) break;
        if (spans_nodes && fake_this_host_listed("GANGWAY_FAKE_NCCL_NET_SLOW_HOSTS")) {
            sleep_s(0.3); /* a slow network path: every collective across nodes waits 300 ms */
        }
        /* Sends everything before reading: send and recv may be one buffer. */
        rc = send_all(c->fd, &count, sizeof count) == 0 && send_all(c->fd, send, count * sizeof(float)) == 0 &&
                     recv_all(c->fd, recv, count * sizeof(float)) == 0
                 ? ncclSuccess
                 : ncclSystemError;
        if (rc == ncclSuccess && spans_nodes && count > 0 && fake_this_host_listed("GANGWAY_FAKE_NCCL_NET_CORRUPT_HOSTS"))
            recv[count / 2] += 1.0f; /* corrupted on its way in from the network: this rank's sum is off */
        pthread_mutex_lock(&c->mu);
        c->op_ready = 0;
        c->state = rc; /* an error sticks: the connection is gone */
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return NULL;
}

/* ------------------------------------------------------------ communicators */

static int wait_done(struct ncclComm *c) {
    pthread_mutex_lock(&c->mu);
    while (c->state == ncclInProgress && !c->abort) pthread_cond_wait(&c->cv, &c->mu);
    const int s = c->state;
    pthread_mutex_unlock(&c->mu);
    return s;
}

/* What a call that started work on `c` returns. */
static ncclResult_t started(struct ncclComm *c) {
    if (!c->blocking) {
        pthread_mutex_lock(&c->mu);
        const int s = c->state;
        pthread_mutex_unlock(&c->mu);
        return s;
    }
    if (group_depth > 0) {
        if (!c->in_group) {
            c->in_group = 1;
            c->group_next = group_head;
            group_head = c;
        }
        return ncclSuccess;
    }
    return wait_done(c);
}

static ncclResult_t init(ncclComm_t *out, int nranks, ncclUniqueId id, int rank, int blocking) {
    if (!out || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    struct id_fields f;
    memcpy(&f, id.internal, sizeof f);
    if (memcmp(f.magic, MAGIC, 8) != 0) return ncclInvalidArgument; /* not from our ncclGetUniqueId */
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c) return ncclSystemError;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->mu, NULL);
    c->fd = -1;
    c->nranks = nranks;
    c->rank = rank;
    c->id = f;
    c->blocking = blocking;
    c->state = ncclInProgress;
    /* Set even on failure, as NCCL does, so the caller can abort or destroy it. */
    *out = c;
    if (fake_this_host_listed("GANGWAY_FAKE_NCCL_FAIL_HOSTS")) {
        c->state = ncclSystemError;
        return ncclSystemError;
    }
    if (pthread_create(&c->worker, NULL, worker_main, c) != 0) {
        c->state = ncclSystemError;
        return ncclSystemError;
    }
    c->has_worker = 1;
    return started(c);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    return init(comm, nranks, id, rank, 1);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config) {
    /* NCCL's default (NCCL_CONFIG_UNDEF_INT, or a config too short to hold the field) is blocking. */
    const int nonblocking = config && config->size >= offsetof(ncclConfig_t, blocking) + sizeof(int) && config->blocking == 0;
    return init(comm, nranks, id, rank, !nonblocking);
}

ncclResult_t ncclGroupStart(void) {
    ++group_depth;
    return ncclSuccess;
}

/* Non-blocking communicators' work runs in their workers already; blocking
 * ones are waited for here, the outermost group's end. */
ncclResult_t ncclGroupEnd(void) {
    if (group_depth == 0) return ncclInvalidUsage;
    if (--group_depth > 0) return ncclSuccess;
    ncclResult_t first = ncclSuccess;
    while (group_head) {
        struct ncclComm *c = group_head;
        group_head = c->group_next;
        c->in_group = 0;
        const int s = wait_done(c);
        if (first == ncclSuccess) first = s;
    }
    return first;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, ncclComm_t c,
                           void *stream) {
    (void)stream; /* fake streams are synchronous: the comm's state says when it is done */
    if (!c || datatype != ncclFloat32 || op != ncclSum || (count && (!sendbuff || !recvbuff))) return ncclInvalidArgument;
    pthread_mutex_lock(&c->mu);
    if (c->state != ncclSuccess) {
        /* In progress: init unfinished, or an all-reduce already in flight (one at a time here). */
        const int s = c->state == ncclInProgress ? ncclInvalidUsage : c->state;
        pthread_mutex_unlock(&c->mu);
        return s;
    }
    c->send = sendbuff;
    c->recv = recvbuff;
    c->count = count;
    c->op_ready = 1;
    c->state = ncclInProgress;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return started(c);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *state) {
    if (!c || !state) return ncclInvalidArgument;
    pthread_mutex_lock(&c->mu);
    *state = c->state;
    pthread_mutex_unlock(&c->mu);
    return ncclSuccess;
}

/* Abort and destroy alike: neither may hang, whatever the worker is blocked
 * in (connect slices see the flag, recv/send are woken by shutdown, the hang
 * fault waits on the condition variable). */
static ncclResult_t finish(ncclComm_t c) {
    if (!c) return ncclInvalidArgument;
    pthread_mutex_lock(&c->mu);
    c->abort = 1;
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->has_worker) pthread_join(c->worker, NULL);
    if (c->fd >= 0) close(c->fd);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) { return finish(comm); }
ncclResult_t ncclCommDestroy(ncclComm_t comm) { return finish(comm); }

const char *ncclGetErrorString(ncclResult_t r) {
    switch (r) {
        case ncclSuccess: return "no error";
        case ncclUnhandledCudaError: return "unhandled cuda error";
        case ncclSystemError: return "unhandled system error";
        case ncclInternalError: return "internal error";
        case ncclInvalidArgument: return "invalid argument";
        case ncclInvalidUsage: return "invalid usage";
        case ncclRemoteError: return "remote process exited or there was a network error";
        case ncclInProgress: return "NCCL operation in progress";
        default: return "unknown result code";
    }
}
