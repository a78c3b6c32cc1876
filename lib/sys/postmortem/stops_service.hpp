// `gangway fleet serve --stops-key`'s side of the post-mortem (issue 33,
// docs/postmortem.md): takes the nodes' signed records on POST /v1/stops,
// keeps each in the fleet store before it answers 202 (table stop_records:
// a restart of serve loses none, and judges them after it), gathers them per
// job (lib/postmortem/gather.hpp), and once a job's nodes have all sent, or
// --stops-wait seconds after the first did, judges the job on a thread of
// its own (SLURM's calls take seconds; the server's thread never waits for
// them). Each round asks SLURM once for every job waiting (`scontrol -o show
// job`: the jobs' nodes and owners) and once for every node's state (`scontrol
// -o show node`: the lost nodes), each call bounded by the client's deadline;
// the due jobs are judged round robin by owner and their stops stored at
// once; the delivery, SLURM's slow part, goes to kDeliverers threads that
// take the jobs round robin by owner too:
//   - the job's AdminComment is set to the line (admin_comment.hpp: through
//     slurmctld while it takes it, else slurmdbd's record where the site
//     keeps accounting);
//   - the verdict and its timeline go to the fleet store's stops table;
//   - a node-class cause in a step run with --gangway-on-fail=requeue:
//     the job is requeued without the node, and the node drained under the
//     drain cap (at most drain_max nodes per job, counting those drained
//     for it before).
// GET /v1/stops/JOB answers the job's stops (the lines and timelines) to the
// job's owner (SLURM's UserId when judged), root and serve's own user, as a
// MUNGE credential in the request says (stops_auth.hpp).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../base/result.hpp"
#include "../../postmortem/gather.hpp"
#include "../../slurm/drain_rules.hpp"
#include "../fleet/http_serve.hpp"
#include "../fleet/store.hpp"
#include "../slurm/scontrol.hpp"
#include "stops_auth.hpp"

namespace gangway::sys::postmortem {

struct StopsSettings {
    std::string key;  // the site's key (read_stops_key)
    std::string db;   // the fleet store, opened read-write (serve runs as its owner)
    gangway::postmortem::GatherLimits limits;
    std::size_t drain_max = slurm::kDefaultDrainMax;  // 0: no drains
    Scontrol scontrol;          // scontrol_client(): GANGWAY_SCONTROL for the tests' stand-in
    Sacctmgr sacctmgr;          // sacctmgr_client(): GANGWAY_SACCTMGR likewise
    std::string unmunge = "unmunge";  // GANGWAY_UNMUNGE for the tests' munged on its own socket
};

class StopsService {
public:
    // Opens the store and takes the records a previous serve left waiting.
    static Result<std::unique_ptr<StopsService>> start(StopsSettings settings);
    // Judges and delivers nothing more; what waits stays in the store for the next start.
    ~StopsService();
    StopsService(const StopsService&) = delete;
    StopsService& operator=(const StopsService&) = delete;

    // Tells every thread to stop (each loop and each wait between SLURM's
    // calls asks) and waits up to `within` for them: false when a SLURM call
    // still runs then (each is bounded by the client's deadline), and the
    // caller may end the process without waiting for it (the store keeps
    // every record; nothing is half written).
    bool stop(std::chrono::milliseconds within);

    // The routes for MetricsServer::start.
    std::shared_ptr<const sys::fleet::ExtraRoutes> routes();

    static constexpr int kDeliverers = 4;
    static constexpr std::size_t kJobsPerRound = 512;   // judged per round, at most
    static constexpr std::int64_t kKeepJudgedS = 7 * 86400;  // judged records kept for a late one

private:
    // What is left to do for a judged job: set its line, requeue, drain.
    struct Delivery {
        std::uint32_t job = 0;
        std::int64_t owner = gangway::postmortem::kUnknownOwner;
        std::int64_t time = 0;  // its stop's row
        std::string line, node, drain_reason;
        bool requeue = false;
    };
    explicit StopsService(StopsSettings s, sys::fleet::Store store);
    sys::fleet::HttpReply post(const std::function<const char*(const char*)>& header, std::string body);
    sys::fleet::HttpReply get(std::string_view rest, const char* munge_credential);
    void work();
    void ask_slurm_for_jobs(std::unique_lock<std::mutex>& lock);
    void judge(gangway::postmortem::GatheredJob job, const Result<std::string>& node_states);
    void deliver_loop();
    void deliver(const Delivery& d);
    // A refused request's line: at most kRefusalBurst lines per 10 s, then
    // one line with how many more there were (a flood cannot flood the log).
    void log_refusal(const std::string& line);
    static constexpr int kRefusalBurst = 10;

    StopsSettings settings_;
    std::atomic<bool> stopping_{false};
    std::mutex mu_;  // the gathering
    std::condition_variable cv_;
    gangway::postmortem::StopsGather gather_;
    std::mutex store_mu_;
    sys::fleet::Store store_;
    std::thread worker_;
    // The deliveries waiting, per owner, taken round robin.
    std::mutex deliver_mu_;
    std::condition_variable deliver_cv_;
    std::map<std::int64_t, std::deque<Delivery>> deliveries_;
    std::int64_t last_owner_ = gangway::postmortem::kUnknownOwner - 1;
    std::vector<std::thread> deliverers_;
    // Threads still running (stop() waits for none).
    std::mutex running_mu_;
    std::condition_variable running_cv_;
    int running_ = 0;
    std::mutex refusal_mu_;
    std::int64_t refusal_window_ = 0;
    int refusals_in_window_ = 0;
    unsigned refusals_unsaid_ = 0;
};

}  // namespace gangway::sys::postmortem
