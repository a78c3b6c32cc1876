// `gangway fleet serve --stops-key`'s side of the running job (issue 43,
// docs/watch.md): takes each node agent's signed progress record on POST
// /v1/progress (signed as a progress record, never taken for a stop), keeps
// each step's newest kMaxHistory records a node in memory, judges the step
// (lib/watch/judge, pure) at most twice an interval on a thread of its
// own (not the one that answers the nodes), and:
//   - answers the node "dump" while a confirmed hang waits for its dumps
//     (the agent leaves dump.request, each rank's hook writes its dump);
//   - sets the running job's AdminComment to the judgement's line when it
//     names something new (a straggler's node, a confirmed hang);
//   - on a confirmed hang of a step run with --gangway-on-hang=cancel or
//     requeue, cancels or requeues the job two intervals after the dumps
//     were asked for;
//   - keeps each straggler and hang it names in the fleet store
//     (watch_events: `fleet metrics`' gangway_job_straggler and
//     gangway_job_hangs_total, `fleet flagged`), confirmed where root's
//     evidence said so;
// all SLURM calls on a thread of its own. GET /v1/status/JOB answers the
// job's owner (the uid slurmstepd gave the agent), root and serve's own
// user, as a MUNGE credential says.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "../../watch/judge.hpp"
#include "../../fleet/watch_events.hpp"
#include "../fleet/http_serve.hpp"
#include "../fleet/store.hpp"
#include "../slurm/scontrol.hpp"

namespace gangway::sys::watch {

struct WatchSettings {
    std::string key;                  // the site's key (read_stops_key)
    Scontrol scontrol;                // scontrol_client()
    std::string unmunge = "unmunge";  // GANGWAY_UNMUNGE for the tests' munged
    std::string db;                   // the fleet store: each straggler and hang named is kept there ("" none)
    std::int64_t hang_min_ns = gangway::watch::JudgeSettings{}.hang_min_ns;  // serve --watch-hang: nothing completed this long is a hang
    std::function<void(const std::string&)> log;  // serve's log, a line at a time
};

class WatchService {
public:
    explicit WatchService(WatchSettings s);
    ~WatchService();
    WatchService(const WatchService&) = delete;
    WatchService& operator=(const WatchService&) = delete;

    // /v1/progress and /v1/status/ into `routes`.
    void add_routes(sys::fleet::ExtraRoutes& routes);

    sys::fleet::HttpReply post(const sys::fleet::ExtraRoutes::Header& header, std::string body);
    sys::fleet::HttpReply status(std::string_view rest, const char* cred);

    static constexpr std::size_t kMaxSteps = 4096;          // steps watched at once
    static constexpr std::size_t kMaxNodes = 4096;          // nodes of one step
    static constexpr std::int64_t kForgetNs = 600'000'000'000;  // a step no node spoke of for 10 minutes

private:
    struct Step {
        std::uint32_t job = 0, step = 0, uid = 0;
        gangway::watch::OnHang on_hang = gangway::watch::OnHang::report;
        std::int64_t interval_ns = 0;
        // Each node's newest records, shared with a judgement under way.
        std::map<std::string, std::deque<std::shared_ptr<const gangway::watch::NodeProgress>>> nodes;
        std::int64_t newest_ns = 0, judged_ns = 0;
        bool queued = false;              // waits for the judging thread
        gangway::watch::Judgement last;
        std::string said;                 // what the line last put in AdminComment named
        std::int64_t dump_asked_ns = 0;   // when a confirmed hang asked for the dumps (0: not)
        bool acted = false;               // the hang's cancel or requeue was asked of SLURM
    };
    using StepId = std::pair<std::uint32_t, std::uint32_t>;
    void judging();  // the judging thread: one step at a time, mu_ released while it judges
    void act(Step& s, gangway::watch::Judgement j, const gangway::watch::JudgeSettings& js);
    void log_refusal(const std::string& line);
    void keep(std::vector<gangway::fleet::WatchEvent> events);
    void enqueue(std::function<void()> call);
    void run();

    WatchSettings settings_;
    std::mutex mu_;
    std::map<StepId, Step> steps_;
    std::deque<StepId> to_judge_;  // with mu_: each step at most once (Step::queued)
    std::condition_variable judge_cv_;
    bool judge_stopping_ = false;
    std::mutex refusal_mu_;
    std::int64_t refusal_logged_s_ = 0;
    std::mutex q_mu_;
    std::condition_variable q_cv_;
    std::deque<std::function<void()>> queue_;
    bool stopping_ = false;
    std::unique_ptr<sys::fleet::Store> store_;  // the worker's, opened at its first event
    std::thread worker_;
    std::thread judger_;  // after worker_: it hands the worker what it decided
};

}  // namespace gangway::sys::watch
