// A small RAII layer over SQLite's C API for the fleet store: a prepared
// statement that finalizes itself, and a transaction that rolls back unless
// committed. Errors come back as one line (SQLite's own message after ours).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../../base/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace gangway::sys::fleet {

// One line: "<what>: <SQLite's message>".
std::string sqlite_error(sqlite3* db, std::string_view what);

class Stmt {
public:
    Stmt(sqlite3* db, const char* sql);  // check ok() before use
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    ~Stmt();

    bool ok() const { return st_ != nullptr; }
    const std::string& error() const { return error_; }

    // Binds are 1-based, as SQLite's.
    Stmt& bind(int i, std::int64_t v);
    Stmt& bind(int i, double v);
    Stmt& bind(int i, std::string_view v);
    Stmt& bind_blob(int i, std::string_view v);
    // One step: true when a row is there, false when done; error() set on failure.
    bool step();
    // Runs a statement that returns no rows; false (and error()) on failure.
    bool run();
    void reset();

    std::int64_t int64(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    // The column's text without a copy, valid until the next step or reset.
    std::string_view text_view(int col) const;
    // The column's bytes, valid until the next step or reset.
    std::string_view blob(int col) const;

private:
    sqlite3* db_;
    sqlite3_stmt* st_ = nullptr;
    std::string error_;
};

// Runs `sql` (one or more statements without results).
Result<void> exec(sqlite3* db, const char* sql);

// BEGIN IMMEDIATE, so that two writers queue on the busy timeout at the start
// instead of one failing at its first write; ROLLBACK unless commit() ran.
class Transaction {
public:
    explicit Transaction(sqlite3* db) : db_(db) {}
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    Result<void> begin();
    Result<void> commit();

private:
    sqlite3* db_;
    bool open_ = false;
};

}  // namespace gangway::sys::fleet
