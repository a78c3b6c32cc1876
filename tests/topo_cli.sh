#!/bin/bash
# gangway topo against the fixtures: every scenario of
# tests/fixtures/topology/scenarios.tsv must print its expected plan (compared
# as JSON, structurally), the cache must give the same plans, and bad input
# must give one clear line and a non-zero exit.
set -u
bin=${GANGWAY_BIN:?}
fx=${top_srcdir:-.}/tests/fixtures/topology
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

same_json() {  # same_json FILE_A FILE_B
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' "$1" "$2"
}

n=0
while IFS=$'\t' read -r fixture tasks gpus cpus expected; do
  case $fixture in ''|'#'*) continue ;; esac
  args=(--tasks "$tasks")
  [ "$gpus" != all ] && args+=(--gpus "$gpus")
  [ "$cpus" != all ] && args+=(--cpus "$cpus")
  what="$fixture ${args[*]}"
  for src in xml cache; do
    topo=$fx/$fixture.xml
    if [ $src = cache ]; then
      topo=$tmp/$fixture.cache
      [ -f "$topo" ] || "$bin" topo --topology "$fx/$fixture.xml" --write-cache "$topo" >/dev/null || { echo "FAIL: write cache for $fixture"; fail=1; continue; }
    fi
    if ! "$bin" topo --topology "$topo" "${args[@]}" --json >"$tmp/out.json" 2>"$tmp/err"; then
      echo "FAIL: $what ($src): exit $?: $(cat "$tmp/err")"; fail=1; continue
    fi
    if same_json "$tmp/out.json" "$fx/$expected"; then
      n=$((n + 1))
    else
      echo "FAIL: $what ($src) differs from $expected:"; cat "$tmp/out.json"; fail=1
    fi
  done
done <"$fx/scenarios.tsv"
echo "ok: $n scenario plans match their expected JSON"

. "$(dirname "$0")/cli_check.sh"
h100=$fx/dgx-h100.xml
export H100=$h100
check "table has the columns" 0 '^task +GPU +NIC +netdev +NUMA +cores +PCIe distance +why this NIC$' -- "$bin" topo --topology "$h100" --tasks 8
check "table shows compact cpu lists" 0 '0-7,16-23' -- "$bin" topo --topology "$h100" --tasks 2
check "table ends with NCCL_IB_HCA" 0 '^NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,' -- "$bin" topo --topology "$h100"
check "help" 0 'write-cache' -- "$bin" topo --help
check "gangway help lists topo" 0 'topo' -- "$bin" help
check "zero tasks" 1 '^gangway topo: .*no tasks' -- "$bin" topo --topology "$h100" --tasks 0
check "GPU index the node lacks" 1 '^gangway topo: GPU index 8 is not on this node' -- "$bin" topo --topology "$h100" --gpus 0,8
check "CPU the node lacks" 1 '^gangway topo: CPU 32 of the step' -- "$bin" topo --topology "$h100" --cpus 30-33
check "bad cpu list" 1 '^gangway topo: bad cpu list' -- "$bin" topo --topology "$h100" --cpus 3-1
check "bad GPU list" 1 '^gangway topo: bad GPU list' -- "$bin" topo --topology "$h100" --gpus x
check "bad task count" 2 'not a task count' -- "$bin" topo --topology "$h100" --tasks -3
check "missing topology file" 1 '^gangway topo: .*cannot be read' -- "$bin" topo --topology "$tmp/nope.xml"
printf 'gangway-topology 1\ncore 0\n' >"$tmp/trunc.cache"
check "truncated cache" 1 '^gangway topo: topology cache .* is corrupt' -- "$bin" topo --topology "$tmp/trunc.cache"
printf '<topology version="2.0"><object' >"$tmp/broken.xml"
check "truncated XML says so, with hwloc's reason" 1 '^gangway topo: topology XML .* is truncated .*hwloc: ' -- "$bin" topo --topology "$tmp/broken.xml"
: >"$tmp/empty.xml"
check "empty file says so" 1 '^gangway topo: topology XML .* is empty; ' -- "$bin" topo --topology "$tmp/empty.xml"
sed 's/<topology version="2.0">/<topology version="3.0">/' "$fx/cpu-2numa.xml" >"$tmp/v3.xml"
check "hwloc 3 XML: how to re-export" 1 'hwloc 3.s XML format.*--export-xml-flags v2' -- "$bin" topo --topology "$tmp/v3.xml"
printf 'hello\n' >"$tmp/text.xml"
check "not XML at all" 1 '^gangway topo: topology XML .* is not XML' -- "$bin" topo --topology "$tmp/text.xml"
check "a GPU listed twice is refused" 1 '^gangway topo: GPU index 0 is listed twice' -- "$bin" topo --topology "$h100" --gpus 0,0
check "a GPU listed twice in ranges too" 1 'GPU index 2 is listed twice' -- "$bin" topo --topology "$h100" --gpus 0-2,2
# Issue 23, item 3: each part of --gpus was bounded alone (2^20 entries), so twenty full-range
# parts took 5.7 s of CPU and 224 MB; now the list is bounded whole and refused at once. Two
# seconds of CPU (ulimit -t: the machine's load does not count) and 256 MiB of address space
# are far above what the refusal takes and below what the old parse did.
twenty=$(awk 'BEGIN { for (i = 0; i < 20; i++) printf "%s0-1048575", i ? "," : "" }')
check "twenty full-range GPU parts are refused at once" 1 '^gangway topo: bad GPU list .*at most 1048576 in all' -- \
  sh -c 'ulimit -t 2 && ulimit -v 262144 && exec "$@"' _ "$bin" topo --topology "$h100" --gpus "$twenty"
check "table says why each unused NIC is not used" 0 '^NIC mlx5_1 \(ibp41s0f0\) not used: on no GPU.s PCIe switch' -- "$bin" topo --topology "$h100"
check "table says SLURM's GPU order" 0 '^GPU indexes: PCI bus id order' -- "$bin" topo --topology "$h100"
check "unknown option" 2 'unknown option "--bogus"' -- "$bin" topo --bogus
check "option without value" 2 'needs a value' -- "$bin" topo --tasks
check "unwritable cache" 1 '^gangway topo: cannot write the topology cache' -- "$bin" topo --topology "$h100" --write-cache /nonexistent-dir/c
check "cache path that is a directory: one line, nothing left" 1 '^gangway topo: cannot write the topology cache .*/isdir \(.*\); that name is a directory' -- sh -c 'mkdir -p "$1/isdir/sub" && "$2" topo --topology "$3" --write-cache "$1/isdir"' _ "$tmp/dirtest" "$bin" "$h100"
[ "$(ls -A "$tmp/dirtest")" = isdir ] && echo "ok: no temporary file left" || { echo "FAIL: left in $tmp/dirtest: $(ls -A "$tmp/dirtest")"; fail=1; }

# Issue 23 item 7: `gangway topo --write-cache`, run as root, into a directory
# other users can write (0777 without the sticky bit, as a shared cache
# directory may be; fs.protected_symlinks guards only sticky ones), where
# another user planted links at the old predictable temporary name
# (PATH.tmp.PID: the pid is known here, bash execs gangway in its own
# process) and at the cache's own name. Before the fix root wrote the cache
# into the first link's target and left the cache a link to it.
shared=$tmp/shared
chmod 0755 "$tmp" && mkdir -m 0777 "$shared" && chmod 0777 "$shared"
printf 'precious\n' >"$tmp/victim" && printf 'precious too\n' >"$tmp/victim2"
as_stranger=()
if [ "$(id -u)" = 0 ] && setpriv --reuid=12345 --regid=12345 --clear-groups true 2>/dev/null; then
  as_stranger=(setpriv --reuid=12345 --regid=12345 --clear-groups)
else
  echo "note: not root (or no setpriv): the links are planted by this user, not another"
fi
out=$(bash -c '"${@:4}" ln -s "$2" "$1.tmp.$$" && "${@:4}" ln -s "$3" "$1" && exec "$GANGWAY_BIN" topo --topology "$H100" --write-cache "$1"' \
      _ "$shared/node.cache" "$tmp/victim" "$tmp/victim2" "${as_stranger[@]}" 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$(cat "$tmp/victim")" = precious ] && [ "$(cat "$tmp/victim2")" = "precious too" ] &&
   [ -f "$shared/node.cache" ] && [ ! -L "$shared/node.cache" ] && [ "$(stat -c %u "$shared/node.cache")" = "$(id -u)" ]; then
  echo "ok: --write-cache writes through no link planted at its temporary or final name"
else
  echo "FAIL: --write-cache and planted links: rc=$rc: $out"; ls -la "$shared"
  echo "victim: $(head -c 80 "$tmp/victim")"; echo "victim2: $(head -c 80 "$tmp/victim2")"; fail=1
fi
check "the cache written beside planted links reads back" 0 '^NCCL_IB_HCA==mlx5_0:1,' -- "$bin" topo --topology "$shared/node.cache"
# Only the cache and the untouched planted link: no temporary file left.
[ "$(find "$shared" -mindepth 1 | wc -l)" = 2 ] && echo "ok: nothing else left in the directory" ||
  { echo "FAIL: left in $shared:"; ls -la "$shared"; fail=1; }

check "fallback NIC says why" 0 '^0 +0004:04:00.0 +mlx5_0:1 .* numa +fallback: no NIC on any GPU.s switch' -- "$bin" topo --topology "$fx/ac922.xml"
check "unused NIC: dead port" 0 '^NIC mlx5_3 \(ib3\) not used: every port is down' -- "$bin" topo --topology "$fx/ac922.xml"
check "unused NIC: management Ethernet" 0 '^NIC enP5p1s0f0 not used: Ethernet without RDMA' -- "$bin" topo --topology "$fx/ac922.xml"
check "display chip is no GPU" 0 '^0 +0000:04:00.0 ' -- "$bin" topo --topology "$fx/es1000-2gpu.xml" --gpus 0
check "AMD in RSMI order" 0 '^GPU indexes: RSMI order from hwloc.s rsmi devices' -- "$bin" topo --topology "$fx/mi50-rsmi.xml"
check "AMD without RSMI devices: the note" 0 '^GPU indexes: PCI bus id order; the topology records no rsmi' -- "$bin" topo --topology "$fx/mi50-pci.xml"
check "RSMI order survives the cache" 0 '^0 +0000:63:00.0 ' -- sh -c '"$1" topo --topology "$2" --write-cache "$3" >/dev/null && "$1" topo --topology "$3"' _ "$bin" "$fx/mi50-rsmi.xml" "$tmp/mi50.cache"
check "GPU-less KNL: two tasks, two halves" 0 '^1 +- +- +- +0 +4-7,12-15 ' -- "$bin" topo --topology "$fx/knl-flat.xml" --gpus none --tasks 2
check "live machine plans" 0 '^NCCL_IB_HCA=' -- "$bin" topo

# The rank order (issue 26): SLURM's topology files, in both formats.
printf 'SwitchName=spine Switches=leafB,leafA\nSwitchName=leafA Nodes=n[0,2]\nSwitchName=leafB Nodes=n[1,3]\n' >"$tmp/topology.conf"
printf -- '- topology: t\n  cluster_default: true\n  block:\n    blocks:\n    - block: b1\n      nodes: n[0,2]\n    - block: b2\n      nodes: n[1,3]\n' >"$tmp/topology.yaml"
check "--ranks: the order by leaf" 0 '^0 +1 +n1 +leafB$' -- "$bin" topo --ranks --nodes 'n[0-3]' --topology-file "$tmp/topology.conf"
check "--ranks: the crossings" 0 "SLURM's order 4 of 4, rank_order=topology 2 of 4" -- "$bin" topo --ranks --nodes 'n[0-3]' --topology-file "$tmp/topology.conf"
check "--ranks: topology.yaml blocks" 0 '^1 +2 +n2 +b1$' -- "$bin" topo --ranks --nodes 'n[0-3]' --topology-file "$tmp/topology.yaml"
check "--ranks: next to SLURM_CONF, yaml first" 0 'blocks, 2 leaves' -- env SLURM_CONF="$tmp/slurm.conf" "$bin" topo --ranks --nodes 'n[0-3]'
check "--ranks: a node missing from the file" 0 '^note: node n9 of the step is not in' -- "$bin" topo --ranks --nodes 'n[0-3],n9' --topology-file "$tmp/topology.conf"
printf 'SwitchName=s Nodes=n1 Colour=red\n' >"$tmp/bad.conf"
check "--ranks: a bad file is one line" 1 'bad.conf: topology.conf line 1: unknown key "Colour"' -- "$bin" topo --ranks --nodes n1 --topology-file "$tmp/bad.conf"
check "--ranks: no file is one line" 1 'no topology.yaml or topology.conf in' -- env SLURM_CONF="$tmp/none/slurm.conf" "$bin" topo --ranks --nodes n1
check "--ranks: without nodes is one line" 2 'needs the nodes' -- env -u SLURM_STEP_NODELIST -u SLURM_JOB_NODELIST "$bin" topo --ranks --topology-file "$tmp/topology.conf"
exit $fail
