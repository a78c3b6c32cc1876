#!/bin/bash
# Where a launch's time goes, with the plugin and without it: `srun -N4 -n8
# true` on the test cluster, ROUNDS pairs interleaved as launch_overhead.sh
# runs them, timed from the kernel's process events (perf's sched
# tracepoints: exec and exit of srun, slurmstepd and the tasks), split into
# phases; the median of each phase, both ways, and their difference. Which
# phase the plugin lengthens says where to look: srun's side, slurmstepd's
# SPANK calls before the tasks exec (bench/spank_probe.sh times those), or
# the step's end.
#
#   sudo bench/launch_phases.sh [ROUNDS] [PLUGSTACK ARGS...]   (after a build; default 40)
# Needs perf (Debian's linux-perf).
set -euo pipefail
rounds=${1:-40}
shift || true
extra=("$@")
command -v perf >/dev/null || { echo "launch_phases.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }
. "$(dirname "$0")/cluster_setup.sh"
data=$(mktemp /var/tmp/gangway-phases.XXXXXX)
trap 'rm -f "$data"' EXIT
plugstack $SITE_ARGS "${extra[@]}"; srun -N4 -n8 true; no_plugstack; srun -N4 -n8 true
# Which of each pair goes first alternates, as in launch_overhead.sh.
export PLUGSTACK INSTALL SITE_ARGS
perf record -q -a -e sched:sched_process_exec,sched:sched_process_exit -o "$data" -- bash -c "
  $(declare -f plugstack no_plugstack)
  for ((i = 0; i < $rounds; i++)); do
    if ((i % 2)); then plugstack \$SITE_ARGS ${extra[*]}; srun -N4 -n8 true; no_plugstack; srun -N4 -n8 true
    else no_plugstack; srun -N4 -n8 true; plugstack \$SITE_ARGS ${extra[*]}; srun -N4 -n8 true; fi
  done" >/dev/null 2>&1
plugstack $SITE_ARGS "${extra[@]}"
perf script -i "$data" -F comm,pid,time,event,trace 2>/dev/null | python3 -c '
import re, statistics, sys
rounds = int(sys.argv[1])
launches, cur = [], None
for line in sys.stdin:
    m = re.match(r"\s*(\S+)\s+(\d+)\s+([\d.]+):\s+sched:(\S+):\s+(.*)", line)
    if not m:
        continue
    comm, t, ev, rest = m.group(1), float(m.group(3)) * 1e3, m.group(4), m.group(5)
    if ev == "sched_process_exec" and "filename=/usr/bin/srun" in rest:
        cur = {"t0": t, "stepd": [], "true": [], "true_end": [], "stepd_end": []}
        launches.append(cur)
    elif cur is None:
        continue
    elif ev == "sched_process_exec" and "slurmstepd" in rest:
        cur["stepd"].append(t)
    elif ev == "sched_process_exec" and "filename=/usr/bin/true" in rest:
        cur["true"].append(t)
    elif ev == "sched_process_exit" and comm == "true":
        cur["true_end"].append(t)
    elif ev == "sched_process_exit" and "group_dead=1" in rest.replace("group_dead=true", "group_dead=1"):
        if comm == "slurmstepd":
            cur["stepd_end"].append(t)
        elif comm == "srun":
            cur["end"] = t  # the last thread of srun to go
tags = []
for i in range(rounds):
    tags += ["with", "without"] if i % 2 else ["without", "with"]
phases = ["srun start to first slurmstepd", "first slurmstepd to first task exec", "first to last task exec",
          "last task end to last slurmstepd end", "last slurmstepd end to srun end", "whole launch"]
rows = {"with": [], "without": []}
for tag, L in zip(tags, launches):
    if "end" not in L or len(L["true"]) < 8 or not L["stepd"] or not L["stepd_end"] or not L["true_end"]:
        continue
    s0, se = min(L["stepd"]), max(L["stepd_end"])
    rows[tag].append((s0 - L["t0"], min(L["true"]) - s0, max(L["true"]) - min(L["true"]),
                      se - max(L["true_end"]), L["end"] - se, L["end"] - L["t0"]))
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
print("%-38s %10s %10s %8s" % ("phase (median ms)", "with", "without", "diff"))
for i, p in enumerate(phases):
    print("%-38s %10.2f %10.2f %+8.2f" % (p, med["with"][i], med["without"][i], med["with"][i] - med["without"][i]))
print("launches: %d with, %d without" % (len(rows["with"]), len(rows["without"])))
' "$rounds"
echo "host: $(nproc) cores, $(uname -r), SLURM $(srun --version | awk '{print $2}'), $(date -u +%F)"
