#include "store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include "sqlite.hpp"

namespace gangway::sys::fleet {
namespace {

using gangway::fleet::Metric;
using gangway::fleet::Source;

constexpr std::int64_t kDay = 86400;

// The schema, created in one transaction by the first writer. The texts of
// `metric` and `source` are model.hpp's names, which never change meaning.
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checks(
  row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, uid INTEGER NOT NULL,
  time INTEGER NOT NULL, job_id TEXT NOT NULL, verdict TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS checks_time ON checks(time);
CREATE TABLE IF NOT EXISTS check_nodes(
  check_row INTEGER NOT NULL, node TEXT NOT NULL, PRIMARY KEY(check_row, node)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS check_nodes_node ON check_nodes(node);
CREATE TABLE IF NOT EXISTS figures(
  check_row INTEGER NOT NULL, node TEXT NOT NULL, device TEXT NOT NULL, peer TEXT NOT NULL,
  peer_class TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL, time INTEGER NOT NULL,
  source TEXT NOT NULL, uid INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS figures_node_time ON figures(node, time);
CREATE INDEX IF NOT EXISTS figures_time ON figures(time);
CREATE TABLE IF NOT EXISTS findings(
  check_row INTEGER NOT NULL, node TEXT NOT NULL, text TEXT NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS findings_time ON findings(time);
CREATE TABLE IF NOT EXISTS daily(
  node TEXT NOT NULL, day INTEGER NOT NULL, device TEXT NOT NULL, peer TEXT NOT NULL,
  peer_class TEXT NOT NULL, metric TEXT NOT NULL, source TEXT NOT NULL, uid INTEGER NOT NULL,
  value REAL NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(node, day, device, peer, peer_class, metric, source, uid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stops(
  time INTEGER NOT NULL, job INTEGER NOT NULL, step INTEGER NOT NULL, node TEXT NOT NULL, rank INTEGER NOT NULL,
  cause TEXT NOT NULL, node_class INTEGER NOT NULL, requeued INTEGER NOT NULL, line TEXT NOT NULL, timeline TEXT NOT NULL,
  UNIQUE(job, time, node));
CREATE INDEX IF NOT EXISTS stops_node_time ON stops(node, time);
CREATE INDEX IF NOT EXISTS stops_time ON stops(time);
)sql";

// "?2,?3,..." for a node filter whose values are bound from `first` on.
std::string placeholders(std::size_t n, int first) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += (i ? ",?" : "?") + std::to_string(first + int(i));
    return s;
}

Failure fail(const Stmt& st) { return Failure{st.error()}; }

}  // namespace

void Store::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(const std::string& path, OpenMode mode) {
    const std::string where = "the fleet store " + path;
    if (mode == OpenMode::read_write) {
        // Created private to root's group before SQLite sees it: the figures
        // are users' jobs' numbers and node names, not for every user.
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (fd >= 0) ::close(fd);
        else if (errno != EEXIST)
            return Failure{where + ": cannot create it: " + std::strerror(errno) + " (is its directory there and yours?)"};
    }
    sqlite3* raw = nullptr;
    const int flags = (mode == OpenMode::read_write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOFOLLOW |
                      SQLITE_OPEN_FULLMUTEX;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    Store s(raw, path);
    if (rc != SQLITE_OK)
        return Failure{sqlite_error(raw, where + " cannot be opened") +
                       (mode == OpenMode::read_only ? " (run `gangway fleet ingest` first, or pass --db)" : "")};
    sqlite3_busy_timeout(raw, kBusyTimeoutMs);
    sqlite3_extended_result_codes(raw, 1);
    if (mode == OpenMode::read_write) {
        if (auto r = exec(raw, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !r)
            return Failure{where + ": " + r.error()};
        // The -wal and -shm files stay when the writer closes (made with the
        // store's mode and owner), so that a reader without write access to
        // the directory (fleet serve as a service user of the store's group)
        // can open the store read-only: SQLite needs them there to do so.
        int persist = 1;
        sqlite3_file_control(raw, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
        Transaction tx(raw);
        if (auto r = tx.begin(); !r) return Failure{where + ": " + r.error()};
        if (auto r = exec(raw, kSchemaSql); !r) return Failure{where + ": " + r.error()};
        Stmt put(raw, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema', ?1)");
        if (!put.ok() || !put.bind(1, std::int64_t(kStoreSchema)).run()) return fail(put);
        // Schema 1 to 2 added only the stops table, which kSchemaSql has just made.
        if (auto r = exec(raw, "UPDATE meta SET value = '2' WHERE key = 'schema' AND value = '1'"); !r)
            return Failure{where + ": " + r.error()};
        if (auto r = tx.commit(); !r) return Failure{where + ": " + r.error()};
    }
    Stmt get(raw, "SELECT value FROM meta WHERE key = 'schema'");
    if (!get.ok()) return Failure{where + " is not a gangway fleet store (" + get.error() + ")"};
    if (!get.step()) return Failure{where + " is not a gangway fleet store (it has no schema version)"};
    const std::string v = get.text(0);
    // A reader takes a schema-1 store as one without stops (a writer has migrated it above).
    if (v == "1" && mode == OpenMode::read_only) s.has_stops_ = false;
    else if (v != std::to_string(kStoreSchema))
        return Failure{where + " has schema " + v + ", this gangway reads " + std::to_string(kStoreSchema) +
                       ": use the gangway that made it, or start a new store with --db"};
    return s;
}

Result<bool> Store::has_check(const std::string& id) {
    Stmt st(db_.get(), "SELECT 1 FROM checks WHERE id = ?1");
    if (!st.ok()) return fail(st);
    st.bind(1, id);
    const bool there = st.step();
    if (!st.error().empty()) return fail(st);
    return there;
}

Result<bool> Store::insert(const CheckRecord& rec) {
    sqlite3* db = db_.get();
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return Failure{r.error()};
    const auto& c = rec.check;
    const char* src = gangway::fleet::to_string(c.source);
    Stmt ins(db, "INSERT INTO checks(id, source, uid, time, job_id, verdict) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
                 "ON CONFLICT(id) DO NOTHING");
    if (!ins.ok()) return fail(ins);
    ins.bind(1, c.id).bind(2, std::string_view(src)).bind(3, std::int64_t(c.uid)).bind(4, c.time).bind(5, c.job_id).bind(6, c.verdict);
    if (!ins.run()) return fail(ins);
    if (sqlite3_changes(db) == 0) return false;  // already stored: the transaction rolls back, nothing changed
    const std::int64_t row = sqlite3_last_insert_rowid(db);

    Stmt node(db, "INSERT OR IGNORE INTO check_nodes(check_row, node) VALUES(?1, ?2)");
    if (!node.ok()) return fail(node);
    for (const auto& n : c.nodes) {
        node.reset();
        if (!node.bind(1, row).bind(2, n).run()) return fail(node);
    }
    Stmt fig(db, "INSERT INTO figures(check_row, node, device, peer, peer_class, metric, value, time, source, uid) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!fig.ok()) return fail(fig);
    for (const auto& f : rec.figures) {
        fig.reset();
        // The check's time, source and uid, whatever the row says: they are the ingest's word.
        fig.bind(1, row).bind(2, f.node).bind(3, f.device).bind(4, f.peer).bind(5, f.peer_class)
            .bind(6, std::string_view(gangway::fleet::to_string(f.metric))).bind(7, f.value).bind(8, c.time)
            .bind(9, std::string_view(src)).bind(10, std::int64_t(c.uid));
        if (!fig.run()) return fail(fig);
    }
    Stmt fnd(db, "INSERT INTO findings(check_row, node, text, time) VALUES(?1, ?2, ?3, ?4)");
    if (!fnd.ok()) return fail(fnd);
    for (const auto& f : rec.findings) {
        fnd.reset();
        if (!fnd.bind(1, row).bind(2, f.node).bind(3, f.text).bind(4, c.time).run()) return fail(fnd);
    }
    if (auto r = tx.commit(); !r) return Failure{r.error()};
    return true;
}

Result<std::vector<Figure>> Store::figures(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    const std::string in = nodes.empty() ? "" : placeholders(nodes.size(), 3);
    const std::string sql =
        "SELECT c.id, f.time, f.source, f.uid, f.node, f.device, f.peer, f.peer_class, f.metric, f.value, 0, 1 "
        "FROM figures f JOIN checks c ON c.row = f.check_row WHERE f.time >= ?1 AND f.time < ?2" +
        (in.empty() ? "" : " AND f.node IN (" + in + ")") +
        " UNION ALL SELECT '', day, source, uid, node, device, peer, peer_class, metric, value, 1, count "
        "FROM daily WHERE day < ?2 AND day > ?1 - 86400" +
        (in.empty() ? "" : " AND node IN (" + in + ")") + " ORDER BY 5, 2, 1, 9, 6, 7";
    Stmt st(db_.get(), sql.c_str());
    if (!st.ok()) return fail(st);
    st.bind(1, since).bind(2, until);
    for (std::size_t i = 0; i < nodes.size(); ++i) st.bind(3 + int(i), nodes[i]);
    std::vector<Figure> out;
    while (st.step()) {
        const auto src = gangway::fleet::parse_source(st.text(2));
        const auto met = gangway::fleet::parse_metric(st.text(8));
        if (!src || !met) continue;  // a name this gangway does not know (a newer one's): left out
        Figure f;
        f.check_id = st.text(0);
        f.time = st.int64(1);
        f.source = *src;
        f.uid = std::uint32_t(st.int64(3));
        f.node = st.text(4);
        f.device = st.text(5);
        f.peer = st.text(6);
        f.peer_class = st.text(7);
        f.metric = *met;
        f.value = st.real(9);
        f.daily = st.int64(10) != 0;
        f.count = std::uint32_t(st.int64(11));
        out.push_back(std::move(f));
    }
    if (!st.error().empty()) return fail(st);
    return out;
}

Result<std::vector<CheckRow>> Store::checks(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    const std::string sql = "SELECT row, id, source, uid, time, job_id, verdict FROM checks WHERE time >= ?1 AND time < ?2" +
                            (nodes.empty() ? std::string()
                                           : " AND row IN (SELECT check_row FROM check_nodes WHERE node IN (" +
                                                 placeholders(nodes.size(), 3) + "))") +
                            " ORDER BY time, id";
    Stmt st(db_.get(), sql.c_str());
    if (!st.ok()) return fail(st);
    st.bind(1, since).bind(2, until);
    for (std::size_t i = 0; i < nodes.size(); ++i) st.bind(3 + int(i), nodes[i]);
    Stmt ns(db_.get(), "SELECT node FROM check_nodes WHERE check_row = ?1 ORDER BY node");
    if (!ns.ok()) return fail(ns);
    std::vector<CheckRow> out;
    while (st.step()) {
        CheckRow c;
        const auto src = gangway::fleet::parse_source(st.text(2));
        if (!src) continue;
        c.id = st.text(1);
        c.source = *src;
        c.uid = std::uint32_t(st.int64(3));
        c.time = st.int64(4);
        c.job_id = st.text(5);
        c.verdict = st.text(6);
        ns.reset();
        ns.bind(1, st.int64(0));
        while (ns.step()) c.nodes.push_back(ns.text(0));
        if (!ns.error().empty()) return fail(ns);
        out.push_back(std::move(c));
    }
    if (!st.error().empty()) return fail(st);
    return out;
}

Result<std::vector<FindingRow>> Store::findings(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    const std::string sql =
        "SELECT c.id, f.node, f.text FROM findings f JOIN checks c ON c.row = f.check_row WHERE f.time >= ?1 AND f.time < ?2" +
        (nodes.empty() ? std::string() : " AND f.node IN (" + placeholders(nodes.size(), 3) + ")") + " ORDER BY f.time, c.id, f.rowid";
    Stmt st(db_.get(), sql.c_str());
    if (!st.ok()) return fail(st);
    st.bind(1, since).bind(2, until);
    for (std::size_t i = 0; i < nodes.size(); ++i) st.bind(3 + int(i), nodes[i]);
    std::vector<FindingRow> out;
    while (st.step()) out.push_back(FindingRow{st.text(0), st.text(1), st.text(2)});
    if (!st.error().empty()) return fail(st);
    return out;
}

Result<std::vector<std::string>> Store::nodes() {
    Stmt st(db_.get(),
            "SELECT node FROM check_nodes UNION SELECT node FROM figures UNION SELECT node FROM daily ORDER BY 1");
    if (!st.ok()) return fail(st);
    std::vector<std::string> out;
    while (st.step())
        if (auto n = st.text(0); !n.empty()) out.push_back(std::move(n));
    if (!st.error().empty()) return fail(st);
    return out;
}

Result<FoldResult> Store::fold(std::int64_t now, int keep_days) {
    if (keep_days < 1) return Failure{"the fleet store keeps at least one day of raw figures (--keep-days 1 or more)"};
    // Whole UTC days only, so that a day is folded once, when it is all there.
    const std::int64_t cut = (now - std::int64_t(keep_days) * kDay) / kDay * kDay;
    sqlite3* db = db_.get();
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return Failure{r.error()};
    Stmt sel(db, "SELECT node, device, peer, peer_class, metric, source, uid, time / 86400 * 86400 AS day, value FROM figures "
                 "WHERE time < ?1 ORDER BY node, device, peer, peer_class, metric, source, uid, day, value");
    if (!sel.ok()) return fail(sel);
    sel.bind(1, cut);
    // A day folded before (figures that arrived late) merges by a
    // count-weighted mean of the two medians: close enough for a baseline.
    Stmt put(db, "INSERT INTO daily(node, day, device, peer, peer_class, metric, source, uid, value, count) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                 "ON CONFLICT DO UPDATE SET value = (value * count + excluded.value * excluded.count) / (count + excluded.count), "
                 "count = count + excluded.count");
    if (!put.ok()) return fail(put);
    FoldResult res;
    using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::int64_t, std::int64_t>;
    Key cur;
    std::vector<double> vals;
    auto flush = [&]() -> bool {
        if (vals.empty()) return true;
        const std::size_t n = vals.size();
        const double med = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;  // sorted by the query
        put.reset();
        put.bind(1, std::get<0>(cur)).bind(2, std::get<7>(cur)).bind(3, std::get<1>(cur)).bind(4, std::get<2>(cur))
            .bind(5, std::get<3>(cur)).bind(6, std::get<4>(cur)).bind(7, std::get<5>(cur)).bind(8, std::get<6>(cur))
            .bind(9, med).bind(10, std::int64_t(n));
        ++res.daily;
        res.figures += n;
        vals.clear();
        return put.run();
    };
    while (sel.step()) {
        Key k{sel.text(0), sel.text(1), sel.text(2), sel.text(3), sel.text(4), sel.text(5), sel.int64(6), sel.int64(7)};
        if (k != cur && !flush()) return fail(put);
        cur = std::move(k);
        vals.push_back(sel.real(8));
    }
    if (!sel.error().empty()) return fail(sel);
    if (!flush()) return fail(put);
    for (const char* sql : {"DELETE FROM figures WHERE time < ?1", "DELETE FROM findings WHERE time < ?1",
                            "DELETE FROM check_nodes WHERE check_row IN (SELECT row FROM checks WHERE time < ?1)"}) {
        Stmt del(db, sql);
        if (!del.ok() || !del.bind(1, cut).run()) return fail(del);
    }
    if (auto r = tx.commit(); !r) return Failure{r.error()};
    return res;
}

}  // namespace gangway::sys::fleet
