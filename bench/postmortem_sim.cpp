// The post-mortem's verdict at scale (issue 33: "a verdict from the records
// of 512 ranks on 64 nodes in under 1 s, a simulation"). For each of the
// issue's cases, lib/postmortem/synth makes the job's node records; the
// bench times what fleet serve does with them once every node has sent:
// parse each node's JSON (parse_node_record), judge (judge), and render the
// line and the timeline. Wall time, the median and the worst of N rounds.
//
//   bench/postmortem_sim [--nodes N] [--ranks-per-node K] [--collectives C] [--rounds R]
//   bench/postmortem_sim --write DIR --case CASE [--nodes N] ...
//       writes the job's records as DIR/<node>.json (node.json, as the Epilog
//       writes it) for `gangway postmortem --records DIR` (tests/postmortem_cli.sh);
//       CASE: healthy, killed-rank, oom, link-cut, xid, hang, hang-late, same-exception.
//
// Built with `make check` (so it keeps compiling) or `make bench/postmortem_sim`; run by hand.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../lib/postmortem/synth.hpp"
#include "../lib/postmortem/verdict.hpp"

using namespace gangway::postmortem;

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* scenario_name(Scenario s) {
    switch (s) {
        case Scenario::healthy: return "healthy";
        case Scenario::killed_rank: return "killed rank";
        case Scenario::oom: return "OOM";
        case Scenario::link_cut: return "link cut";
        case Scenario::xid: return "Xid 79";
        case Scenario::hang: return "hang";
        case Scenario::hang_late: return "hang, late entry";
        case Scenario::same_exception: return "same exception";
    }
    return "?";
}

const char* text_arg(int argc, char** argv, const char* name) {
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name)) return argv[i + 1];
    return nullptr;
}

constexpr Scenario kScenarios[] = {Scenario::healthy, Scenario::killed_rank, Scenario::oom, Scenario::link_cut,
                                   Scenario::xid, Scenario::hang, Scenario::hang_late, Scenario::same_exception};
constexpr const char* kCaseNames[] = {"healthy", "killed-rank", "oom", "link-cut", "xid", "hang", "hang-late", "same-exception"};

unsigned arg(int argc, char** argv, const char* name, unsigned dflt) {
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name)) return unsigned(std::strtoul(argv[i + 1], nullptr, 10));
    return dflt;
}

}  // namespace

int main(int argc, char** argv) {
    SynthJob job;
    job.nodes = arg(argc, argv, "--nodes", 64);
    job.ranks_per_node = arg(argc, argv, "--ranks-per-node", 8);
    job.collectives = arg(argc, argv, "--collectives", 2000);
    job.victim = job.nodes * job.ranks_per_node / 2 + 5;
    const unsigned rounds = std::max(1u, arg(argc, argv, "--rounds", 20));
    if (const char* dir = text_arg(argc, argv, "--write")) {
        const char* c = text_arg(argc, argv, "--case");
        bool known = false;
        for (std::size_t i = 0; c && i < std::size(kScenarios); ++i)
            if (!std::strcmp(c, kCaseNames[i])) job.scenario = kScenarios[i], known = true;
        if (!known) {
            std::fprintf(stderr, "postmortem_sim: --write needs --case healthy|killed-rank|oom|link-cut|xid|hang|hang-late|same-exception\n");
            return 2;
        }
        for (const auto& r : synth_job(job)) {
            std::ofstream f(std::string(dir) + "/" + r.node + ".json");
            f << to_json(r);
            if (!f) {
                std::fprintf(stderr, "postmortem_sim: cannot write into %s\n", dir);
                return 1;
            }
        }
        return 0;
    }
    std::printf("%u nodes x %u ranks = %u ranks, %u collectives in each rank's dump, %u rounds\n", job.nodes,
                job.ranks_per_node, job.nodes * job.ranks_per_node, job.collectives, rounds);
    std::printf("%-15s %10s %12s %12s %12s %12s  %s\n", "case", "JSON MiB", "parse ms", "judge ms", "render ms",
                "total ms", "(median; worst total)");
    double worst_all = 0;
    for (Scenario s : kScenarios) {
        job.scenario = s;
        std::vector<std::string> texts;
        std::size_t bytes = 0;
        for (const auto& r : synth_job(job)) {
            texts.push_back(to_json(r));
            bytes += texts.back().size();
        }
        std::vector<double> parse, judging, render, total;
        std::string line;
        for (unsigned i = 0; i < rounds; ++i) {
            const double t0 = now_s();
            std::vector<NodeRecord> recs;
            for (const auto& t : texts) recs.push_back(parse_node_record(t));
            const double t1 = now_s();
            const Verdict v = judge(recs, {});
            const double t2 = now_s();
            line = render_line(v);
            const std::string tl = render_timeline(v, recs);
            const double t3 = now_s();
            parse.push_back(t1 - t0), judging.push_back(t2 - t1), render.push_back(t3 - t2), total.push_back(t3 - t0);
        }
        auto median = [](std::vector<double> x) {
            std::sort(x.begin(), x.end());
            return x[x.size() / 2] * 1e3;
        };
        const double worst = *std::max_element(total.begin(), total.end()) * 1e3;
        worst_all = std::max(worst_all, worst);
        std::printf("%-15s %10.2f %12.2f %12.3f %12.3f %12.2f  (%.2f)\n", scenario_name(s), double(bytes) / (1 << 20),
                    median(parse), median(judging), median(render), median(total), worst);
        std::printf("  %s\n", line.empty() ? "(no line: a healthy job)" : line.c_str());
    }
    std::printf("worst total of any round: %.2f ms (the issue's bound: 1000 ms)\n", worst_all);
    return worst_all < 1000 ? 0 : 1;
}
