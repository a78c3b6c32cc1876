// The fleet store: what goes in comes out, a check stored twice is one,
// two writers at once lose nothing, and old figures fold into daily medians.
#include "catch_compat.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "temp_dir.hpp"
#include "../../lib/sys/fleet/store.hpp"

using namespace gangway::fleet;
using gangway::sys::fleet::OpenMode;
using gangway::sys::fleet::Store;
namespace fs = std::filesystem;

using gangway::test::TempDir;

namespace {

CheckRecord node_check(const std::string& id, const std::string& node, std::int64_t time, double h2d) {
    CheckRecord r;
    r.check = CheckRow{id, Source::node_check, 0, time, "", "ok", {node}};
    Figure f;
    f.check_id = id;
    f.node = node;
    f.device = "0000:17:00.0";
    f.peer_class = "NVIDIA H100";
    f.metric = Metric::gpu_h2d;
    f.value = h2d;
    r.figures.push_back(f);
    r.findings.push_back(FindingRow{id, node, "gpu 0000:17:00.0 PCIe x8 of x16"});
    return r;
}

Store open_rw(const TempDir& d) {
    auto s = Store::open(d.db());
    REQUIRE(s);
    return std::move(*s);
}

}  // namespace

TEST_CASE("fleet store: a check goes in and comes out with its figures and findings") {
    TempDir d;
    auto s = open_rw(d);
    auto r = node_check("c1", "n1", 1000, 25e9);
    r.check.job_id = "77";
    r.check.source = Source::job_check;
    r.check.uid = 1001;
    r.check.nodes = {"n1", "n2"};
    Figure link;
    link.node = "n1";
    link.peer = "n2";
    link.metric = Metric::link_bandwidth;
    link.value = 1.1e9;
    r.figures.push_back(link);
    auto ins = s.insert(r);
    REQUIRE(ins);
    CHECK(*ins);

    auto figs = s.figures(0, 2000, {});
    REQUIRE(figs);
    REQUIRE(figs->size() == 2);
    const auto& f = (*figs)[0];
    CHECK(f.check_id == "c1");
    CHECK(f.time == 1000);
    CHECK(f.source == Source::job_check);
    CHECK(f.uid == 1001);
    CHECK(f.node == "n1");
    CHECK_FALSE(f.daily);
    CHECK(f.count == 1);
    bool saw_link = false;
    for (const auto& g : *figs)
        if (g.metric == Metric::link_bandwidth) saw_link = g.peer == "n2" && g.value == 1.1e9;
    CHECK(saw_link);

    auto cs = s.checks(0, 2000, {"n2"});
    REQUIRE(cs);
    REQUIRE(cs->size() == 1);
    CHECK((*cs)[0].id == "c1");
    CHECK((*cs)[0].job_id == "77");
    CHECK((*cs)[0].nodes == std::vector<std::string>{"n1", "n2"});
    auto none = s.checks(0, 2000, {"n3"});
    REQUIRE(none);
    CHECK(none->empty());

    auto fs_ = s.findings(0, 2000, {"n1"});
    REQUIRE(fs_);
    REQUIRE(fs_->size() == 1);
    CHECK((*fs_)[0].text == "gpu 0000:17:00.0 PCIe x8 of x16");

    auto ns = s.nodes();
    REQUIRE(ns);
    CHECK(*ns == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("fleet store: the same check twice is one check, and the first one's figures stay") {
    TempDir d;
    auto s = open_rw(d);
    REQUIRE(*s.insert(node_check("c1", "n1", 1000, 25e9)));
    auto again = s.insert(node_check("c1", "n1", 1000, 1.0));  // same id, other figures: ignored
    REQUIRE(again);
    CHECK_FALSE(*again);
    auto figs = s.figures(0, 2000, {});
    REQUIRE(figs);
    REQUIRE(figs->size() == 1);
    CHECK((*figs)[0].value == 25e9);
    auto fs_ = s.findings(0, 2000, {});
    REQUIRE(fs_);
    CHECK(fs_->size() == 1);
}

TEST_CASE("fleet store: the time range and the node filter select figures") {
    TempDir d;
    auto s = open_rw(d);
    for (int i = 0; i < 10; ++i)
        REQUIRE(*s.insert(node_check("c" + std::to_string(i), i % 2 ? "odd" : "even", 100 * i, i)));
    auto figs = s.figures(200, 600, {"even"});
    REQUIRE(figs);
    REQUIRE(figs->size() == 2);  // times 200 and 400; 600 is past the end
    CHECK((*figs)[0].time == 200);
    CHECK((*figs)[1].time == 400);
    auto all = s.figures(0, 1000, {"even", "odd"});
    REQUIRE(all);
    CHECK(all->size() == 10);
}

TEST_CASE("fleet store: a second handle, and two writers at once, lose nothing") {
    TempDir d;
    { auto s = open_rw(d); }
    // Catch2's assertions are not for threads: each writer counts its failures.
    std::atomic<int> failures{0};
    auto writer = [&](int who) {
        auto s = Store::open(d.db());
        if (!s) {
            ++failures;
            return;
        }
        for (int i = 0; i < 50; ++i) {
            // Both writers store checks 0..49 of their own and 25 shared ones.
            if (!s->insert(node_check("w" + std::to_string(who) + "-" + std::to_string(i), "n", 10 + i, i))) ++failures;
            if (!s->insert(node_check("shared-" + std::to_string(i % 25), "n", 10 + i, i))) ++failures;
        }
    };
    std::thread a(writer, 1), b(writer, 2);
    a.join();
    b.join();
    CHECK(failures == 0);
    auto r = Store::open(d.db(), OpenMode::read_only);
    REQUIRE(r);
    auto cs = r->checks(0, 1000, {});
    REQUIRE(cs);
    CHECK(cs->size() == 125);
    auto has = r->has_check("shared-3");
    REQUIRE(has);
    CHECK(*has);
}

TEST_CASE("fleet store: figures past the window fold into daily medians that the reads return") {
    TempDir d;
    auto s = open_rw(d);
    const std::int64_t day = 86400;
    const std::int64_t d0 = 100 * day;  // an old day
    // Five figures on one old day (median 30), one on the next, one recent.
    const double vals[] = {10, 50, 30, 20, 40};
    for (int i = 0; i < 5; ++i) REQUIRE(*s.insert(node_check("old" + std::to_string(i), "n1", d0 + 3600 * i, vals[i])));
    REQUIRE(*s.insert(node_check("next", "n1", d0 + day + 5, 7)));
    const std::int64_t now = d0 + 200 * day;
    REQUIRE(*s.insert(node_check("recent", "n1", now - 10, 99)));

    auto folded = s.fold(now, 90);
    REQUIRE(folded);
    CHECK(folded->figures == 6);
    CHECK(folded->daily == 2);
    auto again = s.fold(now, 90);
    REQUIRE(again);
    CHECK(again->figures == 0);

    auto figs = s.figures(0, now, {"n1"});
    REQUIRE(figs);
    REQUIRE(figs->size() == 3);
    CHECK((*figs)[0].daily);
    CHECK((*figs)[0].time == d0);
    CHECK((*figs)[0].value == 30);
    CHECK((*figs)[0].count == 5);
    CHECK((*figs)[0].check_id.empty());
    CHECK((*figs)[0].source == Source::node_check);
    CHECK((*figs)[1].value == 7);
    CHECK((*figs)[1].count == 1);
    CHECK_FALSE((*figs)[2].daily);
    CHECK((*figs)[2].check_id == "recent");

    // The folded checks' findings are gone, their ids stay: found again, they are still no-ops.
    auto fs_ = s.findings(0, now, {});
    REQUIRE(fs_);
    CHECK(fs_->size() == 1);
    auto re = s.insert(node_check("old2", "n1", d0 + 7200, 1e12));
    REQUIRE(re);
    CHECK_FALSE(*re);
    // A range inside the folded day still returns that day's aggregate.
    auto mid = s.figures(d0 + 7200, d0 + 7201, {});
    REQUIRE(mid);
    REQUIRE(mid->size() == 1);
    CHECK((*mid)[0].daily);
    CHECK_FALSE(s.fold(now, 0));
}

TEST_CASE("fleet store: each fold drops the nodes of the checks that passed the cut since the last one, and only those") {
    TempDir d;
    auto s = open_rw(d);
    const std::int64_t day = 86400, d0 = 100 * day;
    auto with_node = [&](std::int64_t now) {
        auto cs = s.checks(0, now + day, {"n1"});
        REQUIRE(cs);
        std::vector<std::string> ids;
        for (const auto& c : *cs) ids.push_back(c.id);
        return ids;
    };
    REQUIRE(*s.insert(node_check("a", "n1", d0, 1)));
    REQUIRE(*s.insert(node_check("b", "n1", d0 + 30 * day, 2)));
    // Fold 1: a is past the 90-day window, b is not.
    std::int64_t now = d0 + 100 * day;
    REQUIRE(s.fold(now, 90));
    CHECK(with_node(now) == std::vector<std::string>{"b"});
    // c, taken after fold 1 (at or after its cut, as the ingest takes them).
    REQUIRE(*s.insert(node_check("c", "n1", now - 10 * day, 3)));
    // Fold 2, 100 days on: b and c passed the cut since fold 1.
    now += 100 * day;
    REQUIRE(s.fold(now, 90));
    CHECK(with_node(now).empty());
    // A larger window (a smaller cut) starts from there: d, as old as that window allows, is
    // kept until it passes the cut again.
    REQUIRE(*s.insert(node_check("d", "n1", now - 150 * day, 4)));
    REQUIRE(s.fold(now, 200));
    CHECK(with_node(now) == std::vector<std::string>{"d"});
    REQUIRE(s.fold(now, 90));
    CHECK(with_node(now).empty());
}

TEST_CASE("fleet store: read-only never creates, and a foreign file is refused with one line") {
    TempDir d;
    auto r = Store::open(d.db(), OpenMode::read_only);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), Catch::Matchers::ContainsSubstring("gangway fleet ingest"));
    CHECK_FALSE(fs::exists(d.db()));
    {
        auto s = open_rw(d);
        struct stat st {};
        REQUIRE(::stat(d.db().c_str(), &st) == 0);
        CHECK((st.st_mode & 0007) == 0);
    }
    const std::string junk = (d.path / "junk.db").string();
    {
        std::FILE* f = std::fopen(junk.c_str(), "w");
        std::fputs("not a database at all, just text that is long enough to be a header......", f);
        std::fclose(f);
    }
    auto j = Store::open(junk);
    REQUIRE_FALSE(j);
    CHECK(j.error().find('\n') == std::string::npos);
}
