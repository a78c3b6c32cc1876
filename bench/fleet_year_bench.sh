#!/bin/bash
# A year of the fleet memory (issue 34, item 3): a store of DAYS days
# (default 365) of the mix bench/fleet_read_bench.sh describes for a
# 2,048-node site, its days older than the raw window (--keep-days, default
# 90) folded into daily medians as the ingest does, then its size, the
# readers' time and peak resident memory on it (bench/fleet_read_bench.sh on
# the kept store) and `fleet ingest`'s time and memory on the last day.
#
# How the year is made: the ingest refuses a report older than --keep-days,
# so days DAYS..2 ago are ingested with --keep-days DAYS+10 (nothing folded
# yet), then one ingest of an empty spool with the configured window folds
# every day before it (timed: what a site's first ingest after raising the
# window would do), and then the last day (yesterday's reports) is ingested
# with the configured window, as every day's ingest runs: that is the day
# 365 figure. Root (the ingest is root's).
# Usage: bench/fleet_year_bench.sh [GANGWAY] [DAYS]
# FLEET_BENCH_DB=FILE: build it there and keep it (default: a temporary one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
GW=${1:-${GANGWAY_BIN:-$here/../_build/launcher/gangway}}
DAYS=${2:-365}
KEEP=${KEEP_DAYS:-90}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "run it as root: gangway fleet ingest is root's" >&2; exit 1; }
W=$(mktemp -d /var/tmp/gangway-fleet-year.XXXXXX)
trap 'rm -rf "$W"' EXIT
DB=${FLEET_BENCH_DB:-$W/fleet.db}
[ -e "$DB" ] && { echo "$DB is there: give a new file" >&2; exit 1; }
now=$(date +%s)
S=$W/spool
day() {  # day D: the mix of the day D days ago into the spool
  local d=$1 t0=$(( now - $1 * 86400 ))
  rm -rf "$S" && mkdir -m 1733 "$S"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" node "$S" 900 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 80 4 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 15 64 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 4 512 "$d"
  FLEET_SYNTH_T0=$t0 $PY "$here/fleet_synth.py" job "$S" 1 2048 "$d"
}
t_ingest=0
for d in $(seq "$DAYS" -1 2); do
  day "$d"
  s=$(date +%s.%N)
  "$GW" fleet ingest --spool "$S" --db "$DB" --keep-days $(( DAYS + 10 )) >/dev/null
  t_ingest=$(awk -v a="$t_ingest" -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { print a + e - s }')
done
echo "days $DAYS..2 ingested in $t_ingest s (about 1,000 checks a day)"
rm -rf "$S" && mkdir -m 1733 "$S"
/usr/bin/time -o "$W/time" -f '%e s, %M KB peak resident' "$GW" fleet ingest --spool "$S" --db "$DB" --keep-days "$KEEP"
echo "the fold of days $DAYS..$(( KEEP + 1 )) into daily medians (--keep-days $KEEP): $(cat "$W/time")"
day 1
n=$(ls "$S" | wc -l)
/usr/bin/time -o "$W/time" -f '%e s, %M KB peak resident' "$GW" fleet ingest --spool "$S" --db "$DB" --keep-days "$KEEP"
echo "day $DAYS: fleet ingest of the day's $n reports: $(cat "$W/time")"
$PY - "$DB" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("pragma wal_checkpoint(truncate)")
p = lambda q: c.execute(q).fetchone()[0]
print("store: %.0f MB in use, %d node-day rows (%d folded), %d points, %d series, %d checks" % (
    (p("pragma page_count") - p("pragma freelist_count")) * p("pragma page_size") / 1e6,
    p("select count(*) from points"), p("select count(*) from points where folded = 1"),
    p("select sum(length(data)) / 24 from points"), p("select count(*) from series"), p("select count(*) from checks")))
PYEOF
ls -la "$DB"
FLEET_BENCH_DB=$DB "$here/fleet_read_bench.sh" "$GW" "$DAYS"
