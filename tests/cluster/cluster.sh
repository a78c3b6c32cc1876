#!/bin/bash
# A real SLURM cluster of N nodes on one machine, each node a network
# namespace with a management (eth0) and a data (eth1) interface.
#
#   cluster.sh up [-n N] [--task-plugin=task/none|task/affinity] [--cpus=C] [--release=22.05|24.11|26.05]
#                 [--health-check=PROGRAM [--health-interval=SECONDS]] [--prolog=PROGRAM] [--epilog=PROGRAM]
#                 [--accounting]
#   cluster.sh down [--purge]
#   cluster.sh status
#   cluster.sh wait [TIMEOUT_SECONDS]
#   cluster.sh exec NODE CMD...
#   cluster.sh nodes
#
# See tests/cluster/README.md for the address plan and the traps.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${GANGWAY_CLUSTER_DIR:-/var/tmp/gangway-cluster}
CONF=$DIR/etc/slurm.conf
CTLD_PORT=${GANGWAY_SLURMCTLD_PORT:-16817}
# up --accounting: slurmdbd (on the management bridge, as slurmctld) and the
# MariaDB it keeps its tables in (loopback only).
DBD_PORT=${GANGWAY_SLURMDBD_PORT:-16819}
DB_PORT=${GANGWAY_MARIADB_PORT:-16820}
WAIT_TIMEOUT=${GANGWAY_CLUSTER_TIMEOUT:-60}
MGMT_NET=198.18.0   # eth0, SLURM NodeAddr; RFC 2544 range, never routed
DATA_NET=198.19.0   # eth1, the plugin's data network
MGMT_BR=gw0
DATA_BR=gw1
FIRST_NODE_NUM=8    # node08, node09, node10, node11: crosses a digit boundary on purpose
FIRST_HOST_OCTET=11
# Which SLURM runs: 22.05 is this Debian 12 machine's own; the others run
# from a Debian root of their release (contrib/dev/root.sh makes them),
# daemons and clients alike, inside the same namespaces.
ROOTS=${GANGWAY_ROOTS:-/var/tmp/gangway-roots}
CLIENTS="srun sbatch salloc scontrol sinfo squeue scancel sacct sacctmgr sattach sstat sbcast sprio sshare sdiag strigger slurmd slurmctld slurmstepd slurmdbd gangway"

# The node running the sbin tools may lack /usr/sbin in PATH (sudo, CI).
export PATH=/usr/sbin:/sbin:/usr/bin:/bin:$PATH
# Our clients must talk to our controller, never a default /etc/slurm one.
export SLURM_CONF=$CONF

die() { echo "cluster.sh: $*" >&2; exit 1; }

release_suite() {  # release_suite RELEASE -> Debian suite ("" for this machine's own)
    case $1 in
        22.05) echo "" ;;
        24.11) echo trixie ;;
        26.05) echo sid ;;
        *) die "--release must be 22.05 (this machine's SLURM), 24.11 (Debian trixie) or 26.05 (Debian sid), not '$1'" ;;
    esac
}
log() { echo "cluster.sh: $*" >&2; }

node_name() { printf 'node%02d' $((FIRST_NODE_NUM + $1)); }
mgmt_addr() { echo "$MGMT_NET.$((FIRST_HOST_OCTET + $1))"; }
data_addr() { echo "$DATA_NET.$((FIRST_HOST_OCTET + $1))"; }

# Node count of the running (or last) cluster, from the state we wrote at up.
saved_n() {
    if [[ -r $DIR/cluster.state ]]; then
        sed -n 's/^N=//p' "$DIR/cluster.state"
    fi
}

all_nodes() {  # all_nodes N -> names, one per line
    local i
    for ((i = 0; i < $1; i++)); do node_name "$i"; echo; done
}

# Node names in our namespace list, whatever N was: down must clean up a
# cluster even when the state file is gone or was for another N.
existing_netns() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^node[0-9]+$' || true
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }
read_pid() { if [[ -r $1 ]]; then cat "$1" 2>/dev/null || true; fi; }

# PIDs whose command line mentions our slurm.conf: the controller and
# any slurmd whose pid file we lost.  Exact, never a broad name match.
pids_using_conf() {
    local p cmd
    for p in /proc/[0-9]*; do
        cmd=$( { tr "\0" " " <"$p/cmdline"; } 2>/dev/null) || continue
        case $cmd in
            *slurm*"$CONF"*) echo "${p#/proc/}" ;;
        esac
    done
}

# The root the running cluster uses ("" for this machine's own SLURM).
saved_root() {
    if [[ -r $DIR/cluster.state ]]; then
        sed -n 's/^ROOT=//p' "$DIR/cluster.state"
    fi
}

kill_and_wait() {  # kill_and_wait PID... : TERM, then KILL after 5 s
    local p t
    [[ $# -gt 0 ]] || return 0
    kill -TERM "$@" 2>/dev/null || true
    for ((t = 0; t < 50; t++)); do
        local alive=0
        for p in "$@"; do pid_alive "$p" && alive=1; done
        [[ $alive = 0 ]] && return 0
        sleep 0.1
    done
    kill -KILL "$@" 2>/dev/null || true
    sleep 0.2
}

# ---------------------------------------------------------------- down

cmd_down() {
    local purge=0 n pids
    [[ ${1:-} = --purge ]] && purge=1
    # Everything running inside a node namespace: slurmd, slurmstepd, the
    # tasks, the namespace anchor.  Killing them also frees the private
    # mount namespaces, so no mounts are left on the host.
    # All nodes at once: one node at a time waited up to 5 s for each, which
    # took over 10 minutes to take down 128 nodes after a loaded run.
    pids=$(for n in $(existing_netns); do ip netns pids "$n" 2>/dev/null || true; done)
    # shellcheck disable=SC2086
    kill_and_wait $pids
    # With up --accounting's slurmdbd and MariaDB, at once: each takes about
    # 2 s to stop, and what slurmctld would still send is a test's, gone with it.
    # shellcheck disable=SC2046
    kill_and_wait $(read_pid "$DIR/run/slurmctld.pid") $(pids_using_conf) $(read_pid "$DIR/run/slurmdbd.pid") \
        $(read_pid "$DIR/run/mariadb.pid")
    # shellcheck disable=SC2046
    kill_and_wait $(read_pid "$DIR/run/ctl-anchor.pid")
    for n in $(existing_netns); do
        ip netns del "$n" 2>/dev/null || true
    done
    # Host-side veth ends normally vanish with their namespace; a half-made
    # node may have left one behind.
    for n in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \([md]-node[0-9]*\)[@:].*/\1/p'); do
        ip link del "$n" 2>/dev/null || true
    done
    for n in $MGMT_BR $DATA_BR; do
        ip link del "$n" 2>/dev/null || true
    done
    rm -f "$DIR"/run/*.pid "$DIR/cluster.state"
    rm -rf "${DIR:?}/bin"
    if [[ $purge = 1 ]]; then
        rm -rf "$DIR"
    fi
    log "down"
}

# ---------------------------------------------------------------- up

write_config() {  # write_config N TASK_PLUGIN CPUS HEALTH PROLOG EPILOG ACCOUNTING
    local n=$1 task=$2 cpus=$3 health=$4 prolog=$5 epilog=$6 accounting=$7 i lines="" host fqdn select=select/linear script_lines=""
    local acct_lines="AccountingStorageType=accounting_storage/none"$'\n'
    # up --accounting: slurmctld sends every job's records to slurmdbd, which
    # sacct and sacctmgr ask (on the host and in the nodes, by the bridge).
    [[ $accounting = 1 ]] && acct_lines="AccountingStorageType=accounting_storage/slurmdbd"$'\n'"AccountingStorageHost=$MGMT_NET.1"$'\n'"AccountingStoragePort=$DBD_PORT"$'\n'
    # What slurmd runs besides jobs, none by default: HealthCheckProgram on
    # every node (tests/integration/node_check.sh), Prolog and Epilog on a
    # job's nodes (tests/integration/slurmd_scripts.sh).
    if [[ -n $health ]]; then
        script_lines="HealthCheckProgram=${health%:*}"$'\n'"HealthCheckInterval=${health##*:}"$'\n'"HealthCheckNodeState=ANY"$'\n'
    fi
    [[ -z $prolog ]] || script_lines+="Prolog=$prolog"$'\n'
    [[ -z $epilog ]] || script_lines+="Epilog=$epilog"$'\n'
    # select/linear is gone since 23.02; cons_tres with the socket as the unit
    # (one per node here) allocates whole nodes the same way.
    [[ -n $ROOT ]] && select="select/cons_tres"$'\n'"SelectTypeParameters=CR_Socket"
    host=$(hostname -s)
    fqdn=$(hostname -f 2>/dev/null || echo "$host")
    mkdir -p "$DIR"/{etc,log,run,spool,nodes}
    for ((i = 0; i < n; i++)); do
        # CPUs > real cores is fine thanks to config_overrides (task/affinity
        # can then bind at most the real core count per node, see README).
        lines+="NodeName=$(node_name "$i") NodeAddr=$(mgmt_addr "$i") NodeHostname=$(node_name "$i") CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1024 State=UNKNOWN"$'\n'
    done
    # awk, not sed: the node lines are multi-line.
    awk -v dir="$DIR" -v host="$host" -v port="$CTLD_PORT" -v mgmt="$MGMT_NET" -v task="$task" -v nodes="$lines" \
        -v select="$select" -v scripts="$script_lines" -v acct="$acct_lines" '
        { gsub(/@DIR@/, dir); gsub(/@CTLD_HOST@/, host); gsub(/@CTLD_PORT@/, port); gsub(/@MGMT_NET@/, mgmt);
          gsub(/@TASK_PLUGIN@/, task); gsub(/@SELECT@/, select) }
        /^@NODE_LINES@$/ { printf "%s", nodes; next }
        /^@SLURMD_SCRIPTS@$/ { printf "%s", scripts; next }
        /^@ACCOUNTING@$/ { printf "%s", acct; next }
        { print }' "$HERE/slurm.conf.in" >"$CONF.tmp"
    mv "$CONF.tmp" "$CONF"
    # Tests write plugstack.conf; a fresh cluster starts without plugins (one
    # built for another release would stop every slurmd from starting).
    : >"$DIR/etc/plugstack.conf"

    # One hosts file for all nodes: node names resolve to MANAGEMENT
    # addresses (as on a real cluster where DNS knows only the admin
    # network), so the plugin has to discover the data address itself;
    # "<node>-data" names the data address, as "<node>-ib" does at many sites.
    {
        echo "127.0.0.1 localhost"
        echo "::1 localhost ip6-localhost ip6-loopback"
        if [[ $fqdn != "$host" ]]; then
            echo "$MGMT_NET.1 $fqdn $host"
        else
            echo "$MGMT_NET.1 $host"
        fi
        for ((i = 0; i < n; i++)); do
            echo "$(mgmt_addr "$i") $(node_name "$i")"
            echo "$(data_addr "$i") $(node_name "$i")-data"
        done
    } >"$DIR/etc/hosts"
    for ((i = 0; i < n; i++)); do
        local nd
        nd=$DIR/nodes/$(node_name "$i")
        mkdir -p "$nd"
        cp "$DIR/etc/hosts" "$nd/hosts"
        printf '%s\n' "$(node_name "$i")" >"$nd/hostname"
    done

    cat >"$DIR/env.sh" <<EOF
# Source me: points SLURM clients at the gangway test cluster.
export SLURM_CONF=$CONF
export GANGWAY_CLUSTER_DIR=$DIR
export GANGWAY_CLUSTER_N=$n
export GANGWAY_CLUSTER_CPUS_PER_NODE=$cpus
export GANGWAY_CLUSTER_TASK_PLUGIN=$task
export GANGWAY_CLUSTER_NODES="$(all_nodes "$n" | tr '\n' ' ' | sed 's/ $//')"
export GANGWAY_CLUSTER_MGMT_NET=$MGMT_NET.0/24
export GANGWAY_CLUSTER_DATA_NET=$DATA_NET.0/24
export GANGWAY_CLUSTER_PLUGSTACK=$DIR/etc/plugstack.conf
export GANGWAY_CLUSTER_RELEASE=$RELEASE
export GANGWAY_CLUSTER_ROOT=$ROOT
case ":\$PATH:" in *:/usr/sbin:*) ;; *) export PATH=\$PATH:/usr/sbin ;; esac
EOF
    # The release's own clients, first on PATH (SLURM talks only to clients of nearby releases).
    [[ -z $ROOT ]] || echo "export PATH=$DIR/bin:\$PATH" >>"$DIR/env.sh"
}

# ---------------------------------------------------------------- release roots

# Host paths a root sees at the same place: the state dir (config, plugin,
# logs) and the source tree (build dirs, test scripts).
root_binds() {
    printf '%s\n' "$DIR" "$(cd "$HERE/../.." && pwd)"
}

# Mounts that make a root usable, for a shell in a private mount namespace
# to run before chroot: the kernel file systems, a private /run (slurmd's
# socket) and the shared host paths. /tmp and /dev/shm are each anchor's own.
root_mounts_script() {  # root_mounts_script ROOT
    local b
    cat <<EOF
mount -t proc proc '$1/proc'
mount --rbind /sys '$1/sys'
mount --rbind /dev '$1/dev'
mount -t tmpfs -o mode=755 tmpfs '$1/run'
EOF
    for b in $(root_binds); do
        mkdir -p "$1$b"
        echo "mount --bind '$b' '$1$b'"
    done
}

# The last step into a root, once its mounts are made: the root becomes the
# mount namespace's own root (pivot_root), not a chroot inside it. Apptainer
# (sid's root has it) refuses a chroot: its starter joins a mount namespace
# with setns, which sets the root to the namespace's, and it aborts when that
# differs from the one it ran in ("weak chrooted environment").
# pivot_root wants the new root to be a mount point: the root bound onto itself
# (recursively, keeping the mounts made into it). The old root is then
# detached: nothing of the host stays reachable but what was bound in.
enter_root_script() {  # enter_root_script ROOT
    cat <<EOF
mount --rbind '$1' '$1'
mkdir -p '$1/.gangway-old-root'
cd '$1'
pivot_root . .gangway-old-root
umount -l /.gangway-old-root
cd /
EOF
}

# The root of a release, made once and cached by contrib/dev/root.sh.
ensure_root() {  # ensure_root SUITE -> prints the root's path
    local maker
    maker=$(cd "$HERE/../.." && pwd)/contrib/dev/root.sh
    [[ -x $maker ]] || die "$maker is missing: it makes the Debian root of each SLURM release"
    "$maker" make "$1" >/dev/null || exit $?
    [[ -x $ROOTS/$1/usr/sbin/slurmd ]] || die "$ROOTS/$1 has no slurmd; remake it: $maker make $1"
    : >"$ROOTS/$1/.gangway-root"
    # Apptainer run by root gives the container every capability by default,
    # and aborts where this machine's bounding set lacks one (a VM: "Requesting
    # capability set ... while permitted capability set is ..."). The test
    # cluster's tasks run as root and need none: only the file's (none).
    local conf=$ROOTS/$1/etc/apptainer/apptainer.conf
    if [[ -f $conf ]] && grep -qx 'root default capabilities = full' "$conf"; then
        sed -i 's/^root default capabilities = full$/root default capabilities = file/' "$conf"
    fi
    echo "$ROOTS/$1"
}

# Clients run in a long-lived process whose root is the release's root, with the host's
# network, /tmp, /var/tmp and hosts file: `nsenter --root` into it is cheap.
start_ctl_anchor() {
    rm -f "$DIR/run/ctl-anchor.pid"
    setsid unshare --mount --propagation private -- /bin/sh -c "
        set -e
        $(root_mounts_script "$ROOT")
        mount --rbind /tmp '$ROOT/tmp'
        mount --bind /var/tmp '$ROOT/var/tmp'
        mount --bind /etc/hosts '$ROOT/etc/hosts'
        $(enter_root_script "$ROOT")
        echo \$\$ >'$DIR/run/ctl-anchor.pid'
        exec sleep infinity" </dev/null >>"$DIR/log/anchor-ctl.log" 2>&1 9>&- &
    wait_for_pid_file "$DIR/run/ctl-anchor.pid" "the clients' root anchor" "$DIR/log/anchor-ctl.log"
}

wait_for_pid_file() {  # wait_for_pid_file FILE WHAT LOG: up to 5 s, else die naming LOG
    local t
    for ((t = 0; t < 50; t++)); do
        [[ -s $1 ]] && return 0
        sleep 0.1
    done
    die "$2 did not start, see $3"
}

# $DIR/bin/NAME runs the release's NAME: inside a root directly, on the host
# through the clients' anchor (in the caller's directory when the root sees it).
write_client_wrappers() {
    local name real
    mkdir -p "$DIR/bin"
    for name in $CLIENTS; do
        case $name in
            slurmd | slurmctld | slurmstepd | slurmdbd) real=/usr/sbin/$name ;;
            gangway) real=$DIR/install/gangway ;;
            *) real=/usr/bin/$name ;;
        esac
        cat >"$DIR/bin/$name.new" <<EOF
#!/bin/sh
# $name of SLURM $RELEASE, from $ROOT (written by cluster.sh up --release=$RELEASE).
[ -e /.gangway-root ] && exec $real "\$@"
pid=\$(cat '$DIR/run/ctl-anchor.pid') || exit 1
# nsenter opens --wd's path here: through /proc, it names the directory in the root.
wd=/proc/\$pid/root
[ -d "\$wd\$PWD" ] && wd=\$wd\$PWD
exec nsenter --target "\$pid" --mount --root --wd="\$wd" -- $real "\$@"
EOF
        chmod 0755 "$DIR/bin/$name.new" && mv -f "$DIR/bin/$name.new" "$DIR/bin/$name"
    done
}

make_bridge() {  # make_bridge NAME ADDR/PREFIX
    ip link add "$1" type bridge
    # br_netfilter may be loaded (it is on these VMs): keep host firewall
    # rules, if any appear, from filtering bridged node-to-node traffic.
    ip link set "$1" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 2>/dev/null || true
    ip addr add "$2" dev "$1"
    ip link set "$1" up
}

make_node_net() {  # make_node_net INDEX
    local i=$1 n
    n=$(node_name "$i")
    ip netns add "$n"
    ip -n "$n" link set lo up
    # Create each veth with its inner end already in the namespace, named
    # eth0/eth1 there; the host end keeps a predictable name so that tests
    # can `tc qdisc add dev d-node08 ...` or `ip link set d-node08 down`.
    ip link add "m-$n" type veth peer name eth0 netns "$n"
    ip link add "d-$n" type veth peer name eth1 netns "$n"
    ip link set "m-$n" master "$MGMT_BR" up
    ip link set "d-$n" master "$DATA_BR" up
    ip -n "$n" addr add "$(mgmt_addr "$i")/24" dev eth0
    ip -n "$n" addr add "$(data_addr "$i")/24" dev eth1
    ip -n "$n" link set eth0 up
    ip -n "$n" link set eth1 up
    # Anything else (e.g. the machine's own uplink address) goes via the host.
    ip -n "$n" route add default via "$MGMT_NET.1"
}

# A long-lived process that owns the node's mount and UTS namespaces, so
# `exec` works and slurmd can be (re)started inside them even while no
# slurmd runs.  Private /tmp: SLURM and PMIx put per-node sockets and
# files there (they would collide across nodes otherwise).  Private
# /dev/shm: shared-memory transports must not see other "nodes".
start_anchor() {  # start_anchor INDEX
    local n nd
    n=$(node_name "$1")
    nd=$DIR/nodes/$n
    rm -f "$nd/anchor.pid"
    # In a release's root ($ROOT) the anchor ends with it as its root, and
    # in_node's `nsenter --root` follows it; "" is this machine's own root.
    local root_lines=""
    [[ -n $ROOT ]] && root_lines=$(root_mounts_script "$ROOT")
    setsid nsenter --net="/run/netns/$n" -- \
        unshare --mount --uts --propagation private -- \
        /bin/sh -c "
            set -e
            $root_lines
            mount -t tmpfs -o mode=1777 tmpfs '$ROOT/tmp'
            mount -t tmpfs -o mode=1777 tmpfs '$ROOT/dev/shm'
            mount --bind '$nd/hosts' '$ROOT/etc/hosts'
            mount --bind '$nd/hostname' '$ROOT/etc/hostname'
            hostname '$n'
            $([[ -z $ROOT ]] || enter_root_script "$ROOT")
            echo \$\$ >'$nd/anchor.pid'
            exec sleep infinity" \
        </dev/null >>"$DIR/log/anchor-$n.log" 2>&1 9>&- &
    wait_for_pid_file "$nd/anchor.pid" "namespace anchor for $n" "$DIR/log/anchor-$n.log"
}

# Run a command inside a node: its network, mount (private /tmp, hosts)
# and UTS namespaces.  Not `ip netns exec`: that remounts /sys, and slurmd
# then finds no cgroup hierarchy.
in_node() {  # in_node NODE CMD...
    local n=$1 pid
    shift
    pid=$(read_pid "$DIR/nodes/$n/anchor.pid")
    pid_alive "$pid" || die "node $n is not running (no namespace anchor); run: $0 up"
    if [[ -n $ROOT ]]; then
        # nsenter opens --wd's path here: through /proc, it names the directory in the root.
        local wd=/proc/$pid/root
        [[ -d $wd$PWD ]] && wd=$wd$PWD
        nsenter --target "$pid" --net --mount --uts --root --wd="$wd" -- "$@"
    else
        nsenter --target "$pid" --net --mount --uts -- "$@"
    fi
}

start_slurmd() {  # start_slurmd NODE
    # -N: several slurmd's on one machine, each with its own node name.
    # slurmd daemonizes and writes $DIR/run/slurmd-NODE.pid.
    pid_alive "$(read_pid "$DIR/nodes/$1/anchor.pid")" || die "node $1 has no namespace anchor"
    in_node "$1" slurmd -f "$CONF" -N "$1" >>"$DIR/log/slurmd-$1.start.log" 2>&1 9>&- \
        || die "slurmd $1 failed to start, see $DIR/log/slurmd-$1.log and $DIR/log/slurmd-$1.start.log"
}

start_slurmctld() {
    local via=()
    local ctl
    ctl=$(read_pid "$DIR/run/ctl-anchor.pid")
    [[ -n $ROOT ]] && via=(nsenter --target "$ctl" --mount --root --wd="/proc/$ctl/root" --)
    "${via[@]}" slurmctld -f "$CONF" >>"$DIR/log/slurmctld.start.log" 2>&1 9>&- \
        || die "slurmctld failed to start, see $DIR/log/slurmctld.log and $DIR/log/slurmctld.start.log"
}

# ---------------------------------------------------------------- accounting

# up --accounting: MariaDB, then slurmdbd, both before slurmctld so that it
# registers the cluster (it adds it to slurmdbd by itself) and sends its jobs'
# records from the start. MariaDB is this machine's, whatever the release
# (slurmdbd speaks MySQL's protocol, which is stable), run as root on
# loopback with a private datadir under the state dir; it starts while the
# nodes are made. slurmdbd is the release's own (its version must be at
# least slurmctld's), from the root as slurmctld is.
# The datadir is made once (mariadb-install-db: a second) and kept across
# `up`s, with one database per release (a slurmdbd converts the tables of an
# older one, never back), so that slurmdbd and slurmctld make their tables
# once (3 s a start otherwise). Its jobs are removed at each start, as
# slurmctld's state is: job ids start again at 1, and old records of the same
# ids would answer sacct.
ACCT_DB_INNODB=(--innodb-log-file-size=8M --innodb-buffer-pool-size=64M)  # the same at every start
acct_db_name() { echo "slurm_acct_db_${RELEASE//./_}"; }

start_mariadb() {
    local db=$DIR/mariadb t
    for t in mariadbd mariadb-install-db mariadb; do
        command -v "$t" >/dev/null || die "up --accounting: '$t' not found; install: apt-get install mariadb-server slurmdbd (contrib/dev/install-deps.sh)"
    done
    if [[ -z $ROOT ]]; then
        command -v slurmdbd >/dev/null || die "up --accounting: slurmdbd not found; install: apt-get install slurmdbd (contrib/dev/install-deps.sh)"
    elif [[ ! -x $ROOT/usr/sbin/slurmdbd ]]; then
        die "up --accounting: $ROOT has no slurmdbd; contrib/dev/root.sh make ${ROOT##*/} adds it"
    fi
    if [[ ! -d $db/mysql ]]; then
        rm -rf "${db:?}"
        mariadb-install-db --no-defaults --datadir="$db" --user=root --auth-root-authentication-method=socket \
            --skip-test-db "${ACCT_DB_INNODB[@]}" >"$DIR/log/mariadb-install.log" 2>&1 \
            || { rm -rf "${db:?}"; die "up --accounting: mariadb-install-db failed, see $DIR/log/mariadb-install.log"; }
    fi
    # slurmdbd's account: by TCP from loopback, with a new password at each
    # start (in root's 0600 files only), and rights on the accounting
    # databases alone. mariadbd runs as root: no file may be read or written
    # through it (secure_file_priv, an empty directory of root's).
    local pass
    pass=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    (
        umask 077
        rm -f "$DIR/etc/mariadb-init.sql" "$DIR/etc/mariadb.pass" "$DIR/etc/slurmdbd.conf.tmp"
        printf '%s\n' "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1';" "ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';" \
            "GRANT ALL ON \`slurm\\_acct\\_db\\_%\`.* TO 'slurm'@'127.0.0.1';" >"$DIR/etc/mariadb-init.sql"
        printf '%s\n' "$pass" >"$DIR/etc/mariadb.pass"
        mkdir -p "$DIR/mariadb-files"
    )
    # A test cluster's database need not survive a power cut: no flush per
    # commit, no doublewrite (slurmdbd commits every job record).
    setsid mariadbd --no-defaults --user=root --datadir="$db" --port="$DB_PORT" --bind-address=127.0.0.1 \
        --socket="$DIR/run/mariadb.sock" --pid-file="$DIR/run/mariadb.pid" --log-error="$DIR/log/mariadb.log" \
        --skip-name-resolve --init-file="$DIR/etc/mariadb-init.sql" --secure-file-priv="$DIR/mariadb-files" "${ACCT_DB_INNODB[@]}" \
        --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-lock-wait-timeout=900 \
        </dev/null >>"$DIR/log/mariadb.log" 2>&1 9>&- &
}

start_slurmdbd() {
    local t via=() ctl name
    name=$(acct_db_name)
    for ((t = 0; t < 300; t++)); do
        grep -q "ready for connections" "$DIR/log/mariadb.log" 2>/dev/null && break
        sleep 0.1
    done
    grep -q "ready for connections" "$DIR/log/mariadb.log" 2>/dev/null || die "up --accounting: MariaDB did not start in 30 s, see $DIR/log/mariadb.log"
    # The last cluster's jobs (none the first time: the database is slurmdbd's to make).
    MYSQL_PWD=$(cat "$DIR/etc/mariadb.pass") mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$DB_PORT" -u slurm --force \
        -e "DELETE FROM $name.gangway_job_table; DELETE FROM $name.gangway_step_table;" >/dev/null 2>&1 || true

    # slurmdbd.conf: beside slurm.conf (slurmdbd reads it from SLURM_CONF's
    # directory), SlurmUser's and 0600, or slurmdbd refuses it.
    (
        umask 077
        printf '%s\n' "# Generated by tests/cluster/cluster.sh up --accounting." "AuthType=auth/none" "DbdHost=localhost" \
            "DbdPort=$DBD_PORT" "SlurmUser=root" "LogFile=$DIR/log/slurmdbd.log" "PidFile=$DIR/run/slurmdbd.pid" \
            "DebugLevel=info" "StorageType=accounting_storage/mysql" "StorageHost=127.0.0.1" "StoragePort=$DB_PORT" \
            "StorageUser=slurm" "StoragePass=$(cat "$DIR/etc/mariadb.pass")" "StorageLoc=$name" >"$DIR/etc/slurmdbd.conf.tmp"
    )
    mv "$DIR/etc/slurmdbd.conf.tmp" "$DIR/etc/slurmdbd.conf"
    if [[ -n $ROOT ]]; then
        ctl=$(read_pid "$DIR/run/ctl-anchor.pid")
        via=(nsenter --target "$ctl" --mount --root --wd="/proc/$ctl/root" --)
    fi
    "${via[@]}" slurmdbd >>"$DIR/log/slurmdbd.start.log" 2>&1 9>&- \
        || die "up --accounting: slurmdbd failed to start, see $DIR/log/slurmdbd.log and $DIR/log/slurmdbd.start.log"
    # Up once it listens (it makes or converts its tables first).
    for ((t = 0; t < 300; t++)); do
        (exec 3<>"/dev/tcp/127.0.0.1/$DBD_PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    die "up --accounting: slurmdbd does not listen on port $DBD_PORT after 30 s, see $DIR/log/slurmdbd.log"
}

# Node states, "node08 idle" per line; empty if the controller is down.
node_states() {
    timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null | sort -u || true
}

# True if all N expected nodes are idle/mix/alloc (a trailing * means the
# node does not respond, ~ power saving, # powering up: all unhealthy).
all_nodes_ok() {  # all_nodes_ok N
    local n=$1 states ok
    states=$(node_states)
    ok=$(awk '$2 ~ /^(idle|mix|alloc)$/' <<<"$states" | wc -l)
    [[ $ok -eq $n ]] && [[ $(wc -l <<<"$states") -eq $n ]]
}

cmd_wait() {
    local timeout=${1:-$WAIT_TIMEOUT} n t
    n=$(saved_n)
    [[ -n $n ]] || die "no cluster state in $DIR (run: $0 up)"
    for ((t = 0; t < timeout * 2; t++)); do
        all_nodes_ok "$n" && return 0
        sleep 0.5
    done
    {
        echo "cluster.sh: nodes not all idle after ${timeout}s; sinfo says:"
        node_states | sed 's/^/    /' | grep . || echo "    (no answer: is slurmctld running?)"
        echo "cluster.sh: see $DIR/log/slurmctld.log and $DIR/log/slurmd-NODE.log; last controller lines:"
        tail -n 15 "$DIR/log/slurmctld.log" 2>/dev/null | sed 's/^/    /'
    } >&2
    return 1
}

# Editing the template or this script must restart the cluster on `up`.
source_sum() {
    cat "$HERE/slurm.conf.in" "$HERE/cluster.sh" | md5sum | cut -d' ' -f1
}

# Healthy and configured as asked: then `up` has nothing to do.
is_up_as() {  # is_up_as N TASK_PLUGIN CPUS RELEASE HEALTH PROLOG EPILOG ACCOUNTING
    local n=$1 task=$2 cpus=$3 release=$4 health=$5 prolog=$6 epilog=$7 accounting=$8 node
    [[ -r $DIR/cluster.state ]] || return 1
    grep -qx "RELEASE=$release" "$DIR/cluster.state" || return 1
    grep -qx "N=$n" "$DIR/cluster.state" || return 1
    grep -qx "TASK_PLUGIN=$task" "$DIR/cluster.state" || return 1
    grep -qx "CPUS=$cpus" "$DIR/cluster.state" || return 1
    grep -qxF "HEALTH=$health" "$DIR/cluster.state" || return 1
    grep -qxF "PROLOG=$prolog" "$DIR/cluster.state" || return 1
    grep -qxF "EPILOG=$epilog" "$DIR/cluster.state" || return 1
    grep -qx "ACCOUNTING=$accounting" "$DIR/cluster.state" || return 1
    grep -qx "SRC=$HERE" "$DIR/cluster.state" || return 1
    grep -qx "SUM=$(source_sum)" "$DIR/cluster.state" || return 1
    pid_alive "$(read_pid "$DIR/run/slurmctld.pid")" || return 1
    [[ -z $ROOT ]] || pid_alive "$(read_pid "$DIR/run/ctl-anchor.pid")" || return 1
    if [[ $accounting = 1 ]]; then
        pid_alive "$(read_pid "$DIR/run/slurmdbd.pid")" || return 1
        pid_alive "$(read_pid "$DIR/run/mariadb.pid")" || return 1
    fi
    for node in $(all_nodes "$n"); do
        pid_alive "$(read_pid "$DIR/nodes/$node/anchor.pid")" || return 1
        pid_alive "$(read_pid "$DIR/run/slurmd-$node.pid")" || return 1
    done
    all_nodes_ok "$n"
}

# The Debian postinst may have started distribution daemons (only where
# systemd runs).  Ours use other ports/namespaces, but a default slurmctld
# on the same machine confuses anyone reading logs: warn, don't kill.
warn_foreign_daemons() {
    local p cmd comm
    for p in /proc/[0-9]*; do  # not pgrep: procps may be absent
        comm=$(cat "$p/comm" 2>/dev/null) || continue
        [[ $comm = slurmctld || $comm = slurmd ]] || continue
        cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
        p=${p#/proc/}
        case $cmd in *"$CONF"*) ;; *) log "warning: foreign SLURM daemon pid $p ($cmd) is running; ignoring it" ;; esac
    done
}

# The kernel's ARP table is one for all network namespaces, and its limit
# (net.ipv4.neigh.default.gc_thresh3, 1024 by default) counts every node's
# entries: N nodes on two networks need about 2 N^2 of them. Past it the
# kernel drops packets to peers it cannot resolve ("neighbor table overflow"
# in dmesg), which at 64 nodes made healthy probes time out. A real cluster
# has a table per host: raised here, never lowered.
raise_neigh_limits() {
    local want=$((4 * $1 * $1)) cur
    cur=$(sysctl -n net.ipv4.neigh.default.gc_thresh3 2>/dev/null || echo 0)
    ((want <= cur)) && return 0
    sysctl -qw net.ipv4.neigh.default.gc_thresh1=$((want / 4)) net.ipv4.neigh.default.gc_thresh2=$((want / 2)) \
        net.ipv4.neigh.default.gc_thresh3="$want" || log "could not raise the ARP table's limit to $want entries"
}

cmd_up() {
    local n=4 task=${GANGWAY_TASK_PLUGIN:-task/none}
    local cpus=${GANGWAY_CLUSTER_CPUS:-4} i node health_prog="" health_interval=5 prolog="" epilog="" p accounting=0
    while [[ $# -gt 0 ]]; do
        case $1 in
            -n) n=${2:?-n needs a number}; shift 2 ;;
            -n*) n=${1#-n}; shift ;;
            --task-plugin=*) task=${1#*=}; shift ;;
            --task-plugin) task=${2:?}; shift 2 ;;
            --cpus=*) cpus=${1#*=}; shift ;;
            --cpus) cpus=${2:?}; shift 2 ;;
            --release=*) RELEASE=${1#*=}; shift ;;
            --release) RELEASE=${2:?}; shift 2 ;;
            --health-check=*) health_prog=${1#*=}; shift ;;
            --health-interval=*) health_interval=${1#*=}; shift ;;
            --prolog=*) prolog=${1#*=}; shift ;;
            --epilog=*) epilog=${1#*=}; shift ;;
            --accounting) accounting=1; shift ;;
            *) die "up: unknown argument '$1'" ;;
        esac
    done
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1 || n > 240)); then die "up: -n must be 1..240"; fi
    if ! [[ $cpus =~ ^[0-9]+$ ]] || ((cpus < 1)); then die "up: --cpus must be a positive number"; fi
    case $task in task/none | task/affinity) ;; *) die "up: --task-plugin must be task/none or task/affinity" ;; esac
    if [[ -n $health_prog && $health_prog != /* ]]; then die "up: --health-check must be an absolute path"; fi
    if ! [[ $health_interval =~ ^[0-9]+$ ]] || ((health_interval < 1)); then die "up: --health-interval must be seconds"; fi
    # slurm.conf takes the rest of the line: a path, absolute, with no blank.
    for p in "$prolog" "$epilog"; do
        [[ -z $p || $p =~ ^/[^[:space:]]*$ ]] || die "up: --prolog and --epilog must be absolute paths without blanks, not '$p'"
    done
    local health=""
    [[ -n $health_prog ]] && health="$health_prog:$health_interval"
    local suite cmd
    suite=$(release_suite "$RELEASE")
    ROOT=""
    if [[ -n $suite ]]; then
        ROOT=$(ensure_root "$suite")
        export PATH=$DIR/bin:$PATH
    fi
    for cmd in ip nsenter unshare setsid flock chroot; do
        command -v "$cmd" >/dev/null || die "'$cmd' not found; install: apt-get install iproute2 util-linux coreutils"
    done
    [[ -n $ROOT ]] || for cmd in slurmctld slurmd sinfo; do
        command -v "$cmd" >/dev/null || die "'$cmd' not found; install: apt-get install slurmctld slurmd slurm-client iproute2 util-linux"
    done

    if is_up_as "$n" "$task" "$cpus" "$RELEASE" "$health" "$prolog" "$epilog" "$accounting"; then
        log "already up: $n nodes ($(all_nodes "$n" | head -1)..$(all_nodes "$n" | tail -1)), $cpus CPUs each, $task, SLURM $RELEASE"
        return 0
    fi
    # Anything else (partial, other N, other task plugin, dead daemon):
    # start from scratch; it takes seconds and leaves no doubt.
    if [[ -e $DIR/cluster.state || -n $(existing_netns) ]] || ip link show "$MGMT_BR" >/dev/null 2>&1; then
        log "not up as requested (or unhealthy): restarting"
        cmd_down
    fi
    warn_foreign_daemons

    write_config "$n" "$task" "$cpus" "$health" "$prolog" "$epilog" "$accounting"
    # Fresh logs and controller state for each cluster: no stale jobs, and
    # a failing test's logs contain only its cluster's life.
    rm -rf "$DIR/spool" "$DIR"/log/*
    mkdir -p "$DIR/spool/slurmctld"
    for node in $(all_nodes "$n"); do mkdir -p "$DIR/spool/$node"; done

    [[ $accounting = 0 ]] || start_mariadb
    raise_neigh_limits "$n"
    make_bridge "$MGMT_BR" "$MGMT_NET.1/24"
    make_bridge "$DATA_BR" "$DATA_NET.1/24"
    for ((i = 0; i < n; i++)); do
        make_node_net "$i"
        start_anchor "$i"
    done
    printf 'N=%s\nTASK_PLUGIN=%s\nCPUS=%s\nSRC=%s\nSUM=%s\nRELEASE=%s\nROOT=%s\nHEALTH=%s\nPROLOG=%s\nEPILOG=%s\nACCOUNTING=%s\n' "$n" "$task" "$cpus" \
        "$HERE" "$(source_sum)" "$RELEASE" "$ROOT" "$health" "$prolog" "$epilog" "$accounting" >"$DIR/cluster.state"

    if [[ -n $ROOT ]]; then
        start_ctl_anchor
        write_client_wrappers
    fi
    [[ $accounting = 0 ]] || start_slurmdbd
    start_slurmctld
    for node in $(all_nodes "$n"); do start_slurmd "$node"; done
    if ! cmd_wait "$WAIT_TIMEOUT"; then
        die "cluster did not come up; logs in $DIR/log/"
    fi
    log "up: $n nodes ($(all_nodes "$n" | head -1)..$(all_nodes "$n" | tail -1)), $cpus CPUs each, $task, SLURM $RELEASE$([[ $accounting = 0 ]] || echo ", slurmdbd"); source $DIR/env.sh"
}

cmd_status() {
    local n
    n=$(saved_n)
    if [[ -z $n ]]; then
        echo "down"
        return 1
    fi
    node_states
    all_nodes_ok "$n"
}

cmd_exec() {
    [[ $# -ge 2 ]] || die "usage: $0 exec NODE CMD..."
    in_node "$@"
}

usage() {
    sed -n '2,14s/^# \{0,1\}//p' "$0"
    exit 2
}

main() {
    [[ $# -ge 1 ]] || usage
    if [[ $(id -u) -ne 0 ]]; then
        echo "cluster.sh: needs root (network namespaces, bridges, mounts); skipping" >&2
        exit 77
    fi
    local sub=$1
    shift
    # Tests may call up/down concurrently: serialize them.  Daemons are
    # started with fd 9 closed, or they would hold the lock forever.
    case $sub in
        up | down)
            # Nor may they keep a caller's descriptors: a test run under
            # `flock LOCKFILE make check ...` hands its lock to every daemon
            # an `up` starts (the anchors' `sleep infinity` too), and the
            # lock stays held for the cluster's life. Every inherited one
            # but stdin, stdout, stderr and bash's own (255) is closed.
            local fd
            for fd in /proc/$$/fd/*; do
                fd=${fd##*/}
                if [[ $fd -gt 2 && $fd != 255 ]]; then eval "exec $fd>&-" 2>/dev/null || true; fi
            done
            mkdir -p "$DIR"
            exec 9>"$DIR/.lock"
            flock -w 120 9 || die "another cluster.sh holds $DIR/.lock"
            ;;
    esac
    RELEASE=${GANGWAY_RELEASE:-22.05}
    ROOT=$(saved_root)
    if [[ -n $ROOT && $sub != up ]]; then export PATH=$DIR/bin:$PATH; fi
    case $sub in
        up) cmd_up "$@" ;;
        down) cmd_down "$@" ;;
        status) cmd_status ;;
        wait) cmd_wait "$@" ;;
        exec) cmd_exec "$@" ;;
        nodes) all_nodes "$(saved_n)" ;;
        -h | --help | help) usage ;;
        *) die "unknown command '$sub' (up, down, status, wait, exec, nodes)" ;;
    esac
}

main "$@"
