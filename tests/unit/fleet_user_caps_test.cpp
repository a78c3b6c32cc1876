// What one user's reports may add to the fleet store, over all its ingests
// (not one): made-up nodes and devices become series that `fleet metrics`
// shows as the site's. A user adds at most Store::insert's allowance of new
// series over the keep window; root's reports have none. And the site's
// node names, as SLURM lists them, that the ingest checks users' reports
// against.
#include "catch_compat.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "../../lib/env/slurm_nodes.hpp"
#include "../../lib/fleet/site_nodes.hpp"
#include "../../lib/sys/fleet/site_nodes.hpp"
#include "../../lib/sys/fleet/sqlite.hpp"
#include "../../lib/sys/fleet/store.hpp"
#include "temp_dir.hpp"

using namespace gangway::fleet;
using gangway::sys::fleet::Inserted;
using gangway::sys::fleet::SeriesAllowance;
using gangway::sys::fleet::Store;
using gangway::test::TempDir;

namespace {

constexpr std::int64_t kNow = 1767225600 + 40 * 86400;  // 2026-02-10
constexpr std::uint64_t kCap = 65'536;                   // UserCaps::store_series's default

// A job check of 2,048 nodes that do not exist, as the review's were: each
// node a GPU (two copies) and a port, named apart by `k`.
CheckRecord made_up(int k, std::uint32_t uid, std::int64_t time) {
    CheckRecord r;
    r.check = CheckRow{"u" + std::to_string(uid) + "-fake" + std::to_string(k), Source::job_check, uid, time, "1", "ok", {}};
    for (int i = 0; i < 2048; ++i) {
        const std::string node = "fake" + std::to_string(k) + "n" + std::to_string(i);
        r.check.nodes.push_back(node);
        for (const Metric m : {Metric::gpu_h2d, Metric::gpu_d2h}) {
            Figure f;
            f.node = node, f.device = "0000:17:00.0", f.peer_class = "NVIDIA H100", f.metric = m, f.value = 25e9;
            r.figures.push_back(f);
        }
        Figure p;
        p.node = node, p.device = "mlx5_0/1", p.peer_class = "400", p.metric = Metric::port_rate, p.value = 50e9;
        r.figures.push_back(p);
    }
    return r;
}

std::int64_t series_rows(Store& s) {
    auto names = s.series_names();
    REQUIRE(names);
    std::int64_t n = 0;
    for (const auto& x : *names) n += x.known ? 1 : 0;
    return n;
}

SeriesAllowance allowance(std::int64_t now, int keep_days = 90) {
    return SeriesAllowance{kCap, now - std::int64_t(keep_days) * 86400, now};
}

}  // namespace

TEST_CASE("fleet user caps: one user's 16 reports of 2,048 made-up nodes add no more than the cap", "[fleet][user-caps]") {
    TempDir d;
    auto s = Store::open(d.db());
    REQUIRE(s);
    std::size_t stored = 0, refused = 0;
    for (int k = 0; k < 16; ++k) {
        auto r = s->insert(made_up(k, 1001, kNow - 3600 + k), allowance(kNow));
        REQUIRE(r);
        if (r->what == Inserted::stored) ++stored;
        if (r->what == Inserted::over_allowance) ++refused;
    }
    // 6,144 series a report: 10 fit in 65,536, the 11th would make 67,584.
    CHECK(stored == 10);
    CHECK(refused == 6);
    auto mine = s->user_series(1001, kNow - 90 * 86400);
    REQUIRE(mine);
    CHECK(*mine == 61'440);
    CHECK(*mine <= kCap);
    // What was refused left nothing: no series, no check.
    CHECK(series_rows(*s) == 61'440);
    auto checks = s->checks(0, INT64_MAX, {});
    REQUIRE(checks);
    CHECK(checks->size() == 10);
    // A report on series already there adds none: the same nodes again are stored.
    auto again = made_up(3, 1001, kNow - 60);
    again.check.id = "u1001-again";
    auto r = s->insert(again, allowance(kNow));
    REQUIRE(r);
    CHECK(r->what == Inserted::stored);
    CHECK(r->new_series == 0);
    // Another user has an allowance of its own.
    auto other = s->insert(made_up(20, 1002, kNow - 60), allowance(kNow));
    REQUIRE(other);
    CHECK(other->what == Inserted::stored);
}

TEST_CASE("fleet user caps: root's reports are the fleet's own and are not capped", "[fleet][user-caps]") {
    TempDir d;
    auto s = Store::open(d.db());
    REQUIRE(s);
    for (int k = 0; k < 12; ++k) {
        auto r = s->insert(made_up(k, 0, kNow - 3600 + k), allowance(kNow));
        REQUIRE(r);
        CHECK(r->what == Inserted::stored);
    }
    CHECK(series_rows(*s) == 12 * 6144);
    auto root = s->user_series(0, 0);
    REQUIRE(root);
    CHECK(*root == 0);
    // Series root named first cost a user nothing.
    auto r = s->insert(made_up(5, 1001, kNow - 60), allowance(kNow));
    REQUIRE(r);
    CHECK(r->what == Inserted::stored);
    CHECK(r->new_series == 0);
}

TEST_CASE("fleet user caps: what a user added before the keep window counts no more", "[fleet][user-caps]") {
    TempDir d;
    auto s = Store::open(d.db());
    REQUIRE(s);
    const std::int64_t then = kNow - 20 * 86400;
    for (int k = 0; k < 10; ++k) REQUIRE(s->insert(made_up(k, 1001, then - 3600 + k), allowance(then))->what == Inserted::stored);
    // 20 days on, with a window of 30: still counted.
    auto over = s->insert(made_up(10, 1001, kNow - 60), allowance(kNow, 30));
    REQUIRE(over);
    CHECK(over->what == Inserted::over_allowance);
    CHECK(over->user_before == 61'440);
    // With a window of 10 days, the fold drops what was added 20 days ago.
    REQUIRE(s->fold(kNow, 10));
    auto before = s->user_series(1001, 0);
    REQUIRE(before);
    CHECK(*before == 0);
    auto r = s->insert(made_up(10, 1001, kNow - 60), allowance(kNow, 10));
    REQUIRE(r);
    CHECK(r->what == Inserted::stored);
    CHECK(r->new_series == 6144);
}

TEST_CASE("slurm nodes: scontrol -o show node's NodeName and slurm.conf's NodeName lines", "[fleet][site-nodes]") {
    const std::string show =
        "NodeName=gpu002 Arch=x86_64 CoresPerSocket=32 State=IDLE Reason=NodeName=evil [root@2026-01-01T00:00:00]\n"
        "NodeName=gpu001 Arch=x86_64 State=IDLE+CLOUD+POWERED_DOWN\n"
        "   NodeName=indented\n"
        "NodeName=gpu001 Arch=x86_64\n";
    CHECK(gangway::node_names_from_scontrol(show) == std::vector<std::string>{"gpu001", "gpu002"});
    const std::string conf =
        "ClusterName=c\n"
        "NodeName=DEFAULT CPUs=64 Gres=gpu:8\n"
        "NodeName=gpu[001-003] CPUs=64 # the racks\n"
        "  nodename=login1,cpu[1-2]\tCPUs=8\n"
        "#NodeName=commented\n"
        "NodeName=bad[3-1] CPUs=1\n"
        "PartitionName=all Nodes=ALL\n";
    CHECK(gangway::node_names_from_slurm_conf(conf) ==
          std::vector<std::string>{"cpu1", "cpu2", "gpu001", "gpu002", "gpu003", "login1"});
}

TEST_CASE("site nodes: the names of a report the site does not have, its peers' and findings' too", "[fleet][site-nodes]") {
    CheckRecord r;
    r.check.nodes = {"n1", "n2"};
    Figure a;
    a.node = "n1", a.peer = "n9", a.metric = Metric::link_bandwidth;
    Figure b;
    b.node = "n2", b.metric = Metric::tcp_send;
    r.figures = {a, b, a};
    r.findings.push_back(FindingRow{"", "n8", "x"});
    r.findings.push_back(FindingRow{"", "", "no node"});
    CHECK(names_not_in(r, {"n1", "n2", "n3"}) == std::vector<std::string>{"n8", "n9"});
    CHECK(names_not_in(r, {"n1", "n2", "n8", "n9"}).empty());
}

TEST_CASE("site nodes: scontrol's list first, then slurm.conf's, else none and why", "[fleet][site-nodes]") {
    using namespace gangway::sys::fleet;
    TempDir t;
    const auto sc = t.path / "scontrol";
    std::ofstream(sc) << "#!/bin/sh\n[ \"$*\" = '-o show node' ] || exit 3\necho 'NodeName=n2 State=IDLE'\necho 'NodeName=n1 State=MIXED'\n";
    ::chmod(sc.c_str(), 0755);
    const auto conf = t.path / "slurm.conf";
    std::ofstream(conf) << "NodeName=c[1-2] CPUs=4\n";
    ::setenv("GANGWAY_SCONTROL", sc.c_str(), 1);
    SiteNodes a = read_site_nodes(SiteNodesOptions{NodesFrom::automatic, conf.string(), 5});
    CHECK(a.known);
    CHECK(a.names == std::vector<std::string>{"n1", "n2"});
    CHECK(a.source == "scontrol -o show node");
    ::setenv("GANGWAY_SCONTROL", "/bin/false", 1);
    SiteNodes b = read_site_nodes(SiteNodesOptions{NodesFrom::automatic, conf.string(), 5});
    CHECK(b.known);
    CHECK(b.names == std::vector<std::string>{"c1", "c2"});
    CHECK(b.source == conf.string());
    SiteNodes c = read_site_nodes(SiteNodesOptions{NodesFrom::automatic, (t.path / "none.conf").string(), 5});
    CHECK_FALSE(c.known);
    CHECK_THAT(c.why_not, Catch::Matchers::ContainsSubstring("scontrol -o show node failed") &&
                              Catch::Matchers::ContainsSubstring("none.conf: cannot read it"));
    SiteNodes d = read_site_nodes(SiteNodesOptions{NodesFrom::none, conf.string(), 5});
    CHECK_FALSE(d.known);
    CHECK(d.why_not.empty());
    ::unsetenv("GANGWAY_SCONTROL");
}
