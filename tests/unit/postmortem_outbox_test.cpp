// The post-mortem's outbox (lib/postmortem/outbox, lib/sys/postmortem/outbox):
// which answers take a record out of it, its entries' format and names, its
// bounds (records, bytes, age), and, on loopback against a route that checks
// the signature as serve does, that a record kept an hour is sent again
// signed afresh (taken), oldest first, stopping where serve does not take
// one, and removed when serve refuses it for good.
#include "catch_compat.hpp"

#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/postmortem/outbox.hpp"
#include "../../lib/sys/fleet/http_serve.hpp"
#include "../../lib/sys/postmortem/outbox.hpp"
#include "../../lib/sys/postmortem/stops_auth.hpp"
#include "temp_dir.hpp"

using namespace gangway::postmortem;
namespace spm = gangway::sys::postmortem;
namespace fs = std::filesystem;

namespace {

OutboxFile file(std::int64_t t, std::uint32_t job, std::uint64_t bytes = 100) {
    return *parse_outbox_name(outbox_name(t, job, "ab"), bytes);
}

std::vector<std::string> names(const std::vector<Eviction>& ev) {
    std::vector<std::string> out;
    for (const auto& e : ev) out.push_back(std::to_string(e.file.job) + ":" + to_string(e.why));
    return out;
}

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

TEST_CASE("outbox: 2xx leaves it; 400, 403, 409, 413 leave it refused; no answer, 5xx, 401 and 404 stay") {
    CHECK(delivery_of(202) == Delivery::delivered);
    CHECK(delivery_of(200) == Delivery::delivered);
    for (unsigned s : {400u, 403u, 409u, 413u}) CHECK(delivery_of(s) == Delivery::refused);
    for (unsigned s : {0u, 503u, 500u, 502u, 401u, 404u, 411u, 429u}) CHECK(delivery_of(s) == Delivery::retry);
}

TEST_CASE("outbox: an entry keeps the URL, the key file, the job, the node and the record's bytes as they are") {
    const OutboxEntry e{"http://admin01:9464", "/etc/gangway/stops.key", 42, "n1", "{\"a\":\"x\\n\\n\"}\n\n"};
    const auto back = parse_outbox_entry(render_outbox_entry(e));
    CHECK(back.to == e.to);
    CHECK(back.key_file == e.key_file);
    CHECK(back.job == 42);
    CHECK(back.node == "n1");
    CHECK(back.body == e.body);
    CHECK_THROWS_AS(render_outbox_entry({"http://a\nkey=/x", "/k", 1, "n1", "{}"}), gangway::Error);
    CHECK_THROWS_AS(render_outbox_entry({"http://a", "/k", 0, "n1", "{}"}), gangway::Error);
    CHECK_THROWS_AS(parse_outbox_entry("{}"), gangway::Error);
    CHECK_THROWS_AS(parse_outbox_entry("gangway-outbox 1\nto=a\nkey=b\njob=1\n\n{}"), gangway::Error);            // no node
    CHECK_THROWS_AS(parse_outbox_entry("gangway-outbox 1\nto=a\nto=b\nkey=b\njob=1\nnode=n\n\n{}"), gangway::Error);  // twice
    CHECK_THROWS_AS(parse_outbox_entry("gangway-outbox 1\nto=a\nkey=b\njob=x\nnode=n\n\n{}"), gangway::Error);
    CHECK_THROWS_AS(parse_outbox_entry("gangway-outbox 1\nto=a\nkey=b\njob=1\nnode=n\n"), gangway::Error);  // no blank line
}

TEST_CASE("outbox: names sort oldest first; a temporary file's or another name is no entry") {
    CHECK(outbox_name(1'700'000'000, 42, "0f") == "001700000000.42.0f");
    CHECK(outbox_name(999, 7, "aa") < outbox_name(1'700'000'000, 6, "aa"));
    const auto f = parse_outbox_name("001700000000.42.0f", 10);
    REQUIRE(f);
    CHECK(f->spooled_s == 1'700'000'000);
    CHECK(f->job == 42);
    CHECK(f->bytes == 10);
    CHECK(!parse_outbox_name(".001700000000.42.0f.tmp.12.abcdef", 1));
    CHECK(!parse_outbox_name("1700000000.42.0f", 1));
    CHECK(!parse_outbox_name("001700000000.0.0f", 1));
    CHECK(!parse_outbox_name("001700000000.42.xyz", 1));
    CHECK(!parse_outbox_name("node.json", 1));
}

TEST_CASE("outbox: its bounds drop the oldest: past the age, past the count, past the bytes, and room for one more") {
    const std::int64_t t = 1'800'000'000;
    OutboxLimits l;
    l.max_records = 3;
    l.max_bytes = 1000;
    l.max_age_s = 86400;
    // Within every bound: nothing.
    CHECK(outbox_evictions({file(t - 10, 1), file(t - 5, 2), file(t, 3)}, t, l).empty());
    // One too old, whatever the count.
    CHECK(names(outbox_evictions({file(t, 3), file(t - 86401, 1), file(t - 86400, 2)}, t, l)) ==
          std::vector<std::string>{"1:" + std::string(to_string(Evicted::too_old))});
    // Four: the oldest goes; with one more to add, the two oldest.
    const std::vector<OutboxFile> four{file(t - 1, 4), file(t - 4, 1), file(t - 3, 2), file(t - 2, 3)};
    CHECK(names(outbox_evictions(four, t, l)) == std::vector<std::string>{"1:" + std::string(to_string(Evicted::too_many))});
    CHECK(outbox_evictions(four, t, l, 10).size() == 2);
    // Bytes: 3 x 400 > 1000: the oldest; adding 500 more: the two oldest.
    const std::vector<OutboxFile> big{file(t - 3, 1, 400), file(t - 2, 2, 400), file(t - 1, 3, 400)};
    CHECK(names(outbox_evictions(big, t, l)) == std::vector<std::string>{"1:" + std::string(to_string(Evicted::too_big))});
    CHECK(outbox_evictions(big, t, l, 500).size() == 2);
    // An entry stamped after now (the clock was set back) is new, not old.
    CHECK(outbox_evictions({file(t + 90000, 1)}, t, l).empty());
}

namespace {

using namespace gangway::sys::fleet;

const std::string kKey = "0123456789abcdef0123456789abcdef";

// serve's /v1/stops as far as the outbox sees it: the signature and the
// time checked as serve checks them (check_stop_post, against the real
// clock), then the scripted status (202 when none is left).
struct Stops {
    std::mutex mu;
    std::vector<unsigned> script;
    std::vector<std::string> got;  // "JOB:NODE" of each request, in order
    std::unique_ptr<MetricsServer> server;
    Stops() {
        MetricsSource src;
        src.build = []() -> gangway::Result<MetricsSource::Texts> {
            return MetricsSource::Texts{{gangway::fleet::Exposition::openmetrics, ""}, {gangway::fleet::Exposition::prometheus_text, ""}};
        };
        auto routes = std::make_shared<ExtraRoutes>();
        routes->posts.push_back({spm::kStopsPath, spm::kMaxStopBody, [this](const ExtraRoutes::Header& h, std::string body) {
            spm::StopStamp s;
            const auto refused = spm::check_stop_post(kKey, h(spm::kHeaderJob), h(spm::kHeaderNode), h(spm::kHeaderTime),
                                                      h(spm::kHeaderSignature), body, now(), s);
            if (refused) return HttpReply{refused.status, refused.why + "\n"};
            std::lock_guard lock(mu);
            got.push_back(std::to_string(s.job) + ":" + s.node);
            unsigned status = 202;
            if (!script.empty()) {
                status = script.front();
                script.erase(script.begin());
            }
            return HttpReply{status, "status " + std::to_string(status) + "\n"};
        }});
        auto started = MetricsServer::start(ListenAddress{"127.0.0.1", 0, false}, std::move(src), {}, routes);
        REQUIRE(started);
        server = std::move(*started);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(server->port()); }
};

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir / "outbox"))
        if (parse_outbox_name(e.path().filename().string(), 0)) ++n;
    return n;
}

}  // namespace

TEST_CASE("outbox on disk: kept root's 0700 and 0600, bounded; sent again signed afresh, oldest first, stopping where serve does not take one") {
    gangway::test::TempDir t;
    const fs::path key = t.path / "stops.key";
    {
        std::ofstream(key) << kKey;
    }
    fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
    Stops serve;
    const std::string dir = t.path.string();
    const std::int64_t hour_ago = now() - 3600;
    std::vector<std::string> lines;
    OutboxLimits l;
    l.max_records = 3;
    // Four records kept an hour ago (the first one a second earlier): the bound keeps the last three.
    for (std::uint32_t job : {11u, 12u, 13u, 14u})
        REQUIRE(spm::keep_in_outbox(dir, {serve.url(), key.string(), job, "n1", "{\"job\":" + std::to_string(job) + "}"},
                                    hour_ago + (job == 11 ? -1 : 0), lines, l));
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].starts_with("job 11: its record, kept in " + dir + "/outbox since "));
    CHECK(entries(t.path) == 3);
    struct stat st{};
    REQUIRE(::stat((t.path / "outbox").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    for (const auto& e : fs::directory_iterator(t.path / "outbox")) {
        REQUIRE(::stat(e.path().c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
    }

    // serve busy (503) for the first: nothing more is tried, all three wait.
    serve.script = {503};
    spm::ResendOptions o;
    o.now_s = now();
    auto r = spm::resend_outbox(dir, o);
    REQUIRE(r);
    CHECK(r->delivered == 0);
    CHECK(r->left == 3);
    CHECK(serve.got == std::vector<std::string>{"12:n1"});
    REQUIRE(!r->lines.empty());
    CHECK(r->lines.back().find("3 record(s) wait in " + dir + "/outbox") != std::string::npos);

    // Up again: the hour-old records pass serve's time check (signed at
    // this try), oldest first; one refused for good (409: serve has it) is
    // removed too.
    serve.script = {202, 409, 202};
    serve.got.clear();
    r = spm::resend_outbox(dir, o);
    REQUIRE(r);
    CHECK(serve.got == std::vector<std::string>{"12:n1", "13:n1", "14:n1"});
    CHECK(r->delivered == 2);
    CHECK(r->refused == 1);
    CHECK(r->left == 0);
    CHECK(entries(t.path) == 0);
    // The same record's old stamp, as a replay of its first request would carry it, is refused.
    const spm::StopStamp old{12, "n1", hour_ago};
    spm::StopStamp out;
    CHECK(spm::check_stop_post(kKey, "12", "n1", std::to_string(hour_ago).c_str(),
                               spm::stop_signature(kKey, old, "{\"job\":12}").c_str(), "{\"job\":12}", now(), out)
              .status == 403);
}

TEST_CASE("outbox on disk: no serve (connection refused): the record stays; older than the age bound, it is dropped unsent") {
    gangway::test::TempDir t;
    const fs::path key = t.path / "stops.key";
    {
        std::ofstream(key) << kKey;
    }
    fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
    std::string url;
    {
        Stops gone;  // a port that was listening and is closed now
        url = gone.url();
    }
    const std::string dir = t.path.string();
    std::vector<std::string> lines;
    REQUIRE(spm::keep_in_outbox(dir, {url, key.string(), 22, "n1", "{}"}, now(), lines));
    REQUIRE(spm::keep_in_outbox(dir, {url, key.string(), 21, "n1", "{}"}, now() - 8 * 86400, lines));
    CHECK(lines.empty());
    spm::ResendOptions o;
    o.now_s = now();
    o.within_s = 2;
    const auto r = spm::resend_outbox(dir, o);
    REQUIRE(r);
    CHECK(r->dropped == 1);  // job 21: past 7 days
    CHECK(r->left == 1);
    CHECK(entries(t.path) == 1);
    // No outbox at all: nothing to do, no failure.
    gangway::test::TempDir empty;
    const auto none = spm::resend_outbox(empty.path.string(), o);
    REQUIRE(none);
    CHECK(none->left == 0);
    CHECK(none->lines.empty());
    // An outbox open to others is refused, not used.
    fs::permissions(t.path / "outbox", fs::perms::others_read, fs::perm_options::add);
    CHECK(!spm::resend_outbox(dir, o));
}
