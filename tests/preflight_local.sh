#!/bin/bash
# gangway run/check without SLURM: three "nodes" of two tasks each on
# loopback, with the SLURM variables a step would have. Checks the verdict,
# exec (same pid, exit code), the authentication of the rendezvous (a task
# with another secret and a sender of garbage are rejected and do not count),
# the missing-secret message, and --on-fail=warn.
set -u
. "$(dirname "$0")/lib/script_env.sh"
test_workdir preflight-local
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
OTHER=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
calc() { awk "BEGIN { print ($*) }"; }  # float arithmetic and comparisons (1/0) without bc
# Below Linux's ephemeral range (32768-60999), where any process's outgoing
# connection may hold the port, and apart from preflight_gpu.sh's ports:
# make check runs the two side by side.
port() { echo $((20000 + (RANDOM % 1000) * 4)); }

task() {  # task PORT RANK [ENV=VAL...] -- ARGS: one task of a 3-node, 6-task step, in the background
  local p=$1 r=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_STEP_NODELIST='n[1-3]' SLURM_STEP_NUM_NODES=3 SLURM_STEP_NUM_TASKS=6 \
    SLURM_STEP_TASKS_PER_NODE='2(x3)' SLURM_PROCID=$r SLURM_NODEID=$((r / 2)) SLURM_LOCALID=$((r % 2)) \
    PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$p NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_SECRET=$SECRET \
    GANGWAY_DRAIN_DIR= "${envs[@]}" "$GW" "$@" >"$W/out.$r" 2>"$W/err.$r" &
  pids[$r]=$!
}
wait_all() { for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs[$r]=$?; done; }

# 1. healthy: every task exits 0, the report says ok with 6/6 tasks and bandwidth figures.
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4 5; do task "$P" $r -- check --report="$W/ok.json" --heatmap="$W/ok.svg"; done
wait_all
if [ "${rcs[*]}" = "0 0 0 0 0 0" ] && grep -q '"verdict": "ok"' "$W/ok.json" && grep -q '6/6 tasks' "$W/ok.json" \
   && grep -q '"stage": "bandwidth", "ok": true, "bps": [0-9]' "$W/ok.json" && grep -q '<svg' "$W/ok.svg"; then
  pass "3 loopback nodes x 2 tasks: verdict ok, report and heatmap written"
else fail "healthy loopback run: rcs ${rcs[*]}; $(cat "$W/err.0"; head -c 600 "$W/ok.json" 2>/dev/null)"; fi

# 2. exec: the command replaces gangway (same pid) and its exit code comes through.
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4 5; do task "$P" $r -- run --check=none -- sh -c "echo \$\$ >$W/pid.$r; exit 7"; done
wait_all
same=0; for r in 0 1 2 3 4 5; do [ "$(cat "$W/pid.$r" 2>/dev/null)" = "${pids[$r]}" ] && same=$((same + 1)); done
if [ "${rcs[*]}" = "7 7 7 7 7 7" ] && [ $same = 6 ]; then pass "run execs the command in place: same pid, its exit code 7"
else fail "exec: rcs ${rcs[*]}, $same/6 same pids; $(cat "$W/err.0")"; fi

# 2b. GANGWAY_SECRET does not reach the command (issue 15, item 13), with a check or with none.
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4 5; do task "$P" $r -- run --check=none -- sh -c "echo \${GANGWAY_SECRET-unset} >$W/secret.$r"; done
wait_all
if [ "$(cat "$W"/secret.* | sort -u)" = unset ]; then pass "the command's environment has no GANGWAY_SECRET"
else fail "GANGWAY_SECRET leaked to the command: $(cat "$W"/secret.* | sort -u | head -c 80)"; fi

# 3. an intruder with another secret posing as rank 5, and a sender of garbage: rejected,
#    rank 5 is missing, node n3 is named, the rest stop within the join deadline.
P=$(port); pids=(); rcs=()
start=$(date +%s.%N)
for r in 0 1 2 3 4; do task "$P" $r -- check --join-timeout=3 --report="$W/intr.json"; done
task "$P" 5 GANGWAY_SECRET=$OTHER -- check --join-timeout=3
python3 - "$((P + 1))" <<'PY' &
import socket, sys, time, struct
port = int(sys.argv[1])
for payload in (b"\xff\xff\xff\xff" + b"x" * 64, struct.pack(">I", 60) + b"\x01" + b"\0" * 59):
    for _ in range(40):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1); break
        except OSError: time.sleep(0.05)
    s.sendall(b"n" * 16); s.recv(16); s.sendall(payload); time.sleep(0.3); s.close()  # a client's nonce first
PY
wait_all; wait
el=$(calc "$(date +%s.%N) - $start")
if [ "${rcs[0]}" = 4 ] && grep -q '"name": "n3", "addr": "127.0.0.1", "status": "missing"' "$W/intr.json" \
   && grep -q '5/6 tasks, 3 connection(s) rejected' "$W/intr.json" && [ "$(calc "$el < 10")" = 1 ]; then
  pass "wrong secret and malformed frames rejected (3 connections), n3 named missing, done in ${el}s"
else fail "intruder: rcs ${rcs[*]} in ${el}s; $(cat "$W/err.0"; cat "$W/intr.json" 2>/dev/null | head -30)"; fi

# 3b. rejected connections are told (issue 15, item 16): one line each, with the peer's
#     address, at most 10 in 10 s and then one line with the count; a flood of 150 garbage
#     connections leaves the verdict ok.
n_rej=$(grep -c 'gangway: rejected a connection from 127.0.0.1:[0-9]* to the rendezvous' "$W/err.0")
[ "$n_rej" = 3 ] && pass "the 3 rejected connections are told on node 0's stderr, one line each" \
  || fail "rejection lines: $n_rej: $(grep rejected "$W/err.0")"
P=$(port); pids=(); rcs=()
task "$P" 0 -- check --report="$W/flood.json"
python3 - "$((P + 1))" <<'PY'
import socket, sys, time
port, sent, t0 = int(sys.argv[1]), 0, time.time()
while sent < 150 and time.time() - t0 < 10:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(b"\xff\xff\xff\xff" + b"x" * 64); s.close(); sent += 1
    except OSError: time.sleep(0.02)
PY
for r in 1 2 3 4 5; do task "$P" $r -- check; done
wait_all
n_rej=$(grep -c 'gangway: rejected a connection from' "$W/err.0")
if [ "${rcs[*]}" = "0 0 0 0 0 0" ] && [ "$n_rej" -le 10 ] && [ "$n_rej" -ge 1 ] \
   && grep -q 'more connection(s) to the rendezvous rejected, not shown one by one' "$W/err.0"; then
  pass "a flood of 150 garbage connections: verdict ok, $n_rej lines and one count"
else fail "flood: rcs ${rcs[*]}, $n_rej lines; $(grep -v '^gangway: rejected' "$W/err.0" | head -20)"; fi

# 3c. --on-fail=requeue (issue 32 item 3): node 0 asks SLURM through the one client, so
#     GANGWAY_SQUEUE's and GANGWAY_SCONTROL's stand-ins get each call as argv: the job's
#     fields (squeue's, where the user's n9 is excluded already), requeue, then n9 and the
#     missing node n3 excluded. (The real requeue: tests/integration/preflight_requeue.sh.)
cat >"$W/scontrol" <<SH
#!/bin/sh
for a in "\$@"; do printf '%s\n' "\$a"; done >>"$W/scontrol.argv"
echo -- >>"$W/scontrol.argv"
[ "\${0##*/}" = squeue ] && echo '77|RUNNING|0|n[0-4]|n9|n0'
exit 0
SH
chmod +x "$W/scontrol"
cp "$W/scontrol" "$W/squeue"
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4; do task "$P" $r GANGWAY_SCONTROL="$W/scontrol" GANGWAY_SQUEUE="$W/squeue" -- run --on-fail=requeue --join-timeout=2 -- true; done
wait_all
want=$(printf '%s\n' --noheader --states=all --jobs=77 '--format=%A|%T|%U|%N|%x|%B' -- requeue 77 -- update JobId=77 ExcNodeList=n9,n3 --)
if [ "${rcs[0]}" = 4 ] && [ "$(cat "$W/scontrol.argv" 2>/dev/null)" = "$want" ] \
   && grep -q 'job 77 requeued, excluding n9,n3' "$W/err.0"; then
  pass "--on-fail=requeue: GANGWAY_SQUEUE gets the job's fields, GANGWAY_SCONTROL requeue and ExcNodeList=n9,n3, as argv; exit 4"
else fail "requeue: rcs ${rcs[*]}; calls: $(tr '\n' ' ' <"$W/scontrol.argv" 2>/dev/null); $(cat "$W/err.0")"; fi

# 4. without GANGWAY_SECRET: a clear message, exit 5; with --on-fail=warn the command still runs.
env -u GANGWAY_SECRET SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_STEP_NODELIST=n1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=1 \
  SLURM_STEP_TASKS_PER_NODE=1 SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$(port) \
  NODE_ADDR=127.0.0.1 "$GW" check 2>"$W/nosecret.err"; rc=$?
if [ $rc = 5 ] && grep -q 'GANGWAY_SECRET is not set.*plugstack.conf' "$W/nosecret.err"; then pass "no GANGWAY_SECRET: exit 5 naming it"
else fail "no secret: rc $rc: $(cat "$W/nosecret.err")"; fi
# Inside a SLURM job the missing-secret message never suggests --insecure (a public key), and
# --insecure / GANGWAY_INSECURE=1 are refused there (issue 15, item 12).
grep -q -- 'insecure' "$W/nosecret.err" && fail "inside a job the message suggests --insecure: $(cat "$W/nosecret.err")" \
  || pass "inside a job the missing-secret message does not suggest --insecure"
one_node() {  # one_node [VAR=VALUE...] -- ARGS: a 1-node, 1-task step on loopback
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env -u GANGWAY_SECRET SLURM_STEP_ID=0 SLURM_STEP_NODELIST=n1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=1 \
    SLURM_STEP_TASKS_PER_NODE=1 SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$(port) \
    NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_DRAIN_DIR= "${envs[@]}" "$GW" "$@"
}
one_node SLURM_JOB_ID=1 -- check --insecure --check=none 2>"$W/insecure.err"; rc=$?
[ $rc = 2 ] && grep -q 'refused inside a SLURM job' "$W/insecure.err" && pass "--insecure inside a job: exit 2, refused" \
  || fail "--insecure in a job: rc $rc: $(cat "$W/insecure.err")"
one_node SLURM_JOB_ID=1 GANGWAY_INSECURE=1 -- run --on-fail=warn -- true 2>"$W/insecure2.err"; rc=$?
[ $rc = 2 ] && grep -q 'GANGWAY_INSECURE=1.*refused inside a SLURM job' "$W/insecure2.err" \
  && pass "GANGWAY_INSECURE=1 inside a job: refused, the command not started" || fail "GANGWAY_INSECURE in a job: rc $rc: $(cat "$W/insecure2.err")"
one_node -- check --insecure --check=none 2>"$W/insecure3.err"; rc=$?
[ $rc = 0 ] && pass "--insecure outside a job (no SLURM_JOB_ID) still checks" || fail "--insecure outside a job: rc $rc: $(cat "$W/insecure3.err")"
"$GW" run --on-fail=warn -- true 2>/dev/null && pass "--on-fail=warn starts the command when the check cannot run" \
  || fail "--on-fail=warn outside a step did not run the command"

# 5. usage errors: exit 2 with the option named.
"$GW" run --check=fast -- true 2>"$W/usage.err"; rc=$?
[ $rc = 2 ] && grep -q 'check=fast is not a check level' "$W/usage.err" && pass "bad --check value: exit 2" || fail "usage: $rc $(cat "$W/usage.err")"
GANGWAY_ON_FAIL=later "$GW" check 2>"$W/usage2.err"; rc=$?
[ $rc = 2 ] && grep -q 'GANGWAY_ON_FAIL' "$W/usage2.err" && pass "bad GANGWAY_ON_FAIL: exit 2 naming the variable" || fail "env usage: $rc"
"$GW" run --help | grep -q -- '--on-fail=abort|warn|requeue' && pass "run --help lists the options" || fail "run --help"

# 6. a user's own threshold judges nodes but drains none: GANGWAY_REQUIRE=cuda on nodes without
#    CUDA fails every node (exit 3), and no drain request is written, with a line saying why.
mkdir -m 1733 "$W/drain"
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4 5; do task "$P" $r GANGWAY_DRAIN_DIR="$W/drain" GANGWAY_REQUIRE=cuda -- check; done
wait_all
if [ "${rcs[0]}" = 3 ] && [ -z "$(ls -A "$W/drain")" ] && grep -q 'no drain request: the check used your own thresholds (GANGWAY_REQUIRE)' "$W/err.0"; then
  pass "GANGWAY_REQUIRE=cuda without CUDA: degraded, no drain request"
else fail "user threshold drains: rc ${rcs[0]}, files: $(ls -A "$W/drain"); $(cat "$W/err.0")"; fi

# 7. --expect-gbps=100000: every link is below the user's figure, so no node can be told
#    apart: degraded (exit 3) with a finding saying so, no node named, no drain request.
P=$(port); pids=(); rcs=()
for r in 0 1 2 3 4 5; do task "$P" $r GANGWAY_DRAIN_DIR="$W/drain" -- check --expect-gbps=100000 --report="$W/expect.json"; done
wait_all
if [ "${rcs[0]}" = 3 ] && [ -z "$(ls -A "$W/drain")" ] && grep -q 'bandwidth: every link is below' "$W/expect.json" \
   && ! grep -q '"status": "slow"' "$W/expect.json"; then
  pass "--expect-gbps=100000: degraded, every link below it, no node named, no drain request"
else fail "expect-gbps: rc ${rcs[0]}, files: $(ls -A "$W/drain"); $(cat "$W/err.0"; grep -A3 findings "$W/expect.json")"; fi

# 8. drain requests go only to the job's first node, whose Epilog alone decides (issue 23, item 4):
#    node n3's data address is not on its interface, so it is named unreachable (exit 4). With the
#    job on n[1-3], node 0 (n1) writes the request for n3; with the job on n0,n[1-3] this step
#    lacks the job's first node, so none is written, and one line says where to run the check.
for jl in 'n[1-3]' 'n0,n[1-3]'; do
  P=$(port); pids=(); rcs=()
  for r in 0 1 2 3 4 5; do
    a=127.0.0.1; [ $r -ge 4 ] && a=127.0.0.2
    task "$P" $r GANGWAY_DRAIN_DIR="$W/drain" SLURM_JOB_NODELIST="$jl" SLURMD_NODENAME=n$((r / 2 + 1)) NODE_ADDR=$a -- check --check=none
  done
  wait_all
  files=$(ls -A "$W/drain")
  if [ "$jl" = 'n[1-3]' ]; then
    [ "${rcs[0]}" = 4 ] && [ "$files" = gangway-drain.77.n3 ] && grep -q '^reason=unreachable' "$W/drain/gangway-drain.77.n3" \
      && pass "the job's first node (n1) writes the drain request for the unreachable n3" \
      || fail "first node: rc ${rcs[0]}, files: $files; $(cat "$W/err.0")"
  else
    [ "${rcs[0]}" = 4 ] && [ -z "$files" ] && [ "$(grep -c "only the Epilog on the job's first node (n0) decides drains" "$W/err.0")" = 1 ] \
      && pass "a step without the job's first node (n0) writes no drain request, and one line says so" \
      || fail "not the first node: rc ${rcs[0]}, files: $files; $(cat "$W/err.0")"
  fi
  rm -f "$W/drain"/*
done

# 9. another user's file planted under a request's name (the names are predictable, and in the
#    sticky spool nobody may replace another's file) does not stop the request: it is written
#    under NAME,RANDOM, which the Epilog reads as NAME. The tasks run as uid 12346, the planted
#    file is uid 12345's: needs root (root may replace anyone's file).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$W"  # for uid 12346 to reach the spool; task() runs setpriv as the command
  printf 'reason=planted\n' >"$W/drain/gangway-drain.77.n3"; chown 12345 "$W/drain/gangway-drain.77.n3"
  P=$(port); pids=(); rcs=()
  for r in 0 1 2 3 4 5; do
    a=127.0.0.1; [ $r -ge 4 ] && a=127.0.0.2
    task "$P" $r GANGWAY_DRAIN_DIR="$W/drain" SLURM_JOB_NODELIST='n[1-3]' NODE_ADDR=$a \
      setpriv --reuid=12346 --regid=12346 --clear-groups -- check --check=none
  done
  wait_all
  mine=$(find "$W/drain" -name 'gangway-drain.77.n3,*' -uid 12346 -printf '%f\n')
  [ "${rcs[0]}" = 4 ] && [[ $mine =~ ^gangway-drain\.77\.n3,[0-9a-f]{16}$ ]] && grep -q '^reason=unreachable' "$W/drain/$mine" \
    && pass "a file of another user under the request's name: the request is written beside it ($mine)" \
    || fail "planted name: rc ${rcs[0]}, files: $(ls -ln "$W/drain"); $(cat "$W/err.0")"
  rm -f "$W/drain"/*
else
  echo "SKIP: a planted request name needs root and setpriv, to run the tasks as another user"
fi

finish
