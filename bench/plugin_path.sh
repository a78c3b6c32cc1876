#!/bin/bash
# gangway.so's cost in one slurmstepd, phase by phase (dlopen, init,
# user_init, task_init), measured without SLURM by bench/stepd_sim.c, which
# plays slurmstepd's part of SPANK for a 4-node, 8-task step on node 1.
# Plugin and no plugin run side by side; with --callgrind, one round under
# valgrind's callgrind gives instruction counts per phase's process instead,
# which the machine's load does not change.
#
#   sudo bench/plugin_path.sh [--callgrind] [ROUNDS] [PLUGSTACK ARGS...]   (after a build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${top_builddir:-$top/_build}
plugin=${GANGWAY_PLUGIN:-$builddir/spank/.libs/gangway.so}
callgrind=0
[ "${1:-}" = --callgrind ] && { callgrind=1; shift; }
rounds=40
[[ ${1:-} =~ ^[0-9]+$ ]] && { rounds=$1; shift; }
work=$(mktemp -d /var/tmp/gangway-plugin-path.XXXXXX)
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -rdynamic -o "$work/stepd_sim" "$top/bench/stepd_sim.c" -ldl
# The step's node names resolve from a hosts file of its own (benchmark range
# 198.18.0.0/15), bound over /etc/hosts in a private mount namespace.
printf '127.0.0.1 localhost\n198.18.0.8 node08\n198.18.0.9 node09\n198.18.0.10 node10\n198.18.0.11 node11\n' >"$work/hosts"
export SLURM_STEP_NODELIST='node[08-11]' SLURM_STEP_TASKS_PER_NODE='2(x4)' SLURM_NODEID=1 SLURM_STEP_NUM_NODES=4 \
  SLURM_STEP_NUM_TASKS=8 SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_JOB_NODELIST='node[08-11]' SIM_FIRST_RANK=2
# STEPD_PRELOAD: libraries the simulated process holds before the plugin
# loads, as a real one does (slurmstepd already holds libstdc++ and libhwloc;
# srun holds neither, which is the default here).
run() { unshare -m sh -c 'mount --bind "$0/hosts" /etc/hosts && export LD_PRELOAD="$1" && shift && exec "$@"' "$work" "${STEPD_PRELOAD:-}" "$@"; }
if [ $callgrind = 1 ]; then
  # The plugin's own instructions: stepd_sim's copy of SLURM's setenvf buffer
  # (256 KiB cleared a spank_setenv) left out; how many calls the plugin
  # makes is counted apart, and the wall runs below include their cost.
  export STEPD_SETENVF_BUFFER=${STEPD_SETENVF_BUFFER:-0}
  run "$work/stepd_sim" --rounds 1 "$plugin" "$@" | grep 'spank_setenv calls' | sed 's/^ *//; s/ (each clears.*//'
  # Callgrind counts a forked child from its parent's count at the fork: the
  # files in time order are the step process (forked from stepd_sim's loop),
  # its tasks, then the loop itself. What the plugin adds is the difference
  # to the same protocol without a plugin.
  count() {  # count PLUGIN ARGS...: "STEP TASK" instructions, net of stepd_sim's own loop
    local d; d=$(mktemp -d "$work/cg.XXXXXX")
    run valgrind --tool=callgrind --callgrind-out-file="$d/cg.%p" "$work/stepd_sim" --rounds 1 "$@" >/dev/null 2>&1 || return 1
    local files; files=$(ls -tr "$d"/cg.*)
    local loop step task
    loop=$(awk '/^summary:/ {print $2}' "$(tail -1 <<<"$files")")
    task=$(awk '/^summary:/ {print $2}' "$(head -1 <<<"$files")")
    step=$(awk '/^summary:/ {print $2}' "$(sed -n "$(($(wc -l <<<"$files") - 1))p" <<<"$files")")
    echo "$((step - loop)) $((task - step))"
  }
  read -r s0 t0 < <(count none)
  read -r s1 t1 < <(count "$plugin" "$@")
  echo "instructions (callgrind), plugin minus none: step process (dlopen, init, user_init) $((s1 - s0)), each task (task_init) $((t1 - t0))"
  # The post-mortem's record (issue 33): the step process with postmortem_dir=
  # (its init makes the job's directories), and task_exit alone, counted with
  # --toggle-collect in the step process that calls it once per task (2 tasks).
  mkdir -p "$work/pm"
  read -r s2 _ < <(count "$plugin" "$@" "postmortem_dir=$work/pm/%n")
  d=$(mktemp -d "$work/cg.XXXXXX")
  run valgrind --tool=callgrind --toggle-collect=slurm_spank_task_exit --callgrind-out-file="$d/cg.%p" \
    "$work/stepd_sim" --rounds 1 "$plugin" "$@" "postmortem_dir=$work/pm/%n" >/dev/null 2>&1
  files=$(ls -tr "$d"/cg.*)
  te=$(awk '/^summary:/ {print $2}' "$(sed -n "$(($(wc -l <<<"$files") - 1))p" <<<"$files")")
  te0=$(run valgrind --tool=callgrind --toggle-collect=slurm_spank_task_exit --callgrind-out-file="$d/off.%p" \
    "$work/stepd_sim" --rounds 1 "$plugin" "$@" >/dev/null 2>&1; f=$(ls -tr "$d"/off.*); awk '/^summary:/ {print $2}' "$(sed -n "$(($(wc -l <<<"$f") - 1))p" <<<"$f")")
  echo "postmortem_dir=: step process (init's directories) +$((s2 - s1)); task_exit per task $((te / 2)) (without postmortem_dir=: $((te0 / 2))); records: $(find "$work/pm" -name 'task.*' | wc -l)"
  # The running step's samples (postmortem_sample=, default 5 s): what a
  # launch pays for them (the thread started at the first task_post_fork,
  # stopped and joined at slurm_spank_exit; a step shorter than one interval
  # samples nothing), against postmortem_sample=0.
  read -r s3 _ < <(count "$plugin" "$@" "postmortem_dir=$work/pm/%n" postmortem_sample=0)
  echo "postmortem_sample=5 against 0 (with postmortem_dir=): step process +$((s2 - s3)) (the 2 task_post_fork, the thread, slurm_spank_exit's join)"
  exit 0
fi
for ((i = 0; i < 2; i++)); do
  run "$work/stepd_sim" --rounds "$rounds" none
  run "$work/stepd_sim" --rounds "$rounds" "$plugin" "$@"
done
echo "host: $(nproc) cores, $(uname -r), $(date -u +%F)"
