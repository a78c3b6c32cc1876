#include "confirm.hpp"

namespace gangway::health {

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::healthy: return "healthy";
        case Verdict::pending: return "pending";
        case Verdict::failed: return "failed";
        case Verdict::inconclusive: return "inconclusive";
    }
    return "?";
}

void confirm(std::vector<Record>& records, const std::set<Key>& failed_again, const State& previous, std::int64_t now,
             double window_s) {
    // A previous run counts when it is recent: after a long pause (the node
    // was down, the check was off) a failure is new evidence again.
    const bool recent = previous.time > 0 && now >= previous.time && double(now - previous.time) <= window_s;
    for (auto& r : records) {
        if (r.status != Status::failed) continue;
        const Key k = key_of(r);
        r.confirmed = is_event(r.check) || (retestable(r.check) && failed_again.count(k)) || (recent && previous.failed.count(k));
    }
}

Verdict verdict(const std::vector<Record>& records, bool inconclusive) {
    bool any = false, confirmed = false;
    for (const auto& r : records)
        if (r.status == Status::failed) {
            any = true;
            confirmed = confirmed || r.confirmed;
        }
    if (confirmed) return Verdict::failed;
    if (any) return Verdict::pending;
    return inconclusive ? Verdict::inconclusive : Verdict::healthy;
}

State next_state(const State& previous, const std::vector<Record>& records, Verdict v, std::int64_t now,
                 const std::optional<std::map<std::string, std::uint64_t>>& counters) {
    State s;
    s.time = now;
    s.drained = previous.drained;
    s.kmsg_seq = previous.kmsg_seq;
    s.counters = counters ? *counters : previous.counters;
    for (const auto& r : records)
        if (r.status == Status::failed) s.failed.insert(key_of(r));
    switch (v) {
        case Verdict::healthy: s.healthy_runs = previous.healthy_runs < 1000000 ? previous.healthy_runs + 1 : previous.healthy_runs; break;
        case Verdict::inconclusive: s.healthy_runs = previous.healthy_runs; break;
        default: s.healthy_runs = 0;
    }
    return s;
}

}  // namespace gangway::health
