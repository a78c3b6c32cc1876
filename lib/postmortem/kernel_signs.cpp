#include "kernel_signs.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include "../base/text.hpp"
#include "../health/kmsg_record.hpp"
#include "../base/pci_bus_id.hpp"
#include "../health/xid.hpp"

namespace gangway::postmortem {
namespace {

std::string record_text(std::string_view message) {
    return printable_name(message.substr(0, kMaxEvidenceText - 4), kMaxEvidenceText - 4);
}

// The decimal number at the start of s, and what follows it.
std::optional<std::int32_t> leading_pid(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && n < 10 && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    const auto v = parse_uint<std::uint32_t>(s.substr(0, n));
    if (!v || *v == 0 || *v > 0x7fffffff) return std::nullopt;
    s.remove_prefix(n);
    return static_cast<std::int32_t>(*v);
}

// "Killed process PID (COMM)..." after one of the OOM killer's tags.
std::optional<std::int32_t> oom_killed(const health::KmsgRecord& r) {
    for (const std::string_view tag : {"Out of memory: Killed process ", "Memory cgroup out of memory: Killed process "}) {
        auto body = health::kernel_text(r, tag);
        if (!body) continue;
        auto pid = leading_pid(*body);
        if (pid && body->starts_with(" (")) return pid;
    }
    return std::nullopt;
}

// "oom-kill:constraint=...,task=COMM,pid=PID,uid=UID": the pid after the
// last ",pid=" (COMM, the process's own name, comes before it and may hold
// ",pid=" itself; the uid field after it is digits).
std::optional<std::int32_t> oom_summary(const health::KmsgRecord& r) {
    const auto body = health::kernel_text(r, "oom-kill:");
    if (!body) return std::nullopt;
    const auto at = body->rfind(",pid=");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = body->substr(at + 5);
    auto pid = leading_pid(rest);
    if (!pid || !(rest.empty() || rest.starts_with(","))) return std::nullopt;
    return pid;
}

// The job and the killed process's uid of an "oom-kill:...,task_memcg=PATH,...,pid=PID,uid=UID"
// summary: the first "/job_N" segment of PATH (SLURM's, above any cgroup a user can name) and
// UID (the line's last field: digits after the last ",uid=", past the process's own name).
std::optional<std::pair<std::uint32_t, std::uint32_t>> oom_job(const health::KmsgRecord& r) {
    const auto body = health::kernel_text(r, "oom-kill:");
    if (!body) return std::nullopt;
    const auto u = body->rfind(",uid=");
    const auto m = body->find(",task_memcg=");
    if (u == std::string_view::npos || m == std::string_view::npos || m > u) return std::nullopt;
    const auto uid = parse_uint<std::uint32_t>(body->substr(u + 5));
    std::string_view path = body->substr(m + 12);
    path = path.substr(0, path.find(','));
    const auto j = path.find("/job_");
    if (!uid || j == std::string_view::npos) return std::nullopt;
    std::string_view rest = path.substr(j + 5);
    const auto job = parse_uint<std::uint32_t>(rest.substr(0, rest.find('/')));
    if (!job) return std::nullopt;
    return std::pair{*job, *uid};
}

bool is_word(std::string_view s) {
    if (s.empty() || s.size() > 32) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

// "DRIVER BUSID[ IFNAME]: <down words>" -> the interface (or the bus id).
std::optional<std::string> link_down(const health::KmsgRecord& r) {
    if (r.facility != 0) return std::nullopt;
    std::string_view m = r.message;
    const auto sp1 = m.find(' ');
    if (sp1 == std::string_view::npos || !is_word(m.substr(0, sp1))) return std::nullopt;
    m.remove_prefix(sp1 + 1);
    const auto colon_sp = m.find(": ");
    if (colon_sp == std::string_view::npos) return std::nullopt;
    std::string_view head = m.substr(0, colon_sp), words = m.substr(colon_sp + 2);
    std::string_view bus = head, ifname;
    if (const auto sp2 = head.find(' '); sp2 != std::string_view::npos) {
        bus = head.substr(0, sp2);
        ifname = head.substr(sp2 + 1);
        if (!is_word(ifname)) return std::nullopt;
    }
    const auto id = gangway::pci_bus_id(bus);
    if (!id) return std::nullopt;
    // Some drivers name the interface again after the colon ("ixgbe BUS: eth0: NIC Link is Down").
    if (ifname.empty()) {
        if (const auto c = words.find(": "); c != std::string_view::npos && is_word(words.substr(0, c))) {
            ifname = words.substr(0, c);
            words.remove_prefix(c + 2);
        }
    }
    for (const std::string_view down : {"Link down", "Link Down", "NIC Link is Down", "Link is Down", "Link is down"})
        if (words.starts_with(down)) return std::string(ifname.empty() ? std::string_view(*id) : ifname);
    return std::nullopt;
}

// "INFO: task COMM:PID blocked for more than N seconds." -> pid and N.
std::optional<std::pair<std::int32_t, std::int64_t>> hung_task(const health::KmsgRecord& r) {
    const auto body = health::kernel_text(r, "INFO: task ");
    if (!body) return std::nullopt;
    const std::string_view marker = " blocked for more than ";
    const auto at = body->rfind(marker);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view who = body->substr(0, at);
    const auto colon = who.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view pid_text = who.substr(colon + 1);
    auto pid = leading_pid(pid_text);
    if (!pid || !pid_text.empty()) return std::nullopt;
    std::string_view secs_text = body->substr(at + marker.size());
    const auto sp = secs_text.find(' ');
    const auto secs = parse_uint<std::uint32_t>(secs_text.substr(0, sp));
    if (!secs) return std::nullopt;
    return std::pair{*pid, static_cast<std::int64_t>(*secs)};
}

}  // namespace

std::vector<Evidence> kernel_signs(std::string_view records, const KmsgWindow& w, std::vector<unsigned>* other_xids) {
    std::vector<Evidence> out;
    std::vector<std::int32_t> oom_pids;  // one sign per killed process
    auto of_job = [&](std::int32_t pid) { return std::find(w.job_pids.begin(), w.job_pids.end(), pid) != w.job_pids.end(); };
    for_each_line(records, [&](std::string_view line, std::size_t) {
        if (out.size() >= kMaxEvidence) return;
        const auto r = health::parse_kmsg_record(line);
        if (!r || r->usec < w.from_usec || r->usec > w.to_usec) return;
        Evidence e;
        // A time no kernel can have logged (past 2^63 ns from its zero) is
        // not a record of this node's kernel: passed over, never wrapped.
        std::int64_t ns = 0;
        if (r->usec > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1000) ||
            __builtin_add_overflow(w.boot_ns, static_cast<std::int64_t>(r->usec) * 1000, &ns))
            return;
        e.t_ns = ns;
        e.text = record_text(r->message);
        if (r->message.starts_with(health::kXidTag)) {
            const auto xids = health::parse_kmsg_xids(line);
            if (xids.empty()) return;
            if (std::find(w.fatal_xids.begin(), w.fatal_xids.end(), xids.front().xid) == w.fatal_xids.end()) {
                if (other_xids && other_xids->size() < kMaxEvidence) other_xids->push_back(xids.front().xid);
                return;
            }
            e.sign = Sign::gpu_xid;
            e.device = xids.front().bus_id;
            e.code = xids.front().xid;
        } else if (auto pid = oom_killed(*r) ? oom_killed(*r) : oom_summary(*r)) {
            if (std::find(oom_pids.begin(), oom_pids.end(), *pid) != oom_pids.end()) return;
            if (w.job && !of_job(*pid)) {
                const auto in = oom_job(*r);
                if (!in || in->first != *w.job || !w.job_uid || in->second != *w.job_uid) return;
            }
            oom_pids.push_back(*pid);
            e.sign = Sign::oom_kill;
            e.pid = *pid;
        } else if (auto dev = link_down(*r)) {
            e.sign = Sign::link_down;
            e.device = *dev;
        } else if (auto hung = hung_task(*r)) {
            if (w.job && !of_job(hung->first)) return;
            e.sign = Sign::hung_task;
            e.pid = hung->first;
            e.code = hung->second;
        } else {
            return;
        }
        out.push_back(std::move(e));
    });
    return out;
}

WindowLoss kmsg_lost_in_window(std::string_view records, const KmsgWindow& w, std::optional<std::uint64_t> after) {
    WindowLoss l;
    if (after) {
        const auto loss = health::kmsg_lost(records, after);
        l.records = loss.records, l.first = loss.first, l.last = loss.last;
        return l;
    }
    std::optional<std::uint64_t> before;  // the last record before the window
    std::size_t from = records.size();    // where the window's records start
    bool first = true;
    for_each_line(records, [&](std::string_view line, std::size_t) {
        const auto r = health::parse_kmsg_record(line);
        if (!r || from != records.size()) return;
        if (r->usec < w.from_usec) {
            before = r->seq;
        } else {
            from = static_cast<std::size_t>(line.data() - records.data());
            // The oldest record left is in the window and is not the log's first: the buffer
            // wrapped during the job, and what the window held before it is gone.
            if (first && r->seq > 0) l.before_oldest = true, l.oldest_seq = r->seq, l.oldest_usec = r->usec;
        }
        first = false;
    });
    if (from == records.size()) return l;
    const auto loss = health::kmsg_lost(records.substr(from), before);
    l.records = loss.records, l.first = loss.first, l.last = loss.last;
    return l;
}

std::string describe(const WindowLoss& l, const KmsgWindow& w) {
    if (!l.any()) return {};
    std::string s = "the kernel log lost ";
    if (l.records)
        s += std::to_string(l.records) + " record(s) in the job window (numbers " + std::to_string(l.first) + " to " +
             std::to_string(l.last) + ")";
    if (l.records && l.before_oldest) s += ", and ";
    if (l.before_oldest) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f", double(l.oldest_usec - std::min(l.oldest_usec, w.from_usec)) / 1e6);
        s += "the records of the window before its oldest left (number " + std::to_string(l.oldest_seq) + ", " + b +
             " s into the window)";
    }
    return s + ": a flood of kernel messages wrapped its buffer; an Xid or OOM kill among them is not judged (journalctl -k may still hold it)";
}

}  // namespace gangway::postmortem
