// The rank order (issue 26): SLURM's topology files parsed (tree, block,
// YAML), the order they give, and its fallbacks.
#include "catch_compat.hpp"

#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/env/config.hpp"
#include "../../lib/env/rank_order.hpp"
#include "../../lib/env/switch_topology.hpp"
#include "../../lib/preflight/card.hpp"
#include "cost_meter.hpp"

using namespace gangway;

namespace {

// Two spines, each with two leaves; names interleaved across the leaves.
const char* kTree =
    "# two pods\n"
    "SwitchName=core Switches=spine[0-1]\n"
    "SwitchName=spine0 Switches=leaf[0-1] LinkSpeed=100\n"
    "SwitchName=spine1 Switches=leaf[2-3]\n"
    "SwitchName=leaf0 Nodes=n[0,4]\n"
    "SwitchName=leaf1 Nodes=n[1,5]\n"
    "switchname=leaf2 nodes=n[2,6]   # keys are case-insensitive\n"
    "SwitchName=leaf3 Nodes=n[3,7]\n";

std::vector<std::string> names(const std::vector<std::string>& nodes, const NodeOrder& o) {
    std::vector<std::string> out;
    for (unsigned i : o.order) out.push_back(nodes[i]);
    return out;
}

std::string refusal(auto&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("topology.conf tree: leaves in depth-first order, each node's leaf") {
    const SwitchTopology t = parse_topology_conf(kTree);
    CHECK(t.kind == TopologyKind::Tree);
    CHECK(t.leaves == std::vector<std::string>{"leaf0", "leaf1", "leaf2", "leaf3"});
    CHECK(t.leaf_parent == std::vector<std::string>{"spine0", "spine0", "spine1", "spine1"});
    CHECK(t.leaf_of.at("n5") == 1);
    CHECK(t.leaf_of.at("n7") == 3);
    CHECK(t.leaf_of.size() == 8);
}

TEST_CASE("topology.conf tree: the walk follows Switches=, not the file's line order") {
    // leaf lines first, and spine1 listed before spine0 under the core.
    const SwitchTopology t = parse_topology_conf(
        "SwitchName=a Nodes=x1\nSwitchName=b Nodes=x2\nSwitchName=c Nodes=x3\n"
        "SwitchName=s0 Switches=a,c\nSwitchName=s1 Switches=b\nSwitchName=top Switches=s1,s0\n");
    CHECK(t.leaves == std::vector<std::string>{"b", "a", "c"});
}

TEST_CASE("topology.conf block") {
    const SwitchTopology t = parse_topology_conf("BlockSizes=2,4\nBlockName=b1 Nodes=n[0-1]\nBlockName=b2 Nodes=n[2-3]\n");
    CHECK(t.kind == TopologyKind::Block);
    CHECK(t.leaves == std::vector<std::string>{"b1", "b2"});
    CHECK(t.leaf_of.at("n3") == 1);
}

TEST_CASE("topology.conf refusals are one line naming the line") {
    const auto bad = [](const char* text) { return refusal([&] { (void)parse_topology_conf(text); }); };
    CHECK(bad("SwitchName=s Nodes=n1 Colour=red\n").find("line 1: unknown key \"Colour\"") != std::string::npos);
    CHECK(bad("SwitchName=s Switches=t\n").find("child switch \"t\" that no line defines") != std::string::npos);
    CHECK(bad("SwitchName=s Nodes=n1\nBlockName=b Nodes=n2\n").find("line 2: both switches") != std::string::npos);
    CHECK(bad("Nodes=n1\n").find("without SwitchName") != std::string::npos);
    CHECK(bad("SwitchName=s Nodes=n[1-\n").find("topology.conf line 1") != std::string::npos);
    CHECK(bad("# nothing\n").find("defines no switch") != std::string::npos);
    CHECK(bad("SwitchName=s Nodes=n1\nSwitchName=s Nodes=n2\n").find("defined twice") != std::string::npos);
    CHECK(bad("SwitchName=s Switches=t\nSwitchName=t\n").find("none with Nodes=") != std::string::npos);
    for (const char* t : {"SwitchName=s Nodes=n1 Colour=red\n", "Nodes=n1\n"}) CHECK(bad(t).find('\n') == std::string::npos);
}

TEST_CASE("topology.conf: a cycle of switches costs no hang and no recursion") {
    const SwitchTopology t = parse_topology_conf("SwitchName=a Switches=b Nodes=n1\nSwitchName=b Switches=a Nodes=n2\n");
    CHECK(t.leaves.size() == 2);
    // A chain 50,000 switches deep: walked with an explicit stack.
    std::string chain;
    for (int i = 0; i < 50000; ++i) chain += "SwitchName=s" + std::to_string(i) + " Switches=s" + std::to_string(i + 1) + "\n";
    chain += "SwitchName=s50000 Nodes=n1\n";
    CHECK(parse_topology_conf(chain).leaves == std::vector<std::string>{"s50000"});
}

TEST_CASE("topology.conf: the file's names are bounded in all") {
    // Each line within expand_hostlist's own bound; together past the file's.
    std::string text;
    for (int i = 0; i < 3; ++i) text += "SwitchName=l" + std::to_string(i) + " Nodes=x" + std::to_string(i) + "-[0-60000]\n";
    CHECK(refusal([&] { (void)parse_topology_conf(text); }).find("more than 131072") != std::string::npos);
}

TEST_CASE("topology.yaml: tree and block, the cluster default chosen") {
    const char* yaml =
        "---\n"
        "- topology: blocks  # not the default\n"
        "  cluster_default: false\n"
        "  block:\n"
        "    block_sizes:\n"
        "      - 2\n"
        "      - 4\n"
        "    blocks:\n"
        "    - block: b1\n"
        "      nodes: n[0-1]\n"
        "- topology: fabric\n"
        "  cluster_default: True\n"
        "  tree:\n"
        "    switches:\n"
        "    - switch: spine\n"
        "      children: leaf[0-1]\n"
        "    - switch: leaf1\n"
        "      nodes: \"n[1,3]\"\n"
        "    - switch: leaf0\n"
        "      nodes: 'n[0,2]'\n"
        "- topology: none\n"
        "  flat: true\n";
    const SwitchTopology t = parse_topology_yaml(yaml);
    CHECK(t.kind == TopologyKind::Tree);
    CHECK(t.leaves == std::vector<std::string>{"leaf0", "leaf1"});
    CHECK(t.leaf_of.at("n3") == 1);
    const SwitchTopology b = parse_topology_yaml(
        "- topology: b\n  block:\n    block_sizes: [2, 4]\n    blocks:\n    - block: b1\n      nodes: n[0-1]\n"
        "    - block: b2\n      nodes: n[2-3]\n");
    CHECK(b.kind == TopologyKind::Block);
    CHECK(b.leaf_of.at("n2") == 1);
}

TEST_CASE("topology.yaml: anything outside its shape is one error") {
    const auto bad = [](const char* text) { return refusal([&] { (void)parse_topology_yaml(text); }); };
    CHECK(bad("- topology: t\n  flat: true\n").find("is flat") != std::string::npos);
    CHECK(bad("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: *alias\n").find("line 5") !=
          std::string::npos);
    CHECK(bad("- topology: t\n  colour: red\n").find("line 2: \"colour\"") != std::string::npos);
    CHECK(bad("tree:\n").find("before the first") != std::string::npos);
    CHECK(bad("").find("no \"- topology") != std::string::npos);
    CHECK(bad("- topology: t\n\ttree:\n").find("tab") != std::string::npos);
    CHECK(bad("- topology: t\n  tree:\n    switches:\n    - switch: s\n      children: x\n").find("no line defines") !=
          std::string::npos);
}

TEST_CASE("the order: grouped by leaf, leaves in walk order, SLURM's order inside a leaf") {
    const SwitchTopology t = parse_topology_conf(kTree);
    const std::vector<std::string> nodes = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    const NodeOrder o = topology_order(t, nodes);
    CHECK(o.by_topology);
    CHECK(o.fallback.empty());
    CHECK(names(nodes, o) == std::vector<std::string>{"n0", "n4", "n1", "n5", "n2", "n6", "n3", "n7"});
    CHECK(ring_crossings_slurm(o) == 8);
    CHECK(ring_crossings(o) == 4);
    // Names that already follow the leaves keep their order and crossings.
    const std::vector<std::string> follow = {"n0", "n4", "n1", "n5"};
    const NodeOrder f = topology_order(t, follow);
    CHECK(names(follow, f) == follow);
    CHECK(ring_crossings(f) == ring_crossings_slurm(f));
}

TEST_CASE("the order: a node missing from the file falls back to SLURM's order, with one line") {
    const SwitchTopology t = parse_topology_conf(kTree);
    const std::vector<std::string> nodes = {"n1", "n0", "spare9", "spare10"};
    const NodeOrder o = topology_order(t, nodes);
    CHECK_FALSE(o.by_topology);
    CHECK(o.order == std::vector<unsigned>{0, 1, 2, 3});
    CHECK(o.fallback.find("node spare9 (and 1 more)") != std::string::npos);
    CHECK(o.fallback.find('\n') == std::string::npos);
}

TEST_CASE("the order applied to a step: NODE_RANK, RANK and the primary follow it") {
    const SwitchTopology t = parse_topology_conf(kTree);
    StepView s;
    s.nodes = {"n0", "n1", "n4", "n5"};  // SLURM's order by name
    s.tasks_per_node = {2, 2, 2, 2};
    s.node_index = 2;  // n4
    s.rank = 4;        // SLURM_PROCID
    s.local_rank = 1;
    s.total_tasks = 8;
    const NodeOrder o = topology_order(t, s.nodes);
    apply_order(s, o);
    CHECK(s.nodes == std::vector<std::string>{"n0", "n4", "n1", "n5"});
    CHECK(s.node_index == 1);
    CHECK(*s.rank == 3);  // n0's two tasks, then LOCAL_RANK 1
    // Every task of the step gets one rank, each rank once.
    std::vector<int> seen(8, 0);
    for (unsigned node = 0; node < 4; ++node)
        for (unsigned local = 0; local < 2; ++local) {
            StepView t2;
            t2.nodes = {"n0", "n1", "n4", "n5"};
            t2.tasks_per_node = {2, 2, 2, 2};
            t2.node_index = node;
            t2.rank = node * 2 + local;
            t2.local_rank = local;
            apply_order(t2, o);
            ++seen.at(*t2.rank);
        }
    CHECK(seen == std::vector<int>(8, 1));
}

TEST_CASE("the order's tag is the same for the same order and differs otherwise") {
    const SwitchTopology t = parse_topology_conf(kTree);
    const std::vector<std::string> nodes = {"n0", "n1", "n4", "n5"};
    const NodeOrder a = topology_order(t, nodes), b = topology_order(t, nodes);
    CHECK(order_tag(nodes, a) == order_tag(nodes, b));
    CHECK(order_tag(nodes, a).rfind("topology:", 0) == 0);
    CHECK(order_tag(nodes, a) != order_tag(nodes, slurm_order(nodes.size())));
}

TEST_CASE("rank_order= and topology_file= site keys, and the user's choice") {
    CHECK(parse_site_args({"rank_order=topology"}).rank_order == RankOrder::Topology);
    CHECK(parse_site_args({}).rank_order == RankOrder::Slurm);
    CHECK(parse_site_args({"topology_file=/etc/slurm/topology.conf"}).topology_file == "/etc/slurm/topology.conf");
    CHECK_THROWS_AS(parse_site_args({"rank_order=fast"}), Error);
    CHECK_THROWS_AS(parse_site_args({"topology_file=topology.conf"}), Error);
    UserChoice u;
    u.rank_order = RankOrder::Slurm;
    CHECK(apply_user(parse_site_args({"rank_order=topology"}), u).rank_order == RankOrder::Slurm);
    CHECK(refusal([] { (void)parse_rank_order("x", "--gangway-rank-order"); }).find("--gangway-rank-order=x") == 0);
}

TEST_CASE("topology files: 10,000 nodes parse within budget", "[budget]") {
    std::string conf = "SwitchName=core Switches=spine[0-9]\n";
    for (int s = 0; s < 10; ++s) {
        conf += "SwitchName=spine" + std::to_string(s) + " Switches=leaf" + std::to_string(s) + "-[0-24]\n";
        for (int l = 0; l < 25; ++l) {
            const int first = (s * 25 + l) * 40;
            conf += "SwitchName=leaf" + std::to_string(s) + "-" + std::to_string(l) + " Nodes=gpu[" +
                    std::to_string(first) + "-" + std::to_string(first + 39) + "]\n";
        }
    }
    const auto c = gangway::test::cost_of([&] { (void)parse_topology_conf(conf); });
    INFO(c.peak_bytes << " bytes, " << c.cpu_seconds << " s");
    CHECK_FALSE(c.refused);
    // 10,000 names: well inside the documented 320 bytes a name + 20 MiB + 12 n.
    CHECK(c.peak_bytes <= 10260u * 320 + (20u << 20) + 12 * conf.size());
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    const SwitchTopology t = parse_topology_conf(conf);
    CHECK(t.leaves.size() == 250);
    CHECK(t.leaf_of.size() == 10000);
}

TEST_CASE("the check's cards leave the rank order to the agreement, not to a finding") {
    // lib/sys/preflight/speaker.cpp puts GANGWAY_NODE_ORDER in the card; a
    // difference makes the tasks keep SLURM's order (decide_check_order), it
    // does not fail the check.
    std::vector<preflight::Card> cards(3);
    for (unsigned i = 0; i < 3; ++i) {
        cards[i].node_rank = i;
        cards[i].node = "n" + std::to_string(i);
        cards[i].versions["rank_order"] = "topology:1111";
    }
    CHECK(preflight::compare_cards(cards).empty());
    cards[2].versions["rank_order"] = "topology:2222";
    CHECK(preflight::compare_cards(cards).empty());
}

TEST_CASE("agreement: every node's tag equal to node 0's keeps the topology ring") {
    const std::vector<std::string> nodes{"n0", "n1", "n2"};
    using T = std::optional<std::string>;
    auto d = decide_check_order(nodes, {T("topology:aa"), T("topology:aa"), T("topology:aa")}, true);
    CHECK(d.topology_ring);
    CHECK_FALSE(d.fall_back);
    CHECK(d.differ.empty());
    CHECK(order_answer(d).empty());
    // A node that did not check in is the join stage's to name, not a disagreement.
    d = decide_check_order(nodes, {T("topology:aa"), std::nullopt, T("topology:aa")}, true);
    CHECK(d.topology_ring);
    CHECK_FALSE(d.fall_back);
    // Every node fell back alike (a node missing from the file): SLURM's order, nothing to say.
    d = decide_check_order(nodes, {T("slurm:bb"), T("slurm:bb"), T("slurm:bb")}, false);
    CHECK_FALSE(d.topology_ring);
    CHECK_FALSE(d.fall_back);
}

TEST_CASE("agreement: a node whose tag differs makes every task keep SLURM's order, named in one line") {
    const std::vector<std::string> nodes{"n0", "n1", "n2", "n3", "n4", "n5", "n6"};
    using T = std::optional<std::string>;
    auto d = decide_check_order(nodes, {T("topology:aa"), T("topology:aa"), T("topology:bb")}, true);
    CHECK_FALSE(d.topology_ring);
    CHECK(d.fall_back);
    CHECK(d.differ == std::vector<std::size_t>{2});
    CHECK(d.why == "the nodes' topology files differ (n2 differs from n0)");
    // A node that fell back to SLURM's order while node 0 did not: it differs too.
    d = decide_check_order(nodes, {T("topology:aa"), T("slurm:cc")}, true);
    CHECK(d.fall_back);
    CHECK(d.why == "the nodes' topology files differ (n1 differs from n0)");
    // Node 0 fell back, the others did not.
    d = decide_check_order(nodes, {T("slurm:cc"), T("topology:aa"), T("topology:aa")}, false);
    CHECK(d.fall_back);
    CHECK(d.differ == std::vector<std::size_t>{1, 2});
    CHECK(d.why == "the nodes' topology files differ (n1, n2 differ from n0)");
    // Many: four named, the rest counted; one line.
    std::vector<T> tags(7, T("topology:zz"));
    tags[0] = T("topology:aa");
    d = decide_check_order(nodes, tags, true);
    CHECK(d.why == "the nodes' topology files differ (n1, n2, n3, n4 and 2 more differ from n0)");
    // Node 0's file no longer gives node 0's tag: no topology ring, SLURM's order for all.
    d = decide_check_order(nodes, {T("topology:aa"), T("topology:aa")}, false);
    CHECK_FALSE(d.topology_ring);
    CHECK(d.fall_back);
    CHECK(d.why.find("n0's file changed") != std::string::npos);
}

TEST_CASE("agreement: the check's answer to the plugin, and the re-plan in SLURM's order") {
    const std::vector<std::string> nodes{"n0", "n1", "n2"};
    using T = std::optional<std::string>;
    const auto d = decide_check_order(nodes, {T("topology:aa"), T("topology:bb"), T("topology:aa")}, true);
    const std::string answer = order_answer(d);
    CHECK(answer == "slurm the nodes' topology files differ (n1 differs from n0)\n");
    CHECK(parse_order_answer(answer) == d.why);
    CHECK(parse_order_answer("slurm") == std::string("the nodes' topology files differ"));
    CHECK_FALSE(parse_order_answer(""));
    CHECK_FALSE(parse_order_answer("topology x"));
    CHECK_FALSE(parse_order_answer("slurmish"));
    CHECK_FALSE(parse_order_answer("slurm " + std::string(kOrderAnswerMaxBytes, 'x')));
    CHECK(parse_order_answer("slurm a\x1b[2Jb\nmore") == std::string("a?[2Jb"));
    // A long answer is cut to the limit, still an answer.
    CheckOrder big;
    big.fall_back = true;
    big.why = std::string(5000, 'w');
    CHECK(order_answer(big).size() == kOrderAnswerMaxBytes);
    CHECK(parse_order_answer(order_answer(big)));

    // The re-plan: the step numbered as SLURM numbers it, the tag says slurm.
    StepView step;
    step.nodes = {"n0", "n1", "n2"};
    step.tasks_per_node = {2, 2, 2};
    step.node_index = 1;
    step.local_rank = 1;
    step.rank = 3;
    const NodeOrder o = fallen_back_order(3, d.why);
    CHECK_FALSE(o.by_topology);
    CHECK(o.fallback == d.why + "; keeping SLURM's rank order");
    CHECK(order_tag(step.nodes, o).starts_with("slurm:"));
    StepView same = step;
    apply_order(same, o);
    CHECK(same.node_index == 1);
    CHECK(*same.rank == 3);
    CHECK(same.nodes == step.nodes);
}

TEST_CASE("topology_file=: %n is the node's SLURM name") {
    CHECK(topology_path_for("/etc/slurm/topology.conf", "n1") == "/etc/slurm/topology.conf");
    CHECK(topology_path_for("/shared/%n/topology.conf", "n1") == "/shared/n1/topology.conf");
    CHECK(topology_path_for("/t/%n.%n.conf", "n1") == "/t/n1.n1.conf");
    CHECK(topology_path_for("/t/%x%", "n1") == "/t/%x%");
    CHECK(topology_path_for("/t/%n", "../a/b") == "/t/.._a_b");
    CHECK(topology_path_for("", "n1").empty());
}
