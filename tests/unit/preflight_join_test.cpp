// The coordinator's rendezvous, cards and reach judgement (lib/preflight/join,
// cards_check, reach_check): who checked in, who is missing, lost,
// mismatched or unreachable, and with which words.
#include "catch_compat.hpp"

#include <algorithm>

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/cards_check.hpp"
#include "../../lib/preflight/join.hpp"
#include "../../lib/preflight/reach_check.hpp"
#include "test_cards.hpp"

using namespace gangway;
using namespace gangway::preflight;

namespace {

Card card_of(unsigned rank, unsigned gpus = 8) { return test_card(rank, gpus, 100000, "2.21.5"); }

Arrival speaker(unsigned node, const Card& c) {
    Arrival a{node, true, {}};
    card_to_kv(c, a.hello);
    return a;
}

Arrival task(unsigned node) { return Arrival{node, false, {}}; }

JoinShape shape(unsigned nnodes, unsigned per_node, bool pmix = false) {
    JoinShape s;
    s.nnodes = nnodes;
    s.ntasks = nnodes * per_node;
    s.tasks_per_node.assign(nnodes, per_node);
    for (unsigned i = 0; i < nnodes; ++i) s.nodes.push_back("s" + std::to_string(i));
    s.pmix = pmix;
    s.join_timeout_s = 10;
    return s;
}

}  // namespace

TEST_CASE("join: every task of every node checked in") {
    const auto nodes = account_join(shape(2, 2), {speaker(0, card_of(0)), task(0), task(1), speaker(1, card_of(1))});
    REQUIRE(nodes.size() == 2);
    for (const auto& n : nodes) {
        CHECK(n.status == NodeStatus::ok);
        CHECK(n.reasons.empty());
        CHECK(n.tasks_seen == 2);
    }
    // member: the arrival whose card stands for the node, in arrival order.
    CHECK(nodes[0].member == 0);
    CHECK(nodes[1].member == 3);
    // The card's own name wins over the step's.
    CHECK(nodes[1].card.node == "node1");
    CHECK(nodes[1].card.data_addr == "10.0.0.2");
}

TEST_CASE("join: a node without a card or with too few tasks is missing, and says so") {
    auto s = shape(4, 2);
    s.nodes.resize(3);  // the step names fewer nodes than it has
    const auto nodes = account_join(s, {speaker(0, card_of(0)), task(0), speaker(1, card_of(1)), task(2)});
    CHECK(nodes[0].status == NodeStatus::ok);
    CHECK(nodes[1].status == NodeStatus::missing);
    CHECK(nodes[1].reasons == std::vector<std::string>{"1 of its 2 tasks never checked in"});
    CHECK(nodes[2].status == NodeStatus::missing);
    CHECK(nodes[2].member == -1);
    CHECK(nodes[2].reasons == std::vector<std::string>{"never checked in (1/2 tasks) within 10 s"});
    // Without a card, the step's name stands in, so reasons can name the node;
    // its address is only ever its card's (no list of every node's is needed).
    CHECK(nodes[2].card.node == "s2");
    CHECK(nodes[2].card.data_addr.empty());
    CHECK(nodes[2].card.node_rank == 2);
    CHECK(nodes[3].card.node == "node#3");
    CHECK(nodes[3].reasons == std::vector<std::string>{"never checked in (0/2 tasks) within 10 s"});
}

TEST_CASE("join under PMIx: the fence counted the tasks, only the speaker is waited for") {
    auto s = shape(2, 4, true);
    s.join_timeout_s = 7.9;  // the reason says whole seconds
    const auto nodes = account_join(s, {speaker(0, card_of(0))});
    CHECK(nodes[0].status == NodeStatus::ok);
    CHECK(nodes[0].tasks_seen == 4);
    CHECK(nodes[1].tasks_seen == 4);
    CHECK(nodes[1].status == NodeStatus::missing);
    CHECK(nodes[1].reasons ==
          std::vector<std::string>{"its tasks passed the PMIx fence but its first task never checked in over TCP within 7 s"});
    // Arrivals are not counted again under PMIx.
    CHECK(account_join(s, {speaker(0, card_of(0)), task(0)})[0].tasks_seen == 4);
}

TEST_CASE("join: the first readable card stands for its node; strays are ignored") {
    Arrival bad{0, true, {{"card.node", "x"}}};
    Card renumbered = card_of(0);
    renumbered.node_rank = 5;  // a card that says another rank is still the node's by where it checked in
    renumbered.node.clear();
    const auto nodes = account_join(shape(1, 3), {bad, speaker(0, renumbered), speaker(0, card_of(0, 4)), task(9)});
    REQUIRE(nodes.size() == 1);
    CHECK(nodes[0].member == 1);
    CHECK(nodes[0].card.node_rank == 0);
    CHECK(nodes[0].card.node == "s0");
    CHECK(nodes[0].card.gpus == 8);  // the later speaker's card is not taken
    REQUIRE(nodes[0].reasons.size() == 1);
    CHECK_THAT(nodes[0].reasons[0], Catch::Matchers::StartsWith("bad card: ") && Catch::Matchers::ContainsSubstring("card.node_rank"));
    // A bad card is a reason, not a missing node, when a good one came and all tasks did.
    CHECK(nodes[0].status == NodeStatus::ok);
    CHECK(nodes[0].tasks_seen == 3);  // task(9) names no node of the step
}

TEST_CASE("the rendezvous stage's line") {
    auto s = shape(2, 2);
    auto nodes = account_join(s, {speaker(0, card_of(0)), task(0), speaker(1, card_of(1))});
    auto st = join_stage(s, nodes, 3, 0, "PMIx is not in this step", 2);
    CHECK(st.name == "rendezvous");
    CHECK(st.status == StageStatus::failed);
    CHECK(st.detail == "3/4 tasks; not PMIx: PMIx is not in this step, 2 connection(s) rejected");
    CHECK(join_stage(s, nodes, 3, 0, "", 0).detail == "3/4 tasks");
    s.pmix = true;
    nodes = account_join(s, {speaker(0, card_of(0)), speaker(1, card_of(1))});
    st = join_stage(s, nodes, 2, 0.1234, "ignored under PMIx", 0);
    CHECK(st.status == StageStatus::ok);
    CHECK(st.detail == "4/4 tasks in the PMIx fence (0.123 s), 2/2 nodes over TCP");
    CHECK(st.seconds == 0);  // the caller times it
}

TEST_CASE("a lost node is named after its first lost task") {
    JoinedNode n;
    n.status = NodeStatus::slow;
    CHECK(mark_lost(n, 17, "bandwidth", "connection reset"));
    CHECK(n.status == NodeStatus::lost);
    CHECK_FALSE(mark_lost(n, 18, "reach", "EOF"));
    CHECK(n.reasons == std::vector<std::string>{"task 17 exited during bandwidth (connection reset)"});
}

TEST_CASE("which nodes take part in the next stages") {
    for (auto s : {NodeStatus::ok, NodeStatus::slow, NodeStatus::mismatch}) CHECK(takes_part(s));
    for (auto s : {NodeStatus::faulty, NodeStatus::unreachable, NodeStatus::missing, NodeStatus::lost}) CHECK_FALSE(takes_part(s));
}

TEST_CASE("the data interface must exist, be up and hold the data address") {
    Card c = card_of(0);
    CHECK(data_iface_problem(c).empty());
    c.nics[0].state = "unknown";  // what virtual interfaces report
    CHECK(data_iface_problem(c).empty());
    c.nics[0].state = "lowerlayerdown";
    CHECK(data_iface_problem(c) == "data interface eth1 is lowerlayerdown");
    c.nics[0].state = "up";
    c.data_addr = "10.9.9.9";
    CHECK(data_iface_problem(c) == "data interface eth1 lacks address 10.9.9.9");
    c.data_iface = "ib0";
    CHECK(data_iface_problem(c) == "data interface ib0 does not exist");
}

TEST_CASE("cards: a mismatch is a finding, a broken data interface makes the node unreachable") {
    auto s = shape(4, 1);
    Card odd = card_of(2, 7);
    Card down = card_of(3);
    down.nics[0].state = "down";
    auto nodes = account_join(s, {speaker(0, card_of(0)), speaker(1, card_of(1)), speaker(2, odd), speaker(3, down)});
    const auto cc = check_cards(nodes);
    CHECK(cc.failed);
    CHECK(cc.findings == std::vector<std::string>{"node2: gpus is 7, the others have 8"});
    CHECK(cc.nodes[0].status == NodeStatus::ok);
    CHECK(cc.nodes[2].status == NodeStatus::mismatch);
    CHECK(cc.nodes[2].reasons == std::vector<std::string>{"gpus 7 (others 8)"});
    CHECK(cc.nodes[3].status == NodeStatus::unreachable);
    CHECK(cc.nodes[3].reasons == std::vector<std::string>{"data interface eth1 is down"});

    // All fine: nothing changes.
    nodes = account_join(s, {speaker(0, card_of(0)), speaker(1, card_of(1)), speaker(2, card_of(2)), speaker(3, card_of(3))});
    const auto fine = check_cards(nodes);
    CHECK_FALSE(fine.failed);
    CHECK(fine.findings.empty());
    for (const auto& n : fine.nodes) CHECK(n.reasons.empty());
}

TEST_CASE("cards: only arrived cards are compared; a mismatch keeps a missing node missing") {
    auto s = shape(4, 2);
    Card odd = card_of(1, 4);
    Card down = card_of(2);
    down.nics.clear();
    // Node 1 and 2 sent their card but one of their two tasks is missing; node 3 sent nothing.
    auto nodes = account_join(s, {speaker(0, card_of(0)), task(0), speaker(1, odd), speaker(2, down), task(3)});
    nodes[3].card.gpus = 1;  // the step's stand-in card is not compared
    const auto cc = check_cards(nodes);
    CHECK(cc.findings == std::vector<std::string>{"node1: gpus is 4, the others have 8"});
    CHECK(cc.nodes[1].status == NodeStatus::missing);
    CHECK(cc.nodes[1].reasons.back() == "gpus 4 (others 8)");
    // The interface problem is worse than missing tasks: every later stage needs it.
    CHECK(cc.nodes[2].status == NodeStatus::unreachable);
    CHECK(cc.nodes[2].reasons.back() == "data interface eth1 does not exist");
    CHECK(cc.nodes[3].status == NodeStatus::missing);
    CHECK(cc.nodes[3].reasons.size() == 1);

    nodes[3].card.node_rank = 0;
    CHECK_THROWS_AS(check_cards(nodes), Error);
}

namespace {

// Results of a node's probes, in target order: "" for ok, else the error.
Kv probes(const std::vector<std::string>& errors) {
    Kv kv{{"n", std::to_string(errors.size())}};
    for (std::size_t k = 0; k < errors.size(); ++k) {
        const auto p = "r." + std::to_string(k) + ".";
        kv[p + "ok"] = errors[k].empty() ? "1" : "0";
        kv[p + "ms"] = "0.25";
        kv[p + "error"] = errors[k];
    }
    return kv;
}

// One node of the reach stage; the retry fields only where a test has a second pass.
ReachNode rn(unsigned node, std::string name, std::string addr, bool unreachable, std::vector<unsigned> targets,
             const Kv* answer, std::vector<unsigned> retry = {}, const Kv* retry_answer = nullptr) {
    ReachNode n;
    n.node = node;
    n.name = std::move(name);
    n.addr = std::move(addr);
    n.unreachable = unreachable;
    n.targets = std::move(targets);
    n.answer = answer;
    n.retry = std::move(retry);
    n.retry_answer = retry_answer;
    return n;
}

}  // namespace

TEST_CASE("reach: a node no probe reaches, tried twice, is unreachable, its links are not findings too") {
    // Positions 0, 1, 2 are the report's nodes 0, 2 and 3 (node 1 left out earlier).
    const Kv a = probes({"", "refused"}), b = probes({"", "refused"}), c = probes({"", ""});
    std::vector<ReachNode> nodes{rn(0, "n0", "10.0.0.1", false, {1, 2}, &a),
                                 rn(2, "n2", "10.0.0.3", false, {0, 2}, &b),
                                 rn(3, "n3", "10.0.0.4", false, {0, 1}, &c)};
    // One pass alone names nobody: the host may have been busy.
    auto r = judge_reach(nodes);
    CHECK(r.unreachable.empty());
    CHECK(r.findings.empty());
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "n3: every TCP probe to it failed once and was not tried again before the deadline; not named");
    // The second pass: each failed probe again; n3 has no prober left that reached others and does not probe it.
    const auto retry = retry_targets(nodes);
    CHECK(retry == std::vector<std::vector<unsigned>>{{2}, {2}, {}});
    const Kv a2 = probes({"timed out"}), b2 = probes({"refused"});
    nodes[0].retry = retry[0], nodes[0].retry_answer = &a2;
    nodes[1].retry = retry[1], nodes[1].retry_answer = &b2;
    r = judge_reach(nodes);
    REQUIRE(r.links.size() == 6);
    CHECK(r.links[1].from == 0);
    CHECK(r.links[1].to == 3);
    CHECK(r.links[1].stage == "reach");
    CHECK_FALSE(r.links[1].ok);
    CHECK(r.links[1].error == "timed out");  // the last attempt's
    CHECK_FALSE(r.links[1].ms);  // no connect time for a failed probe
    CHECK(*r.links[0].ms == Approx(0.25));
    REQUIRE(r.unreachable.size() == 1);
    CHECK(r.unreachable[0].first == 3);
    CHECK(r.unreachable[0].second == "TCP to 10.0.0.4 failed from 2/2 peers, from it to 0/2 peers, each tried twice");
    CHECK(r.newly_unreachable == 1);
    CHECK(r.findings.empty());
    CHECK(r.dead.empty());  // an unreachable node's links are its own finding
    CHECK(r.notes.empty());
}

TEST_CASE("reach: the second pass clears a probe that failed once, and widens the evidence on a silent node") {
    // 5 nodes in a ring; node 4's probes all time out the first time.
    const Kv ok3 = probes({"", ""}), dead = probes({"timed out", "timed out"});
    const Kv in4 = probes({"", "timed out"});
    std::vector<ReachNode> nodes{rn(0, "n0", "a0", false, {1, 4}, &in4), rn(1, "n1", "a1", false, {2, 0}, &ok3),
                                 rn(2, "n2", "a2", false, {3, 1}, &ok3), rn(3, "n3", "a3", false, {2, 4}, &in4),
                                 rn(4, "n4", "a4", false, {0, 3}, &dead)};
    const auto retry = retry_targets(nodes);
    // Each failed probe again; n4 probed by two more peers that reached others, and probing two more.
    CHECK(retry[0] == std::vector<unsigned>{4});
    CHECK(retry[3] == std::vector<unsigned>{4});
    CHECK(retry[1] == std::vector<unsigned>{4});
    CHECK(retry[2] == std::vector<unsigned>{4});
    CHECK(retry[4] == std::vector<unsigned>{0, 3, 1, 2});
    // It was the load: every second attempt succeeds.
    const Kv one = probes({""}), four = probes({"", "", "", ""});
    nodes[0].retry = retry[0], nodes[0].retry_answer = &one;
    nodes[1].retry = retry[1], nodes[1].retry_answer = &one;
    nodes[2].retry = retry[2], nodes[2].retry_answer = &one;
    nodes[3].retry = retry[3], nodes[3].retry_answer = &one;
    nodes[4].retry = retry[4], nodes[4].retry_answer = &four;
    const auto r = judge_reach(nodes);
    CHECK(r.unreachable.empty());
    CHECK(r.findings.empty());
    CHECK(r.notes.empty());
    CHECK(r.recovered == 4);
    CHECK(std::all_of(r.links.begin(), r.links.end(), [](const LinkResult& l) { return l.ok; }));
}

TEST_CASE("reach: a link that failed twice between fine nodes is a finding, once a note; silence and garbage are handled") {
    const Kv a = probes({"", "timed out"}), b = probes({"", ""});
    Kv garbled = probes({"", ""});
    garbled.erase("r.1.ms");
    std::vector<ReachNode> nodes{rn(0, "n0", "a0", false, {1, 2}, &a), rn(1, "n1", "a1", false, {0, 2}, &b), rn(2, "n2", "a2", false, {0, 1}, &garbled)};
    auto r = judge_reach(nodes);
    CHECK(r.unreachable.empty());
    CHECK(r.findings.empty());
    REQUIRE(r.notes.size() == 2);
    CHECK(r.notes[0] == "TCP n0 -> n2 failed once (timed out), not tried again before the deadline");
    const Kv again = probes({"timed out"}), again_garbled = probes({"refused"});
    nodes[0].retry = {2}, nodes[0].retry_answer = &again;
    nodes[2].retry = {1}, nodes[2].retry_answer = &again_garbled;
    r = judge_reach(nodes);
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0] == "TCP n0 -> n2 failed twice: timed out");
    CHECK(r.findings[1] == "TCP n2 -> n1 failed twice: refused");
    // The bandwidth stage streams over neither again (lib/sys/preflight/coordinator.cpp).
    CHECK(r.dead == std::vector<std::pair<unsigned, unsigned>>{{0, 2}, {2, 1}});
    // A malformed result fails that probe with the parser's words, not the stage.
    nodes[2].retry_answer = nullptr;
    r = judge_reach(nodes);
    CHECK_THAT(r.notes.at(0), Catch::Matchers::StartsWith("TCP n2 -> n1 failed once (") && Catch::Matchers::ContainsSubstring("r.1.ms"));

    // A node that did not answer (already unreachable) probed nobody; probes to it all failed.
    const Kv x = probes({"", "refused"}), y = probes({"", "refused"});
    r = judge_reach({rn(0, "n0", "a0", false, {1, 2}, &x, {2}, &again), rn(1, "n1", "a1", false, {0, 2}, &y, {2}, &again),
                     rn(2, "n2", "a2", true, {0, 1}, nullptr)});
    CHECK(r.links.size() == 4);
    REQUIRE(r.unreachable.size() == 1);
    CHECK(r.unreachable[0].second == "TCP to a2 failed from 2/2 peers, from it to 0/0 peers, each tried twice");
    CHECK(r.newly_unreachable == 0);
    CHECK(r.findings.empty());

    CHECK_THROWS_AS(judge_reach({rn(0, "n0", "a0", false, {3}, &x)}), Error);
}
