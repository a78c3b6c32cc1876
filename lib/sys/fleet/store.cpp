#include "store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
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
// check_nodes has no index by node (a store before issue 34 had one, which
// the next writer drops): no reader looks checks up by node but
// Store::checks with a node filter, which no command calls, and a 2,048-node
// report put 2,048 entries across all of that index's pages: a fifth of the
// pages the ingest of such a report wrote into the 30-day store (676 of 3,400).
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checks(
  row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, uid INTEGER NOT NULL,
  time INTEGER NOT NULL, job_id TEXT NOT NULL, verdict TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS checks_time ON checks(time);
CREATE TABLE IF NOT EXISTS check_nodes(
  check_row INTEGER NOT NULL, node TEXT NOT NULL, PRIMARY KEY(check_row, node)) WITHOUT ROWID;
DROP INDEX IF EXISTS check_nodes_node;
CREATE TABLE IF NOT EXISTS series(
  id INTEGER PRIMARY KEY, node TEXT NOT NULL, device TEXT NOT NULL, peer TEXT NOT NULL,
  peer_class TEXT NOT NULL, metric TEXT NOT NULL, UNIQUE(node, metric, device, peer, peer_class));
CREATE TABLE IF NOT EXISTS points(
  node TEXT NOT NULL, day INTEGER NOT NULL, folded INTEGER NOT NULL DEFAULT 0, data BLOB NOT NULL,
  PRIMARY KEY(node, day));
CREATE INDEX IF NOT EXISTS points_unfolded ON points(day) WHERE folded = 0;
CREATE TABLE IF NOT EXISTS findings(
  check_row INTEGER NOT NULL, node TEXT NOT NULL, text TEXT NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS findings_time ON findings(time);
CREATE TABLE IF NOT EXISTS stops(
  time INTEGER NOT NULL, job INTEGER NOT NULL, step INTEGER NOT NULL, node TEXT NOT NULL, rank INTEGER NOT NULL,
  cause TEXT NOT NULL, node_class INTEGER NOT NULL, requeued INTEGER NOT NULL, line TEXT NOT NULL, timeline TEXT NOT NULL,
  UNIQUE(job, time, node));
CREATE INDEX IF NOT EXISTS stops_node_time ON stops(node, time);
CREATE INDEX IF NOT EXISTS stops_time ON stops(time);
CREATE TABLE IF NOT EXISTS stop_records(
  job INTEGER NOT NULL, node TEXT NOT NULL, run INTEGER NOT NULL, received INTEGER NOT NULL,
  state INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY(job, node, run));
CREATE INDEX IF NOT EXISTS stop_records_state ON stop_records(state, received);
CREATE TABLE IF NOT EXISTS stop_owners(job INTEGER PRIMARY KEY, uid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS watch_events(
  job INTEGER NOT NULL, step INTEGER NOT NULL, kind INTEGER NOT NULL, node TEXT NOT NULL, first INTEGER NOT NULL,
  last INTEGER NOT NULL, confirmed INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY(job, step, kind, node));
CREATE INDEX IF NOT EXISTS watch_events_last ON watch_events(last);
CREATE TABLE IF NOT EXISTS user_series(
  uid INTEGER NOT NULL, day INTEGER NOT NULL, added INTEGER NOT NULL, PRIMARY KEY(uid, day)) WITHOUT ROWID;
)sql";

// The UTC day's start of `t` (floor, also before 1970).
std::int64_t day_of(std::int64_t t) { return (t >= 0 ? t / kDay : -((-t + kDay - 1) / kDay)) * kDay; }

// The node whose rows keep a figure: a link's first node by name (both
// directions together), else its own.
const std::string& home_node(const Figure& f) {
    return f.metric == Metric::link_bandwidth && !f.peer.empty() && f.peer < f.node ? f.peer : f.node;
}

// "?2,?3,..." for a node filter whose values are bound from `first` on.
std::string placeholders(std::size_t n, int first) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += (i ? ",?" : "?") + std::to_string(first + int(i));
    return s;
}

Failure fail(const Stmt& st) { return Failure{st.error()}; }

}  // namespace

void Store::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

// The ingest's view of the series table: each node's series as the node's
// first figure loaded them (one query per node, not one per figure), and the
// statements, prepared once per store and reused (issue 34, item 2). Dropped
// whenever a transaction that may have added a series does not commit.
struct Store::SeriesCache {
    explicit SeriesCache(sqlite3* db)
        : of_node(db, "SELECT id, metric, device, peer, peer_class FROM series WHERE node = ?1"),
          add(db, "INSERT INTO series(node, device, peer, peer_class, metric) VALUES(?1, ?2, ?3, ?4, ?5) "
                  "ON CONFLICT DO NOTHING"),
          find(db, "SELECT id FROM series WHERE node = ?1 AND metric = ?2 AND device = ?3 AND peer = ?4 AND peer_class = ?5"),
          put(db, "INSERT INTO points(node, day, folded, data) VALUES(?1, ?2, 0, ?3) "
                  "ON CONFLICT(node, day) DO UPDATE SET data = CAST(data || excluded.data AS BLOB), folded = 0"),
          check(db, "INSERT INTO checks(id, source, uid, time, job_id, verdict) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
                    "ON CONFLICT(id) DO NOTHING"),
          node(db, "INSERT OR IGNORE INTO check_nodes(check_row, node) VALUES(?1, ?2)"),
          finding(db, "INSERT INTO findings(check_row, node, text, time) VALUES(?1, ?2, ?3, ?4)") {}
    bool ok() const { return of_node.ok() && add.ok() && find.ok() && put.ok() && check.ok() && node.ok() && finding.ok(); }
    std::string error() const {
        for (const Stmt* st : {&of_node, &add, &find, &put, &check, &node, &finding})
            if (!st->ok()) return st->error();
        return "";
    }
    // A node's series: (metric, device, peer, peer_class) -> id. Ordered,
    // not hashed: the names are users' text, and an order cannot be
    // collided into a list; a report's figures come in runs of one node,
    // so the node is looked up once per run of them (`last`).
    struct Name {
        Metric metric;
        std::string device, peer, cls;
    };
    struct View {
        Metric metric;
        std::string_view device, peer, cls;
    };
    struct Less {
        using is_transparent = void;
        static View v(const Name& n) { return {n.metric, n.device, n.peer, n.cls}; }
        static View v(const View& n) { return n; }
        // Field by field, each name compared once (a tuple's < compares each
        // field both ways: two memcmp a name where one says which is less).
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            const View x = v(a), y = v(b);
            if (x.metric != y.metric) return x.metric < y.metric;
            if (const int c = x.device.compare(y.device)) return c < 0;
            if (const int c = x.peer.compare(y.peer)) return c < 0;
            return x.cls < y.cls;
        }
    };
    // A node's series sorted by name (Less): a vector searched by halves,
    // filled by one query and sorted once, where a tree allocated a node a
    // series (a 2,048-node report loads 59,000 of them).
    struct Entry {
        Name name;
        std::uint32_t id;
    };
    using Node = std::vector<Entry>;
    static Node::iterator lower_bound(Node& n, const View& k) {
        return std::lower_bound(n.begin(), n.end(), k, [](const Entry& e, const View& x) { return Less{}(e.name, x); });
    }
    std::map<std::string, Node, std::less<>> nodes;
    std::pair<const std::string, Node>* last = nullptr;
    std::size_t held = 0;  // series in `nodes`
    std::uint64_t added = 0;  // series this writer added to the table (insert's count per check)
    // At most this many series are remembered from one report to the next
    // (some 5 MB): many small reports share the nodes' lookups, and an
    // ingest of large reports of ever other nodes starts over rather than
    // grow.
    static constexpr std::size_t kMaxHeld = 1u << 16;
    void forget_names() {
        nodes.clear();
        last = nullptr;
        held = 0;
    }
    Stmt of_node, add, find, put, check, node, finding;
};


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
        // WAL with synchronous=NORMAL: a commit does not wait for the disk
        // (the log is synced at each checkpoint). A crash of the process
        // loses nothing committed; a power cut keeps the store consistent
        // but may take back the commits since the last checkpoint, and a
        // check whose commit was lost is stored again when its report is
        // spooled again (a check is known by its id). FULL would sync every
        // report's commit (docs/fleet.md, "What a crash or a power cut
        // costs the store").
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
        // A new store is schema 2; a store of schema 1 keeps its word until converted below.
        Stmt put(raw, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema', ?1)");
        if (!put.ok() || !put.bind(1, std::int64_t(kStoreSchema)).run()) return fail(put);
        if (auto r = tx.commit(); !r) return Failure{where + ": " + r.error()};
    }
    std::string v;
    {
        Stmt get(raw, "SELECT value FROM meta WHERE key = 'schema'");
        if (!get.ok()) return Failure{where + " is not a gangway fleet store (" + get.error() + ")"};
        if (!get.step()) return Failure{where + " is not a gangway fleet store (it has no schema version)"};
        v = get.text(0);
    }
    if (v == "1" && mode == OpenMode::read_write) {
        if (auto r = s.convert_schema1(); !r) return Failure{where + ": converting it from schema 1: " + r.error()};
        v = std::to_string(kStoreSchema);
    }
    if (v == "1")
        return Failure{where + " has schema 1 (a row per figure), which the next `gangway fleet ingest` converts to " +
                       std::to_string(kStoreSchema) + " in place: run it (as root), then read"};
    if (v != std::to_string(kStoreSchema))
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

Result<std::uint32_t> Store::series_id(const Figure& f) {
    SeriesCache& c = *cache_;
    const std::string_view metric = gangway::fleet::to_string(f.metric);
    if (!c.last || c.last->first != f.node) {
        auto [it, fresh] = c.nodes.try_emplace(f.node);
        c.last = &*it;
        if (fresh) {
            SeriesCache::Node& node = it->second;
            c.of_node.reset();
            c.of_node.bind(1, f.node);
            while (c.of_node.step())
                if (const auto m = gangway::fleet::parse_metric(c.of_node.text_view(1)))
                    node.push_back({SeriesCache::Name{*m, c.of_node.text(2), c.of_node.text(3), c.of_node.text(4)},
                                    std::uint32_t(c.of_node.int64(0))});
            if (!c.of_node.error().empty()) return fail(c.of_node);
            const auto by_name = [](const SeriesCache::Entry& a, const SeriesCache::Entry& b) {
                return SeriesCache::Less{}(a.name, b.name);
            };
            std::sort(node.begin(), node.end(), by_name);
            c.held += node.size();  // the table's UNIQUE makes the names unique
        }
    }
    SeriesCache::Node& node = c.last->second;
    const SeriesCache::View want{f.metric, f.device, f.peer, f.peer_class};
    const auto at = SeriesCache::lower_bound(node, want);
    if (at != node.end() && !SeriesCache::Less{}(want, at->name)) return at->id;
    c.add.reset();
    c.add.bind(1, f.node).bind(2, f.device).bind(3, f.peer).bind(4, f.peer_class).bind(5, metric);
    if (!c.add.run()) return fail(c.add);
    std::int64_t id = 0;
    if (sqlite3_changes(db_.get()) == 1) {
        id = sqlite3_last_insert_rowid(db_.get());
        ++c.added;
    } else {  // another ingest added it since this one loaded the node's series
        c.find.reset();
        c.find.bind(1, f.node).bind(2, metric).bind(3, f.device).bind(4, f.peer).bind(5, f.peer_class);
        if (!c.find.step()) return Failure{c.find.error().empty() ? "the fleet store lost a series" : c.find.error()};
        id = c.find.int64(0);
        c.find.reset();
    }
    if (id <= 0 || id > std::int64_t(UINT32_MAX)) return Failure{"the fleet store has more series than it can number"};
    node.insert(SeriesCache::lower_bound(node, want), {SeriesCache::Name{f.metric, f.device, f.peer, f.peer_class}, std::uint32_t(id)});
    ++c.held;
    return std::uint32_t(id);
}

// The writer's series cache, made on first use (its statements prepared once
// per store handle).
Result<void> Store::ensure_cache() {
    if (cache_) return {};
    cache_ = std::make_unique<SeriesCache>(db_.get());
    if (cache_->ok()) return {};
    Failure e{cache_->error()};
    cache_.reset();
    return e;
}

namespace {
// A transaction that does not commit may have added series: the cache
// forgets them, unless the transaction committed (keep).
template <class Cache>
struct ForgetCache {
    std::unique_ptr<Cache>& c;
    bool keep = false;
    ~ForgetCache() {
        if (!keep) c.reset();
    }
};
}  // namespace

Result<void> Store::convert_schema1() {
    sqlite3* db = db_.get();
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return r;
    if (auto r = ensure_cache(); !r) return r;
    const ForgetCache forget{cache_};  // a one-off: dropped after the conversion either way
    // Every figure and daily row, appended to its node's day as the ingest
    // would have; a million points at a time in memory.
    Stmt sel(db, "SELECT check_row, node, device, peer, peer_class, metric, value, time, source, uid, 0, 1 FROM figures "
                 "UNION ALL SELECT 0, node, device, peer, peer_class, metric, value, day, source, uid, 1, count FROM daily");
    if (!sel.ok()) return fail(sel);
    std::map<std::pair<std::string, std::int64_t>, std::string> rows;
    std::size_t held = 0;
    auto flush = [&]() -> Result<void> {
        for (const auto& [k, blob] : rows) {
            cache_->put.reset();
            if (!cache_->put.bind(1, k.first).bind(2, k.second).bind_blob(3, blob).run()) return fail(cache_->put);
        }
        rows.clear();
        held = 0;
        return {};
    };
    while (sel.step()) {
        const auto met = gangway::fleet::parse_metric(sel.text(5));
        const auto src = gangway::fleet::parse_source(sel.text(8));
        if (!met || !src) continue;  // a name this gangway does not know: schema 1's readers left it out too
        Figure f;
        f.node = sel.text(1), f.device = sel.text(2), f.peer = sel.text(3), f.peer_class = sel.text(4), f.metric = *met;
        auto id = series_id(f);
        if (!id) return Failure{id.error()};
        StoredPoint p;
        p.value = sel.real(6), p.series = *id, p.uid = std::uint32_t(sel.int64(9)), p.time = sel.int64(7), p.source = *src;
        p.folded = sel.int64(10) != 0;
        p.count = std::uint32_t(std::clamp<std::int64_t>(sel.int64(11), 1, kMaxCheckRow));
        p.check = std::uint32_t(std::clamp<std::int64_t>(sel.int64(0), 0, kMaxCheckRow));
        const std::int64_t day = day_of(p.time);
        append_point(rows[{home_node(f), day}], p, day);
        if (++held >= (1u << 20))
            if (auto r = flush(); !r) return r;
    }
    if (!sel.error().empty()) return fail(sel);
    if (auto r = flush(); !r) return r;
    if (auto r = exec(db, "DROP TABLE IF EXISTS figures; DROP TABLE IF EXISTS daily; "
                          "UPDATE meta SET value = '2' WHERE key = 'schema';");
        !r)
        return r;
    return tx.commit();
}

Result<bool> Store::insert(const CheckRecord& rec) {
    auto r = insert(rec, SeriesAllowance{});
    if (!r) return Failure{r.error()};
    return r->what == Inserted::stored;
}

Result<std::uint64_t> Store::user_series(std::uint32_t uid, std::int64_t since) {
    Stmt st(db_.get(), "SELECT COALESCE(SUM(added), 0) FROM user_series WHERE uid = ?1 AND day >= ?2");
    if (!st.ok()) return fail(st);
    st.bind(1, std::int64_t(uid)).bind(2, day_of(since));
    const std::int64_t n = st.step() ? st.int64(0) : 0;
    if (!st.error().empty()) return fail(st);
    return std::uint64_t(std::max<std::int64_t>(n, 0));
}

Result<InsertResult> Store::insert(const CheckRecord& rec, const SeriesAllowance& allowance) {
    sqlite3* db = db_.get();
    InsertResult res;
    if (auto r = ensure_cache(); !r) return Failure{r.error()};
    ForgetCache forget{cache_};
    SeriesCache& sc = *cache_;
    if (sc.held > SeriesCache::kMaxHeld) sc.forget_names();
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return Failure{r.error()};
    const auto& c = rec.check;
    const char* src = gangway::fleet::to_string(c.source);
    Stmt& ins = sc.check;
    ins.reset();
    ins.bind(1, c.id).bind(2, std::string_view(src)).bind(3, std::int64_t(c.uid)).bind(4, c.time).bind(5, c.job_id).bind(6, c.verdict);
    if (!ins.run()) return fail(ins);
    if (sqlite3_changes(db) == 0) {  // already stored: the transaction rolls back, nothing changed
        forget.keep = true;
        res.what = Inserted::already_there;
        return res;
    }
    // What the user may still add, read within the transaction (a second
    // ingest's additions are in or wait for this one's commit).
    const bool capped = c.uid != 0 && allowance.max_new != UINT64_MAX;
    std::uint64_t left = UINT64_MAX;
    if (capped) {
        auto before = user_series(c.uid, allowance.since);
        if (!before) return Failure{before.error()};
        res.user_before = *before;
        left = *before >= allowance.max_new ? 0 : allowance.max_new - *before;
    }
    sc.added = 0;
    const std::int64_t row = sqlite3_last_insert_rowid(db);
    if (row > kMaxCheckRow) return Failure{"the fleet store holds more checks than it can number: start a new one with --db"};

    for (const auto& n : c.nodes) {
        sc.node.reset();
        if (!sc.node.bind(1, row).bind(2, n).run()) return fail(sc.node);
    }
    // One row per node and day (all of a check's figures share its day):
    // each node's points appended to its row in one statement.
    const std::int64_t day = day_of(c.time);
    // By node name: the upserts go through the primary key in its order.
    std::map<std::string_view, std::string> rows;
    std::string_view last_home;
    std::string* to = nullptr;  // last_home's row: a report's figures come in runs of one node
    for (const auto& f : rec.figures) {
        auto id = series_id(f);
        if (!id) return Failure{id.error()};
        if (sc.added > left) {  // rolled back: the series it added are forgotten with the cache
            res.what = Inserted::over_allowance;
            res.new_series = sc.added;
            return res;
        }
        // The check's time, source and uid, whatever the row says: they are the ingest's word.
        StoredPoint p;
        p.value = f.value, p.series = *id, p.uid = c.uid, p.time = c.time, p.source = c.source;
        p.check = std::uint32_t(row);
        if (const std::string& home = home_node(f); !to || home != last_home) to = &rows[home], last_home = home;
        append_point(*to, p, day);
    }
    for (const auto& [node, blob] : rows) {
        sc.put.reset();
        if (!sc.put.bind(1, node).bind(2, day).bind_blob(3, blob).run()) return fail(sc.put);
    }
    for (const auto& f : rec.findings) {
        sc.finding.reset();
        if (!sc.finding.bind(1, row).bind(2, f.node).bind(3, f.text).bind(4, c.time).run()) return fail(sc.finding);
    }
    res.new_series = sc.added;
    if (c.uid != 0 && sc.added > 0) {
        Stmt add(db, "INSERT INTO user_series(uid, day, added) VALUES(?1, ?2, ?3) "
                     "ON CONFLICT(uid, day) DO UPDATE SET added = added + excluded.added");
        const std::int64_t counted = day_of(allowance.today ? allowance.today : c.time);
        if (!add.ok() || !add.bind(1, std::int64_t(c.uid)).bind(2, counted).bind(3, std::int64_t(sc.added)).run()) return fail(add);
    }
    if (auto r = tx.commit(); !r) return Failure{r.error()};
    forget.keep = true;
    return res;
}

Result<std::vector<SeriesName>> Store::series_names() {
    Stmt st(db_.get(), "SELECT id, node, device, peer, peer_class, metric FROM series ORDER BY id");
    if (!st.ok()) return fail(st);
    std::vector<SeriesName> out;
    while (st.step()) {
        const std::int64_t id = st.int64(0);
        if (id <= 0 || id > std::int64_t(UINT32_MAX)) continue;
        if (std::size_t(id) >= out.size()) out.resize(std::size_t(id) + 1);
        SeriesName& n = out[std::size_t(id)];
        n.node = st.text(1), n.device = st.text(2), n.peer = st.text(3), n.peer_class = st.text(4);
        const auto m = gangway::fleet::parse_metric(st.text(5));
        n.known = m.has_value();
        if (m) n.metric = *m;
    }
    if (!st.error().empty()) return fail(st);
    return out;
}

Result<void> Store::scan(std::int64_t since, std::int64_t until,
                         const std::function<void(const std::string&, std::vector<StoredPoint>&)>& each) {
    sqlite3* db = db_.get();
    // One read transaction: the nodes and their rows as of one moment, while an ingest writes.
    if (auto r = exec(db, "BEGIN"); !r) return r;
    struct End {
        sqlite3* db;
        ~End() { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); }
    } end{db};
    if (since > until) return {};
    // The nodes that may hold rows: the series' nodes and the links' peers
    // (a link's rows are under the first of its nodes by name, which may
    // have no figure of its own), from the series table, far smaller than
    // the rows'.
    Stmt nodes(db, "SELECT node FROM series UNION SELECT peer FROM series WHERE metric = 'link_bandwidth' ORDER BY 1");
    Stmt rows(db, "SELECT day, data FROM points WHERE node = ?1 AND day > ?2 AND day < ?3 ORDER BY day");
    if (!nodes.ok()) return fail(nodes);
    if (!rows.ok()) return fail(rows);
    // Days that overlap [since, until): a folded point stands at its day's start.
    std::vector<StoredPoint> pts;
    while (nodes.step()) {
        const std::string node = nodes.text(0);
        rows.reset();
        rows.bind(1, node).bind(2, day_of(since) - kDay).bind(3, until);
        pts.clear();
        while (rows.step()) {
            const std::size_t from = pts.size();
            decode_points(rows.blob(1), rows.int64(0), pts);
            auto out_of_range = [&](const StoredPoint& p) {
                return !(p.folded ? (p.time < until && p.time > since - kDay) : (p.time >= since && p.time < until));
            };
            pts.erase(std::remove_if(pts.begin() + std::ptrdiff_t(from), pts.end(), out_of_range), pts.end());
        }
        if (!rows.error().empty()) return fail(rows);
        if (!pts.empty()) each(node, pts);
    }
    if (!nodes.error().empty()) return fail(nodes);
    return {};
}

Result<std::string> Store::check_id(std::uint32_t row) {
    Stmt st(db_.get(), "SELECT id FROM checks WHERE row = ?1");
    if (!st.ok()) return fail(st);
    st.bind(1, std::int64_t(row));
    std::string id = st.step() ? st.text(0) : std::string();
    if (!st.error().empty()) return fail(st);
    return id;
}

Result<std::vector<Figure>> Store::figures(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes) {
    auto names = series_names();
    if (!names) return Failure{names.error()};
    // The checks' ids, for the points of the range (a raw point's time is its check's).
    std::map<std::uint32_t, std::string> ids;
    {
        Stmt st(db_.get(), "SELECT row, id FROM checks WHERE time >= ?1 AND time < ?2");
        if (!st.ok()) return fail(st);
        st.bind(1, since).bind(2, until);
        while (st.step()) ids.emplace(std::uint32_t(st.int64(0)), st.text(1));
        if (!st.error().empty()) return fail(st);
    }
    std::vector<Figure> out;
    auto r = scan(since, until, [&](const std::string&, std::vector<StoredPoint>& pts) {
        for (const StoredPoint& p : pts) {
            if (p.series >= names->size() || !(*names)[p.series].known) continue;  // a name this gangway does not know
            const SeriesName& n = (*names)[p.series];
            if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), n.node) == nodes.end()) continue;
            Figure f;
            if (!p.folded)
                if (auto it = ids.find(p.check); it != ids.end()) f.check_id = it->second;
            f.time = p.time, f.source = p.source, f.uid = p.uid;
            f.node = n.node, f.device = n.device, f.peer = n.peer, f.peer_class = n.peer_class, f.metric = n.metric;
            f.value = p.value, f.daily = p.folded, f.count = p.count;
            out.push_back(std::move(f));
        }
    });
    if (!r) return Failure{r.error()};
    // As schema 1 gave them: by node, time, check id, metric (by name), device, peer.
    std::stable_sort(out.begin(), out.end(), [](const Figure& a, const Figure& b) {
        const std::string_view ma = gangway::fleet::to_string(a.metric), mb = gangway::fleet::to_string(b.metric);
        return std::tie(a.node, a.time, a.check_id, ma, a.device, a.peer) < std::tie(b.node, b.time, b.check_id, mb, b.device, b.peer);
    });
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
            "SELECT node FROM check_nodes UNION SELECT node FROM series ORDER BY 1");
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
    const std::int64_t cut = day_of(now - std::int64_t(keep_days) * kDay);
    sqlite3* db = db_.get();
    // The rows with raw points before the cut: the partial index has only
    // those (a folded row leaves it), so a year's store is not walked. In
    // batches, each its own transaction (a row's fold stands alone), so that
    // a first fold of months holds one batch in memory, not the months.
    Stmt sel(db, "SELECT rowid, day, data FROM points WHERE folded = 0 AND day < ?1 LIMIT 256");
    Stmt put(db, "UPDATE points SET data = ?2, folded = 1 WHERE rowid = ?1");
    if (!sel.ok()) return fail(sel);
    if (!put.ok()) return fail(put);
    FoldResult res;
    std::vector<StoredPoint> pts;
    std::vector<std::pair<std::int64_t, std::string>> done;  // written after the batch's read (no update under a live read)
    for (;;) {
        Transaction tx(db);
        if (auto r = tx.begin(); !r) return Failure{r.error()};
        done.clear();
        sel.reset();
        sel.bind(1, cut);
        while (sel.step()) {
            const std::int64_t day = sel.int64(1);
            pts.clear();
            decode_points(sel.blob(2), day, pts);
            // Per series, source and uid: the day's median, merged with what an
            // earlier fold made of the same day (figures that arrived late) by a
            // count-weighted mean of the two medians: close enough for a baseline.
            using Key = std::tuple<std::uint32_t, int, std::uint32_t>;
            std::map<Key, std::vector<double>> raw;
            std::map<Key, StoredPoint> old;
            for (const StoredPoint& p : pts) {
                const Key k{p.series, int(p.source), p.uid};
                if (p.folded) old[k] = p;
                else raw[k].push_back(p.value);
            }
            std::string blob;
            for (auto& [k, vals] : raw) {
                std::sort(vals.begin(), vals.end());
                const std::size_t n = vals.size();
                StoredPoint f;
                f.value = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
                f.count = std::uint32_t(std::min<std::size_t>(n, kMaxCheckRow));
                if (auto it = old.find(k); it != old.end()) {
                    const double c0 = it->second.count;
                    f.value = (it->second.value * c0 + f.value * double(n)) / (c0 + double(n));
                    f.count = std::uint32_t(std::min<double>(c0 + double(n), double(kMaxCheckRow)));
                    old.erase(it);
                }
                f.series = std::get<0>(k), f.source = gangway::fleet::Source(std::get<1>(k)), f.uid = std::get<2>(k);
                f.time = day, f.folded = true;
                append_point(blob, f, day);
                ++res.daily;
                res.figures += n;
            }
            for (const auto& [k, p] : old) append_point(blob, p, day);
            done.emplace_back(sel.int64(0), std::move(blob));
        }
        if (!sel.error().empty()) return fail(sel);
        sel.reset();
        for (const auto& [rowid, blob] : done) {
            put.reset();
            if (!put.bind(1, rowid).bind_blob(2, blob).run()) return fail(put);
        }
        if (auto r = tx.commit(); !r) return Failure{r.error()};
        if (done.empty()) break;
    }
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return Failure{r.error()};
    // The checks past the window lose their nodes' rows (the findings, by
    // their own index, only those left). Only the checks that passed the cut
    // since the last fold are walked: the checks table keeps every check of
    // the store (a year: 364,000), and walking them all cost each ingest
    // 10-20 ms a 20,000. meta's 'pruned_before' is the last fold's cut; a
    // check the ingest took since was at or after that cut (older ones are
    // refused), and a smaller cut (a larger --keep-days) starts from there.
    std::int64_t since = std::numeric_limits<std::int64_t>::min();
    {
        Stmt get(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pruned_before'");
        if (!get.ok()) return fail(get);
        if (get.step()) since = get.int64(0);
        else if (!get.error().empty()) return fail(get);
    }
    {
        // What users added before the window counts against them no more.
        Stmt del(db, "DELETE FROM user_series WHERE day < ?1");
        if (!del.ok() || !del.bind(1, cut).run()) return fail(del);
    }
    {
        Stmt del(db, "DELETE FROM findings WHERE time < ?1");
        if (!del.ok() || !del.bind(1, cut).run()) return fail(del);
    }
    if (cut > since) {
        Stmt del(db, "DELETE FROM check_nodes WHERE check_row IN (SELECT row FROM checks WHERE time >= ?2 AND time < ?1)");
        if (!del.ok() || !del.bind(1, cut).bind(2, since).run()) return fail(del);
    }
    {
        Stmt put_cut(db, "INSERT INTO meta(key, value) VALUES('pruned_before', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
        if (!put_cut.ok() || !put_cut.bind(1, std::to_string(cut)).run()) return fail(put_cut);
    }
    if (auto r = tx.commit(); !r) return Failure{r.error()};
    return res;
}

}  // namespace gangway::sys::fleet
