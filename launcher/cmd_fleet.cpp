// `gangway fleet`: the fleet memory on the admin host. Each subcommand parses
// its options and calls lib (lib/sys/fleet: the spool and the store;
// lib/fleet: the rows, the table).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "../lib/base/text.hpp"
#include "../lib/fleet/show.hpp"
#include "../lib/sys/fleet/ingest.hpp"
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
    "  ingest [--spool DIR] [--db FILE] [--keep-days N]\n"
    "         store every report in the spool (root only; from a timer or EpilogSlurmctld):\n"
    "         each file once, a bad one set aside in DIR/rejected/ with one line\n"
    "         (defaults: --spool /var/spool/gangway/fleet, --db /var/lib/gangway/fleet.db,\n"
    "         --keep-days 90: raw figures older than that fold into daily medians)\n"
    "  show [--db FILE] [--days N] [NODE...]\n"
    "         a table: node, kind of figure, its last value, how many checks (default: 30 days)\n"
    "  metrics [--db FILE] [--format openmetrics|text] [--output FILE]\n"
    "         the latest figures, the flags and the ingest's counts as OpenMetrics text, for\n"
    "         node_exporter's textfile collector (--output: written atomically)\n"
    "  serve --listen ADDR:PORT [--db FILE] [--cache SECONDS]\n"
    "         serve them on /metrics for Prometheus to scrape, until SIGTERM or SIGINT\n"
    "\n"
    "See gangway(1), FLEET.\n";

int usage_error(const std::string& line) {
    std::fprintf(stderr, "gangway fleet: %s; see gangway fleet --help\n", line.c_str());
    return 2;
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
        } else return usage_error("unknown option \"" + s + "\" for ingest");
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
    for (const auto& line : r->lines)
        std::fprintf(stderr, "gangway fleet ingest: rejected %s (set aside in %s/rejected)\n", line.c_str(), o.spool.c_str());
    // The counts `fleet metrics` shows (gangway_rejected_files_total, the last ingest's time).
    if (auto c = store->record_ingest(o.now, r->rejected); !c) {
        std::fprintf(stderr, "gangway fleet ingest: %s\n", c.error().c_str());
        return 1;
    }
    std::printf("gangway fleet ingest: %zu stored, %zu already there, %zu rejected; %zu old figure(s) folded into daily rows\n",
                r->stored, r->duplicates, r->rejected, r->folded.figures);
    return 0;
}

int fleet_show(int argc, char** argv) {
    std::string db = kDefaultDb;
    int days = 30;
    std::vector<std::string> nodes;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (auto v = option_value(argc, argv, i, "--days")) {
            if (!to_days(*v, days)) return usage_error("--days wants days from 1 to 36500, not \"" + *v + "\"");
        } else if (s.rfind("-", 0) == 0) return usage_error("unknown option \"" + s + "\" for show");
        else nodes.push_back(s);
    }
    auto store = sys::fleet::Store::open(db, sys::fleet::OpenMode::read_only);
    if (!store) {
        std::fprintf(stderr, "gangway fleet show: %s\n", store.error().c_str());
        return 1;
    }
    const std::int64_t now = std::time(nullptr);
    auto figs = store->figures(now - std::int64_t(days) * 86400, now + 86400, nodes);
    if (!figs) {
        std::fprintf(stderr, "gangway fleet show: %s\n", figs.error().c_str());
        return 1;
    }
    std::fputs(fleet::render_show(fleet::show_rows(*figs)).c_str(), stdout);
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
    if (sub == "metrics") return cmd_fleet_metrics(argc - 1, argv + 1);
    if (sub == "serve") return cmd_fleet_serve(argc - 1, argv + 1);
    if (sub.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    return usage_error("unknown command \"" + sub + "\"");
}

}  // namespace gangway::cli
