#!/bin/bash
# Nothing lost while fleet serve is down: three failing jobs end on a node
# (`gangway postmortem collect`, as the Epilog runs it) while serve is
# stopped; their records are kept in the node's outbox (root's, 0700; each
# file 0600). serve is started again, and the node's next Prolog
# (contrib/slurm/prolog-postmortem.sh, as slurmd runs it) sends them again,
# oldest first, each signed afresh (an hour-old stamp would be refused):
# all three stops are then in `gangway fleet stops` and `gangway postmortem
# JOB`, within seconds, and the outbox is empty. Then serve is stopped while
# job 35 ends (the shipped Epilog keeps its record), and the Epilog of the
# node's next job sends its own record, then 35's. Root only: collect takes
# root's job directory alone. About 5 s.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
GW=${GANGWAY_BIN:-$top_builddir/launcher/gangway}
. "$(dirname "$0")/verdicts.sh"
if [ "$(id -u)" != 0 ]; then echo "SKIP: the outbox's cases need root (collect takes root's job directory alone)"; exit 77; fi
W=$(mktemp -d /tmp/gangway-pm-outbox.XXXXXX)
SERVE=
cleanup() {
  [ -n "$SERVE" ] && { kill "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null; }
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

# The stand-in scontrol: jobs 31-33 ran on n1 and have finished (SLURM
# takes no AdminComment of them); the site keeps no accounting.
cat >"$W/scontrol" <<'SH'
#!/bin/bash
case "$*" in
  "-o show job "*) echo "JobId=$4 JobName=train UserId=root(0) GroupId=g(0) JobState=FAILED NodeList=n1 AdminComment=(null)"; exit 0 ;;
  "show node "*) echo "NodeName=$3 State=IDLE"; exit 0 ;;
  "show config") printf 'AccountingStorageType   = accounting_storage/none\n'; exit 0 ;;
esac
echo "slurm_update error: Job has already finished"; exit 1
SH
chmod +x "$W/scontrol"
export GANGWAY_SCONTROL=$W/scontrol GANGWAY_SACCTMGR=/bin/false
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/key"
chmod 600 "$W/key"
mkdir -p "$W/kroot/dev" "$W/sys" && : >"$W/kroot/dev/kmsg"

start_serve() {
  # This start's own line (serve.log keeps the earlier starts').
  local before
  before=$(cat "$W/serve.log" 2>/dev/null | grep -c "serving http")
  "$GW" fleet serve --listen "127.0.0.1:${PORT:-0}" --db "$W/fleet.db" --cache 0 --stops-key "$W/key" --stops-wait 1 2>>"$W/serve.log" &
  SERVE=$!
  for _ in $(seq 100); do [ "$(grep -c "serving http" "$W/serve.log")" -gt "$before" ] && break; sleep 0.1; done
  PORT=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$W/serve.log" | tail -1)
  [ -n "$PORT" ] || { cat "$W/serve.log"; echo "FAIL: fleet serve did not start"; exit 1; }
}
# serve's port, then serve stopped (as for an upgrade).
start_serve
URL=http://127.0.0.1:$PORT
kill "$SERVE"; wait "$SERVE" 2>/dev/null; SERVE=

# Three jobs end while serve is down: each node record is kept in the outbox.
mkdir -m 0700 "$W/pm"
# ended JOB: what slurmstepd leaves of a failed job: rank 0 exits 1, rank 1
# gets SLURM's SIGTERM a second later.
ended() {
  mkdir -m 0711 "$W/pm/$1"
  local t; t=$(date +%s%N)
  echo "gangway-task 1 t_ns=$t node=n1 job=$1 step=0 rank=0 local_rank=0 pid=4242 wait_status=256 oom_kills=0 requeue=0" >"$W/pm/$1/task.0.0"
  echo "gangway-task 1 t_ns=$((t + 1000000000)) node=n1 job=$1 step=0 rank=1 local_rank=1 pid=4243 wait_status=15 oom_kills=0 requeue=0" \
    >"$W/pm/$1/task.0.1"
}
# epilog JOB: the shipped Epilog script, as slurmd runs it on n1.
epilog() {
  SLURM_JOB_ID=$1 SLURMD_NODENAME=n1 SLURM_JOB_NODELIST=n1 GANGWAY_POSTMORTEM_DIR=$W/pm GANGWAY_POSTMORTEM_URL=$URL \
    GANGWAY_POSTMORTEM_KEY=$W/key GANGWAY_BIN=$GW GANGWAY_KMSG_ROOT=$W/kroot GANGWAY_SYSFS_ROOT=$W/sys \
    sh "$top_srcdir/contrib/slurm/epilog-postmortem.sh" 2>&1
}
stopped() { [ "$("$GW" fleet stops --db "$W/fleet.db" | grep -c "^[0-9].* job $1 ")" = 1 ]; }
for j in 31 32 33; do
  ended $j
  out=$(GANGWAY_SYSFS_ROOT=$W/sys "$GW" postmortem collect --dir="$W/pm" --job=$j --node=n1 --nodes=n1 --kmsg-root="$W/kroot" \
    --config="$W/none.conf" --to="$URL" --key="$W/key" 2>&1); rc=$?
  [ $rc = 1 ] && grep -q "job $j: not sent to $URL: .*; kept in $W/pm/outbox, sent again by the node's next Epilog, Prolog or node check" <<<"$out" &&
    pass "job $j, serve down: kept in the outbox" || fail "job $j, serve down: rc $rc: $out"
done
n=$(find "$W/pm/outbox" -maxdepth 1 -type f -perm 0600 -user 0 -name '0*' | wc -l)
[ "$n" = 3 ] && [ "$(stat -c %a "$W/pm/outbox")" = 700 ] && pass "three records in the outbox (root's, 0700; files 0600)" ||
  fail "the outbox: $n records, mode $(stat -c %a "$W/pm/outbox"): $(ls -la "$W/pm/outbox")"

# serve up again; the node's next Prolog sends them, oldest first.
start_serve
t0=$SECONDS
out=$(SLURM_JOB_ID=34 GANGWAY_POSTMORTEM_DIR=$W/pm GANGWAY_POSTMORTEM_URL=$URL GANGWAY_POSTMORTEM_KEY=$W/key GANGWAY_BIN=$GW \
  GANGWAY_SYSFS_ROOT=$W/sys sh "$top_srcdir/contrib/slurm/prolog-postmortem.sh" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(grep -c "delivered: accepted node n1's record of job" <<<"$out")" = 3 ] &&
  [ "$(grep -o "accepted node n1's record of job [0-9]*" <<<"$out" | awk '{print $NF}' | tr '\n' ' ')" = "31 32 33 " ] &&
  pass "the Prolog sent the three again, oldest first" || fail "the Prolog's resend: rc $rc: $out"
[ -d "$W/pm/outbox" ] && [ -z "$(ls -A "$W/pm/outbox")" ] && pass "the outbox is empty" || fail "the outbox still holds: $(ls -A "$W/pm/outbox")"
for _ in $(seq 100); do
  [ "$("$GW" fleet stops --db "$W/fleet.db" | grep -c '^[0-9].* job 3[123] ')" = 3 ] && break
  sleep 0.1
done
stops=$("$GW" fleet stops --db "$W/fleet.db")
[ "$(grep -c '^[0-9].* job 3[123] ' <<<"$stops")" = 3 ] && pass "fleet stops: jobs 31, 32, 33 within $((SECONDS - t0)) s of serve's start" ||
  fail "fleet stops: $stops; serve: $(cat "$W/serve.log")"
for j in 31 32 33; do
  # As root from the store (--db): a user's read through serve takes a MUNGE
  # credential (tests/postmortem_serve.sh checks those).
  pm=$("$GW" postmortem $j --db "$W/fleet.db" 2>&1); rc=$?
  [ $rc = 0 ] && grep -q "^gangway: job $j step 0 .*rank 0" <<<"$pm" && pass "gangway postmortem $j: $(head -1 <<<"$pm")" ||
    fail "gangway postmortem $j: rc $rc: $pm"
done
# serve stopped again while job 35 ends; serve up, and the Epilog of the
# node's next job, 36, sends 36's record, then 35's.
kill "$SERVE"; wait "$SERVE" 2>/dev/null; SERVE=
ended 35
out=$(epilog 35)
grep -q "job 35: not sent to $URL: .*; kept in $W/pm/outbox" <<<"$out" && pass "job 35, serve down: the Epilog kept it in the outbox" ||
  fail "job 35, serve down: $out"
start_serve
ended 36
out=$(epilog 36)
grep -q "job 35: node n1's record, kept in the outbox since [0-9]* s ago, delivered: accepted" <<<"$out" &&
  pass "the next job's Epilog sent job 35's record after its own" || fail "job 36's Epilog: $out"
for _ in $(seq 100); do stopped 35 && stopped 36 && break; sleep 0.1; done
stopped 35 && stopped 36 && pass "fleet stops: jobs 35 and 36" || fail "fleet stops: $("$GW" fleet stops --db "$W/fleet.db")"

# Nothing waits: the next resend is silent and exits 0.
out=$("$GW" postmortem resend --dir="$W/pm" 2>&1) && [ -z "$out" ] && pass "resend with an empty outbox: silent, exit 0" ||
  fail "resend with an empty outbox: $out"
finish
