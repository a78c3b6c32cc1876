#!/bin/bash
# `gangway fleet serve --stops-key` under load and hostile clients, without a
# cluster (a stand-in scontrol that takes 0.1 s a call, as a busy slurmctld):
#  1. strangers without the key hold places: 8 uploads that announce 1 MiB
#     and trickle a byte every 2 s, and 12 addresses trickling GET headers,
#     8 connections each, reconnecting when cut; a node's signed record
#     (`gangway postmortem send`, the Epilog's client) still gets its 202
#     within 10 s;
#  2. 600 failing jobs' records of one user and one of another user's, sent
#     as fast as 4 senders go: every one taken (202) and every job's stop in
#     the store (`fleet stops`), the other user's too;
#  3. a record whose job claims 65,536 nodes: serve judges it with one
#     `scontrol -o show node`, and ends within 5 s of SIGTERM, even while
#     that call hangs; the job is judged after the restart;
#  4. a record taken, then serve stopped before judging it: the next serve
#     judges it; a node's record that comes after its job was judged (its
#     Epilog could not send while serve was down) is judged with the others
#     and replaces the stop; its replay is refused.
# About 30 s, most of it the 601 senders. A flood of connections on
# loopback: one of LOAD_TESTS.
set -u
. "$(dirname "$0")/lib/script_env.sh"
W=$(mktemp -d /tmp/gangway-pm-load.XXXXXX)
SERVE= HOSTILE=
cleanup() {
  [ -n "$HOSTILE" ] && { kill "$HOSTILE" 2>/dev/null; wait "$HOSTILE" 2>/dev/null; }
  [ -n "$SERVE" ] && { kill -9 "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null; }
  # A stand-in call serve left running (its own process group) may still write there for 0.1 s.
  [ -n "${KEEP:-}" ] || rm -rf "$W" 2>/dev/null || { sleep 1; rm -rf "$W"; }
}
trap cleanup EXIT

# The stand-in scontrol: the jobs slurmctld knows are the lines of $W/jobs;
# nodes n1-n4 are up; a finished job's AdminComment is refused, as SLURM
# does; the site keeps no accounting (no sacctmgr). Each call takes 0.1 s.
cat >"$W/scontrol" <<'SH'
#!/bin/bash
D=$(dirname "$0")
sleep 0.1
echo "$*" >>"$D/calls"
case "$*" in
  "-o show job") cat "$D/jobs"; exit 0 ;;
  "-o show job "*) grep "^JobId=$4 " "$D/jobs" && exit 0; echo "slurm_load_jobs error: Invalid job id specified"; exit 1 ;;
  "-o show node") [ -e "$D/slow" ] && sleep 8  # a slurmctld that hangs (within the client's 10 s)
    for n in n1 n2 n3 n4; do echo "NodeName=$n Arch=x86_64 State=ALLOCATED ThreadsPerCore=1"; done; exit 0 ;;
  "show node "*) echo "NodeName=$3 Arch=x86_64 State=ALLOCATED ThreadsPerCore=1"; exit 0 ;;
  "show config") printf 'ClusterName             = test\nAccountingStorageType   = accounting_storage/none\n'; exit 0 ;;
  "update JobId="*" AdminComment="*) echo "slurm_update error: Job has already finished"; exit 1 ;;
esac
exit 0
SH
chmod +x "$W/scontrol"
printf '#!/bin/sh\necho "sacctmgr $*" >>"$(dirname "$0")/calls"\nexit 1\n' >"$W/sacctmgr"
chmod +x "$W/sacctmgr"
export GANGWAY_SCONTROL=$W/scontrol GANGWAY_SACCTMGR=$W/sacctmgr
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/key"
chmod 600 "$W/key"
# job ID NODELIST UID: a line of `scontrol -o show job`.
job() { echo "JobId=$1 JobName=train UserId=u$3($3) GroupId=g(0) JobState=FAILED NodeList=$2 AdminComment=(null)"; }
{
  job 1 n1 1000
  for j in $(seq 1000 1599); do job "$j" "n$((j % 4 + 1))" 1000; done
  job 2000 n2 2000
  job 3000 'n[1-65536]' 1000
  job 4000 'n[1-2]' 1000
} >"$W/jobs"

# records FILE: one node's record (the user's bug on every rank, or XID: a
# GPU Xid) per line "JOB NODE NODES CASE", each to $W/JOB.NODE.json.
records() {
  $PY - "$W" "$1" <<'PY'
import json, sys, time
out, spec = sys.argv[1], sys.argv[2]
t0 = (int(time.time()) - 60) * 10**9
for line in open(spec):
    job, node, nodes, case = line.split()
    job = int(job)
    if nodes.startswith("n[1-"):
        nodes = ["n%d" % i for i in range(1, int(nodes[4:-1]) + 1)]
    else:
        nodes = nodes.split(",")
    k = nodes.index(node)
    tasks = [{"t_ns": t0 + local * 10**6, "node": node, "job": job, "step": 0, "rank": 2 * k + local,
              "local_rank": local, "pid": 1000 + local, "wait_status": 9 if case == "xid" else 256,
              "oom_kills": 0, "requeue_on_fail": False} for local in range(2)]
    evidence = [{"t_ns": t0 - 10**8, "sign": "gpu_xid", "device": "0000:17:00.0", "code": 79, "pid": 0,
                 "text": "NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus."}] if case == "xid" else []
    dumps = [{"rank": 2 * k + l, "entered": [], "completed": [], "exception": "ValueError: bad batch"}
             for l in range(2)] if case == "bug" else []
    with open("%s/%d.%s.json" % (out, job, node), "w") as f:
        json.dump({"kind": "gangway-node-record", "schema": 1, "node": node, "job": job, "job_nodes": nodes,
                   "window_start_ns": t0 - 600 * 10**9, "window_end_ns": t0 + 10 * 10**9,
                   "tasks": tasks, "evidence": evidence, "dumps": dumps}, f)
PY
}
start_serve() {  # WAIT
  "$GW" fleet serve --listen 127.0.0.1:0 --db "$W/fleet.db" --cache 0 --stops-key "$W/key" --stops-wait "$1" 2>>"$W/serve.log" &
  SERVE=$!
  for _ in $(seq 100); do [ "$(grep -c "serving http" "$W/serve.log")" -ge "$STARTS" ] && break; sleep 0.1; done
  PORT=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$W/serve.log" | tail -1)
  URL=http://127.0.0.1:$PORT
}
stop_serve() {  # prints the seconds serve took to end after SIGTERM (99 when it did not within 10 s)
  local t0=$(date +%s.%N) n
  kill -TERM "$SERVE"
  for n in $(seq 100); do kill -0 "$SERVE" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SERVE" 2>/dev/null; then kill -9 "$SERVE"; wait "$SERVE" 2>/dev/null; echo 99
  else wait "$SERVE" 2>/dev/null; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'; fi
  SERVE=
}
send() { "$GW" postmortem send "$W/$1.$2.json" --to "$URL" --key "$W/key" 2>&1; }
stops() { "$GW" fleet stops --db "$W/fleet.db" 2>&1; }

STARTS=1
start_serve 2
[ -n "$PORT" ] || { cat "$W/serve.log"; echo "FAIL: fleet serve did not start"; exit 1; }

# 1. Places and memory held by strangers.
cat >"$W/hostile.py" <<'PY'
import socket, sys, threading, time
port = int(sys.argv[1])
def hold(src, head, trickle):
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(src, 0))
            s.sendall(head)
            for b in trickle:
                s.sendall(bytes([b]))
                time.sleep(2)
        except OSError:
            pass
        time.sleep(0.2)
# The uploads' headers whole, then their body a byte every 2 s; the GETs' headers a byte every 2 s.
post = b"POST /v1/stops HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"
get = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"y" * 4000 + b"\r\n\r\n"
for i in range(8):
    threading.Thread(target=hold, args=("127.0.0.2", post, b"x" * 1048576), daemon=True).start()
for a in range(3, 15):
    for i in range(8):
        threading.Thread(target=hold, args=("127.0.0.%d" % a, b"", get), daemon=True).start()
time.sleep(3600)
PY
$PY "$W/hostile.py" "$PORT" &
HOSTILE=$!
sleep 4  # every place taken, the uploads past their headers
echo "1 n1 n1 xid" >"$W/spec1"; records "$W/spec1"
t0=$(date +%s.%N)
out=$(send 1 n1); rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }')
[ $rc = 0 ] && awk -v t="$took" 'BEGIN { exit !(t < 10) }' &&
  pass "a signed record taken in ${took}s while strangers hold places and uploads: $out" ||
  fail "a signed record under held places and uploads ($rc, ${took}s): $out"
kill "$HOSTILE"; wait "$HOSTILE" 2>/dev/null; HOSTILE=
sleep 1  # serve sees the strangers' connections end

# 2. A burst: 600 failing jobs of user 1000, and job 2000 of user 2000 last.
{ for j in $(seq 1000 1599); do echo "$j n$((j % 4 + 1)) n$((j % 4 + 1)) bug"; done; echo "2000 n2 n2 bug"; } >"$W/spec2"
records "$W/spec2"
t0=$(date +%s)
# Sent as the Epilogs of 8 nodes would (8 addresses), one at a time each: signed as `gangway postmortem send`
# signs (lib/sys/postmortem/stops_auth), from one process, for speed.
$PY - "$W" "$PORT" "$W/spec2" <<'PY' >"$W/unsent"
import hashlib, hmac, http.client, sys, threading, time
w, port, spec = sys.argv[1], int(sys.argv[2]), sys.argv[3]
key = open(w + "/key", "rb").read()
todo = [l.split()[:2] for l in open(spec)]
lock = threading.Lock()
def run(src):
    while True:
        with lock:
            if not todo: return
            job, node = todo.pop()
        body = open("%s/%s.%s.json" % (w, job, node), "rb").read()
        t = str(int(time.time()))
        sig = hmac.new(key, ("gangway-stop 1\njob=%s\nnode=%s\ntime=%s\n" % (job, node, t)).encode() + body,
                       hashlib.sha256).hexdigest()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(src, 0))
        try:
            c.request("POST", "/v1/stops", body, {"Content-Type": "application/json", "X-Gangway-Job": job,
                      "X-Gangway-Node": node, "X-Gangway-Time": t, "X-Gangway-Signature": sig})
            r = c.getresponse()
            if r.status != 202: print(job, r.status, r.read().decode().strip())
        except OSError as e:
            print(job, e)
        c.close()
threads = [threading.Thread(target=run, args=("127.0.1.%d" % (i + 1),)) for i in range(8)]  # 8 nodes' Epilogs
for t in threads: t.start()
for t in threads: t.join()
PY
sent_s=$(( $(date +%s) - t0 ))
[ ! -s "$W/unsent" ] && pass "601 records taken in ${sent_s}s" || fail "$(wc -l <"$W/unsent") of 601 records refused: $(head -3 "$W/unsent" | tr '\n' ' ')"
for _ in $(seq 60); do [ "$(stops | grep -c '^[0-9].* job ')" -ge 602 ] && break; sleep 0.5; done
n=$(stops | grep -c '^[0-9].* job ')
[ "$n" -ge 602 ] && pass "every job's stop is in the store ($n stops) $(( $(date +%s) - t0 ))s after the burst began" ||
  fail "$n of 602 stops in the store after 30 s more: $(tail -3 "$W/serve.log")"
stops | grep -q "^[0-9].* job 2000 " && pass "another user's job in the burst has its stop" || fail "job 2000 (another user's) has no stop"
calls=$(grep -c '^-o show job$' "$W/calls")
[ "$calls" -lt 100 ] && pass "SLURM asked for the jobs in $calls calls, not one a job" || fail "$calls calls of scontrol -o show job"
grep -q '^-o show job 1[0-9][0-9][0-9]$' "$W/calls" && fail "serve asked scontrol job by job" || pass "no job asked for on its own"

# 3. A job that claims 65,536 nodes, being judged when SIGTERM comes.
echo "3000 n1 n[1-65536] bug" >"$W/spec3"; records "$W/spec3"
: >"$W/calls"
out=$(send 3000 n1) && pass "job 3000 (65,536 nodes) taken" || fail "job 3000 refused: $out"
touch "$W/slow"  # and SLURM hangs on the node states when SIGTERM comes
sleep 2.5
took=$(stop_serve)
rm -f "$W/slow"
awk -v t="$took" 'BEGIN { exit !(t <= 5) }' && pass "serve ended ${took}s after SIGTERM" || fail "serve took ${took}s to end after SIGTERM"
asked=$(grep -c '^show node ' "$W/calls")
[ "$asked" = 0 ] && pass "the missing nodes asked in one call ($(grep -c '^-o show node$' "$W/calls") of scontrol -o show node)" ||
  fail "scontrol show node called $asked times for job 3000's missing nodes"

# 4. Kept across a restart, and a late record.
printf '4000 n1 n1,n2 bug\n4000 n2 n1,n2 xid\n' >"$W/spec4"; records "$W/spec4"
STARTS=2; start_serve 60
out=$(send 4000 n1) && pass "job 4000 n1 taken: $out" || fail "job 4000 n1: $out"
took=$(stop_serve)
stops | grep -q "^[0-9].* job 4000 " && fail "job 4000 judged before its wait" || pass "job 4000 waiting when serve stopped (${took}s)"
STARTS=3; start_serve 2
for _ in $(seq 100); do stops | grep -q "^[0-9].* job 4000 " && break; sleep 0.1; done
stops | grep -q "^[0-9].* job 3000 " && pass "job 3000, pending when serve was stopped mid-call, judged after the restart" ||
  fail "job 3000 lost across the stop: $(grep 'job 3000\|SLURM call' "$W/serve.log" | tail -3)"
stops | grep -q "^[0-9].* job 4000 " && pass "the restarted serve judged job 4000: $(stops | grep '^[0-9].* job 4000 ')" ||
  fail "job 4000's record lost across the restart: $(tail -3 "$W/serve.log")"
out=$(send 4000 n2) && pass "n2's late record of job 4000 taken: $out" || fail "n2's late record of job 4000: $out"
for _ in $(seq 100); do stops | grep -q " job 4000 step 0 n2 gpu-xid" && break; sleep 0.1; done
s4=$(stops | grep "^[0-9].* job 4000 ")
# n1's 2 ranks and n2's 2 (the 3 others of the first to end): both records judged together.
[ "$(echo "$s4" | wc -l)" = 1 ] && echo "$s4" | grep -q "n2 gpu-xid" && stops | grep -A1 "^[0-9].* job 4000 " | grep -q "3 other ranks" &&
  pass "job 4000 judged again with n2's late record and n1's: $s4" ||
  fail "job 4000 after the late record: $s4"
out=$(send 4000 n2) && fail "a replay of n2's late record was taken: $out" || pass "the late record's replay refused: $out"
finish
