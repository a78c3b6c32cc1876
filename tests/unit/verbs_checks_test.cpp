#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/rdma_checks.hpp"
#include "../../lib/sys/devices/ib_ports.hpp"
#include "../../lib/sys/node/process_env.hpp"
#include "../../lib/sys/stages/verbs_stage.hpp"

using namespace gangway;
using namespace gangway::verbs;
using gangway::preflight::StageStatus;

namespace {
std::string fixtures() {
    return sys::env_or("top_srcdir", ".") + "/tests/fixtures/sysfs/";
}
std::string why;
}  // namespace

TEST_CASE("sysfs port states and rates") {
    CHECK(parse_state("4: ACTIVE") == std::pair<int, std::string>{4, "ACTIVE"});
    CHECK(parse_state("5: LinkUp") == std::pair<int, std::string>{5, "LinkUp"});
    CHECK(parse_state("3: Disabled") == std::pair<int, std::string>{3, "Disabled"});
    CHECK(parse_state("ACTIVE").first == -1);
    auto r = parse_rate("200 Gb/sec (4X HDR)");
    CHECK(r.gbps == 200);
    CHECK(r.width == 4);
    CHECK(r.speed == "HDR");
    r = parse_rate("400 Gb/sec (4X NDR)");
    CHECK(r.gbps == 400);
    r = parse_rate("100 Gb/sec (2X HDR)");
    CHECK(r.width == 2);
    r = parse_rate("56 Gb/sec (4X FDR)");
    CHECK(r.gbps == 56);
    r = parse_rate("2.5 Gb/sec (1X SDR)");
    CHECK(r.gbps == 2.5);
    CHECK(r.width == 1);
    CHECK(parse_rate("").gbps == 0);
    CHECK(parse_rate("25 Gb/sec").width == 0);
}

TEST_CASE("reading fixture trees of /sys/class/infiniband") {
    auto hdr = sys::read_ib_ports(fixtures() + "hdr");
    REQUIRE(hdr.size() == 1);
    CHECK(hdr[0].hca == "mlx5_0");
    CHECK(hdr[0].port == 1);
    CHECK(hdr[0].state == 4);
    CHECK(hdr[0].phys_name == "LinkUp");
    CHECK(hdr[0].link_layer == "InfiniBand");
    CHECK(hdr[0].rate_gbps == 200);
    REQUIRE(hdr[0].gids.size() == 1);  // the zero GID 1 is left out
    CHECK(hdr[0].gids[0].type.empty());

    auto roce_ports = sys::read_ib_ports(fixtures() + "roce");
    REQUIRE(roce_ports.size() == 1);
    const auto& p = roce_ports[0];
    CHECK(roce(p));
    CHECK(p.gids.size() == 4);
    CHECK(p.gids[3].type == "RoCE v2");
    CHECK(p.gids[3].ndev == "ens1f0np0");
    CHECK(p.netdev_mtu == 9000);

    CHECK(sys::read_ib_ports(fixtures() + "degraded", {"mlx5_1"}).size() == 1);
    CHECK(sys::read_ib_ports(fixtures() + "nonexistent").empty());
}

TEST_CASE("GID choice: IB uses 0, RoCE the v2 GID with an IPv4 address") {
    auto ib = sys::read_ib_ports(fixtures() + "hdr").at(0);
    CHECK(*choose_gid(ib, std::nullopt, why) == 0);
    auto ro = sys::read_ib_ports(fixtures() + "roce").at(0);
    CHECK(ipv4_mapped(ro.gids[3].gid));
    CHECK_FALSE(ipv4_mapped(ro.gids[1].gid));
    CHECK(*choose_gid(ro, std::nullopt, why) == 3);
    // Without the IPv4 GID, the v2 link-local one.
    auto no4 = ro;
    no4.gids.erase(no4.gids.begin() + 2, no4.gids.end());
    CHECK(*choose_gid(no4, std::nullopt, why) == 1);
    // The site's index when the table has it.
    CHECK(*choose_gid(ro, 1, why) == 1);
    CHECK_FALSE(choose_gid(ro, 7, why));
    CHECK_THAT(why, Catch::Matchers::ContainsSubstring("GID index 7"));
    auto v1 = sys::read_ib_ports(fixtures() + "roce-v1only").at(0);
    CHECK_FALSE(choose_gid(v1, std::nullopt, why));
    CHECK_THAT(why, Catch::Matchers::ContainsSubstring("no RoCE v2 GID on mlx5_3/1"));
}

TEST_CASE("MTUs") {
    CHECK(mtu_bytes(1) == 256);
    CHECK(mtu_bytes(5) == 4096);
    CHECK(mtu_bytes(0) == 0);
    CHECK(mtu_enum(4096) == 5);
    CHECK(mtu_enum(4000) == 4);
    CHECK(mtu_enum(100) == 0);
    CHECK(roce_active_mtu_bytes(9000) == 4096);
    CHECK(roce_active_mtu_bytes(4200) == 4096);
    CHECK(roce_active_mtu_bytes(4191) == 2048);
    CHECK(roce_active_mtu_bytes(1500) == 1024);
}

TEST_CASE("queue-pair attributes: short timeouts, MTU from both ports, GRH for RoCE v2") {
    auto ib = sys::read_ib_ports(fixtures() + "hdr").at(0);
    auto a = choose_qp_attrs(ib, 4096, 2048, 0);
    CHECK(a.path_mtu == 4);  // the smaller side: 2048
    CHECK(a.timeout == 14);
    CHECK(a.retry_cnt == 3);
    CHECK(a.rnr_retry == 3);
    CHECK_FALSE(a.is_global);
    CHECK(retry_budget_ms(a) == Approx(268.4).epsilon(0.01));  // vs ~30 s with NCCL's 20/7
    CHECK(retry_budget_ms(a) < 1000);
    auto ro = sys::read_ib_ports(fixtures() + "roce").at(0);
    a = choose_qp_attrs(ro, 4096, 4096, 3);
    CHECK(a.path_mtu == 5);
    CHECK(a.is_global);
    CHECK(a.sgid_index == 3);
    CHECK(a.hop_limit == 255);
    CHECK(choose_qp_attrs(ro, 0, 0, 3).path_mtu == 3);  // unknown: 1024
}

TEST_CASE("queue-pair details survive the bootstrap") {
    QpInfo q;
    q.lid = 0x1a;
    q.qpn = 0x123456;
    q.psn = 0xabcdef;
    q.rkey = 0xdeadbeef;
    q.addr = 0x7f0012345000ull;
    q.len = 8 << 20;
    q.gid = gid_hex("0000:0000:0000:0000:0000:ffff:0a00:0105");
    q.mtu = 4096;
    CHECK(q.gid == "00000000000000000000ffff0a000105");
    preflight::Kv kv;
    qp_info_to_kv(q, "qp.2.", kv);
    const auto back = qp_info_from_kv(preflight::decode_kv(preflight::encode_kv(kv)), "qp.2.");
    CHECK(back.lid == q.lid);
    CHECK(back.qpn == q.qpn);
    CHECK(back.psn == q.psn);
    CHECK(back.rkey == q.rkey);
    CHECK(back.addr == q.addr);
    CHECK(back.len == q.len);
    CHECK(back.gid == q.gid);
    CHECK(back.mtu == 4096);
    kv["qp.2.qpn"] = "16777216";  // 24 bits
    CHECK_THROWS_AS(qp_info_from_kv(kv, "qp.2."), Error);
    kv["qp.2.qpn"] = "1";
    kv["qp.2.gid"] = "xyz";
    CHECK_THROWS_AS(qp_info_from_kv(kv, "qp.2."), Error);
    CHECK_THROWS_AS(gid_hex("fe80::1"), Error);
}

TEST_CASE("port verdicts") {
    auto hdr = judge_ports(sys::read_ib_ports(fixtures() + "hdr"), std::nullopt, std::nullopt);
    REQUIRE(hdr.size() == 1);
    CHECK(hdr[0].usable);
    CHECK(hdr[0].problems.empty());
    // The site expects NDR: the HDR port is slow.
    hdr = judge_ports(sys::read_ib_ports(fixtures() + "hdr"), 400.0, std::nullopt);
    REQUIRE(hdr[0].problems.size() == 1);
    CHECK_THAT(hdr[0].problems[0], Catch::Matchers::ContainsSubstring("rate 200 Gb/s, expected 400 Gb/s"));

    auto deg = judge_ports(sys::read_ib_ports(fixtures() + "degraded"), std::nullopt, std::nullopt);
    REQUIRE(deg.size() == 2);
    CHECK(deg[0].problems.empty());
    REQUIRE(deg[1].problems.size() == 1);
    CHECK(deg[1].name == "mlx5_1/1");
    CHECK_THAT(deg[1].problems[0], Catch::Matchers::ContainsSubstring("rate 100 Gb/s, expected 200 Gb/s") &&
                                       Catch::Matchers::ContainsSubstring("trained at 2X instead of 4X"));

    auto down = judge_ports(sys::read_ib_ports(fixtures() + "down"), std::nullopt, std::nullopt);
    REQUIRE(down.size() == 1);
    CHECK_FALSE(down[0].usable);
    REQUIRE(down[0].problems.size() == 2);
    CHECK_THAT(down[0].problems[0], Catch::Matchers::ContainsSubstring("DOWN, not ACTIVE"));
    CHECK_THAT(down[0].problems[1], Catch::Matchers::ContainsSubstring("Disabled, not LinkUp"));

    auto ro = judge_ports(sys::read_ib_ports(fixtures() + "roce"), std::nullopt, std::nullopt);
    CHECK(ro.at(0).problems.empty());
    auto v1 = judge_ports(sys::read_ib_ports(fixtures() + "roce-v1only"), std::nullopt, std::nullopt);
    REQUIRE(v1.at(0).problems.size() == 2);
    CHECK_THAT(v1[0].problems[0], Catch::Matchers::ContainsSubstring("no RoCE v2 GID"));
    CHECK_THAT(v1[0].problems[1], Catch::Matchers::ContainsSubstring("netdev MTU 1500 limits RDMA to 1024-byte packets"));

    auto ib = sys::read_ib_ports(fixtures() + "hdr");
    ib[0].active_mtu = 2048;
    CHECK_THAT(judge_ports(ib, std::nullopt, std::nullopt)[0].problems.at(0), Catch::Matchers::ContainsSubstring("active MTU 2048"));
    CHECK(rdma_slow(20e9, 200, 0.9));          // 160 Gb/s < 180
    CHECK_FALSE(rdma_slow(24.4e9, 200, 0.9));  // 195 Gb/s
}

TEST_CASE("the verbs stage on fixture trees") {
    sys::VerbsStageOptions o;
    o.root = fixtures() + "degraded";
    auto r = sys::run_verbs_stage_local(o);
    CHECK(r.result.name == "verbs");
    CHECK(r.result.status == StageStatus::failed);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].what == "mlx5_1/1");
    CHECK_THAT(r.result.detail, Catch::Matchers::StartsWith("2/2 port(s) usable"));
    o.hcas = {"mlx5_0"};
    CHECK(sys::run_verbs_stage_local(o).result.status == StageStatus::ok);
    o.hcas = {"mlx5_9"};
    CHECK(sys::run_verbs_stage_local(o).result.status == StageStatus::skipped);
    o.root = fixtures() + "roce";
    o.hcas = {};
    r = sys::run_verbs_stage_local(o);
    CHECK(r.result.status == StageStatus::ok);
    CHECK_THAT(r.result.detail, Catch::Matchers::ContainsSubstring("mlx5_2/1 RoCE 100 Gb/s ACTIVE gid 3"));
    o.root = fixtures() + "nonexistent";
    r = sys::run_verbs_stage_local(o);
    CHECK(r.result.status == StageStatus::skipped);
    CHECK(r.result.detail == "no RDMA devices");
    o.t.require_verbs = true;
    CHECK(sys::run_verbs_stage_local(o).result.status == StageStatus::failed);
}

TEST_CASE("the RDMA data path refuses politely without devices") {
    Port p;
    p.hca = "mlx5_0";
    // A Result, not an exception (I/O returns a Result): the line says what is missing.
    const auto e = sys::RdmaEndpoint::open(p, 0, 1 << 20);
    REQUIRE_FALSE(e);
    CHECK_THAT(e.error(), Catch::Matchers::ContainsSubstring("libibverbs") || Catch::Matchers::ContainsSubstring("cannot open mlx5_0"));
}
