// The one schema of the reports gangway writes and the fleet ingest reads:
// the job check's report (`gangway check --report`, node 0's spooled copy)
// and the node check's run (`gangway node-check --json`). The writers
// (render_job_check, render_node_check below) and the ingest both go
// through here, so a field is named once. nlohmann::ordered_json does the JSON; the
// shapes and their versions are gangway(1)'s, REPORTS:
//   {"kind": "gangway-job-check",  "schema": 2, ...}   (schema 1 was the text "gangway-preflight/1")
//   {"kind": "gangway-node-check", "schema": 1, ...}
// Parsing is pure and throws gangway::Error with one line for anything out
// of shape: too large, too deep, too many values or nodes, a wrong type, an
// unknown kind or a newer schema.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "../health/report.hpp"
#include "../preflight/report.hpp"
#include "model.hpp"

namespace gangway::fleet {

inline constexpr const char* kJobCheckKind = "gangway-job-check";
inline constexpr const char* kNodeCheckKind = "gangway-node-check";
inline constexpr int kJobCheckSchema = 2;
inline constexpr int kNodeCheckSchema = 1;

// What the ingest accepts of a spooled file. A job check of 2,048 nodes with
// every ring round and confirmation is a few MB (BENCHMARKS.md) and some
// 60,000 figures (29 a node: 2 TCP, 2 ring links, 16 GPU copies, 8 ports,
// 1 all-reduce); these leave room without letting one user's file take the
// admin host's memory or the store's and /metrics' size (issue 31, item 8).
// `gangway fleet ingest --report-caps` sets the last three.
struct ReportLimits {
    std::size_t max_bytes = 32u << 20;     // the file (parsed in linear time; see SECURITY.md for its memory)
    int max_depth = 8;                     // the deepest report is 4 levels
    std::size_t max_values = 4'000'000;    // JSON values in all
    std::size_t max_string = 64u << 10;    // one string (a finding, a reason)
    std::size_t max_nodes = 16'384;        // nodes of one check (8 times a 2,048-node job)
    std::size_t max_series = 262'144;      // figures of one check (4 times a 2,048-node job's)
    std::size_t max_findings = 65'536;     // findings of one check
};

// The most keys an object of the schema has (the job check's top level:
// kind ... notes); the parse refuses an object with more before it is
// built, so a key is looked up among at most this many. A new key in the
// writers beyond it must raise it (report_schema_test checks the writers).
inline constexpr std::size_t kMaxReportKeys = 22;

enum class ReportKind { job_check, node_check };

// The JSON objects the writers print.
nlohmann::ordered_json job_check_json(const preflight::Report& r);
nlohmann::ordered_json node_check_json(const health::Report& r);

// The reports as the writers print them (`gangway check --report`, the
// spooled copies, `gangway node-check --json`): the job check's as
// dump_report, the node check's as dump_line and a newline. The writers'
// rooms (preflight, health) know nothing of this schema: the launcher
// composes their structs with these (no include cycle, tests/layering.sh).
std::string render_job_check(const preflight::Report& r);
std::string render_node_check(const health::Report& r);

// The text of a report: `line` on one line with ", " and ": " between
// items (the node check's, a log's); `report` one line per top-level key and
// per element of a top-level array (the job check's), so that grep and a
// reader both find one node or link per line.
std::string dump_line(const nlohmann::ordered_json& j);
std::string dump_report(const nlohmann::ordered_json& j);

// Parses `text` within `limits` into a JSON object of a known kind and schema.
nlohmann::ordered_json parse_report_json(std::string_view text, const ReportLimits& limits = {});

// Takes the elements of the report's top-level arrays as the parse meets
// them (parse_report's one pass, issue 34): an element taken is left out of
// the tree. `taken_nodes` is how many elements of "nodes" it took (the node
// cap counts them).
class ReportElementSink {
public:
    virtual ~ReportElementSink() = default;
    // An element of the top-level array `array`, whole; true: taken.
    virtual bool take(const nlohmann::ordered_json& root, std::string_view array, nlohmann::ordered_json& element) = 0;
    // The top-level array `array` has ended.
    virtual void closed(std::string_view array) = 0;
    virtual std::size_t taken_nodes() const = 0;
};
nlohmann::ordered_json parse_report_json(std::string_view text, const ReportLimits& limits, ReportElementSink* sink);
ReportKind report_kind(const nlohmann::ordered_json& j);

// The writers' structs back from their JSON (round trip). Fields the JSON
// does not carry (a link's node indices come from names) are rebuilt.
preflight::Report job_check_from_json(const nlohmann::ordered_json& j);
health::Report node_check_from_json(const nlohmann::ordered_json& j);

// The rows the store keeps of a report. The source is the report's kind;
// `uid` is the spooled file's owner's, never the content's; the check's id is "u<uid>-<report id>"
// (a report without one: a hash of its text), so that one user's file can
// never stand for, or block, another's check.
CheckRecord to_record(const preflight::Report& r, std::uint32_t uid, std::string_view text);
CheckRecord to_record(const health::Report& r, std::uint32_t uid, std::string_view text);

// All of it: text -> rows. A job check's nodes, links, GPUs, NCCL runs and
// ports are converted as the parse meets them, so that their JSON is never
// held all at once (issue 34: a 2,048-node report's tree was most of its
// ingest); a report that this one pass cannot take whole (an element it
// refuses, a report whose nodes come after its links) is parsed again the
// way parse_report_tree does, so that its rows or its refusal are the same
// (such a file costs two parses; a refusal of the parse itself, one).
CheckRecord parse_report(std::string_view text, std::uint32_t uid, const ReportLimits& limits = {});
// The same from the whole tree (parse_report_json, then *_from_json): what
// parse_report gives, by the other road (tests/unit/report_schema_test.cpp
// compares them).
CheckRecord parse_report_tree(std::string_view text, std::uint32_t uid, const ReportLimits& limits = {});

}  // namespace gangway::fleet
