#!/bin/bash
# The torch hook (torch-hook/gangway_torch_postmortem.py) on this host's
# PyTorch (Debian 12's 1.13, which keeps no Flight Recorder), imported by
# hand as its users do, in a real 2-rank gloo job on loopback: with the
# watch on (GANGWAY_WATCH_INTERVAL) it records torch.distributed's
# collectives itself, numbered per group as the Flight Recorder numbers
# them, and writes each rank's pace report from them; a rank that stops
# calling collectives shows in its peer's report (entered one it never
# completes), and dump.request writes the rank's dump at once; with the
# watch off nothing is wrapped and no report is written. The cluster tests
# (watch.sh on 22.05) judge such reports; this one checks what they hold.
set -u
. "$(dirname "$0")/lib/script_env.sh"
$PY -c 'import torch.distributed' 2>/dev/null || test_skip "Debian's python3-torch is not installed (apt-get install python3-torch)"
test_workdir torch-hook
JOB=$top_srcdir/tests/torch_hook_job.py
HOOK=$top_srcdir/torch-hook
# As the users run it: the ranks as an unprivileged user (nobody), writing
# into a directory of theirs as the plugin makes it (0700, the job's owner),
# from copies of the hook and the job that user can read wherever the
# checkout is.
RUN_AS=() who="root (no setpriv)"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  RUN_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --) who="uid 65534"
  chmod 711 "$W" && cp -r "$HOOK" "$W/hook" && cp "$JOB" "$W/job.py" && chmod -R a+rX "$W/hook" "$W/job.py"
  HOOK=$W/hook JOB=$W/job.py
fi
port=$((29600 + RANDOM % 300))
# run_job MODE DIR [ENV...]: both ranks; their stdout in DIR/out.RANK
run_job() {
  local mode=$1 d=$2; shift 2
  mkdir -p "$d" && chmod 700 "$d"
  [ ${#RUN_AS[@]} = 0 ] || chown 65534:65534 "$d"
  port=$((port + 1))
  for r in 0 1; do
    "${RUN_AS[@]}" env HOME="$d" GANGWAY_POSTMORTEM_DIR="$d" RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      HOOK_DIR="$HOOK" HOOK_MODE="$mode" "$@" $PY "$JOB" >"$d/out.$r" 2>"$d/err.$r" &
    eval "pid$r=\$!"
  done
}
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@" 2>/dev/null; }

# 1. The watch on: every collective recorded, the same numbers on both ranks.
run_job run "$W/run" GANGWAY_WATCH_INTERVAL=1
wait "$pid0"; rc0=$?; wait "$pid1"; rc1=$?
[ $rc0 = 0 ] && [ $rc1 = 0 ] && pass "1: both ranks ran (as $who) and their all-reduces summed right, wrapped" \
  || fail "1: the ranks' exits $rc0 $rc1: $(tail -3 "$W/run/err.0" "$W/run/err.1")"
line=$(cat "$W/run/out.0")
[[ $line == *'"recorder": true'*'"name": "all_reduce"'* ]] && pass "1: the recorder is installed where torch keeps no Flight Recorder: $line" \
  || fail "1: rank 0 said: $line"
calls=$($PY -c 'import json,sys; print(json.loads(sys.stdin.read())["calls"])' <"$W/run/out.0")
for r in 0 1; do
  f=$W/run/pace.$r.json
  [ -f "$f" ] || { fail "1: no pace.$r.json: $(ls "$W/run")"; continue; }
  got=$(field "$f" '(d["kind"], d["rank"], sorted(d["groups"]), d["groups"]["0"]["entered"], d["groups"]["0"]["completed"], len(d["groups"]["0"]["enters"]))')
  # all_gather_object's own all_gather (and the sizes' one) count too: calls + 2.
  want="('gangway-rank-pace', $r, ['0'], $((calls + 2)), $((calls + 2)), 64)"
  [ "$got" = "$want" ] && pass "1: rank $r's report: $got" || fail "1: rank $r's report: $got, not $want"
  order=$(field "$f" 'all(b[0] == a[0] + 1 and b[1] >= a[1] > 0 for a, b in zip(d["groups"]["0"]["enters"], d["groups"]["0"]["enters"][1:]))')
  [ "$order" = True ] && pass "1: rank $r's entries numbered one by one, their times in order" || fail "1: rank $r's enters: $(field "$f" 'd["groups"]["0"]["enters"][:4]')"
done

# 2. A rank that stops calling: its peer entered one more than it completed.
run_job hang "$W/hang" GANGWAY_WATCH_INTERVAL=1 HOOK_CALLS=40
for _ in $(seq 100); do [ -s "$W/hang/out.1" ] && [ -s "$W/hang/out.0" ] && break; sleep 0.1; done
sleep 2.5  # two reports after the last collective rank 1 completed
e0=$(field "$W/hang/pace.0.json" '(d["groups"]["0"]["entered"], d["groups"]["0"]["completed"])')
e1=$(field "$W/hang/pace.1.json" '(d["groups"]["0"]["entered"], d["groups"]["0"]["completed"])')
n1=$($PY -c 'import json,sys; print(json.loads(sys.stdin.read())["calls"] + 2)' <"$W/hang/out.1" 2>/dev/null)
[ "$e0" = "($((n1 + 1)), $n1)" ] && [ "$e1" = "($n1, $n1)" ] && pass "2: rank 0 waits in collective $((n1 + 1)), rank 1 never entered it: $e0 and $e1" \
  || fail "2: the reports: rank 0 $e0, rank 1 $e1 (rank 1 made $n1)"
: >"$W/hang/dump.request"
for _ in $(seq 30); do [ -f "$W/hang/rank.0.json" ] && [ -f "$W/hang/rank.1.json" ] && break; sleep 0.1; done
d0=$(field "$W/hang/rank.0.json" '(d["kind"], d["groups"]["0"]["entered"][-1], d["groups"]["0"]["completed"][-1])')
[ "$d0" = "('gangway-rank-dump', $((n1 + 1)), $n1)" ] && pass "2: dump.request: rank 0's dump at once, entered $((n1 + 1)), completed $n1" \
  || fail "2: rank 0's dump: $d0 ($(ls "$W/hang"))"
kill "$pid0" "$pid1" 2>/dev/null; wait "$pid0" "$pid1" 2>/dev/null

# 3. The watch off: nothing wrapped, no report.
run_job run "$W/off" HOOK_CALLS=20 HOOK_LINGER=0
wait "$pid0"; wait "$pid1"
line=$(cat "$W/off/out.0")
[[ $line == *'"recorder": false'* ]] && ! ls "$W/off"/pace.* >/dev/null 2>&1 && pass "3: the watch off: nothing wrapped, no report" \
  || fail "3: rank 0 said $line; files: $(ls "$W/off")"
finish
