/* Self-test of the fake libibverbs (fake_verbs.c, a TEST DOUBLE), run by
 * `build.sh OUTDIR --selftest`; linked against OUTDIR/libibverbs.so.1 and
 * written as gangway's RdmaEndpoint drives it (lib/sys/verbs_stage.cpp), so
 * the header's inline paths (ibv_query_port's extended query, ibv_post_send,
 * ibv_poll_cq) are exercised too. It checks: the device list from the
 * environment; port and GID; an RDMA WRITE lands in the peer's buffer, within
 * one process and across two; completions in order; the pacing rate and the
 * slow fault; the dead fault in both directions and an unreachable peer
 * (IBV_WC_RETRY_EXC_ERR within the retry budget, then IBV_WC_WR_FLUSH_ERR); a
 * bad rkey (IBV_WC_REM_ACCESS_ERR); the kernel's modify_qp checks; destroy
 * never hangs. Prints one line on success; on failure, what failed, and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_time.h"
#include "selftest.h"

#define BUF (4u << 20)
#define MSG (1u << 20)

/* What the peers exchange (gangway's verbs::QpInfo). */
struct info {
    uint32_t qpn, psn, rkey;
    uint64_t addr, len;
    union ibv_gid gid;
};

struct ep {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    unsigned char *buf;
    struct info me;
};

/* quiet_stderr(-1) sends stderr to /dev/null and returns the old one;
 * quiet_stderr(old) puts it back. */
static int quiet_stderr(int old) {
    fflush(stderr);
    if (old >= 0) {
        dup2(old, 2);
        close(old);
        return -1;
    }
    const int keep = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    return keep;
}

static struct ibv_context *open_named(const char *name) {
    int n = -1;
    struct ibv_device **list = ibv_get_device_list(&n);
    struct ibv_context *ctx = NULL;
    for (int i = 0; list && i < n && !ctx; ++i)
        if (strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    return ctx;
}

static int ep_open(struct ep *e, uint32_t psn) {
    memset(e, 0, sizeof *e);
    if (!(e->ctx = open_named("mlx5_0")) || !(e->pd = ibv_alloc_pd(e->ctx)) || !(e->buf = aligned_alloc(4096, BUF)))
        return -1;
    memset(e->buf, 0, BUF);
    if (!(e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) ||
        !(e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0)))
        return -1;
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = ia.recv_cq = e->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = 128;
    ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.sq_sig_all = 1;
    if (!(e->qp = ibv_create_qp(e->pd, &ia)) || ibv_query_gid(e->ctx, 1, 3, &e->me.gid) != 0) return -1;
    e->me.qpn = e->qp->qp_num;
    e->me.psn = psn;
    e->me.rkey = e->mr->rkey;
    e->me.addr = (uintptr_t)e->buf;
    e->me.len = BUF;
    return 0;
}

static void ep_close(struct ep *e) {
    if (e->qp) CHECK(ibv_destroy_qp(e->qp) == 0, "destroy_qp");
    if (e->cq) CHECK(ibv_destroy_cq(e->cq) == 0, "destroy_cq");
    if (e->mr) CHECK(ibv_dereg_mr(e->mr) == 0, "dereg_mr");
    if (e->pd) CHECK(ibv_dealloc_pd(e->pd) == 0, "dealloc_pd");
    if (e->ctx) ibv_close_device(e->ctx);
    free(e->buf);
    memset(e, 0, sizeof *e);
}

/* INIT -> RTR -> RTS toward `peer`, as RdmaEndpoint::connect: 0 or the failing errno. */
static int ep_connect(struct ep *e, const struct info *peer) {
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    int rc = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc) return rc;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_4096;
    a.dest_qp_num = peer->qpn;
    a.rq_psn = peer->psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = 1;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer->gid;
    a.ah_attr.grh.sgid_index = 3;
    a.ah_attr.grh.hop_limit = 255;
    rc = ibv_modify_qp(e->qp, &a,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc) return rc;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14; /* with retry_cnt 3: a budget of 0.27 s */
    a.retry_cnt = 3;
    a.rnr_retry = 3;
    a.sq_psn = e->me.psn;
    a.max_rd_atomic = 1;
    return ibv_modify_qp(e->qp, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                             IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post_write(struct ep *e, const struct info *peer, uint64_t wr_id, size_t off, size_t len, uint32_t rkey) {
    struct ibv_sge sge = {(uintptr_t)e->buf + off, (uint32_t)len, e->mr->lkey};
    struct ibv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = peer->addr + off;
    wr.wr.rdma.rkey = rkey;
    return ibv_post_send(e->qp, &wr, &bad);
}

/* Polls `n` completions into wc, for `secs` at most; how many came. */
static int reap(struct ep *e, struct ibv_wc *wc, int n, double secs) {
    const double end = now_s() + secs;
    int got = 0;
    while (got < n && now_s() < end) {
        const int k = ibv_poll_cq(e->cq, n - got, wc + got);
        if (k < 0) return -1;
        got += k;
        if (k == 0) usleep(100);
    }
    return got;
}

/* `count` writes of MSG from a to b, 16 outstanding; bytes per second, or -1
 * on a failed completion. */
static double stream(struct ep *a, const struct info *b, int count) {
    struct ibv_wc wc[16];
    const double t0 = now_s();
    int posted = 0, done = 0;
    uint64_t want = 0;
    while (done < count) {
        while (posted < count && posted - done < 16) {
            if (post_write(a, b, (uint64_t)posted, 0, MSG, b->rkey) != 0) return -1;
            ++posted;
        }
        const int k = reap(a, wc, 1, 10);
        if (k != 1 || wc[0].status != IBV_WC_SUCCESS || wc[0].wr_id != want++) return -1;
        ++done;
    }
    return (double)count * MSG / (now_s() - t0);
}

static void devices_and_ports(void) {
    int n = -1;
    unsetenv("GANGWAY_FAKE_IB_DEVICES");
    struct ibv_device **list = ibv_get_device_list(&n);
    CHECK(list && n == 0 && list[0] == NULL, "no devices: list %p, n %d", (void *)list, n);
    ibv_free_device_list(list);

    setenv("GANGWAY_FAKE_IB_DEVICES", "mlx5_0,mlx5_1", 1);
    list = ibv_get_device_list(&n);
    CHECK(list && n == 2 && strcmp(ibv_get_device_name(list[0]), "mlx5_0") == 0 &&
              strcmp(ibv_get_device_name(list[1]), "mlx5_1") == 0 && list[2] == NULL,
          "two devices: n %d", n);
    struct ibv_context *ctx = list && n > 1 ? ibv_open_device(list[1]) : NULL;
    ibv_free_device_list(list);
    CHECK(ctx != NULL, "open_device");
    if (!ctx) return;

    struct ibv_port_attr pa;
    memset(&pa, 0xab, sizeof pa);
    CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE && pa.active_mtu == IBV_MTU_4096 &&
              pa.link_layer == IBV_LINK_LAYER_ETHERNET && pa.lid == 0 && pa.port_cap_flags2 == 0,
          "query_port (extended): state %d mtu %d link %d", pa.state, pa.active_mtu, pa.link_layer);
    /* gangway dlsym()s the exported (compat) symbol: it fills up to `flags` only */
    memset(&pa, 0xab, sizeof pa);
    CHECK((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)&pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
              pa.active_mtu == IBV_MTU_4096 && pa.link_layer == IBV_LINK_LAYER_ETHERNET && pa.port_cap_flags2 == 0xabab,
          "query_port (compat symbol)");
    CHECK(ibv_query_port(ctx, 2, &pa) != 0, "port 2 exists");

    union ibv_gid g;
    setenv("GANGWAY_FAKE_IB_ADDR", "10.1.2.3", 1);
    const unsigned char want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
    CHECK(ibv_query_gid(ctx, 1, 7, &g) == 0 && memcmp(g.raw, want, 16) == 0, "query_gid with GANGWAY_FAKE_IB_ADDR");
    unsetenv("GANGWAY_FAKE_IB_ADDR");
    setenv("NODE_ADDR", "127.0.0.1", 1);
    CHECK(ibv_query_gid(ctx, 1, 0, &g) == 0 && g.raw[12] == 127 && g.raw[15] == 1, "query_gid with NODE_ADDR");
    ibv_close_device(ctx);
}

/* Two endpoints in one process: data lands, completions come in order, pacing. */
static void one_process(void) {
    struct ep a, b;
    memset(&b, 0, sizeof b);
    if (ep_open(&a, 0x111111) != 0 || ep_open(&b, 0x222222) != 0) {
        CHECK(0, "cannot open the endpoints: %s", strerror(errno));
        ep_close(&a);
        return;
    }
    CHECK(post_write(&a, &b.me, 1, 0, 64, b.me.rkey) == EINVAL, "a write before RTS was taken");

    /* the kernel's checks: a transition without its attributes (the fake says
     * why on stderr: silenced here) */
    const int saved = quiet_stderr(-1);
    struct ibv_qp_attr at;
    memset(&at, 0, sizeof at);
    at.qp_state = IBV_QPS_RTR;
    CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE) == EINVAL, "RESET -> RTR was taken");
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_PORT) == EINVAL, "INIT without access flags was taken");
    quiet_stderr(saved);

    CHECK(ep_connect(&a, &b.me) == 0 && ep_connect(&b, &a.me) == 0, "connect");
    CHECK(ibv_destroy_cq(a.cq) == EBUSY && ibv_dealloc_pd(a.pd) == EBUSY, "a CQ or PD in use was destroyed");
    for (unsigned i = 0; i < BUF; ++i) a.buf[i] = (unsigned char)(i * 7 + 1);
    for (int i = 0; i < 4; ++i) CHECK(post_write(&a, &b.me, 100 + i, (size_t)i * MSG, MSG, b.me.rkey) == 0, "post");
    struct ibv_wc wc[4];
    CHECK(reap(&a, wc, 4, 10) == 4, "4 completions did not come");
    for (int i = 0; i < 4; ++i)
        CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == (uint64_t)(100 + i) && wc[i].opcode == IBV_WC_RDMA_WRITE &&
                  wc[i].qp_num == a.qp->qp_num,
              "completion %d: status %d wr_id %llu", i, wc[i].status, (unsigned long long)wc[i].wr_id);
    CHECK(memcmp(a.buf, b.buf, BUF) == 0, "the written data did not land");

    /* 8 Gb/s: 1e9 bytes/s; 48 MiB take ~50 ms */
    setenv("GANGWAY_FAKE_IB_GBPS", "8", 1);
    ep_close(&a);
    ep_close(&b);
    if (ep_open(&a, 1) != 0 || ep_open(&b, 2) != 0 || ep_connect(&a, &b.me) != 0 || ep_connect(&b, &a.me) != 0) {
        CHECK(0, "cannot reopen the endpoints");
    } else {
        const double r = stream(&a, &b.me, 48);
        /* Pacing is an upper bound: a loaded machine can only make it slower,
         * so no lower bound here (the tests of gangway judge rates far below it). */
        CHECK(r > 0 && r < 1.1e9, "paced at 8 Gb/s: %.3g bytes/s", r);
        /* a bad rkey: remote access error, then the QP is in error: flushed */
        CHECK(post_write(&a, &b.me, 7, 0, 4096, b.me.rkey + 1000) == 0 && post_write(&a, &b.me, 8, 0, 4096, b.me.rkey) == 0,
              "post");
        CHECK(reap(&a, wc, 2, 5) == 2 && wc[0].status == IBV_WC_REM_ACCESS_ERR && wc[1].status == IBV_WC_WR_FLUSH_ERR,
              "bad rkey: statuses %d %d, want 10 5", wc[0].status, wc[1].status);
    }
    ep_close(&a);
    ep_close(&b);
}

static void slow_and_dead(void) {
    struct ep a, b, c;
    struct ibv_wc wc[2];
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    setenv("SLURMD_NODENAME", "fakenode7", 1);
    setenv("GANGWAY_FAKE_IB_GBPS", "8", 1);

    setenv("GANGWAY_FAKE_IB_SLOW_HOSTS", "x,fakenode7", 1);
    if (ep_open(&a, 1) == 0 && ep_open(&b, 2) == 0 && ep_connect(&a, &b.me) == 0 && ep_connect(&b, &a.me) == 0) {
        const double r = stream(&a, &b.me, 16);
        CHECK(r > 0 && r < 0.28e9, "slow: %.3g bytes/s, want at most 2.5e8", r);
    } else
        CHECK(0, "slow: cannot open the endpoints");
    ep_close(&a);
    ep_close(&b);
    unsetenv("GANGWAY_FAKE_IB_SLOW_HOSTS");

    /* A dead sender never connects: retry exceeded after the budget (0.27 s).
     * The budget is a lower bound; the upper bounds here (5 s, under reap's own
     * 5 s) only say "fails, does not hang", with room for a loaded machine. */
    setenv("GANGWAY_FAKE_IB_DEAD_HOSTS", "fakenode7", 1);
    const int ok_a = ep_open(&a, 1);
    unsetenv("GANGWAY_FAKE_IB_DEAD_HOSTS");
    if (ok_a == 0 && ep_open(&b, 2) == 0 && ep_connect(&a, &b.me) == 0 && ep_connect(&b, &a.me) == 0) {
        const double t0 = now_s();
        post_write(&a, &b.me, 1, 0, MSG, b.me.rkey);
        post_write(&a, &b.me, 2, 0, MSG, b.me.rkey);
        const int n = reap(&a, wc, 2, 5);
        const double dt = now_s() - t0;
        CHECK(n == 2 && wc[0].status == IBV_WC_RETRY_EXC_ERR && wc[1].status == IBV_WC_WR_FLUSH_ERR && dt > 0.2 && dt < 5,
              "dead sender: %d completions, statuses %d %d after %.2f s", n, wc[0].status, wc[1].status, dt);
        /* and toward it: its listener drops the connection */
        const double t1 = now_s();
        post_write(&b, &a.me, 3, 0, MSG, a.me.rkey);
        const int m = reap(&b, wc, 1, 5);
        const double dt1 = now_s() - t1;
        CHECK(m == 1 && wc[0].status == IBV_WC_RETRY_EXC_ERR && dt1 > 0.2 && dt1 < 5,
              "toward a dead node: %d completions, status %d after %.2f s", m, wc[0].status, dt1);
    } else
        CHECK(0, "dead: cannot open the endpoints");
    ep_close(&a);
    ep_close(&b);

    /* An unreachable peer (its QP gone); and destroy during the retries never hangs. */
    if (ep_open(&a, 1) == 0 && ep_open(&b, 2) == 0 && ep_open(&c, 3) == 0) {
        struct info gone = b.me;
        CHECK(ibv_destroy_qp(b.qp) == 0, "destroy_qp");
        b.qp = NULL;
        CHECK(ep_connect(&a, &gone) == 0, "connect");
        double t0 = now_s();
        post_write(&a, &gone, 1, 0, 4096, gone.rkey);
        const int n = reap(&a, wc, 1, 5);
        const double dt = now_s() - t0;
        CHECK(n == 1 && wc[0].status == IBV_WC_RETRY_EXC_ERR && dt > 0.2 && dt < 5,
              "unreachable: %d completions, status %d after %.2f s", n, wc[0].status, dt);
        CHECK(ep_connect(&c, &gone) == 0, "connect");
        post_write(&c, &gone, 1, 0, 4096, gone.rkey);
        usleep(50000);
        t0 = now_s();
        CHECK(ibv_destroy_qp(c.qp) == 0 && now_s() - t0 < 5, "destroy during retries took %.2f s", now_s() - t0);
        c.qp = NULL;
    } else
        CHECK(0, "unreachable: cannot open the endpoints");
    ep_close(&a);
    ep_close(&b);
    ep_close(&c);
    unsetenv("SLURMD_NODENAME");
}

/* Two processes: the QP info travels through pipes, as gangway ships it. */
static void two_processes(void) {
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return;
    unsetenv("GANGWAY_FAKE_IB_GBPS");
    const pid_t pid = fork();
    if (pid == 0) { /* the target: checks that the data landed */
        struct ep b;
        struct info peer;
        char done = 0;
        if (ep_open(&b, 9) != 0 || write(up[1], &b.me, sizeof b.me) != (ssize_t)sizeof b.me ||
            read(down[0], &peer, sizeof peer) != (ssize_t)sizeof peer || ep_connect(&b, &peer) != 0)
            _exit(2);
        if (write(up[1], "c", 1) != 1 || read(down[0], &done, 1) != 1) _exit(3);
        for (unsigned i = 0; i < MSG; ++i)
            if (b.buf[i] != (unsigned char)(i % 251)) _exit(4);
        ep_close(&b);
        _exit(failures ? 5 : 0);
    }
    struct ep a;
    struct info peer;
    char c = 0;
    int ok = ep_open(&a, 8) == 0 && read(up[0], &peer, sizeof peer) == (ssize_t)sizeof peer &&
             write(down[1], &a.me, sizeof a.me) == (ssize_t)sizeof a.me && ep_connect(&a, &peer) == 0 &&
             read(up[0], &c, 1) == 1;
    CHECK(ok, "two processes: setup failed");
    if (ok) {
        for (unsigned i = 0; i < MSG; ++i) a.buf[i] = (unsigned char)(i % 251);
        struct ibv_wc wc;
        CHECK(post_write(&a, &peer, 42, 0, MSG, peer.rkey) == 0 && reap(&a, &wc, 1, 10) == 1 &&
                  wc.status == IBV_WC_SUCCESS && wc.wr_id == 42,
              "two processes: the write failed");
    }
    CHECK(write(down[1], "d", 1) == 1, "two processes: pipe");
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "two processes: the target exited %d",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ep_close(&a);
}

int main(void) {
    unsetenv("GANGWAY_FAKE_IB_SLOW_HOSTS");
    unsetenv("GANGWAY_FAKE_IB_DEAD_HOSTS");
    unsetenv("GANGWAY_FAKE_IB_GBPS");
    unsetenv("GANGWAY_FAKE_IB_ADDR");
    devices_and_ports();
    one_process();
    slow_and_dead();
    two_processes();
    if (failures) return 1;
    puts("fake_verbs selftest: ok");
    return 0;
}
