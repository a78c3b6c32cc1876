// The entry of the preflight: chooses the bootstrap (PMIx fence or TCP), starts
// the speaker's data listener, and plays this task's part: coordinator, speaker
// or plain task waiting for the verdict.
#include "preflight.hpp"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <set>
#include <thread>

#include "../lib/base/error.hpp"
#include "../lib/env/hostlist.hpp"
#include "../lib/preflight/bootstrap.hpp"
#include "../lib/preflight/card.hpp"
#include "../lib/preflight/localize.hpp"
#include "../lib/preflight/protocol.hpp"
#include "../lib/preflight/schedule.hpp"
#include "../lib/preflight/wire.hpp"
#include "../lib/env/step_view.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/node/node_card.hpp"
#include "../lib/sys/net/rendezvous.hpp"
#include "config.h"
#include "../lib/sys/net/pmix_bootstrap.hpp"
#include "preflight_internal.hpp"


namespace gangway::cli {
using namespace preflight;
using namespace pf;
using sys::after_ms;
using sys::ms_left;

StepFacts step_facts_from_env(bool insecure) {
    EnvMap env;
    for (const auto& name : step_env_names())
        if (const char* v = std::getenv(name.c_str())) env[name] = v;
    const StepView view = make_step_view(facts_from_env(env));
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
    s.job_id = std::to_string(view.job_id);
    s.step_id = std::to_string(view.step_id);
    s.primary_addr = env_or("PRIMARY_ADDR", env_or("MASTER_ADDR"));
    const auto port = env_or("PRIMARY_PORT", env_or("MASTER_PORT"));
    s.node_addr = env_or("NODE_ADDR");
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
    s.node_addrs = split(env_or("NODE_ADDRS"), ',');
    std::string iface = env_or("NCCL_SOCKET_IFNAME", env_or("GANGWAY_IFACE"));
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
        const auto secret = env_or("GANGWAY_SECRET");
        if (secret.empty())
            throw Error("GANGWAY_SECRET is not set: the gangway plugin creates it in srun for the step; check that "
                        "plugstack.conf loads a gangway.so that supports the preflight (or use --insecure for a test "
                        "outside SLURM)");
        s.key = key_from_secret(secret);
    }
    return s;
}

namespace {

double seconds_left(Deadline d) { return std::max(0.0, std::chrono::duration<double>(d - Clock::now()).count()); }

// The verdict message (TCP kVerdict or PMIx fence #2) as a task's outcome.
void take_verdict(const Kv& v, Outcome& out) {
    try {
        out.exit_code = static_cast<int>(kv_u64(v, "exit_code"));
        const auto& vs = kv_str(v, "verdict");
        out.verdict = vs == "ok" ? Verdict::ok : vs == "degraded" ? Verdict::degraded : Verdict::unreachable;
        out.bad_nodes = split(kv_str(v, "bad"), ',');
        out.message = kv_str(v, "summary");
    } catch (const Error& e) {
        out.verdict = Verdict::unreachable;
        out.exit_code = kExitCannotCheck;
        out.message = e.what();
    }
}

}  // namespace

Outcome run_preflight(const PreflightOptions& opt, const StepFacts& s) {
    Outcome out;
    const auto start = Clock::now();
    const Deadline overall = start + std::chrono::milliseconds(static_cast<long>(opt.timeout_s * 1000));
    // How long a task waits for node 0's verdict: node 0 may raise the default
    // deadline (a node of the step has GPUs, maybe not this one).
    const Deadline verdict_by = gpu_step_deadline(opt, start, overall);
    const bool coordinator = s.node_rank == 0 && s.local == 0;
    const bool speaker = s.local == 0;
    out.coordinator = coordinator;

    // The bootstrap: PMIx when the step has it (and --bootstrap allows), else TCP.
    BootInfo boot;
    boot.start = start;
    BootstrapChoice choice;
    try {
        choice = choose_bootstrap(opt.bootstrap, pmix_built(), pmix_in_env());
    } catch (const Error& e) {
        out.exit_code = kExitCannotCheck;
        out.message = e.what();
        return out;
    }

    // The speaker's listener for probes and bandwidth streams: PORT+2 of the
    // step's block on its data address, any free port when that is taken.
    auto data = std::make_shared<DataState>();
    data->key = s.key;
    data->self = s.node_rank;
    unsigned data_port = 0;
    std::thread data_thread;
    if (speaker && opt.check != CheckLevel::none) {
        auto l = sys::tcp_listen(s.node_addr, s.port + 2, 256);
        if (!l) l = sys::tcp_listen(s.node_addr, 0, 256);
        // No data address to listen on: check in anyway, the cards say why.
        if (!l) l = sys::tcp_listen("", 0, 256);
        if (!l) {
            out.exit_code = kExitCannotCheck;
            out.message = "the data listener cannot start: " + l.error();
            return out;
        }
        data_port = sys::local_port(l->get());
        data_thread = std::thread(data_server, data, std::move(*l));
    }
    std::optional<PmixSession> px;
    std::unique_ptr<NodeExitBarrier> exit_barrier;
    auto finish = [&] {
        data->stop = true;
        if (data_thread.joinable()) data_thread.join();
        if (px) pmix_finalize(*px, 2);
    };

    // The coordinator listens before fence #1, so that tasks falling back to
    // TCP queue up in the backlog until it gathers.
    sys::Fd listener;
    if (coordinator) {
        // Raise the descriptor limit for thousands of tasks.
        rlimit rl{};
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            ::setrlimit(RLIMIT_NOFILE, &rl);
        }
        auto l = sys::tcp_listen("", s.port + 1, 8192);
        if (!l) {
            finish();
            out.exit_code = kExitCannotCheck;
            out.message = "the rendezvous cannot start: " + l.error() + " (another program holds PRIMARY_PORT+1 on node 0)";
            return out;
        }
        listener = std::move(*l);
    }

    // PMIx fence #1: every task of the step is alive. Half the join timeout, so
    // that a missing task leaves the TCP rendezvous time to name its node.
    if (choice.try_pmix) {
        const Deadline f1 = std::min(overall, start + std::chrono::milliseconds(static_cast<long>(
                                                          fence1_timeout_s(opt.join_timeout_s) * 1000)));
        std::string err;
        px = pmix_init(std::max(0.5, seconds_left(f1)), err);
        if (px) {
            err = pmix_step_mismatch(px->rank, px->size, s.rank, s.ntasks);
            const auto tf = Clock::now();
            if (err.empty() && pmix_fence(*px, nullptr, false, std::max(0.2, seconds_left(f1)), err)) {
                boot.pmix = true;
                boot.fence_s = sys::seconds_since(tf);
            }
        } else if (opt.bootstrap == BootstrapMode::pmix) {
            finish();
            out.exit_code = kExitCannotCheck;
            out.message = "--bootstrap=pmix: " + err;
            return out;
        }
        if (!boot.pmix) boot.note = err;
        if (boot.pmix) {
            const unsigned here = s.node_rank < s.tasks_per_node.size() ? s.tasks_per_node[s.node_rank] : 1;
            exit_barrier = std::make_unique<NodeExitBarrier>(
                "gangway." + std::to_string(::getuid()) + "." + s.job_id + "." + s.step_id + "." + std::to_string(s.node_rank),
                speaker, here);
        }
    }
    // PMIx fence #2 hands rank 0's verdict to every task: until the check's
    // deadline and the margin the TCP verdict has too.
    auto fence2 = [&](const Kv* mine, std::string& err) {
        return pmix_fence(*px, mine, true, seconds_left(verdict_by) + 5, err);
    };

    if (!coordinator) {
        std::string err;
        std::optional<Kv> v;
        if (!(boot.pmix && !speaker)) {
            auto got = client_session(opt, s, speaker, verdict_by, data, data_port);
            if (got) v = std::move(*got);
            else err = got.error();
        }
        if (boot.pmix) {  // every task takes part in fence #2; a speaker that lost node 0 may still learn the verdict there
            std::string ferr;
            if (fence2(nullptr, ferr)) {
                if (!v) {
                    auto pv = pmix_get(*px, 0, std::max(1.0, seconds_left(verdict_by) + 5), ferr);
                    if (pv) v = std::move(pv);
                    else if (!speaker) err = "the verdict did not arrive over PMIx (" + ferr + ")";
                }
            } else if (!v) {
                err = speaker ? err + "; " + ferr : "the verdict did not arrive over PMIx (" + ferr + "): a task of the step exited or hung";
            }
            // Finalize at once, all tasks close together: a task's command that
            // gangway run starts fences anew, and a fence begun while a task of
            // the same node is still in its old PMIx session fails.
            pmix_finalize(*px, 2);
            exit_barrier->arrive(2);
        }
        finish();
        if (!v) {
            out.verdict = Verdict::unreachable;
            out.exit_code = kExitUnreachable;
            out.message = err;
            return out;
        }
        take_verdict(*v, out);
        return out;
    }

    sys::Coordinator coord(s.key, std::move(listener));
    // This node's speaker talks to the coordinator like every other.
    // What it reports goes through the coordinator; its own result is the verdict we make.
    std::thread self_speaker([&] { (void)client_session(opt, s, true, verdict_by, data, data_port); });
    Report rep = coordinate(opt, s, coord, overall, boot);
    Verdict v = verdict(rep);
    out.verdict = v;
    out.exit_code = exit_code(v);
    out.bad_nodes = bad_nodes(rep);
    std::string bad;
    for (const auto& b : out.bad_nodes) bad += (bad.empty() ? "" : ",") + b;
    out.message = std::string("preflight ") + to_string(v) + (bad.empty() ? "" : ": " + bad);
    Kv vk{{"verdict", to_string(v)}, {"exit_code", std::to_string(out.exit_code)}, {"bad", bad}, {"summary", out.message}};
    for (auto& m : coord.members()) coord.send(m, kVerdict, vk, after_ms(1000));
    coord.close_listener();
    self_speaker.join();
    if (boot.pmix) {
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
        pmix_finalize(*px, 2);  // at once, as the other tasks do
        exit_barrier->arrive(2);
    }
    finish();
    out.report = std::move(rep);
    return out;
}

}  // namespace gangway::cli
