// `gangway fleet metrics` and `gangway fleet serve`: the fleet memory as
// Prometheus reads it (gangway-fleet(8)). `metrics` prints the text once,
// or writes it atomically for node_exporter's textfile collector; `serve`
// answers Prometheus' scrapes of /metrics until SIGTERM or SIGINT.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include "../lib/base/text.hpp"
#include "../lib/fleet/openmetrics.hpp"
#include "../lib/slurm/drain_rules.hpp"
#include "../lib/sys/fleet/http_serve.hpp"
#include "../lib/sys/fleet/metrics_input.hpp"
#include "../lib/sys/fleet/store.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/postmortem/send.hpp"
#include "../lib/sys/postmortem/stops_service.hpp"
#include "../lib/sys/watch/watch_service.hpp"
#include "../lib/sys/node/file.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

using gangway::fleet::Exposition;

const char* kMetricsHelp =
    "usage: gangway fleet metrics [--db FILE] [--format openmetrics|text] [--output FILE]\n"
    "\n"
    "Prints the fleet memory's latest figures per node and device, its flags and the ingest's\n"
    "counts as OpenMetrics text (--format text: Prometheus' classic text format, which\n"
    "node_exporter's textfile collector reads). --output writes FILE atomically instead (a\n"
    "private name in FILE's directory, then renamed), so that the collector never reads half a\n"
    "file, e.g. every few minutes from a timer:\n"
    "  gangway fleet metrics --format text --output /var/lib/prometheus/node-exporter/gangway.prom\n"
    "No sample carries a timestamp (the textfile collector rejects a file that has one).\n"
    "Names and the bound on the number of series: gangway-fleet(8).\n";

const char* kServeHelp =
    "usage: gangway fleet serve --listen ADDR:PORT [--db FILE] [--cache SECONDS] [--request-deadline SECONDS]\n"
    "                           [--stops-key FILE [--stops-wait SECONDS] [--stops-max-jobs N] [--drain-max N]\n"
    "                            [--watch-hang SECONDS]]\n"
    "\n"
    "Serves GET /metrics for Prometheus on exactly ADDR:PORT (a numeric address; [ADDR]:PORT for\n"
    "IPv6; 0.0.0.0 only when every interface is meant), OpenMetrics or the classic text format as\n"
    "the scraper's Accept header asks. The text is built before serving starts, and rebuilt in the\n"
    "background after each ingest and when older than --cache seconds (default 300; 0: on every\n"
    "scrape, which then waits for it): a scrape never waits for a rebuild. Any other path: 404. A\n"
    "request with a body, a Transfer-Encoding or two Content-Lengths: 400 and closed. At most 32\n"
    "connections (the last 8 only for an address that holds none), 8 from one address, 16 KiB of\n"
    "request line and headers, 10 s idle, and a connection is shut down --request-deadline\n"
    "seconds after it opened (default 30; 0: never), however many requests its client sends.\n"
    "Stops cleanly on SIGTERM or SIGINT.\n"
    "\n"
    "--stops-key FILE (the site's key, as the check reads it: yours, mode 0600) also takes the\n"
    "post-mortem's node records on POST /v1/stops (gangway postmortem collect sends them from\n"
    "each node's Epilog), signed with that key (HMAC-SHA256, a timestamp within 300 s), one\n"
    "Content-Length of at most 1 MiB. Per job it waits until every node of the job has sent, or\n"
    "--stops-wait seconds after the first (default 20); a node that sent nothing and that SLURM\n"
    "reports down is lost. Then it judges the job: sets its AdminComment to the line (serve runs\n"
    "as root or SlurmUser), stores the verdict in the store (`gangway fleet stops`), counts it in\n"
    "gangway_job_stops_total, and for a node-class cause in a step run with --gangway-on-fail=requeue\n"
    "(the job's own option) requeues the job without the node and drains it (at most\n"
    "--drain-max nodes per job, default 2; 0: none). Each record is kept in the store before serve\n"
    "answers 202 (a restart judges it after), SLURM is asked once a round for every job waiting\n"
    "(scontrol -o show job) and every node's state, jobs are judged and delivered round robin by\n"
    "owner, and a late node's record judges its job again. At most --stops-max-jobs jobs (default\n"
    "16384) wait at once. GET /v1/stops/JOBID answers a job's line and timeline.\n"
    "\n"
    "With --stops-key it also watches the running jobs (the plugin's watch=, docs/watch.md): POST\n"
    "/v1/progress from each node's agent, GET /v1/status/JOBID for `gangway status`. A job none of\n"
    "whose ranks completed a collective for --watch-hang seconds (default 60, at least 10; and for\n"
    "ten of the job's own intervals between collectives) hangs.\n";

std::string default_db() { return kFleetDefaultDb; }

bool parse_format(const std::string& s, Exposition& out) {
    if (s == "openmetrics") out = Exposition::openmetrics;
    else if (s == "text" || s == "prometheus") out = Exposition::prometheus_text;
    else return false;
    return true;
}

Result<std::string> metrics_text(const std::string& db, Exposition format) {
    auto in = sys::fleet::read_metrics_input(db, static_cast<std::int64_t>(std::time(nullptr)));
    if (!in) return Failure{in.error()};
    return gangway::fleet::render_metrics(*in, format);
}

// serve's source: both formats from one read of the store, and the store's
// ingest counts and the stops' count as its version (every ingest changes its time).
sys::fleet::MetricsSource serve_source(const std::string& db) {
    sys::fleet::MetricsSource src;
    src.build = [db]() -> Result<sys::fleet::MetricsSource::Texts> {
        auto in = sys::fleet::read_metrics_input(db, static_cast<std::int64_t>(std::time(nullptr)));
        if (!in) return Failure{in.error()};
        sys::fleet::MetricsSource::Texts t;
        auto both = gangway::fleet::render_metrics_both(*in);
        t[Exposition::openmetrics] = std::move(both.openmetrics);
        t[Exposition::prometheus_text] = std::move(both.prometheus_text);
        return t;
    };
    src.version = [db]() -> std::string {
        auto store = sys::fleet::Store::open(db, sys::fleet::OpenMode::read_only);
        if (!store) return "";
        const auto c = store->ingest_counts();
        if (!c) return "";
        // The stops too: a verdict of --stops-key shows in gangway_job_stops_total within a second.
        std::uint64_t stops = 0;
        if (const auto s = store->stop_counts())
            for (const auto& n : *s) stops += n.count;
        return std::to_string(c->last_ingest) + "/" + std::to_string(c->node_checks) + "/" + std::to_string(c->job_checks) +
               "/" + std::to_string(stops);
    };
    return src;
}

}  // namespace

int cmd_fleet_metrics(int argc, char** argv) {
    std::string db = default_db(), output;
    Exposition format = Exposition::openmetrics;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kMetricsHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (auto v = option_value(argc, argv, i, "--output")) output = *v;
        else if (auto v = option_value(argc, argv, i, "--format")) {
            if (!parse_format(*v, format)) {
                std::fprintf(stderr, "gangway fleet metrics: --format %s: give openmetrics or text\n", excerpt(*v).c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "gangway fleet metrics: unknown option \"%s\"; see `gangway fleet metrics --help`\n",
                         excerpt(a).c_str());
            return 2;
        }
    }
    const auto text = metrics_text(db, format);
    if (!text) {
        std::fprintf(stderr, "gangway fleet metrics: %s\n", text.error().c_str());
        return 1;
    }
    if (output.empty()) {
        std::fwrite(text->data(), 1, text->size(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (auto w = sys::write_file_atomic(output, *text, 0644, "the metrics file"); !w) {
        std::fprintf(stderr, "gangway fleet metrics: %s\n", w.error().c_str());
        return 1;
    }
    return 0;
}

int cmd_fleet_serve(int argc, char** argv) {
    std::string db = default_db(), listen, stops_key;
    sys::fleet::ServeLimits limits;
    sys::postmortem::StopsSettings stops;
    std::optional<std::uint64_t> watch_hang_s;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kServeHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (auto v = option_value(argc, argv, i, "--listen")) listen = *v;
        else if (auto v = option_value(argc, argv, i, "--cache")) {
            const auto n = parse_uint(*v);
            if (!n || *n > 86400) {
                std::fprintf(stderr, "gangway fleet serve: --cache %s: give seconds from 0 to 86400\n", excerpt(*v).c_str());
                return 2;
            }
            limits.cache_s = *n;
        } else if (auto v = option_value(argc, argv, i, "--request-deadline")) {
            const auto n = parse_uint(*v);
            if (!n || *n > 3600) {
                std::fprintf(stderr, "gangway fleet serve: --request-deadline %s: give seconds from 0 to 3600\n",
                             excerpt(*v).c_str());
                return 2;
            }
            limits.request_deadline_s = *n;
        } else if (auto v = option_value(argc, argv, i, "--stops-key")) stops_key = *v;
        else if (auto v = option_value(argc, argv, i, "--stops-wait")) {
            const auto n = parse_uint(*v);
            if (!n || *n < 1 || *n > 3600) {
                std::fprintf(stderr, "gangway fleet serve: --stops-wait %s: give seconds from 1 to 3600\n", excerpt(*v).c_str());
                return 2;
            }
            stops.limits.wait_s = *n;
        } else if (auto v = option_value(argc, argv, i, "--stops-max-jobs")) {
            const auto n = parse_uint(*v);
            if (!n || *n < 1 || *n > 65536) {
                std::fprintf(stderr, "gangway fleet serve: --stops-max-jobs %s: give a number from 1 to 65536\n", excerpt(*v).c_str());
                return 2;
            }
            stops.limits.max_jobs = *n;
        } else if (auto v = option_value(argc, argv, i, "--drain-max")) {
            const auto n = parse_uint(*v);
            if (!n || *n > slurm::kDrainMaxLimit) {
                std::fprintf(stderr, "gangway fleet serve: --drain-max %s: give a number from 0 to %zu\n", excerpt(*v).c_str(),
                             slurm::kDrainMaxLimit);
                return 2;
            }
            stops.drain_max = *n;
        } else if (auto v = option_value(argc, argv, i, "--watch-hang")) {
            const auto n = parse_uint(*v);
            if (!n || *n < 10 || *n > 86400) {
                std::fprintf(stderr, "gangway fleet serve: --watch-hang %s: give seconds from 10 to 86400\n", excerpt(*v).c_str());
                return 2;
            }
            watch_hang_s = *n;
        } else {
            std::fprintf(stderr, "gangway fleet serve: unknown option \"%s\"; see `gangway fleet serve --help`\n",
                         excerpt(a).c_str());
            return 2;
        }
    }
    if (watch_hang_s && stops_key.empty()) {
        std::fprintf(stderr, "gangway fleet serve: --watch-hang needs --stops-key FILE (the running jobs are watched with the site's key)\n");
        return 2;
    }
    if (listen.empty()) {
        std::fprintf(stderr, "gangway fleet serve: needs --listen ADDR:PORT, e.g. --listen 127.0.0.1:9464\n");
        return 2;
    }
    const auto where = sys::fleet::parse_listen_address(listen);
    if (!where) {
        std::fprintf(stderr, "gangway fleet serve: %s\n", where.error().c_str());
        return 2;
    }
    // Blocked before the server's thread starts, so that the signal comes
    // to wait() below and the destructors stop the server cleanly.
    const sys::fleet::StopSignals signals;
    // The post-mortem's records (issue 33): its thread and store before the
    // server that hands it requests, gone after the server.
    std::unique_ptr<sys::postmortem::StopsService> service;
    std::unique_ptr<sys::watch::WatchService> watch;  // the running jobs' progress (issue 43), with the same key
    std::shared_ptr<const sys::fleet::ExtraRoutes> routes;
    if (!stops_key.empty()) {
        auto key = sys::postmortem::read_stops_key(stops_key);
        if (!key) {
            std::fprintf(stderr, "gangway fleet serve: --stops-key: %s\n", key.error().c_str());
            return 1;
        }
        stops.key = *key;
        stops.db = db;
        stops.scontrol = sys::scontrol_client(10);
        stops.sacctmgr = sys::sacctmgr_client(10);
        stops.unmunge = sys::env_or("GANGWAY_UNMUNGE", "unmunge");
        auto started = sys::postmortem::StopsService::start(std::move(stops));
        if (!started) {
            std::fprintf(stderr, "gangway fleet serve: %s\n", started.error().c_str());
            return 1;
        }
        service = std::move(*started);
        auto both = std::make_shared<sys::fleet::ExtraRoutes>(*service->routes());
        sys::watch::WatchSettings ws;
        ws.key = std::move(*key);
        ws.scontrol = sys::scontrol_client(10);
        ws.unmunge = sys::env_or("GANGWAY_UNMUNGE", "unmunge");
        ws.db = db;
        if (watch_hang_s) ws.hang_min_ns = std::int64_t(*watch_hang_s) * 1'000'000'000;
        ws.log = [](const std::string& line) {
            std::fprintf(stderr, "gangway fleet serve: %s\n", line.c_str());
            std::fflush(stderr);
        };
        watch = std::make_unique<sys::watch::WatchService>(std::move(ws));
        watch->add_routes(*both);
        routes = both;
    }
    auto server = sys::fleet::MetricsServer::start(*where, serve_source(db), limits, routes);
    if (!server) {
        std::fprintf(stderr, "gangway fleet serve: %s\n", server.error().c_str());
        return 1;
    }
    const std::string host = where->ipv6 ? "[" + where->host + "]" : where->host;
    std::fprintf(stderr, "gangway fleet serve: serving http://%s:%u/metrics%s from %s\n", host.c_str(),
                 unsigned((*server)->port()), service ? ", /v1/stops and /v1/progress" : "", db.c_str());
    std::fflush(stderr);
    const int sig = signals.wait();
    (*server).reset();
    watch.reset();
    // Every record taken is in the store: a SLURM call that still runs
    // (bounded by its own deadline) is not waited for past 3 s.
    if (service && !service->stop(std::chrono::seconds(3))) {
        std::fprintf(stderr, "gangway fleet serve: stopped on %s while a SLURM call still ran; the records not yet "
                             "judged or delivered are kept in the store for the next start\n",
                     sig == SIGINT ? "SIGINT" : "SIGTERM");
        std::fflush(stderr);
        std::_Exit(0);
    }
    service.reset();
    std::fprintf(stderr, "gangway fleet serve: stopped on %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}

}  // namespace gangway::cli
