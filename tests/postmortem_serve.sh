#!/bin/bash
# The post-mortem's delivery (issue 33) without a cluster: `gangway fleet
# serve --stops-key` on loopback takes the records of 2-4 stand-in nodes
# sent with `gangway postmortem send` (the client the Epilog's collector
# uses), gathers them per job, judges, and, through a stand-in scontrol
# that records what it is asked (GANGWAY_SCONTROL):
#  - sets the job's AdminComment to the line, which `gangway postmortem JOB`
#    prints with the timeline from serve: through scontrol for a job it
#    requeued (pending again), else, as SLURM takes no update of a finished
#    job, through a stand-in sacctmgr (GANGWAY_SACCTMGR) where `scontrol show
#    config` says AccountingStorageType=accounting_storage/slurmdbd; where
#    not, one line says the line is only in `gangway postmortem JOB`;
#  - stores the stop (`fleet stops`), counts it in /metrics
#    (gangway_job_stops_total) and flags a node that stopped two jobs
#    (`fleet flagged`);
#  - requeues a job stopped by a GPU Xid or a lost node, run with
#    --gangway-on-fail=requeue, without that node (its line first set in
#    slurmdbd's record of the run that stopped), and drains it; an OOM and a
#    user's bug are never requeued;
#  - refuses a record signed with another key, a replay, a record naming
#    another node, and drops one from a node outside the job's NodeList.
set -u
. "$(dirname "$0")/lib/script_env.sh"
W=$(mktemp -d /tmp/gangway-pm-serve.XXXXXX)
SERVE= M= MUNGED=
cleanup() {
  [ -n "$SERVE" ] && { kill "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null; }
  [ -n "$MUNGED" ] && munged -S "$M/sock" -s >/dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$W" ${M:+"$M"}
}
trap cleanup EXIT

# The stand-in scontrol: jobs 101-106 ran on n[1-4] (job 107 on n[1-2]);
# a node is down when $W/down.NODE exists; every update and requeue is
# recorded in $W/calls; AdminComment is kept per job and shown back, but
# only for a job requeued (pending again): the others have finished, and
# SLURM refuses it ("Job has already finished"). `show config` answers the
# AccountingStorageType in $W/storage. The stand-in sacctmgr keeps the
# AdminComment of slurmdbd's record in $W/acct.JOB.
cat >"$W/scontrol" <<'SH'
#!/bin/bash
D=$(dirname "$0")
case "$*" in
  "show node "*)
    n=$3; st=ALLOCATED; [ -e "$D/down.$n" ] && st='DOWN*'
    echo "NodeName=$n Arch=x86_64 State=$st ThreadsPerCore=1"; exit 0 ;;
  "-o show node")
    for n in n1 n2 n3 n4; do "$0" show node $n; done; exit 0 ;;
  "show config")
    printf 'ClusterName             = test\nAccountingStorageType   = %s\n' "$(cat "$D/storage")"; exit 0 ;;
esac
echo "$*" >>"$D/calls"
case "$1 $2" in
  "update JobId="*) case "$3" in AdminComment=*)
    j=${2#JobId=}
    [ -e "$D/pending.$j" ] || { echo "slurm_update error: Job has already finished"; exit 1; }
    printf '%s' "${3#AdminComment=}" >"$D/comment.$j" ;; esac ;;
  "requeuehold "*) touch "$D/pending.$2" ;;
esac
exit 0
SH
chmod +x "$W/scontrol"
# The stand-in squeue: a job's SLURM fields (lib/slurm/job_view.hpp's format),
# the jobs of the owner, and a job's AdminComment padded as squeue pads it.
cat >"$W/squeue" <<'SH'
#!/bin/bash
D=$(dirname "$0")
# Jobs 101-105 are the test's user's, 106-107 another's (uid 4242).
view() {
  local list='n[1-4]' uid; uid=$(cat "$D/owner"); [ "$1" = 107 ] && list='n[1-2]'; [ "$1" -ge 106 ] && uid=4242
  echo "$1|COMPLETED|$uid|$list||n1"
}
case "$*" in
  "--noheader --states=all --format=%A|%T|%U|%N|%x|%B") for j in 101 102 103 104 105 106 107; do view $j; done ;;  # every job: serve's rounds
  "--noheader --states=all --user=$(cat "$D/owner") --format=%A|%T|%U|%N|%x|%B") for j in 101 102 103 104 105; do view $j; done ;;
  "--noheader --states=all --user="*) ;;
  "--noheader --states=all --jobs="*" --format=%A|%T|%U|%N|%x|%B") view "${3#--jobs=}" ;;
  "--noheader --states=all --jobs="*" --Format=admin_comment:1024") c=$(cat "$D/comment.${3#--jobs=}" 2>/dev/null); printf '%-1024s\n' "${c:-(null)}" ;;
  *) echo "squeue stand-in: unexpected $*"; exit 1 ;;
esac
SH
chmod +x "$W/squeue"
cat >"$W/sacctmgr" <<'SH'
#!/bin/bash
D=$(dirname "$0")
echo "sacctmgr $*" >>"$D/calls"
[ "$1 $2 $3 $4" = "-i modify job where" ] && [ "$6" = set ] || { echo "sacctmgr stand-in: unexpected $*"; exit 1; }
case "$7" in AdminComment=*) printf '%s' "${7#AdminComment=}" >"$D/acct.${5#jobid=}" ;; esac
echo " Modified jobs..."
SH
chmod +x "$W/sacctmgr"
echo accounting_storage/slurmdbd >"$W/storage"
id -u >"$W/owner"  # the jobs' owner: whoever runs the test
export GANGWAY_SCONTROL=$W/scontrol GANGWAY_SQUEUE=$W/squeue GANGWAY_SACCTMGR=$W/sacctmgr
# Who reads a job's stops: MUNGE, from a munged of the test's own (its own
# key and socket), where MUNGE is installed; GANGWAY_MUNGE and
# GANGWAY_UNMUNGE name wrappers that give the socket.
if command -v munged >/dev/null && command -v mungekey >/dev/null && [ "$(id -u)" = 0 ]; then
  M=$(mktemp -d /tmp/gangway-munge.XXXXXX) && chmod 755 "$M" && mkdir "$M/key.d" && chmod 700 "$M/key.d" &&
    mungekey --create --keyfile="$M/key.d/key" 2>/dev/null &&
    munged -S "$M/sock" --key-file="$M/key.d/key" --log-file="$M/key.d/log" --pid-file="$M/key.d/pid" \
      --seed-file="$M/key.d/seed" 2>/dev/null && MUNGED=1
  printf '#!/bin/sh\nexec munge -S %s/sock "$@"\n' "$M" >"$M/munge"
  printf '#!/bin/sh\nexec unmunge -S %s/sock "$@"\n' "$M" >"$M/unmunge"
  chmod 755 "$M/munge" "$M/unmunge"
  export GANGWAY_MUNGE=$M/munge GANGWAY_UNMUNGE=$M/unmunge
fi
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/other.key"
chmod 600 "$W/key" "$W/other.key"
touch "$W/down.n4"

"$GW" fleet serve --listen 127.0.0.1:0 --db "$W/fleet.db" --cache 0 --stops-key "$W/key" --stops-wait 3 2>"$W/serve.log" &
SERVE=$!
for _ in $(seq 50); do grep -q "serving http" "$W/serve.log" && break; sleep 0.1; done
PORT=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$W/serve.log")
[ -n "$PORT" ] || { cat "$W/serve.log"; echo "FAIL: fleet serve did not start"; exit 1; }
URL=http://127.0.0.1:$PORT

# record JOB NODE CASE [NODES]: the node's record as its Epilog writes it.
#   xid: the node's GPU had Xid 79 and its ranks were SIGKILLed first;
#   oom: its rank 0 was killed by the OOM killer first;
#   bug: its ranks exited 1 with the same Python exception;
#   term: its ranks got SLURM's SIGTERM after the first failure.
record() {
  $PY - "$@" >"$W/$1.$2.json" <<'PY'
import json, sys, time
job, node, case = int(sys.argv[1]), sys.argv[2], sys.argv[3]
nodes = sys.argv[4].split(",") if len(sys.argv) > 4 else ["n1", "n2", "n3", "n4"]
t0 = (int(time.time()) - 60) * 10**9
k = nodes.index(node)
first = case in ("xid", "oom")
tasks, evidence, dumps = [], [], []
for local in range(2):
    rank = 2 * k + local
    status = {"xid": 9, "oom": 9 if local == 0 else 15, "bug": 256, "term": 15}[case]
    t = t0 + (0 if first else 2 * 10**9) + local * 10**6
    tasks.append({"t_ns": t, "node": node, "job": job, "step": 0, "rank": rank, "local_rank": local,
                  "pid": 1000 + rank, "wait_status": status,
                  "oom_kills": 1 if case == "oom" and local == 0 else 0, "requeue_on_fail": True})
    if case == "bug":
        dumps.append({"rank": rank, "entered": [], "completed": [], "exception": "ValueError: bad batch"})
if case == "xid":
    evidence.append({"t_ns": t0 - 10**8, "sign": "gpu_xid", "device": "0000:17:00.0", "code": 79, "pid": 0,
                     "text": "NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus."})
if case == "oom":
    evidence.append({"t_ns": t0 - 10**7, "sign": "oom_kill", "device": "", "code": 0, "pid": 1000 + 2 * k,
                     "text": "Out of memory: Killed process %d (python)" % (1000 + 2 * k)})
print(json.dumps({"kind": "gangway-node-record", "schema": 1, "node": node, "job": job, "job_nodes": nodes,
                  "window_start_ns": t0 - 600 * 10**9, "window_end_ns": t0 + 10 * 10**9,
                  "tasks": tasks, "evidence": evidence, "dumps": dumps}))
PY
}
send() {  # JOB NODE [KEY]: prints the client's line; its status is the client's
  "$GW" postmortem send "$W/$1.$2.json" --to "$URL" --key "${3:-$W/key}" 2>&1
}
sent_ok() {  # JOB NODE WHAT
  if out=$(send "$1" "$2"); then pass "$3: sent"; else fail "$3: $out"; fi
}
wait_comment() {  # JOB: until serve has set the job's AdminComment in slurmctld (the wait is 3 s)
  for _ in $(seq 100); do [ -s "$W/comment.$1" ] && return 0; sleep 0.1; done
  return 1
}
wait_acct() {  # JOB: until serve has set the AdminComment of slurmdbd's record of the job
  for _ in $(seq 100); do [ -s "$W/acct.$1" ] && return 0; sleep 0.1; done
  return 1
}
wait_log() {  # PATTERN
  for _ in $(seq 100); do grep -q -- "$1" "$W/serve.log" && return 0; sleep 0.1; done
  return 1
}

# 1. Job 101: n2's GPU fell off the bus (Xid 79); the job ran with requeue.
record 101 n1 term; record 101 n2 xid; record 101 n3 term; record 101 n4 term
for n in n1 n2 n3 n4; do sent_ok 101 $n "job 101 $n"; done
if wait_comment 101; then pass "job 101: AdminComment set: $(cat "$W/comment.101")"; else fail "job 101: no AdminComment"; fi
grep -q "n2" "$W/comment.101" && pass "job 101's line names n2" || fail "job 101's line does not name n2"
wait_log "job 101: requeued" || true
# The run that stopped keeps its line in slurmdbd's record, set before the requeue starts a new record.
[ "$(cat "$W/acct.101" 2>/dev/null)" = "$(cat "$W/comment.101")" ] &&
  [ "$(grep -n -e '^sacctmgr .* jobid=101 ' -e '^requeuehold 101$' "$W/calls" | cut -d: -f2 | cut -c1-8 | tr '\n' ' ')" = "sacctmgr requeueh " ] &&
  pass "job 101: the stopped run's record in slurmdbd has the line, set before the requeue" ||
  fail "job 101: slurmdbd's record: $(cat "$W/acct.101" 2>/dev/null); calls: $(grep -e 'sacctmgr' -e 'requeue' "$W/calls" | tr '\n' ' ')"
# Held first, excluded, released (SLURM 22.05 takes no update of a finished job; a held one cannot start on n2).
[ "$(grep -e '^requeuehold 101$' -e '^update JobId=101 ExcNodeList=n2$' -e '^release 101$' "$W/calls" | tr '\n' ' ')" = \
  "requeuehold 101 update JobId=101 ExcNodeList=n2 release 101 " ] &&
  pass "job 101 was requeued held, excluded n2 and released" || fail "job 101 not requeued without n2: $(cat "$W/calls")"
wait_log "drained n2: .*(job 101)" || true
grep -q "^update NodeName=n2 State=DRAIN Reason=gangway: postmortem gpu-xid.*(job 101)$" "$W/calls" &&
  pass "n2 drained for job 101" || fail "n2 not drained: $(cat "$W/calls")"

# 2. A replay of n2's record, a record signed with another key, and one
# whose request names n1 but whose record is n3's: refused.
out=$(send 101 n2) && fail "a replay of job 101's n2 record was taken: $out" || pass "replay refused: $out"
record 102 n1 oom
out=$(send 102 n1 "$W/other.key") && fail "a record under another key was taken: $out" || pass "another key refused: $out"
echo "$out" | grep -q "401" || fail "another key: not 401: $out"
cp "$W/102.n1.json" "$W/forged.json"
$PY - "$W/forged.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["tasks"]:
    t["node"] = "n3"  # a task line naming another node, in n1's record
json.dump(r, open(sys.argv[1], "w"))
PY
cp "$W/forged.json" "$W/102.nX.json"
out=$("$GW" postmortem send "$W/102.nX.json" --to "$URL" --key "$W/key" 2>&1) && fail "a record naming another node was taken: $out" ||
  pass "a record naming another node refused: $out"

# 3. Job 102: n1's rank 0 killed by the OOM killer; requeue asked, but an
# OOM is the job's own: the line, no requeue, no drain.
record 102 n2 term; record 102 n3 term; record 102 n4 term
for n in n1 n2 n3 n4; do sent_ok 102 $n "job 102 $n"; done
# Finished (not requeued): slurmctld refuses the line, slurmdbd's record takes it.
wait_acct 102 && pass "job 102: slurmdbd's AdminComment set (sacctmgr): $(cat "$W/acct.102")" || fail "job 102: no AdminComment in slurmdbd: $(grep 'job 102' "$W/serve.log")"
[ ! -e "$W/comment.102" ] && grep -qxF "update JobId=102 AdminComment=$(cat "$W/acct.102" 2>/dev/null)" "$W/calls" &&
  pass "job 102: scontrol asked first (refused: finished)" || fail "job 102: scontrol not asked first: $(cat "$W/calls")"
sleep 1
grep -q "requeue[a-z]* 102\|JobId=102 ExcNodeList\|(job 102)" "$W/calls" && fail "job 102 (OOM) requeued or drained: $(cat "$W/calls")" ||
  pass "job 102 (OOM) not requeued, nothing drained"

# 4. Job 103: every rank raised the same exception: no node, no requeue.
for n in n1 n2 n3 n4; do record 103 $n bug; sent_ok 103 $n "job 103 $n"; done
wait_acct 103 && pass "job 103: slurmdbd's AdminComment set (sacctmgr): $(cat "$W/acct.103")" || fail "job 103: no AdminComment in slurmdbd"
sleep 1
grep -q "requeue[a-z]* 103\|JobId=103 ExcNodeList" "$W/calls" && fail "job 103 (a user's bug) requeued" || pass "job 103 (a user's bug) not requeued"

# 5. Job 104: n4 sends nothing and SLURM shows it down: lost after the wait; requeued without it.
for n in n1 n2 n3; do record 104 $n term; sent_ok 104 $n "job 104 $n"; done
wait_comment 104 && pass "job 104: AdminComment set: $(cat "$W/comment.104")" || fail "job 104: no AdminComment"
grep -q "n4" "$W/comment.104" && pass "job 104's line names n4" || fail "job 104's line does not name n4"
wait_log "job 104: requeued" || true
grep -qx "update JobId=104 ExcNodeList=n4" "$W/calls" && grep -qx "requeuehold 104" "$W/calls" && grep -qx "release 104" "$W/calls" &&
  pass "job 104 requeued without the lost n4" || fail "job 104 not requeued without n4"

# 6. Job 107 ran on n[1-2] (SLURM's NodeList): n3's record, whose list
# says n[1-3], is dropped.
record 107 n3 xid n1,n2,n3; record 107 n1 term n1,n2,n3; record 107 n2 term n1,n2,n3
sent_ok 107 n3 "job 107 n3"
sleep 1.5
sent_ok 107 n1 "job 107 n1"
sent_ok 107 n2 "job 107 n2" || true
wait_log "dropped node n3's record of job 107" && pass "n3's record of job 107 dropped (not in SLURM's NodeList)" ||
  fail "n3's record of job 107 kept: $(cat "$W/serve.log")"
sleep 1
grep -q "NodeName=n3 State=DRAIN\|JobId=107 ExcNodeList" "$W/calls" && fail "n3 blamed for job 107" || pass "n3 not blamed for job 107"

# 6b. Job 106, at a site that keeps no accounting: the finished job's line
# is only in serve (gangway postmortem, fleet stops), and one line says so.
echo accounting_storage/none >"$W/storage"
for n in n1 n2 n3 n4; do record 106 $n bug; sent_ok 106 $n "job 106 $n"; done
wait_log "job 106: the line is only in \`gangway postmortem 106\` and \`gangway fleet stops\`" &&
  pass "job 106, no slurmdbd: one line says where the line is: $(grep 'job 106: the line' "$W/serve.log")" ||
  fail "job 106, no slurmdbd: $(grep 'job 106' "$W/serve.log")"
grep -q "^sacctmgr .*jobid=106 " "$W/calls" && fail "job 106: sacctmgr asked without slurmdbd" || pass "job 106: sacctmgr not asked"
echo accounting_storage/slurmdbd >"$W/storage"

# 7. Job 105: n2's Xid again: n2 has stopped two jobs within 14 days.
record 105 n1 term; record 105 n2 xid; record 105 n3 term; record 105 n4 term
for n in n1 n2 n3 n4; do sent_ok 105 $n "job 105 $n"; done
wait_comment 105 || fail "job 105: no AdminComment"
sleep 0.5

# 8. What the admin and the user read.
stops=$("$GW" fleet stops --db "$W/fleet.db")
echo "$stops" | grep -q "job 101 step 0 n2 gpu-xid node requeued" && pass "fleet stops: job 101" || fail "fleet stops lacks job 101: $stops"
echo "$stops" | grep -q "job 102 step 0 n1 oom" && pass "fleet stops: job 102 (oom)" || fail "fleet stops lacks job 102: $stops"
echo "$stops" | grep -q "job 104 step 0 n4 node-lost node requeued" && pass "fleet stops: job 104" || fail "fleet stops lacks job 104: $stops"
n4=$("$GW" fleet stops --db "$W/fleet.db" n4)
[ "$(echo "$n4" | grep -c '^[0-9].* job ')" = 1 ] && pass "fleet stops n4: one stop" || fail "fleet stops n4: $n4"
metrics=$($PY - "$URL/metrics" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
PY
)
echo "$metrics" | grep -q '^gangway_job_stops_total{node="n2",cause="gpu-xid"} 2$' && pass "/metrics counts n2's two Xid stops" ||
  fail "/metrics: $(echo "$metrics" | grep job_stops)"
"$GW" fleet metrics --db "$W/fleet.db" | grep -q '^gangway_job_stops_total{node="n1",cause="oom"} 1$' &&
  pass "fleet metrics counts n1's OOM" || fail "fleet metrics lacks n1's OOM"
flagged=$("$GW" fleet flagged --db "$W/fleet.db"); rc=$?
echo "$flagged" | grep -q "^n2 job_stops - 2 " && [ $rc = 1 ] && pass "fleet flagged: n2 a repeat offender" || fail "fleet flagged ($rc): $flagged"
echo "$flagged" | grep -q "^n1 job_stops" && fail "n1 flagged for an OOM" || pass "n1 not flagged for its OOM"
# GET /v1/stops/JOB: the job's owner or root, as MUNGE says.
get() {  # JOB [CREDENTIAL]: the status of serve's answer
  $PY - "$URL/v1/stops/$1" "${2:-}" <<'PY'
import sys, urllib.request, urllib.error
h = {"X-Gangway-Munge": sys.argv[2]} if sys.argv[2] else {}
try:
    print(urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers=h), timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
cred() { "$@" "$M/munge" -s "gangway-stops-read job=$J"; }  # J=JOB cred [setpriv ...]: a credential of that user
[ "$(get 101)" = 401 ] && pass "GET /v1/stops/101 without a credential: 401" || fail "GET /v1/stops/101 without a credential: $(get 101)"
if [ -z "$MUNGED" ]; then
  echo "skip: no munged here (MUNGE not installed, or not root): the reads by owner, other user and root are not tried"
else
  as_other="setpriv --reuid=4242 --regid=4242 --clear-groups"
  as_nobody="runuser -u nobody --"
  [ "$(get 101 "$(J=101 cred $as_nobody)")" = 403 ] && pass "another user's credential for job 101: 403" || fail "another user read job 101"
  [ "$(get 101 "$(J=102 cred)")" = 401 ] && pass "a credential made for job 102 does not read job 101: 401" || fail "job 102's credential read job 101"
  c=$(J=106 cred $as_other)
  [ "$(get 106 "$c")" = 200 ] && pass "job 106's owner (uid 4242, SLURM's UserId) reads its stop" || fail "job 106's owner: $(get 106 "$c")"
  [ "$(get 106 "$c")" = 401 ] && pass "a credential replayed: 401" || fail "a replayed credential was taken"
  [ "$(get 101 "$(J=101 cred $as_other)")" = 403 ] && pass "job 106's owner may not read job 101: 403" || fail "uid 4242 read job 101"
fi
if [ -n "$MUNGED" ]; then
pm=$("$GW" postmortem 101 --from "$URL"); rc=$?
[ $rc = 0 ] && echo "$pm" | grep -qF "$(cat "$W/comment.101")" && pass "gangway postmortem 101 prints the line" || fail "gangway postmortem 101 ($rc): $pm"
pm=$("$GW" postmortem 999 --from "$URL"); rc=$?
[ $rc = 1 ] && pass "gangway postmortem 999: none known" || fail "gangway postmortem 999 ($rc): $pm"
pm=$(env -u SLURM_JOB_ID "$GW" postmortem --from "$URL"); rc=$?
[ $rc = 0 ] && [ "$(echo "$pm" | head -1)" = "$(cat "$W/comment.105")" ] && pass "gangway postmortem without JOBID: the newest job, 105" ||
  fail "gangway postmortem without JOBID ($rc): $pm"
pm=$(SLURM_JOB_ID=102 "$GW" postmortem --from "$URL"); rc=$?
[ $rc = 0 ] && [ "$(echo "$pm" | head -1)" = "$(cat "$W/acct.102")" ] && pass "gangway postmortem in job 102: its line" ||
  fail "gangway postmortem in job 102 ($rc): $pm"
fi
# Another user may not read root's job's post-mortem.
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
  chmod 755 "$W"
  pm=$(runuser -u nobody -- env GANGWAY_SCONTROL="$W/scontrol" GANGWAY_SQUEUE="$W/squeue" "$GW" postmortem 101 --from "$URL" 2>&1); rc=$?
  [ $rc = 1 ] && echo "$pm" | grep -q "not yours" && pass "another user: job 101 is not theirs" || fail "another user read job 101 ($rc): $pm"
fi
finish
