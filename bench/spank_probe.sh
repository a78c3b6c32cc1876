#!/bin/bash
# The plugin's SPANK callbacks, and the functions under them, timed inside
# the test cluster's real slurmstepd and srun: perf uprobes on gangway.so's
# entry points and returns, LAUNCHES launches of `srun SRUN_ARGS true` with
# the shipped defaults and the data-network arguments. Prints each function's
# median wall time and its sum per launch. What stepd_sim (plugin_path.sh)
# cannot show: slurmstepd's own SPANK calls (spank_setenv clears 256 KiB a
# variable in SLURM's setenvf), its environment, and the CPU shared with the
# other nodes' daemons.
#
#   sudo bench/spank_probe.sh [LAUNCHES] [SRUN ARGS...]   (after a build; default 30, -N4 -n8)
# Needs perf (Debian's linux-perf) and uprobes in the kernel.
set -euo pipefail
launches=${1:-30}
shift || true
[ $# -gt 0 ] || set -- -N4 -n8
command -v perf >/dev/null || { echo "spank_probe.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }
. "$(dirname "$0")/cluster_setup.sh"
plugstack $SITE_ARGS
so=$INSTALL/gangway.so
names=$(mktemp /var/tmp/gangway-probe.XXXXXX)
data=$names.data
trap 'perf probe -q -d "probe_gangway:*" 2>/dev/null || true; rm -f "$names" "$data"' EXIT
perf probe -q -d 'probe_gangway:*' 2>/dev/null || true
# The entry points, and the step path's larger functions (by their mangled
# names: perf's probe syntax takes no C++ name).
fns=$(nm "$so" | awk '$2 ~ /^[tT]$/ {print $3}' | grep -E '^(slurm_spank_(init|init_post_opt|user_init|task_init|exit)$|_ZN7gangway(14make_step_view|14plan_placement|15find_node_addrs|8plan_env|3sys11iface_addrs|3sys11pci_has_gpu|3sys12resolve_host|3sys13load_topology|6plugin8read_env|6plugin6remote12prepare_node)[A-Z])' || true)
i=0
for f in $fns; do
  i=$((i + 1))
  perf probe -q --no-demangle -x "$so" -a "f$i=$f" >/dev/null 2>&1 && perf probe -q --no-demangle -x "$so" -a "f${i}r=$f%return" >/dev/null 2>&1 &&
    echo "f$i $(c++filt "$f" | sed 's/(.*//')" >>"$names"
done
[ -s "$names" ] || { echo "spank_probe.sh: no uprobe could be placed on $so" >&2; exit 1; }
srun "$@" true
perf record -q -a -e 'probe_gangway:*' -o "$data" -- bash -c "for i in \$(seq $launches); do srun $* true; done" >/dev/null 2>&1
perf script -i "$data" -F pid,time,event 2>/dev/null | python3 -c '
import collections, re, statistics, sys
names = dict(line.split(None, 1) for line in open(sys.argv[1]).read().splitlines())
launches = int(sys.argv[2])
open_, took = {}, collections.defaultdict(list)
for line in sys.stdin:
    m = re.match(r"\s*(\d+)\s+([\d.]+):\s+probe_gangway:(\S+):", line)
    if not m:
        continue
    pid, t, probe = int(m.group(1)), float(m.group(2)) * 1e6, m.group(3)
    if probe.endswith("r__return"):
        key = (pid, probe[: -len("r__return")])
        if key in open_:
            took[key[1]].append(t - open_.pop(key))
    else:
        open_[(pid, probe)] = t
print("%-40s %8s %6s %12s" % ("function (wall, in srun and slurmstepd)", "median", "calls", "per launch"))
for probe, v in sorted(took.items(), key=lambda kv: -sum(kv[1])):
    print("%-40s %6.0f us %6d %9.0f us" % (names[probe][:40], statistics.median(v), len(v), sum(v) / launches))
' "$names" "$launches"
echo "srun $* true, $launches launches; plugstack: $(cat "$PLUGSTACK")"
echo "host: $(nproc) cores, $(uname -r), SLURM $(srun --version | awk '{print $2}'), $(date -u +%F)"
