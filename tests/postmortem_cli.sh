#!/bin/bash
# gangway postmortem --records, offline (issue 33): the records of a 64-node,
# 512-rank job written as node.json files (bench/postmortem_sim --write, the
# same simulator as the unit tests' scale case) get the right line for each
# case; a healthy job says nothing stopped it; a record that is not one
# (broken JSON, another job's, too big) is refused in one line naming the
# file, exit 1; a usage error exits 2.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
GW=${GANGWAY_BIN:-$top_builddir/launcher/gangway}
SIM=$top_builddir/bench/postmortem_sim
. "$(dirname "$0")/verdicts.sh"
[ -x "$SIM" ] || { echo "FAIL: $SIM is not built (make check-programs)"; exit 1; }
W=$(mktemp -d /tmp/gangway-postmortem.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT

# case -> what the line must say (the victim is rank 261, gpu032's local 5)
expect() {
  case $1 in
    killed-rank) echo "stopped by rank 261 on gpu032 (local 5): killed by SIGKILL at" ;;
    oom) echo "stopped by rank 261 on gpu032 (local 5): killed by the OOM killer at" ;;
    link-cut) echo "stopped by gpu032 (rank 256, local 0): link down on eth1 at" ;;
    xid) echo "stopped by gpu032 (rank 256, local 0): GPU Xid 79 on 0000:17:00.0 at" ;;
    hang) echo ": rank 261 did not enter collective 49, which 511 other ranks entered; 512 ranks ended" ;;
    hang-late) echo ": rank 261 entered collective 49 20.0 s late, after the 511 other ranks, which waited for it; 512 ranks ended" ;;
    same-exception) echo "failed on every rank: each raised ValueError: loss is nan, the first rank 0 on gpu000 (local 0) at" ;;
  esac
}
for c in killed-rank oom link-cut xid hang hang-late same-exception healthy; do
  mkdir "$W/$c"
  "$SIM" --write "$W/$c" --case "$c" --collectives 50 || { fail "$c: the simulator wrote no records"; continue; }
  out=$("$GW" postmortem --records "$W/$c" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | head -1)
  if [ "$c" = healthy ]; then
    [ $rc = 0 ] && [ "$out" = "gangway: job 4242: every task of its 64 node record(s) ended normally; nothing stopped it" ] &&
      pass "healthy: says nothing stopped it" || fail "healthy: rc $rc: $out"
    continue
  fi
  want=$(expect "$c")
  if [ $rc = 0 ] && [[ $line == "gangway: job 4242 step 0 "* ]] && [[ $line == *"$want"* ]] && [ ${#line} -le 250 ]; then
    pass "$c: $line"
  else
    fail "$c: rc $rc, wanted '$want' in: $line"
  fi
done

# Files as well as a directory, and --lost.
out=$("$GW" postmortem --records "$W/hang/gpu000.json" "$W/hang/gpu001.json" --lost gpu002 2>&1)
[[ $(printf '%s\n' "$out" | head -1) == *"stopped by gpu002: the node was lost"* ]] && pass "--lost with files: the node lost" ||
  fail "--lost: $out"

# Refusals: one line naming the file, exit 1.
cp "$W/xid/gpu000.json" "$W/broken.json" && printf 'x' >>"$W/broken.json"
out=$("$GW" postmortem --records "$W/broken.json" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == *"broken.json: the node record is not valid JSON"* ]] &&
  pass "broken JSON: $out" || fail "broken JSON: rc $rc: $out"
sed 's/"job":4242/"job":7/' "$W/xid/gpu001.json" >"$W/xid-other.json"
out=$("$GW" postmortem --records "$W/xid/gpu000.json" "$W/xid-other.json" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"judge one job's records at a time"* ]] && pass "two jobs' records: refused" || fail "two jobs: rc $rc: $out"
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$W/big.json"
out=$("$GW" postmortem --records "$W/big.json" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass "a 17 MiB file: refused in one line: $out" || fail "17 MiB: rc $rc: $out"
mkdir "$W/empty"
out=$("$GW" postmortem --records "$W/empty" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"no .json record in it"* ]] && pass "an empty directory: refused" || fail "empty dir: rc $rc: $out"
out=$("$GW" postmortem --records "$W/missing.json" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass "a missing file: $out" || fail "missing: rc $rc: $out"

# collect (the Epilog's part) against a kernel log of the test's own (--kmsg-root): only the
# site's Xids of a GPU's fault are evidence. An Xid a program causes (13 here) names no node,
# so it cannot requeue the job without a healthy node or drain it (before, every Xid did).
# Root only: collect takes root's job directory alone.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$W/pm/77" "$W/kroot/dev" && chmod 0711 "$W/pm/77"
  usec=$(python3 -c 'import time; print(int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6))')
  printf '3,1,%s,-;NVRM: Xid (PCI:0000:17:00): 13, pid=4242, name=python3, Graphics Exception\n' "$usec" >"$W/kroot/dev/kmsg"
  collect() { rm -f "$W/pm/77/node.json"; "$GW" postmortem collect --dir="$W/pm" --job=77 --node=n1 --nodes=n1 --kmsg-root="$W/kroot" --print "$@"; }
  out=$(collect --config="$W/none.conf" 2>"$W/c.err"); rc=$?
  if [ $rc = 0 ] && ! grep -q gpu_xid <<<"$out" && grep -q "Xid record(s) in the job's window that a program can cause (13" "$W/c.err" \
     && grep -q "none.conf.*the default Xids are used" "$W/c.err"; then
    pass "collect: a program's Xid 13 is no evidence, with one line each for it and the missing site file"
  else fail "collect, Xid 13: rc $rc: $out $(cat "$W/c.err")"; fi
  printf 'xids=13,79\n' >"$W/site.conf"
  out=$(collect --config="$W/site.conf" 2>"$W/c.err"); rc=$?
  [ $rc = 0 ] && grep -q '"gpu_xid"' <<<"$out" && grep -q '"code":13' <<<"$out" \
    && pass "collect: a site whose xids= lists 13 has it as the GPU's fault" || fail "collect, xids=13: rc $rc: $out $(cat "$W/c.err")"
  printf 'xids=thirteen\n' >"$W/bad.conf"
  out=$(collect --config="$W/bad.conf" 2>"$W/c.err"); rc=$?
  [ $rc = 0 ] && [ -s "$W/pm/77/node.json" ] && grep -q "bad.conf.*the default Xids are used: fix" "$W/c.err" \
    && pass "collect: a bad site file is one line and the record is kept" || fail "collect, bad site file: rc $rc: $(cat "$W/c.err")"

  # The ports: the Prolog's snapshot, then the job's end. A copy of a node's sysfs (the hdr
  # fixture, one ACTIVE port) with counters; the job sees 40 symbol errors (the site allows
  # 10) and its port go down: both are the node's evidence. Another job whose counters did
  # not grow past the allowance has none.
  cp -r "$top_srcdir/tests/fixtures/sysfs/hdr" "$W/sys1" && chmod -R u+w "$W/sys1"
  P=$W/sys1/sys/class/infiniband/mlx5_0/ports/1
  mkdir -p "$P/counters" && echo 100 >"$P/counters/symbol_error" && echo 0 >"$P/counters/link_downed" \
    && echo 0 >"$P/counters/link_error_recovery"
  GANGWAY_SYSFS_ROOT=$W/sys1 "$GW" postmortem snapshot --dir="$W/pm" --job=78; rc=$?
  [ $rc = 0 ] && grep -qx 'mlx5_0/1 symbol_error 100' "$W/pm/78/ports.start" && grep -qx 'mlx5_0/1 active 1' "$W/pm/78/ports.start" \
    && [ "$(stat -c %a "$W/pm/78/ports.start")" = 600 ] && [ "$(stat -c %a "$W/pm/78")" = 711 ] \
    && pass "snapshot: the port's counters and state in root's ports.start (0600, in a 0711 job directory)" \
    || fail "snapshot: rc $rc: $(cat "$W/pm/78/ports.start" 2>&1)"
  echo 140 >"$P/counters/symbol_error"; echo "1: DOWN" >"$P/state"
  out=$(GANGWAY_SYSFS_ROOT=$W/sys1 "$GW" postmortem collect --dir="$W/pm" --job=78 --node=n1 --nodes=n1 --kmsg-root="$W/kroot" \
        --config="$W/site.conf" --print 2>"$W/c.err"); rc=$?
  [ $rc = 0 ] && grep -q '"ib_errors"' <<<"$out" && grep -q 'symbol_error +40 during the job' <<<"$out" \
    && grep -q 'mlx5_0/1 was ACTIVE at the job.s start and is DOWN at its end' <<<"$out" \
    && pass "collect: symbol errors +40 (10 allowed) and the port gone down since the snapshot are the node's evidence" \
    || fail "collect, ports: rc $rc: $out $(cat "$W/c.err")"
  echo "4: ACTIVE" >"$P/state"
  GANGWAY_SYSFS_ROOT=$W/sys1 "$GW" postmortem snapshot --dir="$W/pm" --job=79 && echo 145 >"$P/counters/symbol_error"
  out=$(GANGWAY_SYSFS_ROOT=$W/sys1 "$GW" postmortem collect --dir="$W/pm" --job=79 --node=n1 --nodes=n1 --kmsg-root="$W/kroot" \
        --config="$W/site.conf" --print 2>"$W/c.err"); rc=$?
  [ $rc = 0 ] && ! grep -q '"ib_errors"\|"link_down"' <<<"$out" && pass "collect: +5 symbol errors (within the allowance): no evidence" \
    || fail "collect, ports within the allowance: rc $rc: $out"
  printf 'mlx5_0/1 active 1\ngarbage\n' >"$W/pm/79/ports.start"; rm -f "$W/pm/79/node.json"
  out=$(GANGWAY_SYSFS_ROOT=$W/sys1 "$GW" postmortem collect --dir="$W/pm" --job=79 --node=n1 --nodes=n1 --kmsg-root="$W/kroot" \
        --config="$W/site.conf" --print 2>"$W/c.err"); rc=$?
  [ $rc = 0 ] && grep -q 'ports.start: port snapshot: line 2 is not .*: the ports not compared' "$W/c.err" \
    && pass "collect: a broken snapshot is one line; the record is kept" || fail "collect, broken snapshot: rc $rc: $(cat "$W/c.err")"

  # The links, RDMA devices and GPUs against the Prolog's snapshot, in a network namespace of
  # the test's own (real veths: the kernel counts their carrier changes). dl0 is a data link
  # (its peer dp0 set down mid-job, then up again, or left down); nc0 has had no carrier since
  # it was made (its peer never up: an unplugged port, docker0); vb0 is a bridge whose only port,
  # a container's veth, goes mid-job (docker0 when the last container stops). A copy of a node's sysfs holds
  # an HCA (the hdr fixture) and a GPU whose directory the test removes mid-job.
  if unshare -n true 2>/dev/null; then
    cp -r "$top_srcdir/tests/fixtures/sysfs/hdr" "$W/sys2" && chmod -R u+w "$W/sys2"
    G=$W/sys2/sys/bus/pci/devices/0000:17:00.0
    out=$(GW=$GW W=$W G=$G unshare -n bash -c '
      set -e
      ip link add dl0 type veth peer name dp0 && ip link add nc0 type veth peer name np0
      ip addr add 198.18.250.1/24 dev dl0 && ip addr add 198.18.251.1/24 dev nc0
      ip link set dl0 up && ip link set dp0 up && ip link set nc0 up
      ip link add vb0 type bridge && ip link add vp0 type veth peer name vq0 && ip link set vp0 master vb0
      ip addr add 198.18.252.1/24 dev vb0 && ip link set vb0 up && ip link set vp0 up && ip link set vq0 up && sleep 0.2
      gpu() { mkdir -p "$G" && echo 0x10de >"$G/vendor" && echo 0x2330 >"$G/device" && echo 0x030200 >"$G/class"; }
      snap() { GANGWAY_SYSFS_ROOT=$W/sys2 "$GW" postmortem snapshot --dir="$W/pm" --job=$1; }
      coll() { GANGWAY_SYSFS_ROOT=$W/sys2 "$GW" postmortem collect --dir="$W/pm" --job=$1 --node=n1 --nodes=n1 \
                 --kmsg-root="$W/kroot" --config="$W/site.conf" --print 2>>"$W/l.err"; }
      gpu; snap 81; cp "$W/pm/81/node.start" "$W/node.start.81"
      ip link set dp0 down; sleep 0.1; ip link set dp0 up; ip link del vq0; sleep 0.1; rm -r "$G"
      echo "81 $(coll 81)"
      gpu; snap 82; ip link set dl0 down
      echo "82 $(coll 82)"
      ip link set dl0 up; mkdir -p "$W/pm/83" && chmod 0711 "$W/pm/83"
      echo "83 $(coll 83)"' 2>&1); rc=$?
    j81=$(sed -n 's/^81 //p' <<<"$out"); j82=$(sed -n 's/^82 //p' <<<"$out"); j83=$(sed -n 's/^83 //p' <<<"$out")
    [ $rc = 0 ] && grep -Eq '^link dl0 admin=1 carrier=1 changes=[0-9]+ ups=[1-9][0-9]* downs=[0-9]+$' "$W/node.start.81" \
      && grep -Eq '^link nc0 admin=1 carrier=0 changes=[0-9]+ ups=0 downs=[0-9]+$' "$W/node.start.81" \
      && grep -qx 'hca mlx5_0' "$W/node.start.81" && grep -qx 'gpu 0000:17:00.0' "$W/node.start.81" \
      && [ "$(stat -c %a "$W/pm/81/node.start")" = 600 ] \
      && pass "snapshot: each addressed link's carrier and counters, the HCA and the GPU in root's node.start (0600)" \
      || fail "snapshot, links: rc $rc: $out $(cat "$W/node.start.81" "$W/l.err" 2>&1)"
    grep -Eq '"sign":"link_down","device":"dl0","code":1,"pid":0,"text":"dl0 lost carrier once during the job \(carrier_down_count [0-9]+ -> [0-9]+\), up again at its end"' <<<"$j81" \
      && grep -q '"sign":"gpu_lost"' <<<"$j81" && grep -q 'GPU 0000:17:00.0 present at the job.s start is gone' <<<"$j81" \
      && ! grep -q '"device":"nc0"\|"device":"vb0"' <<<"$j81" && ! grep -q '^link vb0' "$W/node.start.81" \
      && pass "collect: a link down and up again before the Epilog and a GPU gone are the node's evidence; nc0 (never had carrier) and vb0 (a bridge of containers' veths, its last one gone) are not" \
      || fail "collect, link flap: $j81 $(cat "$W/l.err")"
    grep -Eq '"device":"dl0".*dl0 lost carrier once during the job \(carrier_down_count [0-9]+ -> [0-9]+\) and is set down at its end' <<<"$j82" \
      && ! grep -q '"device":"nc0"\|gpu_lost' <<<"$j82" \
      && pass "collect: a link set down mid-job and still down at the Epilog is evidence; nc0 and the GPU still there are not" \
      || fail "collect, link set down: $j82 $(cat "$W/l.err")"
    [ -n "$j83" ] && ! grep -q '"link_down"' <<<"$j83" \
      && pass "collect without a snapshot: nc0, up without carrier but never had any, is not blamed" \
      || fail "collect, no snapshot: $j83 $(cat "$W/l.err")"
  else
    echo "SKIP: the links' cases need a network namespace (unshare -n)"
  fi

  # NVML at the job's end, after an abnormal task end only (the test doubles of tests/fakes: GPU 1,
  # 0000:11:00.0, has a page retirement pending): a SIGKILLed task here, then a healthy job.
  if "$top_srcdir/tests/fakes/build.sh" "$W/fakes" >/dev/null 2>&1; then
    mkdir -p "$W/pm/80" && chmod 0711 "$W/pm/80"
    task() { echo "gangway-task 1 t_ns=$(date +%s%N) node=n1 job=80 step=0 rank=0 local_rank=0 pid=4242 wait_status=$1 oom_kills=0 requeue=0" >"$W/pm/80/task.0.0"; }
    nvml() { rm -f "$W/pm/80/node.json"; env LD_LIBRARY_PATH="$W/fakes" GANGWAY_FAKE_GPUS=2 GANGWAY_FAKE_NVML_PAGES_PENDING=1 \
      "$GW" postmortem collect --dir="$W/pm" --job=80 --node=n1 --nodes=n1 --kmsg-root="$W/kroot" --config="$W/site.conf" --print 2>"$W/c.err"; }
    task 9; out=$(nvml); rc=$?
    [ $rc = 0 ] && grep -q '"retired_pages"' <<<"$out" && grep -q 'GPU 0000:11:00.0: a page retirement waits for a reset' <<<"$out" \
      && pass "collect: after a killed task, NVML's pending page retirement on GPU 0000:11:00.0 is the node's evidence" \
      || fail "collect, NVML: rc $rc: $out $(cat "$W/c.err")"
    task 0; out=$(nvml); rc=$?
    [ $rc = 0 ] && ! grep -q '"retired_pages"' <<<"$out" && pass "collect: every task ended well: NVML not asked" \
      || fail "collect, NVML after a healthy job: rc $rc: $out"
  else fail "the GPU test doubles do not build (tests/fakes/build.sh)"; fi

  # The user's dumps never crowd out root's evidence: 300 ranks ran here, each left a dump of
  # 4,000 characters (1.25 MB in all: before, the whole record went to serve, which takes 1 MiB,
  # and the node's Xid 79 was lost with it), and rank 299's dump claims a rank that ran elsewhere.
  # The kernel log lost records in the window (a flood), and holds another job's OOM kill.
  # Then the dump directory goes whole: a tree, 5,000 files, a link to root's directory outside.
  # (Job 84: job 81 has the links case's snapshot, whose kernel-log mark is the host's own.)
  J=$W/pm/84
  mkdir -p "$J/user/a/b/c" "$W/outside" && chmod 0711 "$J" && touch "$W/outside/keep" && ln -s "$W/outside" "$J/user/a/out"
  python3 - "$J" <<'PY'
import json, sys, time
j = sys.argv[1]
t = time.time_ns()
for r in list(range(300)):
    open(f"{j}/task.0.{r}", "w").write(f"gangway-task 1 t_ns={t + r} node=n1 job=84 step=0 rank={r} local_rank={r} pid={5000 + r} wait_status=9 oom_kills=0 requeue=0\n")
for r in range(300):
    seqs = list(range(100000, 100000 + 290))
    d = {"kind": "gangway-rank-dump", "schema": 2, "rank": 4000 if r == 299 else r, "groups": {"0": {"entered": seqs, "completed": seqs}}, "exception": ""}
    open(f"{j}/user/rank.{r}.json", "w").write(json.dumps(d))
for i in range(5000):
    open(f"{j}/user/f{i}", "w").close()
PY
  mkdir -p "$W/kroot2/dev"
  usec=$(python3 -c 'import time; print(int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6))')
  printf '4,100,%s,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_2000/job_9,task_memcg=/slurm/uid_2000/job_9/step_0,task=python3,pid=777,uid=2000\n3,101,%s,-;NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.\n6,1301,%s,-;after a flood\n' \
    "$usec" "$usec" "$usec" >"$W/kroot2/dev/kmsg"
  out=$("$GW" postmortem collect --dir="$W/pm" --job=84 --node=n1 --nodes=n1 --kmsg-root="$W/kroot2" --config="$W/site.conf" --print 2>"$W/c.err"); rc=$?
  bytes=$(printf '%s' "$out" | wc -c)
  if [ $rc = 0 ] && [ "$bytes" -le 1048576 ] && grep -q '"code":79' <<<"$out" && ! grep -q '"pid":777' <<<"$out" &&
     grep -q 'rank dumps: 1 naming a rank that ran no task here left out; 299 cut to their newest' "$W/c.err" &&
     grep -q "the kernel log lost 1199 record(s) in the job window" <<<"$out"; then
    pass "collect: 300 dumps of 4,000 characters: a record of $bytes bytes (serve takes 1 MiB) with the Xid, another job's OOM kill left out, the log's loss noted"
  else fail "collect, 300 dumps: rc $rc, $bytes bytes: $(head -c 300 <<<"$out") $(cat "$W/c.err")"; fi
  [ ! -e "$J/user" ] && [ -f "$W/outside/keep" ] && [ -z "$(ls -A "$W/pm/.trash" 2>/dev/null)" ] &&
    pass "collect: the dump directory removed whole (a tree, 5,000 files), the link's target left" ||
    fail "collect: the dump directory: $(ls -A "$J/user" 2>&1 | head -3) $(ls "$W/outside" 2>&1)"
  out=$("$GW" postmortem --records "$J/node.json" 2>&1)
  grep -q "n1  the kernel log lost 1199 record(s) in the job window" <<<"$out" && pass "the timeline says what the kernel log lost" ||
    fail "timeline: $out"
  # With the Prolog's mark of the kernel log (its last record at the job's start, 60), the count is
  # exact: every record after it that is missing, those before the oldest left included.
  mkdir -p "$W/kstart/dev" && printf '6,60,1,-;before the job\n' >"$W/kstart/dev/kmsg"
  "$GW" postmortem snapshot --dir="$W/pm" --job=83 --kmsg-root="$W/kstart"; rc=$?
  out=$("$GW" postmortem collect --dir="$W/pm" --job=83 --node=n1 --nodes=n1 --kmsg-root="$W/kroot2" --print 2>&1); rc2=$?
  [ $rc = 0 ] && [ "$(cat "$W/pm/83/kmsg.start")" = "seq 60" ] && [ $rc2 = 0 ] &&
    grep -q "the kernel log lost 1238 record(s) in the job window (numbers 61 to 1300)" <<<"$out" &&
    pass "snapshot's kernel-log mark: collect counts the 1,238 records lost since the job's start" ||
    fail "kernel-log mark: rc $rc/$rc2: $(cat "$W/pm/83/kmsg.start" 2>&1) $out"

  # slurmstepd's samples (root's samples.STEP files): a batch job of 70 steps,
  # each file one round of its task; the newest 64 steps' rows in the record,
  # every file removed; a file that is not the plugin's is a note.
  mkdir -m 0711 "$W/pm/85" && t=$(date +%s%N)
  for st in $(seq 0 69); do
    printf 'gangway-samples 1 step=%s interval_ms=5000\n%s 0 %s 100 10 1\nP %s 2879 0 5 n\n' "$st" "$t" "$([ "$st" = 69 ] && echo T || echo S)" "$t" >"$W/pm/85/samples.$st"
  done
  printf 'gangway-task 1 t_ns=%s node=n1 job=85 step=69 rank=0 local_rank=0 pid=4242 wait_status=15 oom_kills=0 requeue=0\n' "$t" >"$W/pm/85/task.69.0"
  printf 'not a samples file\n' >"$W/pm/85/samples.70"
  chmod 0600 "$W/pm/85"/*
  out=$("$GW" postmortem collect --dir="$W/pm" --job=85 --node=n1 --nodes=n1 --kmsg-root="$W/kroot2" --print 2>"$W/c.err"); rc=$?
  rows=$(python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(len(r.get("samples", [])), len(r.get("pressure", [])), min(x[0] for x in r["samples"]), sum(1 for x in r["samples"] if x[3] == "T"))' <<<"$out" 2>/dev/null)
  if [ $rc = 0 ] && [ "$rows" = "63 63 7 1" ] && grep -q 'task samples of 71 steps: the newest 64' "$W/c.err" && grep -q 'samples.70: the task samples' "$W/c.err" &&
     [ -z "$(ls "$W/pm/85" | grep samples)" ]; then
    pass "collect: samples of 71 steps: the newest 64 read (steps 7-69: 63 rows and their pressure, step 70 refused, step 69's stopped rank among them), the plugin's lines only, every file removed"
  else fail "collect, samples: rc $rc, rows/pressure/oldest step/stopped: $rows; $(cat "$W/c.err"); left: $(ls "$W/pm/85" | grep samples | wc -l)"; fi

  # A base others may write: refused, nothing read or made.
  mkdir -m 0777 "$W/open" && mkdir -p "$W/open/pm/82" && chmod 0711 "$W/open/pm/82"
  out=$("$GW" postmortem collect --dir="$W/open/pm" --job=82 --node=n1 --nodes=n1 --kmsg-root="$W/kroot2" 2>&1); rc=$?
  [ $rc = 1 ] && [[ $out == *"$W/open is writable by group or others"* ]] && [ ! -e "$W/open/pm/82/node.json" ] &&
    pass "collect: a postmortem directory under one others may write is refused: $out" || fail "collect, open parent: rc $rc: $out"

  # A resolver that never answers (a UDP socket on 127.0.0.53 that reads and says nothing, named
  # by a resolv.conf of this test's, bound over /etc/resolv.conf in a private mount namespace,
  # with a 20 s timeout): sending to a host NAME gives up within its deadline (3 s a try, two
  # tries), one line. Before, getaddrinfo had no deadline: 40 s here, and an Epilog past SLURM's
  # Epilog timeout drains its node.
  printf 'nameserver 127.0.0.53\noptions timeout:20 attempts:1\n' >"$W/resolv.conf"
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/key" && chmod 600 "$W/key"
  python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.53", 53))
end = time.time() + 60
while time.time() < end:
    s.settimeout(1)
    try: s.recv(4096)
    except OSError: pass' 2>"$W/dns.err" & dns=$!
  sleep 0.3
  t0=$SECONDS
  out=$(unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && exec "$2" postmortem send "$3" --to http://gangway-admin.example.invalid:9464 --key "$4"' \
        sh "$W/resolv.conf" "$GW" "$W/pm/80/node.json" "$W/key" 2>&1); rc=$?
  took=$((SECONDS - t0)); kill $dns 2>/dev/null; wait $dns 2>/dev/null
  if [ -s "$W/dns.err" ]; then fail "the silent resolver did not start: $(cat "$W/dns.err")"
  elif [ $rc = 1 ] && [ $took -le 12 ] && grep -q "no answer from the resolver within the deadline" <<<"$out"; then
    pass "send to a name the resolver never answers: given up in $took s, one line"
  else fail "send, silent resolver: rc $rc after $took s: $out"; fi
else
  echo "SKIP: collect's Xid and port cases need root (collect takes root's job directory alone)"
fi

# Usage errors: exit 2.
# (Without --records and a JOBID, `gangway postmortem` asks SLURM for the
# user's newest job: tests/postmortem_serve.sh.)
"$GW" postmortem --records >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass "no records named: exit 2" || fail "no records: rc $rc"
"$GW" postmortem --records "$W/xid" --bogus >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass "an unknown option: exit 2" || fail "unknown option: rc $rc"
"$GW" postmortem --help | grep -q -- '--records FILE|DIR' && pass "--help" || fail "--help"
finish
