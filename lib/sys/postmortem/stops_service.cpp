#include "stops_service.hpp"


#include <chrono>
#include <thread>

#include <cstdio>
#include <ctime>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../env/hostlist.hpp"
#include "../../slurm/node_state.hpp"
#include "../../postmortem/resume.hpp"
#include "admin_comment.hpp"
#include "stops_auth.hpp"
#include "../../postmortem/verdict.hpp"
#include "../../preflight/requeue.hpp"

namespace gangway::sys::postmortem {

namespace pm = gangway::postmortem;
using sys::fleet::HttpReply;

namespace {

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

void log(const std::string& line) {
    std::fprintf(stderr, "gangway fleet serve: %s\n", line.c_str());
    std::fflush(stderr);
}

// SLURM's node list of the job, expanded; a Failure when scontrol cannot say.
Result<std::vector<std::string>> slurm_job_nodes(const Scontrol& s, std::uint32_t job) {
    // SLURM's own fields (squeue's), never scontrol's text, where the job's
    // name could hold another NodeList (lib/slurm/job_view.hpp).
    auto view = job_view(s, std::to_string(job));
    if (!view) return Failure{view.error()};
    // While the job completes (its Epilogs run, and send), NodeList lists
    // only the nodes still completing: a node whose Epilog ended first would
    // be dropped (seen on 26.05, tests/integration/postmortem.sh). Asked
    // again on the next round, once the job has completed.
    if (view->state == slurm::JobState::completing)
        return Failure{"job " + std::to_string(job) + " is completing (its NodeList names only the nodes still completing)"};
    // NodeList: the allocation's (ReqNodeList and ExcNodeList are the user's).
    if (view->nodes.empty()) return Failure{"job " + std::to_string(job) + " has no nodes (yet)"};
    try {
        return expand_hostlist(view->nodes);
    } catch (const Error& err) {
        return Failure{"job " + std::to_string(job) + "'s NodeList: " + err.what()};
    }
}

}  // namespace

StopsService::StopsService(StopsSettings s, sys::fleet::Store store)
    : settings_(std::move(s)), gather_(settings_.limits), store_(std::move(store)) {}

Result<std::unique_ptr<StopsService>> StopsService::start(StopsSettings settings) {
    auto store = sys::fleet::Store::open(settings.db, sys::fleet::OpenMode::read_write);
    if (!store) return Failure{store.error() + " (--stops-key needs the store writable: run serve as its owner)"};
    std::unique_ptr<StopsService> s(new StopsService(std::move(settings), std::move(*store)));
    s->worker_ = std::thread([p = s.get()] { p->work(); });
    return s;
}

StopsService::~StopsService() {
    std::size_t left = 0;
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        left = gather_.pending_jobs();
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    if (left) log("stopping with " + std::to_string(left) + " job(s)' records not yet judged; they are dropped");
}

std::shared_ptr<const sys::fleet::ExtraRoutes> StopsService::routes() {
    auto r = std::make_shared<sys::fleet::ExtraRoutes>();
    r->post_path = kStopsPath;
    r->max_body = kMaxStopBody;
    r->post = [this](const std::function<const char*(const char*)>& header, std::string body) {
        return post(header, std::move(body));
    };
    r->get_prefix = std::string(kStopsPath) + "/";
    r->get = [this](std::string_view rest) { return get(rest); };
    return r;
}

HttpReply StopsService::post(const std::function<const char*(const char*)>& header, std::string body) {
    StopStamp stamp;
    // The signature and the time before a byte of the body is parsed.
    if (const auto refused = check_stop_post(settings_.key, header(kHeaderJob), header(kHeaderNode),
                                                 header(kHeaderTime), header(kHeaderSignature), body, now_s(), stamp)) {
        log_refusal("refused a record: " + refused.why);
        return {refused.status, "refused: " + refused.why + "\n"};
    }
    pm::NodeRecord rec;
    try {
        rec = pm::parse_node_record(body);
    } catch (const Error& e) {
        log_refusal("refused node " + stamp.node + "'s record of job " + std::to_string(stamp.job) + ": " + e.what());
        return {400, std::string("refused: ") + e.what() + "\n"};
    }
    if (const auto why = record_mismatch(stamp, rec); !why.empty()) {
        log_refusal("refused node " + stamp.node + "'s record of job " + std::to_string(stamp.job) + ": " + why);
        return {403, "refused: " + why + "\n"};
    }
    pm::Took took;
    {
        std::lock_guard lock(mu_);
        took = gather_.add(std::move(rec), body.size(), now_s());
    }
    if (took != pm::Took::accepted) {
        log_refusal("refused node " + stamp.node + "'s record of job " + std::to_string(stamp.job) + ": " + pm::to_string(took));
        return {pm::http_status(took), std::string("refused: ") + pm::to_string(took) + "\n"};
    }
    cv_.notify_all();
    return {202, "accepted node " + stamp.node + "'s record of job " + std::to_string(stamp.job) + "\n"};
}

void StopsService::log_refusal(const std::string& line) {
    std::lock_guard lock(refusal_mu_);
    const std::int64_t window = now_s() / 10;
    if (window != refusal_window_) {
        if (refusals_unsaid_) log(std::to_string(refusals_unsaid_) + " more request(s) refused in 10 s, not logged one by one");
        refusal_window_ = window;
        refusals_in_window_ = 0;
        refusals_unsaid_ = 0;
    }
    if (refusals_in_window_++ < kRefusalBurst) log(line);
    else ++refusals_unsaid_;
}

HttpReply StopsService::get(std::string_view rest) {
    const auto job = parse_uint<std::uint32_t>(rest);
    if (!job) return {404, "not found: give /v1/stops/JOBID\n"};
    std::vector<gangway::fleet::StopRow> rows;
    {
        std::lock_guard lock(store_mu_);
        auto r = store_.stops_of_job(*job);
        if (!r) return {503, r.error() + "\n"};
        rows = std::move(*r);
    }
    if (rows.empty()) return {404, "no stop of job " + std::to_string(*job) + " is known\n"};
    std::string out;
    for (const auto& r : rows) out += gangway::fleet::stop_text(r);
    return {200, out};
}

void StopsService::work() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
        cv_.wait_for(lock, std::chrono::seconds(1));
        if (stopping_) break;
        // SLURM's node list for each new job: it, not the records, says who belongs to the job.
        for (const auto job : gather_.jobs_without_slurm_nodes()) {
            lock.unlock();
            auto nodes = slurm_job_nodes(settings_.scontrol, job);
            lock.lock();
            if (!nodes) {
                // Kept with the first record's list; asked again on the next round.
                log("job " + std::to_string(job) + ": " + nodes.error() + "; waiting for the nodes its records list");
                continue;
            }
            for (const auto& n : gather_.set_slurm_nodes(job, std::move(*nodes)))
                log("dropped node " + n + "'s record of job " + std::to_string(job) + ": not a node of the job (SLURM's NodeList)");
        }
        auto due = gather_.take_due(now_s());
        lock.unlock();
        for (auto& j : due) deliver(std::move(j));
        lock.lock();
    }
}

void StopsService::deliver(pm::GatheredJob g) {
    const std::string job = std::to_string(g.job);
    // Lost: a node that sent nothing and that SLURM reports down.
    std::vector<std::string> lost;
    for (const auto& n : g.missing) {
        const auto text = show_node(settings_.scontrol, n);
        if (text && slurm::node_state_of(*text).down()) lost.push_back(n);
        else if (!text) log("job " + job + ": node " + n + " sent no record and " + text.error());
    }
    pm::Verdict v;
    try {
        v = pm::judge(g.records, lost);
    } catch (const std::exception& e) {
        log("job " + job + ": cannot judge: " + e.what());
        return;
    }
    if (v.cause == pm::Cause::none) return;  // a healthy job: nothing to say, no record of a stop
    const std::string line = pm::render_line(v);
    log(line);

    // The job has finished when its Epilogs send, and SLURM 22.05 refuses any
    // update of a finished job ("Job has already finished"), the exclusion's
    // and AdminComment's too. So a job to requeue is first requeued held (a
    // pending job takes updates; a held one cannot start on the node before
    // its exclusion), then excluded from the node, then released; its line
    // is set after, while it is pending. The requeue is refused while the
    // job is still completing (the last Epilogs): tried for up to 20 s.
    // The run that stopped keeps its line in slurmdbd's record, set before
    // the requeue starts a new record of the job.
    bool requeued = false;
    const bool requeue = pm::should_requeue(v, g.records);
    LinePlace stopped_run = LinePlace::nowhere;
    if (requeue) {
        stopped_run = set_stopped_run_line(settings_.scontrol, settings_.sacctmgr, job, line, log);
        auto shown = job_view(settings_.scontrol, job);
        Result<void> held = Failure{shown ? std::string() : shown.error()};
        for (int i = 0; shown && i < 20; ++i) {
            if ((held = requeue_hold_job(settings_.scontrol, job))) break;
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        if (!held) log("job " + job + ": not requeued: " + held.error());
        else if (auto ex = exclude_nodes(settings_.scontrol, job, join(preflight::requeue_exclusions(shown->excluded, {v.node}), ",")); !ex)
            log("job " + job + ": requeued but held, not released: " + ex.error());
        else if (auto rel = release_job(settings_.scontrol, job); !rel)
            log("job " + job + ": requeued without " + v.node + " but held: " + rel.error());
        else {
            requeued = true;
            log("job " + job + ": requeued without " + v.node);
        }
    }
    // A job requeued above is pending: slurmctld takes its line (and writes it
    // to the new run's record when that run ends). Any other has finished:
    // slurmdbd's record takes it where the site keeps one (done above when a
    // requeue was tried and refused).
    if (requeued || stopped_run != LinePlace::accounting)
        set_job_line(settings_.scontrol, settings_.sacctmgr, job, line, log);

    if (requeue) {
        // The drain, under the cap: nodes drained for this job before count.
        if (settings_.drain_max > 0) {
            const auto all = show_nodes(settings_.scontrol);
            const auto node = show_node(settings_.scontrol, v.node);
            if (!all || !node) log("job " + job + ": " + v.node + " not drained: " + (!all ? all.error() : node.error()));
            else if (slurm::node_state_of(*node).drained()) log("job " + job + ": " + v.node + " is drained already; left as it is");
            else if (!pm::drain_within_cap(pm::drained_for_job(*all, g.job), v.node, settings_.drain_max))
                log("job " + job + ": " + v.node + " not drained: more than " + std::to_string(settings_.drain_max) +
                    " nodes drained for this job (--drain-max)");
            else if (auto d = drain_node(settings_.scontrol, v.node, pm::stop_drain_reason(v)); !d)
                log("job " + job + ": " + d.error());
            else log("drained " + v.node + ": " + pm::stop_drain_reason(v));
        }
    }

    gangway::fleet::StopRow row;
    row.time = now_s();
    row.job = v.job ? v.job : g.job;
    row.step = v.step;
    row.node = v.node;
    row.rank = v.rank ? std::int64_t(*v.rank) : -1;
    row.cause = pm::to_string(v.cause);
    row.node_class = v.node_class && !v.node.empty();
    row.requeued = requeued;
    row.line = line;
    row.timeline = pm::render_timeline(v, g.records);
    std::lock_guard lock(store_mu_);
    if (auto r = store_.insert_stop(row); !r) log("job " + job + ": the stop is not stored: " + r.error());
}

}  // namespace gangway::sys::postmortem
