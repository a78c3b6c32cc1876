#!/bin/bash
# What gangway adds to step launch: `srun -N4 -n8 true` on the test cluster
# with the plugin loaded and without it, interleaved in one run so both see
# the same machine noise. Prints the medians and their ratio (goal <= 1.02).
# The plugin runs with its shipped defaults (pinning on, no topology cache),
# plus the data-network arguments every site sets (iface=, addr_template=).
#
#   sudo bench/launch_overhead.sh [ROUNDS] [PLUGSTACK ARGS...]   (after a build; default 30 rounds)
# Extra arguments go on the plugin's line after the data-network ones, for
# example pin=off, or topology=FILE (a cache written by gangway topo --write-cache).
# LAUNCH_BASELINE="ARGS" compares with the plugin loaded with those arguments
# instead of without it (rank_order=topology against the plugin without it:
# LAUNCH_BASELINE="" bench/launch_overhead.sh 30 rank_order=topology topology_file=FILE).
set -euo pipefail
rounds=${1:-30}
shift || true
extra=("$@")
. "$(dirname "$0")/cluster_setup.sh"

now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }
once() {  # prints the wall time of one launch in ms
  local t0 t1; t0=$(now_ms); srun -N4 -n8 true; t1=$(now_ms)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
with=() without=()
if [ -n "${LAUNCH_BASELINE+set}" ]; then
  read -r -a base_args <<<"$LAUNCH_BASELINE"
  no_plugstack() { plugstack $SITE_ARGS "${base_args[@]}"; }
fi
for ((i = 0; i < 3; i++)); do plugstack $SITE_ARGS "${extra[@]}"; once >/dev/null; no_plugstack; once >/dev/null; done  # warm-up
for ((i = 0; i < rounds; i++)); do
  # Alternate which goes first, so a drift in the machine's load favours neither.
  if ((i % 2)); then
    plugstack $SITE_ARGS "${extra[@]}"; with+=("$(once)"); no_plugstack; without+=("$(once)")
  else
    no_plugstack; without+=("$(once)"); plugstack $SITE_ARGS "${extra[@]}"; with+=("$(once)")
  fi
done
plugstack $SITE_ARGS "${extra[@]}"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mw=$(median "${with[@]}"); mo=$(median "${without[@]}")
echo "plugstack: $(cat "$PLUGSTACK")"
[ -n "${LAUNCH_BASELINE+set}" ] && echo "baseline: the plugin with: $SITE_ARGS $LAUNCH_BASELINE"
echo "rounds=$rounds  median with gangway: ${mw} ms  without: ${mo} ms  ratio: $(awk -v a="$mw" -v b="$mo" 'BEGIN {printf "%.3f", a / b}')"
echo "host: $(nproc) cores, $(uname -r), SLURM $(srun --version | awk '{print $2}'), $(date -u +%F)"
