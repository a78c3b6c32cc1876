// The ingest's counts for `gangway fleet metrics` (openmetrics.hpp's
// IngestCounts), kept beside the store's tables: the checks table counts
// itself, the rest lives in `meta` under ingest_* keys.
#include <sqlite3.h>

#include "sqlite.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {

Result<void> Store::record_ingest(std::int64_t now, std::size_t rejected) {
    sqlite3* db = db_.get();
    Transaction tx(db);
    if (auto r = tx.begin(); !r) return r;
    // Added in SQL, so that two ingests at once both count.
    Stmt add(db, "INSERT INTO meta(key, value) VALUES('ingest_rejected', ?1) "
                 "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)");
    if (!add.ok() || !add.bind(1, std::int64_t(rejected)).run()) return Failure{add.error()};
    Stmt last(db, "INSERT INTO meta(key, value) VALUES('ingest_last', ?1) "
                  "ON CONFLICT(key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))");
    if (!last.ok() || !last.bind(1, now).run()) return Failure{last.error()};
    return tx.commit();
}

Result<gangway::fleet::IngestCounts> Store::ingest_counts() {
    gangway::fleet::IngestCounts c;
    Stmt by_source(db_.get(), "SELECT source, COUNT(*) FROM checks GROUP BY source");
    if (!by_source.ok()) return Failure{by_source.error()};
    while (by_source.step()) {
        const auto src = gangway::fleet::parse_source(by_source.text(0));
        if (src == gangway::fleet::Source::node_check) c.node_checks = std::uint64_t(by_source.int64(1));
        else if (src == gangway::fleet::Source::job_check) c.job_checks = std::uint64_t(by_source.int64(1));
    }
    if (!by_source.error().empty()) return Failure{by_source.error()};
    Stmt meta(db_.get(), "SELECT key, CAST(value AS INTEGER) FROM meta WHERE key IN ('ingest_rejected', 'ingest_last')");
    if (!meta.ok()) return Failure{meta.error()};
    while (meta.step()) {
        if (meta.text(0) == "ingest_rejected") c.files_rejected = std::uint64_t(meta.int64(1));
        else c.last_ingest = meta.int64(1);
    }
    if (!meta.error().empty()) return Failure{meta.error()};
    return c;
}

}  // namespace gangway::sys::fleet
