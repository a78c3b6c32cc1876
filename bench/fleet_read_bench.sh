#!/bin/bash
# The fleet's readers at scale: a store holding DAYS days (default 30, the
# trends' window) of the mix BENCHMARKS.md assumes for a 2,048-node site at
# 1,000 checks a day (900 node checks of one node, 80 job checks of 4 nodes,
# 15 of 64, 4 of 512, 1 of all 2,048; bench/fleet_synth.py, ingested by
# `gangway fleet ingest` day by day), then the wall time, CPU time and peak resident
# memory (/usr/bin/time) of `fleet show`, `fleet flagged`, `fleet metrics`
# and one cold scrape of `fleet serve`, each of which reads the window series
# by series (issue 34). Root (the ingest is root's).
# Usage: bench/fleet_read_bench.sh [GANGWAY] [DAYS]
# FLEET_BENCH_DB=FILE: build the store there and keep it, or, when FILE is
# already there, time the readers on it without building (REPEAT=N: each
# reader N times).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
GW=${1:-${GANGWAY_BIN:-$here/../_build/launcher/gangway}}
DAYS=${2:-30}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "run it as root: gangway fleet ingest is root's" >&2; exit 1; }
W=$(mktemp -d /var/tmp/gangway-fleet-read.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
DB=${FLEET_BENCH_DB:-$W/fleet.db}
REPEAT=${REPEAT:-1}
now=$(date +%s)
t_ingest=0
build=$DAYS
[ -e "$DB" ] && build=0
for d in $(seq "$build" -1 1); do
  S=$W/spool
  rm -rf "$S" && mkdir -m 1733 "$S"
  t0=$(( now - d * 86400 ))
  # The day's mix, seeded per day (each set's reports a minute apart from t0).
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" node "$S" 900 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 80 4 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 15 64 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 4 512 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 1 2048 "$d"
  s=$(date +%s.%N)
  "$GW" fleet ingest --spool "$S" --db "$DB" >/dev/null
  t_ingest=$(awk -v a="$t_ingest" -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print a + e - s }')
done
# Schema 2: a node's figures of a day are one row of 24-byte points.
figs=$($PY -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select coalesce(sum(length(data)), 0) / 24 from points").fetchone()[0])' "$DB")
echo "store: $DAYS days, $figs figures, $(du -sh "$DB" | cut -f1) ($(ls "$DB"*)), ingested in ${t_ingest} s (0: built before)"
measure() {  # measure NAME CMD...: wall seconds, CPU seconds (user + system) and peak resident MB
  local wall user sys kb
  /usr/bin/time -o "$W/time" -f '%e %U %S %M' "$@" >/dev/null 2>&1 || true
  read -r wall user sys kb < <(tail -1 "$W/time")
  printf '%-16s %8s s %6.2f s CPU %8.0f MB\n' "$2 $3" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
    "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
}
for _ in $(seq "$REPEAT"); do
  measure "$GW" fleet show --db "$DB"
  measure "$GW" fleet flagged --db "$DB"
  measure "$GW" fleet metrics --db "$DB"
done
# fleet serve: with --cache 0 a scrape rebuilds the text from the store (the
# cost of one rebuild); by default the text is built before serve listens and
# rebuilt in the background, so a scrape only copies it.
since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'; }
scrape() {  # scrape NAME CACHE-ARGS...
  local name=$1 s url code pid; shift
  s=$(date +%s.%N)
  "$GW" fleet serve --listen 127.0.0.1:0 --db "$DB" "$@" 2>"$W/serve.log" &
  pid=$!
  for _ in $(seq 1200); do grep -q 'serving http' "$W/serve.log" && break; sleep 0.1; done
  local up; up=$(since "$s")
  url=$(grep -o 'http://[^ ]*/metrics' "$W/serve.log")
  # The serve's CPU (user + system, clock ticks) before and after the scrape: the rebuild's with --cache 0.
  local t0; t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
  s=$(date +%s.%N)
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
  local took; took=$(since "$s")
  local cpu; cpu=$(awk -v t0="$t0" -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15 - t0) / hz }' /proc/$pid/stat)
  printf '%-16s %8s s a scrape (HTTP %s, %s s CPU), %s s to start, serve peak %s MB\n' "$name" "$took" "$code" "$cpu" "$up" \
    "$(awk '/VmHWM/ { print int($2 / 1024) }' /proc/$pid/status)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
for _ in $(seq "$REPEAT"); do
  scrape "serve --cache 0" --cache 0
  scrape "serve (default)"
done
