#!/bin/bash
# The fleet ingest at scale: synthetic reports (bench/fleet_synth.py) of job
# checks of 4, 64, 512 and 2,048 nodes and of node checks (one node, 8 GPUs,
# 8 ports), each set ingested by `gangway fleet ingest` into a fresh store.
# Prints per set: reports, figures, ingest seconds per check, the ingest's
# peak resident memory (/usr/bin/time), store bytes per check (pages in use
# after a WAL checkpoint), and the bytes per check once everything is folded
# into daily rows (--keep-days 1 on reports 30 days old). Then one 2,048-node
# report alone (issue 34, item 2): into a fresh store, and into a store that
# knows its series already (every day's case), seconds, CPU seconds and peak
# resident MB; with FLEET_BENCH_STORE=FILE also into a copy of that store
# (REPEAT=N times); ONE_ONLY=1: only those.
# Root (the ingest is root's). Usage: bench/fleet_ingest_bench.sh [GANGWAY]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
GW=${1:-${GANGWAY_BIN:-$here/../_build/launcher/gangway}}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "run it as root: gangway fleet ingest is root's" >&2; exit 1; }
W=$(mktemp -d /tmp/gangway-fleet-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
used_bytes() { $PY -c '
import sqlite3,sys
c = sqlite3.connect(sys.argv[1]); c.execute("pragma wal_checkpoint(truncate)")
p = lambda q: c.execute(q).fetchone()[0]
print((p("pragma page_count") - p("pragma freelist_count")) * p("pragma page_size"),
      p("select coalesce(sum(length(data)), 0) / 24 from points"),
      p("select coalesce(sum(length(data)), 0) / 24 from points where folded = 1"))' "$1"; }
printf '%-14s %8s %10s %12s %8s %14s %14s %12s\n' set reports figures "s/check" "peak MB" "bytes/check" "fig/check" "daily B/chk"
run() {  # run NAME KIND COUNT [NODES]
  local name=$1 kind=$2 count=$3 nodes=${4:-}
  local S=$W/$name-spool DB=$W/$name.db
  mkdir -m 1733 "$S"
  # Two days ago: 2,000 reports a minute apart end 14 hours before now (none is refused as from the future).
  FLEET_SYNTH_T0=$(( $(date +%s) - 2 * 86400 )) $PY "$here/fleet_synth.py" "$kind" "$S" "$count" $nodes 1
  local t0 t1; t0=$(date +%s.%N)
  /usr/bin/time -o "$W/time" -f '%M' "$GW" fleet ingest --spool "$S" --db "$DB" >/dev/null
  t1=$(date +%s.%N)
  local kb; kb=$(tail -1 "$W/time")
  read -r bytes figs _ < <(used_bytes "$DB")
  # The same reports 30 days old, folded at once into daily rows.
  local S2=$W/$name-old DB2=$W/$name-old.db
  mkdir -m 1733 "$S2"
  FLEET_SYNTH_T0=$(( $(date +%s) - 30 * 86400 )) $PY "$here/fleet_synth.py" "$kind" "$S2" "$count" $nodes 1
  # Stored within the default window (a report older than --keep-days is refused), then folded
  # by an ingest of the empty spool with --keep-days 1.
  "$GW" fleet ingest --spool "$S2" --db "$DB2" >/dev/null
  "$GW" fleet ingest --spool "$S2" --db "$DB2" --keep-days 1 >/dev/null
  read -r fbytes _ daily < <(used_bytes "$DB2")
  awk -v n="$name" -v c="$count" -v f="$figs" -v s="$(awk "BEGIN{print $t1-$t0}")" -v b="$bytes" -v fb="$fbytes" -v kb="$kb" \
    'BEGIN { printf "%-14s %8d %10d %12.4f %8.0f %14.0f %14.0f %12.0f\n", n, c, f, s / c, kb / 1024, b / c, f / c, fb / c }'
}
one() {  # one 2,048-node report: into a fresh store, then another into the same store
  local S=$W/one-spool DB=$W/one.db
  mkdir -m 1733 "$S"
  $PY "$here/fleet_synth.py" job "$W/one-reports" 2 2048 7
  local first second; first=$(ls "$W/one-reports" | head -1); second=$(ls "$W/one-reports" | tail -1)
  for f in "$first" "$second"; do
    cp "$W/one-reports/$f" "$S/"
    one_timed "$S" "$DB" "$([ "$f" = "$first" ] && echo 'fresh store' || echo 'series known')"
  done
  # FLEET_BENCH_STORE=FILE (the 30-day store of bench/fleet_read_bench.sh):
  # the same two reports into a copy of it, the second timed (the day's
  # rows and the nodes' series there already: every day's case at a site).
  if [ -n "${FLEET_BENCH_STORE:-}" ]; then
    local i
    for i in $(seq "${REPEAT:-1}"); do
      cp "$FLEET_BENCH_STORE" "$W/big.db"
      rm -f "$W/big.db-wal" "$W/big.db-shm"
      cp "$W/one-reports/$first" "$S/" && "$GW" fleet ingest --spool "$S" --db "$W/big.db" >/dev/null
      # The copy's 170 MB written out first: the ingest's sync at its checkpoint would wait for them.
      sync
      cp "$W/one-reports/$second" "$S/" && one_timed "$S" "$W/big.db" "into a copy of $FLEET_BENCH_STORE"
    done
  fi
}
one_timed() {  # one_timed SPOOL DB WHAT: wall, CPU (user + system) and peak resident of one ingest
  local wall user sys kb
  /usr/bin/time -o "$W/time" -f '%e %U %S %M' "$GW" fleet ingest --spool "$1" --db "$2" >/dev/null
  read -r wall user sys kb < "$W/time"
  printf 'one 2,048-node report (%s): %s s, %.2f s CPU, %.0f MB peak resident\n' "$3" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
}
if [ -n "${ONE_ONLY:-}" ]; then  # ONE_ONLY=1: only the 2,048-node report alone (one())
  one
  exit 0
fi
run node-check node 2000
run job-4 job 500 4
run job-64 job 100 64
run job-512 job 20 512
run job-2048 job 5 2048
one
