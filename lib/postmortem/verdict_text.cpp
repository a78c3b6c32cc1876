// The verdict in words (verdict.hpp): the one line for AdminComment, srun's
// tail and `gangway postmortem`, and the timeline. Every name and text that
// came from a record goes through quiet_text (printable ASCII, no quote, '$',
// '`' or '\'), so the line can be handed to scontrol and a shell as it is,
// and cut anywhere without splitting a character.
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../base/text.hpp"
#include "verdict.hpp"

namespace gangway::postmortem {
namespace {

std::string clean(std::string_view s, std::size_t max) {
    std::string r = quiet_text(s, max);
    if (s.size() > max && r.size() >= 3) r.replace(r.size() - 3, 3, "...");
    return r;
}

std::string name(std::string_view s) { return clean(s, kPrintableNameMax); }

// HH:MM:SS.mmm, UTC: the records' clock is CLOCK_REALTIME, and a pure
// function has no time zone to ask.
std::string clock_text(std::int64_t t_ns) {
    std::int64_t s = t_ns / 1'000'000'000, ms = (t_ns % 1'000'000'000) / 1'000'000;
    if (ms < 0) s -= 1, ms += 1000;
    const std::time_t tt = static_cast<std::time_t>(s);
    std::tm tm{};
    if (!gmtime_r(&tt, &tm)) return "?";
    char b[32];
    std::snprintf(b, sizeof b, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
    return b;
}

std::string seconds(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", s);
    return b;
}

const char* signal_name(int sig) {
    switch (sig) {
        case SIGHUP: return "SIGHUP";
        case SIGINT: return "SIGINT";
        case SIGQUIT: return "SIGQUIT";
        case SIGILL: return "SIGILL";
        case SIGTRAP: return "SIGTRAP";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGKILL: return "SIGKILL";
        case SIGUSR1: return "SIGUSR1";
        case SIGSEGV: return "SIGSEGV";
        case SIGUSR2: return "SIGUSR2";
        case SIGPIPE: return "SIGPIPE";
        case SIGALRM: return "SIGALRM";
        case SIGTERM: return "SIGTERM";
        case SIGXCPU: return "SIGXCPU";
        case SIGXFSZ: return "SIGXFSZ";
        case SIGSYS: return "SIGSYS";
        default: return nullptr;
    }
}

std::string rank_words(const Verdict& v) {
    if (!v.rank) return "";
    std::string s = "rank " + std::to_string(*v.rank);
    if (v.local_rank) s += ", local " + std::to_string(*v.local_rank);
    return s;
}

// Where the first failure ran, the rank first: "rank 5 on r1-gpu100 (local 1)".
std::string ran_words(const Verdict& v) {
    const std::string node = name(v.ran_on.empty() ? v.node : v.ran_on);
    if (!v.rank) return node;
    std::string s = "rank " + std::to_string(*v.rank) + (node.empty() ? "" : " on " + node);
    if (v.local_rank) s += " (local " + std::to_string(*v.local_rank) + ")";
    return s;
}

std::string cascade_words(const Verdict& v) {
    if (v.cascade_ranks == 0) return "";
    const bool named = v.rank.has_value();
    std::string s = "; " + std::to_string(v.cascade_ranks) + (named ? " other" : "") +
                    (v.cascade_ranks == 1 ? " rank ended " : " ranks ended ");
    s += v.cascade_to_s - v.cascade_from_s < 0.05 ? seconds(v.cascade_from_s)
                                                  : seconds(v.cascade_from_s) + "-" + seconds(v.cascade_to_s);
    return s + " s later (" + v.cascade_how + ")";
}

}  // namespace

const char* to_string(Cause c) {
    switch (c) {
        case Cause::none: return "none";
        case Cause::node_lost: return "node-lost";
        case Cause::gpu_xid: return "gpu-xid";
        case Cause::gpu_lost: return "gpu-lost";
        case Cause::oom: return "oom";
        case Cause::hca_lost: return "hca-lost";
        case Cause::link_down: return "link-down";
        case Cause::fatal_signal: return "fatal-signal";
        case Cause::nonzero_exit: return "nonzero-exit";
        case Cause::hang: return "hang";
        case Cause::user_error: return "user-error";
    }
    return "?";
}

std::string describe_wait_status(int ws) {
    if (WIFEXITED(ws)) return "exit " + std::to_string(WEXITSTATUS(ws));
    if (WIFSIGNALED(ws)) {
        const int sig = WTERMSIG(ws);
        const char* n = signal_name(sig);
        std::string s = n ? n : "signal " + std::to_string(sig);
        if (WCOREDUMP(ws)) s += " (core dumped)";
        return s;
    }
    return "wait status " + std::to_string(ws);
}

std::string rank_list(const std::vector<std::uint32_t>& ranks) {
    constexpr std::size_t kNamed = 8;
    std::string s = ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size() && i < kNamed; ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
    if (ranks.size() > kNamed) s += " and " + std::to_string(ranks.size() - kNamed) + " more";
    return s;
}

std::string render_line(const Verdict& v) {
    if (v.cause == Cause::none) return "";
    std::string s = "gangway: job " + std::to_string(v.job) + " step " + std::to_string(v.step) + " ";
    const std::string at = " at " + clock_text(v.t_ns);
    const std::string where = name(v.node) + (v.rank ? " (" + rank_words(v) + ")" : "");
    // Whether a node is blamed, apart from where the failure ran: only a
    // node-class cause is a node fault.
    constexpr const char* kNoNodeFault = " (no node fault)";
    bool cascade = true;
    switch (v.cause) {
        case Cause::none: break;
        case Cause::hang:
            s += "hung until SLURM signalled every rank" + at + ": " + clean(v.detail, 120);
            break;
        case Cause::user_error:
            s += "failed on every rank: ";
            if (v.alike == Alike::same_status) {
                s += "all " + std::to_string(v.step_ranks) + " ended with " + clean(v.detail, 40) + " within " +
                     seconds(v.alike_within_s) + " s";
                cascade = false;  // the cascade is every rank's same end, said already
            } else {
                s += "each raised " + clean(v.detail, 100);
            }
            if (v.rank) s += ", the first " + ran_words(v) + at;
            s += kNoNodeFault;
            break;
        case Cause::node_lost:
            s += "stopped by " + name(v.node) + ": " + clean(v.detail, 100);
            break;
        case Cause::oom:
        case Cause::fatal_signal:
            s += "stopped by " + ran_words(v) + ": " + (v.cause == Cause::oom ? "" : "killed by ") + clean(v.detail, 80) + at +
                 kNoNodeFault;
            break;
        case Cause::nonzero_exit:
            s += "stopped by " + ran_words(v) + ": " + clean(v.detail, 40) + at;
            if (v.node.empty())
                // No apostrophe in a line: slurmdbd stores one as a backtick (sacct shows it so).
                s += std::string(", an exit of the program itself") + kNoNodeFault;
            else
                s += " (no node fault; its node logged " + clean(v.evidence_text, 60) + ")";
            break;
        case Cause::gpu_xid:
        case Cause::gpu_lost:
        case Cause::hca_lost:
        case Cause::link_down:
            s += "stopped by " + where + ": " + clean(v.detail, 80) + at + " (node fault)";
            break;
    }
    if (cascade) s += cascade_words(v);
    if (s.size() > kMaxLine) s = s.substr(0, kMaxLine - 3) + "...";
    return s;
}

std::string render_timeline(const Verdict& v, const std::vector<NodeRecord>& records) {
    if (v.cause == Cause::none) return "";
    constexpr std::size_t kMaxRanks = 64, kMaxEvidencePerNode = 16, kMaxOtherEvidence = 32, kMaxGroups = 8;
    std::string out = render_line(v) + "\n";
    auto rel = [&](std::int64_t t) {
        if (t == 0) return std::string("  time ?  ");  // a reader that could not time it (retired pages)
        char b[48];
        std::snprintf(b, sizeof b, "%+9.3f s", double(t - v.t_ns) / 1e9);
        return std::string(b);
    };
    out += "cause: " + std::string(to_string(v.cause)) + (v.node_class ? " (the node's own: node-class)" : "") + "\n";
    if (!v.evidence_text.empty()) out += "  root's evidence: " + clean(v.evidence_text, kMaxEvidenceText) + "\n";
    if (!v.ranks_without_dump.empty()) out += "  no dump from " + rank_list(v.ranks_without_dump) + "\n";
    if (v.records_ignored) out += "  " + std::to_string(v.records_ignored) + " record(s) not taken (another node's or job's, or twice)\n";

    // The step's ends in time order, as root recorded them.
    struct Row {
        std::int64_t t;
        const TaskEnd* e;
    };
    std::vector<Row> rows;
    std::map<std::string, const NodeRecord*> nodes;
    for (const auto& r : records) {
        if (r.job != v.job || !nodes.emplace(r.node, &r).second) continue;
        for (const auto& t : r.tasks)
            if (t.node == r.node && t.job == r.job && t.step == v.step) rows.push_back({t.t_ns, &t});
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return a.t != b.t ? a.t < b.t : a.e->rank < b.e->rank;
    });
    auto row = [&](const TaskEnd& t) {
        const bool first = v.rank && t.rank == *v.rank && t.node == (v.ran_on.empty() ? v.node : v.ran_on);
        return "  " + rel(t.t_ns) + "  " + name(t.node) + "  rank " + std::to_string(t.rank) + " (local " +
               std::to_string(t.local_rank) + ")  " + describe_wait_status(t.wait_status) +
               (t.oom_kills ? "  oom_kills=" + std::to_string(t.oom_kills) : std::string()) + (first ? "  <- first" : "") +
               "\n";
    };
    for (const auto& r : rows)
        if (v.rank && r.e->rank == *v.rank && r.e->node == (v.ran_on.empty() ? v.node : v.ran_on)) out += "first failure:\n" + row(*r.e);
    out += "task ends (root's, " + std::to_string(rows.size()) + " of step " + std::to_string(v.step) + ", time after " +
           clock_text(v.t_ns) + " UTC):\n";
    // The first ends and the last ones: where the cascade began and how long it ran.
    constexpr std::size_t kTail = 8;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows.size() > kMaxRanks && i == kMaxRanks - kTail) {
            out += "  ... " + std::to_string(rows.size() - kMaxRanks) + " more ...\n";
            i = rows.size() - kTail;
        }
        out += row(*rows[i].e);
    }

    // Root's evidence: the blamed node's first, then the others'.
    std::size_t others = 0;
    auto node_evidence = [&](const NodeRecord& r, std::size_t max) {
        std::size_t n = 0;
        for (const auto& e : r.evidence) {
            if (n++ == max) {
                out += "  ... and " + std::to_string(r.evidence.size() - max) + " more on " + name(r.node) + "\n";
                break;
            }
            out += "  " + rel(e.t_ns) + "  " + name(r.node) + "  " + to_string(e.sign) +
                   (e.device.empty() ? "" : "  " + name(e.device)) + (e.sign == Sign::gpu_xid ? "  Xid " + std::to_string(e.code) : "") +
                   (e.pid ? "  pid " + std::to_string(e.pid) : "") + "  " + clean(e.text, kMaxEvidenceText) + "\n";
        }
    };
    out += "kernel, port and GPU evidence (root's):\n";
    if (const auto it = nodes.find(v.node); it != nodes.end()) node_evidence(*it->second, kMaxEvidencePerNode);
    for (const auto& [n, r] : nodes) {
        if (n == v.node || r->evidence.empty()) continue;
        if (others >= kMaxOtherEvidence) {
            out += "  ... and more on other nodes\n";
            break;
        }
        others += std::min(r->evidence.size(), kMaxEvidencePerNode);
        node_evidence(*r, kMaxEvidencePerNode);
    }

    // Root's collectors' own lines: what a node's record lacks (the kernel
    // log's lost records, rank dumps cut to fit), never silence.
    std::string notes;
    std::size_t shown = 0, all = 0;
    for (const auto& [n, r] : nodes)
        for (const auto& t : r->notes)
            if (++all, shown < kMaxOtherEvidence) ++shown, notes += "  " + name(n) + "  " + clean(t, kMaxNoteText) + "\n";
    if (all > shown) notes += "  ... and " + std::to_string(all - shown) + " more\n";
    if (!notes.empty()) out += "what the records lack (root's collectors):\n" + notes;

    // Root's samples of the tasks: the ranks seen stalled while the others waited.
    if (!v.stalls.empty()) {
        out += "the step's tasks as slurmstepd sampled them (root's), before the end:\n";
        for (const auto& x : v.stalls) out += "  " + name(x.node) + "  rank " + std::to_string(x.rank) + "  " + stall_what(x) + "\n";
        // Each such node's pressure in the round before the end: what else waited there.
        std::set<std::string> shown_nodes;
        for (const auto& x : v.stalls) {
            if (!shown_nodes.insert(x.node).second) continue;
            const auto it = nodes.find(x.node);
            if (it == nodes.end()) continue;
            const PressureSample* last = nullptr;
            for (const auto& p : it->second->pressure)
                if (p.step == v.step && p.t_ns <= v.t_ns && (!last || p.t_ns > last->t_ns)) last = &p;
            if (!last) continue;
            char b[160];
            std::snprintf(b, sizeof b, "  %s  pressure (%s, some avg10): cpu %.1f %%, memory %.1f %%, io %.1f %%\n", name(x.node).c_str(),
                          last->scope == PressureScope::step ? "the step cgroup's" : "the node's", last->cpu / 100.0,
                          last->memory / 100.0, last->io / 100.0);
            out += b;
        }
    }

    // The user's dumps: ranks and exceptions, never a node.
    std::map<std::string, std::vector<std::uint32_t>> raised;
    std::size_t dumps = 0;
    for (const auto& [n, r] : nodes)
        for (const auto& d : r->dumps) {
            ++dumps;
            if (!d.exception.empty()) raised[d.exception].push_back(d.rank);
        }
    if (dumps) {
        out += "the ranks' own dumps (the user's; they name ranks, not nodes): " + std::to_string(dumps) + "\n";
        std::size_t g = 0;
        for (auto& [exc, ranks] : raised) {
            if (g++ == kMaxGroups) {
                out += "  ... and " + std::to_string(raised.size() - kMaxGroups) + " more exceptions\n";
                break;
            }
            std::sort(ranks.begin(), ranks.end());
            out += "  " + rank_list(ranks) + " raised " + clean(exc, 160) + "\n";
        }
    }
    if (out.size() > kMaxTimeline) {
        out.resize(kMaxTimeline - 32);
        out += "\n... (cut at " + size_text(kMaxTimeline) + ")\n";
    }
    return out;
}

}  // namespace gangway::postmortem
