// The repeat rule, and what a run concludes. One bad sample must not drain a
// node: a failure counts (is confirmed) when it was measured again at once
// and failed again (checks that can be re-read: retestable()), or when the
// previous run saw the same check fail on the same device, not longer ago
// than the site's window; an event the driver logged (an Xid) is evidence in
// itself. The same holds the other way: a node gangway drained is resumed
// only after SiteConf::resume_after healthy runs in a row (slurm_action.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "record.hpp"
#include "state.hpp"

namespace gangway::health {

// healthy: nothing failed and every stage finished; pending: something failed,
// nothing confirmed yet; failed: a failure is confirmed (drain);
// inconclusive: nothing failed but a stage did not finish (its deadline, an
// internal error): never a reason to drain, nor to count as healthy.
enum class Verdict { healthy, pending, failed, inconclusive };
const char* to_string(Verdict v);

// Sets Record::confirmed on every failed record. `failed_again`: the keys
// that failed once more when re-measured in this run.
void confirm(std::vector<Record>& records, const std::set<Key>& failed_again, const State& previous, std::int64_t now,
             double window_s);

Verdict verdict(const std::vector<Record>& records, bool inconclusive);

// What this run leaves for the next: its time, its failures, the healthy run
// count (reset by a failure, kept by an inconclusive run), the counters when
// they were read (else the previous ones stay the baseline). `drained` and
// `kmsg_seq` are carried over; the caller updates them.
State next_state(const State& previous, const std::vector<Record>& records, Verdict v, std::int64_t now,
                 const std::optional<std::map<std::string, std::uint64_t>>& counters);

}  // namespace gangway::health
