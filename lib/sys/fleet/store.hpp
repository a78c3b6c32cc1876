// The fleet memory on disk: one SQLite database (WAL mode) on the admin host
// that `gangway fleet ingest` fills from the spool and `fleet show`,
// `fleet flagged`, `fleet metrics` and `fleet serve` read. Everything it
// hands out is lib/fleet/model.hpp's plain data, so the trends, tables and
// OpenMetrics text never see SQLite.
//
// Tables (the names are the on-disk schema, version kStoreSchema):
//   checks   one row per check: its id (unique: the same report stored twice
//            is one check), source, uid, time, job id, verdict
//   check_nodes  the nodes each check covered
//   series   one row per series: node, device, peer, peer_class, metric
//            (unique), named once for all its figures
//   points   one row per node and UTC day (primary key): a blob of that
//            node's figures of the day, 24 bytes each (points.hpp says
//            the layout and why), a link's under the first of its nodes by
//            name; `folded` 1 once the day is folded
//   findings the one-line findings of each check
//   stops    one row per job stop that `fleet serve --stops-key` judged
//            (issue 33): time, job, step, node, rank, cause, node_class,
//            requeued, the line and the timeline; kept as long as the store
//            (a few hundred bytes a stop). New with schema 2.
//   stop_records  the nodes' records that serve took (job, node, run: the
//            record's window_start_ns; its body as signed), kept from the
//            202 on: state 0 waiting to be judged, 1 judged and its stop
//            stored, 2 its delivery (line, requeue, drain) begun. A restart
//            judges states 0 and 1 again; judged ones are kept 7 days, for a
//            late node's record to be judged with them. (CREATE IF NOT
//            EXISTS: a store of schema 2 gains it as it is opened.)
//   stop_owners   the owner (SLURM's UserId) of each job with a stop: who
//            may read it on GET /v1/stops/JOB.
//   user_series  how many series each user's checks (uid other than 0) added
//            to the store, by the UTC day of the ingest that stored them: the
//            ingest's cap on what one user may add (Store::insert's
//            SeriesAllowance); rows older than the keep window are dropped by
//            the fold. Added beside schema 2 (a store without it gets it at
//            the next ingest, with every earlier series counted as root's).
// Retention (fold): the points of days older than keep_days are folded in
// place, per series, source, uid and day, into the day's median and how many
// figures it folds; findings and check_nodes rows that old are deleted; the
// check's own row stays (a few dozen bytes), so that an old report found
// again is still a no-op.
//
// Schema 1 (a row per figure, and a `daily` table) is read no more: the
// first ingest by this gangway converts it in place (convert_schema1).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../fleet/model.hpp"
#include "../../fleet/openmetrics.hpp"
#include "../../fleet/watch_events.hpp"
#include "points.hpp"
#include "../../fleet/stops.hpp"

struct sqlite3;

namespace gangway::sys::fleet {

using gangway::fleet::CheckRecord;
using gangway::fleet::CheckRow;
using gangway::fleet::Figure;
using gangway::fleet::FindingRow;

inline constexpr int kStoreSchema = 2;
inline constexpr int kDefaultKeepDays = 90;
// How long a writer waits for another (a second ingest, a fold) before it
// gives up with one line: two ingests at once take turns, never fail.
inline constexpr int kBusyTimeoutMs = 30000;
// How far ahead of the admin host's clock a check may be dated: the nodes'
// clocks drift a little (NTP keeps them within seconds; 5 minutes is room).
// The ingest refuses a later time, and the readers take no figure dated
// later than now + this as a series' latest (a row from before the ingest
// refused them, dated 2100, would otherwise stay every node's latest for good).
inline constexpr std::int64_t kMaxClockSkewS = 300;

enum class OpenMode {
    read_write,  // creates the database and its tables when missing (ingest)
    read_only,   // show, flagged, metrics, serve: never creates or changes it
};

struct FoldResult {
    std::size_t figures = 0;   // raw figures folded into daily rows
    std::size_t daily = 0;     // daily rows written or updated
};

// The read queries' filter: [since, until) in unix seconds, and the nodes
// (empty: all). A figure or finding matches on its node; a check matches
// when it covered one of the nodes.
// A series as the `series` table names it; known false when its metric is
// one this gangway does not know (a newer one's): its points are left out.
struct SeriesName {
    std::string node, device, peer, peer_class;
    gangway::fleet::Metric metric = gangway::fleet::Metric::tcp_send;
    bool known = false;
};

// What one user's check may add to the store: at most `max_new` new series
// (a node, device, peer, class and metric not named before) over the days
// from `since` on, counting those of the user's earlier checks; this one's
// are counted under `today` (the ingest's day). Root's checks (uid 0) are
// the fleet's own word and have none.
struct SeriesAllowance {
    std::uint64_t max_new = UINT64_MAX;
    std::int64_t since = 0;   // unix seconds: the first day counted
    std::int64_t today = 0;   // unix seconds: this ingest's day (0: the check's own)
};

enum class Inserted {
    stored,         // a new check
    already_there,  // a check with this id is stored: nothing changed
    over_allowance, // it would take its user over SeriesAllowance::max_new: nothing changed
};
struct InsertResult {
    Inserted what = Inserted::stored;
    std::uint64_t new_series = 0;   // stored: the series it named first; over: those counted before it stopped
    std::uint64_t user_before = 0;  // the user's new series in the window before this check (0 for root)
};

struct Query {
    std::int64_t since = 0;
    std::int64_t until = INT64_MAX;
    std::vector<std::string> nodes;
};

class Store {
public:
    // Opens (and for read_write creates, mode 0640, WAL) the database at
    // `path`; one line on failure naming the file and what to do.
    static Result<Store> open(const std::string& path, OpenMode mode = OpenMode::read_write);

    Store(Store&&) noexcept;
    Store& operator=(Store&&) noexcept;
    ~Store();

    // Stores one check with its figures and findings in one transaction.
    // true: stored; false: a check with this id is already there (nothing
    // changes, so ingesting a report twice, or from two ingests at once, is
    // one check).
    Result<bool> insert(const CheckRecord& rec);
    // The same within what its user may add (uid 0: no limit). Over the
    // allowance, the transaction is rolled back as soon as the check names
    // one series too many: a report of made-up names costs its user's
    // allowance, then nothing.
    Result<InsertResult> insert(const CheckRecord& rec, const SeriesAllowance& allowance);
    // The series `uid`'s checks added on the days from `since` on.
    Result<std::uint64_t> user_series(std::uint32_t uid, std::int64_t since);
    // Whether a check with this id is stored.
    Result<bool> has_check(const std::string& id);

    // Raw figures with since <= time < until, then, for the days before the
    // raw window, the daily aggregates that overlap the range (Figure::daily
    // set: time = the UTC day's start, value = the day's median, count = how
    // many figures it folds, check_id ""). Ordered by node, time.
    Result<std::vector<Figure>> figures(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes);
    Result<std::vector<Figure>> figures(const Query& q) { return figures(q.since, q.until, q.nodes); }
    // Checks with since <= time < until, oldest first, each with the nodes it
    // covered (a folded check: nodes empty, and it matches a node filter no more).
    Result<std::vector<CheckRow>> checks(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes);
    // Findings of the checks in the range (raw window only).
    Result<std::vector<FindingRow>> findings(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes);
    // Every series, by id (index 0 and ids not there: known false).
    Result<std::vector<SeriesName>> series_names();
    // The points with since <= time < until (a folded point: when its day
    // overlaps the range), node by node in name order, as stored: `each` is
    // called once per node that has some, with that node's points (a link's
    // both directions under the first of its nodes), day by day. Memory: one
    // node's points at a time.
    Result<void> scan(std::int64_t since, std::int64_t until,
                      const std::function<void(const std::string& node, std::vector<StoredPoint>& points)>& each);
    // A check's id by its row; "" when there is none.
    Result<std::string> check_id(std::uint32_t row);

    // Every node the store has a figure or a check for, sorted.
    Result<std::vector<std::string>> nodes();

    // Folds raw rows older than now - keep_days * 86400 into daily aggregates
    // (see above). Idempotent; run by every ingest.
    Result<FoldResult> fold(std::int64_t now, int keep_days = kDefaultKeepDays);

    // The ingest's own counts, for the metrics (store_counts.cpp): checks by
    // source (every check keeps its row, folded or not, so they only grow),
    // and, in `meta`, the files rejected by every ingest so far and when the
    // last ingest ended. record_ingest adds one ingest's; a read-only store
    // can read them.
    Result<void> record_ingest(std::int64_t now, std::size_t rejected);
    Result<gangway::fleet::IngestCounts> ingest_counts();

    // The job stops (store_stops.cpp). insert_stop: false when the same
    // verdict (job, time, node) is there already.
    Result<bool> insert_stop(const gangway::fleet::StopRow& row);
    // Stops with since <= time < until, of the nodes named (empty: all), oldest first.
    Result<std::vector<gangway::fleet::StopRow>> stops(std::int64_t since, std::int64_t until, const std::vector<std::string>& nodes);
    // The stops of one job (a requeued job may have several), oldest first.
    Result<std::vector<gangway::fleet::StopRow>> stops_of_job(std::uint32_t job);
    // gangway_job_stops_total's counts: stops that named a node, by node and cause.
    Result<std::vector<gangway::fleet::StopCount>> stop_counts();
    // A job's latest stop made again with a late node's record: its line,
    // timeline and blame replaced, its time and requeue kept (inserted when
    // the job has none).
    Result<void> replace_latest_stop(const gangway::fleet::StopRow& row);

    // The running jobs' stragglers and hangs (store_watch.cpp, issue 43):
    // one row per (job, step, kind, node), its first time kept and its last,
    // confirmation and line made the newest's.
    Result<void> upsert_watch_event(const gangway::fleet::WatchEvent& e);
    // Events last named at since <= last < until, of the nodes named (empty: all).
    Result<std::vector<gangway::fleet::WatchEvent>> watch_events(std::int64_t since, std::int64_t until,
                                                                 const std::vector<std::string>& nodes);
    // The metrics' figures: confirmed stragglers named at or after `fresh_since`, confirmed hangs by node.
    Result<std::vector<gangway::fleet::RunningStraggler>> running_stragglers(std::int64_t fresh_since);
    Result<std::vector<gangway::fleet::HangCount>> hang_counts();
    Result<void> mark_stop_requeued(std::uint32_t job, std::int64_t time);

    // The nodes' records waiting (store_stops.cpp, table stop_records).
    struct StopRecord {
        std::uint32_t job = 0;
        std::string node;
        std::int64_t run = 0;       // the record's window_start_ns
        std::int64_t received = 0;  // unix seconds
        int state = 0;              // 0 waiting, 1 judged, 2 delivered
        std::string body;
    };
    // false: this node's record of this run of the job is there already (a replay).
    Result<bool> insert_stop_record(const StopRecord& r);
    Result<void> delete_stop_record(std::uint32_t job, const std::string& node, std::int64_t run);
    // Records in state below `below` (to judge after a restart), oldest first.
    Result<std::vector<StopRecord>> stop_records_below(int below);
    // A job's records in state >= 1 (judged), for a late record's judgement.
    Result<std::vector<StopRecord>> judged_stop_records(std::uint32_t job);
    // The job's records now in `from` set to `to`; judged ones older than
    // `forget_before` deleted.
    Result<void> set_stop_records_state(std::uint32_t job, int from, int to);
    Result<void> forget_stop_records(std::int64_t forget_before);
    Result<void> set_stop_owner(std::uint32_t job, std::int64_t uid);
    // The job's owner, or -1 when not known.
    Result<std::int64_t> stop_owner(std::uint32_t job);

    const std::string& path() const { return path_; }

private:
    Store(sqlite3* db, std::string path);
    struct SeriesCache;
    // The series' ids for the ingest, node by node as its reports name them.
    Result<std::uint32_t> series_id(const Figure& f);
    Result<void> convert_schema1();
    Result<void> ensure_cache();
    struct Closer {
        void operator()(sqlite3* db) const;
    };
    std::unique_ptr<sqlite3, Closer> db_;
    std::string path_;
    std::unique_ptr<SeriesCache> cache_;
};

}  // namespace gangway::sys::fleet
