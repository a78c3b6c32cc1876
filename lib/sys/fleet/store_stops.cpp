// The job stops in the fleet store (issue 33): written by `fleet serve
// --stops-key` after each verdict, read by `fleet stops`, `fleet flagged`,
// the metrics and GET /v1/stops/JOB.
#include <sqlite3.h>

#include "sqlite.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {
namespace {

using gangway::fleet::StopRow;

constexpr const char* kColumns = "time, job, step, node, rank, cause, node_class, requeued, line, timeline";

StopRow row_of(const Stmt& st) {
    StopRow r;
    r.time = st.int64(0);
    r.job = std::uint32_t(st.int64(1));
    r.step = std::uint32_t(st.int64(2));
    r.node = st.text(3);
    r.rank = st.int64(4);
    r.cause = st.text(5);
    r.node_class = st.int64(6) != 0;
    r.requeued = st.int64(7) != 0;
    r.line = st.text(8);
    r.timeline = st.text(9);
    return r;
}

Result<std::vector<StopRow>> all_rows(Stmt& st) {
    std::vector<StopRow> out;
    while (st.step()) out.push_back(row_of(st));
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

}  // namespace

Result<bool> Store::insert_stop(const StopRow& r) {
    Stmt ins(db_.get(), "INSERT INTO stops(time, job, step, node, rank, cause, node_class, requeued, line, timeline) "
                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING");
    if (!ins.ok()) return Failure{ins.error()};
    ins.bind(1, r.time).bind(2, std::int64_t(r.job)).bind(3, std::int64_t(r.step)).bind(4, r.node).bind(5, r.rank);
    ins.bind(6, r.cause).bind(7, std::int64_t(r.node_class)).bind(8, std::int64_t(r.requeued)).bind(9, r.line).bind(10, r.timeline);
    if (!ins.run()) return Failure{ins.error()};
    return sqlite3_changes(db_.get()) > 0;
}

Result<std::vector<StopRow>> Store::stops(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    std::string sql = std::string("SELECT ") + kColumns + " FROM stops WHERE time >= ?1 AND time < ?2";
    if (!nodes.empty()) {
        sql += " AND node IN (";
        for (std::size_t i = 0; i < nodes.size(); ++i) sql += (i ? ",?" : "?") + std::to_string(i + 3);
        sql += ")";
    }
    sql += " ORDER BY time, job";
    Stmt st(db_.get(), sql.c_str());
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, since).bind(2, until);
    for (std::size_t i = 0; i < nodes.size(); ++i) st.bind(int(i + 3), nodes[i]);
    return all_rows(st);
}

Result<std::vector<StopRow>> Store::stops_of_job(std::uint32_t job) {
    Stmt st(db_.get(), (std::string("SELECT ") + kColumns + " FROM stops WHERE job = ?1 ORDER BY time").c_str());
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(job));
    return all_rows(st);
}

Result<std::vector<gangway::fleet::StopCount>> Store::stop_counts() {
    std::vector<gangway::fleet::StopCount> out;
    Stmt st(db_.get(), "SELECT node, cause, COUNT(*) FROM stops WHERE node != '' GROUP BY node, cause ORDER BY node, cause");
    if (!st.ok()) return Failure{st.error()};
    while (st.step()) out.push_back({st.text(0), st.text(1), std::uint64_t(st.int64(2))});
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

}  // namespace gangway::sys::fleet
