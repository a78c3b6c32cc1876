/* TEST DOUBLE -- not rdma-core's libibverbs. A fake libibverbs.so.1 for
 * machines without RDMA hardware (no rdma_rxe either): the development VMs, CI
 * and the namespace test cluster. gangway dlopen()s "libibverbs.so.1", so
 * LD_LIBRARY_PATH=OUTDIR puts this one in its place, and the real RdmaEndpoint
 * (lib/sys/verbs_stage.cpp) runs end to end between processes and nodes.
 *
 * It includes the real <infiniband/verbs.h> (rdma-core 44 here), so every
 * struct is laid out as the caller's. Calls that are static inline in that
 * header land here through the context: ibv_post_send and ibv_poll_cq through
 * context->ops, and ___ibv_query_port (what the ibv_query_port macro expands
 * to) through the extended verbs_context (abi_compat == __VERBS_ABI_IS_EXTENDED).
 * Symbols carry no version (the real ones are e.g. ibv_query_port@IBVERBS_1.1);
 * plain dlsym() finds them as well.
 *
 * What it emulates: RoCE ports (one per device, ACTIVE, MTU 4096, GID
 * ::ffff:a.b.c.d at every index) and RC queue pairs doing RDMA WRITE over TCP:
 *   - ibv_create_qp opens a TCP listener (any address, ephemeral port) served by
 *     an accept thread; qp_num is that port. This is the responder: it takes
 *     one connection at a time, holds it until its QP reaches RTR (as hardware
 *     drops packets to a QP that is not ready and the requester retries), then
 *     checks the hello {src qpn, dst qpn, psn} against its dest_qp_num and
 *     rq_psn, and serves frames {rkey, remote addr, len, payload}: the payload
 *     goes straight into the registered memory when the rkey names an MR of the
 *     QP's protection domain with remote write access and the range fits, and
 *     each frame is acknowledged with a completion status (0, or
 *     IBV_WC_REM_ACCESS_ERR after discarding it).
 *   - ibv_modify_qp checks the attribute masks each RC transition requires (as
 *     the kernel does) and records dest_qp_num, rq_psn and the peer's IPv4
 *     address (the last 4 bytes of ah_attr.grh.dgid; RoCE needs the GRH) at
 *     RTR, and timeout, retry_cnt and sq_psn at RTS. The retry budget is
 *     4.096 us * 2^timeout * (retry_cnt + 1), at least 100 ms (timeout 0,
 *     "infinite" in the spec, and anything longer count as 60 s).
 *   - ibv_post_send queues RDMA WRITEs (only those) for the QP's sender thread,
 *     which connects on first use, sends each frame, waits for its ack and
 *     queues the completion: in order, one per signalled WR (any error is
 *     always signalled). A peer that cannot be reached or a connection that
 *     breaks or stalls gives IBV_WC_RETRY_EXC_ERR once the retry budget from
 *     the WR's start has passed (as hardware retries that long); the QP goes to
 *     the error state and every later WR completes with IBV_WC_WR_FLUSH_ERR.
 *     A local SGE outside a registered MR gives IBV_WC_LOC_PROT_ERR.
 *   - ibv_destroy_qp wakes and joins both threads and closes the sockets; it
 *     never waits on the network. Destroying a CQ or PD still in use: EBUSY.
 *
 * Environment:
 *   GANGWAY_FAKE_IB_DEVICES=mlx5_0,mlx5_1  the devices (default: none, an empty list)
 *   GANGWAY_FAKE_IB_ADDR=IPv4   the address in the GIDs, where peers reach this
 *                               node's QPs (else NODE_ADDR, else 127.0.0.1)
 *   GANGWAY_FAKE_IB_GBPS=R      pacing, Gb/s (bits): each write takes at least
 *                               bytes*8/(R*1e9) s, so tests are deterministic
 *                               on a small shared VM (default: unpaced)
 *   GANGWAY_FAKE_IB_SLOW_HOSTS  on these nodes writes run at a quarter of that
 *                               rate (unpaced: take 4 times as long as they did),
 *                               and when paced, writes *to* them too (a port that
 *                               trained down is slow both ways)
 *   GANGWAY_FAKE_IB_DEAD_HOSTS  on these nodes a QP never connects (its writes
 *                               fail with IBV_WC_RETRY_EXC_ERR after the retry
 *                               budget) and its listener drops every connection
 *                               (so writes *to* the node fail the same way)
 * The node's name is SLURMD_NODENAME, else gethostname() (fake_host.h). The
 * fault and pacing variables are read when a QP is created.
 * Peers are assumed to share one byte order (they are one test cluster). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fake_host.h"
#include "fake_time.h"

#define MAX_DEVICES 64
#define GID_TABLE_LEN 256
#define MAX_QP_WR 4096
#define MAX_SGE 16
#define MAX_INLINE 256
#define MAX_MSG (1u << 30)
#define PAYLOAD_IDLE_S 30.0 /* the responder drops a connection stalled this long inside a frame */
#define PACE_SLACK_S 0.002  /* pacing catches up on oversleeps this small, so the average rate holds */
#define HELLO_MAGIC "GWFIBV01"
#define FRAME_MAGIC 0x46494257u /* "WBIF" */

/* What travels on a QP's connection, requester to responder: one hello, then
 * frames; each frame is answered by a uint32_t completion status. */
struct hello {
    char magic[8];
    uint32_t src_qpn, dst_qpn, psn, pad;
};
struct frame {
    uint32_t magic, rkey;
    uint64_t addr, len;
};

/* ------------------------------------------------------------ objects */

struct fake_ctx {
    struct verbs_context v; /* v.context is what the caller holds; the last field */
};

struct fake_pd {
    struct ibv_pd pd;
    int refs; /* MRs and QPs on it; under g_mu */
};

struct fake_mr {
    struct ibv_mr mr;
    int access;
    int inflight; /* responders writing into it right now; under g_mu */
    struct fake_mr *next;
};

struct fake_cq {
    struct ibv_cq cq;
    pthread_mutex_t mu;
    struct ibv_wc *ring; /* grows rather than overruns */
    size_t cap, head, n;
    int refs; /* QPs on it; under g_mu */
};

/* A send work request as queued: the SGEs copied (their memory is read when
 * the write goes out, as hardware does), inline data copied at post time. */
struct swr {
    uint64_t wr_id;
    int signaled, num_sge, is_inline;
    uint64_t raddr;
    uint32_t rkey;
    uint64_t len;
    struct ibv_sge sge[MAX_SGE];
    unsigned char data[MAX_INLINE];
};

struct fake_qp {
    struct ibv_qp qp; /* qp.state is under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* queue, state and stop changes */
    int stop;
    int wake; /* eventfd, written once at destroy: wakes every poll of both threads */
    int lfd;  /* the listener; qp_num is its port */
    pthread_t acceptor, sender;
    int has_acceptor, has_sender;
    unsigned epoch; /* bumped by a move to RESET: the connections of before are dropped */

    /* attributes (under mu) */
    int sq_sig_all;
    uint32_t max_wr, max_sge, max_inline;
    int access;
    uint32_t dest_qpn, rq_psn, sq_psn;
    struct in_addr peer; /* network order */
    int peer_ok;         /* the dgid held an IPv4-mapped address */
    unsigned timeout, retry_cnt;
    double budget; /* seconds, the retry budget from timeout and retry_cnt */

    /* the send queue: a ring of max_wr; qn counts the WRs not yet completed,
     * the head one included while the sender works on it */
    struct swr *q;
    uint32_t qhead, qn;

    /* faults and pacing, read at create */
    double bytes_per_s; /* 0: unpaced */
    int slow, dead;

    /* the sender thread's own */
    int sfd;
    unsigned sfd_epoch;
    double pace_until;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER; /* an MR's inflight dropped */
static struct ibv_device *g_devs[MAX_DEVICES];         /* never freed: contexts point at them */
static int g_ndevs;
static struct fake_mr *g_mrs;
static uint32_t g_next_key = 0x1000;

/* ------------------------------------------------------------ time and I/O */

/* Waits until `fd` is ready for `events` (fd < 0: just waits), until
 * `deadline` (now_s() seconds; negative: none) or until `wake` fires.
 * 1: ready; 0: the deadline passed; -1: woken (the QP is being destroyed). */
static int wait_fd(int fd, short events, int wake, double deadline) {
    for (;;) {
        struct pollfd p[2] = {{wake, POLLIN, 0}, {fd, events, 0}};
        struct timespec ts, *tp = NULL;
        if (deadline >= 0) {
            const double left = deadline - now_s();
            if (left <= 0) return 0;
            ts.tv_sec = (time_t)left;
            ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
            tp = &ts;
        }
        const int k = ppoll(p, fd >= 0 ? 2 : 1, tp, NULL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (p[0].revents) return -1;
        if (k > 0 && p[1].revents) return 1;
    }
}

/* Sleeps until `t`; whether it was woken instead. */
static int sleep_until(int wake, double t) { return wait_fd(-1, 0, wake, t) < 0; }

/* Sends all of buf on a non-blocking socket; MSG_NOSIGNAL: a peer gone must be
 * an error, not a SIGPIPE killing gangway. Gives up when `idle` seconds pass
 * without progress (negative: never). 0: sent; -1: failed. */
static int io_send(int fd, const void *buf, size_t n, int wake, double idle) {
    const char *p = buf;
    while (n > 0) {
        const ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, POLLOUT, wake, idle < 0 ? -1 : now_s() + idle) != 1) return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* Receives exactly n bytes (buf NULL: discards them), as io_send. 0: all read;
 * 1: the peer closed before the first byte; -1: error, stall, short or woken. */
static int io_recv(int fd, void *buf, size_t n, int wake, double idle) {
    char *p = buf, scratch[65536];
    const size_t want = n;
    while (n > 0) {
        const size_t chunk = buf ? n : (n < sizeof scratch ? n : sizeof scratch);
        const ssize_t k = recv(fd, buf ? p : scratch, chunk, MSG_DONTWAIT);
        if (k > 0) {
            if (buf) p += k;
            n -= (size_t)k;
            continue;
        }
        if (k == 0) return n == want ? 1 : -1;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (wait_fd(fd, POLLIN, wake, idle < 0 ? -1 : now_s() + idle) != 1) return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

static void tune(int fd) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ------------------------------------------------------------ helpers */

/* Threads of ours never take signals meant for the caller's threads. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The address this node's GIDs carry, network order; -1 when malformed. */
static int node_addr(struct in_addr *out) {
    const char *a = getenv("GANGWAY_FAKE_IB_ADDR");
    if (!a || !*a) a = getenv("NODE_ADDR");
    if (!a || !*a) a = "127.0.0.1";
    if (inet_pton(AF_INET, a, out) != 1) {
        fprintf(stderr, "fake_verbs: \"%s\" is not an IPv4 address (GANGWAY_FAKE_IB_ADDR or NODE_ADDR)\n", a);
        return -1;
    }
    return 0;
}

/* A registered MR by key, or NULL; under g_mu. */
static struct fake_mr *find_mr(uint32_t key) {
    for (struct fake_mr *m = g_mrs; m; m = m->next)
        if (m->mr.rkey == key) return m;
    return NULL;
}

static int in_mr(const struct fake_mr *m, uint64_t addr, uint64_t len) {
    const uint64_t base = (uintptr_t)m->mr.addr;
    return addr >= base && len <= m->mr.length && addr - base <= m->mr.length - len;
}

static void cq_push(struct fake_cq *cq, const struct ibv_wc *wc) {
    pthread_mutex_lock(&cq->mu);
    if (cq->n == cq->cap) {
        const size_t cap = cq->cap ? cq->cap * 2 : 64;
        struct ibv_wc *r = malloc(cap * sizeof *r);
        if (!r) { /* out of memory: the completion is lost, as on an overrun */
            pthread_mutex_unlock(&cq->mu);
            return;
        }
        for (size_t i = 0; i < cq->n; ++i) r[i] = cq->ring[(cq->head + i) % cq->cap];
        free(cq->ring);
        cq->ring = r;
        cq->cap = cap;
        cq->head = 0;
    }
    cq->ring[(cq->head + cq->n) % cq->cap] = *wc;
    ++cq->n;
    pthread_mutex_unlock(&cq->mu);
}

/* ------------------------------------------------------------ devices */

struct ibv_device **(ibv_get_device_list)(int *num_devices) {
    const char *env = getenv("GANGWAY_FAKE_IB_DEVICES");
    struct ibv_device **list = calloc(MAX_DEVICES + 1, sizeof *list);
    int n = 0;
    if (!list) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&g_mu);
    while (env && *env && n < MAX_DEVICES) {
        const char *end = strchr(env, ',');
        const size_t len = end ? (size_t)(end - env) : strlen(env);
        if (len > 0 && len < IBV_SYSFS_NAME_MAX) {
            struct ibv_device *d = NULL;
            for (int i = 0; i < g_ndevs && !d; ++i)
                if (strncmp(g_devs[i]->name, env, len) == 0 && g_devs[i]->name[len] == '\0') d = g_devs[i];
            if (!d && g_ndevs < MAX_DEVICES && (d = calloc(1, sizeof *d))) {
                d->node_type = IBV_NODE_CA;
                d->transport_type = IBV_TRANSPORT_IB;
                memcpy(d->name, env, len);
                snprintf(d->dev_name, sizeof d->dev_name, "uverbs%d", g_ndevs);
                snprintf(d->dev_path, sizeof d->dev_path, "/sys/class/infiniband_verbs/uverbs%d", g_ndevs);
                snprintf(d->ibdev_path, sizeof d->ibdev_path, "/sys/class/infiniband/%s", d->name);
                g_devs[g_ndevs++] = d;
            }
            int dup = 0;
            for (int i = 0; i < n; ++i) dup |= list[i] == d;
            if (d && !dup) list[n++] = d;
        }
        env = end ? end + 1 : NULL;
    }
    pthread_mutex_unlock(&g_mu);
    if (num_devices) *num_devices = n;
    return list;
}

void ibv_free_device_list(struct ibv_device **list) { free(list); }

const char *ibv_get_device_name(struct ibv_device *device) { return device ? device->name : NULL; }

__be64 ibv_get_device_guid(struct ibv_device *device) {
    uint64_t h = 0x0002c90300000000ull; /* a made-up GUID from the name */
    for (const char *s = device ? device->name : ""; *s; ++s) h = h * 131 + (unsigned char)*s;
    return htobe64(h);
}

/* ------------------------------------------------------------ ports */

static void fill_port(struct ibv_port_attr *a) {
    memset(a, 0, sizeof *a);
    a->state = IBV_PORT_ACTIVE;
    a->max_mtu = IBV_MTU_4096;
    a->active_mtu = IBV_MTU_4096;
    a->gid_tbl_len = GID_TABLE_LEN;
    a->port_cap_flags = IBV_PORT_CM_SUP;
    a->max_msg_sz = MAX_MSG;
    a->pkey_tbl_len = 1;
    a->lid = 0; /* RoCE: no LIDs */
    a->max_vl_num = 1;
    a->active_width = 2;  /* 4X */
    a->active_speed = 64; /* HDR */
    a->phys_state = 5;    /* LinkUp */
    a->link_layer = IBV_LINK_LAYER_ETHERNET;
    a->flags = IBV_QPF_GRH_REQUIRED;
}

/* The extended query (what the header's ibv_query_port macro calls). */
static int ctx_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len) {
    if (!ctx || !attr || port != 1) return EINVAL;
    struct ibv_port_attr a;
    fill_port(&a);
    memcpy(attr, &a, len < sizeof a ? len : sizeof a);
    return 0;
}

/* The exported compat symbol: fills the old, shorter struct (everything up to
 * `flags`), as rdma-core's does. */
int(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr) {
    return ctx_query_port(ctx, port, (struct ibv_port_attr *)attr, offsetof(struct ibv_port_attr, port_cap_flags2));
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid) {
    struct in_addr a;
    if (!ctx || !gid || port != 1 || index < 0 || index >= GID_TABLE_LEN || node_addr(&a) != 0) return -1;
    memset(gid, 0, sizeof *gid);
    gid->raw[10] = gid->raw[11] = 0xff; /* ::ffff:a.b.c.d, a RoCE v2 GID */
    memcpy(gid->raw + 12, &a, 4);
    return 0;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a) {
    if (!ctx || !a) return EINVAL;
    memset(a, 0, sizeof *a);
    snprintf(a->fw_ver, sizeof a->fw_ver, "0.0.0 (gangway fake)");
    a->node_guid = ibv_get_device_guid(ctx->device);
    a->sys_image_guid = a->node_guid;
    a->max_mr_size = UINT64_MAX;
    a->page_size_cap = 4096;
    a->vendor_id = 0x02c9;
    a->max_qp = 1024;
    a->max_qp_wr = MAX_QP_WR;
    a->max_sge = MAX_SGE;
    a->max_cq = 1024;
    a->max_cqe = 1 << 22;
    a->max_mr = 1 << 16;
    a->max_pd = 1 << 16;
    a->max_qp_rd_atom = a->max_qp_init_rd_atom = 16;
    a->max_pkeys = 1;
    a->phys_port_cnt = 1;
    return 0;
}

/* ------------------------------------------------------------ completion queues */

static int ctx_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc) {
    struct fake_cq *cq = (struct fake_cq *)ibcq;
    int k = 0;
    pthread_mutex_lock(&cq->mu);
    while (k < num && cq->n > 0) {
        wc[k++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        --cq->n;
    }
    pthread_mutex_unlock(&cq->mu);
    return k;
}

static int ctx_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
    (void)cq, (void)solicited_only;
    return 0; /* no completion channels here */
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel,
                             int comp_vector) {
    (void)comp_vector;
    if (!ctx || cqe < 1 || cqe > (1 << 22) || channel) {
        errno = EINVAL;
        return NULL;
    }
    struct fake_cq *cq = calloc(1, sizeof *cq);
    if (!cq) {
        errno = ENOMEM;
        return NULL;
    }
    cq->cq.context = ctx;
    cq->cq.cq_context = cq_context;
    cq->cq.cqe = cqe;
    pthread_mutex_init(&cq->cq.mutex, NULL);
    pthread_cond_init(&cq->cq.cond, NULL);
    pthread_mutex_init(&cq->mu, NULL);
    return &cq->cq;
}

int ibv_destroy_cq(struct ibv_cq *ibcq) {
    struct fake_cq *cq = (struct fake_cq *)ibcq;
    if (!cq) return EINVAL;
    pthread_mutex_lock(&g_mu);
    const int busy = cq->refs > 0;
    pthread_mutex_unlock(&g_mu);
    if (busy) return EBUSY; /* a QP still uses it */
    pthread_mutex_destroy(&cq->mu);
    pthread_mutex_destroy(&cq->cq.mutex);
    pthread_cond_destroy(&cq->cq.cond);
    free(cq->ring);
    free(cq);
    return 0;
}

/* ------------------------------------------------------------ the requester */

/* Connects to the peer's QP and says hello, before `deadline`; the socket or -1. */
static int connect_peer(struct fake_qp *qp, struct in_addr addr, uint32_t dest_qpn, uint32_t psn, double deadline) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = addr, .sin_port = htons((uint16_t)dest_qpn)};
    while (dest_qpn > 0 && dest_qpn <= 0xffff) {
        const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) return -1;
        int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (!ok && errno == EINPROGRESS && wait_fd(fd, POLLOUT, qp->wake, deadline) == 1) {
            int err = 0;
            socklen_t len = sizeof err;
            ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
        }
        if (ok) {
            tune(fd);
            struct hello h;
            memset(&h, 0, sizeof h);
            memcpy(h.magic, HELLO_MAGIC, 8);
            h.src_qpn = qp->qp.qp_num;
            h.dst_qpn = dest_qpn;
            h.psn = psn;
            const double left = deadline - now_s();
            if (left > 0 && io_send(fd, &h, sizeof h, qp->wake, left) == 0) return fd;
        }
        close(fd);
        /* refused (no QP there yet, or a dead node), or unreachable: retry, as hardware does */
        const double retry = now_s() + 0.02;
        if (retry >= deadline || sleep_until(qp->wake, retry)) return -1;
    }
    return -1;
}

/* One RDMA WRITE: the completion status. Called by the sender thread unlocked;
 * the WR's slot is not touched by post_send meanwhile. */
static enum ibv_wc_status do_write(struct fake_qp *qp, const struct swr *w) {
    pthread_mutex_lock(&qp->mu);
    const double budget = qp->budget;
    const struct in_addr peer = qp->peer;
    const int peer_ok = qp->peer_ok;
    const uint32_t dest_qpn = qp->dest_qpn, psn = qp->sq_psn;
    const unsigned epoch = qp->epoch;
    pthread_mutex_unlock(&qp->mu);
    const double t0 = now_s(), fail_at = t0 + budget;

    if (!w->is_inline) { /* the local SGEs must lie in MRs of the QP's PD */
        pthread_mutex_lock(&g_mu);
        int ok = 1;
        for (int i = 0; i < w->num_sge && ok; ++i) {
            const struct fake_mr *m = find_mr(w->sge[i].lkey);
            ok = m && m->mr.pd == qp->qp.pd && in_mr(m, w->sge[i].addr, w->sge[i].length);
        }
        pthread_mutex_unlock(&g_mu);
        if (!ok) return IBV_WC_LOC_PROT_ERR;
    }
    if (qp->sfd >= 0 && qp->sfd_epoch != epoch) {
        close(qp->sfd);
        qp->sfd = -1;
    }
    if (qp->sfd < 0) {
        if (qp->dead || !peer_ok || (qp->sfd = connect_peer(qp, peer, dest_qpn, psn, fail_at)) < 0) {
            sleep_until(qp->wake, fail_at);
            return IBV_WC_RETRY_EXC_ERR;
        }
        qp->sfd_epoch = epoch;
    }

    struct frame f = {FRAME_MAGIC, w->rkey, w->raddr, w->len};
    uint32_t status = 0;
    int ok = io_send(qp->sfd, &f, sizeof f, qp->wake, budget) == 0;
    if (w->is_inline) {
        ok = ok && io_send(qp->sfd, w->data, w->len, qp->wake, budget) == 0;
    } else {
        for (int i = 0; i < w->num_sge && ok; ++i)
            ok = io_send(qp->sfd, (const void *)(uintptr_t)w->sge[i].addr, w->sge[i].length, qp->wake, budget) == 0;
    }
    ok = ok && io_recv(qp->sfd, &status, sizeof status, qp->wake, budget) == 0;
    if (!ok) { /* broken, stalled or refused by the responder: retried out */
        close(qp->sfd);
        qp->sfd = -1;
        sleep_until(qp->wake, fail_at);
        return IBV_WC_RETRY_EXC_ERR;
    }
    if (status != IBV_WC_SUCCESS) return (enum ibv_wc_status)status;

    /* Pacing: the write takes at least its share of the line rate. */
    double dur = 0;
    if (qp->bytes_per_s > 0)
        dur = (double)w->len / qp->bytes_per_s * (qp->slow ? 4 : 1);
    else if (qp->slow)
        dur = (now_s() - t0) * 4;
    if (dur > 0) {
        if (qp->pace_until < t0 - PACE_SLACK_S) qp->pace_until = t0;
        qp->pace_until += dur;
        sleep_until(qp->wake, qp->pace_until);
    }
    return IBV_WC_SUCCESS;
}

static void *sender_main(void *arg) {
    struct fake_qp *qp = arg;
    pthread_mutex_lock(&qp->mu);
    for (;;) {
        while (!qp->stop && qp->qn == 0) pthread_cond_wait(&qp->cv, &qp->mu);
        if (qp->stop) break;
        const struct swr *w = &qp->q[qp->qhead];
        const enum ibv_qp_state state = qp->qp.state;
        const unsigned epoch = qp->epoch;
        if (state == IBV_QPS_RESET) { /* reset: dropped without completion */
            qp->qhead = (qp->qhead + 1) % qp->max_wr;
            --qp->qn;
            continue;
        }
        pthread_mutex_unlock(&qp->mu);
        const enum ibv_wc_status st = state == IBV_QPS_ERR ? IBV_WC_WR_FLUSH_ERR : do_write(qp, w);
        pthread_mutex_lock(&qp->mu);
        if (qp->stop) break;
        const int reset = qp->epoch != epoch; /* reset meanwhile: dropped without completion */
        if (st != IBV_WC_SUCCESS && st != IBV_WC_WR_FLUSH_ERR && !reset) qp->qp.state = IBV_QPS_ERR;
        if (!reset && (st != IBV_WC_SUCCESS || w->signaled)) {
            struct ibv_wc wc;
            memset(&wc, 0, sizeof wc);
            wc.wr_id = w->wr_id;
            wc.status = st;
            wc.opcode = IBV_WC_RDMA_WRITE;
            wc.byte_len = (uint32_t)w->len;
            wc.qp_num = qp->qp.qp_num;
            cq_push((struct fake_cq *)qp->qp.send_cq, &wc);
        }
        qp->qhead = (qp->qhead + 1) % qp->max_wr;
        --qp->qn;
    }
    pthread_mutex_unlock(&qp->mu);
    if (qp->sfd >= 0) close(qp->sfd);
    qp->sfd = -1;
    return NULL;
}

static int ctx_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
    struct fake_qp *qp = (struct fake_qp *)ibqp;
    int rc = 0;
    pthread_mutex_lock(&qp->mu);
    for (; wr; wr = wr->next) {
        /* An RC QP takes sends in RTS; in the error state they are flushed. */
        if (qp->qp.state != IBV_QPS_RTS && qp->qp.state != IBV_QPS_ERR) {
            rc = EINVAL;
            break;
        }
        if (wr->opcode != IBV_WR_RDMA_WRITE || wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_sge) {
            if (wr->opcode != IBV_WR_RDMA_WRITE) fprintf(stderr, "fake_verbs: only IBV_WR_RDMA_WRITE is emulated\n");
            rc = EINVAL;
            break;
        }
        if (qp->qn >= qp->max_wr) {
            rc = ENOMEM; /* the send queue is full */
            break;
        }
        struct swr *s = &qp->q[(qp->qhead + qp->qn) % qp->max_wr];
        uint64_t len = 0;
        for (int i = 0; i < wr->num_sge; ++i) len += wr->sg_list[i].length;
        if (len > MAX_MSG || ((wr->send_flags & IBV_SEND_INLINE) && len > qp->max_inline)) {
            rc = EINVAL;
            break;
        }
        s->wr_id = wr->wr_id;
        s->signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
        s->num_sge = wr->num_sge;
        s->is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
        s->raddr = wr->wr.rdma.remote_addr;
        s->rkey = wr->wr.rdma.rkey;
        s->len = len;
        if (wr->num_sge > 0) memcpy(s->sge, wr->sg_list, (size_t)wr->num_sge * sizeof *s->sge);
        if (s->is_inline) {
            size_t off = 0;
            for (int i = 0; i < wr->num_sge; ++i) {
                memcpy(s->data + off, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
                off += wr->sg_list[i].length;
            }
        }
        ++qp->qn;
    }
    if (rc && bad) *bad = wr;
    pthread_cond_broadcast(&qp->cv);
    pthread_mutex_unlock(&qp->mu);
    return rc;
}

static int ctx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
    (void)qp, (void)wr, (void)bad;
    return 0; /* accepted and never consumed: only RDMA WRITE (no receive side) is emulated */
}

/* ------------------------------------------------------------ the responder */

/* Serves one accepted connection until it ends, breaks or the QP goes. */
static void serve(struct fake_qp *qp, int fd) {
    struct hello h;
    if (io_recv(fd, &h, sizeof h, qp->wake, -1) != 0 || memcmp(h.magic, HELLO_MAGIC, 8) != 0) return;
    /* Hardware drops what reaches a QP before RTR; the requester retries. */
    pthread_mutex_lock(&qp->mu);
    while (!qp->stop && (qp->qp.state == IBV_QPS_RESET || qp->qp.state == IBV_QPS_INIT)) pthread_cond_wait(&qp->cv, &qp->mu);
    const unsigned epoch = qp->epoch;
    const int ok = !qp->stop && qp->qp.state != IBV_QPS_ERR && h.dst_qpn == qp->qp.qp_num && h.src_qpn == qp->dest_qpn &&
                   h.psn == qp->rq_psn;
    pthread_mutex_unlock(&qp->mu);
    if (!ok) return; /* not the QP we are connected to (or a PSN mismatch): dropped */

    double recv_pace = 0; /* a slow port receives at a quarter of the rate too: its acks wait */
    for (;;) {
        struct frame f;
        if (io_recv(fd, &f, sizeof f, qp->wake, -1) != 0 || f.magic != FRAME_MAGIC || f.len > MAX_MSG) return;
        const double t0 = now_s();
        pthread_mutex_lock(&qp->mu);
        const int alive = !qp->stop && qp->epoch == epoch && qp->qp.state != IBV_QPS_ERR;
        const int access = qp->access;
        pthread_mutex_unlock(&qp->mu);
        if (!alive) return;
        pthread_mutex_lock(&g_mu);
        struct fake_mr *m = find_mr(f.rkey);
        const int fits = m && m->mr.pd == qp->qp.pd && (m->access & IBV_ACCESS_REMOTE_WRITE) &&
                         (access & IBV_ACCESS_REMOTE_WRITE) && in_mr(m, f.addr, f.len);
        if (fits) ++m->inflight; /* dereg waits for it */
        pthread_mutex_unlock(&g_mu);
        const int got = io_recv(fd, fits ? (void *)(uintptr_t)f.addr : NULL, f.len, qp->wake, PAYLOAD_IDLE_S);
        if (fits) {
            pthread_mutex_lock(&g_mu);
            --m->inflight;
            pthread_cond_broadcast(&g_cv);
            pthread_mutex_unlock(&g_mu);
        }
        if (f.len > 0 && got != 0) return;
        if (qp->slow && qp->bytes_per_s > 0) {
            if (recv_pace < t0 - PACE_SLACK_S) recv_pace = t0;
            recv_pace += (double)f.len / qp->bytes_per_s * 4;
            sleep_until(qp->wake, recv_pace);
        }
        const uint32_t status = fits ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR;
        if (io_send(fd, &status, sizeof status, qp->wake, PAYLOAD_IDLE_S) != 0) return;
    }
}

static void *acceptor_main(void *arg) {
    struct fake_qp *qp = arg;
    for (;;) {
        if (wait_fd(qp->lfd, POLLIN, qp->wake, -1) != 1) break;
        const int fd = accept4(qp->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
            if (sleep_until(qp->wake, now_s() + 0.01)) break; /* e.g. out of fds: try again later */
            continue;
        }
        if (!qp->dead) { /* a dead node drops every connection at once */
            tune(fd);
            serve(qp, fd);
        }
        close(fd);
    }
    return NULL;
}

/* ------------------------------------------------------------ contexts, PDs, MRs */

struct ibv_context *ibv_open_device(struct ibv_device *device) {
    if (!device) {
        errno = EINVAL;
        return NULL;
    }
    struct fake_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    c->v.sz = sizeof c->v;
    c->v.query_port = ctx_query_port;
    struct ibv_context *ctx = &c->v.context;
    ctx->device = device;
    ctx->ops.poll_cq = ctx_poll_cq;
    ctx->ops.req_notify_cq = ctx_req_notify_cq;
    ctx->ops.post_send = ctx_post_send;
    ctx->ops.post_recv = ctx_post_recv;
    ctx->cmd_fd = -1;
    ctx->async_fd = -1;
    ctx->num_comp_vectors = 1;
    pthread_mutex_init(&ctx->mutex, NULL);
    ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    return ctx;
}

int ibv_close_device(struct ibv_context *ctx) {
    if (!ctx) return -1;
    struct fake_ctx *c = (struct fake_ctx *)((char *)ctx - offsetof(struct verbs_context, context));
    pthread_mutex_destroy(&ctx->mutex);
    free(c);
    return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx) {
    if (!ctx) {
        errno = EINVAL;
        return NULL;
    }
    struct fake_pd *pd = calloc(1, sizeof *pd);
    if (!pd) {
        errno = ENOMEM;
        return NULL;
    }
    pd->pd.context = ctx;
    pthread_mutex_lock(&g_mu);
    pd->pd.handle = g_next_key++;
    pthread_mutex_unlock(&g_mu);
    return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *ibpd) {
    struct fake_pd *pd = (struct fake_pd *)ibpd;
    if (!pd) return EINVAL;
    pthread_mutex_lock(&g_mu);
    const int busy = pd->refs > 0;
    pthread_mutex_unlock(&g_mu);
    if (busy) return EBUSY; /* MRs or QPs still on it */
    free(pd);
    return 0;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova, unsigned int access) {
    /* Remote write needs local write (as the kernel says); zero-based or
     * other iovas are not emulated: the iova must be the address. */
    if (!ibpd || (!addr && length) || iova != (uintptr_t)addr ||
        ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
        errno = EINVAL;
        return NULL;
    }
    struct fake_mr *m = calloc(1, sizeof *m);
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    m->mr.context = ibpd->context;
    m->mr.pd = ibpd;
    m->mr.addr = addr;
    m->mr.length = length;
    m->access = (int)access;
    pthread_mutex_lock(&g_mu);
    m->mr.handle = m->mr.lkey = m->mr.rkey = g_next_key++;
    m->next = g_mrs;
    g_mrs = m;
    ++((struct fake_pd *)ibpd)->refs;
    pthread_mutex_unlock(&g_mu);
    return &m->mr;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access) {
    return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
    return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

int ibv_dereg_mr(struct ibv_mr *ibmr) {
    struct fake_mr *m = (struct fake_mr *)ibmr;
    if (!m) return EINVAL;
    pthread_mutex_lock(&g_mu);
    while (m->inflight > 0) pthread_cond_wait(&g_cv, &g_mu); /* a responder is writing into it */
    for (struct fake_mr **p = &g_mrs; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    --((struct fake_pd *)m->mr.pd)->refs;
    pthread_mutex_unlock(&g_mu);
    free(m);
    return 0;
}

/* ------------------------------------------------------------ queue pairs */

static void free_qp(struct fake_qp *qp) {
    if (qp->wake >= 0) close(qp->wake);
    if (qp->lfd >= 0) close(qp->lfd);
    pthread_cond_destroy(&qp->cv);
    pthread_mutex_destroy(&qp->mu);
    pthread_cond_destroy(&qp->qp.cond);
    pthread_mutex_destroy(&qp->qp.mutex);
    free(qp->q);
    free(qp);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia) {
    if (!pd || !ia || !ia->send_cq || !ia->recv_cq || ia->qp_type != IBV_QPT_RC || ia->srq ||
        ia->cap.max_send_wr > MAX_QP_WR || ia->cap.max_send_sge > MAX_SGE || ia->cap.max_inline_data > MAX_INLINE) {
        if (ia && ia->qp_type != IBV_QPT_RC) fprintf(stderr, "fake_verbs: only RC queue pairs are emulated\n");
        errno = EINVAL;
        return NULL;
    }
    struct fake_qp *qp = calloc(1, sizeof *qp);
    if (!qp) {
        errno = ENOMEM;
        return NULL;
    }
    qp->wake = qp->lfd = qp->sfd = -1;
    pthread_mutex_init(&qp->mu, NULL);
    pthread_cond_init(&qp->cv, NULL);
    pthread_mutex_init(&qp->qp.mutex, NULL);
    pthread_cond_init(&qp->qp.cond, NULL);
    qp->qp.context = pd->context;
    qp->qp.qp_context = ia->qp_context;
    qp->qp.pd = pd;
    qp->qp.send_cq = ia->send_cq;
    qp->qp.recv_cq = ia->recv_cq;
    qp->qp.state = IBV_QPS_RESET;
    qp->qp.qp_type = IBV_QPT_RC;
    qp->sq_sig_all = ia->sq_sig_all;
    qp->max_wr = ia->cap.max_send_wr ? ia->cap.max_send_wr : 1;
    qp->max_sge = ia->cap.max_send_sge;
    qp->max_inline = ia->cap.max_inline_data;
    qp->timeout = 14; /* until RTS sets them: 0.54 s */
    qp->retry_cnt = 7;
    qp->budget = 4.096e-6 * (1 << 14) * 8;

    const char *gbps = getenv("GANGWAY_FAKE_IB_GBPS");
    const double r = gbps && *gbps ? strtod(gbps, NULL) : 0;
    qp->bytes_per_s = r > 0 ? r * 1e9 / 8 : 0;
    qp->slow = fake_this_host_listed("GANGWAY_FAKE_IB_SLOW_HOSTS");
    qp->dead = fake_this_host_listed("GANGWAY_FAKE_IB_DEAD_HOSTS");

    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = 0};
    socklen_t len = sizeof sa;
    if (!(qp->q = calloc(qp->max_wr, sizeof *qp->q)) || (qp->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
        (qp->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
        bind(qp->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(qp->lfd, 16) != 0 ||
        getsockname(qp->lfd, (struct sockaddr *)&sa, &len) != 0)
        goto fail;
    qp->qp.qp_num = ntohs(sa.sin_port); /* the port: peers connect to dest_qp_num */
    qp->qp.handle = qp->qp.qp_num;
    if (start_thread(&qp->acceptor, acceptor_main, qp) != 0) goto fail;
    qp->has_acceptor = 1;
    if (start_thread(&qp->sender, sender_main, qp) != 0) goto fail;
    qp->has_sender = 1;

    pthread_mutex_lock(&g_mu);
    ++((struct fake_pd *)pd)->refs;
    ++((struct fake_cq *)ia->send_cq)->refs;
    ++((struct fake_cq *)ia->recv_cq)->refs;
    pthread_mutex_unlock(&g_mu);
    ia->cap.max_send_wr = qp->max_wr;
    ia->cap.max_recv_wr = ia->cap.max_recv_wr ? ia->cap.max_recv_wr : 1;
    return &qp->qp;
fail:
    errno = errno ? errno : ENOMEM;
    {
        const int e = errno;
        if (qp->has_acceptor) {
            const uint64_t one = 1;
            if (write(qp->wake, &one, sizeof one) < 0) { /* cannot fail on a fresh eventfd */
            }
            pthread_join(qp->acceptor, NULL);
        }
        free_qp(qp);
        errno = e;
    }
    return NULL;
}

static const char *state_name(int s) {
    static const char *n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    return s >= 0 && s <= IBV_QPS_ERR ? n[s] : "?";
}

/* The kernel's checks of an RC transition (ib_modify_qp_is_ok, in short):
 * which moves are legal and which attributes each needs. 0 or EINVAL. */
static int check_transition(const struct fake_qp *qp, int cur, int next, int mask, const struct ibv_qp_attr *a) {
    int need = 0;
    const char *why = NULL;
    if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) return 0;
    if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
        need = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
        need = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
               IBV_QP_MIN_RNR_TIMER;
    else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
        need = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
    else if (!(cur == next && (cur == IBV_QPS_INIT || cur == IBV_QPS_RTS)))
        why = "illegal transition";
    if (!why && (mask & need) != need) why = "a required attribute is missing from the mask";
    if (!why && (mask & IBV_QP_PORT) && a->port_num != 1) why = "port_num is not 1 (one port per device)";
    if (!why && (mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0) why = "pkey_index is not 0";
    if (!why && (mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
        why = "path_mtu is not an ibv_mtu";
    if (!why && (mask & IBV_QP_AV) && !a->ah_attr.is_global) why = "RoCE needs a GRH (ah_attr.is_global)";
    if (!why && (mask & IBV_QP_AV) && a->ah_attr.port_num != 1) why = "ah_attr.port_num is not 1";
    if (!why && (mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff) why = "dest_qp_num over 24 bits";
    if (!why && (mask & IBV_QP_TIMEOUT) && a->timeout > 31) why = "timeout over 31";
    if (!why && (mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) why = "retry_cnt over 7";
    if (!why && (mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) why = "rnr_retry over 7";
    if (!why) return 0;
    fprintf(stderr, "fake_verbs: QP %u %s -> %s: %s\n", qp->qp.qp_num, state_name(cur), state_name(next), why);
    return EINVAL;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask) {
    struct fake_qp *qp = (struct fake_qp *)ibqp;
    if (!qp || !a) return EINVAL;
    pthread_mutex_lock(&qp->mu);
    const int cur = (mask & IBV_QP_CUR_STATE) ? (int)a->cur_qp_state : (int)qp->qp.state;
    const int next = (mask & IBV_QP_STATE) ? (int)a->qp_state : cur;
    const int rc = cur != (int)qp->qp.state ? EINVAL : check_transition(qp, cur, next, mask, a);
    if (rc) {
        pthread_mutex_unlock(&qp->mu);
        return rc;
    }
    if (mask & IBV_QP_ACCESS_FLAGS) qp->access = (int)a->qp_access_flags;
    if (mask & IBV_QP_DEST_QPN) qp->dest_qpn = a->dest_qp_num;
    if (mask & IBV_QP_RQ_PSN) qp->rq_psn = a->rq_psn & 0xffffff;
    if (mask & IBV_QP_SQ_PSN) qp->sq_psn = a->sq_psn & 0xffffff;
    if (mask & IBV_QP_AV) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        qp->peer_ok = memcmp(a->ah_attr.grh.dgid.raw, mapped, sizeof mapped) == 0;
        memcpy(&qp->peer, a->ah_attr.grh.dgid.raw + 12, 4); /* not IPv4-mapped: unreachable, writes retry out */
    }
    if (mask & IBV_QP_TIMEOUT) qp->timeout = a->timeout;
    if (mask & IBV_QP_RETRY_CNT) qp->retry_cnt = a->retry_cnt;
    if (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT)) {
        /* 4.096 us * 2^timeout per try; retry_cnt retries after the first */
        const double b = qp->timeout == 0 ? 60.0 : 4.096e-6 * (double)(1ull << qp->timeout) * (qp->retry_cnt + 1);
        qp->budget = b < 0.1 ? 0.1 : b > 60.0 ? 60.0 : b;
    }
    if (next == IBV_QPS_RESET && cur != IBV_QPS_RESET) ++qp->epoch; /* connections of before are dropped */
    qp->qp.state = (enum ibv_qp_state)next;
    pthread_cond_broadcast(&qp->cv);
    pthread_mutex_unlock(&qp->mu);
    return 0;
}

int ibv_destroy_qp(struct ibv_qp *ibqp) {
    struct fake_qp *qp = (struct fake_qp *)ibqp;
    if (!qp) return EINVAL;
    pthread_mutex_lock(&qp->mu);
    qp->stop = 1;
    pthread_cond_broadcast(&qp->cv);
    pthread_mutex_unlock(&qp->mu);
    const uint64_t one = 1;
    if (write(qp->wake, &one, sizeof one) < 0) { /* an eventfd far from overflow: cannot fail */
    }
    pthread_join(qp->acceptor, NULL);
    pthread_join(qp->sender, NULL);
    pthread_mutex_lock(&g_mu);
    --((struct fake_pd *)qp->qp.pd)->refs;
    --((struct fake_cq *)qp->qp.send_cq)->refs;
    --((struct fake_cq *)qp->qp.recv_cq)->refs;
    pthread_mutex_unlock(&g_mu);
    free_qp(qp); /* WRs still queued are dropped without completions, as a destroyed QP's are */
    return 0;
}

/* ------------------------------------------------------------ strings */

const char *ibv_wc_status_str(enum ibv_wc_status status) {
    static const char *const s[] = {
        "success",
        "local length error",
        "local QP operation error",
        "local EE context operation error",
        "local protection error",
        "Work Request Flushed Error",
        "memory management operation error",
        "bad response error",
        "local access error",
        "remote invalid request error",
        "remote access error",
        "remote operation error",
        "transport retry counter exceeded",
        "RNR retry counter exceeded",
        "local RDD violation error",
        "remote invalid RD request",
        "aborted error",
        "invalid EE context number",
        "invalid EE context state",
        "fatal error",
        "response timeout error",
        "general error",
        "TM error",
        "TM rendezvous error",
    };
    return (unsigned)status < sizeof s / sizeof *s ? s[status] : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state state) {
    static const char *const s[] = {"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};
    return (unsigned)state < sizeof s / sizeof *s ? s[state] : "invalid state";
}
