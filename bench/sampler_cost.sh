#!/bin/bash
# What slurmstepd's samples of a running step cost (issue 41 item 7): a step
# of TASKS tasks a node sleeping SECONDS on the 4-node test cluster, sampled
# every INTERVAL s (postmortem_sample=); the sampler thread's own CPU time
# (its /proc/.../task/TID/schedstat, ns, found by its name "gangway-sample"
# in each node's slurmstepd) read just before the tasks end, and the step's
# slurmstepd's whole CPU time beside it. Prints, a node: rounds, CPU a round,
# CPU a round a task, and the share of one core.
#
#   sudo bench/sampler_cost.sh [SECONDS] [TASKS] [INTERVAL]   (after a build; default 40 8 1)
set -euo pipefail
secs=${1:-40} per=${2:-8} every=${3:-1}
. "$(dirname "$0")/cluster_setup.sh"
pm=/var/tmp/gangway-bench-pm
rm -rf "$pm"
plugstack $SITE_ARGS postmortem_dir=$pm postmortem_sample=$every
name=gw-sampler-bench-$$
srun -N4 --ntasks-per-node="$per" --overcommit -J "$name" sleep "$secs" &
srun_pid=$!
sleep 3
job=$(squeue -h -n "$name" -o %i | head -1)
sleep $((secs - 5))
total_ns=0 stepd_ticks=0 nodes=0
for p in $(pgrep -f "slurmstepd: \[$job\.0\]"); do
  for t in /proc/"$p"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = gangway-sample ] || continue
    total_ns=$((total_ns + $(awk '{print $1}' "$t/schedstat")))
    nodes=$((nodes + 1))
  done
  stepd_ticks=$((stepd_ticks + $(awk '{print $14 + $15}' "/proc/$p/stat")))
done
wait "$srun_pid" || true
rounds=$(( (secs - 3) / every ))
[ "$nodes" -gt 0 ] || { echo "no gangway-sample thread found in job $job's slurmstepd: is postmortem_dir= usable (see slurmd's log)?" >&2; exit 1; }
awk -v ns="$total_ns" -v n="$nodes" -v r="$rounds" -v per="$per" -v every="$every" -v ticks="$stepd_ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {
  a = ns / n / r
  printf "nodes=%d tasks a node=%d interval=%d s rounds~%d: sampler CPU %.1f us a round, %.1f us a round a task, %.4f %% of a core; slurmstepd whole (incl. sampler) %.1f ms a node over the step\n", n, per, every, r, a / 1e3, a / per / 1e3, 100 * a / (every * 1e9), 1000 * ticks / hz / n
}'
echo "host: $(nproc) cores, $(uname -r), SLURM $(srun --version | awk '{print $2}'), $(date -u +%F)"
rm -rf "$pm"
