// `gangway postmortem [JOBID]` (the job's owner or root: the verdict's line
// and timeline), the internal `gangway postmortem send` (one node's record
// to fleet serve, as the Epilog's collector sends it) and `gangway
// postmortem resend` (the node's outbox: the records serve did not take,
// sent again from the Prolog and Epilog): the post-mortem's delivery
// (docs/postmortem.md).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/fleet/stops.hpp"
#include "../lib/postmortem/record.hpp"
#include "../lib/sys/fleet/store.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/run/subprocess.hpp"
#include "../lib/sys/postmortem/outbox.hpp"
#include "../lib/sys/postmortem/send.hpp"
#include "../lib/env/config.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/postmortem/munge_read.hpp"
#include "../lib/sys/postmortem/stops_auth.hpp"
#include "../lib/sys/slurm/scontrol.hpp"
#include "commands.hpp"

namespace gangway::cli {
namespace {

const char* kSendHelp =
    "usage: gangway postmortem send FILE --to URL --key FILE\n"
    "\n"
    "Sends a node's record (FILE: its JSON, as `gangway postmortem collect` writes it) to fleet\n"
    "serve's /v1/stops at URL (http://HOST:PORT), signed with the site's key (a file of yours,\n"
    "mode 0600). One retry; each try has 3 s. For the Epilog and tests; collect sends by itself.\n";

const char* kResendHelp =
    "usage: gangway postmortem resend [--dir=DIR] [--to=URL --key=FILE] [--within=SEC]\n"
    "\n"
    "Sends again the node's records that fleet serve did not take when their Epilog sent them (no\n"
    "answer, or busy): the ones kept in DIR/outbox (DIR: the plugin's postmortem_dir=, %n standing\n"
    "for the host name up to its first dot; default /var/spool/gangway/postmortem), oldest first,\n"
    "each signed afresh, until one is not taken or SEC seconds (default 5) are spent. Root's, from\n"
    "the Prolog and Epilog (contrib/slurm); `gangway node-check --slurm` does the same.\n"
    "  --to, --key  serve's URL and the site's key file now (default: those each record was kept with)\n"
    "Exit 0: the outbox is empty (or missing); 1: records wait in it (one line says why); 2: usage.\n";

const char* kJobHelp =
    "usage: gangway postmortem [JOBID] [--from URL | --db FILE]\n"
    "\n"
    "Prints who stopped the job: the line gangway put in its AdminComment and the timeline (the\n"
    "first failure, its evidence, the cascade), read from fleet serve at URL (--from, or\n"
    "GANGWAY_POSTMORTEM_URL; http://HOST:PORT) or, for root on the admin host, from the fleet store\n"
    "(--db). For the job's owner or root (serve checks a MUNGE credential this command makes with\n"
    "munge). Without JOBID: SLURM_JOB_ID, else your newest job that\n"
    "slurmctld still knows. Exit 0 when a stop was found, 1 when none is known.\n";

int fail(const std::string& line, int rc = 1) {
    std::fprintf(stderr, "gangway postmortem: %s\n", line.c_str());
    return rc;
}

}  // namespace

int cmd_postmortem_send(int argc, char** argv) {
    std::string file, to, key_file;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kSendHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--to")) to = *v;
        else if (auto v = option_value(argc, argv, i, "--key")) key_file = *v;
        else if (a.rfind("-", 0) == 0) return fail("unknown option \"" + excerpt(a) + "\"; see `gangway postmortem send --help`", 2);
        else if (file.empty()) file = a;
        else return fail("one FILE only; see `gangway postmortem send --help`", 2);
    }
    if (file.empty() || to.empty() || key_file.empty()) return fail("needs FILE, --to URL and --key FILE", 2);
    const auto url = sys::parse_http_url(to);
    if (!url) return fail("--to: " + url.error(), 2);
    const auto key = sys::postmortem::read_stops_key(key_file);
    if (!key) return fail(key.error());
    const auto body = sys::read_owned_file(file, ::geteuid(), sys::postmortem::kMaxStopBody);
    if (!body) return fail(file + ": " + body.error());
    postmortem::NodeRecord r;
    try {
        r = postmortem::parse_node_record(*body);
    } catch (const Error& e) {
        return fail(file + ": " + e.what());
    }
    // The file's own bytes are sent: what the node wrote is what is signed.
    const auto sent = sys::postmortem::send_stop(*url, *key, r.job, r.node, *body);
    if (sent.delivery != postmortem::Delivery::delivered) return fail(sent.line);
    std::printf("%s\n", sent.line.c_str());
    return 0;
}

int cmd_postmortem_resend(int argc, char** argv) {
    std::string dir = "/var/spool/gangway/postmortem", to, key_file;
    double within = sys::postmortem::kResendWithinS;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kResendHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--dir")) dir = *v;
        else if (auto v = option_value(argc, argv, i, "--to")) to = *v;
        else if (auto v = option_value(argc, argv, i, "--key")) key_file = *v;
        else if (auto v = option_value(argc, argv, i, "--within")) {
            const auto t = parse_double(*v);
            if (!t || !(*t > 0 && *t <= 60)) return fail("--within wants seconds from 0 to 60, not \"" + excerpt(*v) + "\"", 2);
            within = *t;
        } else return fail("unknown argument \"" + excerpt(a) + "\"; see `gangway postmortem resend --help`", 2);
    }
    if (to.empty() != key_file.empty()) return fail("--to and --key go together (or neither: each record's own)", 2);
    sys::postmortem::ResendOptions o;
    if (!to.empty()) {
        auto url = sys::parse_http_url(to);
        if (!url) return fail("--to: " + url.error(), 2);
        o.to = std::move(*url);
        o.key_file = key_file;
    }
    o.within_s = within;
    o.now_s = static_cast<std::int64_t>(std::time(nullptr));
    try {
        dir = expand_node_dir(dir, sys::short_host_name());
    } catch (const Error& e) {
        return fail(e.what(), 2);
    }
    const auto r = sys::postmortem::resend_outbox(dir, o);
    if (!r) return fail(r.error());
    for (const auto& l : r->lines) std::fprintf(stderr, "gangway postmortem resend: %s\n", l.c_str());
    return r->left || r->busy ? 1 : 0;
}

int cmd_postmortem_job(int argc, char** argv) {
    std::string job, from = sys::env_or("GANGWAY_POSTMORTEM_URL", ""), db;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kJobHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--from")) from = *v;
        else if (auto v = option_value(argc, argv, i, "--db")) db = *v;
        else if (a.rfind("-", 0) == 0) return fail("unknown option \"" + excerpt(a) + "\"; see `gangway postmortem --help`", 2);
        else if (job.empty()) job = a;
        else return fail("one JOBID only", 2);
    }
    const auto sc = sys::scontrol_client(10);
    const std::uint32_t me = ::getuid();
    if (job.empty()) job = sys::env_or("SLURM_JOB_ID", "");
    if (job.empty()) {
        const auto mine = sys::jobs_of_user(sc, me);
        if (!mine) return fail("no JOBID given and " + mine.error());
        const auto newest = slurm::newest_job_of(*mine, me);
        if (!newest) return fail("no JOBID given and slurmctld knows no job of yours; give the JOBID");
        job = std::to_string(*newest);
    }
    const auto id = parse_uint<std::uint32_t>(job);
    if (!id || *id == 0) return fail("\"" + excerpt(job) + "\" is not a job id", 2);
    // The job's owner or root: asked of SLURM, which knows the job for
    // MinJobAge after its end. Owner and AdminComment from fields no user
    // writes (lib/slurm/job_view.hpp), never from scontrol's text of the job.
    std::string line;
    const auto shown = sys::job_view(sc, job);
    if (shown) {
        if (::geteuid() != 0 && shown->uid != me) return fail("job " + job + " is not yours; its owner or root may read its post-mortem");
        const auto comment = sys::job_admin_comment(sc, job);
        if (comment && comment->starts_with("gangway:")) line = *comment;
    } else if (::geteuid() != 0) {
        return fail(shown.error() + " (slurmctld forgets a job some minutes after its end: ask root, or read sacct -j " +
                    job + " -o AdminComment)");
    }
    std::string timeline;
    if (!db.empty()) {
        if (::geteuid() != 0) return fail("--db is root's, on the admin host; give --from URL", 2);
        auto store = sys::fleet::Store::open(db, sys::fleet::OpenMode::read_only);
        if (!store) return fail(store.error());
        auto rows = store->stops_of_job(*id);
        if (!rows) return fail(rows.error());
        for (const auto& r : *rows) timeline += fleet::stop_text(r);
    } else if (!from.empty()) {
        const auto url = sys::parse_http_url(from);
        if (!url) return fail("--from: " + url.error(), 2);
        // Who asks, for serve to check: a MUNGE credential made for this job's read.
        const auto cred = sys::postmortem::munge_credential(sys::postmortem::stops_read_payload(*id));
        if (!cred) {
            if (line.empty()) return fail(cred.error());
            std::fprintf(stderr, "gangway postmortem: %s\n", cred.error().c_str());  // the line, without the timeline
        } else {
            const auto a = sys::postmortem::munge_get(*url, "/v1/stops/" + job, *cred);
            if (!a) return fail(a.error());
            if (a->status == 200) timeline = a->body;
            else if (a->status != 404) return fail("fleet serve answered " + std::to_string(a->status) + ": " + quiet_text(a->body, 200));
        }
    }
    if (line.empty() && timeline.empty()) {
        std::printf("gangway: no stop of job %s is known%s\n", job.c_str(),
                    db.empty() && from.empty() ? " (give --from URL, or set GANGWAY_POSTMORTEM_URL, for the timeline)" : "");
        return 1;
    }
    // The timeline's first line is the same line: print it once. Each line
    // through printable_name: what a URL answered reaches the terminal tamed.
    if (!line.empty() && !timeline.starts_with(line)) std::printf("%s\n", printable_name(line, 300).c_str());
    for_each_line(timeline, [](std::string_view l, std::size_t) { std::printf("%s\n", printable_name(l, 400).c_str()); });
    return 0;
}

}  // namespace gangway::cli
