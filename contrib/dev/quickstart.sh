#!/bin/bash
# From a fresh Debian 12 machine to a running example: installs what gangway
# needs, builds it, starts a local 4-node SLURM test cluster (network
# namespaces on this machine), runs a job that prints each node's
# instant-cluster variables, then shows the check: a healthy `gangway check`
# on the 4 nodes, then the same check after one node's data link is slowed
# with tc, naming that node, and the heatmap SVG it wrote. The shaping is
# removed on the way out. Run as root. Stop the cluster with
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

# The check: healthy first, then with node11's data link at a fifth of the
# rate the healthy check measured per link, so that it is slow against its
# peers whatever this machine's veth links carry.
out=/var/tmp/gangway-quickstart
mkdir -p "$out"
slowed=node11
trap 'unshape_link "$slowed"; rm -rf "$CLUSTER_LOCK"' EXIT  # lib.sh's trap freed the cluster's lock: so does this one
echo
echo "\$ srun -N4 gangway check --heatmap=$out/healthy.svg"
srun -N4 -n4 gangway check --report="$out/healthy.json" --heatmap="$out/healthy.svg" 2>&1 || true
rate=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); b=sorted(l["bps"] for l in r["links"] if l["stage"]=="bandwidth" and l.get("bps")); print(int(b[len(b)//2]*8/5/1e6) if b else 0)' "$out/healthy.json" 2>/dev/null || echo 0)
[ "$rate" -gt 0 ] 2>/dev/null || rate=200
shape_link "$slowed" "$rate"
echo
echo "\$ tc qdisc add dev eth1 root tbf rate ${rate}mbit ...   # on $slowed: its data link slowed to a fifth"
echo "\$ srun -N4 gangway check --heatmap=$out/slowed.svg"
rc=0
srun -N4 -n4 gangway check --report="$out/slowed.json" --heatmap="$out/slowed.svg" >"$out/slowed.txt" 2>&1 || rc=$?
# srun's own line per task that exited 3 is left out here, to keep the table in view.
grep -v '^srun: error: .*Exited with exit code' "$out/slowed.txt" || true
echo "(exit status $rc: 3 means degraded; under gangway run the job would now abort, or requeue without $slowed)"
unshape_link "$slowed"
trap 'rm -rf "$CLUSTER_LOCK"' EXIT
echo
echo "quickstart: the heatmap of the slowed run: $out/slowed.svg (the healthy one: $out/healthy.svg)"
echo "quickstart: done. Try: . $GANGWAY_CLUSTER_DIR/env.sh; srun -N2 gangway env --explain"
