// slurm.conf with its Include lines followed (lib/conf/slurm_conf_walk), on
// files in memory: where SLURM looks for an included file, %c, the order of
// the lines, and the bounds on what a hostile or broken tree can cost.
#include "catch_compat.hpp"

#include "../../lib/conf/plugstack_text.hpp"
#include "../../lib/conf/slurm_conf_walk.hpp"
#include "../../lib/health/gres.hpp"
#include "memory_files.hpp"

using namespace gangway;
using test::MemoryFiles;

TEST_CASE("slurm.conf Include lines: the keyword in any case, the name as written") {
    CHECK(slurm_conf_include("Include nodes.conf") == "nodes.conf");
    CHECK(slurm_conf_include("  include\t/etc/slurm/nodes.conf   # the nodes") == "/etc/slurm/nodes.conf");
    CHECK(slurm_conf_include("INCLUDE my nodes.conf") == "my nodes.conf");
    CHECK(slurm_conf_include("Include") == "");
    CHECK(slurm_conf_include("IncludeX nodes.conf") == "");
    CHECK(slurm_conf_include("# Include nodes.conf") == "");
    CHECK(slurm_conf_include("NodeName=n1 Include=x") == "");
    CHECK(slurm_conf_value("ClusterName = blue # the cluster\nclustername=red\n", "ClusterName") == "blue");
    CHECK(slurm_conf_value("PlugStackConfig=/etc/p.conf\n", "ClusterName") == "");
}

TEST_CASE("a node's Gres= in an included file is found, in SLURM's order, relative names next to slurm.conf") {
    MemoryFiles fs;
    fs.files["/etc/slurm/slurm.conf"] =
        "ClusterName=blue\n"
        "NodeName=DEFAULT Gres=gpu:h100:8\n"
        "Include nodes/%c.conf\n"
        "PartitionName=all Nodes=ALL\n";
    // A relative name in an included file is still looked for next to slurm.conf.
    fs.files["/etc/slurm/nodes/blue.conf"] = "NodeName=gpu[001-064] CPUs=96\nInclude more.conf\n";
    fs.files["/etc/slurm/more.conf"] = "NodeName=big01 Gres=gpu:a100:4\n";
    const SlurmConf c = read_slurm_conf("/etc/slurm/slurm.conf", fs);
    CHECK(c.remarks.empty());
    CHECK(c.read == std::vector<std::string>{"/etc/slurm/slurm.conf", "/etc/slurm/nodes/blue.conf", "/etc/slurm/more.conf"});
    CHECK(fs.reads == 3);  // each file once, slurm.conf's ClusterName included
    CHECK(c.text ==
          "ClusterName=blue\nNodeName=DEFAULT Gres=gpu:h100:8\nNodeName=gpu[001-064] CPUs=96\n"
          "NodeName=big01 Gres=gpu:a100:4\nPartitionName=all Nodes=ALL\n");
    // The DEFAULT line before the include applies to its nodes, as in slurmctld.
    const auto g = health::gres_from_slurm_conf(c.text, "gpu017");
    REQUIRE(g.count);
    CHECK(*g.count == 8);
    CHECK(g.type == "h100");
    CHECK(*health::gres_from_slurm_conf(c.text, "big01").count == 4);
    // Without following the include, the node had no count to be checked against.
    CHECK_FALSE(health::gres_from_slurm_conf(fs.files["/etc/slurm/slurm.conf"], "gpu017").count.has_value());
}

TEST_CASE("slurm.conf includes: a missing file, a cycle and a file included twice are remarks, never a stop") {
    MemoryFiles fs;
    fs.files["/s/slurm.conf"] = "Include /s/a.conf\nInclude gone.conf\nInclude /s/a.conf\nNodeName=n1 Gres=gpu:2\n";
    fs.files["/s/a.conf"] = "Include /s/b.conf\nNodeName=n2 Gres=gpu:1\n";
    fs.files["/s/b.conf"] = "Include /s/a.conf\nNodeName=n3\n";
    const SlurmConf c = read_slurm_conf("/s/slurm.conf", fs);
    CHECK(c.read.size() == 3);
    CHECK(c.text == "NodeName=n3\nNodeName=n2 Gres=gpu:1\nNodeName=n1 Gres=gpu:2\n");
    REQUIRE(c.remarks.size() == 3);
    CHECK(c.remarks[0] == "/s/b.conf:1: Include /s/a.conf: that file is being read (a cycle): not followed");
    CHECK(c.remarks[1] == "/s/slurm.conf:2: Include /s/gone.conf: no such file, or it cannot be read");
    CHECK(c.remarks[2] == "/s/slurm.conf:3: Include /s/a.conf: read already: not read again");
    // slurm.conf itself missing: nothing read, nothing said (the caller knows its path).
    MemoryFiles none;
    const SlurmConf m = read_slurm_conf("/etc/slurm/slurm.conf", none);
    CHECK(m.read.empty());
    CHECK(m.text.empty());
    CHECK(m.remarks.empty());
}

TEST_CASE("slurm.conf includes stay within their budget: files, bytes, Include lines and remarks") {
    // 100,000 Include lines of missing files: at most `includes` stats, 16 remarks and a count.
    MemoryFiles fs;
    std::string many;
    for (int i = 0; i < 100000; ++i) many += "Include /x/" + std::to_string(i) + "\n";
    fs.files["/s/slurm.conf"] = many;
    const SlurmConf c = read_slurm_conf("/s/slurm.conf", fs);
    CHECK(fs.identifies <= 1 + SlurmConfBudget{}.includes);
    REQUIRE(c.remarks.size() == 17);
    CHECK(c.remarks.back() == "and " + std::to_string(100000 - 16) +
                                  " more Include lines not followed, or with a remark like those above");
    // A chain of 100 files, each including the next: the budget's 64 files are read, then a remark.
    MemoryFiles chain;
    for (int i = 0; i < 100; ++i)
        chain.files["/c/" + std::to_string(i)] = "Include /c/" + std::to_string(i + 1) + "\nNodeName=n" + std::to_string(i) + "\n";
    const SlurmConf d = read_slurm_conf("/c/0", chain);
    CHECK(d.read.size() == 64);
    REQUIRE_FALSE(d.remarks.empty());
    CHECK(d.remarks[0] == "/c/63:1: Include /c/64: past 64 files: not read");
    // Each %c adds the ClusterName: 2,000 of them and a name of 5,000 bytes would make a path of
    // 10 MB (the square of the text); past PATH_MAX the Include is refused, quoted in 64 bytes.
    MemoryFiles sq;
    std::string name;
    for (int i = 0; i < 2000; ++i) name += "%c";
    sq.files["/q/slurm.conf"] = "ClusterName=" + std::string(5000, 'x') + "\nInclude " + name + "\n";
    const SlurmConf q = read_slurm_conf("/q/slurm.conf", sq);
    REQUIRE(q.remarks.size() == 1);
    CHECK(q.remarks[0].rfind("/q/slurm.conf:2: Include %c%c", 0) == 0);
    CHECK(q.remarks[0].size() < 200);
    CHECK(sq.identifies == 1);  // slurm.conf only, once: the long name is never looked up
    // Bytes: a budget of 1 KiB over files of 600 bytes each.
    MemoryFiles big;
    big.files["/b/slurm.conf"] = "Include /b/1\nInclude /b/2\n";
    big.files["/b/1"] = std::string(599, '#') + "\n";
    big.files["/b/2"] = std::string(599, '#') + "\n";
    SlurmConfBudget small;
    small.bytes = 1024;
    const SlurmConf e = read_slurm_conf("/b/slurm.conf", big, small);
    CHECK(e.text.size() <= 1024);
    REQUIRE(e.remarks.size() == 1);
    CHECK(e.remarks[0] == "/b/2: past 1024 bytes with what it includes: the rest not read");
}
