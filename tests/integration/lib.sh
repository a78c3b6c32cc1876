# Shared set-up for the real-cluster tests: sourced, not run.
# Installs the freshly built plugin and launcher where every namespace node
# sees them (not /tmp: the nodes mount a private /tmp), brings the test
# cluster up (idempotent), and offers small helpers.
set -u
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${GANGWAY_PLUGIN:=$top_builddir/spank/.libs/gangway.so}"
: "${GANGWAY_BIN:=$top_builddir/launcher/gangway}"
GANGWAY_CLUSTER_DIR=${GANGWAY_CLUSTER_DIR:-/var/tmp/gangway-cluster}
export GANGWAY_CLUSTER_DIR
TEST_NAME=$(basename "$0" .sh)
WORK=$GANGWAY_CLUSTER_DIR/work/$TEST_NAME
TORCH_PY=/usr/bin/python3   # Debian's python3-torch lives here; the python3 first on PATH may lack it

skip_or_fail() {  # a test that cannot run here: skip with the reason, but never under CI
  if [ "${CI:-}" = true ]; then
    echo "FAIL (CI=true forbids skipping): $*"; exit 1
  fi
  echo "SKIP: $*"; exit 77
}

[ "$(id -u)" = 0 ] || skip_or_fail "needs root to create network namespaces and run slurmd (run make check as root)"
command -v slurmd >/dev/null || [ -x /usr/sbin/slurmd ] || skip_or_fail "slurmd is not installed (apt-get install slurmd slurmctld slurm-client)"
[ -r "$GANGWAY_PLUGIN" ] || { echo "FAIL: $GANGWAY_PLUGIN not built"; exit 1; }

# One test at a time on the one cluster of this machine (several builds' make
# check may run at once): a lock directory naming the test's pid, taken over
# once that process is gone (no flock: the daemons a test restarts would
# inherit it).
mkdir -p "$GANGWAY_CLUSTER_DIR"
CLUSTER_LOCK=$GANGWAY_CLUSTER_DIR/.test.lock
cluster_waited=0
while ! mkdir "$CLUSTER_LOCK" 2>/dev/null; do
  cluster_owner=$(cat "$CLUSTER_LOCK/pid" 2>/dev/null)
  if [ -n "$cluster_owner" ] && ! kill -0 "$cluster_owner" 2>/dev/null; then rm -rf "$CLUSTER_LOCK"; continue; fi
  [ $cluster_waited = 0 ] && echo "waiting for the test cluster: pid ${cluster_owner:-?} holds $CLUSTER_LOCK"
  [ $cluster_waited -ge 1800 ] && { echo "FAIL: pid $cluster_owner held the test cluster for 30 min"; exit 1; }
  sleep 2; cluster_waited=$((cluster_waited + 2))
done
echo $$ >"$CLUSTER_LOCK/pid"
trap 'rm -rf "$CLUSTER_LOCK"' EXIT  # a test's own EXIT trap replaces this; the pid check then frees the lock
"$top_srcdir/tests/cluster/cluster.sh" up >/dev/null || { echo "FAIL: the test cluster did not come up"; exit 1; }
# shellcheck disable=SC1091
. "$GANGWAY_CLUSTER_DIR/env.sh"

INSTALL=$GANGWAY_CLUSTER_DIR/install
mkdir -p "$INSTALL" "$WORK"
# Copy, then rename: a step that is loading the plugin never sees a half-written file.
install -m 0755 "$GANGWAY_PLUGIN" "$INSTALL/gangway.so.new" && mv -f "$INSTALL/gangway.so.new" "$INSTALL/gangway.so"
install -m 0755 "$GANGWAY_BIN" "$INSTALL/gangway.new" && mv -f "$INSTALL/gangway.new" "$INSTALL/gangway"
export PATH=$INSTALL:$PATH
# Another SLURM release runs from its root: its clients (and gangway, built
# for it) through cluster.sh's wrappers, first on PATH.
if [ -n "${GANGWAY_CLUSTER_ROOT:-}" ]; then
  export PATH=$GANGWAY_CLUSTER_DIR/bin:$PATH
  GANGWAY_BIN=$GANGWAY_CLUSTER_DIR/bin/gangway  # built against the root's libraries: run it there
fi
PLUGSTACK=$GANGWAY_CLUSTER_DIR/etc/plugstack.conf

# The cluster's nodes: names resolve to the management network (eth0);
# "<name>-data" resolves to the data network (eth1).
# torch_hook: the TCPStore fallback for PyTorch built without libuv (Debian >= 13), from the source tree.
SITE_ARGS="iface=eth1 addr_template=%h-data torch_hook=$top_srcdir/torch-hook"
plugstack() {  # plugstack [ARGS...]: load gangway with these site arguments (SLURM re-reads it per job)
  echo "required $INSTALL/gangway.so $*" >"$PLUGSTACK.new" && mv -f "$PLUGSTACK.new" "$PLUGSTACK"
}
no_plugstack() { : >"$PLUGSTACK"; }

. "$top_srcdir/tests/verdicts.sh"

next_job_id() { scontrol show config | awk '$1 == "NEXT_JOB_ID" {print $3}'; }

# Each task prints one JSON object with its view; check_env.py compares them
# with what the layout says they must be.
DUMP="$TORCH_PY $top_srcdir/tests/integration/dump_env.py"
CHECK="$TORCH_PY $top_srcdir/tests/integration/check_env.py"

# shape_link NODE MBIT: NODE's data link (eth1, both directions) limited to
# MBIT Mbit/s with tc's token bucket; unshape_link NODE undoes it (and a link set down).
shape_link() {
  local burst=$(( $2 * 1000000 / 8 / 100 ))  # 10 ms worth of bytes
  [ $burst -lt 65536 ] && burst=65536
  tc qdisc add dev "d-$1" root tbf rate "${2}mbit" burst "$burst" latency 20ms
  nsenter --net="/run/netns/$1" tc qdisc add dev eth1 root tbf rate "${2}mbit" burst "$burst" latency 20ms
}
unshape_link() {
  tc qdisc del dev "d-$1" root 2>/dev/null
  nsenter --net="/run/netns/$1" tc qdisc del dev eth1 root 2>/dev/null
  ip link set "d-$1" up 2>/dev/null
  return 0
}

# cut_pair A B: the data link between nodes A and B alone cut: each drops in
# silence (an nftables input rule in its namespace) what arrives from the
# other's data address, so connections between them time out as over a dead
# path, and both keep their links to the other nodes (this kernel's tc has no
# drop action or netem). uncut_pair A B undoes it.
# as_user CLIENT ARGS...: a SLURM client (sbatch) run by the test's
# unprivileged user ($USER_ID: the post-mortem's and the watch's jobs are
# nobody's), with its own home ($WORK/user). Another release's clients run in
# that release's root (cluster.sh's wrappers enter it, which only root may):
# there root enters it and nsenter becomes the user inside (-S/-G, no extra groups).
as_user() {
  local env=(env HOME="$WORK/user" USER=nobody LOGNAME=nobody)
  if [ -z "${GANGWAY_CLUSTER_ROOT:-}" ]; then
    setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups "${env[@]}" "$@"
  else
    local pid wd
    pid=$(cat "$GANGWAY_CLUSTER_DIR/run/ctl-anchor.pid") || return 1
    wd=/proc/$pid/root; [ -d "$wd$PWD" ] && wd=$wd$PWD
    nsenter --target "$pid" --mount --root --wd="$wd" -S $USER_ID -G $USER_ID -- "${env[@]}" "/usr/bin/$1" "${@:2}"
  fi
}

data_addr() { ip -n "$1" -4 -o addr show eth1 | awk '{sub("/.*", "", $4); print $4}'; }
cut_pair() {
  command -v nft >/dev/null || { echo "FAIL: nft is missing (apt-get install nftables; contrib/dev/install-deps.sh)"; exit 1; }
  local x y
  for x in "$1:$2" "$2:$1"; do
    y=${x#*:}; x=${x%%:*}
    echo "table inet gangway_cut { chain in { type filter hook input priority 0; policy accept; ip saddr $(data_addr "$y") drop; }; }" |
      nsenter --net="/run/netns/$x" nft -f -
  done
}
uncut_pair() {
  nsenter --net="/run/netns/$1" nft delete table inet gangway_cut 2>/dev/null
  nsenter --net="/run/netns/$2" nft delete table inet gangway_cut 2>/dev/null
  return 0
}

# slow_pair A B MBIT: the data path between nodes A and B alone limited to MBIT
# Mbit/s, both ways: in each one's namespace, eth1's root is an HTB whose one
# class, at MBIT, takes what goes to the other's data address (a u32 filter);
# all else leaves unclassified, so unshaped (HTB sends it direct). Both keep
# their full rate to every other node. fast_pair A B undoes it.
slow_pair() {
  local x y
  for x in "$1:$2" "$2:$1"; do
    y=${x#*:}; x=${x%%:*}
    nsenter --net="/run/netns/$x" sh -e -c "
      tc qdisc add dev eth1 root handle 1: htb
      tc class add dev eth1 parent 1: classid 1:20 htb rate ${3}mbit quantum 60000
      tc filter add dev eth1 parent 1: protocol ip prio 1 u32 match ip dst $(data_addr "$y")/32 flowid 1:20"
  done
}
fast_pair() {
  nsenter --net="/run/netns/$1" tc qdisc del dev eth1 root 2>/dev/null
  nsenter --net="/run/netns/$2" tc qdisc del dev eth1 root 2>/dev/null
  return 0
}

# task_pid PATTERN VAR=VALUE: the pid of a running task whose command line
# matches PATTERN and whose environment holds VAR=VALUE (waits up to 10 s).
task_pid() {
  local p _
  for _ in $(seq 100); do
    for p in $(pgrep -f "$1"); do
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "$2" && { echo "$p"; return 0; }
    done
    sleep 0.1
  done
  return 1
}
