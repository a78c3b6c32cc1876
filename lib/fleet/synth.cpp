// The synthetic fleet history: see synth.hpp.
#include "synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gangway::fleet {
namespace {

// splitmix64: small, and the same numbers everywhere (std::normal_distribution is not).
class Rng {
public:
    explicit Rng(std::uint64_t seed) : x_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (x_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    double normal() {  // Box-Muller
        const double u = 1 - uniform(), v = uniform();
        return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
    }

private:
    std::uint64_t x_;
};

double loss(double rate, int from_day, std::int64_t start, std::int64_t t) {
    const double days = static_cast<double>(t - start) / 86400 - from_day;
    return days > 0 ? std::pow(1 - rate, days) : 1;
}

class Day {
public:
    Day(const SynthSettings& s, int day) : s_(s), rng_(s.seed * 0x100000001b3ULL + static_cast<std::uint64_t>(day)), day_(day) {
        for (std::size_t n = 0; n < s.nodes; ++n) names_.push_back(synth_node_name(n));
    }

    std::vector<Figure> run() {
        const std::int64_t t0 = s_.start + std::int64_t{86400} * day_;
        for (std::size_t n = 0; n < s_.nodes; ++n)
            for (unsigned c = 0; c < s_.node_checks_per_day; ++c) {
                const std::int64_t t = t0 + 86400 * c / s_.node_checks_per_day + static_cast<std::int64_t>(rng_.below(600));
                const std::string id = "r" + std::to_string(day_) + "-" + std::to_string(n) + "-" + std::to_string(c);
                add(id, t, Source::node_check, 0, n, Metric::gpu_h2d);
            }
        if (s_.nodes < 2 || s_.users.empty()) return std::move(out_);
        const std::size_t most = std::min(s_.max_job_nodes, s_.nodes);
        liar_ = s_.faults && day_ >= s_.liar_from_day;
        const unsigned jobs = s_.jobs_per_day + (liar_ ? s_.liar_jobs_per_day : 0);
        for (unsigned j = 0; j < jobs; ++j) {
            const bool extra = j >= s_.jobs_per_day;
            const std::uint32_t uid = extra ? s_.liar_uid : s_.users[rng_.below(s_.users.size())];
            const std::size_t len = 2 + rng_.below(most - 1);
            std::size_t a = rng_.below(s_.nodes - len + 1);
            if (extra) a = std::min(s_.nodes - len, s_.liar_node - std::min(s_.liar_node, rng_.below(len)));
            const std::int64_t t = t0 + static_cast<std::int64_t>(rng_.below(86400));
            const std::string id = "j" + std::to_string(day_) + "-" + std::to_string(j);
            for (std::size_t n = a; n < a + len; ++n) {
                add(id, t, Source::job_check, uid, n, Metric::tcp_send);
                add(id, t, Source::job_check, uid, n, Metric::gpu_h2d);
            }
            for (std::size_t n = a; n < a + len; ++n) {
                const std::size_t next = n + 1 < a + len ? n + 1 : a;
                if (next == n || (next == a && len < 3)) continue;
                add(id, t, Source::job_check, uid, n, Metric::link_bandwidth, next);
                add(id, t, Source::job_check, uid, next, Metric::link_bandwidth, n);
            }
        }
        return std::move(out_);
    }

private:
    void add(const std::string& id, std::int64_t t, Source src, std::uint32_t uid, std::size_t n, Metric m,
             std::size_t peer = SIZE_MAX) {
        Figure f;
        f.check_id = id, f.time = t, f.source = src, f.uid = uid, f.metric = m;
        f.node = names_[n];
        double v = 0;
        switch (m) {
            case Metric::gpu_h2d:
                f.device = "gpu0", f.peer_class = "H100", v = kSynthGpuH2d;
                if (s_.faults && n == s_.degrading_node) v *= loss(s_.node_loss, s_.node_from_day, s_.start, t);
                break;
            case Metric::link_bandwidth:
                f.peer = names_[peer], f.peer_class = "100G", v = kSynthLink;
                if (s_.faults && std::minmax(n, peer) == std::minmax(s_.link_a, s_.link_b))
                    v *= loss(s_.link_loss, s_.link_from_day, s_.start, t);
                break;
            default:
                f.peer_class = "100G", v = kSynthTcpSend;
        }
        if (liar_ && src == Source::job_check && uid == s_.liar_uid && (n == s_.liar_node || peer == s_.liar_node))
            v *= s_.liar_factor;
        f.value = v * (1 + std::clamp(s_.sigma * rng_.normal(), -s_.clip, s_.clip));
        out_.push_back(std::move(f));
    }

    const SynthSettings& s_;
    Rng rng_;
    int day_;
    bool liar_ = false;
    std::vector<Figure> out_;
    std::vector<std::string> names_;
};

}  // namespace

std::string synth_node_name(std::size_t i) {
    char b[24];
    std::snprintf(b, sizeof b, "n%03zu", i);
    return b;
}

std::vector<Figure> synth_day(const SynthSettings& s, int day) { return Day(s, day).run(); }

}  // namespace gangway::fleet
