#include "stops_service.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include <unistd.h>


#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../env/hostlist.hpp"
#include "../../slurm/drain_rules.hpp"
#include "../../slurm/node_state.hpp"
#include "../../postmortem/delivery_plan.hpp"
#include "../../postmortem/resume.hpp"
#include "../../postmortem/verdict.hpp"
#include "../run/subprocess.hpp"
#include "admin_comment.hpp"
#include "munge_read.hpp"
#include "stops_auth.hpp"

namespace gangway::sys::postmortem {

namespace pm = gangway::postmortem;
using sys::fleet::HttpReply;

namespace {

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

void log(const std::string& line) {
    std::fprintf(stderr, "gangway fleet serve: %s\n", line.c_str());
    std::fflush(stderr);
}

// SLURM's word on the jobs of a round: one squeue call for every job it
// knows, from fields only SLURM writes (lib/slurm/job_view.hpp: a job's
// name could hold another NodeList, JobState or UserId in scontrol's text).
Result<std::map<std::uint32_t, slurm::JobView>> slurm_jobs(const Scontrol& s) {
    auto views = all_job_views(s);
    if (!views) return Failure{views.error()};
    std::map<std::uint32_t, slurm::JobView> out;
    for (auto& v : *views) out[v.id] = std::move(v);
    return out;
}

// The job's owner (its uid).
std::int64_t slurm_job_owner(const slurm::JobView& j) { return std::int64_t(j.uid); }

// SLURM's node list of the job, expanded; a Failure when SLURM cannot say yet.
Result<std::vector<std::string>> slurm_job_nodes(const slurm::JobView& j, std::uint32_t job) {
    // While the job completes (its Epilogs run, and send), NodeList lists
    // only the nodes still completing: a node whose Epilog ended first would
    // be dropped (seen on 26.05, tests/integration/postmortem.sh). Asked
    // again on the next round, once the job has completed.
    if (j.state == slurm::JobState::completing)
        return Failure{"job " + std::to_string(job) + " is completing (its NodeList names only the nodes still completing)"};
    // NodeList: the allocation's (ReqNodeList and ExcNodeList are the user's).
    if (j.nodes.empty()) return Failure{"job " + std::to_string(job) + " has no nodes (yet)"};
    try {
        return expand_hostlist(j.nodes);
    } catch (const Error& err) {
        return Failure{"job " + std::to_string(job) + "'s NodeList: " + err.what()};
    }
}

// Each node's line of `scontrol -o show node` (one call for every node of a
// round's jobs, however many they claim), by name.
std::map<std::string_view, std::string_view> node_lines(std::string_view all) {
    std::map<std::string_view, std::string_view> out;
    for_each_line(all, [&](std::string_view l, std::size_t) {
        if (!l.starts_with("NodeName=")) return;
        const auto end = l.find(' ');
        out[l.substr(9, end == std::string_view::npos ? std::string_view::npos : end - 9)] = l;
    });
    return out;
}

}  // namespace

StopsService::StopsService(StopsSettings s, sys::fleet::Store store)
    : settings_(std::move(s)), gather_(settings_.limits), store_(std::move(store)) {}

Result<std::unique_ptr<StopsService>> StopsService::start(StopsSettings settings) {
    auto store = sys::fleet::Store::open(settings.db, sys::fleet::OpenMode::read_write);
    if (!store) return Failure{store.error() + " (--stops-key needs the store writable: run serve as its owner)"};
    std::unique_ptr<StopsService> s(new StopsService(std::move(settings), std::move(*store)));
    // The records a previous serve took and did not deliver: judged now
    // (a job judged but not delivered is judged again; its stop is the same row).
    auto waiting = s->store_.stop_records_below(2);
    if (!waiting) return Failure{"the store's waiting records: " + waiting.error()};
    std::size_t taken = 0, refused = 0;
    for (auto& w : *waiting) {
        try {
            const std::size_t bytes = w.body.size();
            if (s->gather_.add(pm::parse_node_record(w.body), bytes, w.received) == pm::Took::accepted) ++taken;
            else ++refused;
        } catch (const Error& e) {  // not ours to judge any more (a newer schema?): left, with a line
            log("node " + w.node + "'s record of job " + std::to_string(w.job) + " in the store cannot be read: " + e.what());
        }
    }
    if (taken || refused)
        log("took " + std::to_string(taken) + " record(s) left waiting by the last run" +
            (refused ? "; " + std::to_string(refused) + " more wait in the store for a later start (bounds)" : ""));
    s->running_ = 1 + kDeliverers;
    s->worker_ = std::thread([p = s.get()] { p->work(); });
    for (int i = 0; i < kDeliverers; ++i) s->deliverers_.emplace_back([p = s.get()] { p->deliver_loop(); });
    return s;
}

bool StopsService::stop(std::chrono::milliseconds within) {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    {
        std::lock_guard lock(deliver_mu_);
    }
    deliver_cv_.notify_all();
    std::unique_lock lock(running_mu_);
    return running_cv_.wait_for(lock, within, [&] { return running_ == 0; });
}

StopsService::~StopsService() {
    stop(std::chrono::hours(1));
    if (worker_.joinable()) worker_.join();
    for (auto& t : deliverers_)
        if (t.joinable()) t.join();
    std::size_t left = 0;
    {
        std::lock_guard lock(mu_);
        left = gather_.pending_jobs();
    }
    std::size_t undelivered = 0;
    for (const auto& [_, q] : deliveries_) undelivered += q.size();
    if (left || undelivered)
        log("stopping with " + std::to_string(left) + " job(s) not yet judged and " + std::to_string(undelivered) +
            " not yet delivered; their records stay in the store for the next start");
}

std::shared_ptr<const sys::fleet::ExtraRoutes> StopsService::routes() {
    auto r = std::make_shared<sys::fleet::ExtraRoutes>();
    r->posts.push_back({kStopsPath, kMaxStopBody, [this](const sys::fleet::ExtraRoutes::Header& header, std::string body) {
                            return post(header, std::move(body));
                        }});
    r->gets.push_back({std::string(kStopsPath) + "/", [this](std::string_view rest, const sys::fleet::ExtraRoutes::Header& header) {
                           return get(rest, header(kHeaderMunge));
                       }});
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
    const std::string whose = "node " + stamp.node + "'s record of job " + std::to_string(stamp.job);
    // Kept in the store before the 202: from then on a restart loses it not.
    const sys::fleet::Store::StopRecord kept{rec.job, rec.node, rec.window_start_ns, now_s(), 0, body};
    {
        std::lock_guard lock(store_mu_);
        const auto fresh = store_.insert_stop_record(kept);
        if (!fresh) {
            log_refusal("cannot keep " + whose + ": " + fresh.error());
            return {503, "busy: the record cannot be kept now; try again\n"};
        }
        if (!*fresh) {
            log_refusal("refused " + whose + ": " + pm::to_string(pm::Took::duplicate));
            return {409, std::string("refused: ") + pm::to_string(pm::Took::duplicate) + "\n"};
        }
    }
    pm::Took took;
    {
        std::lock_guard lock(mu_);
        took = gather_.add(std::move(rec), body.size(), kept.received);
    }
    if (took != pm::Took::accepted) {
        {
            std::lock_guard lock(store_mu_);
            if (auto d = store_.delete_stop_record(kept.job, kept.node, kept.run); !d) log("job " + std::to_string(kept.job) + ": " + d.error());
        }
        log_refusal("refused " + whose + ": " + pm::to_string(took));
        return {pm::http_status(took), std::string("refused: ") + pm::to_string(took) + "\n"};
    }
    cv_.notify_all();
    return {202, "accepted " + whose + "\n"};
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

HttpReply StopsService::get(std::string_view rest, const char* cred) {
    const auto job = parse_uint<std::uint32_t>(rest);
    if (!job) return {404, "not found: give /v1/stops/JOBID\n"};
    // The job's owner, root, or serve's own user (SlurmUser): MUNGE says who asks.
    if (!cred)
        return {401, "refused: a job's stops are for its owner and root: send a MUNGE credential "
                     "(gangway postmortem JOBID --from URL does)\n"};
    const auto uid = munge_reader(settings_.unmunge, cred, stops_read_payload(*job));
    if (!uid) {
        log_refusal("refused a reader of job " + std::to_string(*job) + ": " + uid.error());
        return {401, "refused: " + uid.error() + "\n"};
    }
    std::int64_t owner = pm::kUnknownOwner;
    {
        std::lock_guard lock(store_mu_);
        auto o = store_.stop_owner(*job);
        if (!o) return {503, o.error() + "\n"};
        owner = *o;
    }
    if (*uid != 0 && *uid != ::geteuid() && std::int64_t(*uid) != owner) {
        log_refusal("refused uid " + std::to_string(*uid) + " job " + std::to_string(*job) + "'s stops: not its owner");
        return {403, "refused: job " + std::to_string(*job) + " is not yours; its owner or root may read its post-mortem\n"};
    }
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

// With `lock` held (let go during SLURM's call): SLURM's node list and owner
// of every job waiting that has none yet, from one `scontrol -o show job`.
void StopsService::ask_slurm_for_jobs(std::unique_lock<std::mutex>& lock) {
    const auto jobs = gather_.jobs_without_slurm_nodes();
    if (jobs.empty()) return;
    lock.unlock();
    auto all = slurm_jobs(settings_.scontrol);
    lock.lock();
    if (!all) {
        // Kept with the first records' lists; asked again on the next round.
        log("cannot ask SLURM for " + std::to_string(jobs.size()) + " job(s)' nodes: " + all.error() +
            "; waiting for the nodes their records list");
        return;
    }
    for (const auto job : jobs) {
        const auto it = all->find(job);
        if (it == all->end()) continue;  // slurmctld forgot it, or never had it: the records' list stands
        gather_.set_owner(job, slurm_job_owner(it->second));
        auto nodes = slurm_job_nodes(it->second, job);
        if (!nodes) continue;  // completing: asked again next round
        for (const auto& n : gather_.set_slurm_nodes(job, std::move(*nodes)))
            log("dropped node " + n + "'s record of job " + std::to_string(job) + ": not a node of the job (SLURM's NodeList)");
    }
}

void StopsService::work() {
    std::unique_lock lock(mu_);
    std::int64_t forgot_at = 0;
    while (!stopping_) {
        cv_.wait_for(lock, std::chrono::seconds(1));
        if (stopping_) break;
        ask_slurm_for_jobs(lock);
        if (stopping_) break;
        auto due = gather_.take_due(now_s(), kJobsPerRound);
        lock.unlock();
        if (!due.empty()) {
            // The lost nodes: one call for every node, whatever the jobs claim.
            const bool any_missing = std::any_of(due.begin(), due.end(), [](const auto& g) { return !g.missing.empty(); });
            const Result<std::string> states = any_missing ? show_nodes(settings_.scontrol) : Result<std::string>(std::string());
            if (!states) log("cannot ask SLURM which nodes are down: " + states.error() + "; no node is taken as lost this round");
            // Those not judged before a stop stay in the store (state 0) for the next start.
            for (auto& g : due) {
                if (stopping_) break;
                judge(std::move(g), states);
            }
        }
        if (now_s() - forgot_at > 3600) {
            forgot_at = now_s();
            std::lock_guard store_lock(store_mu_);
            if (auto f = store_.forget_stop_records(forgot_at - kKeepJudgedS); !f) log("the store's judged records: " + f.error());
        }
        lock.lock();
    }
    lock.unlock();
    std::lock_guard done(running_mu_);
    --running_;
    running_cv_.notify_all();
}

void StopsService::judge(pm::GatheredJob g, const Result<std::string>& node_states) {
    const std::string job = std::to_string(g.job);
    if (g.late) {
        // A late node's record: judged again with the records the job was judged on (each node's latest run).
        std::lock_guard lock(store_mu_);
        auto before = store_.judged_stop_records(g.job);
        if (!before) log("job " + job + ": the records it was judged on: " + before.error());
        std::map<std::string, std::pair<std::int64_t, pm::NodeRecord>> latest;
        for (const auto& b : before ? *before : std::vector<sys::fleet::Store::StopRecord>{}) {
            if (std::any_of(g.records.begin(), g.records.end(), [&](const auto& r) { return r.node == b.node; })) continue;
            try {
                if (auto it = latest.find(b.node); it == latest.end() || it->second.first < b.run)
                    latest[b.node] = {b.run, pm::parse_node_record(b.body)};
            } catch (const Error&) {
            }
        }
        for (auto& [node, r] : latest) {
            g.missing.erase(std::remove(g.missing.begin(), g.missing.end(), node), g.missing.end());
            g.records.push_back(std::move(r.second));
        }
    }
    // Lost: a node that sent nothing and that SLURM reports down.
    std::vector<std::string> lost;
    if (node_states && !g.missing.empty()) {
        const auto lines = node_lines(*node_states);
        for (const auto& n : g.missing)
            if (const auto it = lines.find(n); it != lines.end() && slurm::node_state_of(it->second).down()) lost.push_back(n);
    }
    pm::Verdict v;
    try {
        v = pm::judge(g.records, lost);
    } catch (const std::exception& e) {
        log("job " + job + ": cannot judge: " + e.what());
        return;  // its records stay in the store
    }
    std::lock_guard lock(store_mu_);
    if (g.owner != pm::kUnknownOwner)
        if (auto o = store_.set_stop_owner(g.job, g.owner); !o) log("job " + job + ": " + o.error());
    if (v.cause == pm::Cause::none) {  // a healthy job: nothing to say, no record of a stop
        if (auto r = store_.set_stop_records_state(g.job, 0, 2); !r) log("job " + job + ": " + r.error());
        return;
    }
    const std::string line = pm::render_line(v);
    log(std::string(g.late ? "(late) " : "") + line);
    gangway::fleet::StopRow row;
    row.time = g.first_s;  // when its records came: judged again after a restart, it is the same row
    row.job = v.job ? v.job : g.job;
    row.step = v.step;
    row.node = v.node;
    row.rank = v.rank ? std::int64_t(*v.rank) : -1;
    row.cause = pm::to_string(v.cause);
    row.node_class = v.node_class && !v.node.empty();
    row.line = line;
    row.timeline = pm::render_timeline(v, g.records);
    std::string not_stored;
    if (g.late) {
        if (auto r = store_.replace_latest_stop(row); !r) not_stored = r.error();
    } else if (auto r = store_.insert_stop(row); !r) {
        not_stored = r.error();
    }
    if (!not_stored.empty()) {
        log("job " + job + ": the stop is not stored: " + not_stored);
        return;
    }
    if (auto r = store_.set_stop_records_state(g.job, 0, 1); !r) log("job " + job + ": " + r.error());
    // The requeue's decision was taken with the first records: a late one
    // changes the stored stop and the line, never requeues or drains.
    const bool requeue = !g.late && pm::should_requeue(v, g.records);
    Delivery d{g.job, g.owner, row.time, line, v.node, requeue ? pm::stop_drain_reason(v) : std::string(), requeue};
    {
        std::lock_guard dl(deliver_mu_);
        deliveries_[d.owner].push_back(std::move(d));
    }
    deliver_cv_.notify_one();
}

void StopsService::deliver_loop() {
    std::unique_lock lock(deliver_mu_);
    while (true) {
        deliver_cv_.wait(lock, [&] { return stopping_ || !deliveries_.empty(); });
        if (stopping_) break;
        // Round robin by owner: the next owner after the last one served.
        auto it = deliveries_.upper_bound(last_owner_);
        if (it == deliveries_.end()) it = deliveries_.begin();
        last_owner_ = it->first;
        Delivery d = std::move(it->second.front());
        it->second.pop_front();
        if (it->second.empty()) deliveries_.erase(it);
        lock.unlock();
        {
            // Begun: a restart does not do it twice (a second requeue of a job that runs again).
            std::lock_guard store_lock(store_mu_);
            if (auto r = store_.set_stop_records_state(d.job, 1, 2); !r) log("job " + std::to_string(d.job) + ": " + r.error());
        }
        deliver(d);
        lock.lock();
    }
    lock.unlock();
    std::lock_guard done(running_mu_);
    --running_;
    running_cv_.notify_all();
}

// The delivery's plan (lib/postmortem/delivery_plan) says which SLURM call
// comes next on which answers; this makes each call and hands back its answer.
void StopsService::deliver(const Delivery& d) {
    const std::string job = std::to_string(d.job);
    const AccountingRetry retry{.stopping = &stopping_};
    const auto& sc = settings_.scontrol;
    const auto error_of = [](const auto& r) { return r ? std::string() : r.error(); };
    pm::DeliveryPlan plan({.requeue = d.requeue, .node = d.node, .drain_max = settings_.drain_max});
    while (plan.next() != pm::DeliveryCall::done && !(stopping_ && plan.may_stop())) {
        if (plan.wait_s() > 0) std::this_thread::sleep_for(std::chrono::duration<double>(plan.wait_s()));
        switch (plan.next()) {
        case pm::DeliveryCall::stopped_run_line:
            plan.stopped_run_line(set_stopped_run_line(sc, settings_.sacctmgr, job, d.line, log, retry) == LinePlace::accounting);
            break;
        case pm::DeliveryCall::show_job: {
            const auto shown = job_view(sc, job);
            plan.shown_job(shown ? std::optional(shown->excluded) : std::nullopt, error_of(shown));
            break;
        }
        case pm::DeliveryCall::requeue_hold: plan.requeue_held(error_of(requeue_hold_job(sc, job))); break;
        case pm::DeliveryCall::exclude: plan.excluded(error_of(exclude_nodes(sc, job, join(plan.exclusions(), ",")))); break;
        case pm::DeliveryCall::release: plan.released(error_of(release_job(sc, job))); break;
        case pm::DeliveryCall::mark_requeued: {
            std::lock_guard lock(store_mu_);
            if (auto m = store_.mark_stop_requeued(d.job, d.time); !m) log("job " + job + ": " + m.error());
            plan.marked();
            break;
        }
        case pm::DeliveryCall::job_line:
            set_job_line(sc, settings_.sacctmgr, job, d.line, log, retry);
            plan.line_set();
            break;
        case pm::DeliveryCall::show_nodes: {
            const auto all = show_nodes(sc);
            const auto node = show_node(sc, d.node);
            if (!all || !node) plan.shown_nodes({}, false, !all ? all.error() : node.error());
            else plan.shown_nodes(slurm::drained_for_job(*all, job), slurm::node_state_of(*node).drained(), "");
            break;
        }
        case pm::DeliveryCall::drain: {
            const auto dr = drain_node(sc, d.node, d.drain_reason);
            plan.drained(error_of(dr));
            if (dr) log("drained " + d.node + ": " + d.drain_reason);
            break;
        }
        case pm::DeliveryCall::done: break;
        }
        for (const auto& line : plan.take_log()) log("job " + job + ": " + line);
    }
}

}  // namespace gangway::sys::postmortem
