// The node agent (agent.hpp).
#include "agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "../../base/error.hpp"
#include "../../stepd/task_samples.hpp"
#include "../../watch/pace_json.hpp"
#include "../node/fd.hpp"
#include "../node/file.hpp"
#include "../postmortem/send.hpp"
#include "../run/deadline.hpp"
#include "link_queues.hpp"

namespace gangway::sys::watch {
namespace gw = gangway::watch;
namespace pm = gangway::postmortem;

namespace {

inline constexpr std::size_t kRoundsSent = 3;  // each task's newest sampled rounds in a record

FileRead read_root_file(int dirfd, const std::string& name, std::size_t max) {
    ReadOptions o{max};
    o.follow_links = false;
    o.owner = 0;
    return read_file_at(dirfd, name, o);
}

}  // namespace

std::optional<gw::NodeProgress> read_progress(const AgentSettings& s, std::int64_t now_ns, std::string& why) {
    Fd job(::open(s.job_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!job) {
        why = s.job_dir + ": gone";
        return std::nullopt;
    }
    const auto text = read_root_file(job.get(), "samples." + std::to_string(s.step), 4u << 20);
    if (!text.ok()) {
        why = "no samples of the step's tasks yet";
        return std::nullopt;
    }
    pm::StepSamples samples;
    try {
        samples = pm::parse_samples(text.text);
    } catch (const Error& e) {
        why = std::string("the step's samples: ") + e.what();
        return std::nullopt;
    }
    gw::NodeProgress p;
    p.job = s.job, p.step = s.step, p.node = s.node, p.uid = s.uid, p.t_ns = now_ns, p.interval_ns = s.interval_ns;
    p.on_hang = s.on_hang;
    // The newest rounds: their times, newest first.
    std::set<std::int64_t, std::greater<>> rounds;
    for (const auto& r : samples.rows) rounds.insert(r.t_ns);
    if (rounds.empty()) {
        why = "no samples of the step's tasks yet";
        return std::nullopt;
    }
    const std::int64_t newest = *rounds.begin();
    const std::int64_t oldest_kept = *std::next(rounds.begin(), std::min(rounds.size(), kRoundsSent) - 1);
    std::set<std::uint32_t> here;
    for (const auto& r : samples.rows) {
        if (r.t_ns < oldest_kept) continue;
        p.samples.push_back(r);
        if (r.t_ns == newest) here.insert(r.rank);
    }
    if (!samples.pressure.empty()) p.pressure.push_back(samples.pressure.back());
    // The node's links: in this namespace, the node's (the agent is slurmstepd's child).
    if (auto links = read_link_queues()) p.links = std::move(*links);
    p.ranks.assign(here.begin(), here.end());
    if (p.ranks.size() > gw::kMaxProgressRanks) p.ranks.resize(gw::kMaxProgressRanks);
    // The ranks' reports: only of ranks root places here, each under its own name.
    Fd user(::openat(job.get(), "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (user) {
        for (const auto rank : p.ranks) {
            ReadOptions o{gw::kMaxPaceBytes};
            o.follow_links = false;
            const auto f = read_file_at(user.get(), "pace." + std::to_string(rank) + ".json", o);
            if (!f.ok()) continue;
            try {
                auto pace = gw::parse_pace(f.text);
                if (pace.rank == rank) p.paces.push_back(std::move(pace));
            } catch (const Error&) {
                // The user's file: one that does not parse counts as no report.
            }
        }
    }
    return p;
}

int run_agent(const AgentSettings& s, const std::function<void(const std::string&)>& log) {
    bool asked = false;
    std::string last_problem;
    const auto say = [&](const std::string& line) {
        if (line != last_problem) log(line);  // one line a problem, not one a round
        last_problem = line;
    };
    for (;;) {
        // The ranks write at the interval's multiples: read a fifth of it later (at least 1 s).
        const std::int64_t now = clock_ns(CLOCK_REALTIME);
        const std::int64_t lag = std::max<std::int64_t>(s.interval_ns / 5, 1'000'000'000);
        const std::int64_t at = (now / s.interval_ns + 1) * s.interval_ns + lag;
        pollfd pf{s.stop_fd, POLLIN, 0};
        const int n = ::poll(&pf, 1, int((at - now) / 1'000'000) + 1);
        if (n > 0) {
            char buf[64];
            if (::read(s.stop_fd, buf, sizeof buf) <= 0) return 0;  // the step ended
            continue;
        }
        if (n < 0 && errno != EINTR) return 0;
        std::string why;
        const auto p = read_progress(s, clock_ns(CLOCK_REALTIME), why);
        if (!p) {
            if (why.ends_with(": gone")) return 0;
            say(why);
            continue;
        }
        const auto sent = postmortem::send_stop(s.to, s.key, s.job, s.node, gw::progress_json(*p), 1, 3, postmortem::Signed::progress);
        if (sent.delivery != pm::Delivery::delivered) {
            say(sent.line);
            continue;
        }
        last_problem.clear();
        const bool dump = sent.line == "dump";
        if (dump && !asked) {
            // In the user's directory, which root made and the user cannot
            // replace (its parent is root's): renamed into place, no link followed.
            if (auto w = write_file_atomic(s.job_dir + "/user", "dump.request", std::to_string(p->t_ns) + "\n", 0644, "the dump request"); !w)
                say(w.error());
        }
        asked = dump;
    }
}

}  // namespace gangway::sys::watch
