// `gangway fleet`: the fleet memory on the admin host. Each subcommand parses
// its options and calls lib (lib/sys/fleet: the spool and the store;
// lib/fleet: the rows, the table).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "../lib/base/text.hpp"
#include "../lib/fleet/show.hpp"
#include "../lib/fleet/stops.hpp"
#include "../lib/fleet/trend.hpp"
#include "../lib/fleet/trend_svg.hpp"
#include "../lib/fleet/trend_text.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/fleet/ingest.hpp"
#include "../lib/sys/fleet/readers.hpp"
#include "../lib/sys/fleet/spool.hpp"
#include "../lib/sys/fleet/store.hpp"
#include "commands.hpp"

namespace gangway::cli {
namespace {

constexpr const char* kDefaultDb = kFleetDefaultDb;

const char* kUsage =
    "usage: gangway fleet <command> [options]\n"
    "\n"
    "The fleet memory: every check's figures per node and per link, kept on the admin host.\n"
    "\n"
    "commands:\n"
    "  ingest [--spool DIR] [--db FILE] [--keep-days N] [--report-caps N,S,F] [--user-caps N,S,F]\n"
    "         [--user-series N] [--nodes-from auto|none|FILE]\n"
    "         store every report in the spool (root only; from a timer or EpilogSlurmctld):\n"
    "         each file once, a bad one set aside in DIR/rejected/ with one line\n"
    "         (defaults: --spool /var/spool/gangway/fleet, --db /var/lib/gangway/fleet.db,\n"
    "         --keep-days 90: raw figures older than that fold into daily medians);\n"
    "         at most N nodes, S figures and F findings a report (default 16384,262144,65536)\n"
    "         and a user in one ingest (default 65536,1048576,262144); at most N new series a\n"
    "         user in the store over --keep-days (default 65536); a user's report naming a node\n"
    "         that SLURM's node list lacks is refused (auto: scontrol -o show node, else\n"
    "         slurm.conf's NodeName lines; FILE: that slurm.conf; none: no check)\n"
    "  show [--db FILE] [--days N] [--recent-days N] [--svg FILE] [NODE...]\n"
    "         a table: node, metric, its last value, baseline, trend, flag, how many checks\n"
    "         (over N days, default 30; the recent window 3 days, or half of N when shorter);\n"
    "         --svg FILE writes trend plots per node and for the fleet\n"
    "  flagged [--db FILE] [--days N] [--recent-days N] [NODE...]\n"
    "         one line per degrading node or link: NODE[->PEER] METRIC DEVICE|- RECENT\n"
    "         BASELINE PEERS SINCE (bytes per second; UTC); exit 0 none, 1 some, 2 usage, 3 no store\n"
    "         and nodes that stopped 2 jobs within 14 days (the post-mortem's node causes):\n"
    "         NODE job_stops - COUNT - - SINCE\n"
    "  stops [--db FILE] [--days N] [--timeline] [NODE...]\n"
    "         the jobs stopped over N days (default 30), newest first: when, job, step, the node\n"
    "         blamed, the cause, and the line; --timeline adds each verdict's timeline\n"
    "  metrics [--db FILE] [--format openmetrics|text] [--output FILE]\n"
    "         the latest figures, the flags and the ingest's counts as OpenMetrics text, for\n"
    "         node_exporter's textfile collector (--output: written atomically)\n"
    "  serve --listen ADDR:PORT [--db FILE] [--cache SECONDS] [--stops-key FILE ...]\n"
    "         serve them on /metrics for Prometheus to scrape, until SIGTERM or SIGINT;\n"
    "         --stops-key: also take the post-mortem's node records on /v1/stops\n"
    "\n"
    "See gangway-fleet(8).\n";

int usage_error(const std::string& line) {
    std::fprintf(stderr, "gangway fleet: %s; see gangway fleet --help\n", line.c_str());
    return 2;
}

// "NODES,SERIES,FINDINGS", each a whole number from 1 up.
bool to_caps(const std::string& v, std::size_t& nodes, std::size_t& series, std::size_t& findings) {
    const auto parts = split_keep_empty(v, ',');
    if (parts.size() != 3) return false;
    std::size_t* out[] = {&nodes, &series, &findings};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto n = parse_uint<std::uint64_t>(parts[i]);
        if (!n || *n < 1 || *n > (std::uint64_t(1) << 40)) return false;
        *out[i] = std::size_t(*n);
    }
    return true;
}

bool to_days(const std::string& v, int& out) {
    const auto d = parse_int<int>(v);
    if (!d || *d < 1 || *d > 36500) return false;
    out = *d;
    return true;
}

int fleet_ingest(int argc, char** argv) {
    sys::fleet::IngestOptions o;
    o.spool = sys::fleet::kDefaultSpool;
    std::string db = kDefaultDb;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (auto v = option_value(argc, argv, i, "--spool")) o.spool = *v;
        else if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (auto v = option_value(argc, argv, i, "--keep-days")) {
            if (!to_days(*v, o.keep_days)) return usage_error("--keep-days wants days from 1 to 36500, not \"" + *v + "\"");
        } else if (auto v = option_value(argc, argv, i, "--report-caps")) {
            if (!to_caps(*v, o.limits.max_nodes, o.limits.max_series, o.limits.max_findings))
                return usage_error("--report-caps wants NODES,FIGURES,FINDINGS (whole numbers from 1), not \"" + excerpt(*v) + "\"");
        } else if (auto v = option_value(argc, argv, i, "--user-caps")) {
            if (!to_caps(*v, o.user_caps.nodes, o.user_caps.series, o.user_caps.findings))
                return usage_error("--user-caps wants NODES,FIGURES,FINDINGS (whole numbers from 1), not \"" + excerpt(*v) + "\"");
        } else if (auto v = option_value(argc, argv, i, "--user-series")) {
            const auto n = parse_uint<std::uint64_t>(*v);
            if (!n || *n < 1 || *n > (std::uint64_t(1) << 40))
                return usage_error("--user-series wants a whole number of series from 1, not \"" + excerpt(*v) + "\"");
            o.user_caps.store_series = *n;
        } else if (auto v = option_value(argc, argv, i, "--nodes-from")) {
            if (*v == "auto") o.site_nodes.from = sys::fleet::NodesFrom::automatic;
            else if (*v == "none") o.site_nodes.from = sys::fleet::NodesFrom::none;
            else if (!v->empty() && (*v)[0] == '/') {
                o.site_nodes.from = sys::fleet::NodesFrom::slurm_conf;
                o.site_nodes.slurm_conf = *v;
            } else return usage_error("--nodes-from wants auto, none or a slurm.conf's absolute path, not \"" + excerpt(*v) + "\"");
        } else return usage_error("unknown option \"" + excerpt(s) + "\" for ingest");
    }
    // Root only: the spool's files are other users' and the owner is the proof of who wrote each.
    if (::geteuid() != 0) {
        std::fprintf(stderr, "gangway fleet ingest: run it as root (it reads every user's reports in %s)\n", o.spool.c_str());
        return 1;
    }
    o.now = std::time(nullptr);
    auto store = sys::fleet::Store::open(db);
    if (!store) {
        std::fprintf(stderr, "gangway fleet ingest: %s\n", store.error().c_str());
        return 1;
    }
    auto r = sys::fleet::ingest(o, *store);
    if (!r) {
        std::fprintf(stderr, "gangway fleet ingest: %s\n", r.error().c_str());
        return 1;
    }
    // Each line says where the file went (rejected/, or left where it was).
    for (const auto& line : r->lines) std::fprintf(stderr, "gangway fleet ingest: rejected %s\n", line.c_str());
    for (const auto& line : r->names)
        std::fprintf(stderr, "gangway fleet ingest: not in SLURM's node list (%s): %s\n", r->names_source.c_str(), line.c_str());
    if (r->more_names)
        std::fprintf(stderr, "gangway fleet ingest: and %zu more names not in SLURM's node list\n", r->more_names);
    if (!r->note.empty()) std::fprintf(stderr, "gangway fleet ingest: NOTE: %s\n", r->note.c_str());
    // The counts `fleet metrics` shows (gangway_rejected_files_total, the last ingest's time).
    if (auto c = store->record_ingest(o.now, r->rejected); !c) {
        std::fprintf(stderr, "gangway fleet ingest: %s\n", c.error().c_str());
        return 1;
    }
    std::printf("gangway fleet ingest: %zu stored, %zu already there, %zu rejected; %zu old figure(s) folded into daily rows\n",
                r->stored, r->duplicates, r->rejected, r->folded.figures);
    return 0;
}

// What show and flagged share: the store, the windows, the nodes named.
struct TrendArgs {
    std::string db = kDefaultDb;
    int days = 30, recent_days = 0;  // recent 0: 3 days, or half of --days when that is shorter
    std::string svg;  // show only
    std::vector<std::string> nodes;
};

// 0 when parsed; else the exit status (2, with its line printed).
int parse_trend_args(int argc, char** argv, const char* sub, bool svg_ok, TrendArgs& a) {
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (auto v = option_value(argc, argv, i, "--db")) a.db = *v;
        else if (auto v = option_value(argc, argv, i, "--days")) {
            if (!to_days(*v, a.days)) return usage_error("--days wants days from 1 to 36500, not \"" + *v + "\"");
        } else if (auto v = option_value(argc, argv, i, "--recent-days")) {
            if (!to_days(*v, a.recent_days)) return usage_error("--recent-days wants days from 1 to 36500, not \"" + *v + "\"");
        } else if (auto v = svg_ok ? option_value(argc, argv, i, "--svg") : std::nullopt) {
            if (v->empty()) return usage_error("--svg wants a file name");
            a.svg = *v;
        } else if (s.rfind("-", 0) == 0) return usage_error("unknown option \"" + s + "\" for " + sub);
        else a.nodes.push_back(s);
    }
    if (a.recent_days && a.recent_days >= a.days)
        return usage_error("--recent-days (" + std::to_string(a.recent_days) + ") must be fewer than --days (" +
                           std::to_string(a.days) + ")");
    return 0;
}

// The trends at `now` over the window, read from the store series by series
// (lib/sys/fleet/readers.hpp: peers need the whole fleet, but not its
// figures all at once), and fleet show's rows; nullopt after one line on
// stderr. `figures` only for --svg, whose plots draw every figure of the
// window.
struct Trends {
    std::vector<fleet::Figure> figures;
    fleet::TrendSettings settings;
    fleet::TrendResult result;
    std::vector<fleet::ShowRow> show;
};
std::optional<Trends> load_trends(const TrendArgs& a, const char* sub, std::int64_t now, bool show) {
    auto store = sys::fleet::Store::open(a.db, sys::fleet::OpenMode::read_only);
    if (!store) {
        std::fprintf(stderr, "gangway fleet %s: %s\n", sub, store.error().c_str());
        return std::nullopt;
    }
    Trends t;
    t.settings.history_s = std::int64_t(a.days) * 86400;
    t.settings.recent_s = a.recent_days ? std::int64_t(a.recent_days) * 86400
                                        : std::min<std::int64_t>(3 * 86400, t.settings.history_s / 2);
    sys::fleet::ReadPlan plan;
    plan.now = now;
    plan.settings = t.settings;
    plan.show = show;
    plan.show_nodes = a.nodes;
    auto view = sys::fleet::read_store(*store, plan);
    if (!view) {
        std::fprintf(stderr, "gangway fleet %s: %s\n", sub, view.error().c_str());
        return std::nullopt;
    }
    t.result = std::move(view->trends);
    t.show = std::move(view->show);
    if (!a.svg.empty()) {
        auto figs = store->figures(now - t.settings.history_s, now + 1, {});
        if (!figs) {
            std::fprintf(stderr, "gangway fleet %s: %s\n", sub, figs.error().c_str());
            return std::nullopt;
        }
        t.figures = std::move(*figs);
    }
    return t;
}

int fleet_show(int argc, char** argv) {
    TrendArgs a;
    if (int rc = parse_trend_args(argc, argv, "show", true, a)) return rc;
    const std::int64_t now = std::time(nullptr);
    auto t = load_trends(a, "show", now, true);
    if (!t) return 1;
    // The table's rows are the named nodes' (all when none is named); the trends are the whole fleet's.
    std::fputs(fleet::render_trend_table(t->show, t->result, a.nodes.empty()).c_str(), stdout);
    if (!a.svg.empty()) {
        auto w = sys::write_file_atomic(a.svg, fleet::render_trend_svg(t->figures, t->result, now, t->settings, a.nodes), 0644,
                                        "the trend plots");
        if (!w) {
            std::fprintf(stderr, "gangway fleet show: %s\n", w.error().c_str());
            return 1;
        }
    }
    return 0;
}

// For scripts: 0 nothing flagged, 1 something (one line each), 2 usage, 3 the store could not be read.
int fleet_flagged(int argc, char** argv) {
    TrendArgs a;
    if (int rc = parse_trend_args(argc, argv, "flagged", false, a)) return rc;
    const std::int64_t now = std::time(nullptr);
    auto t = load_trends(a, "flagged", now, false);
    if (!t) return 3;
    std::fputs(fleet::render_flagged(t->result, a.nodes).c_str(), stdout);
    // The repeat offenders: nodes that stopped jobs by a node-class cause (root's evidence only).
    auto store = sys::fleet::Store::open(a.db, sys::fleet::OpenMode::read_only);
    if (!store) {
        std::fprintf(stderr, "gangway fleet flagged: %s\n", store.error().c_str());
        return 3;
    }
    auto rows = store->stops(now - fleet::kRepeatWindowS, now + 1, a.nodes);
    if (!rows) {
        std::fprintf(stderr, "gangway fleet flagged: %s\n", rows.error().c_str());
        return 3;
    }
    const auto repeat = fleet::repeat_offenders(*rows, now, a.nodes);
    std::fputs(fleet::render_repeat_offenders(repeat).c_str(), stdout);
    // And the nodes root confirmed as a running job's straggler in several jobs.
    auto events = store->watch_events(now - fleet::kRepeatWindowS, now + 1, a.nodes);
    if (!events) {
        std::fprintf(stderr, "gangway fleet flagged: %s\n", events.error().c_str());
        return 3;
    }
    const auto stragglers = fleet::repeat_stragglers(*events, now, a.nodes);
    std::fputs(fleet::render_repeat_stragglers(stragglers).c_str(), stdout);
    return fleet::flags_for(t->result, a.nodes).empty() && repeat.empty() && stragglers.empty() ? 0 : 1;
}

// `fleet stops`: the verdicts `fleet serve --stops-key` stored (issue 33).
int fleet_stops(int argc, char** argv) {
    std::string db = kDefaultDb;
    int days = 30;
    bool timelines = false;
    std::vector<std::string> nodes;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (auto v = option_value(argc, argv, i, "--days")) {
            if (!to_days(*v, days)) return usage_error("--days wants days from 1 to 36500, not \"" + excerpt(*v) + "\"");
        } else if (s == "--timeline") timelines = true;
        else if (s.rfind("-", 0) == 0) return usage_error("unknown option \"" + excerpt(s) + "\" for stops");
        else nodes.push_back(s);
    }
    auto store = sys::fleet::Store::open(db, sys::fleet::OpenMode::read_only);
    if (!store) {
        std::fprintf(stderr, "gangway fleet stops: %s\n", store.error().c_str());
        return 1;
    }
    const std::int64_t now = std::time(nullptr);
    auto rows = store->stops(now - std::int64_t(days) * 86400, now + sys::fleet::kMaxClockSkewS + 1, nodes);
    if (!rows) {
        std::fprintf(stderr, "gangway fleet stops: %s\n", rows.error().c_str());
        return 1;
    }
    std::fputs(fleet::render_stops(*rows, timelines).c_str(), stdout);
    return 0;
}

}  // namespace

int cmd_fleet(int argc, char** argv) {
    const std::string sub = argc > 1 ? argv[1] : "";
    if (sub == "--help" || sub == "-h" || sub == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (sub == "ingest") return fleet_ingest(argc - 1, argv + 1);
    if (sub == "show") return fleet_show(argc - 1, argv + 1);
    if (sub == "flagged") return fleet_flagged(argc - 1, argv + 1);
    if (sub == "stops") return fleet_stops(argc - 1, argv + 1);
    if (sub == "metrics") return cmd_fleet_metrics(argc - 1, argv + 1);
    if (sub == "serve") return cmd_fleet_serve(argc - 1, argv + 1);
    if (sub.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    return usage_error("unknown command \"" + sub + "\"");
}

}  // namespace gangway::cli
