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

Result<void> Store::replace_latest_stop(const StopRow& r) {
    Stmt up(db_.get(), "UPDATE stops SET step = ?2, node = ?3, rank = ?4, cause = ?5, node_class = ?6, line = ?7, timeline = ?8 "
                       "WHERE rowid = (SELECT rowid FROM stops WHERE job = ?1 ORDER BY time DESC LIMIT 1)");
    if (!up.ok()) return Failure{up.error()};
    up.bind(1, std::int64_t(r.job)).bind(2, std::int64_t(r.step)).bind(3, r.node).bind(4, r.rank).bind(5, r.cause);
    up.bind(6, std::int64_t(r.node_class)).bind(7, r.line).bind(8, r.timeline);
    if (!up.run()) return Failure{up.error()};
    if (sqlite3_changes(db_.get()) > 0) return {};
    auto ins = insert_stop(r);
    if (!ins) return Failure{ins.error()};
    return {};
}

Result<void> Store::mark_stop_requeued(std::uint32_t job, std::int64_t time) {
    Stmt up(db_.get(), "UPDATE stops SET requeued = 1 WHERE job = ?1 AND time = ?2");
    if (!up.ok()) return Failure{up.error()};
    up.bind(1, std::int64_t(job)).bind(2, time);
    if (!up.run()) return Failure{up.error()};
    return {};
}

namespace {

Result<std::vector<Store::StopRecord>> record_rows(Stmt& st) {
    std::vector<Store::StopRecord> out;
    while (st.step())
        out.push_back({std::uint32_t(st.int64(0)), st.text(1), st.int64(2), st.int64(3), int(st.int64(4)), std::string(st.blob(5))});
    if (!st.error().empty()) return Failure{st.error()};
    return out;
}

constexpr const char* kRecordColumns = "SELECT job, node, run, received, state, body FROM stop_records ";

}  // namespace

Result<bool> Store::insert_stop_record(const StopRecord& r) {
    Stmt ins(db_.get(), "INSERT INTO stop_records(job, node, run, received, state, body) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
                        "ON CONFLICT DO NOTHING");
    if (!ins.ok()) return Failure{ins.error()};
    ins.bind(1, std::int64_t(r.job)).bind(2, r.node).bind(3, r.run).bind(4, r.received).bind(5, std::int64_t(r.state));
    ins.bind_blob(6, r.body);
    if (!ins.run()) return Failure{ins.error()};
    return sqlite3_changes(db_.get()) > 0;
}

Result<void> Store::delete_stop_record(std::uint32_t job, const std::string& node, std::int64_t run) {
    Stmt del(db_.get(), "DELETE FROM stop_records WHERE job = ?1 AND node = ?2 AND run = ?3");
    if (!del.ok()) return Failure{del.error()};
    del.bind(1, std::int64_t(job)).bind(2, node).bind(3, run);
    if (!del.run()) return Failure{del.error()};
    return {};
}

Result<std::vector<Store::StopRecord>> Store::stop_records_below(int below) {
    Stmt st(db_.get(), (std::string(kRecordColumns) + "WHERE state < ?1 ORDER BY received, job").c_str());
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(below));
    return record_rows(st);
}

Result<std::vector<Store::StopRecord>> Store::judged_stop_records(std::uint32_t job) {
    Stmt st(db_.get(), (std::string(kRecordColumns) + "WHERE job = ?1 AND state >= 1 ORDER BY received").c_str());
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(job));
    return record_rows(st);
}

Result<void> Store::set_stop_records_state(std::uint32_t job, int from, int to) {
    Stmt up(db_.get(), "UPDATE stop_records SET state = ?3 WHERE job = ?1 AND state = ?2");
    if (!up.ok()) return Failure{up.error()};
    up.bind(1, std::int64_t(job)).bind(2, std::int64_t(from)).bind(3, std::int64_t(to));
    if (!up.run()) return Failure{up.error()};
    return {};
}

Result<void> Store::forget_stop_records(std::int64_t forget_before) {
    Stmt del(db_.get(), "DELETE FROM stop_records WHERE state >= 1 AND received < ?1");
    if (!del.ok()) return Failure{del.error()};
    del.bind(1, forget_before);
    if (!del.run()) return Failure{del.error()};
    return {};
}

Result<void> Store::set_stop_owner(std::uint32_t job, std::int64_t uid) {
    Stmt ins(db_.get(), "INSERT INTO stop_owners(job, uid) VALUES(?1, ?2) ON CONFLICT(job) DO UPDATE SET uid = excluded.uid");
    if (!ins.ok()) return Failure{ins.error()};
    ins.bind(1, std::int64_t(job)).bind(2, uid);
    if (!ins.run()) return Failure{ins.error()};
    return {};
}

Result<std::int64_t> Store::stop_owner(std::uint32_t job) {
    Stmt st(db_.get(), "SELECT uid FROM stop_owners WHERE job = ?1");
    if (!st.ok()) return Failure{st.error()};
    st.bind(1, std::int64_t(job));
    if (st.step()) return st.int64(0);
    if (!st.error().empty()) return Failure{st.error()};
    return std::int64_t(-1);
}

}  // namespace gangway::sys::fleet
