#!/bin/bash
# gangway-releases: 22.05 26.05 (22.05: torch 1.13, no Flight Recorder: the hook imported by hand records the collectives itself; 26.05: torch 2.14's Flight Recorder)
# While the job runs (issue 43) on the real cluster, as a site runs it: the
# plugin watches each step (plugstack.conf watch=, watch_to=, watch_key=),
# the torch hook writes each rank's pace from torch's Flight Recorder (2.8+:
# 26.05's torch 2.14) or, where torch keeps none (22.05's 1.13), from the
# collectives it records itself when imported by hand (WATCH_HOOK=0: not
# imported, root's view alone), a
# node agent a step a node (root) sends them with slurmstepd's samples to
# `gangway fleet serve`, which judges. Every job is a user's (nobody, uid
# 65534), 2 ranks on each of the 4 nodes running a gloo all-reduce loop with
# computation in each step and all-reduces of 256 KB
# (tests/integration/watch_loop.py). One job runs the cases in this order
# (a job's start is 10 s of CI's time), each fault undone before the next,
# after 20 s of health in which nothing is named:
#   1 straggler  node10's two ranks put in a CPU cgroup with a quota (a
#                noisy neighbour's share): named as the straggler (node10,
#                ranks 4 and 5) within 90 s, with root's reason and the
#                job's slowdown (from the ranks' pace), in `gangway
#                status` (read by the job's owner through MUNGE) and in the
#                running job's AdminComment; named no more within 60 s of
#                the quota's end;
#   4 link       node10's data link shaped (tc, both ways) to 10 Mbit/s,
#                a fraction of what its all-reduces send: named as the node
#                that holds the job back, with the network as the reason
#                (its link's qdisc held back what it was given), within 90 s;
#   2 hang       rank 5 SIGSTOPped, the job run with --gangway-on-hang=cancel:
#                a hang naming rank 5 on node10 within 2 minutes (serve's
#                --watch-hang 20: 20 s of no progress, the site's default
#                60; the others still waiting in the collective before, a
#                ring's victims, not named), every other
#                rank's dump written at once (rank.N.json in its node's
#                directory), and the job cancelled within a minute after.
# Rank 0 forges pace reports for rank 7 (another node's) and rank 999: no
# node but node10 and no rank but its own is ever named.
#   3 healthy    WATCH_HEALTHY=N jobs (default 20) of 60 s under the
#                machine's load: nothing named. Not in `make check` (20
#                minutes): WATCH_CASES=3 runs it (BENCHMARKS.md has its runs).
# WATCH_CASES="1 3" runs some only (default: 1 4 2).
. "$(dirname "$0")/lib.sh"
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
command -v munged >/dev/null && command -v mungekey >/dev/null || skip_or_fail "MUNGE is not installed (apt-get install munge): gangway status reads through it"
RELEASE=${GANGWAY_CLUSTER_RELEASE:-22.05}
CASES=${WATCH_CASES:-1 4 2}
PORT=${GANGWAY_WATCH_PORT:-19474}
URL=http://198.18.0.1:$PORT
PM=$WORK/pm
CG=/sys/fs/cgroup/cpu/gangway-watch-slow
USER_ID=65534
serve='' job='' M=''
undo() {
  [ -n "$job" ] && scancel "$job" 2>/dev/null
  [ -n "$serve" ] && kill "$serve" 2>/dev/null
  if [ -d "$CG" ]; then
    while read -r p; do echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null; done <"$CG/cgroup.procs"
    rmdir "$CG" 2>/dev/null
  fi
  [ -n "$M" ] && [ -r "$M/key.d/pid" ] && kill "$(cat "$M/key.d/pid")" 2>/dev/null
  [ -n "$M" ] && rm -rf "$M"
  unshape_link node10
  cp "$GANGWAY_CLUSTER_DIR"/log/slurmd-node*.log "$WORK/" 2>/dev/null
  no_plugstack
  return 0
}
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT
rm -rf "${WORK:?}"/*
mkdir -p "$PM" "$WORK/user" "$WORK/out"
chown "$USER_ID:$USER_ID" "$WORK/user" "$WORK/out"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/stops.key"
chmod 600 "$WORK/stops.key"

# Who reads the status: MUNGE, from a munged of the test's own (its key, its
# socket); GANGWAY_MUNGE and GANGWAY_UNMUNGE name wrappers that give the socket.
M=$(mktemp -d /var/tmp/gangway-munge.XXXXXX) && chmod 755 "$M" && mkdir "$M/key.d" && chmod 700 "$M/key.d"
mungekey --create --keyfile="$M/key.d/key" 2>/dev/null
munged -S "$M/sock" --key-file="$M/key.d/key" --log-file="$M/key.d/log" --pid-file="$M/key.d/pid" --seed-file="$M/key.d/seed" \
  2>/dev/null || { echo "FAIL: the test's munged did not start"; exit 1; }
printf '#!/bin/sh\nexec munge -S %s/sock "$@"\n' "$M" >"$M/munge"
printf '#!/bin/sh\nexec unmunge -S %s/sock "$@"\n' "$M" >"$M/unmunge"
chmod 755 "$M/munge" "$M/unmunge"
export GANGWAY_MUNGE=$M/munge GANGWAY_UNMUNGE=$M/unmunge

# fleet serve and the job owner's `gangway status` run on the host, as on an
# admin host and a login node: MUNGE is the host's (the release roots hold
# none), so a gangway built for the host: this build on 22.05, else the
# host's (the developer's _build, CI's 22.05 package tree). serve's SLURM
# calls go to the release's scontrol, squeue and scancel (PATH: cluster.sh's
# wrappers enter the root).
HOST_GANGWAY=''
for b in "${GANGWAY_HOST_BIN:-}" "$top_builddir/launcher/gangway" "$top_srcdir/_build/launcher/gangway" \
  $(ls -d "$top_srcdir"/_deb-bookworm/work/gangway-*/_build/launcher/gangway 2>/dev/null); do
  [ -n "$b" ] && [ -x "$b" ] && "$b" version >/dev/null 2>&1 && { HOST_GANGWAY=$b; break; }
done
[ -n "$HOST_GANGWAY" ] || skip_or_fail "no gangway built for this host to run gangway status with (set GANGWAY_HOST_BIN)"
plugstack $SITE_ARGS launcher=$INSTALL/gangway postmortem_dir=$PM/%n postmortem_sample=2 watch=5 watch_to=$URL \
  watch_key=$WORK/stops.key
"$HOST_GANGWAY" fleet serve --listen 198.18.0.1:$PORT --db "$WORK/fleet.db" --cache 0 --stops-key "$WORK/stops.key" \
  --watch-hang 20 2>>"$WORK/serve.log" &
serve=$!
for _ in $(seq 50); do grep -q "serving http" "$WORK/serve.log" && break; sleep 0.2; done
grep -q "serving http" "$WORK/serve.log" || { echo "FAIL: fleet serve did not start: $(tail -3 "$WORK/serve.log")"; exit 1; }
torch_version=$(srun -N1 -w node08 $TORCH_PY -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -1)
echo "SLURM $RELEASE, torch $torch_version, jobs submitted by uid $USER_ID"

status() { setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups env GANGWAY_MUNGE="$GANGWAY_MUNGE" \
  "$HOST_GANGWAY" status "$job" --from "$URL" 2>&1; }
comment_of() { squeue --noheader --states=all --jobs="$1" --Format=admin_comment:1024 2>/dev/null | sed 's/ *$//'; }
state_of() { squeue --noheader --states=all --jobs="$1" --format=%T 2>/dev/null; }
# submit CASE SECONDS [SBATCH OPTIONS...]: the case's job, the user's; its id in $job.
submit() {
  local c=$1 secs=$2; shift 2
  rm -rf "$WORK/run"; mkdir -p "$WORK/run"; chown "$USER_ID:$USER_ID" "$WORK/run"
  cat >"$WORK/$c.sbatch" <<EOS
#!/bin/bash
#SBATCH -N4 --ntasks-per-node=2 -o $WORK/out/$c.%j.out -D $WORK/user $*
export WATCH_DIR=$WORK/run WATCH_HOOK=${WATCH_HOOK:-1} WATCH_SECONDS=$secs WATCH_FORGE=${FORGE:-0} WATCH_TENSOR=${TENSOR:-1024} WATCH_WORK=${WORK_N:-20}
srun $TORCH_PY $top_srcdir/tests/integration/watch_loop.py
EOS
  job=$(as_user sbatch --parsable -J "watch-$c" "$WORK/$c.sbatch" 2>"$WORK/sbatch.err") \
    || { fail "$c: sbatch as uid $USER_ID failed: $(cat "$WORK/sbatch.err")"; job=''; return 1; }
}
# pids_of CASE RANK...: once every rank named is in its loop (180 s at
# most), their pids in $pids; else a failure that says why (the job's output's end).
pids_of() {
  local c=$1 t0=$SECONDS r; shift
  pids=''
  for r in "$@"; do
    while [ ! -s "$WORK/run/pid.$r" ]; do
      if [ $((SECONDS - t0)) -ge 180 ] || ! [[ $(state_of "$job") =~ ^(PENDING|CONFIGURING|RUNNING)$ ]]; then
        fail "$c: job $job: rank $r not in its loop ($(state_of "$job"), $((SECONDS - t0)) s): $(tail -3 "$WORK"/out/*."$job".out 2>/dev/null | tr '\n' ' ')"
        return 1
      fi
      sleep 0.5
    done
    pids="$pids $(cat "$WORK/run/pid.$r")"
  done
}
# wait_end: until the job has left the queue's running states (240 s at most).
wait_end() {
  local t0=$SECONDS
  while [ $((SECONDS - t0)) -lt 240 ]; do
    case $(state_of "$job") in RUNNING|PENDING|COMPLETING|CONFIGURING) sleep 1 ;; *) return 0 ;; esac
  done
  return 1
}
# named_so_far: every straggler and hang line serve has logged for the job.
named_so_far() { grep "job $job step" "$WORK/serve.log" | sed 's/.*: job [0-9]* step [0-9]*: //'; }
has() { [[ " $CASES " == *" $1 "* ]]; }

# await WHAT SECONDS PATTERN: the owner's gangway status until a line
# matches PATTERN (an ERE), SECONDS at most: its seconds in $seen (empty:
# never), the status in $out.
await() {
  local t0=$SECONDS
  seen=''
  while [ $((SECONDS - t0)) -lt "$2" ]; do
    out=$(status)
    grep -Eq "$3" <<<"$out" && { seen=$((SECONDS - t0)); return 0; }
    sleep 2
  done
  return 1
}
# The cases run one after another in one job (a job's start is 10 s of CI's
# time): its all-reduces carry 256 KB, enough for a shaped link to matter.
if has 1 || has 2 || has 4; then
  FORGE=1 TENSOR=65536 WORK_N=15 submit phases 900 --gangway-on-hang=cancel
  if pids_of all 4 5; then
    sleep 20
    out=$(status)
    if grep -q "no straggler and no hang" <<<"$out"; then pass "healthy so far: $(head -1 <<<"$out")"
    else fail "before any fault, gangway status: $(tr '\n' ' ' <<<"$out")"; fi
  fi
  if [ -n "$pids" ] && has 1; then
    mkdir -p "$CG"
    echo 100000 >"$CG/cpu.cfs_period_us"; echo 15000 >"$CG/cpu.cfs_quota_us"
    for p in $pids; do echo "$p" >"$CG/cgroup.procs"; done
    # With the ranks' pace, by how much the job is slower; without, root's view alone.
    if [ "${WATCH_HOOK:-1}" = 0 ]; then how="by root's view alone"; else how="[0-9.]+x slower"; fi
    if await 1 90 "^straggler: node10 \(ranks 4, 5\), [^;]*$how"; then pass "1: ${seen} s after the slowdown, gangway status: $(grep '^straggler' <<<"$out")"
    else fail "1: no straggler named 90 s after the slowdown; gangway status: $(tr '\n' ' ' <<<"$out")"; fi
    [[ $(comment_of "$job") == "gangway: straggler: node10"* ]] && pass "1: the running job's AdminComment: $(comment_of "$job")" \
      || fail "1: the running job's AdminComment: \"$(comment_of "$job")\""
    # The admin's view: root's evidence confirmed it, so the fleet's metrics have it.
    m=$("$HOST_GANGWAY" fleet metrics --db "$WORK/fleet.db" 2>&1 | grep "^gangway_job_straggler{")
    [ "$m" = "gangway_job_straggler{job=\"$job\",node=\"node10\"} 1" ] && pass "1: fleet metrics: $m" \
      || fail "1: fleet metrics' gangway_job_straggler: \"$m\""
    # Another user (daemon, uid 1) reads nothing of it.
    other=$(setpriv --reuid=1 --regid=1 --clear-groups env GANGWAY_MUNGE="$GANGWAY_MUNGE" "$HOST_GANGWAY" status "$job" --from "$URL" 2>&1)
    [[ $other == *"is not yours"* ]] && ! grep -q straggler <<<"$other" && pass "1: another user's gangway status is refused: $other" \
      || fail "1: another user's gangway status: $other"
    while read -r p; do echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs; done <"$CG/cgroup.procs"
    # Recovered: named no more once its figures are old.
    if await 1 60 "no straggler and no hang"; then pass "1: ${seen} s after the quota went, no straggler"
    else fail "1: still named 60 s after the quota went: $(tr '\n' ' ' <<<"$out")"; fi
  fi
  if [ -n "$pids" ] && has 4; then
    shape_link node10 10
    if await 4 90 "^straggler: node10 \(ranks 4, 5\).*node10's eth1 held back"; then
      pass "4: ${seen} s after the link was shaped, gangway status: $(grep '^straggler' <<<"$out")"
    else fail "4: not named by its link 90 s after it was shaped; gangway status: $(tr '\n' ' ' <<<"$out")"; fi
    unshape_link node10
  fi
  if [ -n "$pids" ] && has 2; then
    stopped=$(cut -d' ' -f3 <<<"$pids")  # rank 5's
    kill -STOP "$stopped"
    if await 2 120 "^hang: .*rank 5.*node10"; then pass "2: ${seen} s after SIGSTOP, gangway status: $(grep '^hang' <<<"$out")"
    else fail "2: no hang named 120 s after SIGSTOP; gangway status: $(tr '\n' ' ' <<<"$out")"; fi
    t_hang=$SECONDS
    # Every rank but the stopped one leaves its dump (its node's directory) at once.
    dumps=0
    for _ in $(seq 30); do
      dumps=$(ls "$PM"/node*/"$job"/user/rank.*.json 2>/dev/null | grep -vc "rank\.5\.json")
      [ "$dumps" -ge 7 ] && break; sleep 1
    done
    [ "$dumps" -ge 7 ] && pass "2: the 7 running ranks' dumps written ($(ls "$PM"/node*/"$job"/user/ | grep -c rank))" \
      || fail "2: $dumps of the 7 running ranks' dumps written: $(ls "$PM"/node*/"$job"/user/ 2>&1 | tr '\n' ' ')"
    if wait_end && [ $((SECONDS - t_hang)) -le 60 ]; then pass "2: --gangway-on-hang=cancel: the job ended $((SECONDS - t_hang)) s after the hang was named ($(state_of "$job"))"
    else fail "2: the job did not end within 60 s of the hang ($(state_of "$job"), $((SECONDS - t_hang)) s)"; fi
    kill -CONT "$stopped" 2>/dev/null
  fi
  touch "$WORK/run/stop"
  wait_end || { fail "job $job did not end"; scancel "$job"; }
  if has 2; then
    m=$("$HOST_GANGWAY" fleet metrics --db "$WORK/fleet.db" 2>&1 | grep "^gangway_job_hangs_total")
    [ "$m" = 'gangway_job_hangs_total{node="node10"} 1' ] && pass "2: fleet metrics: $m" || fail "2: fleet metrics' hangs: \"$m\""
  fi
  others=$(named_so_far | grep -vE "^(straggler|hang): (node10|rank 5 \(node10\))" || true)
  [ -z "$others" ] && pass "no node but node10 and no rank but its own named (rank 0's forged reports for rank 7 and rank 999 dropped)" \
    || fail "named besides node10: $others"
  job=''
fi

if has 3; then
  for k in $(seq "${WATCH_HEALTHY:-20}"); do
    submit healthy "${WATCH_HEALTHY_SECONDS:-60}"
    pids_of 3 0 && wait_end
    named=$(named_so_far)
    [ -z "$named" ] && pass "3: healthy job $k ($job): nothing named" || fail "3: healthy job $k ($job): $named"
    job=''
  done
fi
echo "run time: $SECONDS s (SLURM $RELEASE)"
finish
