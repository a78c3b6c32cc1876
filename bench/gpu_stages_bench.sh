#!/bin/bash
# What the cross-node GPU and RDMA stages cost on top of the work they time,
# on the namespace cluster (run as root, after make), with the test doubles
# of tests/fakes (no GPU or HCA here): 4 nodes x 2 fake GPUs and one fake
# RoCE port each, 5 runs of `gangway check`. Per run, from the report:
#  - rdma: the stage's seconds against its one 300 ms round of writes: the
#    rest is gangway's part (prep: endpoints and queue pairs, connect, done:
#    three more round trips through the coordinator);
#  - nccl-job: the stage's seconds (unique id round trip, the communicator,
#    6 all-reduces of 4 MiB over the fake's TCP star, the answers).
# The figures describe gangway's orchestration on this VM, not a GPU fabric.
TEST_NAME=gpu_stages_bench
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$top_srcdir/tests/integration/lib.sh"
plugstack $SITE_ARGS
export GANGWAY_SECRET=${GANGWAY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
js() { $TORCH_PY -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
FAKES=$WORK/fakes
"$top_srcdir/tests/fakes/build.sh" "$FAKES" || exit 1
export LD_LIBRARY_PATH=$FAKES GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB=$FAKES/libnccl.so.2 GANGWAY_NCCL_BYTES=4194304 \
  GANGWAY_COPY_BYTES=4194304 GANGWAY_FAKE_COPY_GBPS=0.25 GANGWAY_SYSFS_ROOT=$top_srcdir/tests/fixtures/sysfs/roce \
  GANGWAY_FAKE_IB_DEVICES=mlx5_2 GANGWAY_FAKE_IB_GBPS=4 GANGWAY_IB_RATE_GBPS=3 GANGWAY_RDMA_RATIO=0.6 \
  GANGWAY_NCCL_BUSBW_GBPS=0.02
echo "## cross-node GPU/RDMA stages with the test doubles ($(nproc) cores, $(uname -r))"
for i in 1 2 3 4 5; do
  srun -N4 -n4 gangway check --timeout=40 --round-ms=300 --report="$WORK/r$i.json" 2>"$WORK/r$i.err"; rc=$?
  echo "run=$i rc=$rc check_s=$(js "$WORK/r$i.json" '"%.3f" % r["seconds"]') $(js "$WORK/r$i.json" '" ".join("%s=%.3f" % (s["name"], s["seconds"]) for s in r["stages"] if s["name"] in ("cuda","nccl","verbs","nccl-job","rdma"))')"
done
