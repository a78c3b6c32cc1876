#include "scontrol.hpp"

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../node/process_env.hpp"
#include "../run/subprocess.hpp"

namespace gangway::sys {
namespace {

Result<void> done(const Result<std::string>& r) {
    if (!r) return Failure{r.error()};
    return {};
}

// done(), with `text` (a long argument: the post-mortem's line, which serve
// logs on its own) shown as "..." in the Failure that names the call.
Result<void> done_eliding(const Result<std::string>& r, const std::string& text) {
    if (r) return {};
    std::string e = r.error();
    if (const auto p = text.empty() ? std::string::npos : e.find(text); p != std::string::npos) e.replace(p, text.size(), "...");
    return Failure{e};
}

// A SLURM client's program: the variable's (a test's stand-in) when set, else
// `name` from PATH.
std::string client_program(const char* variable, const char* name) {
    std::string path = env_or(variable, name);
    return path.empty() ? name : path;
}

// A SLURM client's call: `name` (scontrol, sacctmgr) names it in a Failure.
Result<std::string> client_call(const std::string& name, const std::string& path, double timeout_s,
                                const std::vector<std::string>& args, std::size_t max_bytes = 64 * 1024) {
    std::vector<std::string> argv{path};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_command(argv, timeout_s, max_bytes);
    const std::string what = join(args, " ");
    if (!r) return Failure{name + " " + what + ": " + r.error()};
    if (r->status != 0) {
        std::string out(trim_right(r->output));
        for (auto& c : out)
            if (c == '\n') c = ' ';
        return Failure{name + " " + what + " failed (exit " + std::to_string(r->status) + "): " + out.substr(0, 200)};
    }
    return r->output;
}

}  // namespace

Scontrol scontrol_client(double timeout_s) {
    return Scontrol{client_program("GANGWAY_SCONTROL", "scontrol"), timeout_s, client_program("GANGWAY_SQUEUE", "squeue"),
                    client_program("GANGWAY_SCANCEL", "scancel")};
}

Result<std::string> scontrol_call(const Scontrol& s, const std::vector<std::string>& args) {
    return client_call("scontrol", s.path, s.timeout_s, args);
}

Result<void> cancel_job(const Scontrol& s, const std::string& job) {
    return done(client_call("scancel", s.scancel, s.timeout_s, {job}));
}

Result<std::string> show_node(const Scontrol& s, const std::string& node) { return scontrol_call(s, {"show", "node", node}); }

Result<void> drain_node(const Scontrol& s, const std::string& node, const std::string& reason) {
    return done(scontrol_call(s, {"update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason}));
}

Result<void> resume_node(const Scontrol& s, const std::string& node) {
    return done(scontrol_call(s, {"update", "NodeName=" + node, "State=RESUME"}));
}

Result<std::string> squeue_call(const Scontrol& s, const std::vector<std::string>& args) {
    return client_call("squeue", s.squeue, s.timeout_s, args);
}

Result<slurm::JobView> job_view(const Scontrol& s, const std::string& job) {
    const auto id = parse_uint<std::uint32_t>(job);
    if (!id || *id == 0) return Failure{"\"" + quiet_text(job, 40) + "\" is not a job id"};
    const auto text = squeue_call(s, {"--noheader", "--states=all", "--jobs=" + job, std::string("--format=") + slurm::kJobFormat});
    if (!text) return Failure{text.error()};
    try {
        if (auto v = slurm::view_of(slurm::parse_job_views(*text), *id)) return std::move(*v);
    } catch (const Error& e) {
        return Failure{std::string("squeue -j ") + job + ": " + e.what()};
    }
    return Failure{"squeue -j " + job + " printed no line of job " + job};
}

Result<std::vector<slurm::JobView>> jobs_of_user(const Scontrol& s, std::uint32_t uid) {
    const auto text = squeue_call(s, {"--noheader", "--states=all", "--user=" + std::to_string(uid), std::string("--format=") + slurm::kJobFormat});
    if (!text) return Failure{text.error()};
    try {
        return slurm::parse_job_views(*text);
    } catch (const Error& e) {
        return Failure{"squeue -u " + std::to_string(uid) + ": " + e.what()};
    }
}

Result<std::string> job_admin_comment(const Scontrol& s, const std::string& job) {
    const auto text = squeue_call(s, {"--noheader", "--states=all", "--jobs=" + job, "--Format=" + slurm::admin_comment_format()});
    if (!text) return Failure{text.error()};
    try {
        return slurm::parse_admin_comment(*text);
    } catch (const Error& e) {
        return Failure{"squeue -j " + job + ": " + e.what()};
    }
}

Result<void> requeue_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"requeue", job})); }

Result<void> requeue_hold_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"requeuehold", job})); }

Result<void> release_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"release", job})); }

Result<void> exclude_nodes(const Scontrol& s, const std::string& job, const std::string& list) {
    return done(scontrol_call(s, {"update", "JobId=" + job, "ExcNodeList=" + list}));
}

Result<void> set_admin_comment(const Scontrol& s, const std::string& job, const std::string& text) {
    return done_eliding(scontrol_call(s, {"update", "JobId=" + job, "AdminComment=" + text}), text);
}

Result<std::string> show_nodes(const Scontrol& s) {
    return client_call("scontrol", s.path, s.timeout_s, {"-o", "show", "node"}, kListingBytes);
}

Result<std::vector<slurm::JobView>> all_job_views(const Scontrol& s) {
    const auto text = client_call("squeue", s.squeue, s.timeout_s,
                                  {"--noheader", "--states=all", std::string("--format=") + slurm::kJobFormat}, kListingBytes);
    if (!text) return Failure{text.error()};
    try {
        return slurm::parse_job_views(*text);
    } catch (const Error& e) {
        return Failure{std::string("squeue (every job): ") + e.what()};
    }
}

Result<std::string> show_config(const Scontrol& s) { return scontrol_call(s, {"show", "config"}); }

Sacctmgr sacctmgr_client(double timeout_s) {
    return Sacctmgr{client_program("GANGWAY_SACCTMGR", "sacctmgr"), timeout_s};
}

Result<std::string> sacctmgr_call(const Sacctmgr& s, const std::vector<std::string>& args) {
    return client_call("sacctmgr", s.path, s.timeout_s, args);
}

Result<void> set_accounting_admin_comment(const Sacctmgr& s, const std::string& job, const std::string& text) {
    // -i: commit at once (no question on a terminal that is not there).
    return done_eliding(sacctmgr_call(s, {"-i", "modify", "job", "where", "jobid=" + job, "set", "AdminComment=" + text}), text);
}

}  // namespace gangway::sys
