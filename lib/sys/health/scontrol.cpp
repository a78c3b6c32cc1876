#include "scontrol.hpp"

#include "../../base/text.hpp"
#include "../node/subprocess.hpp"

namespace gangway::sys {
namespace {

Result<std::string> call(const Scontrol& s, const std::vector<std::string>& args) {
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

}  // namespace

Result<std::string> show_node(const Scontrol& s, const std::string& node) { return call(s, {"show", "node", node}); }

Result<void> drain_node(const Scontrol& s, const std::string& node, const std::string& reason) {
    if (auto r = call(s, {"update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason}); !r) return Failure{r.error()};
    return {};
}

Result<void> resume_node(const Scontrol& s, const std::string& node) {
    if (auto r = call(s, {"update", "NodeName=" + node, "State=RESUME"}); !r) return Failure{r.error()};
    return {};
}

}  // namespace gangway::sys
