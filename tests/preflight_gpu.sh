#!/bin/bash
# The GPU stages of `gangway check` end to end without GPUs: the real gangway
# binary loads test doubles of libcuda.so.1 and libnccl.so.2 (tests/fakes:
# host memory as device memory, and an all-reduce that really travels over
# TCP between the processes, so the unique id must reach every node). Four
# "nodes" of one task each on loopback, with the SLURM variables of a step,
# and a test double of libibverbs.so.1 (RDMA writes over TCP) for one RoCE
# port per node (the sysfs fixture's mlx5_2). The same over srun on the real
# cluster, with the RDMA faults: tests/integration/preflight_gpu.sh.
# Checks: cuda (with its computation check), nccl and nccl-job pass and every rank of the cross-node
# communicator joined with the same unique id; a node whose network path
# hangs NCCL (its node-alone all-reduce fine) is named by the two-node pairs;
# a node whose GPUs are all slow is named by the job-wide comparison; a node
# whose NCCL fails at init is faulty and left out of the cross-node run; a
# node whose network path makes NCCL slow is named by the pairs.
set -u
. "$(dirname "$0")/lib/script_env.sh"
test_workdir preflight-gpu
FAKES=$W/fakes
"$top_srcdir/tests/fakes/build.sh" "$FAKES" --selftest || { echo "FAIL: the GPU test doubles do not build"; exit 1; }
SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Below Linux's ephemeral range (32768-60999), where any process's outgoing
# connection may hold the port, and apart from preflight_local.sh's ports:
# make check runs the two side by side.
port() { echo $((24000 + (RANDOM % 1000) * 4)); }
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# sysroot DIR WIDTH1: the RoCE fixture plus the two fake GPUs' PCI devices
# (0000:10:00.0 at Gen5 x16, 0000:11:00.0 at Gen5 xWIDTH1), for GANGWAY_SYSFS_ROOT.
sysroot() {
  cp -r "$top_srcdir/tests/fixtures/sysfs/roce" "$1" && chmod -R u+w "$1"  # distcheck's srcdir is read-only
  local b w d
  for b in 10 11; do
    w=16; [ $b = 10 ] || w=$2
    d=$1/sys/bus/pci/devices/0000:$b:00.0; mkdir -p "$d"
    echo 0x10de >"$d/vendor"; echo 0x030200 >"$d/class"; echo "32.0 GT/s PCIe" >"$d/current_link_speed"; echo "$w" >"$d/current_link_width"
  done
}
sysroot "$W/gpuroot" 16

# The fake GPUs' links read Gen5 x16 in gpuroot, so the PCIe figure applies
# (55 GB/s); GANGWAY_GPU_BW_RATIO scales it below the doubles' 0.25 GB/s.
task() {  # task PORT RANK [ENV=VAL...] -- ARGS: one task of a 4-node, 4-task step with 2 fake GPUs per node
  local p=$1 r=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env SLURM_JOB_ID=78 SLURM_STEP_ID=0 SLURM_STEP_NODELIST='g[1-4]' SLURM_STEP_NUM_NODES=4 SLURM_STEP_NUM_TASKS=4 \
    SLURM_STEP_TASKS_PER_NODE='1(x4)' SLURM_PROCID=$r SLURM_NODEID=$r SLURM_LOCALID=0 SLURMD_NODENAME=g$((r + 1)) \
    PRIMARY_ADDR=127.0.0.1 PRIMARY_PORT=$p NODE_ADDR=127.0.0.1 NCCL_SOCKET_IFNAME==lo GANGWAY_SECRET=$SECRET \
    GANGWAY_DRAIN_DIR= LD_LIBRARY_PATH=$FAKES GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB=$FAKES/libnccl.so.2 \
    GANGWAY_NCCL_BYTES=4194304 GANGWAY_COPY_BYTES=4194304 GANGWAY_FAKE_COPY_GBPS=0.25 GANGWAY_FAKE_NCCL_LOG=$W/nccl.log \
    GANGWAY_SYSFS_ROOT=$W/gpuroot GANGWAY_FAKE_IB_DEVICES=mlx5_2 GANGWAY_FAKE_IB_GBPS=4 \
    GANGWAY_IB_RATE_GBPS=3 GANGWAY_RDMA_RATIO=0.3 GANGWAY_NCCL_BUSBW_GBPS=0.02 GANGWAY_GPU_BW_RATIO=0.001 "${envs[@]}" \
    "$GW" "$@" >"$W/out.$r" 2>"$W/err.$r" &
  pids[$r]=$!
}
step() {  # step NAME [ENV=VAL...]: runs the 4 tasks of `gangway check`, report in $W/NAME.json
  local name=$1; shift
  local P; P=$(port); pids=(); rcs=(); : >"$W/nccl.log"
  for r in 0 1 2 3; do task "$P" $r "$@" -- check --timeout=30 --report="$W/$name.json"; done
  wait_tasks "$name"
}
wait_tasks() {  # wait_tasks NAME: exit codes of the started tasks into rcs
  for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs[$r]=$?; done
  # The check could not run (exit 5): say why, whatever the case expected.
  for r in "${!rcs[@]}"; do [ "${rcs[$r]}" != 5 ] || echo "note: $1: task $r: $(tail -1 "$W/err.$r")"; done
}
stage() { json "$W/$1.json" "[s['status'] + ': ' + s['detail'] for s in r['stages'] if s['name'] == '$2'][0]"; }
status_of() { json "$W/$1.json" "[n['status'] for n in r['nodes'] if n['name'] == '$2'][0]"; }

# 0. gangway gpu-check --local, one node, no step: the three node stages pass
#    and say what they did.
out=$(SLURMD_NODENAME=g0 LD_LIBRARY_PATH=$FAKES GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB=$FAKES/libnccl.so.2 \
  GANGWAY_NCCL_BYTES=4194304 GANGWAY_COPY_BYTES=4194304 "$GW" gpu-check --local --json \
  --sysfs-root="$top_srcdir/tests/fixtures/sysfs/roce" 2>&1); rc=$?
if [ $rc = 0 ] && grep -q '"name": "cuda", "status": "ok", "detail": "2 GPU(s), computation right on 2, H2D median' <<<"$out" \
   && grep -q '"name": "nccl", "status": "ok", "detail": "NCCL 2.18.5 .*node (2 ranks): algbw' <<<"$out" \
   && grep -q '"name": "verbs", "status": "ok", "detail": "1/1 port(s) usable: mlx5_2/1 RoCE 100 Gb/s ACTIVE gid 3' <<<"$out"; then
  pass "gpu-check --local: cuda (computation checked), nccl (2 ranks) and verbs (RoCE v2 GID 3) ok"
else
  fail "gpu-check --local: rc=$rc $out"
fi

# 0b. an H100 whose second GPU's link trained at x8: its copies meet the x8
#     figure (a site figure here, the double copies at 0.25 GB/s), the lanes name it.
sysroot "$W/x8root" 8
out=$(SLURMD_NODENAME=g0 LD_LIBRARY_PATH=$FAKES GANGWAY_FAKE_GPUS=2 GANGWAY_FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" \
  GANGWAY_FAKE_COPY_GBPS=0.25 GANGWAY_H2D_GBPS=0.25 GANGWAY_GPU_BW_RATIO=0.5 GANGWAY_COPY_BYTES=4194304 \
  "$GW" gpu-check --local --stages=cuda --json --sysfs-root="$W/x8root" 2>&1); rc=$?
if [ $rc = 3 ] && grep -q ': cuda: gpu 1 (0000:11:00.0): PCIe link trained at x8, the H100-SXM has x16 (riser, slot or a lane fault)"' <<<"$out" \
   && grep -q '"bus_id": "0000:11:00.0", "pcie_gen": 5, "pcie_width": 8,' <<<"$out" \
   && ! grep -q 'gpu 0 (0000:10:00.0)' <<<"$out"; then
  pass "an H100 on 8 lanes: named by its link width, its twin on 16 lanes not"
else
  fail "x8 link: rc=$rc $out"
fi

# 1. healthy: the three GPU stages pass; the cross-node communicator has 8
#    ranks, every one joined once with the same unique id (one nonce).
[ -n "${ONLY:-}" ] || step ok
nonces=$(sed -n 's/.*nranks=8 nonce=\([0-9a-f]*\).*/\1/p' "$W/nccl.log" | sort -u | wc -l)
ranks=$(sed -n 's/.*rank=\([0-9]*\) nranks=8 .*/\1/p' "$W/nccl.log" | sort -n | tr '\n' ' ')
if [ "${rcs[*]}" = "0 0 0 0" ] && [ "$(stage ok cuda | cut -d: -f1)" = ok ] && [ "$(stage ok nccl | cut -d: -f1)" = ok ] \
   && stage ok nccl-job | grep -q '^ok: 4 nodes, job (8 ranks): algbw' && [ "$nonces" = 1 ] && [ "$ranks" = "0 1 2 3 4 5 6 7 " ] \
   && stage ok rdma | grep -q '^ok: 4 link(s) on 1 of 1 rail(s)'; then
  pass "4 nodes x 2 fake GPUs + a fake RoCE port: cuda, nccl, verbs ok; nccl-job 8 ranks, one unique id; rdma ok"
else
  fail "healthy: rcs ${rcs[*]}; nonces $nonces; ranks $ranks; $(stage ok nccl-job 2>&1); $(cat "$W/err.0")"
fi

# 1b. The report's per-device records: all 8 GPUs with the copy rate the
#     double simulates (0.25 GB/s; its per-GPU clock makes the measurement
#     exact however busy the machine), each node's own all-reduce, and the 4
#     nodes' RoCE ports.
gpus=$(json "$W/ok.json" "sorted((g['node'], g['index'], g['pcie_gen'], g['pcie_width'], round(g['h2d_gbps'], 3), round(g['d2h_gbps'], 3)) for g in r['gpus'])" 2>&1)
ports=$(json "$W/ok.json" "[(p['node'], p['name'], p['rate_gbps'], p['usable']) for p in r['ports']]" 2>&1)
nccl=$(json "$W/ok.json" "[(n['node'], n['ranks'], n['bytes'], n['data_ok'], n['busbw_gbps'] > 0) for n in r['nccl']]" 2>&1)
want_gpus=$(python3 -c "print(sorted(('g%d' % n, i, 5, 16, 0.25, 0.25) for n in range(1, 5) for i in range(2)))")
if [ "$gpus" = "$want_gpus" ] \
   && [ "$ports" = "[('g1', 'mlx5_2/1', 100, True), ('g2', 'mlx5_2/1', 100, True), ('g3', 'mlx5_2/1', 100, True), ('g4', 'mlx5_2/1', 100, True)]" ] \
   && [ "$nccl" = "[('g1', 2, 4194304, True, True), ('g2', 2, 4194304, True, True), ('g3', 2, 4194304, True, True), ('g4', 2, 4194304, True, True)]" ]; then
  pass "the report lists the 8 GPUs (PCIe Gen5 x16, H2D and D2H 0.25 GB/s each, as simulated), each node's all-reduce and the 4 RoCE ports"
else
  fail "per-device records: gpus $gpus; ports $ports; nccl $nccl"
fi

# 2. g3's network path hangs NCCL: the job's communicator is aborted at its
#    deadline, and the two-node pairs (g2+g3 and g3+g4 fail, g1+g2 and g4+g1
#    pass) name g3 alone.
t0=$SECONDS
step nethang GANGWAY_FAKE_NCCL_NET_HANG_HOSTS=g3
took=$((SECONDS - t0))
if [ "${rcs[*]}" = "3 3 3 3" ] && [ "$(status_of nethang g3)" = faulty ] && [ "$(status_of nethang g1)" = ok ] \
   && [ "$(status_of nethang g2)" = ok ] && [ "$(status_of nethang g4)" = ok ] \
   && json "$W/nethang.json" "r['findings']" | grep -q 'nccl job: .*hung: communicator aborted' \
   && stage nethang nccl-job | grep -q '1 node(s) named' \
   && [ "$(stage nethang nccl | cut -d: -f1)" = ok ] && [ $took -le 40 ]; then
  pass "NCCL hangs across nodes on g3 only: aborted, then the two-node pairs name g3 (exit 3, ${took} s)"
else
  fail "net hang: rcs ${rcs[*]}, g3 $(status_of nethang g3 2>&1), ${took} s; $(stage nethang nccl-job 2>&1); $(cat "$W/err.0")"
fi

# 3. every GPU of g2 copies at a quarter of the speed: g2 alone sees no
#    outlier, the comparison across the job's 8 GPUs names it.
step slow GANGWAY_FAKE_SLOW_HOSTS=g2
if [ "${rcs[0]}" = 3 ] && [ "$(status_of slow g2)" = faulty ] && [ "$(status_of slow g1)" = ok ] \
   && json "$W/slow.json" "r['findings']" | grep -q "g2: cuda: gpu 0 (0000:10:00.0): H2D .* outlier against the job's 8 GPUs" \
   && [ "$(json "$W/slow.json" "sorted(set(round(g['h2d_gbps'], 4) for g in r['gpus'] if g['node'] == 'g2'))")" = "[0.0625]" ]; then
  pass "all GPUs of g2 slow: named by the job-wide comparison"
else
  fail "slow GPUs: rcs ${rcs[*]}, g2 $(status_of slow g2 2>&1); $(json "$W/slow.json" "r['findings']" 2>&1)"
fi

# 3b. g4 computes wrong (one element of the SM check): g4 faulty, named with the element.
step badsm GANGWAY_FAKE_BAD_SM_HOSTS=g4
if [ "${rcs[0]}" = 3 ] && [ "$(status_of badsm g4)" = faulty ] && [ "$(status_of badsm g1)" = ok ] \
   && json "$W/badsm.json" "r['findings']" | grep -q "g4: cuda: gpu 0 .*computation returned a wrong value: element 12345" \
   && stage ok cuda | grep -q '^ok: g[1-4]: 2 GPU(s), computation right on 2, .*(and 3 more node(s))'; then
  pass "g4's GPUs compute a wrong element: g4 faulty, named with the element"
else
  fail "bad SM: rcs ${rcs[*]}, g4 $(status_of badsm g4 2>&1); $(json "$W/badsm.json" "r['findings']" 2>&1); $(stage ok cuda)"
fi

# 4. g4's NCCL fails at init: its nccl stage fails (faulty), the other three
#    run the cross-node all-reduce with 6 ranks and pass.
step fail GANGWAY_FAKE_NCCL_FAIL_HOSTS=g4
if [ "${rcs[0]}" = 3 ] && [ "$(status_of fail g4)" = faulty ] && stage fail nccl-job | grep -q '^ok: 3 nodes, job (6 ranks)'; then
  pass "NCCL init fails on g4: g4 faulty, the other 3 nodes pass the cross-node all-reduce"
else
  fail "init failure: rcs ${rcs[*]}, g4 $(status_of fail g4 2>&1); $(stage fail nccl-job 2>&1)"
fi

# 4b. g2 reads corrupted sums across nodes (its node-alone all-reduce is
#     right): the job's all-reduce is wrong, the pairs with g2 are wrong, g2 is named.
step corrupt GANGWAY_FAKE_NCCL_NET_CORRUPT_HOSTS=g2
if [ "${rcs[0]}" = 3 ] && [ "$(status_of corrupt g2)" = faulty ] && [ "$(status_of corrupt g1)" = ok ] \
   && [ "$(status_of corrupt g3)" = ok ] && [ "$(status_of corrupt g4)" = ok ] \
   && json "$W/corrupt.json" "[n['reasons'] for n in r['nodes'] if n['name'] == 'g2'][0]" | grep -q 'wrong values'; then
  pass "g2 reads wrong sums across nodes: the pairs name g2"
else
  fail "corruption: rcs ${rcs[*]}, g2 $(status_of corrupt g2 2>&1); $(json "$W/corrupt.json" "[n['reasons'] for n in r['nodes']]" 2>&1); $(stage corrupt nccl-job)"
fi

# 5. g1's network path is slow (300 ms per all-reduce across nodes, a pair's
#    busbw ~0.02 GB/s) against a site figure of 0.05 GB/s busbw (the fast
#    pairs reach ~0.3 here; load only slows the slow pairs further): the job's
#    all-reduce is slow, the pairs with g1 are slow, the others fast: g1 is named.
step netslow GANGWAY_FAKE_NCCL_NET_SLOW_HOSTS=g1 GANGWAY_NCCL_BUSBW_GBPS=0.05
if [ "${rcs[0]}" = 3 ] && [ "$(status_of netslow g1)" = faulty ] && [ "$(status_of netslow g2)" = ok ] \
   && [ "$(status_of netslow g3)" = ok ] && [ "$(status_of netslow g4)" = ok ] \
   && json "$W/netslow.json" "r['findings']" | grep -q 'nccl job: busbw 0.0[0-9]* GB/s, expected >= 0.04 GB/s (0.80 x 0.05 GB/s)'; then
  pass "NCCL slow across nodes on g1 against the site figure: the two-node pairs name g1"
else
  fail "net slow: rcs ${rcs[*]}, g1 $(status_of netslow g1 2>&1); $(json "$W/netslow.json" "[n['reasons'] for n in r['nodes']]" 2>&1); $(json "$W/netslow.json" "r['findings']" 2>&1)"
fi

# 6. The default deadline is the step's, not each node's: g1 alone has GPUs in
#    its sysfs (its own default 60 s, the others' 15 s), and NCCL hangs across
#    nodes on g3, which keeps the check going past 15 + 5 s. Node 0 tells every
#    task the deadline in the welcome, so g2-g4 wait for the verdict instead of
#    giving up on the coordinator (they would be "lost", exit 4).
P=$(port); pids=(); rcs=(); : >"$W/nccl.log"; t0=$SECONDS
for r in 0 1 2 3; do
  root=$W/gpuroot; [ $r = 0 ] || root=$top_srcdir/tests/fixtures/sysfs/roce
  task "$P" $r GANGWAY_FAKE_NCCL_NET_HANG_HOSTS=g3 GANGWAY_SYSFS_ROOT="$root" -- check --report="$W/mixed.json"
done
wait_tasks mixed
took=$((SECONDS - t0))
if [ "${rcs[*]}" = "3 3 3 3" ] && [ "$(json "$W/mixed.json" "r['deadline_s']")" = 60 ] && [ $took -gt 20 ] \
   && [ "$(status_of mixed g3)" = faulty ] && [ "$(status_of mixed g2)" = ok ] && [ "$(status_of mixed g4)" = ok ] \
   && json "$W/mixed.json" "r['findings']" | grep -q 'g1: gpus is 2, the others have 0'; then
  pass "GPUs on g1 only, no --timeout: one 60 s deadline for the step; g2-g4 waited ${took} s for the verdict"
else
  fail "mixed deadline: rcs ${rcs[*]}, ${took} s, deadline $(json "$W/mixed.json" "r['deadline_s']" 2>&1); $(json "$W/mixed.json" "[(n['name'], n['status']) for n in r['nodes']]" 2>&1); $(cat "$W/err.1")"
fi

finish
