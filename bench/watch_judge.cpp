// The running job's judgement at scale (issue 43, lib/watch/judge.hpp): 512
// ranks on 64 nodes, each node's kMaxHistory records (one each 10 s), each
// record with its 8 ranks' newest reports (kMaxEnters enters of one group),
// 24 rounds of root's samples and the node's pressure; one node slowed by
// 60 ms a collective over the last 2 minutes, so that the straggler's path
// and root's reason run too. Times judge() over 20 calls.
//
//   bench/watch_judge [--calls N]      prints the median and the slowest ms
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../lib/watch/judge.hpp"

using namespace gangway::watch;
using gangway::postmortem::PressureSample;
using gangway::postmortem::TaskSample;
using gangway::postmortem::TaskState;

namespace {

constexpr std::int64_t kMs = 1'000'000, kS = 1'000 * kMs;
constexpr std::int64_t kInterval = 10 * kS, kRound = 5 * kS;
constexpr std::int64_t kNow = 1'795'000'000 * kS + 2 * kS;
constexpr std::uint32_t kNodes = 64, kPerNode = 8, kRanks = kNodes * kPerNode;
constexpr std::uint32_t kSlowNode = 17;
constexpr std::int64_t kPeriod = 150 * kMs, kSlowExtra = 60 * kMs;

std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Every rank's enter of every collective over the history: [rank][seq - 1].
struct Job {
    std::vector<std::vector<std::int64_t>> enter;
    std::int64_t start = kNow - std::int64_t(kMaxHistory + 2) * kInterval;

    Job() {
        std::uint64_t rng = 43;
        enter.assign(kRanks, {});
        const std::int64_t slow_from = kNow - 120 * kS;
        for (std::int64_t t = start; t < kNow;) {
            std::int64_t last = t;
            for (std::uint32_t r = 0; r < kRanks; ++r) {
                std::int64_t e = t + kPeriod + std::int64_t(splitmix(rng) % std::uint64_t(20 * kMs));
                if (r / kPerNode == kSlowNode && t >= slow_from) e += kSlowExtra;
                enter[r].push_back(e);
                last = std::max(last, e);
            }
            t = last + kMs;
        }
    }

    Pace pace(std::uint32_t r, std::int64_t p) const {
        Pace out;
        out.rank = r, out.t_ns = p;
        GroupPace g;
        g.group = "0";
        const auto& en = enter[r];
        const std::size_t n = std::size_t(std::upper_bound(en.begin(), en.end(), p) - en.begin());
        g.entered = n, g.completed = n ? n - 1 : 0;
        for (std::size_t i = n > kMaxEnters ? n - kMaxEnters : 0; i < n; ++i) g.enters.push_back({i + 1, en[i]});
        out.groups.push_back(std::move(g));
        return out;
    }

    NodeProgress record(std::uint32_t n, std::int64_t rt) const {
        NodeProgress rec;
        rec.job = 77, rec.t_ns = rt, rec.interval_ns = kInterval;
        rec.node = "gpu" + std::to_string(1000 + n);
        for (std::uint32_t r = n * kPerNode; r < (n + 1) * kPerNode; ++r) {
            rec.ranks.push_back(r);
            rec.paces.push_back(pace(r, rt - rt % kInterval));
        }
        for (int k = 23; k >= 0; --k) {
            const std::int64_t t = rt - k * kRound, since = t - start;
            for (std::uint32_t r : rec.ranks) {
                TaskSample s;
                s.t_ns = t, s.rank = r, s.state = TaskState::running, s.procs = 3;
                s.cpu_ns = std::uint64_t(since / 10 * 9);
                s.wait_ns = std::uint64_t(since / (n == kSlowNode ? 2 : 50));
                rec.samples.push_back(s);
            }
            PressureSample p;
            p.t_ns = t, p.cpu = 300, p.memory = 20, p.io = 10;
            rec.pressure.push_back(p);
        }
        return rec;
    }

    std::vector<NodeProgress> history() const {
        std::vector<NodeProgress> h;
        const std::int64_t newest = kNow - kS;
        for (std::uint32_t n = 0; n < kNodes; ++n)
            for (std::size_t k = kMaxHistory; k-- > 0;) h.push_back(record(n, newest - std::int64_t(k) * kInterval));
        return h;
    }
};

}  // namespace

int main(int argc, char** argv) {
    int calls = 20;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) {
            calls = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: %s [--calls N]\n", argv[0]);
            return 2;
        }
    }
    const Job job;
    const std::vector<NodeProgress> history = job.history();
    std::size_t paces = 0, enters = 0, samples = 0;
    for (const auto& r : history) {
        paces += r.paces.size(), samples += r.samples.size();
        for (const auto& p : r.paces) enters += p.groups[0].enters.size();
    }
    std::printf("%u ranks on %u nodes: %zu records, %zu reports, %zu enters, %zu task samples\n", kRanks, kNodes, history.size(), paces, enters,
                samples);

    std::vector<double> ms;
    Judgement j;
    for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        j = judge(history, kNow);
        const auto t1 = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("judge(): median %.1f ms, slowest %.1f ms over %d calls\n", ms[ms.size() / 2], ms.back(), calls);
    std::printf("pace %.0f ms, %zu of %zu ranks reporting\n", double(j.pace_ns) / 1e6, j.ranks_reporting, j.ranks_expected);
    std::printf("%s\n", judgement_line(j).c_str());
    return 0;
}
