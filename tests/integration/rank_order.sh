#!/bin/bash
# gangway-releases: 22.05
# rank_order=topology on a test fabric (issue 26): the 4-node cluster wired as
# two leaf switches whose traffic to each other shares one shaped uplink per
# leaf, an oversubscribed spine. How: in the root namespace every node's data
# veth (d-NODE, a port of the data bridge) gets an ingress filter that sends
# what goes to the other leaf's data addresses through one ifb device per
# leaf (gwupA, gwupB), each a token bucket at RANK_ORDER_MBIT (default 100)
# Mbit/s; traffic inside a leaf is not shaped. So every flow that crosses
# leaves shares its leaf's uplink with the others, as on a spine.
# On it a real ring all-reduce (torch.distributed, gloo, Debian's
# python3-torch, one task per node) runs with SLURM's order and with
# rank_order=topology, side by side, twice each:
#  1. names interleaved across the leaves (leafA: node08, node10; leafB:
#     node09, node11): SLURM's order crosses the spine on all 4 ring hops,
#     topology's on 2: topology must be faster by a factor of at least 1.25
#     (about 2 expected);
#  2. names following the leaves (leafA: node08, node09): the orders are the
#     same: topology must be no slower than 1.3 x SLURM's.
# The check with rank_order=topology: nodes agreeing, and nodes whose topology
# files differ (topology_file=%n), which keep SLURM's order with one line.
# Then the fallbacks: a step node missing from the file, and a file that does
# not parse, keep SLURM's order with one line.
. "$(dirname "$0")/lib.sh"
$TORCH_PY -c 'import torch' 2>/dev/null || skip_or_fail "Debian's python3-torch is not installed (apt-get install python3-torch)"
rate=${RANK_ORDER_MBIT:-100} mb=${RANK_ORDER_MB:-4} iters=${RANK_ORDER_ITERS:-3}
script=$top_srcdir/tests/integration/ring_allreduce.py
nodes=(node08 node09 node10 node11)

unwire() {
  local n
  for n in "${nodes[@]}"; do tc qdisc del dev "d-$n" ingress 2>/dev/null; done
  ip link del gwupA 2>/dev/null; ip link del gwupB 2>/dev/null
  return 0
}
# wire "A NODES" "B NODES": each leaf's traffic to the other leaf through its own shaped uplink.
wire() {
  unwire
  local leaf from to n m
  for leaf in A B; do
    ip link add "gwup$leaf" type ifb || skip_or_fail "this kernel has no ifb device (CONFIG_IFB)"
    ip link set "gwup$leaf" up
    tc qdisc add dev "gwup$leaf" root tbf rate "${rate}mbit" burst 64k latency 100ms
  done
  for leaf in A B; do
    if [ $leaf = A ]; then from=$1 to=$2; else from=$2 to=$1; fi
    for n in $from; do
      tc qdisc add dev "d-$n" handle ffff: ingress
      for m in $to; do
        tc filter add dev "d-$n" parent ffff: protocol ip prio 1 u32 match ip dst "$(data_addr "$m")/32" \
          action mirred egress redirect dev "gwup$leaf" || skip_or_fail "tc's mirred action is missing (CONFIG_NET_ACT_MIRRED)"
      done
    done
  done
}
trap 'unwire; rm -rf "$CLUSTER_LOCK"' EXIT

# ring NAME ORDER: one all-reduce step; prints its seconds (empty on failure).
ring() {
  timeout 120 srun -N4 -n4 --gangway=task --gangway-rank-order="$2" $TORCH_PY "$script" "$mb" "$iters" \
    >"$WORK/$1.out" 2>"$WORK/$1.err" || { echo "ring $1 failed:" >&2; head -20 "$WORK/$1.out" "$WORK/$1.err" >&2; }
  sed -n 's/^RING_SECONDS //p' "$WORK/$1.out" | head -1
}
best() { printf '%s\n' "$@" | grep . | sort -n | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
node_of_rank() { grep -o "RING OK rank=$2 node=[a-z0-9]*" "$WORK/$1.out" | head -1 | sed 's/.*node=//'; }

# 1. Interleaved names. leafB is the spine's first child, so the topology order
# starts there: node09 becomes rank 0 and the primary.
cat >"$WORK/interleaved.conf" <<CONF
SwitchName=spine Switches=leafB,leafA
SwitchName=leafA Nodes=node[08,10]
SwitchName=leafB Nodes=node[09,11]
CONF
plugstack $SITE_ARGS topology_file="$WORK/interleaved.conf" launcher="$INSTALL/gangway"
order=$(GANGWAY_BIN=$GANGWAY_BIN "$GANGWAY_BIN" topo --ranks --nodes 'node[08-11]' --topology-file "$WORK/interleaved.conf")
echo "$order"
grep -q "SLURM's order 4 of 4, rank_order=topology 2 of 4" <<<"$order" \
  && pass "gangway topo --ranks: 4 of 4 ring hops cross a leaf in SLURM's order, 2 in topology's" \
  || fail "gangway topo --ranks did not count the crossings"
wire "node08 node10" "node09 node11"
s=() t=()
for round in 1 2; do
  s+=("$(ring "inter-slurm-$round" slurm)"); t+=("$(ring "inter-topo-$round" topology)")
done
bs=$(best "${s[@]}"); bt=$(best "${t[@]}")
echo "interleaved names, ${rate} Mbit/s uplinks, ${mb} MB x $iters: slurm ${s[*]} s, topology ${t[*]} s"
if [ -n "$bs" ] && [ -n "$bt" ]; then
  r=$(ratio "$bs" "$bt")
  awk -v r="$r" 'BEGIN {exit !(r >= 1.25)}' \
    && pass "interleaved names: rank_order=topology's all-reduce ${bt} s, SLURM's order ${bs} s: ${r}x faster" \
    || fail "interleaved names: rank_order=topology ${bt} s is not 1.25x faster than SLURM's order ${bs} s (${r}x)"
else
  fail "interleaved names: an all-reduce failed (slurm: ${s[*]}; topology: ${t[*]})"
fi
# The order itself: ranks 0-3 on node09, node11, node08, node10; the primary node09's data address.
got=$(for r in 0 1 2 3; do node_of_rank inter-topo-1 $r; done | tr '\n' ' ')
[ "$got" = "node09 node11 node08 node10 " ] && pass "topology order: ranks 0-3 on $got" || fail "topology order: ranks 0-3 on '$got'"
grep -q "master=$(data_addr node09) " "$WORK/inter-topo-1.out" && ! grep -q "master=$(data_addr node08) " "$WORK/inter-topo-1.out" \
  && pass "MASTER_ADDR is the new rank 0's (node09)" || fail "MASTER_ADDR is not node09's: $(grep -o 'master=[^ ]*' "$WORK/inter-topo-1.out" | sort -u)"
[ "$(grep -o 'order=[^ ]*' "$WORK/inter-topo-1.out" | sort -u | wc -l)" = 1 ] && grep -q 'order=topology:' "$WORK/inter-topo-1.out" \
  && pass "every node computed the same order (GANGWAY_NODE_ORDER)" || fail "GANGWAY_NODE_ORDER differs or is missing"
grep -q 'rank=1 node=node11 slurm_procid=3' "$WORK/inter-topo-1.out" \
  && pass "SLURM_PROCID stays SLURM's (rank 1 is SLURM_PROCID 3)" || fail "SLURM_PROCID: $(grep -o 'rank=1 [^m]*' "$WORK/inter-topo-1.out")"
got=$(for r in 0 1 2 3; do node_of_rank inter-slurm-1 $r; done | tr '\n' ' ')
[ "$got" = "node08 node09 node10 node11 " ] && pass "SLURM's order: ranks 0-3 on $got" || fail "SLURM's order: '$got'"

# The check meets at SLURM's node 0 (node08) whatever order a node computed;
# node 0 compares the orders, every node agrees, and the ring follows the order.
unwire
t0=$(date +%s.%N)
if timeout 120 srun -N4 -n4 --gangway-check --gangway-rank-order=topology true >"$WORK/check.out" 2>"$WORK/check.err"; then
  pass "--gangway-check with rank_order=topology passes (the check follows the order)"
else
  fail "--gangway-check with rank_order=topology failed: $(head -5 "$WORK/check.err")"
fi
agree_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
grep -q 'every node computed the same order; the bandwidth ring follows it' "$WORK/check.err" \
  && ! grep -q 'keeping SLURM' "$WORK/check.err" \
  && pass "the check's report says every node computed the same order" || fail "agreeing check: $(cat "$WORK/check.err")"
# ring_side FILE: "topology" when the table's figures show the ring node09 ->
# node11 -> node08 -> node10 (quick: one round, so a node's rx is its ring
# predecessor's tx), else "slurm".
ring_side() {
  awk '{sub(/^[0-9]+: /, "")} $1 ~ /^node[0-9]+$/ {tx[$1] = $4; rx[$1] = $5}
       END {print (tx["node08"] == rx["node10"] && tx["node11"] == rx["node08"]) ? "topology" : "slurm"}' "$1"
}
[ "$(ring_side "$WORK/check.err")" = topology ] && pass "the check's bandwidth ring follows the topology order" \
  || fail "the check's ring does not follow the topology order: $(grep node "$WORK/check.err")"

# Nodes whose topology files differ (topology_file= with %n: node10 reads
# another file): the check still runs, every task gets SLURM's order before
# its command starts, and node 0's first task says so in one line.
for n in node08 node09 node11; do cp "$WORK/interleaved.conf" "$WORK/agree-$n.conf"; done
printf 'SwitchName=spine Switches=leafA,leafB\nSwitchName=leafA Nodes=node[08-09]\nSwitchName=leafB Nodes=node[10-11]\n' \
  >"$WORK/agree-node10.conf"
plugstack $SITE_ARGS topology_file="$WORK/agree-%n.conf" launcher="$INSTALL/gangway"
t0=$(date +%s.%N)
timeout 120 srun -N4 -n4 --label --gangway=task --gangway-check --gangway-rank-order=topology \
  sh -c 'echo "$NODE_RANK $RANK $MASTER_ADDR $PRIMARY_ADDR $GANGWAY_NODE_ORDER"' >"$WORK/differ.out" 2>"$WORK/differ.err"
rc=$?
differ_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
a0=$(data_addr node08)
got=$(sort "$WORK/differ.out" | awk '{print $1, $2, $3, $4, $5, substr($6, 1, 6)}' | tr '\n' ' ')
want="0: 0 0 $a0 $a0 slurm: 1: 1 1 $a0 $a0 slurm: 2: 2 2 $a0 $a0 slurm: 3: 3 3 $a0 $a0 slurm: "
[ $rc = 0 ] && [ "$got" = "$want" ] && [ "$(awk '{print $6}' "$WORK/differ.out" | sort -u | wc -l)" = 1 ] \
  && pass "topology files that differ: the step runs, every task in SLURM's order (exit $rc)" \
  || fail "topology files that differ: exit $rc, tasks '$got' (want '$want'), stderr: $(head -20 "$WORK/differ.err")"
line="rank_order=topology: the nodes' topology files differ (node10 differs from node08); keeping SLURM's rank order"
[ "$(grep -cF "$line" "$WORK/differ.err")" = 1 ] && grep -q "note: rank_order=topology: the nodes' topology files differ" "$WORK/differ.err" \
  && pass "one line says the files differ: $(grep -F "$line" "$WORK/differ.err" | head -1)" \
  || fail "the line that the files differ: $(cat "$WORK/differ.err")"
[ "$(ring_side "$WORK/differ.err")" = slurm ] && pass "with the files differing the check's ring is SLURM's" \
  || fail "with the files differing the check's ring is not SLURM's: $(grep node "$WORK/differ.err")"
# No wait for the check's deadline (60 s): as long as the agreeing check, give or take a few seconds.
! grep -qi 'deadline' "$WORK/differ.err" && awk -v d="$differ_s" -v a="$agree_s" 'BEGIN {exit !(d < a + 15)}' \
  && pass "no deadline wait: the check took ${differ_s} s, an agreeing one ${agree_s} s" \
  || fail "the check with differing files took ${differ_s} s (an agreeing one ${agree_s} s): $(grep -i deadline "$WORK/differ.err")"
plugstack $SITE_ARGS topology_file="$WORK/interleaved.conf" launcher="$INSTALL/gangway"

out=$(srun -N1 -w node10 --gangway-rank-order=topology gangway env --explain 2>&1)
grep -q '^NODE_RANK follows the leaf switches' <<<"$out" && grep -qE '^GANGWAY_NODE_ORDER +gangway +topology:' <<<"$out" \
  && pass "gangway env --explain says NODE_RANK follows the leaf switches" || fail "gangway env --explain: $out"

# 2. Names following the leaves: the same order both ways, and no slower.
cat >"$WORK/follow.conf" <<CONF
SwitchName=spine Switches=leafA,leafB
SwitchName=leafA Nodes=node[08-09]
SwitchName=leafB Nodes=node[10-11]
CONF
plugstack $SITE_ARGS topology_file="$WORK/follow.conf"
wire "node08 node09" "node10 node11"
s=() t=()
for round in 1 2; do
  t+=("$(ring "follow-topo-$round" topology)"); s+=("$(ring "follow-slurm-$round" slurm)")
done
bs=$(best "${s[@]}"); bt=$(best "${t[@]}")
echo "names following the leaves: slurm ${s[*]} s, topology ${t[*]} s"
if [ -n "$bs" ] && [ -n "$bt" ]; then
  r=$(ratio "$bt" "$bs")
  awk -v r="$r" 'BEGIN {exit !(r <= 1.3)}' \
    && pass "names following the leaves: rank_order=topology ${bt} s, SLURM's order ${bs} s (${r}x): no slower" \
    || fail "names following the leaves: rank_order=topology ${bt} s is slower than SLURM's ${bs} s (${r}x)"
else
  fail "names following the leaves: an all-reduce failed (slurm: ${s[*]}; topology: ${t[*]})"
fi
unwire

# 3. Fallbacks: one line, SLURM's order, the step runs.
printf 'SwitchName=leafA Nodes=node[08-10]\n' >"$WORK/missing.conf"
plugstack $SITE_ARGS topology_file="$WORK/missing.conf" rank_order=topology
out=$(srun -N4 -n4 --label printenv NODE_RANK 2>"$WORK/missing.err" | sort | tr '\n' ' ')
[ "$out" = "0: 0 1: 1 2: 2 3: 3 " ] && [ "$(grep -c 'rank_order=topology' "$WORK/missing.err")" = 1 ] \
  && grep -q 'node node11 of the step is not in' "$WORK/missing.err" \
  && pass "a node missing from the file: SLURM's order, one line: $(grep rank_order "$WORK/missing.err")" \
  || fail "missing node: NODE_RANK '$out', stderr: $(cat "$WORK/missing.err")"
printf 'SwitchName=leafA Nodes=node[08-11] Colour=red\n' >"$WORK/bad.conf"
plugstack $SITE_ARGS topology_file="$WORK/bad.conf"
out=$(GANGWAY_RANK_ORDER=topology srun -N4 -n4 --label printenv NODE_RANK 2>"$WORK/bad.err" | sort | tr '\n' ' ')
[ "$out" = "0: 0 1: 1 2: 2 3: 3 " ] && [ "$(grep -c 'rank_order=topology' "$WORK/bad.err")" = 1 ] \
  && grep -q 'line 1: unknown key' "$WORK/bad.err" \
  && pass "a file that does not parse: SLURM's order, one line: $(grep rank_order "$WORK/bad.err")" \
  || fail "bad file: NODE_RANK '$out', stderr: $(cat "$WORK/bad.err")"
plugstack $SITE_ARGS
finish
