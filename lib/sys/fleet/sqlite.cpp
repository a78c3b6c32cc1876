#include "sqlite.hpp"

#include <sqlite3.h>

namespace gangway::sys::fleet {

std::string sqlite_error(sqlite3* db, std::string_view what) {
    return std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) {
        error_ = sqlite_error(db, "the fleet store cannot prepare a query");
        sqlite3_finalize(st_);
        st_ = nullptr;
    }
}

Stmt::~Stmt() { sqlite3_finalize(st_); }

Stmt& Stmt::bind(int i, std::int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
}
Stmt& Stmt::bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
}

Stmt& Stmt::bind_blob(int i, std::string_view v) {
    sqlite3_bind_blob(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
}

bool Stmt::step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) error_ = sqlite_error(db_, "the fleet store");
    return false;
}

bool Stmt::run() {
    error_.clear();
    while (step()) {
    }
    const bool good = error_.empty();
    sqlite3_reset(st_);
    return good;
}

void Stmt::reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
    error_.clear();
}

std::int64_t Stmt::int64(int col) const { return sqlite3_column_int64(st_, col); }
double Stmt::real(int col) const { return sqlite3_column_double(st_, col); }
std::string Stmt::text(int col) const {
    const auto* p = sqlite3_column_text(st_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), std::size_t(sqlite3_column_bytes(st_, col))) : std::string();
}

std::string_view Stmt::text_view(int col) const {
    const auto* p = sqlite3_column_text(st_, col);
    return p ? std::string_view(reinterpret_cast<const char*>(p), std::size_t(sqlite3_column_bytes(st_, col))) : std::string_view();
}

std::string_view Stmt::blob(int col) const {
    const void* p = sqlite3_column_blob(st_, col);
    return p ? std::string_view(static_cast<const char*>(p), std::size_t(sqlite3_column_bytes(st_, col))) : std::string_view();
}

Result<void> exec(sqlite3* db, const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
        std::string e = std::string("the fleet store: ") + (msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return Failure{e};
    }
    return {};
}

Transaction::~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Result<void> Transaction::begin() {
    if (auto r = exec(db_, "BEGIN IMMEDIATE"); !r) return r;
    open_ = true;
    return {};
}

Result<void> Transaction::commit() {
    if (auto r = exec(db_, "COMMIT"); !r) return r;
    open_ = false;
    return {};
}

}  // namespace gangway::sys::fleet
