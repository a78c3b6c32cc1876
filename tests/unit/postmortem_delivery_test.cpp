// The post-mortem's delivery (issue 33): the records' signature and its
// checks before parsing, the records' consistency, the per-job gathering and
// its bounds, the lost-node rule, the requeue and drain rules, the fields of
// `scontrol show job`, the stops in the fleet store and metrics, the repeat
// offenders, and serve's POST route (framing and size) on loopback.
#include "catch_compat.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../../lib/fleet/openmetrics.hpp"
#include "../../lib/fleet/stops.hpp"
#include "../../lib/postmortem/delivery_plan.hpp"
#include "../../lib/postmortem/gather.hpp"
#include "../../lib/postmortem/resume.hpp"
#include "../../lib/slurm/drain_rules.hpp"
#include "../../lib/sys/node/fd.hpp"
#include "../../lib/sys/fleet/http_serve.hpp"
#include "../../lib/sys/fleet/store.hpp"
#include "../../lib/sys/net/http_client.hpp"
#include "../../lib/sys/postmortem/stops_auth.hpp"
#include "temp_dir.hpp"

using namespace gangway::postmortem;
namespace spm = gangway::sys::postmortem;
using gangway::fleet::StopRow;

namespace {

NodeRecord record(const std::string& node, std::uint32_t job, std::vector<std::string> nodes) {
    NodeRecord r;
    r.node = node;
    r.job = job;
    r.job_nodes = std::move(nodes);
    TaskEnd t;
    t.node = node;
    t.job = job;
    r.tasks.push_back(t);
    return r;
}

const std::string kKey = "0123456789abcdef0123456789abcdef";
const std::int64_t kNow = 1'800'000'000;

spm::StopRefusal check(const spm::StopStamp& s, const std::string& body, const std::string& sig, std::int64_t now = kNow) {
    const std::string job = std::to_string(s.job), time = std::to_string(s.time_s);
    spm::StopStamp out;
    return spm::check_stop_post(kKey, job.c_str(), s.node.c_str(), time.c_str(), sig.c_str(), body, now, out);
}

}  // namespace

TEST_CASE("stops: a record signed with the site's key passes; another key, another body or stamp, or no header does not") {
    const spm::StopStamp s{42, "n1", kNow};
    const std::string body = "{\"x\":1}";
    const std::string sig = spm::stop_signature(kKey, s, body);
    CHECK(!check(s, body, sig));
    CHECK(check(s, body, spm::stop_signature("another key", s, body)).status == 401);
    CHECK(check(s, body + " ", sig).status == 401);                         // the body changed
    CHECK(check(spm::StopStamp{43, "n1", kNow}, body, sig).status == 401);  // another job
    CHECK(check(spm::StopStamp{42, "n2", kNow}, body, sig).status == 401);  // another node
    spm::StopStamp out;
    CHECK(spm::check_stop_post(kKey, "42", "n1", nullptr, sig.c_str(), body, kNow, out).status == 400);
    CHECK(spm::check_stop_post(kKey, "42", "n1 x", "1", sig.c_str(), body, kNow, out).status == 400);
    CHECK(spm::check_stop_post(kKey, "0", "n1", "1", sig.c_str(), body, kNow, out).status == 400);
}

TEST_CASE("stops: a signed record older or newer than the skew is refused as stale (a replay)") {
    const spm::StopStamp s{42, "n1", kNow};
    const std::string sig = spm::stop_signature(kKey, s, "{}");
    CHECK(!check(s, "{}", sig, kNow + spm::kStopMaxSkewS));
    CHECK(check(s, "{}", sig, kNow + spm::kStopMaxSkewS + 1).status == 403);
    CHECK(check(s, "{}", sig, kNow - spm::kStopMaxSkewS - 1).status == 403);
}

TEST_CASE("stops: a record must be the signer's node and job, and its tasks too") {
    const spm::StopStamp s{42, "n1", kNow};
    CHECK(spm::record_mismatch(s, record("n1", 42, {"n1", "n2"})).empty());
    CHECK(!spm::record_mismatch(s, record("n2", 42, {"n1", "n2"})).empty());  // another node's record
    CHECK(!spm::record_mismatch(s, record("n1", 7, {"n1", "n2"})).empty());   // another job's
    CHECK(!spm::record_mismatch(s, record("n1", 42, {"n2", "n3"})).empty());  // not in its own list
    auto r = record("n1", 42, {"n1", "n2"});
    r.tasks[0].node = "n2";  // a task line naming another node
    CHECK(!spm::record_mismatch(s, r).empty());
}

TEST_CASE("gather: a job waits for every node of its list, a second record of a node is refused, then it is judged once") {
    StopsGather g;
    CHECK(g.add(record("n1", 5, {"n1", "n2", "n3"}), 100, kNow) == Took::accepted);
    CHECK(g.add(record("n1", 5, {"n1", "n2", "n3"}), 100, kNow) == Took::duplicate);  // a replay
    CHECK(g.add(record("n2", 5, {"n1", "n2", "n3"}), 100, kNow + 1) == Took::accepted);
    CHECK(g.take_due(kNow + 2).empty());
    CHECK(g.add(record("n3", 5, {"n1", "n2", "n3"}), 100, kNow + 3) == Took::accepted);
    const auto due = g.take_due(kNow + 3);
    REQUIRE(due.size() == 1);
    CHECK(due[0].records.size() == 3);
    CHECK(due[0].missing.empty());
    CHECK(g.pending_jobs() == 0);
    CHECK(g.pending_bytes() == 0);
    CHECK(g.add(record("n1", 5, {"n1", "n2", "n3"}), 100, kNow + 4) == Took::duplicate);  // a replay after the judgement
}

TEST_CASE("gather: a late node's record opens its judged job again, marked late; a requeued run's record is a new run") {
    StopsGather g(GatherLimits{.wait_s = 20});
    CHECK(g.add(record("n1", 5, {"n1", "n2"}), 100, kNow) == Took::accepted);
    auto due = g.take_due(kNow + 20);
    REQUIRE(due.size() == 1);
    CHECK(!due[0].late);
    CHECK(due[0].missing == std::vector<std::string>{"n2"});
    // n2's Epilog could not send until serve was back: its record is taken, the job judged again.
    CHECK(g.add(record("n2", 5, {"n1", "n2"}), 100, kNow + 600) == Took::accepted);
    CHECK(g.add(record("n2", 5, {"n1", "n2"}), 100, kNow + 601) == Took::duplicate);
    due = g.take_due(kNow + 620);
    REQUIRE(due.size() == 1);
    CHECK(due[0].late);
    CHECK(due[0].first_s == kNow + 600);
    CHECK(g.add(record("n2", 5, {"n1", "n2"}), 100, kNow + 700) == Took::duplicate);  // judged twice, replayed: still refused
    // The job requeued and stopped again: n1's record of the next run (a later window) is that run's, not late.
    NodeRecord next = record("n1", 5, {"n1", "n2"});
    next.window_start_ns = 1;
    CHECK(g.add(next, 100, kNow + 900) == Took::accepted);
    due = g.take_due(kNow + 920);
    REQUIRE(due.size() == 1);
    CHECK(!due[0].late);
}

TEST_CASE("gather: the due jobs go round robin by owner, so one user's burst cannot hold back another's job") {
    CHECK(fair_order({1, 1, 1, 2, 1, 3, 2}) == std::vector<std::size_t>{0, 3, 5, 1, 6, 2, 4});
    StopsGather g(GatherLimits{.wait_s = 20});
    for (std::uint32_t j = 1; j <= 600; ++j) {
        REQUIRE(g.add(record("n1", j, {"n1", "n2"}), 100, kNow) == Took::accepted);
        g.set_owner(j, 1000);
    }
    REQUIRE(g.add(record("n1", 9999, {"n1", "n2"}), 100, kNow + 5) == Took::accepted);
    g.set_owner(9999, 2000);
    const auto first = g.take_due(kNow + 30, 2);
    REQUIRE(first.size() == 2);
    CHECK((first[0].job == 9999 || first[1].job == 9999));
    CHECK(g.pending_jobs() == 599);
    CHECK(g.take_due(kNow + 30).size() == 599);
}

TEST_CASE("gather: after the wait the job goes with the nodes that sent and those missing") {
    StopsGather g(GatherLimits{.wait_s = 20});
    CHECK(g.add(record("n1", 5, {"n1", "n2", "n3"}), 100, kNow) == Took::accepted);
    CHECK(g.take_due(kNow + 19).empty());
    const auto due = g.take_due(kNow + 20);
    REQUIRE(due.size() == 1);
    CHECK(due[0].missing == std::vector<std::string>{"n2", "n3"});
}

TEST_CASE("gather: a record from outside the job, or widening its list, is refused; SLURM's list drops an outsider") {
    StopsGather g;
    CHECK(g.add(record("n1", 5, {"n1", "n2"}), 100, kNow) == Took::accepted);
    CHECK(g.add(record("n9", 5, {"n1", "n2", "n9"}), 100, kNow) == Took::not_job_node);
    CHECK(g.add(record("n2", 5, {"n1", "n2", "n9"}), 100, kNow) == Took::other_list);
    // The first record lied about the list: SLURM's says n1 is not the job's.
    StopsGather h;
    CHECK(h.add(record("n1", 6, {"n1", "n2"}), 100, kNow) == Took::accepted);
    REQUIRE(h.jobs_without_slurm_nodes() == std::vector<std::uint32_t>{6});
    CHECK(h.set_slurm_nodes(6, {"n2", "n3"}) == std::vector<std::string>{"n1"});
    CHECK(h.jobs_without_slurm_nodes().empty());
    CHECK(h.pending_bytes() == 0);
    CHECK(h.add(record("n1", 6, {"n1", "n2"}), 100, kNow) == Took::not_job_node);
    CHECK(h.add(record("n2", 6, {"n2", "n3"}), 100, kNow) == Took::accepted);
}

TEST_CASE("gather: at most max_jobs jobs and max_bytes pending; the bytes come back when a job is taken") {
    StopsGather g(GatherLimits{.max_jobs = 2, .max_job_bytes = 1000, .max_bytes = 1500, .wait_s = 20});
    CHECK(g.add(record("n1", 1, {"n1", "n2"}), 700, kNow) == Took::accepted);
    CHECK(g.add(record("n2", 1, {"n1", "n2"}), 400, kNow) == Took::too_big);  // the job's 1000
    CHECK(g.add(record("n1", 2, {"n1", "n2"}), 700, kNow) == Took::accepted);
    CHECK(g.add(record("n1", 3, {"n1"}), 10, kNow) == Took::too_many_jobs);
    CHECK(g.add(record("n2", 2, {"n1", "n2"}), 200, kNow) == Took::too_big);  // the total 1500
    CHECK(g.take_due(kNow + 20).size() == 2);
    CHECK(g.add(record("n1", 3, {"n1"}), 10, kNow + 21) == Took::accepted);
    CHECK(http_status(Took::too_big) == 503);
    CHECK(http_status(Took::duplicate) == 409);
    CHECK(http_status(Took::not_job_node) == 403);
}

TEST_CASE("gather: a job judged stays remembered against replays, the last kRecentJobs of them") {
    StopsGather g;
    for (std::uint32_t j = 1; j <= StopsGather::kRecentJobs + 1; ++j) {
        REQUIRE(g.add(record("n1", j, {"n1"}), 1, kNow) == Took::accepted);
        REQUIRE(g.take_due(kNow).size() == 1);
    }
    CHECK(g.add(record("n1", 2, {"n1"}), 1, kNow) == Took::duplicate);
    CHECK(g.add(record("n1", 1, {"n1"}), 1, kNow) == Took::accepted);  // forgotten: memory is bounded
}

TEST_CASE("stops read: unmunge's word on a credential; only Success gives a uid, with the payload for one job") {
    const std::string ok =
        "STATUS:          Success (0)\nENCODE_HOST:     n1 (10.0.0.1)\nTTL:             300\n"
        "UID:             alice (1000)\nGID:             alice (1000)\nLENGTH:          26\n\n" +
        spm::stops_read_payload(77);
    const auto who = spm::parse_unmunge(ok);
    REQUIRE(who);
    CHECK(who->uid == 1000);
    CHECK(who->payload == spm::stops_read_payload(77));
    CHECK(who->payload != spm::stops_read_payload(78));
    std::string replayed = ok;
    replayed.replace(replayed.find("Success (0)"), 11, "Replayed credential (17)");
    CHECK(!spm::parse_unmunge(replayed));
    CHECK(!spm::parse_unmunge("STATUS: Success (0)\nUID: alice\n\nx"));  // no number
    CHECK(!spm::parse_unmunge("STATUS: Success (0)\nUID: x (1)\n"));        // no payload part
    CHECK(spm::munge_credential_shape("MUNGE:AwQFAADAlmfQgrs+PAErLhu3mGEVLvwl=:"));
    CHECK(!spm::munge_credential_shape("MUNGE:abc def"));
    CHECK(!spm::munge_credential_shape("-i /etc/shadow"));
    CHECK(!spm::munge_credential_shape("MUNGE:" + std::string(5000, 'A')));
}

TEST_CASE("resume: only a node-class cause in a step run with requeue is requeued; an OOM or a user's bug never") {
    auto recs = std::vector<NodeRecord>{record("n1", 5, {"n1", "n2"})};
    recs[0].tasks[0].requeue_on_fail = true;
    Verdict v;
    v.job = 5;
    v.node = "n2";
    v.cause = Cause::gpu_xid;
    v.node_class = true;
    CHECK(should_requeue(v, recs));
    v.cause = Cause::node_lost;
    CHECK(should_requeue(v, recs));
    v.cause = Cause::link_down;
    CHECK(should_requeue(v, recs));
    for (const Cause c : {Cause::oom, Cause::fatal_signal, Cause::nonzero_exit, Cause::hang, Cause::user_error}) {
        v.cause = c;
        CHECK(!should_requeue(v, recs));  // node_class set or not: the cause is the job's own
    }
    v.cause = Cause::gpu_xid;
    v.node_class = false;
    CHECK(!should_requeue(v, recs));
    v.node_class = true;
    v.node.clear();
    CHECK(!should_requeue(v, recs));
    v.node = "n2";
    recs[0].tasks[0].requeue_on_fail = false;  // the step did not ask for it
    CHECK(!should_requeue(v, recs));
}

TEST_CASE("resume: the drain cap counts the nodes drained for the job before, as the Epilog does") {
    const std::string shown =
        "NodeName=n1 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: postmortem gpu_xid Xid 79 (job 5) [root@2026-01-01T00:00:00]\n"
        "NodeName=n2 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 55) [root@2026-01-01T00:00:00]\n"
        "NodeName=n3 Arch=x86_64 State=IDLE+DRAIN Reason=maintenance (job 5) [root@2026-01-01T00:00:00]\n"
        "NodeName=n4 Arch=x86_64 State=IDLE\n";
    const auto before = gangway::slurm::drained_for_job(shown, "5");
    CHECK(before == std::vector<std::string>{"n1"});
    CHECK(gangway::slurm::drain_within_cap(before, "n4", 2));
    CHECK(!gangway::slurm::drain_within_cap(before, "n4", 1));
    CHECK(gangway::slurm::drain_within_cap(before, "n1", 1));  // the same node again
    Verdict v;
    v.job = 5;
    v.cause = Cause::gpu_xid;
    v.detail = "Xid 79 on \"0000:17:00.0\"";
    // The Epilog's characters only: the quotes go.
    CHECK(stop_drain_reason(v) == "gangway: postmortem gpu-xid Xid 79 on 0000:17:00.0 (job 5)");
}

TEST_CASE("repeat offenders: two node-class stops of one node within 14 days; a user's cause or an old stop does not count") {
    auto row = [](std::int64_t t, std::uint32_t job, std::string node, bool node_class) {
        StopRow r;
        r.time = t;
        r.job = job;
        r.node = std::move(node);
        r.node_class = node_class;
        r.cause = node_class ? "gpu-xid" : "oom";
        return r;
    };
    const std::int64_t day = 86400;
    const std::vector<StopRow> rows{
        row(kNow - 13 * day, 1, "n1", true), row(kNow - day, 2, "n1", true),     // n1: two in 14 days
        row(kNow - 15 * day, 3, "n2", true), row(kNow - day, 4, "n2", true),     // n2: one is too old
        row(kNow - 2 * day, 5, "n3", false), row(kNow - day, 6, "n3", false),    // n3: OOMs, the jobs' own
        row(kNow - 2 * day, 7, "n4", true),  row(kNow - day, 7, "n4", true),     // n4: a requeued job stopped twice
    };
    const auto r = gangway::fleet::repeat_offenders(rows, kNow, {});
    REQUIRE(r.size() == 2);
    CHECK(r[0].node == "n1");
    CHECK(r[0].stops == 2);
    CHECK(r[1].node == "n4");
    CHECK(gangway::fleet::repeat_offenders(rows, kNow, {"n2", "n3"}).empty());
    CHECK(gangway::fleet::render_repeat_offenders(r).starts_with("n1 job_stops - 2 - - "));
}

TEST_CASE("store: stops are kept, read by job and node, counted per node and cause") {
    gangway::test::TempDir d;
    {
        auto s = gangway::sys::fleet::Store::open(d.db());
        REQUIRE(s);
        StopRow a;
        a.time = kNow;
        a.job = 7;
        a.node = "n2";
        a.cause = "gpu-xid";
        a.node_class = true;
        a.line = "gangway: job 7 ...";
        a.timeline = "t1\nt2\n";
        CHECK(*s->insert_stop(a));
        CHECK(!*s->insert_stop(a));  // the same verdict twice is one
        StopRow b = a;
        b.job = 8;
        b.node = "";
        b.cause = "user-error";
        b.node_class = false;
        CHECK(*s->insert_stop(b));
        const auto seven = s->stops_of_job(7);
        REQUIRE(seven);
        REQUIRE(seven->size() == 1);
        CHECK((*seven)[0].timeline == "t1\nt2\n");
        CHECK((*seven)[0].node_class);
        const auto counts = s->stop_counts();
        REQUIRE(counts);
        REQUIRE(counts->size() == 1);  // a stop that blames no node is not counted by node
        CHECK((*counts)[0].node == "n2");
        CHECK((*counts)[0].count == 1);
        const auto of_n2 = s->stops(0, kNow + 1, {"n2"});
        REQUIRE(of_n2);
        CHECK(of_n2->size() == 1);
    }
}

TEST_CASE("store: the records serve took wait there until delivered; a replay is refused; a late one finds the judged") {
    gangway::test::TempDir d;
    using Rec = gangway::sys::fleet::Store::StopRecord;
    {
        auto s = gangway::sys::fleet::Store::open(d.db());
        REQUIRE(s);
        CHECK(*s->insert_stop_record(Rec{5, "n1", 11, kNow, 0, "{body1}"}));
        CHECK(!*s->insert_stop_record(Rec{5, "n1", 11, kNow + 1, 0, "{again}"}));  // the same node and run: a replay
        CHECK(*s->insert_stop_record(Rec{5, "n1", 12, kNow + 2, 0, "{next run}"}));
        CHECK(*s->insert_stop_record(Rec{6, "n2", 11, kNow + 3, 0, "{body2}"}));
        REQUIRE(s->set_stop_records_state(5, 0, 1));
        REQUIRE(s->set_stop_owner(5, 1234));
    }
    {
        // A restart: what was not delivered is still there.
        auto s = gangway::sys::fleet::Store::open(d.db());
        REQUIRE(s);
        const auto waiting = s->stop_records_below(2);
        REQUIRE(waiting);
        REQUIRE(waiting->size() == 3);
        CHECK((*waiting)[0].body == "{body1}");
        CHECK((*waiting)[0].state == 1);
        CHECK((*waiting)[2].job == 6);
        REQUIRE(s->set_stop_records_state(5, 1, 2));
        CHECK(s->stop_records_below(2)->size() == 1);
        CHECK(s->judged_stop_records(5)->size() == 2);
        CHECK(s->judged_stop_records(6)->empty());
        CHECK(*s->stop_owner(5) == 1234);
        CHECK(*s->stop_owner(6) == -1);
        REQUIRE(s->forget_stop_records(kNow + 10));
        CHECK(s->judged_stop_records(5)->empty());
        CHECK(s->stop_records_below(2)->size() == 1);  // waiting ones are never forgotten
    }
}

TEST_CASE("metrics: gangway_job_stops_total per node and cause, in both formats") {
    gangway::fleet::MetricsInput in;
    in.stops = {{"n2", "gpu-xid", 3}, {"n5", "link-down", 1}};
    const auto om = gangway::fleet::render_metrics(in, gangway::fleet::Exposition::openmetrics);
    CHECK(om.find("# TYPE gangway_job_stops counter\n") != std::string::npos);
    CHECK(om.find("gangway_job_stops_total{node=\"n2\",cause=\"gpu-xid\"} 3\n") != std::string::npos);
    const auto text = gangway::fleet::render_metrics(in, gangway::fleet::Exposition::prometheus_text);
    CHECK(text.find("# TYPE gangway_job_stops_total counter\n") != std::string::npos);
    CHECK(text.find("gangway_job_stops_total{node=\"n5\",cause=\"link-down\"} 1\n") != std::string::npos);
    CHECK(gangway::fleet::render_metrics({}, gangway::fleet::Exposition::openmetrics).find("gangway_job_stops") == std::string::npos);
}

namespace {

using namespace gangway::sys::fleet;

// A server with /metrics and a POST route that echoes what it got.
struct Served {
    std::vector<std::string> bodies;
    std::unique_ptr<MetricsServer> server;
    Served() {
        MetricsSource src;
        src.build = []() -> gangway::Result<MetricsSource::Texts> {
            return MetricsSource::Texts{{gangway::fleet::Exposition::openmetrics, "up 1\n"},
                                        {gangway::fleet::Exposition::prometheus_text, "up 1\n"}};
        };
        auto routes = std::make_shared<ExtraRoutes>();
        routes->max_inflight = 2500;
        routes->posts.push_back({"/v1/stops", 1000, [this](const ExtraRoutes::Header& header, std::string body) {
                                     const char* h = header("X-Gangway-Job");
                                     bodies.push_back(std::string(h ? h : "-") + ":" + body);
                                     return HttpReply{202, "took " + std::to_string(body.size()) + "\n"};
                                 }});
        // A second route: each POST goes to its own path's handler, with its own bound.
        routes->posts.push_back({"/v1/progress", 10, [](const ExtraRoutes::Header&, std::string body) {
                                     return HttpReply{200, "progress " + std::to_string(body.size()) + "\n"};
                                 }});
        routes->gets.push_back({"/v1/stops/", [](std::string_view rest, const auto&) { return HttpReply{200, "job " + std::string(rest) + "\n"}; }});
        auto s = MetricsServer::start(ListenAddress{"127.0.0.1", 0, false}, std::move(src), {}, routes);
        REQUIRE(s);
        server = std::move(*s);
    }
};

// The whole answer to `request` on a fresh connection.
std::string ask(std::uint16_t port, const std::string& request) {
    gangway::sys::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    timeval tv{5, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    std::string_view s = request;
    while (!s.empty()) {
        const ssize_t n = ::send(fd.get(), s.data(), s.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        s.remove_prefix(std::size_t(n));
    }
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;) out.append(buf, std::size_t(n));
    return out;
}

}  // namespace

TEST_CASE("serve's POST route: one Content-Length within the bound; chunked, none, two or too long are refused unread") {
    Served s;
    const auto port = s.server->port();
    const std::string head = "POST /v1/stops HTTP/1.1\r\nHost: x\r\nX-Gangway-Job: 9\r\n";
    CHECK(ask(port, head + "Content-Length: 5\r\n\r\nhello").starts_with("HTTP/1.1 202 "));
    REQUIRE(s.bodies.size() == 1);
    CHECK(s.bodies[0] == "9:hello");
    CHECK(ask(port, head + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").starts_with("HTTP/1.1 400 "));
    CHECK(ask(port, head + "\r\n").starts_with("HTTP/1.1 411 "));
    CHECK(ask(port, head + "Content-Length: 1001\r\n\r\n" + std::string(1001, 'x')).starts_with("HTTP/1.1 413 "));
    CHECK(ask(port, head + "Content-Length: 1000\r\n\r\n" + std::string(1000, 'x')).starts_with("HTTP/1.1 202 "));
    CHECK(s.bodies.size() == 2);  // the refused ones never reached the handler
    // The bodies' bytes are given back when each is answered: more than
    // max_inflight (2500) in all, one after another, all taken.
    for (int i = 0; i < 3; ++i)
        CHECK(ask(port, head + "Content-Length: 1000\r\n\r\n" + std::string(1000, 'x')).starts_with("HTTP/1.1 202 "));
    s.bodies.resize(2);
    // Every other route keeps issue 31's framing: no body anywhere else.
    CHECK(ask(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").starts_with("HTTP/1.1 405 "));
    CHECK(ask(port, "GET /v1/stops/12 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").starts_with("HTTP/1.1 400 "));
    CHECK(ask(port, "POST /v1/stopsX HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").starts_with("HTTP/1.1 405 "));
    const auto got = ask(port, "GET /v1/stops/12 HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(got.starts_with("HTTP/1.1 200 "));
    CHECK(got.ends_with("job 12\n"));
    CHECK(ask(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ends_with("up 1\n"));
}

TEST_CASE("http client: a POST and a GET against serve's routes; a URL other than http://HOST:PORT is refused") {
    Served s;
    const auto u = gangway::sys::parse_http_url("http://127.0.0.1:" + std::to_string(s.server->port()));
    REQUIRE(u);
    const auto a = gangway::sys::http_request(*u, "POST", "/v1/stops", {{"X-Gangway-Job", "3"}}, "abc", gangway::sys::after_ms(5000));
    REQUIRE(a);
    CHECK(a->status == 202);
    CHECK(a->body == "took 3\n");
    CHECK(s.bodies == std::vector<std::string>{"3:abc"});
    const auto g = gangway::sys::http_request(*u, "GET", "/v1/stops/77", {}, {}, gangway::sys::after_ms(5000));
    REQUIRE(g);
    CHECK(g->body == "job 77\n");
    // The second route's POST reaches its own handler, under its own bound.
    const auto p = gangway::sys::http_request(*u, "POST", "/v1/progress", {}, "0123456789", gangway::sys::after_ms(5000));
    REQUIRE(p);
    CHECK(p->body == "progress 10\n");
    const auto big = gangway::sys::http_request(*u, "POST", "/v1/progress", {}, "01234567890", gangway::sys::after_ms(5000));
    REQUIRE(big);
    CHECK(big->status == 413);
    CHECK(s.bodies == std::vector<std::string>{"3:abc"});
    const auto none = gangway::sys::http_request(*u, "POST", "/v1/other", {}, "x", gangway::sys::after_ms(5000));
    REQUIRE(none);
    CHECK(none->status >= 400);
    CHECK(!gangway::sys::parse_http_url("https://admin:9464"));
    CHECK(!gangway::sys::parse_http_url("http://user@admin:9464"));
    CHECK(!gangway::sys::parse_http_url("http://admin:0"));
    const auto v6 = gangway::sys::parse_http_url("http://[::1]:9464/x");
    REQUIRE(v6);
    CHECK(v6->host == "::1");
    CHECK(v6->port == 9464);
    CHECK(v6->path == "/x");
}

TEST_CASE("delivery plan: requeue held, excluded, released, the line, then the drain under the cap") {
    using gangway::postmortem::DeliveryCall;
    using gangway::postmortem::DeliveryPlan;
    DeliveryPlan p({.requeue = true, .node = "n2", .drain_max = 2});
    CHECK(p.next() == DeliveryCall::stopped_run_line);
    p.stopped_run_line(true);
    CHECK(p.next() == DeliveryCall::show_job);
    p.shown_job(std::string("n7"), "");
    CHECK(p.next() == DeliveryCall::requeue_hold);
    p.requeue_held("Job is completing");  // refused while the Epilogs run: again, a second later
    CHECK(p.next() == DeliveryCall::requeue_hold);
    CHECK(p.wait_s() == 1);
    p.requeue_held("");
    CHECK(p.next() == DeliveryCall::exclude);
    CHECK(p.exclusions() == std::vector<std::string>{"n7", "n2"});  // the user's exclusion kept
    CHECK(!p.may_stop());                                           // held: never left so
    p.excluded("");
    CHECK(p.next() == DeliveryCall::release);
    CHECK(!p.may_stop());
    p.released("");
    CHECK(p.requeued());
    CHECK(p.take_log() == std::vector<std::string>{"requeued without n2"});
    CHECK(p.next() == DeliveryCall::mark_requeued);
    p.marked();
    CHECK(p.next() == DeliveryCall::job_line);  // pending now: slurmctld takes the line
    p.line_set();
    CHECK(p.next() == DeliveryCall::show_nodes);
    p.shown_nodes({"n5"}, false, "");
    CHECK(p.next() == DeliveryCall::drain);
    p.drained("");
    CHECK(p.next() == DeliveryCall::done);
}

TEST_CASE("delivery plan: what stops it and what it says") {
    using gangway::postmortem::DeliveryCall;
    using gangway::postmortem::DeliveryPlan;
    // No requeue asked: the line alone, no drain.
    DeliveryPlan line({.requeue = false, .node = "n2", .drain_max = 2});
    CHECK(line.next() == DeliveryCall::job_line);
    line.line_set();
    CHECK(line.next() == DeliveryCall::done);
    // squeue does not know the job: not requeued; slurmdbd took the stopped run's line, so no second line; the drain.
    DeliveryPlan gone({.requeue = true, .node = "n2", .drain_max = 2});
    gone.stopped_run_line(true);
    gone.shown_job(std::nullopt, "squeue: Invalid job id");
    CHECK(gone.take_log() == std::vector<std::string>{"not requeued: squeue: Invalid job id"});
    CHECK(gone.next() == DeliveryCall::show_nodes);
    // Held but never released: a line says so; without slurmdbd the line goes to slurmctld.
    DeliveryPlan held({.requeue = true, .node = "n2", .drain_max = 2});
    held.stopped_run_line(false);
    held.shown_job(std::string(), "");
    held.requeue_held("");
    held.excluded("");
    held.released("Access denied");
    CHECK(!held.requeued());
    CHECK(held.take_log() == std::vector<std::string>{"requeued without n2 but held: Access denied"});
    CHECK(held.next() == DeliveryCall::job_line);
    // Refused 20 times: not requeued.
    DeliveryPlan busy({.requeue = true, .node = "n2", .drain_max = 0});
    busy.stopped_run_line(false);
    busy.shown_job(std::string(), "");
    for (int i = 0; i < DeliveryPlan::kRequeueTries; ++i) busy.requeue_held("Job is completing");
    CHECK(busy.take_log() == std::vector<std::string>{"not requeued: Job is completing"});
    CHECK(busy.next() == DeliveryCall::job_line);
    busy.line_set();
    CHECK(busy.next() == DeliveryCall::done);  // --drain-max 0: no drains
    // The cap and a node drained already.
    DeliveryPlan capped({.requeue = true, .node = "n3", .drain_max = 2});
    capped.stopped_run_line(true);
    capped.shown_job(std::nullopt, "gone");
    capped.shown_nodes({"n1", "n2"}, false, "");
    CHECK(capped.next() == DeliveryCall::done);
    CHECK(capped.take_log().back() == "n3 not drained: more than 2 nodes drained for this job (--drain-max)");
    DeliveryPlan again({.requeue = true, .node = "n3", .drain_max = 2});
    again.stopped_run_line(true);
    again.shown_job(std::nullopt, "gone");
    again.shown_nodes({}, true, "");
    CHECK(again.next() == DeliveryCall::done);
    CHECK(again.take_log().back() == "n3 is drained already; left as it is");
}
