#!/bin/bash
# What --gangway-check costs a step beyond the check itself, on the test
# cluster, interleaved in one run: (a) `srun -N4 -n4 true` with the plugin and
# no check, (b) `srun -N4 -n4 --gangway-check true`, (c) `srun -N4 -n4 gangway
# check` (the same check as the step's own command), (d) `srun -N4 -n4 gangway
# run -- true` (the check, then the same command in the same process). (b) - (a)
# is what the check adds to a launch, (c) - (a) the check's own time; their
# ratio is the figure (goal: about 1). launch_overhead.sh measures (a) against
# no plugin.
#
#   sudo bench/check_overhead.sh [ROUNDS]   (after a build; default 20 rounds)
set -euo pipefail
rounds=${1:-20}
. "$(dirname "$0")/cluster_setup.sh"
plugstack $SITE_ARGS launcher="$INSTALL/gangway"

now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }
timed() {  # prints the wall time of one srun in ms
  local t0 t1; t0=$(now_ms); srun -N4 -n4 "$@" >/dev/null 2>&1; t1=$(now_ms)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
plain=() checked=() own=() run=()
for ((i = 0; i < 2; i++)); do timed true >/dev/null; timed --gangway-check true >/dev/null; timed gangway check >/dev/null; timed gangway run -- true >/dev/null; done
for ((i = 0; i < rounds; i++)); do
  # Rotate the order, so that a drift in the machine's load favours none.
  for k in 0 1 2 3; do
    case $(((i + k) % 4)) in
      0) plain+=("$(timed true)");;
      1) checked+=("$(timed --gangway-check true)");;
      2) own+=("$(timed gangway check)");;
      3) run+=("$(timed gangway run -- true)");;
    esac
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mp=$(median "${plain[@]}"); mc=$(median "${checked[@]}"); mo=$(median "${own[@]}"); mr=$(median "${run[@]}")
echo "rounds=$rounds  medians: unchecked ${mp} ms, --gangway-check ${mc} ms, gangway check as the command ${mo} ms, gangway run -- true ${mr} ms"
awk -v p="$mp" -v c="$mc" -v o="$mo" -v r="$mr" 'BEGIN {printf "added by --gangway-check: %.1f ms; by gangway check: %.1f ms (ratio %.3f); by gangway run -- true: %.1f ms (ratio %.3f)\n", c - p, o - p, (c - p) / (o - p), r - p, (c - p) / (r - p)}'
echo "host: $(nproc) cores, $(uname -r), SLURM $(srun --version | awk '{print $2}'), $(date -u +%F)"
