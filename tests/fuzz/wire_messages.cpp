// Every answer a node sends the coordinator, decoded and judged as the
// coordinator does: a hello's node card, a reach stage's probe results, a
// TCP and an RDMA round's answers, the NCCL stages' answers, and what their
// measurements then feed (the bandwidth analysis). A node, or whoever holds
// the step's secret, controls all of it: a malformed answer is that node's
// failure or a gangway::Error, never a crash, a hang or undefined behaviour.
#include "lib/preflight/card.hpp"
#include "lib/preflight/localize.hpp"
#include "lib/preflight/nccl_job.hpp"
#include "lib/preflight/rdma_checks.hpp"
#include "lib/preflight/rdma_rail.hpp"
#include "lib/preflight/reach_check.hpp"
#include "lib/preflight/stream_link.hpp"
#include "lib/preflight/wire.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace p = gangway::preflight;
using gangway::fuzz::refusable;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): decode_kv: 32 n, kept while a card (48 n) and the answers are judged.
    const gangway::fuzz::HeapBudget budget(size, 128, 1u << 20);
    p::Kv kv;
    try {
        kv = p::decode_kv(gangway::fuzz::text(data, size));
    } catch (const gangway::Error&) {
        return 0;
    }
    refusable([&] {
        const auto card = p::card_from_kv(kv);
        (void)p::compare_cards({card, card});
    });
    refusable([&] { (void)gangway::verbs::qp_info_from_kv(kv, "q."); });

    const p::Kv fine{{"n", "2"}, {"r.0.ok", "1"}, {"r.0.ms", "0.2"}, {"r.0.error", ""},
                     {"r.1.ok", "1"}, {"r.1.ms", "0.2"}, {"r.1.error", ""}};
    refusable([&] {
        std::vector<p::ReachNode> nodes(3);
        for (unsigned i = 0; i < 3; ++i) {
            nodes[i].node = i;
            nodes[i].name = "n" + std::to_string(i);
            nodes[i].addr = "198.18.0." + std::to_string(i + 1);
            nodes[i].targets = {(i + 1) % 3, (i + 2) % 3};
            nodes[i].answer = i == 0 ? &kv : &fine;
        }
        nodes[1].retry = {0};
        nodes[1].retry_answer = &kv;
        (void)p::retry_targets(nodes);
        (void)p::judge_reach(nodes);
    });

    std::vector<p::Measurement> ring;
    const p::Flow there{0, 1}, back{1, 0};
    ring.push_back(p::stream_link(there, {"n0", &kv}, {"n1", &kv}));
    refusable([&] { ring.push_back(p::rdma_link(back, {"n1", &kv, &kv, &kv}, {"n0", &kv, &kv, &kv})); });
    refusable([&] { (void)p::analyse_rounds(2, ring, 0.5); });
    refusable([&] { (void)p::analyse_rounds(2, ring, 0.5, 1e9); });

    const p::NcclAnswer a{"n0", 8, &kv}, b{"n1", 8, &fine};
    refusable([&] { (void)p::job_allreduce({a, b}, 1 << 20); });
    refusable([&] { (void)p::pair_link(p::nccl_pair(there, a, b), 1 << 20); });
    return 0;
}
