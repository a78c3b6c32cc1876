// The running jobs' stragglers and hangs in the fleet store (issue 43):
// written by `fleet serve`'s watch (lib/sys/watch/watch_service) each time
// it names one, read by `fleet metrics` and `fleet flagged`.
#include <sqlite3.h>

#include <algorithm>

#include "sqlite.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {
namespace {
// A store an earlier gangway made, opened read-only since: no table yet, no events.
bool no_table(const Stmt& st) { return !st.ok() && st.error().find("no such table") != std::string::npos; }
}  // namespace

using gangway::fleet::WatchEvent;
using gangway::fleet::WatchKind;

Result<void> Store::upsert_watch_event(const WatchEvent& e) {
    Stmt st(db_.get(),
            "INSERT INTO watch_events(job, step, kind, node, first, last, confirmed, line) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
            "ON CONFLICT(job, step, kind, node) DO UPDATE SET last = MAX(last, excluded.last), "
            "confirmed = MAX(confirmed, excluded.confirmed), line = excluded.line");
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(e.job)).bind(2, std::int64_t(e.step)).bind(3, std::int64_t(e.kind)).bind(4, e.node);
    st.bind(5, e.first).bind(6, e.last).bind(7, std::int64_t(e.confirmed)).bind(8, e.line);
    if (!st.run()) return Failure{st.error()};
    return {};
}

Result<std::vector<WatchEvent>> Store::watch_events(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    Stmt st(db_.get(), "SELECT job, step, kind, node, first, last, confirmed, line FROM watch_events WHERE last >= ?1 AND last < ?2 "
                       "ORDER BY last");
    if (no_table(st)) return std::vector<WatchEvent>{};
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, since).bind(2, until);
    std::vector<WatchEvent> out;
    while (st.step()) {
        WatchEvent e;
        e.job = std::uint32_t(st.int64(0));
        e.step = std::uint32_t(st.int64(1));
        e.kind = st.int64(2) == std::int64_t(WatchKind::hang) ? WatchKind::hang : WatchKind::straggler;
        e.node = st.text(3);
        e.first = st.int64(4);
        e.last = st.int64(5);
        e.confirmed = st.int64(6) != 0;
        e.line = st.text(7);
        if (nodes.empty() || std::find(nodes.begin(), nodes.end(), e.node) != nodes.end()) out.push_back(std::move(e));
    }
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

Result<std::vector<gangway::fleet::RunningStraggler>> Store::running_stragglers(std::int64_t fresh_since) {
    Stmt st(db_.get(), "SELECT job, node FROM watch_events WHERE kind = ?1 AND confirmed = 1 AND last >= ?2 ORDER BY job, node");
    if (no_table(st)) return std::vector<gangway::fleet::RunningStraggler>{};
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(WatchKind::straggler)).bind(2, fresh_since);
    std::vector<gangway::fleet::RunningStraggler> out;
    while (st.step()) {
        // One series a job and node, whatever its steps.
        gangway::fleet::RunningStraggler r{std::uint32_t(st.int64(0)), st.text(1)};
        if (out.empty() || out.back().job != r.job || out.back().node != r.node) out.push_back(std::move(r));
    }
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

Result<std::vector<gangway::fleet::HangCount>> Store::hang_counts() {
    Stmt st(db_.get(), "SELECT node, COUNT(*) FROM watch_events WHERE kind = ?1 AND confirmed = 1 AND node != '' GROUP BY node ORDER BY node");
    if (no_table(st)) return std::vector<gangway::fleet::HangCount>{};
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(WatchKind::hang));
    std::vector<gangway::fleet::HangCount> out;
    while (st.step()) out.push_back({st.text(0), std::uint64_t(st.int64(1))});
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

}  // namespace gangway::sys::fleet
