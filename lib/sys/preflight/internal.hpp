// Internal to the launcher's preflight, shared by its four files:
// preflight.cpp (the entry: bootstrap and who plays which part),
// data.cpp (every speaker's listener for probes and streams),
// speaker.cpp (each node's first task: runs its node's share of
// the checks on the coordinator's command) and coordinator.cpp
// (node 0's first task: the stages, localisation and the report).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../base/text.hpp"
#include "../../preflight/rdma_checks.hpp"
#include "../../preflight/report.hpp"
#include "../../preflight/wire.hpp"
#include "../net/rendezvous.hpp"
#include "../net/sock.hpp"
#include "../node/process_env.hpp"
#include "job_check.hpp"

namespace gangway::sys {
class RdmaEndpoint;  // lib/sys/stages/verbs_stage.hpp: only GpuSpeaker's own file needs it whole
}

namespace gangway::sys::pf {

using preflight::Kv;


// ---------------------------------------------------------------- data side
struct RxRecord {
    bool ok = false;
    double bps = 0;
    std::string error;
};

// Handlers at once on a data port (item 6 of issue 15). Node 0 is in every
// node's reach list (reach_targets), so at 2,048 nodes it takes about 2,050
// probes at once, plus a few random peers' and one or two bandwidth streams;
// every other node a handful. 4,096 is twice the most at 2,048 nodes. Those
// still waiting for their first frame are capped lower (waiting_cap: an
// eighth of the descriptor limit): beyond that the oldest one waiting for
// 200 ms (a peer sends its request at once) is dropped.
inline constexpr std::size_t kMaxDataHandlers = 4096;

struct DataState {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::pair<unsigned, unsigned>, RxRecord> rx;  // (round, from) -> record
    std::string key;
    unsigned self = 0;
    std::atomic<bool> stop{false};
    sys::RejectLog rejects{sys::Listener::data};
    // The handlers (data.cpp), under gate_mu.
    std::mutex gate_mu;
    std::size_t handlers = 0;                   // running
    std::map<int, Clock::time_point> waiting;  // their descriptors, until the first frame arrived
};

// Accepts probes and bandwidth streams until st->stop: one thread each, at
// most kMaxDataHandlers; a connection beyond, or one no thread can be started
// for, is closed and told.
void data_server(std::shared_ptr<DataState> st, sys::Fd listener);

struct ProbeResult {
    bool ok = false;
    double ms = 0;
    std::string error;
};
ProbeResult probe(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, int timeout_ms);

struct TxResult {
    bool ok = false;
    std::string error;
};
TxResult stream_to(const std::string& key, unsigned self, unsigned to, const std::string& addr, unsigned port, unsigned round,
                   long duration_ms, long warm_ms, std::size_t write_bytes);

// ---------------------------------------------------------------- speaker
// The speaker's GPU and RDMA work (speaker_gpu.cpp): this node's
// stages, then its share of the cross-node NCCL all-reduce and of the RDMA
// write rounds, whose endpoints live from "prep" to "done".
class GpuSpeaker {
public:
    GpuSpeaker();
    ~GpuSpeaker();  // where RdmaEndpoint is complete
    Kv local_stages(const Kv& cmd);  // kLocal -> kLocalResult
    Kv nccl(const Kv& cmd);          // kNccl -> kNcclResult
    Kv rdma(const Kv& cmd);          // kRdma -> kRdmaResult

private:
    std::optional<int> gid_index_;    // GANGWAY_IB_GID_INDEX / NCCL_IB_GID_INDEX, read by local_stages
    std::vector<verbs::Port> ports_;  // the verbs stage's compute ports: rail k is ports_[k]
    std::unique_ptr<sys::RdmaEndpoint> send_, recv_;
};

// The deadline once node 0 knows a node of the step has GPUs: with the
// default timeout, the GPU default counted from `start`; else `overall`.
// Node 0 raises its deadline to it; every other task waits for the verdict
// that long until the welcome tells it node 0's deadline.
Deadline gpu_step_deadline(const PreflightOptions& opt, Clock::time_point start, Deadline overall);

// The speaker's (and the plain task's) side of the conversation; returns the
// verdict message, or why it did not arrive.
Result<Kv> client_session(const PreflightOptions& opt, const StepFacts& s, bool speaker, Deadline verdict_by,
                          std::shared_ptr<DataState> data, unsigned data_port);

// ---------------------------------------------------------------- coordinator
// What the bootstrap before the coordination found.
struct BootInfo {
    bool pmix = false;     // every task passed PMIx fence #1: only speakers join over TCP
    double fence_s = 0;    // fence #1's duration
    std::string note;      // why PMIx was not used, when it was tried
    Clock::time_point start = Clock::now();  // the join timeout counts from here
};

// Node 0's first task: gathers the step, runs the stages, returns the report.
preflight::Report coordinate(const PreflightOptions& opt, const StepFacts& step, sys::Coordinator& coord, Deadline overall,
                             const BootInfo& boot);

}  // namespace gangway::sys::pf
