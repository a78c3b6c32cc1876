// The node check's inputs from the site and from SLURM: node-check.conf
// (lib/health/site_conf) and the GPUs slurm.conf and gres.conf give a node
// (lib/health/gres).
#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/health/gres.hpp"
#include "../../lib/health/site_conf.hpp"

using namespace gangway;
using namespace gangway::health;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("node-check.conf: keys, comments and defaults") {
    const auto c = parse_site_conf(
        "# an 8-GPU H100 node\n"
        "gpus=8\n"
        "  gpu_model = H100   # the driver's name contains it\n"
        "nics=8\nports=8\nport_rate=400\n"
        "nic_exclude=mlx5_bond_0\n"
        "link_downed_max=1\n"
        "pcie_speed=no\n"
        "xids=48,79\n"
        "resume_after=3\n"
        "state_file=/var/lib/gangway/x.state\n"
        "h2d_gbps=48\nrdma_ratio=0.8\n"
        "\n",
        "node-check.conf");
    CHECK(c.gpus == 8u);
    CHECK(c.gpu_model == "H100");
    CHECK(c.nics == 8u);
    CHECK(c.ports == 8u);
    CHECK(c.port_rate_gbps == 400.0);
    CHECK(c.nic_exclude == std::vector<std::string>{"mlx5_bond_0"});
    CHECK(c.link_downed_max == 1);
    CHECK(c.symbol_error_max == 10);  // the default stays
    CHECK_FALSE(c.pcie_speed);
    CHECK(c.xids == std::vector<unsigned>{48, 79});
    CHECK(c.resume_after == 3);
    CHECK(c.state_file == "/var/lib/gangway/x.state");
    CHECK(c.thresholds.at("GANGWAY_H2D_GBPS") == "48");
    CHECK(c.thresholds.at("GANGWAY_RDMA_RATIO") == "0.8");

    const auto empty = parse_site_conf("", "f");
    CHECK_FALSE(empty.gpus);
    CHECK(empty.xids == kDefaultXids);
    CHECK(empty.resume_after == 2);
    CHECK(parse_site_conf("xids=none\n", "f").xids.empty());
}

TEST_CASE("node-check.conf: one line per bad line, naming the file, the line and what is wanted") {
    try {
        parse_site_conf("gpus=eight\nfrobnicate=1\ngpus=8\nport_rate=0\nno equals here\nresume_after=0\nstate_file=relative\n"
                        "nccl_ratio=1.5\ngpu_model=H100;rm\nnic_include=mlx5_0,,mlx5_1\nnics=1\nnics=2\n",
                        "/etc/gangway/node-check.conf");
        FAIL("no error");
    } catch (const Error& e) {
        const std::string m = e.what();
        CHECK_THAT(m, ContainsSubstring("/etc/gangway/node-check.conf:1: gpus=eight is not a count from 0 to 1024"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:2: unknown key \"frobnicate\"; the keys are gpus, gpu_model,"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:4: port_rate=0 is not a rate in Gb/s from 1 to 100000"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:5: \"no equals here\" is not key=value"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:6: resume_after=0: a node needs at least 1 healthy run"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:7: state_file=relative is not an absolute path"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:8: nccl_ratio=1.5 is not a number from 0 to 1"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:9: gpu_model=H100;rm is not a GPU model"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:10: nic_include=mlx5_0,,mlx5_1 is not a comma-separated list"));
        CHECK_THAT(m, ContainsSubstring("node-check.conf:12: nics is given twice: keep one"));
        // gpus=8 on line 3 follows a bad gpus= line: the key was seen, so it is a repeat.
        CHECK_THAT(m, ContainsSubstring("node-check.conf:3: gpus is given twice"));
        CHECK(std::count(m.begin(), m.end(), '\n') == 10);  // 11 lines: one per bad line, nothing else
    }
}

TEST_CASE("node-check.conf: at most 20 bad lines listed, each quoting an excerpt") {
    std::string conf = "gpu_model=" + std::string(5000, 'H') + "\n";
    for (int i = 0; i < 30; ++i) conf += "zz" + std::to_string(i) + "=1\n";
    try {
        parse_site_conf(conf, "f");
        FAIL("no error");
    } catch (const Error& e) {
        const std::string m = e.what();
        CHECK_THAT(m, ContainsSubstring("f:1: gpu_model=HHHH"));
        CHECK_THAT(m, ContainsSubstring("(5000 characters) is not a GPU model"));
        CHECK_THAT(m, ContainsSubstring("f: 11 more bad line(s); fix these first"));
        CHECK(std::count(m.begin(), m.end(), '\n') == 20);
        CHECK(m.size() < 21 * 512);  // an unknown key's line lists the keys
    }
}

TEST_CASE("slurm.conf: the node's Gres= gpus") {
    const std::string conf =
        "# cluster\n"
        "NodeName=DEFAULT CPUs=64 Gres=gpu:h100:8(S:0-1)\n"
        "NodeName=gpu[01-04] RealMemory=1000\n"
        "NodeName=gpu[05-06] Gres=gpu:a100:4,gpu:h100:4,shard:32\n"
        "nodename=cpu01 CPUs=8\n"
        "NodeName=odd01 Gres=gpu:2\n"
        "NodeName=odd02 Gres=gpu\n"
        "NodeName=bad01 Gres=gpu:x:y:z\n"
        "PartitionName=all Nodes=ALL\n";
    auto g = gres_from_slurm_conf(conf, "gpu03");
    CHECK(g.count == 8u);
    CHECK(g.type == "h100");
    CHECK(g.source == "slurm.conf Gres=");
    g = gres_from_slurm_conf(conf, "gpu05");
    CHECK(g.count == 8u);
    CHECK(g.type.empty());  // two types: no one model to expect
    CHECK(gres_from_slurm_conf(conf, "odd01").count == 2u);
    CHECK(gres_from_slurm_conf(conf, "odd01").type.empty());
    CHECK(gres_from_slurm_conf(conf, "odd02").count == 1u);
    CHECK(gres_from_slurm_conf(conf, "cpu01").count == 8u);  // NodeName=DEFAULT's Gres applies, as in SLURM
    CHECK_FALSE(gres_from_slurm_conf(conf, "bad01").count);  // slurmctld would refuse it
    CHECK_FALSE(gres_from_slurm_conf(conf, "elsewhere").count);
    CHECK_FALSE(gres_from_slurm_conf("NodeName=n[1-2 Gres=gpu:1\n", "n1").count);
}

TEST_CASE("slurm.conf and gres.conf: bounded work, whatever the file") {
    // 200 lines of 65,536 names each: past 2^20 names nothing more is expanded.
    std::string huge;
    for (int i = 0; i < 200; ++i) huge += "NodeName=x" + std::to_string(i) + "-[1-65536] Gres=gpu:1\n";
    CHECK_FALSE(gres_from_slurm_conf(huge + "NodeName=node08 Gres=gpu:2\n", "node08").count);
    CHECK(gres_from_slurm_conf("NodeName=node08 Gres=gpu:2\n" + huge, "node08").count == 2u);
    std::string files;
    for (int i = 0; i < 200; ++i) files += "Name=gpu File=/dev/x" + std::to_string(i) + "-[1-65536]\n";
    CHECK(gres_from_gres_conf(files, "n").count.value_or(0) <= (1u << 20));
}

TEST_CASE("gres.conf: the node's Name=gpu lines") {
    const std::string conf =
        "AutoDetect=nvml\n"
        "NodeName=gpu[01-02] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n"
        "NodeName=gpu03 Name=gpu Type=h100 File=/dev/nvidia0\n"
        "NodeName=gpu03 Name=gpu Type=h100 File=/dev/nvidia1 Cores=0-7\n"
        "NodeName=gpu04 Name=gpu Count=4\n"
        "Name=mps Count=100\n";
    auto g = gres_from_gres_conf(conf, "gpu02");
    CHECK(g.count == 8u);
    CHECK(g.type == "h100");
    CHECK(g.source == "gres.conf");
    CHECK(gres_from_gres_conf(conf, "gpu03").count == 2u);
    CHECK(gres_from_gres_conf(conf, "gpu04").count == 4u);
    CHECK_FALSE(gres_from_gres_conf(conf, "cpu01").count);
    // A line without NodeName= is every node's.
    CHECK(gres_from_gres_conf("Name=gpu File=/dev/nvidia[0-3]\n", "any").count == 4u);
}

TEST_CASE("a GPU model against the driver's name") {
    CHECK(model_matches("NVIDIA H100 80GB HBM3", "H100"));
    CHECK(model_matches("NVIDIA H100 80GB HBM3", "h100_80gb_hbm3"));
    CHECK(model_matches("NVIDIA A100-SXM4-80GB", "a100-sxm4"));
    CHECK_FALSE(model_matches("NVIDIA A100-SXM4-80GB", "H100"));
    CHECK_FALSE(model_matches("NVIDIA H100", ""));
}
