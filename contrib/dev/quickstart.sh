#!/bin/bash
# From a fresh Debian 12 machine to a running example: installs what gangway
# needs, builds it, starts a local 4-node SLURM test cluster (network
# namespaces on this machine), and runs a job that prints each node's
# instant-cluster variables. Run as root. Stop the cluster with
# `tests/cluster/cluster.sh down`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
contrib/dev/install-deps.sh
if [ -f config.status ] && [ ! -f _build/Makefile ]; then make distclean >/dev/null 2>&1 || true; fi
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
mkdir -p _build && cd _build
[ -f Makefile ] || ../configure -q
make -j"$(nproc)" >/dev/null
echo "quickstart: built $(./launcher/gangway --version)"
export top_srcdir=$top top_builddir=$top/_build
set +u
. "$top/tests/integration/lib.sh"
set -u
plugstack $SITE_ARGS
echo "quickstart: cluster up ($(sinfo -h -o '%D nodes: %N')); plugstack: $(cat "$PLUGSTACK")"
echo
echo "\$ srun -N4 --ntasks-per-node=1 -l gangway env"
srun -N4 --ntasks-per-node=1 -l gangway env | sort -n -s -k1,1
echo
echo "\$ srun -N4 -n7 -l bash -c 'echo RANK=\$RANK LOCAL_RANK=\$LOCAL_RANK WORLD_SIZE=\$WORLD_SIZE NODE_RANK=\$NODE_RANK MASTER_ADDR=\$MASTER_ADDR:\$MASTER_PORT'"
srun -N4 -n7 -l bash -c 'echo RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE NODE_RANK=$NODE_RANK MASTER_ADDR=$MASTER_ADDR:$MASTER_PORT' | sort -n
echo
echo "quickstart: done. Try: . $GANGWAY_CLUSTER_DIR/env.sh; srun -N2 gangway env --explain"
