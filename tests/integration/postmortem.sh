#!/bin/bash
# Who stopped my job (issue 33) on the real cluster, end to end, as a site
# runs it: the plugin writes each task's end (postmortem_dir=, one directory
# per node: these nodes share one disk), each node's Prolog runs contrib/
# slurm/prolog-postmortem.sh (`gangway postmortem snapshot`: the links,
# ports, HCAs and GPUs at the job's start) and its Epilog contrib/slurm/
# epilog-postmortem.sh (`gangway postmortem collect`), which sends the node's
# record to `gangway fleet serve --stops-key` on the host; serve judges, sets
# the job's AdminComment and requeues where it must. Every job is a user's:
# submitted by an unprivileged user (nobody, uid 65534; the cluster's
# auth/none takes a client's uid as it is), so the ranks write their dumps as
# a user does. Each case is a batch job of a gloo all-reduce loop
# (tests/integration/postmortem_loop.py) with 2 tasks on each of the 4
# nodes, submitted with --requeue and --gangway-on-fail=requeue:
#   1 sigkill    rank 5 (node10) SIGKILLed mid-run: a signal with no node
#                evidence, named on node10, not requeued; every rank also
#                forges what a user can (a dump naming another rank, a task
#                line in its dump directory): no other node is named;
#   2 oom        rank 5 killed by the kernel's OOM killer in a memory cgroup
#                the test makes (v1, as SLURM's task/cgroup: step_0 and
#                step_0/task_1 with a limit): the OOM, not requeued;
#   3 link       node10's data link set down in its namespace mid-job (an
#                admin's `ip link set eth1 down`, no kernel line), still down
#                when the Epilogs run: link down on node10, requeued without
#                node10;
#   4 xid        an Xid 79 line in node10's test-double kernel log, node10's
#                ranks SIGKILLed: GPU Xid on node10, requeued without it;
#   5 hang       rank 5 SIGSTOPped (by itself, between two collectives), the
#                job cancelled 20 s later: a hang naming rank 5 on node10
#                from slurmstepd's samples (postmortem_sample=), on every
#                release, whatever the dumps say; where torch keeps a Flight
#                Recorder (2.8+, gloo: SLURM 26.05's torch 2.14), what
#                PyTorch's own analyzer (fr_trace) makes of its dumps is
#                printed beside it, not judged;
#   6 exception  every rank raises the same ValueError: the program failed
#                on every rank, no node named, not requeued; the timeline
#                holds the ranks' dumps (the exception's type);
#   7 healthy    (with the forgeries of case 1, and node09's dead port of
#                case 8) nothing said, no stop kept;
#   8 exit       rank 5 calls os._exit(3): the line names rank 5 and node10,
#                where it ran, and blames no node; node09 has had since
#                before the job an addressed port up without carrier (a
#                veth whose peer is down, as an unplugged port or docker0):
#                not blamed, not drained;
#   9 flap       node10's data link cut mid-job (the host's end of its veth
#                down: no carrier, no kernel line) until node10's first rank
#                fails, then back up before the Epilogs run: link down on node10 (its
#                carrier changed during the job), requeued without node10;
#  10 serve down serve stopped while three failing jobs end (their records
#                not delivered), then started: each job's line is in
#                `gangway postmortem JOB` and `fleet stops` within 5 minutes
#                of serve's start, with nothing done by hand (the nodes send
#                them again from their spool, as the next jobs' Prologs and
#                Epilogs run: the cases after this one).
# Cases 1 and 4 also run under a name made of SLURM's keys (HOSTILE below:
# case 4's given at sbatch -J, case 1's set with scontrol update JobName=
# while it runs), which scontrol show job prints raw before SLURM's own
# fields: no record is dropped, no node but node10 drained or excluded, and
# `gangway postmortem` run by daemon (the name's UserId; the jobs are nobody's)
# finds no job of its own. On 22.05, as the hostile pass asks.
# Each verdict line must be printed by `gangway postmortem JOB` within 60 s
# of the job's end, and be the job's AdminComment in SLURM's accounting
# (`sacct -j JOB -o AdminComment`) within 60 s too: the cluster runs slurmdbd
# (cluster.sh up --accounting, this test's only), and serve sets a finished
# job's line there (sacctmgr), as SLURM takes no update of a finished job;
# a requeued job's is also in `scontrol show job` (see expect()). A job not
# requeued leaves every node undrained; a requeued one, every node but node10.
# The healthy job runs first and is judged last, so that serve's wait passes
# while the other cases run. PM_CASES="1 4" runs some only.
. "$(dirname "$0")/lib.sh"
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
CLUSTER=$top_srcdir/tests/cluster/cluster.sh
RELEASE=${GANGWAY_CLUSTER_RELEASE:-22.05}
# Every case on 22.05; on the other releases (contrib/dev/release-check.sh)
# the cases whose outcome rests on what differs by release: the task's wait
# status as slurmstepd reports it (1 sigkill, 8 exit), the requeue, the drain
# and slurmctld's AdminComment of a pending job (3 link), slurmdbd's
# AdminComment of a finished one (1, 6, 8), torch's hook (6 exception) and
# slurmstepd's samples of its tasks (5 hang, and torch's Flight Recorder from 2.8: 26.05), and no line for a
# healthy job (7). The others rest on this host's kernel and on gangway alone,
# the same under every release: the OOM killer in the test's own cgroup (2),
# the test double's kernel log (4, whose requeue is 3's), a link's carrier (9)
# and the nodes' spool (10). PM_CASES picks some.
if [ "$RELEASE" = 22.05 ]; then CASES=${PM_CASES:-1 2 3 4 5 6 7 8 9 10}; else CASES=${PM_CASES:-1 3 5 6 7 8}; fi
PORT=${GANGWAY_PM_PORT:-19464}
URL=http://198.18.0.1:$PORT
PM=$WORK/pm
CG=/sys/fs/cgroup/memory/gangway-pm-test
BAD=node10
DEAD=node09     # case 8's (and 7's) node with an addressed port that never had carrier
USER_ID=65534   # nobody: in the host's and every root's /etc/passwd
HOSTILE='x NodeList=node09,node10 JobState=RUNNING UserId=daemon(1) AdminComment=gangway: forged'
hostile=''
serve=''
job=''
undo() {
  [ -n "$job" ] && scancel "$job" 2>/dev/null
  ip link set "d-$BAD" up 2>/dev/null
  ip -n "$BAD" link set eth1 up 2>/dev/null
  ip -n "$DEAD" link del pm-dead0 2>/dev/null
  [ -n "$serve" ] && kill "$serve" 2>/dev/null
  for d in "$CG"/*/step_0/task_1 "$CG"/*/step_0 "$CG"/*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  rmdir "$CG" 2>/dev/null
  for n in node08 node09 node10 node11; do scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1; done
  cp "$GANGWAY_CLUSTER_DIR"/log/slurmctld.log "$GANGWAY_CLUSTER_DIR"/log/slurmd-node*.log "$GANGWAY_CLUSTER_DIR"/log/slurmdbd*.log \
    "$GANGWAY_CLUSTER_DIR"/log/mariadb.log "$WORK/" 2>/dev/null
  "$CLUSTER" up >/dev/null 2>&1  # back to the cluster every other test expects: no Prolog, no Epilog
  return 0
}
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
rm -rf "${WORK:?}"/*
mkdir -p "$PM" "$WORK/log" "$WORK/kmsg" "$WORK/user" "$WORK/out"
chown "$USER_ID:$USER_ID" "$WORK/user" "$WORK/out"  # the user's home and job output
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/stops.key"
chmod 600 "$WORK/stops.key"

# The site's Prolog and Epilog: gangway's scripts with the site's settings,
# and a node's test-double kernel log where a case left one.
cat >"$WORK/prolog" <<SH
#!/bin/sh
GANGWAY_POSTMORTEM_DIR='$PM/%n' GANGWAY_BIN='$GANGWAY_BIN' '$top_srcdir/contrib/slurm/prolog-postmortem.sh' \\
  2>>'$WORK/log/prolog-'\$(uname -n).log
exit 0
SH
cat >"$WORK/epilog" <<SH
#!/bin/sh
n=\$(uname -n)
[ -e '$WORK/kmsg/'\$n/dev/kmsg ] && export GANGWAY_KMSG_ROOT='$WORK/kmsg/'\$n
GANGWAY_POSTMORTEM_DIR='$PM/%n' GANGWAY_POSTMORTEM_URL='$URL' GANGWAY_POSTMORTEM_KEY='$WORK/stops.key' \\
  GANGWAY_BIN='$GANGWAY_BIN' '$top_srcdir/contrib/slurm/epilog-postmortem.sh' 2>>'$WORK/log/epilog-'\$n.log
echo "\${SLURM_JOB_ID:-none}" >>'$WORK/log/epilog-done.'\$n
exit 0
SH
chmod 0755 "$WORK/prolog" "$WORK/epilog"
t_up=$SECONDS
"$CLUSTER" up --prolog="$WORK/prolog" --epilog="$WORK/epilog" --accounting >"$WORK/up.log" 2>&1 \
  || { echo "FAIL: the cluster did not come up with the Prolog, the Epilog and slurmdbd: $(tail -5 "$WORK/up.log")"; exit 1; }
echo "cluster up with the Prolog, the Epilog and slurmdbd in $((SECONDS - t_up)) s"
plugstack $SITE_ARGS postmortem_dir=$PM/%n
# start_serve: the site's collector, on the host (its log appended to).
start_serve() {
  "$GANGWAY_BIN" fleet serve --listen 198.18.0.1:$PORT --db "$WORK/fleet.db" --cache 0 --stops-key "$WORK/stops.key" \
    --stops-wait 15 2>>"$WORK/serve.log" &
  serve=$!
  local n _
  n=$(grep -c "serving http" "$WORK/serve.log")
  for _ in $(seq 50); do [ "$(grep -c "serving http" "$WORK/serve.log")" -gt "$n" ] && return 0; sleep 0.2; done
  echo "FAIL: fleet serve did not start: $(tail -3 "$WORK/serve.log")"; exit 1
}
: >"$WORK/serve.log"
start_serve
torch_version=$(srun -N1 -w node08 $TORCH_PY -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -1)
echo "SLURM $RELEASE, torch $torch_version, jobs submitted by uid $USER_ID"

# The kernel log's clock (microseconds since boot) now, as a record's stamp.
# (/proc/uptime's seconds with two decimals; awk's %d stops at 2^31 in mawk.)
kmsg_usec() { local up _; read -r up _ </proc/uptime; echo $(( ${up%.*} * 1000000 + 10#${up#*.} * 10000 )); }
# kmsg_line NODE MESSAGE: a kernel record (facility 0) in NODE's test-double log.
kmsg_line() {
  mkdir -p "$WORK/kmsg/$1/dev"
  printf '3,%s,%s,-;%s\n' "$RANDOM" "$(kmsg_usec)" "$2" >>"$WORK/kmsg/$1/dev/kmsg"
}
# pid_of RANK: the rank's pid, once it is in the loop: 60 s at most once the
# job runs (a job may wait for the nodes the case before still completes on:
# 180 s at most for that). A rank that never came: a failure that says so,
# and the job cancelled, so that expect's wait for its end is not spent.
pid_of() {
  local t0=$SECONDS t_run='' st
  while :; do
    [ -s "$WORK/run/pid.$1" ] && { cat "$WORK/run/pid.$1"; return 0; }
    if [ -z "$t_run" ]; then
      st=$(state_of "$job")
      [ "$st" = RUNNING ] && t_run=$SECONDS
      [ $((SECONDS - t0)) -lt 180 ] || { fail "job $job did not start in 180 s ($st)"; scancel "$job" 2>/dev/null; return 1; }
    elif [ $((SECONDS - t_run)) -ge 60 ]; then
      fail "job $job: rank $1 not in its loop 60 s after the job started"; scancel "$job" 2>/dev/null; return 1
    fi
    sleep 0.2
  done
}
# submit CASE [ENV...]: the case's batch job, the user's, named $PM_JOB_NAME
# when set; its id in $job.
submit() {
  local c=$1; shift
  rm -rf "$WORK/run" "$WORK/kmsg"/*; mkdir -p "$WORK/run"; chown "$USER_ID:$USER_ID" "$WORK/run"
  cat >"$WORK/$c.sbatch" <<EOS
#!/bin/bash
#SBATCH -N4 --ntasks-per-node=2 --requeue --gangway-on-fail=requeue -o $WORK/out/$c.out -D $WORK/user
[ "\${SLURM_RESTART_COUNT:-0}" = 0 ] || exit 0
export PM_CASE=$c PM_WORK=$WORK/run $*
srun $TORCH_PY $top_srcdir/tests/integration/postmortem_loop.py
EOS
  job=$(as_user sbatch --parsable -J "${PM_JOB_NAME:-$c}" "$WORK/$c.sbatch" 2>"$WORK/sbatch.err") \
    || { fail "$c: sbatch as uid $USER_ID failed: $(cat "$WORK/sbatch.err")"; job=''; return 1; }
  t_case=$SECONDS
}
# A job's fields from squeue's (SLURM's own: a job's name may hold "JobState=").
state_of() { squeue --noheader --states=all --jobs="$1" --format=%T 2>/dev/null; }
restarts_of() { scontrol -o show job "$1" 2>/dev/null | grep -o 'Restarts=[^ ]*' | cut -d= -f2; }
comment_of() { squeue --noheader --states=all --jobs="$1" --Format=admin_comment:1024 2>/dev/null | sed 's/ *$//'; }
drained() { sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 ~ /^dr/ {print $1}' | sort -u | tr '\n' ' '; }
# at NODE RANK LOCAL: the ERE of where a first failure ran, as the line names
# it ("rank 5 on node10 (local 1)"; before, "node10 (rank 5, local 1)").
at() { echo "(rank $2 on $1 \\(local $3\\)|$1 \\(rank $2, local $3\\))"; }
# acct_comment JOB [first]: the AdminComment of slurmdbd's newest record of
# JOB (sacct's default), or of its first (-D lists every run's, oldest
# first: a requeued job's first is the run that stopped, REQUEUED, or
# FAILED on 26.05).
acct_comment() {
  if [ "${2:-}" = first ]; then
    sacct -n -D -X -P -j "$1" -o AdminComment 2>/dev/null | head -1
  else
    sacct -n -X -P -j "$1" -o AdminComment 2>/dev/null | head -1
  fi
}
# in_acct JOB LINE [first]: until that AdminComment is LINE, 60 s after the
# job's end at most; prints what sacct shows. SLURM 22.05's sacctmgr
# lowercases what it sets (SchedMD bug 14338, fixed in 23.02): there the line
# serve sets in slurmdbd's record is LINE in lower case.
in_acct() {
  local got
  while :; do
    got=$(acct_comment "$1" "${3:-}")
    echo "$got"
    if [ "$got" = "$2" ] || { [ "$RELEASE" = 22.05 ] && [ "$got" = "${2,,}" ]; }; then
      [ $((SECONDS - t_end)) -le 60 ]; return  # found, but late: a failure
    fi
    [ $((SECONDS - t_end)) -lt 60 ] || return 1
    sleep 1
  done
}
# ended JOB: until its first run has ended (its 4 Epilogs done), 240 s at most.
ended() {
  local n t0=$SECONDS
  while [ $((SECONDS - t0)) -lt 240 ]; do
    local done=0
    for n in node08 node09 node10 node11; do grep -qx "$1" "$WORK/log/epilog-done.$n" 2>/dev/null && done=$((done + 1)); done
    [ $done = 4 ] && { t_end=$SECONDS; return 0; }
    sleep 0.5
  done
  return 1
}
# expect CASE PATTERN [requeued|kept]: within 60 s of the job's end
# `gangway postmortem JOB` prints a line matching PATTERN (an ERE), the job
# was requeued without node10 (its AdminComment in slurmctld the line), or
# not, no node is drained (but node10, when requeued), and the line is the
# AdminComment of slurmdbd's record of the job within 60 s of its end. SLURM
# refuses any update of a finished job, AdminComment's too ("Job has already
# finished", on 22.05, 24.11 and 26.05 alike), and a job has finished when
# its Epilogs send: serve sets a finished job's line in slurmdbd's record
# (sacctmgr); a requeued one's, in slurmdbd's record of the run that stopped
# (before the requeue) and, pending again, in slurmctld, which writes it to
# the new run's record when that run ends (cancelled below). The timeline
# (`gangway postmortem JOB`'s whole text) is left in $timeline.
expect() {
  local c=$1 want=$2 rq=${3:-kept} line='' _
  timeline=''
  if ! ended "$job"; then fail "$c: job $job did not end in 240 s ($(state_of "$job"))"; job=''; return; fi
  for _ in $(seq 120); do
    timeline=$("$GANGWAY_BIN" postmortem "$job" --db "$WORK/fleet.db" 2>/dev/null)
    line=$(head -1 <<<"$timeline")
    [[ $line =~ $want ]] && break
    sleep 0.5
  done
  if [[ $line =~ $want ]]; then pass "$c: $((SECONDS - t_end)) s after the job's end, gangway postmortem $job: $line"
  else fail "$c: \"$line\", want /$want/; serve: $(grep "job $job" "$WORK/serve.log" | tail -3 | tr '\n' ' ')"; fi
  sleep 2
  local exc dr; exc=ExcNodeList=$(squeue --noheader --states=all --jobs="$job" --format=%x 2>/dev/null) dr=$(drained)
  if [ "$rq" = requeued ]; then
    [ "${exc}" = "ExcNodeList=$BAD" ] && [ "$(restarts_of "$job")" -ge 1 ] \
      && pass "$c: requeued without $BAD ($exc, Restarts=$(restarts_of "$job"))" \
      || fail "$c: not requeued without $BAD: $exc Restarts=$(restarts_of "$job") $(state_of "$job")"
    [ -z "${dr// /}" ] || [ "$dr" = "$BAD " ] && pass "$c: no node but $BAD drained (${dr:-none})" || fail "$c: drained: $dr"
    # Pending again, the job takes its AdminComment on every release.
    [ "$(comment_of "$job")" = "$line" ] && pass "$c: the requeued job's AdminComment (slurmctld's) is the line" \
      || fail "$c: the requeued job's AdminComment: $(comment_of "$job")"
    local stopped
    if stopped=$(in_acct "$job" "$line" first); then pass "$c: $((SECONDS - t_end)) s after the job's end, sacct -D -j $job: the run that stopped has the line"
    else fail "$c: sacct -D -j $job, the first run's AdminComment 60 s after the job's end: \"$(tail -1 <<<"$stopped")\"; $(sacct -D -X -P -j "$job" -o State,Submit,AdminComment | tr '\n' ' ')"; fi
  else
    [ "$(restarts_of "$job")" = 0 ] && [ "$exc" != "ExcNodeList=$BAD" ] && pass "$c: not requeued ($(state_of "$job"))" \
      || fail "$c: requeued: $exc Restarts=$(restarts_of "$job")"
    [ -z "${dr// /}" ] && pass "$c: no node drained" || fail "$c: drained: $dr"
  fi
  scancel "$job" 2>/dev/null
  local acct
  if [ -z "$line" ]; then fail "$c: no line to look for in sacct"
  elif acct=$(in_acct "$job" "$line"); then pass "$c: $((SECONDS - t_end)) s after the job's end, sacct -j $job -o AdminComment: $(tail -1 <<<"$acct")"
  else fail "$c: sacct -j $job -o AdminComment, 60 s after the job's end: \"$(tail -1 <<<"$acct")\"; serve: $(grep "job $job" "$WORK/serve.log" | tail -2 | tr '\n' ' ')"; fi
  [ -n "$hostile" ] && hostile_checks "$c"
  for n in node08 node09 node10 node11; do scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1; done
  echo "$c: $((SECONDS - t_case)) s"
  job=''
}
has() { [[ " $CASES " == *" $1 "* ]]; }
# hostile_checks CASE: the job, named HOSTILE, changed nothing that SLURM's
# own fields decide: serve dropped no node's record (its NodeList is the
# job's node[08-11], not the name's), drained no node but node10, and nobody
# (the name's UserId) running `gangway postmortem` finds no job of its own
# and no forged line. (Called by expect, before it resumes the nodes.)
hostile_checks() {
  local c="$1 (named \"$HOSTILE\")" n drained='' out bin=$INSTALL/gangway
  [ -n "${GANGWAY_CLUSTER_ROOT:-}" ] && bin=$GANGWAY_BIN
  grep "dropped node .* record of job $job:" "$WORK/serve.log" >"$WORK/dropped" \
    && fail "$c: serve dropped a record: $(tr '\n' ' ' <"$WORK/dropped")" || pass "$c: serve dropped no node's record"
  for n in node08 node09 node11; do scontrol show node "$n" | grep -q 'State=[^ ]*DRAIN' && drained="$drained $n"; done
  [ -z "$drained" ] && pass "$c: no node but $BAD drained" || fail "$c: drained:$drained"
  out=$(runuser -u daemon -- env -u SLURM_JOB_ID SLURM_CONF="$SLURM_CONF" "$bin" postmortem --from "$URL" 2>&1)
  if grep -q "forged\|job $job" <<<"$out"; then fail "$c: daemon's gangway postmortem: $out"
  elif grep -q "knows no job of yours" <<<"$out"; then pass "$c: daemon's gangway postmortem (the name's UserId) finds no job of its own"
  else fail "$c: daemon's gangway postmortem: $out"; fi
}

# Cases 7 and 8: node09 has had, since before their jobs, an addressed port
# up without carrier (a veth whose peer stays down: an unplugged port, a
# docker0), in the data network's range but on a subnet of its own.
if has 7 || has 8; then
  ip -n "$DEAD" link add pm-dead0 type veth peer name pm-dead1 &&
    ip -n "$DEAD" addr add 198.19.250.1/24 dev pm-dead0 && ip -n "$DEAD" link set pm-dead0 up ||
    fail "8: no port without carrier on $DEAD"
fi

healthy=''
if has 7; then
  submit healthy PM_FORGE=1
  if ended "$job"; then healthy=$job t_healthy=$SECONDS; echo "7 healthy: job $job ended; judged last"
  else fail "7 healthy: job $job did not end"; fi
  job=''
fi

if has 8; then
  submit exit PM_VICTIM=5
  expect "8 exit" "^gangway: job [0-9]+ step 0 stopped by $(at node10 5 1): exit 3\\b.*no node"
  grep -q "pm-dead0" <<<"$timeline" && fail "8 exit: $DEAD's port without carrier since before the job is in the timeline: $(grep pm-dead0 <<<"$timeline" | head -1)" \
    || pass "8 exit: $DEAD's port without carrier since before the job is no sign"
fi
ip -n "$DEAD" link del pm-dead0 2>/dev/null

# Case 10: three failing jobs (no torch: every rank exits 3, one first) end
# while serve is stopped; serve is started again and the cases after this
# one run; their lines are looked for at the end.
late=''
if has 10; then
  kill "$serve"; wait "$serve" 2>/dev/null; serve=''
  cat >"$WORK/late.sbatch" <<EOS
#!/bin/bash
#SBATCH -N4 --ntasks-per-node=2 -o $WORK/out/late.%j.out -D $WORK/user
srun sh -c 'sleep 0.\$((SLURM_PROCID + 2)); exit 3'
EOS
  for _ in 1 2 3; do
    late+="$(as_user sbatch --parsable "$WORK/late.sbatch" 2>>"$WORK/sbatch.err") "
  done
  for j in $late; do ended "$j" || fail "10 serve down: job $j did not end"; done
  start_serve
  t_serve=$SECONDS serve_epoch=$(date +%s)
  echo "10 serve down: jobs $late ended while serve was stopped; serve started again"
fi

if has 1; then
  submit sigkill PM_FORGE=1
  p=$(pid_of 5) && {
    # On 22.05, renamed while it runs to a name made of SLURM's keys.
    [ "$RELEASE" = 22.05 ] && { scontrol update JobId="$job" JobName="$HOSTILE" || fail "1: scontrol update JobName= refused"; hostile=1; }
    kill -KILL "$p"
  }
  expect "1 sigkill" "^gangway: job [0-9]+ step 0 stopped by $(at node10 5 1): killed by SIGKILL at "
  hostile=''
fi

if has 2; then
  submit oom PM_VICTIM=5
  if p=$(pid_of 5); then
    stepd=$(awk '{print $4}' "/proc/$p/stat")  # the task's parent: its slurmstepd
    mkdir -p "$CG/job_$job/step_0/task_1"
    echo 300M >"$CG/job_$job/step_0/task_1/memory.limit_in_bytes"
    echo "$stepd" >"$CG/job_$job/step_0/cgroup.procs"
    echo "$p" >"$CG/job_$job/step_0/task_1/cgroup.procs"
    touch "$WORK/run/go"
  fi
  expect "2 oom" "^gangway: job [0-9]+ step 0 stopped by $(at node10 5 1): killed by the OOM killer at "
fi

# The link cases: gloo's timeout 10 s, so that a cut link ends the job in
# seconds.
if has 3; then
  submit link PM_TIMEOUT=10
  pid_of 4 >/dev/null && ip -n "$BAD" link set eth1 down
  ended "$job"; ip -n "$BAD" link set eth1 up
  expect "3 link" "^gangway: job [0-9]+ step 0 stopped by $(at node10 '[45]' '[01]'): link down on eth1 at " requeued
fi

if has 9; then
  submit flap PM_TIMEOUT=10
  # Down until node10's first rank has failed (gloo's 10 s timeout; 30 s at
  # most), then at once up again: the Epilogs, which run after every rank
  # has ended and slurmstepd has cleaned up, find it up. (Down 8.5 s and up
  # before the timeout, TCP's retransmits sometimes carried the job through.)
  if p4=$(pid_of 4); then
    ip link set "d-$BAD" down
    for _ in $(seq 300); do kill -0 "$p4" 2>/dev/null || break; sleep 0.1; done
    ip link set "d-$BAD" up
  fi
  expect "9 flap" "^gangway: job [0-9]+ step 0 stopped by $(at node10 '[45]' '[01]'): link down on eth1 at " requeued
fi

if has 4; then
  if [ "$RELEASE" = 22.05 ]; then PM_JOB_NAME=$HOSTILE submit xid; hostile=1; else submit xid; fi
  if p4=$(pid_of 4) && p5=$(pid_of 5); then
    kmsg_line $BAD "NVRM: Xid (PCI:0000:17:00): 79, pid=$p4, name=python3, GPU has fallen off the bus."
    kill -KILL "$p4" "$p5"
  fi
  expect "4 xid" "^gangway: job [0-9]+ step 0 stopped by $(at node10 '[45]' '[01]'): GPU Xid 79 on 0000:17:00.0 at " requeued
  hostile=''
fi

if has 6; then
  submit exception
  expect "6 exception" "^gangway: job [0-9]+ step 0 failed on every rank: (each raised ValueError: bad batch shape at round 10|all 8 ended with exit 1 within [0-9.]+ s), the first rank [0-7] on node(08|09|10|11) \(local [01]\) at [0-9:.]+ \(no node fault\)"
  [[ $timeline == *"ValueError: bad batch shape at round 10"* ]] && pass "6 exception: the ranks' dumps (the user's) reached the timeline" \
    || fail "6 exception: no rank's dump in the timeline (the user's job could not leave one?): $(head -3 <<<"$timeline" | tr '\n' ' ')"
fi

if has 5; then
  # Rank 5 stops itself between two collectives (SIGSTOP), so that it never
  # enters the next one, whatever the moment; the job is cancelled 20 s
  # after. slurmstepd's samples (postmortem_sample=, every 5 s) saw rank 5
  # stopped while the others waited: the line names it on every release,
  # whatever the ranks' dumps say (SLURM's SIGCONT before its SIGTERM lets
  # it join the collective before any dump).
  # Beside it, on torch 2.8 and later (26.05's 2.14), PyTorch's own analyzer
  # on the Flight Recorder's dumps (TORCH_FR_DUMP_TEMP_FILE; every rank but
  # the stopped one writes its own when asked, as gloo has no watchdog to).
  submit hang PM_VICTIM=5 TORCH_FR_DUMP_TEMP_FILE=$WORK/run/fr/rank_
  mkdir -p "$WORK/run/fr"; chown "$USER_ID:$USER_ID" "$WORK/run/fr"
  if p=$(pid_of 5); then
    for _ in $(seq 100); do [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && break; sleep 0.2; done
    sleep 19; touch "$WORK/run/fr-dump"; sleep 1; rm -f "$WORK/run/fr-dump"; scancel "$job"
  fi
  expect "5 hang" "^gangway: job [0-9]+ step 0 hung until SLURM signalled every rank at [0-9:.]+: rank 5 on node10 stopped \\(SIGSTOP or a debugger\\) for at least (1[0-9]|2[0-9]) s, while 7 other ranks waited \\(slurmstepd samples\\)"
  [[ $timeline == *"node10  rank 5  stopped (SIGSTOP"* ]] && pass "5 hang: the timeline shows what slurmstepd sampled of rank 5" \
    || fail "5 hang: no sampled stall in the timeline: $(head -12 <<<"$timeline" | tr '\n' ' ')"
  if srun -N1 -w node08 $TORCH_PY -c 'import sys, torch; v = tuple(int(x) for x in torch.__version__.split(".")[:2]); sys.exit(v < (2, 8))' 2>/dev/null; then
    fr=$(srun -N1 -w node08 $TORCH_PY -m torch.distributed.flight_recorder.fr_trace --allow-incomplete-ranks -p rank_ "$WORK/run/fr" 2>&1 | tail -20)
    echo "5 hang: $(ls "$WORK/run/fr" | wc -l) Flight Recorder dump(s); PyTorch's analyzer (fr_trace) says:"
    sed 's/^/  | /' <<<"$fr"
    if grep -q KeyError <<<"$fr"; then
      # torch 2.14's gloo names the group '' in pg_config and '0' in its
      # entries (docs/postmortem.md, "Beside PyTorch's own analyser"): what
      # fr_trace says of copies with the one name.
      rekey='import glob, os, pickle, sys
for f in glob.glob(sys.argv[1] + "/rank_*"):
    d = pickle.load(open(f, "rb"))
    names = {e["process_group"][0] for e in d.get("entries", [])}
    if len(names) == 1 and "" in d.get("pg_config", {}):
        d["pg_config"] = {names.pop(): v for v in d["pg_config"].values()}
    pickle.dump(d, open(sys.argv[2] + "/" + os.path.basename(f), "wb"))'
      mkdir -p "$WORK/run/fr2"
      fr=$(srun -N1 -w node08 bash -c "$TORCH_PY -c '$rekey' $WORK/run/fr $WORK/run/fr2 && $TORCH_PY -m torch.distributed.flight_recorder.fr_trace --allow-incomplete-ranks -p rank_ $WORK/run/fr2" 2>&1 | sort | uniq -c | tail -8)
      echo "5 hang: fr_trace on copies whose pg_config has the entries' group name:"
      sed 's/^/  | /' <<<"$fr"
    fi
  fi
fi

if [ -n "$healthy" ]; then
  [ $((SECONDS - t_healthy)) -lt 20 ] && sleep $((20 - (SECONDS - t_healthy)))  # serve's --stops-wait and more
  line=$(comment_of "$healthy")
  [ -z "$line" ] || [ "$line" = "(null)" ] && pass "7 healthy (with forged records): no AdminComment" || fail "7 healthy: AdminComment \"$line\""
  line=$(acct_comment "$healthy")
  [ -z "$line" ] && [ -n "$(sacct -n -X -j "$healthy" -o JobID 2>/dev/null)" ] && pass "7 healthy: no AdminComment in slurmdbd's record of the job" \
    || fail "7 healthy: slurmdbd's record: AdminComment \"$line\", JobID \"$(sacct -n -X -j "$healthy" -o JobID 2>&1)\""
  shown=$("$GANGWAY_BIN" postmortem "$healthy" --db "$WORK/fleet.db" 2>&1)
  grep -q "stopped by" <<<"$shown" && fail "7 healthy: gangway postmortem says: $shown" || pass "7 healthy: gangway postmortem names no stop: $(head -1 <<<"$shown")"
fi
if [ -n "$late" ]; then
  # Another job's Prolog and Epilog on every node, in case no case ran after
  # serve's start (PM_CASES=10): what a busy cluster does anyway.
  [ $((SECONDS - t_serve)) -lt 30 ] && as_user srun -N4 true >/dev/null 2>&1
  for j in $late; do
    # Judged within 300 s of serve's start: the stop's own time in the store
    # (serve writes it when it judges), so that the cases run after this one
    # do not count; waited for here while that is still possible.
    line='' judged=''
    while :; do
      line=$("$GANGWAY_BIN" postmortem "$j" --db "$WORK/fleet.db" 2>/dev/null | head -1)
      judged=$($TORCH_PY -c 'import sqlite3, sys; r = sqlite3.connect(sys.argv[1]).execute("SELECT MIN(time) FROM stops WHERE job = ?", (int(sys.argv[2]),)).fetchone(); print(r[0] or "")' \
        "$WORK/fleet.db" "$j" 2>/dev/null)
      [[ $line == "gangway: job $j "* ]] && [ -n "$judged" ] && break
      [ $(($(date +%s) - serve_epoch)) -le 300 ] || break
      sleep 2
    done
    if [[ $line == "gangway: job $j "* ]] && [ -n "$judged" ] && [ $((judged - serve_epoch)) -le 300 ] \
      && "$GANGWAY_BIN" fleet stops --db "$WORK/fleet.db" 2>/dev/null | grep -q "gangway: job $j "; then
      pass "10 serve down: judged $((judged - serve_epoch)) s after serve's start, job $j's line (gangway postmortem, fleet stops): $line"
    else fail "10 serve down: job $j, judged at ${judged:-never} (serve started at $serve_epoch): \"$line\"; fleet stops: $("$GANGWAY_BIN" fleet stops --db "$WORK/fleet.db" 2>&1 | grep "gangway: job $j " | head -1)"; fi
  done
fi
echo "run time: $SECONDS s (SLURM $RELEASE)"
finish
