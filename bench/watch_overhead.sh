#!/bin/bash
# What watching a running job (issue 43, docs/watch.md) costs its steps: the
# same gloo training loop (tests/integration/watch_loop.py: a step of
# computation on one thread, then an all-reduce; 8 ranks on the 4 nodes),
# with watch=10 and with watch=0 (the post-mortem's samples and Flight
# Recorder on in both: the difference is the hook's pace reports and the
# node agents), in interleaved pairs; each job's median step time over its
# ranks, after its first 10 s. Prints each pair's ratio (watched / not) and
# their median. Needs a PyTorch that keeps gloo's Flight Recorder (2.8+: SLURM
# 26.05's root) for the pace reports to cost anything.
#
#   [GANGWAY_RELEASE=26.05 top_builddir=_build-sid/build] bench/watch_overhead.sh [PAIRS] [SECONDS] [WORK]
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
pairs=${1:-5} secs=${2:-60} work=${3:-35}
PORT=19484
URL=http://198.18.0.1:$PORT
PM=$WORK/pm
serve=''
trap '[ -n "$serve" ] && kill "$serve"; no_plugstack; rm -rf "$CLUSTER_LOCK"' EXIT
rm -rf "${WORK:?}"/*
mkdir -p "$PM" "$WORK/run"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/stops.key"
chmod 600 "$WORK/stops.key"
"$GANGWAY_BIN" fleet serve --listen 198.18.0.1:$PORT --db "$WORK/fleet.db" --cache 0 --stops-key "$WORK/stops.key" 2>>"$WORK/serve.log" &
serve=$!
sleep 2
torch_version=$(srun -N1 -w node08 $TORCH_PY -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -1)
echo "SLURM ${GANGWAY_RELEASE:-22.05}, torch $torch_version, $pairs pairs of $secs s jobs, WATCH_WORK=$work, $(nproc) CPUs"
# one WATCH: the job's median step time (ms) over every rank's steps after its first 10 s.
one() {
  plugstack $SITE_ARGS launcher=$INSTALL/gangway postmortem_dir=$PM/%n postmortem_sample=5 watch=$1 watch_to=$URL \
    watch_key=$WORK/stops.key
  rm -f "$WORK"/run/*
  WATCH_DIR=$WORK/run WATCH_SECONDS=$secs WATCH_WORK=$work srun -N4 --ntasks-per-node=2 $TORCH_PY \
    "$top_srcdir/tests/integration/watch_loop.py" >/dev/null 2>"$WORK/srun.err" || { echo "srun failed: $(tail -2 "$WORK/srun.err")" >&2; return 1; }
  cat "$WORK"/run/steps.* | sort -n | awk -v t0="$(sort -n "$WORK"/run/steps.* | head -1 | cut -d' ' -f1)" \
    '$1 >= t0 + 10 {print $2}' | sort -n | awk '{a[NR]=$1} END {printf "%.2f\n", a[int((NR+1)/2)] * 1000}'
}
ratios=()
for i in $(seq "$pairs"); do
  if [ $((i % 2)) = 1 ]; then on=$(one 10) && off=$(one 0) || exit 1; else off=$(one 0) && on=$(one 10) || exit 1; fi
  r=$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.4f", a / b}')
  ratios+=("$r")
  echo "pair $i: watched $on ms, not $off ms a step: $r"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median ratio %s (min %s, max %s) over %d pairs\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
echo "pace reports seen by serve: $(grep -c . "$WORK/serve.log") serve lines; $(ls "$PM"/node*/*/user/pace.*.json 2>/dev/null | wc -l) pace files left"
