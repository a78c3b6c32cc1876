// The verbs stage: RDMA ports from sysfs, judged; and the RDMA write data
// path (libibverbs loaded with dlopen, so the binary runs on nodes without
// it). Without RDMA hardware the data path runs against the test double of
// libibverbs in tests/fakes (tests/preflight_gpu.sh); the pure parts it rests
// on (GID choice, queue-pair attributes, QpInfo exchange) are
// lib/preflight/rdma_checks, unit-tested.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "../../pin/placement.hpp"
#include "dl_handle.hpp"
#include "verbs_stage.hpp"
#include "../node/hwloc_topology.hpp"
#include "../devices/ib_ports.hpp"

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define GANGWAY_HAVE_VERBS_H 1
#endif

namespace gangway::sys {
using preflight::StageStatus;

std::vector<std::string> compute_hcas(const EnvMap& env) {
    auto list = [&](const char* k) {
        std::vector<std::string> v;
        auto it = env.find(k);
        if (it == env.end()) return v;
        std::istringstream in(it->second);
        std::string s;
        while (std::getline(in, s, ','))
            if (!s.empty()) v.push_back(s);
        return v;
    };
    NicFilter f{list("GANGWAY_NIC_INCLUDE"), list("GANGWAY_NIC_EXCLUDE")};
    std::vector<std::string> out;
    const auto topo = load_live_topology();
    if (!topo) return {};
    for (const auto& n : compute_nics(*topo, f))
        if (n.rdma && std::find(out.begin(), out.end(), n.name) == out.end()) out.push_back(n.name);
    return out;
}

// ------------------------------------------------------------ libibverbs
#ifdef GANGWAY_HAVE_VERBS_H
namespace {

struct Ibv {
    ibv_device** (*get_device_list)(int*);
    void (*free_device_list)(ibv_device**);
    const char* (*get_device_name)(ibv_device*);
    ibv_context* (*open_device)(ibv_device*);
    int (*close_device)(ibv_context*);
    int (*query_port)(ibv_context*, uint8_t, ibv_port_attr*);  // the exported (compat) symbol: a prefix of ibv_port_attr
    int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*);
    ibv_pd* (*alloc_pd)(ibv_context*);
    int (*dealloc_pd)(ibv_pd*);
    ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int);
    int (*dereg_mr)(ibv_mr*);
    ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*, int);
    int (*destroy_cq)(ibv_cq*);
    ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*);
    int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int);
    int (*destroy_qp)(ibv_qp*);
};

const Ibv* ibv(std::string& why) {
    static std::once_flag once;
    static Ibv v{};
    static bool ok = false;
    std::call_once(once, [] {
        DlHandle lib = dl_open("libibverbs.so.1");  // closed again unless usable
        void* h = lib.get();
        if (!h) return;
        auto get = [&](auto& f, const char* name) { return dl_sym(h, f, name); };
        ok = get(v.get_device_list, "ibv_get_device_list") && get(v.free_device_list, "ibv_free_device_list") &&
             get(v.get_device_name, "ibv_get_device_name") && get(v.open_device, "ibv_open_device") &&
             get(v.close_device, "ibv_close_device") && get(v.query_port, "ibv_query_port") &&
             get(v.query_gid, "ibv_query_gid") && get(v.alloc_pd, "ibv_alloc_pd") && get(v.dealloc_pd, "ibv_dealloc_pd") &&
             get(v.reg_mr, "ibv_reg_mr") && get(v.dereg_mr, "ibv_dereg_mr") && get(v.create_cq, "ibv_create_cq") &&
             get(v.destroy_cq, "ibv_destroy_cq") && get(v.create_qp, "ibv_create_qp") && get(v.modify_qp, "ibv_modify_qp") &&
             get(v.destroy_qp, "ibv_destroy_qp");
        if (ok) lib.release();  // for the life of the process
    });
    if (!ok) why = "libibverbs.so.1 not found or too old (install rdma-core / libibverbs1)";
    return ok ? &v : nullptr;
}

ibv_context* open_hca(const Ibv& v, const std::string& name) {
    int n = 0;
    ibv_device** list = v.get_device_list(&n);
    if (!list) return nullptr;
    ibv_context* ctx = nullptr;
    for (int i = 0; i < n && !ctx; ++i)
        if (name == v.get_device_name(list[i])) ctx = v.open_device(list[i]);
    v.free_device_list(list);
    return ctx;
}

const char* wc_hint(int status) {
    switch (status) {
        case IBV_WC_RETRY_EXC_ERR: return " (transport retry exceeded: the peer is unreachable on this path; wrong GID index, routing or link down)";
        case IBV_WC_RNR_RETRY_EXC_ERR: return " (receiver not ready)";
        case IBV_WC_REM_ACCESS_ERR: return " (remote access error: rkey or address)";
        case IBV_WC_LOC_PROT_ERR: return " (local protection error; ACS enabled?)";
        default: return "";
    }
}

}  // namespace

// Fills the active MTU (bytes) of the ports from ibv_query_port, where it can.
static void query_active_mtu(std::vector<verbs::Port>& ports) {
    std::string why;
    const Ibv* v = ibv(why);
    if (!v) return;
    for (auto& p : ports) {
        ibv_context* ctx = open_hca(*v, p.hca);
        if (!ctx) continue;
        ibv_port_attr pa{};
        if (v->query_port(ctx, static_cast<uint8_t>(p.port), &pa) == 0) p.active_mtu = static_cast<int>(verbs::mtu_bytes(pa.active_mtu));
        v->close_device(ctx);
    }
}

struct RdmaEndpoint::Impl {
    const Ibv* v = nullptr;
    ibv_context* ctx = nullptr;
    ibv_pd* pd = nullptr;
    ibv_mr* mr = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    void* buf = nullptr;
    std::size_t len = 0;
    verbs::Port port;
    unsigned gid_index = 0;
    verbs::QpInfo local, remote;
    ~Impl() {
        if (qp) v->destroy_qp(qp);
        if (cq) v->destroy_cq(cq);
        if (mr) v->dereg_mr(mr);
        if (pd) v->dealloc_pd(pd);
        if (ctx) v->close_device(ctx);
        std::free(buf);
    }
};

RdmaEndpoint::RdmaEndpoint() : p_(std::make_unique<Impl>()) {}

Result<std::unique_ptr<RdmaEndpoint>> RdmaEndpoint::open(const verbs::Port& port, unsigned gid_index, std::size_t bytes) {
    std::unique_ptr<RdmaEndpoint> e(new RdmaEndpoint);
    const auto& p_ = e->p_;  // what an Impl half-built holds, its destructor releases
    std::string why;
    p_->v = ibv(why);
    if (!p_->v) return Failure{why};
    const Ibv& v = *p_->v;
    const std::string name = verbs::port_name(port);
    p_->port = port;
    p_->gid_index = gid_index;
    if (!(p_->ctx = open_hca(v, port.hca))) return Failure{"cannot open " + port.hca + " (no such HCA, or no permission on /dev/infiniband)"};
    ibv_port_attr pa{};
    if (v.query_port(p_->ctx, static_cast<uint8_t>(port.port), &pa)) return Failure{"cannot query port " + name};
    if (!(p_->pd = v.alloc_pd(p_->ctx))) return Failure{"cannot allocate a protection domain on " + port.hca};
    p_->len = std::max<std::size_t>(bytes, 4096);
    p_->buf = std::aligned_alloc(4096, (p_->len + 4095) / 4096 * 4096);
    if (!p_->buf) return Failure{"out of memory for the RDMA buffer"};
    std::memset(p_->buf, 0, p_->len);
    if (!(p_->mr = v.reg_mr(p_->pd, p_->buf, p_->len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)))
        return Failure{"cannot register memory on " + port.hca + " (locked memory limit: ulimit -l unlimited)"};
    if (!(p_->cq = v.create_cq(p_->ctx, 256, nullptr, nullptr, 0))) return Failure{"cannot create a completion queue on " + port.hca};
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = p_->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = 128;
    ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.sq_sig_all = 1;
    if (!(p_->qp = v.create_qp(p_->pd, &ia))) return Failure{"cannot create a queue pair on " + port.hca};
    ibv_gid gid{};
    if (v.query_gid(p_->ctx, static_cast<uint8_t>(port.port), static_cast<int>(gid_index), &gid))
        return Failure{"cannot read GID " + std::to_string(gid_index) + " of " + name};
    static const char* hex = "0123456789abcdef";
    for (unsigned char c : gid.raw) {
        p_->local.gid += hex[c >> 4];
        p_->local.gid += hex[c & 15];
    }
    std::random_device rd;
    p_->local.lid = pa.lid;
    p_->local.qpn = p_->qp->qp_num;
    p_->local.psn = rd() & 0xffffff;
    p_->local.rkey = p_->mr->rkey;
    p_->local.addr = reinterpret_cast<std::uintptr_t>(p_->buf);
    p_->local.len = p_->len;
    p_->local.mtu = verbs::mtu_bytes(pa.active_mtu);
    return e;
}

RdmaEndpoint::~RdmaEndpoint() = default;

const verbs::QpInfo& RdmaEndpoint::local() const { return p_->local; }

Result<void> RdmaEndpoint::connect(const verbs::QpInfo& remote) {
    const Ibv& v = *p_->v;
    p_->remote = remote;
    const auto qa = verbs::choose_qp_attrs(p_->port, p_->local.mtu, remote.mtu, p_->gid_index);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = static_cast<uint8_t>(p_->port.port);
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (v.modify_qp(p_->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return Failure{"queue pair to INIT failed on " + p_->port.hca};
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = static_cast<ibv_mtu>(qa.path_mtu);
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.max_dest_rd_atomic = static_cast<uint8_t>(qa.max_rd_atomic);
    a.min_rnr_timer = static_cast<uint8_t>(qa.min_rnr_timer);
    a.ah_attr.dlid = remote.lid;
    a.ah_attr.sl = 0;
    a.ah_attr.port_num = static_cast<uint8_t>(p_->port.port);
    if (qa.is_global) {
        // The peer's text: 32 hex digits, or refused here (std::stoul would throw on the rest).
        if (remote.gid.size() != 32 || remote.gid.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            return Failure{"the peer sent no usable GID (" + std::to_string(remote.gid.size()) +
                        " hex digits): RoCE needs one; check its GID table (GANGWAY_IB_GID_INDEX)"};
        a.ah_attr.is_global = 1;
        for (int i = 0; i < 16; ++i) a.ah_attr.grh.dgid.raw[i] = static_cast<uint8_t>(std::stoul(remote.gid.substr(2 * i, 2), nullptr, 16));
        a.ah_attr.grh.sgid_index = static_cast<uint8_t>(qa.sgid_index);
        a.ah_attr.grh.hop_limit = static_cast<uint8_t>(qa.hop_limit);
    }
    if (v.modify_qp(p_->qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                        IBV_QP_MIN_RNR_TIMER))
        return Failure{"queue pair to RTR failed on " + p_->port.hca + " (wrong GID index or path MTU for the peer?)"};
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = static_cast<uint8_t>(qa.timeout);
    a.retry_cnt = static_cast<uint8_t>(qa.retry_cnt);
    a.rnr_retry = static_cast<uint8_t>(qa.rnr_retry);
    a.sq_psn = p_->local.psn;
    a.max_rd_atomic = static_cast<uint8_t>(qa.max_rd_atomic);
    if (v.modify_qp(p_->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
        return Failure{"queue pair to RTS failed on " + p_->port.hca};
    return {};
}

Result<double> RdmaEndpoint::write_for(long ms, std::size_t msg) {
    msg = std::min(msg, static_cast<std::size_t>(std::min(p_->len, static_cast<std::size_t>(p_->remote.len))));
    if (msg == 0) return Failure{"the peer's RDMA buffer is empty"};
    const auto t0 = std::chrono::steady_clock::now();
    const auto stop = t0 + std::chrono::milliseconds(ms);
    const auto give_up = stop + std::chrono::seconds(5);
    // At most 8 MiB in flight: enough to fill a 400 Gb/s link over a fabric's
    // round trip, little enough that draining after `ms` stays short on a
    // slow link.
    const int depth = static_cast<int>(std::clamp<std::size_t>((std::size_t(8) << 20) / msg, 2, 32));
    int outstanding = 0;
    double done = 0;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(p_->buf);
    sge.length = static_cast<uint32_t>(msg);
    sge.lkey = p_->mr->lkey;
    ibv_send_wr wr{}, *bad = nullptr;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = p_->remote.addr;
    wr.wr.rdma.rkey = p_->remote.rkey;
    ibv_wc wc[16];
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        while (now < stop && outstanding < depth) {
            if (ibv_post_send(p_->qp, &wr, &bad)) return Failure{"posting an RDMA write failed on " + p_->port.hca};
            ++outstanding;
        }
        if (outstanding == 0) break;
        const int n = ibv_poll_cq(p_->cq, 16, wc);
        if (n < 0) return Failure{"polling the completion queue failed on " + p_->port.hca};
        if (n == 0) std::this_thread::yield();
        for (int i = 0; i < n; ++i) {
            --outstanding;
            if (wc[i].status != IBV_WC_SUCCESS)
                return Failure{"RDMA write on " + p_->port.hca + "/" + std::to_string(p_->port.port) + " failed with status " +
                            std::to_string(wc[i].status) + wc_hint(wc[i].status)};
            done += static_cast<double>(msg);
        }
        if (now > give_up) {
            // Writes still complete, slowly: the rate so far says how slow. None at all: stalled.
            if (done > 0) break;
            return Failure{"RDMA writes did not complete on " + p_->port.hca + " (the path is stalled)"};
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return secs > 0 ? done / secs : 0;
}

#else  // no infiniband/verbs.h at build time: the data path is absent

static void query_active_mtu(std::vector<verbs::Port>&) {}
struct RdmaEndpoint::Impl {
    verbs::QpInfo local;
};
RdmaEndpoint::RdmaEndpoint() : p_(std::make_unique<Impl>()) {}
Result<std::unique_ptr<RdmaEndpoint>> RdmaEndpoint::open(const verbs::Port&, unsigned, std::size_t) {
    return Failure{"this gangway was built without libibverbs headers (install libibverbs-dev / rdma-core-devel and rebuild)"};
}
RdmaEndpoint::~RdmaEndpoint() = default;
const verbs::QpInfo& RdmaEndpoint::local() const { return p_->local; }
Result<void> RdmaEndpoint::connect(const verbs::QpInfo&) { return {}; }
Result<double> RdmaEndpoint::write_for(long, std::size_t) { return 0.0; }

#endif

StageOutcome run_verbs_stage_local(const VerbsStageOptions& o, std::vector<verbs::Port>* out_ports) {
    const auto t0 = Clock::now();
    auto secs = [&] { return seconds_since(t0); };
    auto all = read_ib_ports(o.root);
    if (all.empty()) return to_outcome("verbs", gpu::skipped("no RDMA devices", o.t.require_verbs, "verbs"), secs());
    std::vector<verbs::Port> ports;
    for (auto& p : all)
        if (o.hcas.empty() || std::find(o.hcas.begin(), o.hcas.end(), p.hca) != o.hcas.end()) ports.push_back(p);
    if (ports.empty()) {
        std::string names;
        for (const auto& h : o.hcas) names += (names.empty() ? "" : ",") + h;
        return to_outcome("verbs", gpu::skipped("no compute HCA here (wanted " + names + ")", o.t.require_verbs, "verbs"), secs());
    }
    if (o.query_mtu && (o.root == "/" || o.root.empty())) query_active_mtu(ports);
    const auto verdicts = verbs::judge_ports(ports, o.t.ib_rate_gbps, o.t.gid_index);
    gpu::StageVerdict v;
    std::string detail;
    unsigned usable = 0;
    for (std::size_t i = 0; i < ports.size(); ++i) {
        const auto& p = ports[i];
        char b[160];
        std::snprintf(b, sizeof b, "%s/%u %s %g Gb/s%s%s", p.hca.c_str(), p.port, p.link_layer == "Ethernet" ? "RoCE" : "IB",
                      p.rate_gbps, p.state_name.empty() ? "" : " ", p.state_name.c_str());
        std::string line = b;
        if (verbs::roce(p)) {
            std::string why;
            if (auto g = verbs::choose_gid(p, o.t.gid_index, why)) line += " gid " + std::to_string(*g);
        }
        detail += (detail.empty() ? "" : ", ") + line;
        usable += verdicts[i].usable;
        for (const auto& pr : verdicts[i].problems) v.findings.push_back({verdicts[i].name, pr});
    }
    if (!v.findings.empty()) v.status = StageStatus::failed;
    v.detail = std::to_string(usable) + "/" + std::to_string(ports.size()) + " port(s) usable: " + detail +
               (v.status == StageStatus::ok ? "; RDMA writes between nodes: the rdma stage of gangway check" : "");
    if (out_ports) *out_ports = ports;
    auto out = to_outcome("verbs", v, secs());
    out.ports = std::move(ports);
    return out;
}

}  // namespace gangway::sys
