// The running job's side of `fleet serve` (watch_service.hpp).
#include "watch_service.hpp"

#include <unistd.h>

#include <ctime>
#include <memory>
#include <optional>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../watch/pace_json.hpp"
#include "../postmortem/stops_auth.hpp"
#include "../postmortem/munge_read.hpp"

namespace gangway::sys::watch {
namespace gw = gangway::watch;
using sys::fleet::HttpReply;
using postmortem::kHeaderJob;
using postmortem::kHeaderNode;
using postmortem::kHeaderSignature;
using postmortem::kHeaderTime;

namespace {
std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }
}  // namespace

WatchService::WatchService(WatchSettings s) : settings_(std::move(s)) {
    if (!settings_.log) settings_.log = [](const std::string&) {};
    worker_ = std::thread([this] { run(); });
    judger_ = std::thread([this] { judging(); });
}

WatchService::~WatchService() {
    {
        std::lock_guard l(mu_);
        judge_stopping_ = true;
    }
    judge_cv_.notify_all();
    judger_.join();
    {
        std::lock_guard l(q_mu_);
        stopping_ = true;
    }
    q_cv_.notify_all();
    worker_.join();
}

void WatchService::add_routes(sys::fleet::ExtraRoutes& routes) {
    routes.posts.push_back({postmortem::kProgressPath, gw::kMaxProgressBytes,
                            [this](const sys::fleet::ExtraRoutes::Header& h, std::string body) { return post(h, std::move(body)); }});
    routes.gets.push_back({postmortem::kStatusPath, [this](std::string_view rest, const sys::fleet::ExtraRoutes::Header& h) {
                               return status(rest, h(postmortem::kHeaderMunge));
                           }});
}

// SLURM's calls, one at a time, off the server's thread.
void WatchService::run() {
    for (;;) {
        std::function<void()> call;
        {
            std::unique_lock l(q_mu_);
            q_cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
            if (stopping_) return;
            call = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            call();
        } catch (const std::exception& e) {
            settings_.log(std::string("watch: ") + e.what());
        }
    }
}

void WatchService::enqueue(std::function<void()> call) {
    {
        std::lock_guard l(q_mu_);
        if (queue_.size() >= 1024) return;  // SLURM far behind: the next judgement says it again
        queue_.push_back(std::move(call));
    }
    q_cv_.notify_one();
}

// One line a refusal, at most one each 10 s (a node sending a bad record
// every interval, or a stranger, does not fill the log).
void WatchService::log_refusal(const std::string& line) {
    std::lock_guard l(refusal_mu_);
    const std::int64_t now = now_s();
    if (now - refusal_logged_s_ < 10) return;
    refusal_logged_s_ = now;
    settings_.log("watch: " + line);
}

sys::fleet::HttpReply WatchService::post(const sys::fleet::ExtraRoutes::Header& header, std::string body) {
    postmortem::StopStamp stamp;
    if (const auto refused = postmortem::check_stop_post(settings_.key, header(kHeaderJob), header(kHeaderNode), header(kHeaderTime),
                                                         header(kHeaderSignature), body, now_s(), stamp,
                                                         postmortem::Signed::progress)) {
        log_refusal("refused a progress record: " + refused.why);
        return {refused.status, "refused: " + refused.why + "\n"};
    }
    gw::NodeProgress rec;
    try {
        rec = gw::parse_progress(body);
    } catch (const Error& e) {
        log_refusal("refused node " + stamp.node + "'s progress record of job " + std::to_string(stamp.job) + ": " + e.what());
        return {400, std::string("refused: ") + e.what() + "\n"};
    }
    if (rec.job != stamp.job || rec.node != stamp.node)
        return {403, "refused: the record is of job " + std::to_string(rec.job) + " on " + rec.node + ", its stamp of job " +
                         std::to_string(stamp.job) + " on " + stamp.node + "\n"};
    std::lock_guard l(mu_);
    // Steps no node spoke of for a while have ended (their agents stop with them).
    for (auto it = steps_.begin(); it != steps_.end();)
        it = it->second.newest_ns < rec.t_ns - kForgetNs ? steps_.erase(it) : std::next(it);
    const auto id = std::make_pair(rec.job, rec.step);
    if (!steps_.count(id) && steps_.size() >= kMaxSteps) return {503, "busy: " + std::to_string(kMaxSteps) + " steps watched\n"};
    Step& s = steps_[id];
    s.job = rec.job, s.step = rec.step, s.uid = rec.uid, s.on_hang = rec.on_hang, s.interval_ns = rec.interval_ns;
    s.newest_ns = std::max(s.newest_ns, rec.t_ns);
    if (!s.nodes.count(rec.node) && s.nodes.size() >= kMaxNodes)
        return {503, "busy: job " + std::to_string(rec.job) + " step " + std::to_string(rec.step) + " has " + std::to_string(kMaxNodes) + " nodes watched\n"};
    auto& q = s.nodes[rec.node];
    q.push_back(std::make_shared<const gw::NodeProgress>(std::move(rec)));
    while (q.size() > gw::kMaxHistory) q.pop_front();
    // Judged on the judging thread (tens of ms at 512 ranks), at most twice an
    // interval: this thread answers the nodes.
    if (s.newest_ns - s.judged_ns >= s.interval_ns / 2 && !s.queued) {
        s.queued = true, s.judged_ns = s.newest_ns;
        to_judge_.push_back(id);
        judge_cv_.notify_one();
    }
    // While a confirmed hang waits for its dumps, every node is told.
    return {200, s.dump_asked_ns && !s.acted ? "dump\n" : "taken\n"};
}

void WatchService::judging() {
    std::unique_lock l(mu_);
    for (;;) {
        judge_cv_.wait(l, [this] { return judge_stopping_ || !to_judge_.empty(); });
        if (judge_stopping_) return;
        const StepId id = to_judge_.front();
        to_judge_.pop_front();
        auto it = steps_.find(id);
        if (it == steps_.end()) continue;
        Step& s = it->second;
        s.queued = false;
        // The records stay alive while judged, whatever post() drops meanwhile.
        std::vector<std::shared_ptr<const gw::NodeProgress>> held;
        for (const auto& [node, q] : s.nodes) held.insert(held.end(), q.begin(), q.end());
        gw::JudgeSettings js;
        if (s.interval_ns > 0) js.interval_ns = s.interval_ns;
        js.hang_min_ns = settings_.hang_min_ns;
        const std::int64_t now = s.newest_ns;
        l.unlock();
        std::vector<const gw::NodeProgress*> recs;
        recs.reserve(held.size());
        for (const auto& r : held) recs.push_back(r.get());
        std::optional<gw::Judgement> j;
        try {
            j = gw::judge_records(recs, now, js);
        } catch (const std::exception& e) {
            settings_.log("watch: job " + std::to_string(id.first) + " step " + std::to_string(id.second) + " not judged: " + e.what());
        }
        l.lock();
        if (!j) continue;
        it = steps_.find(id);
        if (it != steps_.end()) act(it->second, std::move(*j), js);
    }
}

// With mu_ held: what a judgement of the step makes serve do.
void WatchService::act(Step& s, gw::Judgement j, const gw::JudgeSettings& js) {
    s.last = std::move(j);
    const std::string job = std::to_string(s.job);
    const bool hang = s.last.hang && s.last.hang->confirmed;
    // The line for AdminComment: a straggler root confirmed or the ranks
    // named (their own job), and a hang root confirmed.
    gw::Judgement shown = s.last;
    if (!hang) shown.hang.reset();
    const std::string line = gw::judgement_line(shown);
    // Said again only when it names something else (its figures move each time).
    std::string key;
    if (shown.straggler) key = "straggler " + shown.straggler->node;
    if (shown.hang)
        for (const auto r : shown.hang->missing) key += " hang " + std::to_string(r);
    if (line.empty()) s.said.clear();  // named again after it recovered: said again (the line stays till then)
    if (!line.empty() && key != s.said) {
        s.said = key;
        const std::string text = "gangway: " + line;
        settings_.log("job " + job + " step " + std::to_string(s.step) + ": " + line);
        enqueue([this, job, text] {
            if (const auto r = set_admin_comment(settings_.scontrol, job, text); !r)
                settings_.log("watch: job " + job + "'s AdminComment: " + r.error());
        });
    }
    // What it named, for the fleet: root's evidence makes it count for the node.
    std::vector<gangway::fleet::WatchEvent> events;
    const std::int64_t t = now_s();
    if (s.last.straggler)
        events.push_back({t, t, s.job, s.step, gangway::fleet::WatchKind::straggler, s.last.straggler->node,
                          s.last.straggler->reason != gw::Reason::none, line});
    if (s.last.hang)
        for (const auto& node : s.last.hang->nodes)
            events.push_back({t, t, s.job, s.step, gangway::fleet::WatchKind::hang, node, s.last.hang->confirmed, line});
    if (!events.empty()) keep(std::move(events));
    if (!hang) {
        s.dump_asked_ns = 0;  // progress again: a new hang asks anew
        return;
    }
    if (!s.dump_asked_ns) s.dump_asked_ns = s.newest_ns;
    // The dumps first (each rank's hook writes within a second of its
    // node's next record), then what the user asked.
    if (!s.acted && s.on_hang != gw::OnHang::report && s.newest_ns - s.dump_asked_ns >= 2 * js.interval_ns) {
        s.acted = true;
        const auto what = s.on_hang;
        enqueue([this, job, what] {
            const auto r = what == gw::OnHang::cancel ? cancel_job(settings_.scontrol, job) : requeue_job(settings_.scontrol, job);
            settings_.log("watch: job " + job + " hung: " + (what == gw::OnHang::cancel ? "cancelled" : "requeued") +
                          (r ? std::string() : ": " + r.error()));
        });
    }
}

// On the worker's thread: the store is opened there, once.
void WatchService::keep(std::vector<gangway::fleet::WatchEvent> events) {
    if (settings_.db.empty()) return;
    enqueue([this, events = std::move(events)] {
        if (!store_) {
            auto opened = sys::fleet::Store::open(settings_.db, sys::fleet::OpenMode::read_write);
            if (!opened) return settings_.log("watch: the fleet store: " + opened.error());
            store_ = std::make_unique<sys::fleet::Store>(std::move(*opened));
        }
        for (const auto& e : events)
            if (const auto r = store_->upsert_watch_event(e); !r) return settings_.log("watch: the fleet store: " + r.error());
    });
}

sys::fleet::HttpReply WatchService::status(std::string_view rest, const char* cred) {
    const auto job = parse_uint<std::uint32_t>(rest);
    if (!job) return {404, "not found: give /v1/status/JOBID\n"};
    if (!cred)
        return {401, "refused: a job's status is for its owner and root: send a MUNGE credential (gangway status JOBID does)\n"};
    const auto uid = postmortem::munge_reader(settings_.unmunge, cred, postmortem::status_read_payload(*job));
    if (!uid) return {401, "refused: " + uid.error() + "\n"};
    std::lock_guard l(mu_);
    std::string out;
    for (const auto& [id, s] : steps_) {
        if (id.first != *job) continue;
        if (*uid != 0 && *uid != ::geteuid() && *uid != s.uid)
            return {403, "refused: job " + std::to_string(*job) + " is not yours; its owner or root may read its status\n"};
        const auto& j = s.last;
        out += "job " + std::to_string(s.job) + " step " + std::to_string(s.step) + ": " + std::to_string(j.ranks_reporting) + " of " +
               std::to_string(j.ranks_expected) + " ranks reporting their pace on " + std::to_string(s.nodes.size()) + " node(s)";
        if (j.pace_ns > 0)
            out += ", a collective every " + std::to_string((j.pace_ns + 500'000) / 1'000'000) + " ms (newest " +
                   std::to_string(j.collectives) + ")";
        out += "\n";
        if (j.straggler) out += gw::judgement_line(gw::Judgement{0, 0, 0, 0, j.straggler, std::nullopt, {}}) + "\n";
        if (j.hang)
            out += gw::judgement_line(gw::Judgement{0, 0, 0, 0, std::nullopt, j.hang, {}}) +
                   (j.hang->confirmed ? "" : " (not confirmed by root's view: nothing acts on it)") + "\n";
        if (!j.straggler && !j.hang) out += "no straggler and no hang\n";
        for (const auto& n : j.notes) out += "note: " + n + "\n";
    }
    if (out.empty()) return {404, "no progress of job " + std::to_string(*job) + " is known (the site's watch= is off, or the job runs no step yet)\n"};
    return {200, out};
}

}  // namespace gangway::sys::watch
