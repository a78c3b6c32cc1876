// The running job (issue 43, docs/watch.md):
//   gangway status [JOBID] [--from URL]
//       the job's ranks' pace, and any straggler or hang, as `fleet serve`
//       judged them (its owner or root: a MUNGE credential says who asks).
//   gangway watch-node --job-dir DIR --job J --step S --node N --uid U
//                      --interval SECONDS --to URL --key FILE [--on-hang report|cancel|requeue]
//       the node agent (lib/sys/watch/agent): the plugin starts it in
//       slurmstepd, root, with its stdin a pipe whose end ends it. Not for people.
#include <cstdio>
#include <string>

#include "../lib/base/text.hpp"
#include "../lib/sys/net/http_client.hpp"
#include "../lib/sys/node/file.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/postmortem/send.hpp"
#include "../lib/sys/postmortem/munge_read.hpp"
#include "../lib/sys/postmortem/stops_auth.hpp"
#include "../lib/sys/run/deadline.hpp"
#include "../lib/sys/run/subprocess.hpp"
#include "../lib/sys/watch/agent.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

const char* kStatusHelp =
    "usage: gangway status [JOBID] [--from URL]\n"
    "The running job's pace and any straggler (the node the others wait for, by how much, and\n"
    "why where root's view says so) or hang (the ranks that did not enter the collective the\n"
    "others wait in), as fleet serve judged them from the nodes' reports. JOBID defaults to\n"
    "$SLURM_JOB_ID; --from to $GANGWAY_WATCH_URL, else $GANGWAY_POSTMORTEM_URL. The job's owner\n"
    "or root; needs munged. Exit 0 when serve knows the job, 1 when not, 2 on bad usage.\n";

int fail(const std::string& line, int status = 1) {
    std::fprintf(stderr, "gangway status: %s\n", line.c_str());
    return status;
}

}  // namespace

int cmd_status(int argc, char** argv) {
    std::string job = sys::env_or("SLURM_JOB_ID"), from = sys::env_or("GANGWAY_WATCH_URL", sys::env_or("GANGWAY_POSTMORTEM_URL"));
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kStatusHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--from")) from = *v;
        else if (!a.empty() && a[0] != '-') job = a;
        else return fail("unknown option \"" + quiet_text(a, 40) + "\"; see `gangway status --help`", 2);
    }
    const auto id = parse_uint<std::uint32_t>(job);
    if (!id || *id == 0) return fail(job.empty() ? "give a JOBID (or run it inside the job)" : "\"" + quiet_text(job, 40) + "\" is not a job id", 2);
    if (from.empty()) return fail("give --from URL (fleet serve's), or set GANGWAY_WATCH_URL", 2);
    const auto url = sys::parse_http_url(from);
    if (!url) return fail("--from: " + url.error(), 2);
    const auto cred = sys::postmortem::munge_credential(sys::postmortem::status_read_payload(*id));
    if (!cred) return fail(cred.error());
    const auto a = sys::postmortem::munge_get(*url, sys::postmortem::kStatusPath + job, *cred);
    if (!a) return fail(a.error());
    for_each_line(a->body, [&](std::string_view l, std::size_t) {
        std::fprintf(a->status == 200 ? stdout : stderr, "%s%s\n", a->status == 200 ? "" : "gangway status: ", printable_name(l, 400).c_str());
    });
    return a->status == 200 ? 0 : 1;
}

int cmd_watch_node(int argc, char** argv) {
    sys::watch::AgentSettings s;
    std::string to, key_file;
    for (int i = 1; i < argc; ++i) {
        const auto num = [](const std::string& v) { return parse_uint<std::uint32_t>(v).value_or(0); };
        if (auto v = option_value(argc, argv, i, "--job-dir")) s.job_dir = *v;
        else if (auto v = option_value(argc, argv, i, "--job")) s.job = num(*v);
        else if (auto v = option_value(argc, argv, i, "--step")) s.step = num(*v);
        else if (auto v = option_value(argc, argv, i, "--uid")) s.uid = num(*v);
        else if (auto v = option_value(argc, argv, i, "--node")) s.node = *v;
        else if (auto v = option_value(argc, argv, i, "--interval")) s.interval_ns = std::int64_t(num(*v)) * 1'000'000'000;
        else if (auto v = option_value(argc, argv, i, "--to")) to = *v;
        else if (auto v = option_value(argc, argv, i, "--key")) key_file = *v;
        else if (auto v = option_value(argc, argv, i, "--on-hang")) {
            const auto h = gangway::watch::parse_on_hang(*v);
            if (!h) return 2;
            s.on_hang = *h;
        } else return 2;
    }
    if (s.job_dir.empty() || s.job == 0 || s.node.empty() || s.interval_ns <= 0 || to.empty()) return 2;
    // Problems go to <job dir>/watch.<step> (root's): the agent's stderr is nobody's.
    const std::string dir = s.job_dir, name = "watch." + std::to_string(s.step);
    const auto log = [&](const std::string& line) {
        (void)sys::write_file_atomic(dir, name, line + "\n", 0600, "the agent's line");
    };
    const auto url = sys::parse_http_url(to);
    if (!url) {
        log("watch_to=" + to + ": " + url.error());
        return 2;
    }
    s.to = *url;
    const auto key = sys::postmortem::read_stops_key(key_file);
    if (!key) {
        log(key.error());
        return 2;
    }
    s.key = *key;
    return sys::watch::run_agent(s, log);
}

}  // namespace gangway::cli
