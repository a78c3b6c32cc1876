#!/bin/bash
# No false accusations at scale (issue 14), on the namespace cluster grown to
# N nodes (all on this machine: every node shares its cores) with a CPU hog
# on each core (`nice -n0 sh -c 'while :; do :; done'`, one per core):
#  1. RUNS healthy quick checks (default 20): a false accusation is any
#     verdict but ok, or any node named;
#  2. FAULT_RUNS times each (default 3): one node's data link shaped to
#     100 Mbit/s both ways, one node's data link down, one node's task killed
#     during a long bandwidth round: the faulty node must be named, alone.
# Usage (root, after make): bench/preflight_scale.sh [N...]   (default: 64 128)
# Environment: RUNS, FAULT_RUNS, HOGS (default: the core count; 0 for none).
# Limits raised here: open files to the hard limit (srun and slurmctld hold
# connections per node; each node's launcher a few per peer).
# The cluster is put back to its default 4 nodes at the end.
TEST_NAME=preflight_scale
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
: "${top_builddir:=$top_srcdir/_build}"
. "$top_srcdir/tests/integration/lib.sh"
ulimit -n "$(ulimit -Hn)"  # the hard limit: 20000 here
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
RUNS=${RUNS:-20} FAULT_RUNS=${FAULT_RUNS:-3} HOGS=${HOGS:-$(nproc)}
hogs=()
cleanup() {
  [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
  [ -n "${BAD:-}" ] && unshape_link "$BAD"
  "$top_srcdir/tests/cluster/cluster.sh" up >/dev/null
  rm -rf "$CLUSTER_LOCK"
}
trap cleanup EXIT
js() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
now() { date +%s.%N; }
calc() { awk "BEGIN { print ($*) }"; }
named() { js "$1" '",".join(n["name"] + ":" + n["status"] for n in r["nodes"] if n["status"] != "ok") or "-"'; }

# check LABEL FILE [ARGS...]: one quick check across the whole cluster; prints one line.
check() {
  local label=$1 f=$2; shift 2
  rm -f "$f"
  local t0 t1 rc
  t0=$(now)
  timeout 120 srun -N"$N" -n"$N" gangway check --report="$f" "$@" >/dev/null 2>"$f.err"; rc=$?
  t1=$(now)
  echo "$label nodes=$N rc=$rc verdict=$(js "$f" 'r["verdict"]' || echo none) named=$(named "$f") check_s=$(js "$f" '"%.2f" % r["seconds"]') srun_s=$(calc "$t1 - $t0") notes=$(js "$f" 'len(r.get("notes", []))') $(js "$f" '" ".join("%s=%.2f" % (s["name"], s["seconds"]) for s in r["stages"] if s["name"] in ("reach","bandwidth"))')"
}

for N in ${@:-64 128}; do
  "$top_srcdir/tests/cluster/cluster.sh" up -n "$N" >/dev/null || { echo "cluster of $N did not come up"; exit 1; }
  plugstack $SITE_ARGS  # up writes a fresh, empty plugstack.conf
  mapfile -t NODES < <("$top_srcdir/tests/cluster/cluster.sh" nodes)
  BAD=${NODES[$((N / 2))]}
  for ((h = 0; h < HOGS; h++)); do sh -c 'while :; do :; done' & hogs+=($!); done
  echo "## $N nodes, $HOGS CPU hog(s), $(nproc) cores, $(uname -r)"
  srun -N"$N" -n"$N" true  # warm: the first step after up pays for the nodes' first connections
  accused=0 not_ok=0
  for ((i = 1; i <= RUNS; i++)); do
    line=$(check "healthy run=$i" "$WORK/h$N.$i.json")
    echo "$line"
    [[ $line == *" named=- "* ]] || accused=$((accused + 1))           # a false accusation
    [[ $line == *" rc=0 verdict=ok "* ]] || not_ok=$((not_ok + 1))     # e.g. cut short by the deadline
  done
  echo "SUMMARY nodes=$N healthy_runs=$RUNS runs_naming_a_node=$accused runs_not_ok=$not_ok"
  alone=0 total=0
  for ((i = 1; i <= FAULT_RUNS; i++)); do
    shape_link "$BAD" 100
    line=$(check "slow($BAD,100mbit) run=$i" "$WORK/s$N.$i.json"); echo "$line"
    unshape_link "$BAD"
    total=$((total + 1)); [[ $line == *" named=$BAD:slow "* ]] && alone=$((alone + 1))

    ip link set "d-$BAD" down
    line=$(check "dead_link($BAD) run=$i" "$WORK/d$N.$i.json"); echo "$line"
    unshape_link "$BAD"
    total=$((total + 1)); [[ $line == *" named=$BAD:unreachable "* ]] && alone=$((alone + 1))

    f=$WORK/k$N.$i.json; rm -f "$f"
    t0=$(now)
    timeout 150 srun -N"$N" -n"$N" gangway check --round-ms=8000 --report="$f" >/dev/null 2>"$f.err" &
    sp=$!
    # The node's task: the gangway process in the node's network namespace.
    # (Found by command line and SLURMD_NODENAME, as tests/integration/preflight.sh
    # does at 4 nodes, the processes found at 64 and 128 were gone within 2 s
    # while the check went on, and no kill landed.) Up to 30 s: a 128-node
    # step under load takes seconds to start.
    victim=""
    for _ in $(seq 300); do
      for p in $(ip netns pids "$BAD" 2>/dev/null); do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$INSTALL/gangway" ] && { victim=$p; break; }
      done
      [ -n "$victim" ] && break
      sleep 0.1
    done
    # Then into the check (the join and the reach stage take 0.1-1 s at these
    # sizes), killed 2 s after it appeared: a task killed before it checked
    # in is named missing, after it lost; either is the node named alone.
    sleep 2
    killed=no
    [ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null && killed=yes
    wait "$sp"; rc=$?
    line="killed($BAD) run=$i nodes=$N victim=${victim:-none} killed=$killed rc=$rc verdict=$(js "$f" 'r["verdict"]' || echo none) named=$(named "$f") check_s=$(js "$f" '"%.2f" % r["seconds"]') srun_s=$(calc "$(now) - $t0")"
    echo "$line"
    total=$((total + 1)); [[ $line == *" named=$BAD:lost "* || $line == *" named=$BAD:missing "* ]] && alone=$((alone + 1))
  done
  echo "SUMMARY nodes=$N fault_runs=$total named_alone=$alone"
  kill "${hogs[@]}" 2>/dev/null; hogs=()
done
