#include "scontrol.hpp"

#include "../../base/text.hpp"
#include "../node/process_env.hpp"
#include "../node/subprocess.hpp"

namespace gangway::sys {
namespace {

Result<void> done(const Result<std::string>& r) {
    if (!r) return Failure{r.error()};
    return {};
}

}  // namespace

Scontrol scontrol_client(double timeout_s) {
    Scontrol s;
    s.path = env_or("GANGWAY_SCONTROL", "scontrol");
    if (s.path.empty()) s.path = "scontrol";
    s.timeout_s = timeout_s;
    return s;
}

Result<std::string> scontrol_call(const Scontrol& s, const std::vector<std::string>& args) {
    std::vector<std::string> argv{s.path};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_command(argv, s.timeout_s);
    const std::string what = join(args, " ");
    if (!r) return Failure{"scontrol " + what + ": " + r.error()};
    if (r->status != 0) {
        std::string out(trim_right(r->output));
        for (auto& c : out)
            if (c == '\n') c = ' ';
        return Failure{"scontrol " + what + " failed (exit " + std::to_string(r->status) + "): " + out.substr(0, 200)};
    }
    return r->output;
}

Result<std::string> show_node(const Scontrol& s, const std::string& node) { return scontrol_call(s, {"show", "node", node}); }

Result<void> drain_node(const Scontrol& s, const std::string& node, const std::string& reason) {
    return done(scontrol_call(s, {"update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason}));
}

Result<void> resume_node(const Scontrol& s, const std::string& node) {
    return done(scontrol_call(s, {"update", "NodeName=" + node, "State=RESUME"}));
}

Result<std::string> show_job(const Scontrol& s, const std::string& job) { return scontrol_call(s, {"-o", "show", "job", job}); }

Result<void> requeue_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"requeue", job})); }

Result<void> requeue_hold_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"requeuehold", job})); }

Result<void> release_job(const Scontrol& s, const std::string& job) { return done(scontrol_call(s, {"release", job})); }

Result<void> exclude_nodes(const Scontrol& s, const std::string& job, const std::string& list) {
    return done(scontrol_call(s, {"update", "JobId=" + job, "ExcNodeList=" + list}));
}

Result<void> set_admin_comment(const Scontrol& s, const std::string& job, const std::string& text) {
    return done(scontrol_call(s, {"update", "JobId=" + job, "AdminComment=" + text}));
}

Result<std::string> show_nodes(const Scontrol& s) { return scontrol_call(s, {"-o", "show", "node"}); }

}  // namespace gangway::sys
