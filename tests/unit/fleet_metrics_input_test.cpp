// What `gangway fleet metrics` reads from the store: the ingest's counts
// (checks by source, files rejected by every ingest, the last ingest's
// time) and the latest figures, through a read-only store.
#include "catch_compat.hpp"

#include <unistd.h>

#include <filesystem>

#include "temp_dir.hpp"
#include "../../lib/sys/fleet/http_serve.hpp"
#include "../../lib/sys/fleet/metrics_input.hpp"
#include "../../lib/sys/fleet/store.hpp"

using namespace gangway::fleet;
using gangway::sys::fleet::OpenMode;
using gangway::sys::fleet::Store;
namespace fs = std::filesystem;

using gangway::test::TempDir;

namespace {

CheckRecord check(const std::string& id, Source src, std::int64_t time, double send) {
    CheckRecord r;
    r.check = CheckRow{id, src, src == Source::node_check ? 0u : 1001u, time, "", "ok", {"n1"}};
    Figure f;
    f.check_id = id;
    f.time = time;
    f.source = src;
    f.node = "n1";
    f.metric = Metric::tcp_send;
    f.value = send;
    r.figures.push_back(f);
    return r;
}

}  // namespace

TEST_CASE("fleet metrics input: the ingest's counts and the latest figures from the store") {
    TempDir d;
    const std::int64_t now = 1800000000;
    {
        auto s = Store::open(d.db());
        REQUIRE(s);
        auto none = s->ingest_counts();
        REQUIRE(none);
        CHECK(none->node_checks == 0);
        CHECK(none->last_ingest == 0);
        REQUIRE(*s->insert(check("a", Source::node_check, now - 7200, 1e9)));
        REQUIRE(*s->insert(check("b", Source::job_check, now - 3600, 2e9)));
        REQUIRE(*s->insert(check("c", Source::job_check, now - 60 * 86400, 3e9)));  // outside the 30 days
        REQUIRE(s->record_ingest(now - 100, 2));
        REQUIRE(s->record_ingest(now - 200, 3));  // an older ingest ending later never moves the time back
    }
    auto ro = Store::open(d.db(), OpenMode::read_only);
    REQUIRE(ro);
    auto c = ro->ingest_counts();
    REQUIRE(c);
    CHECK(c->node_checks == 1);
    CHECK(c->job_checks == 2);
    CHECK(c->files_rejected == 5);
    CHECK(c->last_ingest == now - 100);

    auto in = gangway::sys::fleet::read_metrics_input(d.db(), now);
    REQUIRE(in);
    // Only the latest figure of the series (issue 34: the readers keep a
    // figure per series, not the window's figures); schema 1's read gave both.
    CHECK(in->figures.size() == 1);
    const auto text = render_metrics(*in, Exposition::openmetrics);
    CHECK_THAT(text, Catch::Matchers::ContainsSubstring("gangway_node_tcp_send_bytes_per_second{node=\"n1\"} 2000000000\n"));
    CHECK_THAT(text, Catch::Matchers::ContainsSubstring("gangway_checks_total{source=\"job_check\"} 2\n"));
    CHECK_THAT(text, Catch::Matchers::ContainsSubstring("gangway_rejected_files_total 5\n"));

    auto missing = gangway::sys::fleet::read_metrics_input((d.path / "none.db").string(), now);
    REQUIRE(!missing);
    CHECK_THAT(missing.error(), Catch::Matchers::ContainsSubstring("none.db"));
}

TEST_CASE("fleet serve: --listen takes a numeric address and a port, nothing else") {
    using gangway::sys::fleet::parse_listen_address;
    auto a = parse_listen_address("127.0.0.1:9464");
    REQUIRE(a);
    CHECK(a->host == "127.0.0.1");
    CHECK(a->port == 9464);
    CHECK(!a->ipv6);
    auto b = parse_listen_address("[::1]:0");
    REQUIRE(b);
    CHECK(b->host == "::1");
    CHECK(b->port == 0);
    CHECK(b->ipv6);
    for (const char* bad : {"", "127.0.0.1", ":9464", "localhost:9464", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:94x",
                            "[::1]9464", "[::1:9464", "::1:9464", "[127.0.0.1]:9464", "0.0.0.0:9464\n"}) {
        auto r = parse_listen_address(bad);
        CHECK(!r);
        if (!r) CHECK(r.error().find('\n') == std::string::npos);
    }
}
