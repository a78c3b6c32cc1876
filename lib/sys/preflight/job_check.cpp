// The entry of the preflight: chooses the bootstrap (PMIx fence or TCP), starts
// the speaker's data listener, and plays this task's part: coordinator, speaker
// or plain task waiting for the verdict.
#include "job_check.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "../../base/error.hpp"
#include "../../base/result.hpp"
#include "../../env/port.hpp"
#include "../../env/rank_order.hpp"
#include "../node/topology_file.hpp"
#include "../../env/step_view.hpp"
#include "../../preflight/bootstrap.hpp"
#include "../../preflight/crypto.hpp"
#include "../../preflight/protocol.hpp"
#include "../../preflight/wire.hpp"
#include "pmix_bootstrap.hpp"
#include "../net/rendezvous.hpp"
#include "../devices/node_card.hpp"
#include "internal.hpp"

namespace gangway::sys {
using namespace preflight;
using namespace pf;

StepFacts step_facts_from_env(bool insecure) {
    EnvMap env;
    for (const auto& name : step_env_names())
        if (const char* v = std::getenv(name.c_str())) env[name] = v;
    StepView view = make_step_view(facts_from_env(env));
    // With rank_order=topology the plugin's own check (GANGWAY_CHECK_ORDER_FD
    // set) gets the step as SLURM numbers it: every node meets at SLURM's node
    // 0 whatever order its file gave, and node 0 compares the orders' tags
    // (the cards carry them); its ring follows the order when they agree.
    // Elsewhere (`srun gangway check` as the command) the tasks' variables
    // already follow the order: the check numbers the nodes as they do, and
    // the tag proves the same order came out here.
    const std::string order = sys::env_or("GANGWAY_NODE_ORDER");
    const bool agreement = !sys::env_or("GANGWAY_CHECK_ORDER_FD").empty() && !order.empty();
    std::vector<unsigned> ring;
    if (agreement && order.starts_with("topology:") && view.node_index == 0 && view.local_rank.value_or(1) == 0) {
        // Only node 0's coordinator needs the order; a file that no longer
        // gives the plugin's tag leaves no ring order, which the coordinator
        // takes for a disagreement.
        if (auto loaded = sys::load_switch_topology(sys::env_or("GANGWAY_TOPOLOGY_FILE"), sys::env_or("SLURM_CONF"))) {
            const NodeOrder o = topology_order(loaded->topo, view.nodes);
            if (order_tag(view.nodes, o) == order) ring = o.order;
        }
    } else if (!agreement && order.starts_with("topology:")) {
        auto loaded = sys::load_switch_topology(sys::env_or("GANGWAY_TOPOLOGY_FILE"), sys::env_or("SLURM_CONF"));
        if (!loaded) throw Error("rank_order=topology: " + loaded.error());
        const NodeOrder o = topology_order(loaded->topo, view.nodes);
        if (order_tag(view.nodes, o) != order)
            throw Error("rank_order=topology: " + loaded->path + " gives another order than the plugin computed (" +
                        order + "); was the file changed while the step started?");
        // The nodes follow the order; a task's rank stays SLURM_PROCID (the
        // PMIx bootstrap checks it against PMIx's rank).
        const auto slurm_rank = view.rank;
        apply_order(view, o);
        view.rank = slurm_rank;
    }
    StepFacts s;
    s.nodes = view.nodes;
    s.nnodes = static_cast<unsigned>(view.nodes.size());
    s.node_rank = view.node_index;
    s.tasks_per_node = view.tasks_per_node;
    s.ntasks = view.total_tasks;
    if (!view.rank || !view.local_rank)
        throw Error("SLURM_PROCID/SLURM_LOCALID are not set: run gangway run/check as a step's task, e.g. srun gangway check");
    s.rank = *view.rank;
    s.local = *view.local_rank;
    s.order_agreement = agreement;
    s.ring_order = std::move(ring);
    s.job_id = std::to_string(view.job_id);
    s.step_id = std::to_string(view.step_id);
    s.primary_addr = sys::env_or("PRIMARY_ADDR", sys::env_or("MASTER_ADDR"));
    const auto port = sys::env_or("PRIMARY_PORT", sys::env_or("MASTER_PORT"));
    s.node_addr = sys::env_or("NODE_ADDR");
    if (s.primary_addr.empty() || port.empty() || s.node_addr.empty())
        throw Error("PRIMARY_ADDR, PRIMARY_PORT and NODE_ADDR are not set: the gangway plugin sets them; check that "
                    "plugstack.conf loads gangway.so and the step is not --gangway=off");
    try {
        const unsigned long p = std::stoul(port);
        if (p == 0 || p + 2 > 65535) throw Error("");
        s.port = static_cast<unsigned>(p);
    } catch (...) {
        throw Error("PRIMARY_PORT \"" + port + "\" is not a port number below 65534");
    }
    // A heterogeneous step's components reserve separate ports: none is the step's (as in the plugin).
    if (!view.heterogeneous) s.resv_ports = sys::env_or("SLURM_STEP_RESV_PORTS");
    std::string iface = sys::env_or("NCCL_SOCKET_IFNAME", sys::env_or("GANGWAY_IFACE"));
    if (!iface.empty() && iface[0] == '=') iface.erase(0, 1);
    if (auto c = iface.find(','); c != std::string::npos) iface.resize(c);
    if (iface.empty() || iface[0] == '^') {
        iface.clear();
        for (const auto& nic : sys::live_net_nics())
            for (const auto& a : nic.addrs)
                if (a == s.node_addr) iface = nic.name;
    }
    s.data_iface = iface;
    if (insecure) {
        s.key = insecure_key();
    } else {
        const auto secret = sys::env_or("GANGWAY_SECRET");
        if (secret.empty())
            throw Error(std::string("GANGWAY_SECRET is not set: the gangway plugin creates it in srun for the step; "
                                    "check that plugstack.conf loads a gangway.so that supports the preflight") +
                        // --insecure is refused inside a job (cmd_run.cpp): never suggest it there.
                        (sys::env_or("SLURM_JOB_ID").empty() ? " (or use --insecure for a test outside SLURM)" : ""));
        s.key = key_from_secret(secret);
    }
    return s;
}

namespace {

// The most bad nodes a verdict message names (coordinate_step).
constexpr std::size_t kVerdictNames = 16;

// The verdict message (TCP kVerdict or PMIx fence #2) as a task's outcome.
void take_verdict(const Kv& v, Outcome& out) {
    try {
        out.exit_code = static_cast<int>(kv_u64(v, "exit_code"));
        out.verdict = parse_verdict(kv_str(v, "verdict"));
        out.bad_nodes = split_nonempty(kv_str(v, "bad"), ',');
        out.message = kv_str(v, "summary");
        if (auto it = v.find("order_answer"); it != v.end()) out.order_answer = it->second;
    } catch (const Error& e) {
        out.verdict = Verdict::unreachable;
        out.exit_code = kExitCannotCheck;
        out.message = e.what();
    }
}

// A speaker's listener for its peers' probes and bandwidth streams, served on
// its own thread until this goes.
class DataListener {
public:
    explicit DataListener(const StepFacts& s) : state_(std::make_shared<DataState>()) {
        state_->key = s.key;
        state_->self = s.node_rank;
    }
    DataListener(const DataListener&) = delete;
    DataListener& operator=(const DataListener&) = delete;
    ~DataListener() {
        state_->stop = true;
        if (thread_.joinable()) thread_.join();
    }

    // PORT+2 when the step reserved it (data_listen_port), else a free port
    // the kernel chooses, announced in the card; any address when there is no
    // data address to listen on (the task checks in anyway, and the cards say why).
    Result<void> start(const StepFacts& s) {
        unsigned want = 0;
        try {
            want = data_listen_port(s.port, s.resv_ports);
        } catch (const Error& e) {
            return Failure{e.what()};
        }
        auto l = sys::tcp_listen(s.node_addr, want, 4096);
        if (!l && want) l = sys::tcp_listen(s.node_addr, 0, 4096);
        if (!l) l = sys::tcp_listen("", 0, 4096);
        if (!l) return Failure{"the data listener cannot start: " + l.error()};
        port_ = sys::local_port(l->get());
        thread_ = std::thread(data_server, state_, std::move(*l));
        return {};
    }
    const std::shared_ptr<DataState>& state() const { return state_; }
    unsigned port() const { return port_; }  // 0 when not started

private:
    std::shared_ptr<DataState> state_;  // shared with the connections' detached threads
    unsigned port_ = 0;
    std::thread thread_;
};

// This task's PMIx session, when fence #1 passed or PMIx was tried. The tasks
// normally leave() together right after fence #2; whatever way the check
// ends, the session is finalized when this goes.
struct PmixBoot {
    std::optional<PmixSession> session;
    std::unique_ptr<NodeExitBarrier> exit_barrier;  // once fence #1 passed

    PmixBoot() = default;
    PmixBoot(const PmixBoot&) = delete;
    PmixBoot& operator=(const PmixBoot&) = delete;
    ~PmixBoot() {
        if (session) pmix_finalize(*session, 2);
    }
    // Finalize at once, all tasks close together: a task's command that
    // gangway run starts fences anew, and a fence begun while a task of the
    // same node is still in its old PMIx session fails.
    void leave() {
        pmix_finalize(*session, 2);
        // One line, from the node's first task only (the others wait the same
        // bounded time and know no more).
        if (auto b = exit_barrier->arrive(2); !b && exit_barrier->leader())
            std::fprintf(stderr, "gangway: %s\n", b.error().c_str());
    }
};

// This task's part of the preflight. Its members stop the data listener and
// finalize PMIx when it goes, so every way out of run() is a plain return.
class TaskRun {
public:
    TaskRun(const PreflightOptions& opt, const StepFacts& s)
        : opt_(opt), s_(s), start_(Clock::now()),
          overall_(start_ + std::chrono::milliseconds(static_cast<long>(opt.timeout_s * 1000))),
          // How long a task waits for node 0's verdict: node 0 may raise the
          // default deadline (a node of the step has GPUs, maybe not this one).
          verdict_by_(gpu_step_deadline(opt, start_, overall_)), coordinator_(s.node_rank == 0 && s.local == 0),
          speaker_(s.local == 0), data_(s) {
        boot_.start = start_;
    }

    Outcome run();

private:
    Outcome cannot_check(std::string why) const;
    Result<sys::Fd> listen_for_rendezvous() const;
    Result<void> fence1();
    bool fence2(const Kv* mine, std::string& err);
    Outcome await_verdict();
    Outcome coordinate_step(sys::Fd listener);

    const PreflightOptions& opt_;
    const StepFacts& s_;
    const Clock::time_point start_;
    const Deadline overall_, verdict_by_;
    const bool coordinator_, speaker_;
    BootInfo boot_;
    PmixBoot pmix_;      // before data_: finalized after the listener stopped
    DataListener data_;
};

Outcome TaskRun::run() {
    // The bootstrap: PMIx when the step has it (and --bootstrap allows), else TCP.
    BootstrapChoice choice;
    try {
        choice = choose_bootstrap(opt_.bootstrap, pmix_built(), pmix_in_env(), opt_.command_follows);
    } catch (const Error& e) {
        return cannot_check(e.what());
    }
    if (speaker_ && opt_.check != CheckLevel::none)
        if (auto started = data_.start(s_); !started) return cannot_check(started.error());
    // The coordinator listens before fence #1, so that tasks falling back to
    // TCP queue up in the backlog until it gathers.
    sys::Fd listener;
    if (coordinator_) {
        auto l = listen_for_rendezvous();
        if (!l) return cannot_check(l.error());
        listener = std::move(*l);
    }
    if (choice.try_pmix)
        if (auto fenced = fence1(); !fenced) return cannot_check(fenced.error());
    return coordinator_ ? coordinate_step(std::move(listener)) : await_verdict();
}

Outcome TaskRun::cannot_check(std::string why) const {
    Outcome out;
    out.coordinator = coordinator_;
    out.exit_code = kExitCannotCheck;
    out.message = std::move(why);
    return out;
}

Result<sys::Fd> TaskRun::listen_for_rendezvous() const {
    // Raise the descriptor limit for thousands of tasks.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    unsigned port = 0;
    try {
        port = rendezvous_port(s_.port, s_.resv_ports);
    } catch (const Error& e) {
        return Failure{e.what()};
    }
    auto l = sys::tcp_listen("", port, 8192);
    if (!l)
        return Failure{"the rendezvous cannot listen on port " + std::to_string(port) + " (PRIMARY_PORT+1) on node 0: " + l.error() +
                       "; another program holds it. Have SLURM reserve the step's ports (MpiParams=ports=LO-HI in slurm.conf, "
                       "srun --resv-ports) so that no other job or user can take them"};
    return l;
}

// PMIx fence #1: every task of the step is alive. Half the join timeout, so
// that a missing task leaves the TCP rendezvous time to name its node. When
// it does not pass, TCP takes over (boot_.note says why), unless
// --bootstrap=pmix and PMIx cannot even start: then the check cannot run.
Result<void> TaskRun::fence1() {
    const Deadline f1 =
        std::min(overall_, start_ + std::chrono::milliseconds(static_cast<long>(fence1_timeout_s(opt_.join_timeout_s) * 1000)));
    std::string err;
    pmix_.session = pmix_init(std::max(0.5, seconds_left(f1)), err);
    if (pmix_.session) {
        err = pmix_step_mismatch(pmix_.session->rank, pmix_.session->size, s_.rank, s_.ntasks);
        const auto tf = Clock::now();
        if (err.empty() && pmix_fence(*pmix_.session, nullptr, false, std::max(0.2, seconds_left(f1)), err)) {
            boot_.pmix = true;
            boot_.fence_s = sys::seconds_since(tf);
        }
    } else if (opt_.bootstrap == BootstrapMode::pmix) {
        return Failure{"--bootstrap=pmix: " + err};
    }
    if (!boot_.pmix) {
        boot_.note = err;
        return {};
    }
    const unsigned here = s_.node_rank < s_.tasks_per_node.size() ? s_.tasks_per_node[s_.node_rank] : 1;
    // The name, and a tag from the step's secret: a stranger on the node cannot
    // guess it and take it first (the barrier checks its peers' uid anyway,
    // pmix_bootstrap.hpp says how).
    const std::string name =
        "gangway." + std::to_string(::getuid()) + "." + s_.job_id + "." + s_.step_id + "." + std::to_string(s_.node_rank);
    std::string tag;
    try {
        tag = "." + to_hex(hmac_sha256(s_.key, "gangway exit barrier " + name)).substr(0, 16);
    } catch (const Error&) {  // no SHA-256 in libcrypto: the uid checks still hold
    }
    pmix_.exit_barrier = std::make_unique<NodeExitBarrier>(name + tag, speaker_, here);
    return {};
}

// PMIx fence #2 hands rank 0's verdict to every task: until the check's
// deadline and the margin the TCP verdict has too.
bool TaskRun::fence2(const Kv* mine, std::string& err) {
    return pmix_fence(*pmix_.session, mine, true, seconds_left(verdict_by_) + 5, err);
}

// A speaker or a plain task: node 0's verdict over TCP or, after fence #1,
// through fence #2 (plain tasks only there; a speaker that lost node 0 may
// still learn it there).
Outcome TaskRun::await_verdict() {
    Outcome out;
    out.coordinator = false;
    std::string err;
    std::optional<Kv> v;
    if (!(boot_.pmix && !speaker_)) {
        auto got = client_session(opt_, s_, speaker_, verdict_by_, data_.state(), data_.port());
        if (got) v = std::move(*got);
        else err = got.error();
    }
    if (boot_.pmix) {  // every task takes part in fence #2
        std::string ferr;
        if (fence2(nullptr, ferr)) {
            if (!v) {
                auto pv = pmix_get(*pmix_.session, 0, std::max(1.0, seconds_left(verdict_by_) + 5), ferr);
                if (pv) v = std::move(pv);
                else if (!speaker_) err = "the verdict did not arrive over PMIx (" + ferr + ")";
            }
        } else if (!v) {
            err = speaker_ ? err + "; " + ferr : "the verdict did not arrive over PMIx (" + ferr + "): a task of the step exited or hung";
        }
        pmix_.leave();
    }
    if (!v) {
        out.verdict = Verdict::unreachable;
        out.exit_code = kExitUnreachable;
        out.message = err;
        return out;
    }
    take_verdict(*v, out);
    return out;
}

// Node 0's first task: the coordination, then the verdict to every task (over
// TCP, and through fence #2 after fence #1).
Outcome TaskRun::coordinate_step(sys::Fd listener) {
    Outcome out;
    out.coordinator = true;
    sys::Coordinator coord(s_.key, std::move(listener));
    // This node's speaker talks to the coordinator like every other; what it
    // learns is the verdict made here.
    std::thread self_speaker([&] {
        try {
            (void)client_session(opt_, s_, true, verdict_by_, data_.state(), data_.port());
        } catch (const std::exception&) {  // out of memory: the coordinator names this node missing, as for any speaker
        }
    });
    Report rep = coordinate(opt_, s_, coord, overall_, boot_);
    const Verdict v = verdict(rep);
    out.verdict = v;
    out.exit_code = exit_code(v);
    out.bad_nodes = bad_nodes(rep);  // all of them, for node 0's requeue
    // The verdict goes to every task and names at most kVerdictNames nodes:
    // with every bad node in it, it grew by a name per bad node, and node 0
    // sent N of them (31 MB with 1,023 bad nodes of 2,048, BENCHMARKS.md).
    // Node 0's report names them all.
    const std::size_t shown = std::min(out.bad_nodes.size(), kVerdictNames), more = out.bad_nodes.size() - shown;
    std::string bad;
    for (std::size_t i = 0; i < shown; ++i) bad += (bad.empty() ? "" : ",") + out.bad_nodes[i];
    out.message = std::string("preflight ") + to_string(v) + (bad.empty() ? "" : ": " + bad) +
                  (more ? " and " + std::to_string(more) + " more (node 0's report names them all)" : "");
    Kv vk{{"verdict", to_string(v)}, {"exit_code", std::to_string(out.exit_code)}, {"bad", bad}, {"summary", out.message}};
    if (more) vk["bad_more"] = std::to_string(more);
    // The nodes computed different rank orders: every task keeps SLURM's.
    out.order_answer = rep.order_answer;
    if (!out.order_answer.empty()) vk["order_answer"] = out.order_answer;
    for (auto& m : coord.members()) coord.send(m, kVerdict, vk, after_ms(1000));
    coord.close_listener();
    self_speaker.join();
    if (boot_.pmix) {
        const auto t2 = Clock::now();
        std::string ferr;
        if (!fence2(&vk, ferr)) {
            // A task that passed fence #1 is gone: it never got the verdict.
            rep.stages.push_back({"verdict", StageStatus::failed, "the PMIx fence handing the verdict to every task failed: " + ferr,
                                  sys::seconds_since(t2)});
            rep.findings.push_back("a task exited or hung before the verdict reached it (" + ferr + ")");
            out.verdict = Verdict::unreachable;
            out.exit_code = kExitUnreachable;
            out.message += "; " + ferr;
        }
        pmix_.leave();  // at once, as the other tasks do
    }
    out.report = std::move(rep);
    return out;
}

}  // namespace

Outcome run_preflight(const PreflightOptions& opt, const StepFacts& s) { return TaskRun(opt, s).run(); }

}  // namespace gangway::sys
