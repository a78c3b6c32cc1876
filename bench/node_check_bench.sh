#!/bin/bash
# Wall time of `gangway node-check` (quick level) on a healthy node, as SLURM
# runs it (--slurm: silent, a state file, no call to slurmctld), N runs each
# (default 20), median and worst, for:
#   bare      this machine itself (sysfs "/": no GPU, no HCA here)
#   fixture   the fixture node of tests/fixtures/node (2 GPUs, 2 HCAs) without
#             GPU libraries: sysfs, the kernel log, NVML and CUDA absent
#   doubles   the same node with the test doubles of libcuda and
#             libnvidia-ml (tests/fakes): the CUDA stage's context, memory and
#             computation checks on 2 fake GPUs of host memory
#   full      the fixture node (its HCAs RoCE) with the doubles at
#             --level=full, by hand (--json: the doubles' sizes are variables,
#             which --slurm ignores): CUDA copies of 32 MiB, the fake NCCL's
#             4 MiB all-reduce of the two GPUs (over TCP), an RDMA loopback
#             write per port (the fake libibverbs, over TCP, 500 ms each)
# Needs only the build (make); runs as any user. Usage:
#   bench/node_check_bench.sh [RUNS]   (GANGWAY_BIN names another gangway)
set -u
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
GW=${GANGWAY_BIN:-$top_srcdir/_build/launcher/gangway}
N=${1:-20}
W=$(mktemp -d /tmp/gangway-node-check-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$top_srcdir/tests/fakes/build.sh" "$W/fakes" || exit 1
"$top_srcdir/tests/fixtures/node/make-node.sh" "$W/node"
"$top_srcdir/tests/fixtures/node/make-node.sh" "$W/roce" roce
: >"$W/empty.conf"
# The doubles' figures are not a GPU's or an HCA's: thresholds they meet.
printf 'h2d_gbps=1\nrdma_ratio=0.01\nnccl_busbw_gbps=0.01\n' >"$W/doubles.conf"
printf '#!/bin/sh\necho "$*" >>%s/calls\n' "$W" >"$W/scontrol"; chmod +x "$W/scontrol"
ms() { date +%s%N; }
measure() {  # measure NAME [VAR=VALUE...] -- ARGS (--slurm, unless ARGS say --plain: the doubles' sizes are variables, which --slurm ignores)
  local name=$1 mode=--slurm; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  [ "${1:-}" = --plain ] && { mode=--json=/dev/null; shift; }
  local t=() i t0 rc
  for i in $(seq "$N"); do
    t0=$(ms)
    env GANGWAY_SCONTROL="$W/scontrol" SLURMD_NODENAME=bench01 "${envs[@]}" \
      "$GW" node-check $mode --config="$W/empty.conf" --state="$W/st-$name/state" "$@" >/dev/null 2>"$W/err"
    rc=$?
    t+=($(( ($(ms) - t0) / 1000 )))
    [ $rc = 0 ] || { echo "$name: run $i exit $rc: $(cat "$W/err")"; return 1; }
    [ -s "$W/err" ] && { echo "$name: run $i said: $(cat "$W/err")"; return 1; }
  done
  printf '%s\n' "${t[@]}" | sort -n | awk -v name="$name" -v n="$N" '
    { v[NR] = $1 } END { printf "%-8s runs=%d median=%.1f ms max=%.1f ms\n", name, n, v[int((n + 1) / 2)] / 1000, v[n] / 1000 }'
}
echo "## gangway node-check, quick level, healthy node ($(nproc) cores, $(uname -r), $(date -u +%F))"
measure bare -- --sysfs-root=/
measure fixture -- --sysfs-root="$W/node"
measure doubles LD_LIBRARY_PATH="$W/fakes" GANGWAY_FAKE_GPUS=2 -- --sysfs-root="$W/node"
measure full LD_LIBRARY_PATH="$W/fakes" GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB="$W/fakes/libnccl.so.2" GANGWAY_NCCL_BYTES=4194304 \
  GANGWAY_FAKE_IB_DEVICES=mlx5_0,mlx5_1 GANGWAY_FAKE_IB_GBPS=8 GANGWAY_COPY_BYTES=33554432 -- --plain --sysfs-root="$W/roce" \
  --level=full --config="$W/doubles.conf"
[ ! -s "$W/calls" ] && echo "no call to scontrol in $((4 * N)) runs" || echo "scontrol was called: $(sort -u "$W/calls")"
