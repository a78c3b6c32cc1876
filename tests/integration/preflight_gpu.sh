#!/bin/bash
# gangway-releases: 22.05   (the launcher and the test doubles are the same on every release; check_option and preflight run srun --gangway-check on each)
# The GPU and RDMA stages of `gangway check` across the real 4-node cluster,
# through srun, with the test doubles of tests/fakes in place of NVIDIA's
# libcuda/libnccl and of libibverbs (the cluster has no GPU and no RDMA
# device). Their traffic is real: the fake NCCL's all-reduce and the fake
# verbs' RDMA writes travel over TCP on the data network (198.19.0.0/24),
# so the NCCL unique id and the queue-pair details have to cross nodes
# through gangway's coordinator.
#  (a) healthy: cuda, nccl, verbs, nccl-job and rdma ok; one communicator of
#      8 ranks across node08-11 with one unique id;
#  (b) NCCL hangs across nodes on node10 only: aborted, node10 named by the
#      two-node pairs;
#  (c) RDMA writes from and to node09 fail (a dead path): node09 named;
#  (d) node11's RDMA port at a quarter of the rate: node11 named.
. "$(dirname "$0")/lib.sh"
plugstack $SITE_ARGS
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
FAKES=$WORK/fakes
"$top_srcdir/tests/fakes/build.sh" "$FAKES" || { fail "the test doubles do not build"; finish; }
field() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
stage() { field "$WORK/$1.json" "[s['status'] + ': ' + s['detail'] for s in r['stages'] if s['name'] == '$2'][0]"; }
statuses() { field "$1" '" ".join(n["name"]+"="+n["status"] for n in r["nodes"])'; }

# Two fake GPUs per node copying 4 MiB at a simulated 0.25 GB/s; one fake RoCE port
# (mlx5_2 of the sysfs fixture, a RoCE v2 GID) writing at 4 Gb/s, judged
# against 0.4 x 3 Gb/s or 0.4 x the p75 of the links, whichever is higher
# (the doubles' writes travel over TCP on 2 shared cores: a healthy link
# read 57 % of its peers once under 0.6; the slow port of (d) writes at
# 1 Gb/s, under 1.2 however busy the machine); the fake all-reduce over TCP
# against 0.02 GB/s busbw.
export LD_LIBRARY_PATH=$FAKES GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB=$FAKES/libnccl.so.2 GANGWAY_NCCL_BYTES=4194304 \
  GANGWAY_COPY_BYTES=4194304 GANGWAY_FAKE_COPY_GBPS=0.25 GANGWAY_FAKE_NCCL_LOG=$WORK/nccl.log \
  GANGWAY_SYSFS_ROOT=$top_srcdir/tests/fixtures/sysfs/roce GANGWAY_FAKE_IB_DEVICES=mlx5_2 GANGWAY_FAKE_IB_GBPS=4 \
  GANGWAY_IB_RATE_GBPS=3 GANGWAY_RDMA_RATIO=0.4 GANGWAY_NCCL_BUSBW_GBPS=0.02
check() {  # check NAME [ENV=VAL...]: one 4-node check; rc in $rc
  local name=$1; shift
  rm -f "$WORK/$name.json"; : >"$WORK/nccl.log"
  env "$@" timeout 90 srun -N4 -n4 gangway check --timeout=40 --report="$WORK/$name.json" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"; rc=$?
}

# (a)
check ok
hosts=$(sed -n 's/^host=\([^ ]*\) .*nranks=8 .*/\1/p' "$WORK/nccl.log" | sort -u | tr '\n' ' ')
nonces=$(sed -n 's/.*nranks=8 nonce=\([0-9a-f]*\).*/\1/p' "$WORK/nccl.log" | sort -u | wc -l)
if [ $rc = 0 ] && [ "$(statuses "$WORK/ok.json")" = "node08=ok node09=ok node10=ok node11=ok" ] \
   && stage ok nccl-job | grep -q '^ok: 4 nodes, job (8 ranks)' && [ "$hosts" = "node08 node09 node10 node11 " ] \
   && [ "$nonces" = 1 ] && stage ok rdma | grep -q '^ok: 4 link(s) on 1 of 1 rail(s)'; then
  pass "(a) 4 nodes x 2 fake GPUs + 1 fake RoCE port: all stages ok; one 8-rank communicator across node08-11 ($(stage ok nccl-job | grep -o 'busbw [0-9.]* GB/s')), RDMA $(stage ok rdma | grep -o 'median .*')"
else
  fail "(a) healthy: rc=$rc $(statuses "$WORK/ok.json"); hosts '$hosts', $nonces nonce(s); nccl-job: $(stage ok nccl-job); rdma: $(stage ok rdma)"
  tail -20 "$WORK/ok.err"
fi

# (b)
check nethang GANGWAY_FAKE_NCCL_NET_HANG_HOSTS=node10
if [ $rc = 3 ] && [ "$(statuses "$WORK/nethang.json")" = "node08=ok node09=ok node10=faulty node11=ok" ] \
   && stage nethang nccl-job | grep -q '1 node(s) named'; then
  pass "(b) NCCL hangs across nodes on node10: aborted at the deadline, the two-node pairs name node10 (exit 3)"
else
  fail "(b) net hang: rc=$rc $(statuses "$WORK/nethang.json"); $(stage nethang nccl-job)"; tail -20 "$WORK/nethang.err"
fi

# (c)
check dead GANGWAY_FAKE_IB_DEAD_HOSTS=node09
if [ $rc = 3 ] && [ "$(statuses "$WORK/dead.json")" = "node08=ok node09=faulty node10=ok node11=ok" ] \
   && field "$WORK/dead.json" 'r["findings"]' | grep -q 'rdma .*status 12 (transport retry exceeded'; then
  pass "(c) RDMA path of node09 dead: writes from and to it fail with completion status 12 (retry exceeded), node09 named"
else
  fail "(c) dead RDMA path: rc=$rc $(statuses "$WORK/dead.json"); $(stage dead rdma); $(field "$WORK/dead.json" 'r["findings"]')"
  tail -20 "$WORK/dead.err"
fi

# (d)
check slowib GANGWAY_FAKE_IB_SLOW_HOSTS=node11
if [ $rc = 3 ] && [ "$(statuses "$WORK/slowib.json")" = "node08=ok node09=ok node10=ok node11=faulty" ]; then
  pass "(d) node11's RDMA port at a quarter of the rate: node11 named ($(stage slowib rdma))"
else
  fail "(d) slow RDMA port: rc=$rc $(statuses "$WORK/slowib.json"); $(stage slowib rdma)"; tail -20 "$WORK/slowib.err"
fi
finish
