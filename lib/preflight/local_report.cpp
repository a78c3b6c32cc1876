#include "local_report.hpp"

namespace gangway::preflight {

Report local_report(const std::string& host, bool full, const std::vector<LocalStage>& stages) {
    Report rep;
    rep.mode = full ? "full" : "quick";
    rep.bootstrap = "local";
    NodeResult me;
    me.name = host;
    for (const auto& s : stages) {
        const auto& r = s.result;
        rep.stages.push_back(r);
        rep.seconds += r.seconds;
        for (const auto& f : s.findings) {
            rep.findings.push_back(host + ": " + r.name + ": " + f.what + ": " + f.problem);
            me.reasons.push_back(f.what + ": " + f.problem);
        }
        if (r.status == StageStatus::failed || r.status == StageStatus::aborted) {
            me.status = NodeStatus::faulty;
            if (s.findings.empty()) {
                me.reasons.push_back(r.name + ": " + r.detail);
                rep.findings.push_back(host + ": " + r.name + ": " + r.detail);
            }
        }
    }
    rep.nodes.push_back(me);
    return rep;
}

}  // namespace gangway::preflight
