// The node agent of the running job (issue 43, docs/watch.md): one root
// process a step a node, started by the plugin's sampler in slurmstepd when
// the site turned watching on (plugstack.conf watch=), ended by the end of
// its stdin (slurmstepd's end, or the step's) or of the job's directory.
// Each interval, shortly after the ranks wrote their pace reports, it reads
//   - slurmstepd's samples of the step's tasks (<job dir>/samples.<step>,
//     root's): which ranks run here, their state, CPU time and run-queue wait,
//     and the pressure;
//   - each of those ranks' pace report (<job dir>/user/pace.RANK.json, the
//     user's word: a report for a rank root does not place here is dropped);
// and POSTs them, signed under the site's key as a progress record, to
// `fleet serve` (/v1/progress). When serve answers "dump" (a confirmed
// hang), it leaves <job dir>/user/dump.request, on which every rank's hook
// writes its post-mortem dump at once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "../../watch/pace.hpp"
#include "../net/http_client.hpp"

namespace gangway::sys::watch {

struct AgentSettings {
    std::string job_dir;  // <postmortem_dir>/<job>
    std::uint32_t job = 0, step = 0, uid = 0;
    std::string node;
    std::int64_t interval_ns = 10'000'000'000;
    gangway::watch::OnHang on_hang = gangway::watch::OnHang::report;
    HttpUrl to;
    std::string key;
    int stop_fd = 0;  // its end (EOF) ends the agent
};

// One round: the record as it would be sent, from the files as they are now
// (nullopt with `why` when there is nothing to send yet: no samples).
std::optional<gangway::watch::NodeProgress> read_progress(const AgentSettings& s, std::int64_t now_ns, std::string& why);

// Rounds until stop_fd ends or the job's directory is gone; `log` gets one
// line a problem (the plugin's agent writes them to <job dir>/watch.<step>).
// Returns 0.
int run_agent(const AgentSettings& s, const std::function<void(const std::string&)>& log);

}  // namespace gangway::sys::watch
