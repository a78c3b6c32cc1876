// The instant-cluster environment of one task: step view + config + data
// addresses -> the variables to set. Pure: the caller reads and writes the
// environment.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "netaddr.hpp"
#include "step_view.hpp"
#include "var_list.hpp"

namespace gangway {

// Data-network addresses a task's variables need.
struct NodeAddrs {
    IpAddr primary;             // node 0's: PRIMARY_ADDR
    IpAddr self;                // this node's: NODE_ADDR
    std::vector<IpAddr> every;  // every node's, in node order: NODE_ADDRS; empty: not set (above node_addrs_max)
};

struct EnvPlan {
    Mode mode = Mode::Off;  // the mode actually used (never Auto)
    std::string skip_reason;  // non-empty: nothing is set, on purpose
    // In a stable, documented order. An empty value means "unset it": a stale
    // value gangway set in an earlier step that this step does not use.
    VarList set;
};

// The variable gangway writes to remember what it set, so that a later step
// (srun inside the batch script) can tell an inherited gangway value from one
// the user chose: "NAME:hash,NAME:hash".
inline constexpr const char* kSetRecordVar = "GANGWAY_SET";

// The tag GANGWAY_SET records for a value.
std::string value_tag(std::string_view value);
// Names whose present value gangway set in an earlier step, unchanged since.
std::vector<std::string> inherited_names(const EnvMap& current);

// Every variable the plugin may set, for readers such as `gangway env`.
const std::vector<std::string>& contract_names();

// `current` holds the task's present values of contract_names() and of
// GANGWAY_SET (absent names are simply missing). A value the user set wins
// and what derives from it follows it; a value inherited from gangway in an
// earlier step is recomputed.
// `extra` (the pinning variables of lib/pin/pin_env) joins the plan under the same rules.
EnvPlan plan_env(const Config& cfg, const StepView& step, const NodeAddrs& addrs, const EnvMap& current,
                 const VarList& extra = {});

// Mode chosen for a step: Auto is Node when every node runs one task.
Mode resolve_mode(Mode requested, const StepView& step);

}  // namespace gangway
