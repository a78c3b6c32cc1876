// What SLURM's configuration says this node's GPUs are: the gpu count (and
// type) of its Gres= in slurm.conf, or of its Name=gpu lines in gres.conf.
// Read from the files on the node, so that no call to slurmctld is needed
// and a healthy node never contacts it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gangway::health {

struct GresGpus {
    std::optional<unsigned> count;  // none: the file says nothing of this node's GPUs
    std::string type;               // "h100" when every GPU entry names the same type, else ""
    std::string source;             // "slurm.conf Gres=", "gres.conf"
};

// slurm.conf's NodeName lines (NodeName=DEFAULT too) naming `node`:
// Gres=gpu:8, gpu:h100:8(S:0-1), gpu:a100:4,gpu:h100:4, gpu (one).
// Malformed lines, or a hostlist that does not expand, are passed over:
// slurmctld would have refused them. Bounded: at most 2^20 names are expanded
// from one file (a large cluster's has one per node); past that nothing matches.
GresGpus gres_from_slurm_conf(std::string_view text, const std::string& node);

// gres.conf's Name=gpu lines for `node` (no NodeName=: every node): Count=N,
// else the files of File=/dev/nvidia[0-3], else one. AutoDetect lines say
// nothing of a count.
GresGpus gres_from_gres_conf(std::string_view text, const std::string& node);

// Whether a driver's model name ("NVIDIA H100 80GB HBM3") is the expected
// model or gres type ("H100", "h100_80gb"): the expected text, letters and
// digits only and in lower case, is part of the name's.
bool model_matches(std::string_view name, std::string_view expected);

}  // namespace gangway::health
