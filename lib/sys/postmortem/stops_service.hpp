// `gangway fleet serve --stops-key`'s side of the post-mortem (issue 33,
// docs/postmortem.md): takes the nodes' signed records on POST /v1/stops,
// gathers them per job (lib/postmortem/gather.hpp), and once a job's nodes
// have all sent, or --stops-wait seconds after the first did, judges the
// job on a thread of its own (SLURM's calls take seconds; the server's
// thread never waits for them) and delivers the verdict:
//   - the job's AdminComment is set to the line (admin_comment.hpp: through
//     slurmctld while it takes it, else slurmdbd's record where the site
//     keeps accounting);
//   - the verdict and its timeline go to the fleet store's stops table;
//   - a node-class cause in a step run with --gangway-on-fail=requeue:
//     the job is requeued without the node, and the node drained under the
//     drain cap (at most drain_max nodes per job, counting those drained
//     for it before).
// GET /v1/stops/JOB answers the job's stops (the lines and timelines).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../../base/result.hpp"
#include "../../postmortem/gather.hpp"
#include "../fleet/http_serve.hpp"
#include "../fleet/store.hpp"
#include "../slurm/scontrol.hpp"

namespace gangway::sys::postmortem {

struct StopsSettings {
    std::string key;  // the site's key (read_stops_key)
    std::string db;   // the fleet store, opened read-write (serve runs as its owner)
    gangway::postmortem::GatherLimits limits;
    std::size_t drain_max = 2;  // today's cap (GANGWAY_DRAIN_MAX's default); 0: no drains
    Scontrol scontrol;          // scontrol_client(): GANGWAY_SCONTROL for the tests' stand-in
    Sacctmgr sacctmgr;          // sacctmgr_client(): GANGWAY_SACCTMGR likewise
};

class StopsService {
public:
    static Result<std::unique_ptr<StopsService>> start(StopsSettings settings);
    ~StopsService();  // judges nothing more; records still pending are dropped (one line says how many)
    StopsService(const StopsService&) = delete;
    StopsService& operator=(const StopsService&) = delete;

    // The routes for MetricsServer::start.
    std::shared_ptr<const sys::fleet::ExtraRoutes> routes();

private:
    explicit StopsService(StopsSettings s, sys::fleet::Store store);
    sys::fleet::HttpReply post(const std::function<const char*(const char*)>& header, std::string body);
    sys::fleet::HttpReply get(std::string_view rest);
    void work();
    void deliver(gangway::postmortem::GatheredJob job);
    // A refused request's line: at most kRefusalBurst lines per 10 s, then
    // one line with how many more there were (a flood cannot flood the log).
    void log_refusal(const std::string& line);
    static constexpr int kRefusalBurst = 10;

    StopsSettings settings_;
    std::mutex mu_;  // the gathering and `stopping_`
    std::condition_variable cv_;
    gangway::postmortem::StopsGather gather_;
    bool stopping_ = false;
    std::mutex store_mu_;
    sys::fleet::Store store_;
    std::thread worker_;
    std::mutex refusal_mu_;
    std::int64_t refusal_window_ = 0;
    int refusals_in_window_ = 0;
    unsigned refusals_unsaid_ = 0;
};

}  // namespace gangway::sys::postmortem
