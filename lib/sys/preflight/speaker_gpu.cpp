// The speaker's GPU and RDMA work. kLocal runs this node's cuda, nccl and
// verbs stages and answers with their verdicts plus what the cross-node stages
// need (per-GPU copy figures, the NCCL library, the compute ports). kNccl and
// kRdma are this node's share of the cross-node NCCL all-reduce and RDMA write
// rounds that the coordinator orchestrates.
#include <algorithm>
#include <cstdio>

#include "../../base/error.hpp"
#include "../../preflight/crypto.hpp"
#include "../node/process_env.hpp"
#include "../node/sysfs.hpp"
#include "../stages/local_stages.hpp"
#include "../stages/nccl_stage.hpp"
#include "../stages/stage.hpp"
#include "../stages/verbs_stage.hpp"
#include "internal.hpp"

namespace gangway::sys::pf {
using namespace preflight;

namespace {

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

Kv failure(const std::string& why) { return {{"ok", "0"}, {"error", why}}; }

}  // namespace

GpuSpeaker::GpuSpeaker() = default;
GpuSpeaker::~GpuSpeaker() = default;

// Keys: s.I.{name,status,detail,seconds,findings}, s.I.f.J the findings'
// text; gpus and g.J.{index,name,bus,h2d,d2h,error}; nccl_lib; ports and
// p.K.{name,rate,usable}.
Kv GpuSpeaker::local_stages(const Kv& cmd) {
    sys::LocalStagesOptions o;
    o.full = kv_str(cmd, "full") == "1";
    o.timeout_s = std::max(1.0, static_cast<double>(kv_u64(cmd, "timeout_ms")) / 1000.0);
    o.nccl_lib = kv_str(cmd, "nccl_lib");
    o.env = sys::process_env();
    // Another sysfs tree (a copy from a real node, or the test fixtures): its
    // HCAs are then all compute HCAs.
    o.root = sys::sysfs_root();
    try {
        gid_index_ = gpu::thresholds_from_env(o.env).gid_index;
    } catch (const Error&) {  // the stages below report the bad value
        gid_index_.reset();
    }
    std::vector<sys::StageOutcome> outs;
    try {
        outs = sys::run_local_stages(o);
    } catch (const Error& e) {  // bad GANGWAY_* thresholds on this node
        for (const char* st : {"cuda", "nccl", "verbs"}) {
            sys::StageOutcome o;
            o.result = {st, StageStatus::failed, e.what(), 0};
            outs.push_back(std::move(o));
        }
    }
    Kv out{{"n", std::to_string(outs.size())}};
    ports_.clear();
    for (std::size_t i = 0; i < outs.size() && i < 16; ++i) {
        const auto p = "s." + std::to_string(i) + ".";
        const auto& o = outs[i];
        const auto& r = o.result;
        out[p + "name"] = r.name;
        out[p + "status"] = to_string(r.status);
        out[p + "detail"] = r.detail;
        out[p + "seconds"] = std::to_string(r.seconds);
        const std::size_t nf = std::min<std::size_t>(o.findings.size(), 64);
        out[p + "findings"] = std::to_string(nf);
        for (std::size_t j = 0; j < nf; ++j) out[p + "f." + std::to_string(j)] = o.findings[j].what + ": " + o.findings[j].problem;
        if (r.name == "cuda") {
            const std::size_t ng = std::min<std::size_t>(o.gpus.size(), 64);
            out["gpus"] = std::to_string(ng);
            for (std::size_t j = 0; j < ng; ++j) {
                const auto g = "g." + std::to_string(j) + ".";
                const auto& gr = o.gpus[j];
                out[g + "index"] = std::to_string(gr.index);
                out[g + "name"] = gr.name;
                out[g + "bus"] = gr.bus_id;
                out[g + "error"] = gr.error;
                out[g + "gen"] = std::to_string(gr.pcie_gen);
                out[g + "width"] = std::to_string(gr.pcie_width);
                if (gr.h2d_gbps) out[g + "h2d"] = num(*gr.h2d_gbps);
                if (gr.d2h_gbps) out[g + "d2h"] = num(*gr.d2h_gbps);
            }
        } else if (r.name == "nccl") {
            if (r.status == StageStatus::ok) out["nccl_lib"] = o.nccl_lib;
            const std::size_t nr = std::min<std::size_t>(o.nccl_runs.size(), 8);
            out["nccl_runs"] = std::to_string(nr);
            for (std::size_t j = 0; j < nr; ++j) {
                const auto q = "n." + std::to_string(j) + ".";
                const auto& run = o.nccl_runs[j];
                out[q + "ranks"] = std::to_string(run.nranks);
                out[q + "bytes"] = std::to_string(static_cast<long long>(run.bytes));
                out[q + "seconds"] = num(run.seconds);
                out[q + "data_ok"] = run.data_ok ? "1" : "0";
                out[q + "error"] = run.error;
            }
        } else if (r.name == "verbs") {
            // Rails in a stable order, so that rail k means the same HCA slot on every node.
            ports_ = o.ports;
            std::sort(ports_.begin(), ports_.end(),
                      [](const verbs::Port& a, const verbs::Port& b) { return std::tie(a.hca, a.port) < std::tie(b.hca, b.port); });
            out["ports"] = std::to_string(ports_.size());
            for (std::size_t k = 0; k < ports_.size(); ++k) {
                const auto q = "p." + std::to_string(k) + ".";
                out[q + "name"] = ports_[k].hca + "/" + std::to_string(ports_[k].port);
                out[q + "rate"] = num(ports_[k].rate_gbps);
                out[q + "usable"] = verbs::port_up(ports_[k]) ? "1" : "0";
            }
        }
    }
    return out;
}

// phase id: {lib} -> {ok, id (hex)}; phase run: {lib, id, nranks, first_rank,
// devices, bytes, iterations, deadline_ms} -> {ok, error, seconds, data_ok}.
Kv GpuSpeaker::nccl(const Kv& cmd) {
    const auto phase = kv_str(cmd, "phase");
    if (phase == "id") {
        std::string err;
        auto id = sys::nccl_unique_id(kv_str(cmd, "lib"), err);
        if (!id) return failure(err);
        return {{"ok", "1"}, {"id", to_hex(*id)}};
    }
    if (phase != "run") return failure("unknown nccl phase '" + phase + "'");
    sys::NcclJob job;
    job.lib_path = kv_str(cmd, "lib");
    job.unique_id = from_hex(kv_str(cmd, "id"));
    job.nranks = static_cast<unsigned>(kv_u64(cmd, "nranks"));
    job.first_rank = static_cast<unsigned>(kv_u64(cmd, "first_rank"));
    job.devices = static_cast<unsigned>(kv_u64(cmd, "devices"));
    job.bytes = static_cast<double>(kv_u64(cmd, "bytes"));
    job.iterations = static_cast<int>(std::clamp<std::uint64_t>(kv_u64(cmd, "iterations"), 1, 100));
    job.deadline_s = static_cast<double>(kv_u64(cmd, "deadline_ms")) / 1000.0;
    job.scope = "job";
    // nccl_allreduce aborts a hung communicator itself; within() is the
    // backstop for a call that never returns (a wedged driver).
    const auto done = sys::within<gpu::NcclResult>(job.deadline_s + 2, [job] { return sys::nccl_allreduce(job); });
    if (!done) return failure("NCCL call did not return within " + num(job.deadline_s + 2) + " s (a GPU or driver is hung)");
    const auto& r = *done;
    if (!r.error.empty()) return failure(r.error);
    return {{"ok", "1"}, {"seconds", num(r.seconds)}, {"data_ok", r.data_ok ? "1" : "0"}};
}

// One RDMA write round on rail k: prep {rail, send, recv, bytes} makes the
// endpoints and answers their queue pairs (s.*, r.*); connect {to.*: the
// peer's receiving QP for our sender, from.*: the peer's sending QP for our
// receiver} brings both to RTS; go {ms, msg_bytes} writes and answers bps;
// done drops the endpoints (the peer has finished writing into ours by then).
Kv GpuSpeaker::rdma(const Kv& cmd) {
    const auto phase = kv_str(cmd, "phase");
    try {
        if (phase == "prep") {
            send_.reset();
            recv_.reset();
            const auto k = kv_u64(cmd, "rail");
            if (k >= ports_.size()) return failure("no rail " + std::to_string(k) + " here (" + std::to_string(ports_.size()) + " compute port(s))");
            const auto& port = ports_[k];
            std::string why;
            const auto gid = verbs::choose_gid(port, gid_index_, why);
            if (!gid) return failure(port.hca + "/" + std::to_string(port.port) + ": " + why);
            const auto bytes = static_cast<std::size_t>(std::clamp<std::uint64_t>(kv_u64(cmd, "bytes"), 4096, 64 << 20));
            Kv out{{"ok", "1"}};
            if (kv_str(cmd, "send") == "1") {
                auto e = sys::RdmaEndpoint::open(port, *gid, bytes);
                if (!e) return failure(e.error());
                send_ = std::move(*e);
                verbs::qp_info_to_kv(send_->local(), "s.", out);
            }
            if (kv_str(cmd, "recv") == "1") {
                auto e = sys::RdmaEndpoint::open(port, *gid, bytes);
                if (!e) return failure(e.error());
                recv_ = std::move(*e);
                verbs::qp_info_to_kv(recv_->local(), "r.", out);
            }
            return out;
        }
        if (phase == "connect") {
            // A peer whose prep failed sends no queue pair: that side stays idle.
            if (send_ && cmd.count("to.qpn")) {
                if (auto c = send_->connect(verbs::qp_info_from_kv(cmd, "to.")); !c) return failure(c.error());
            } else {
                send_.reset();
            }
            if (recv_ && cmd.count("from.qpn")) {
                if (auto c = recv_->connect(verbs::qp_info_from_kv(cmd, "from.")); !c) return failure(c.error());
            } else {
                recv_.reset();
            }
            return {{"ok", "1"}};
        }
        if (phase == "go") {
            if (!send_) return {{"ok", "1"}};
            const auto bps = send_->write_for(static_cast<long>(kv_u64(cmd, "ms")),
                                              static_cast<std::size_t>(kv_u64(cmd, "msg_bytes")));
            if (!bps) return failure(bps.error());
            return {{"ok", "1"}, {"bps", num(*bps)}};
        }
        if (phase == "done") {
            send_.reset();
            recv_.reset();
            return {{"ok", "1"}};
        }
        return failure("unknown rdma phase '" + phase + "'");
    } catch (const Error& e) {
        return failure(e.what());
    } catch (const std::exception& e) {
        return failure(std::string("RDMA: ") + e.what());
    }
}

}  // namespace gangway::sys::pf
