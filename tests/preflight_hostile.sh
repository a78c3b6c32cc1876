#!/bin/bash
# gangway check against a hostile network, on loopback without SLURM (issue 15,
# items 5-7 and 14): three "nodes" of two tasks each, as preflight_local.sh,
# while a stranger floods the rendezvous and the data ports. Each attack first
# ended or failed a healthy check; now the check survives it, says so, and a
# healthy step stays ok. Limits are set with ulimit in the tasks' own shells.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
GW=${GANGWAY_BIN:-$top_builddir/launcher/gangway}
W=$(mktemp -d /tmp/gangway-preflight-hostile.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
. "$(dirname "$0")/verdicts.sh"
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Below Linux's ephemeral range and apart from preflight_local.sh's and preflight_gpu.sh's ports.
port() { echo $((24000 + (RANDOM % 1000) * 4)); }
LIMITS=""  # shell commands run before a task starts (ulimit ...), per call of task

task() {  # task PORT RANK [ENV=VAL...] -- ARGS: one task of a 3-node, 6-task step, in the background
  local p=$1 r=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  (eval "$LIMITS"
   exec env SLURM_JOB_ID=78 SLURM_STEP_ID=0 SLURM_STEP_NODELIST='n[1-3]' SLURM_STEP_NUM_NODES=3 SLURM_STEP_NUM_TASKS=6 \
    SLURM_STEP_TASKS_PER_NODE='2(x3)' SLURM_PROCID=$r SLURM_NODEID=$((r / 2)) SLURM_LOCALID=$((r % 2)) \
    PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$p NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_SECRET=$SECRET \
    GANGWAY_DRAIN_DIR= "${envs[@]}" "$GW" "$@") >"$W/out.$r" 2>"$W/err.$r" &
  pids[$r]=$!
}
wait_all() { for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs[$r]=$?; done; }
crashed() { for rc in "${rcs[@]}"; do [ "$rc" -ge 128 ] && return 0; done; return 1; }
# The TCP ports process $1 listens on, but $2.
listening() { ss -Hltnp 2>/dev/null | awk -v p="pid=$1," -v skip=":$2\$" 'index($0, p) && $4 !~ skip { n = split($4, a, ":"); print a[n] }'; }
wait_listening() {  # wait_listening PID SKIP: the first port, within 10 s
  local i
  for i in $(seq 200); do
    local ports; ports=$(listening "$1" "$2")
    [ -n "$ports" ] && { echo "$ports" | head -1; return; }
    sleep 0.05
  done
}

# The stranger: holds up to N connections to 127.0.0.1:PORT open at once for S seconds, opening a
# new one whenever one is closed; each first sends PAYLOAD ("idle": nothing, "big": a 1 MiB frame
# prefix and almost 1 MiB, "garbage": a few bytes, "nonce": 16 bytes, as a client's nonce, then
# nothing: past TCP_DEFER_ACCEPT, which keeps "idle" ones in the kernel for 3 s).
flood() {  # flood PORT N S PAYLOAD
  python3 - "$@" <<'PY' &
import selectors, socket, sys, time
port, n, secs, kind = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
payload = {"idle": b"", "garbage": b"\xff\xff\xff\xffjunk", "nonce": b"n" * 16,
           "big": (1 << 20).to_bytes(4, "big") + b"x" * ((1 << 20) - 1)}[kind]
sel, end, opened = selectors.DefaultSelector(), time.time() + secs, 0
def open_one():
    global opened
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    except OSError: s.close(); return
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [payload])
    opened += 1
while time.time() < end:
    while len(sel.get_map()) < n: open_one()
    for key, ev in sel.select(0.05):
        s, rest = key.fileobj, key.data
        try:
            if ev & selectors.EVENT_READ and s.recv(65536) == b"": raise OSError("closed")
            if ev & selectors.EVENT_WRITE:
                if rest[0]: rest[0] = rest[0][s.send(rest[0]):]
                if not rest[0]: sel.modify(s, selectors.EVENT_READ, rest)
        except OSError:
            sel.unregister(s); s.close()
print(opened, file=sys.stderr)
PY
}

# 1. item 5: before authentication each connection may buffer only a hello's worth, and only so
#    many may wait: 400 connections sending a 1 MiB frame against a coordinator limited to about
#    800 MiB of address space (they asked for 400 MiB; before, node 0 ended with std::bad_alloc).
P=$(port); pids=(); rcs=()
#    Check-in and cards only (--check=none): the flood lands on node n1's coordinator, so on a
#    loaded 2-core machine n1 measured really slower in a bandwidth round (a true "slow", not the
#    subject here: what is tested is that nothing unauthenticated costs memory past its bound).
LIMITS="ulimit -v 800000" task "$P" 0 MALLOC_ARENA_MAX=2 -- check --check=none --report="$W/mem.json"
flood $((P + 1)) 400 6 big; fl=$!
sleep 1.5
for r in 1 2 3 4 5; do task "$P" $r -- check --check=none; done
wait_all; kill $fl 2>/dev/null; wait $fl 2>/dev/null
if [ "${rcs[*]}" = "0 0 0 0 0 0" ] && grep -q '"verdict": "ok"' "$W/mem.json" \
   && grep -q 'before authentication' "$W/err.0"; then
  pass "400 connections of 1 MiB frames before authentication: verdict ok, each refused at its length"
else fail "memory flood: rcs ${rcs[*]}; $(grep -v '^gangway: rejected' "$W/err.0" | head -8)"; fi

# 2. item 5: any exception ends gangway with one line and exit 5, not a crash: no thread can start
#    (a 4 GB thread stack in 3 GB of address space).
(ulimit -s 4000000; ulimit -v 3000000
 exec env SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_STEP_NODELIST=n1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=1 \
  SLURM_STEP_TASKS_PER_NODE=1 SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$(port) \
  NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_SECRET=$SECRET GANGWAY_DRAIN_DIR= "$GW" check) 2>"$W/thr.err"; rc=$?
if [ $rc = 5 ] && [ "$(wc -l <"$W/thr.err")" = 1 ] && grep -q '^gangway check: ' "$W/thr.err"; then
  pass "no thread can start: one line, exit 5 ($(cat "$W/thr.err"))"
else fail "no thread: rc $rc: $(head -c 400 "$W/thr.err")"; fi

# 3. item 6: the data port no longer starts a thread per connection without bound, and a thread
#    that cannot start costs that connection only: node n2's tasks can start few threads (64 MiB
#    stacks in 1.2 GB), 60 connections on its data port that send a nonce and stall (before, it
#    ended: std::system_error).
P=$(port); pids=(); rcs=()
for r in 2 3; do LIMITS="ulimit -s 65536; ulimit -v 1200000" task "$P" $r MALLOC_ARENA_MAX=1 -- check; done
dp=$(wait_listening "${pids[2]}" $((P + 1)))
[ -n "$dp" ] && flood "$dp" 60 8 nonce; fl=$!
sleep 1.5
for r in 0 1 4 5; do task "$P" $r -- check --report="$W/thr.json"; done
wait_all; kill $fl 2>/dev/null; wait $fl 2>/dev/null
if [ -n "$dp" ] && ! crashed && grep -q "rejected a connection from 127.0.0.1:[0-9]* to the data port.*thread" "$W/err.2"; then
  pass "threads run out on n2's data port: told, nothing crashed (rcs ${rcs[*]})"
else fail "thread exhaustion: port '$dp', rcs ${rcs[*]}; $(head -c 600 "$W/err.2")"; fi

# 4. item 7: a low descriptor limit (64) and a stranger holding 600 connections to node 0's
#    rendezvous, 600 to its data port and 600 to node n2's data port, reconnecting as each is
#    dropped: the step stays ok (before, n2's speaker had no descriptor left to check in with, and
#    then tasks' connections waited behind the stranger's until their deadline: the check named
#    a node missing or unreachable in 4 of 4 runs; with TCP_DEFER_ACCEPT, in 0 of 8).
P=$(port); pids=(); rcs=()
for r in 0 2; do LIMITS="ulimit -n 64" task "$P" $r -- check --report="$W/fd.json"; done
dp0=$(wait_listening "${pids[0]}" $((P + 1))); dp2=$(wait_listening "${pids[2]}" $((P + 1)))
flood $((P + 1)) 600 15 idle; f1=$!
flood "${dp0:-1}" 600 15 idle; f2=$!
flood "${dp2:-1}" 600 15 idle; f3=$!
sleep 1.5
for r in 1 3 4 5; do LIMITS="ulimit -n 64" task "$P" $r -- check; done
wait_all; kill $f1 $f2 $f3 2>/dev/null; wait $f1 $f2 $f3 2>/dev/null
# What item 7 asks: no healthy node named. A connection to a flooded data port can still fail
# twice (reset while the stranger's reconnects hold every descriptor): that is a link finding
# and a degraded verdict, SECURITY.md's known limit (seen in 1 of 8 runs on 2026-11-25), never a node.
named=$(python3 -c 'import json, sys; print(" ".join(n["name"] + "=" + n["status"] for n in json.load(open(sys.argv[1]))["nodes"] if n["status"] != "ok"))' "$W/fd.json" 2>&1)
if [ "${rcs[*]}" = "0 0 0 0 0 0" ] && grep -q '"verdict": "ok"' "$W/fd.json"; then
  pass "64 descriptors and 1800 idle connections held against nodes n1 and n2: verdict ok"
elif [ "${rcs[*]}" = "3 3 3 3 3 3" ] && grep -q '"verdict": "degraded"' "$W/fd.json" && [ -z "$named" ]; then
  pass "64 descriptors and 1800 idle connections held against nodes n1 and n2: no node named (a link to a flooded port failed twice: a finding)"
else fail "descriptor flood: rcs ${rcs[*]}, named: ${named:-none}; $(grep -v '^gangway: rejected' "$W/err.0" | head -8; grep -v '^gangway: rejected' "$W/err.2" | head -4)"; fi

# 5. item 14: ports. With SLURM's reserved ports the launcher binds only those: one reserved port
#    (PRIMARY_PORT's) leaves none for the rendezvous: one line naming PRIMARY_PORT+1 and
#    MpiParams=ports, exit 5.
one() {  # one PORT [VAR=VALUE...]: a 1-node, 1-task check on loopback
  local p=$1; shift
  env SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_STEP_NODELIST=n1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=1 \
    SLURM_STEP_TASKS_PER_NODE=1 SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$p \
    NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_SECRET=$SECRET GANGWAY_DRAIN_DIR= "$@" "$GW" check --check=none
}
P=$(port)
one "$P" SLURM_STEP_RESV_PORTS=$P 2>"$W/resv1.err"; rc=$?
if [ $rc = 5 ] && grep -q "PRIMARY_PORT+1 ($((P + 1))).*SLURM_STEP_RESV_PORTS=$P.*--resv-ports" "$W/resv1.err"; then
  pass "one reserved port: exit 5, naming port $((P + 1)) and how to reserve more"
else fail "one reserved port: rc $rc: $(cat "$W/resv1.err")"; fi
# Another user holding PRIMARY_PORT+1 without a reservation: one line naming it and MpiParams=ports.
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("",int(sys.argv[1]))); s.listen(); time.sleep(20)' $((P + 1)) & st=$!
# Until it listens (a loaded machine starts python slowly: a fixed 0.3 s once missed it).
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$((P + 1))") 2>/dev/null && break; sleep 0.1; done
one "$P" 2>"$W/taken.err"; rc=$?
kill $st 2>/dev/null; wait $st 2>/dev/null
if [ $rc = 5 ] && grep -q "port $((P + 1)) (PRIMARY_PORT+1).*MpiParams=ports=" "$W/taken.err"; then
  pass "PRIMARY_PORT+1 taken: exit 5, naming the port and MpiParams=ports"
else fail "port taken: rc $rc: $(cat "$W/taken.err")"; fi
# A healthy step with two reserved ports, and one without: ok, and PRIMARY_PORT+2 (beyond the
# reservation, or predictable) is never listened on: the data port is a free one, in the card.
for resv in "$P-$((P + 1))" ""; do
  P=$(port); [ -n "$resv" ] && resv="$P-$((P + 1))"
  pids=(); rcs=()
  for r in 0 1 2 3 4 5; do task "$P" $r ${resv:+SLURM_STEP_RESV_PORTS=$resv} -- check --report="$W/resv.json"; done
  : >"$W/p2"
  while kill -0 "${pids[0]}" 2>/dev/null; do ss -Hltn "( sport = :$((P + 2)) )" >>"$W/p2"; sleep 0.05; done
  wait_all
  if [ "${rcs[*]}" = "0 0 0 0 0 0" ] && [ ! -s "$W/p2" ]; then
    pass "reserved ports '${resv:-none}': verdict ok, nothing listens on PRIMARY_PORT+2"
  else fail "reserved '${resv:-none}': rcs ${rcs[*]}; on $((P + 2)): $(head -2 "$W/p2"); $(head -20 "$W/err.0")"; fi  # the whole table: its stages and findings say why
done

finish
