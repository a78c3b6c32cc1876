#!/bin/bash
# Preflight speed and accuracy on the namespace cluster (run as root, after make):
#  1. the quick check's time at 4, 8 and 16 nodes (the check's own seconds from
#     the report, and srun's wall time against a plain `srun true`), 3 runs each;
#  2. its bandwidth figure against iperf3 on the same link in the same run
#     (node08 <-> node09, both directions at once: gangway's 2-node ring and
#     iperf3 --bidir), unshaped and with both directions shaped by tc;
#  3. the TCP rendezvous of 4096 ranks on loopback (bench/rendezvous_bench).
# The cluster is put back to its default 4 nodes at the end.
TEST_NAME=preflight_bench
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$top_srcdir/tests/integration/lib.sh"
plugstack $SITE_ARGS
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
cleanup() {
  tc qdisc del dev d-node09 root 2>/dev/null; nsenter --net=/run/netns/node09 tc qdisc del dev eth1 root 2>/dev/null
  [ -n "${iperf_pid:-}" ] && kill "$iperf_pid" 2>/dev/null
  "$top_srcdir/tests/cluster/cluster.sh" up >/dev/null
  rm -rf "$CLUSTER_LOCK"
}
trap cleanup EXIT
js() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
calc() { awk "BEGIN { print ($*) }"; }  # float arithmetic and comparisons (1/0) without bc
now() { date +%s.%N; }

echo "## quick check time by node count ($(nproc) cores, $(uname -r))"
for n in 4 8 16; do
  "$top_srcdir/tests/cluster/cluster.sh" up -n $n >/dev/null || { echo "cluster of $n did not come up"; exit 1; }
  plugstack $SITE_ARGS  # up writes a fresh, empty plugstack.conf
  for i in 1 2 3; do
    t0=$(now); srun -N$n -n$n true; t1=$(now)
    srun -N$n -n$n gangway check --report="$WORK/n$n.$i.json" 2>"$WORK/n$n.$i.err"; rc=$?; t2=$(now)
    echo "nodes=$n run=$i rc=$rc check_s=$(js "$WORK/n$n.$i.json" '"%.3f" % r["seconds"]') srun_true_s=$(calc "$t1 - $t0") srun_check_s=$(calc "$t2 - $t1") $(js "$WORK/n$n.$i.json" '" ".join("%s=%.3f" % (s["name"], s["seconds"]) for s in r["stages"] if s["name"] in ("rendezvous","reach","bandwidth"))')"
  done
done
"$top_srcdir/tests/cluster/cluster.sh" up >/dev/null
plugstack $SITE_ARGS

echo "## bandwidth figure against iperf3, node08 <-> node09"
nsenter --net=/run/netns/node09 iperf3 -s -B 198.19.0.12 -p 5301 >/dev/null 2>&1 &
iperf_pid=$!
sleep 0.5
measure() {  # LABEL
  for i in 1 2 3; do
    srun -N2 -n2 -w node08,node09 gangway check --report="$WORK/pair.json" 2>/dev/null
    g=$(js "$WORK/pair.json" '" ".join("%.3f" % (l["bps"]*8/1e9) for l in r["links"] if l["stage"]=="bandwidth")')
    nsenter --net=/run/netns/node08 iperf3 -c 198.19.0.12 -p 5301 --bidir -t 3 -J >"$WORK/iperf.json" 2>/dev/null
    ip=$(js "$WORK/iperf.json" '"%.3f %.3f" % (r["end"]["sum_received"]["bits_per_second"]/1e9, r["end"]["sum_received_bidir_reverse"]["bits_per_second"]/1e9)')
    echo "$1 run=$i gangway_gbps(08->09 09->08)=$g iperf3_gbps(08->09 09->08)=$ip ratio=$(echo "$g $ip" | awk '{printf "%.3f %.3f", $1/$3, $2/$4}')"
  done
}
measure unshaped
tc qdisc add dev d-node09 root tbf rate 2000mbit burst 2500000 latency 20ms
nsenter --net=/run/netns/node09 tc qdisc add dev eth1 root tbf rate 2000mbit burst 2500000 latency 20ms
measure "shaped_2000mbit"

echo "## TCP rendezvous, loopback"
make -C "$top_builddir" bench/rendezvous_bench >/dev/null && "$top_builddir/bench/rendezvous_bench" 4096 3
