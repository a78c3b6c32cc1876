#!/bin/bash
# `gangway fleet show` and `--svg` on a store holding node names no honest
# report has (issue 31, items 11 and 12): a NUL (printf's %s stopped there
# and printed a second r01 row), a newline followed by a forged row, an
# escape sequence, a C1 CSI and a control character with XML's specials.
# The rows are written into the store with Python's sqlite3, as a report the
# ingest took before its checks could have left them: the readers must hold
# on their own. Each name is one row, no control character reaches the
# terminal, and the SVG parses as XML.
set -u
. "$(dirname "$0")/lib/script_env.sh"
test_needs_root "fleet ingest makes the store"
test_workdir fleet-hostile
mkdir -m 1733 "$W/spool"
DB=$W/fleet.db
"$GW" fleet ingest --spool "$W/spool" --db "$DB" >"$W/out" 2>&1 || { fail "an empty store: $(cat "$W/out")"; finish; }

$PY - "$DB" <<'EOF' || { fail "writing the rows"; finish; }
import sqlite3, struct, sys, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time()) - 60
names = ["r0%d" % i for i in range(8)] + [
    "r01\x00x", "r09\nr02         gpu_h2d         424.0 GB/s     1 2026-01-01 00:00 - - - 1",
    "r10\x1b[2J\x1b[H", "r11\u009b2J", "r13\x01<&>\"", "r14\ufffe"]
# Schema 2 (issue 34): each name a series; its figures 24-byte points (value, series, uid, seconds
# into the day, check row) in one row per node and day.
series = {}
for n in names:
    cur = db.execute("INSERT INTO series(node, device, peer, peer_class, metric) "
                     "VALUES(?, '0000:1b:00.0', '', 'NVIDIA H100 80GB HBM3', 'gpu_h2d')", (n,))
    series[n] = cur.lastrowid
rows = {}
k = 0
for t in range(now - 30 * 86400 + 3600, now, 6 * 3600):
    k += 1
    cur = db.execute("INSERT INTO checks(id, source, uid, time, job_id, verdict) VALUES(?, 'node_check', 0, ?, '', 'healthy')",
                     ("node-%d" % k, t))
    for i, n in enumerate(names):
        v = 53e9 * (1 + 0.01 * ((k + 7 * i) % 5 - 2))
        day = t // 86400 * 86400
        rows[(n, day)] = rows.get((n, day), b"") + struct.pack("<dIIII", v, series[n], 0, t - day, cur.lastrowid)
for (n, day), data in rows.items():
    db.execute("INSERT INTO points(node, day, folded, data) VALUES(?, ?, 0, ?)", (n, day, data))
db.commit()
EOF

"$GW" fleet show --db "$DB" --svg "$W/t.svg" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$W/err" ] && pass "fleet show reads the store: exit 0" || fail "show: rc=$rc $(cat "$W/err")"
rows=$(grep -vc '^NODE \|^noise ' "$W/out")
[ "$rows" = 14 ] && [ "$(grep -c '^r01 ' "$W/out")" = 1 ] && [ "$(grep -c '^r02 ' "$W/out")" = 1 ] \
  && grep -q '^r01?x ' "$W/out" && grep -q '^r09?r02 ' "$W/out" \
  && pass "fleet show: 14 names, 14 rows; the NUL and the newline neither add an r01 row nor forge an r02 row" \
  || fail "rows: $rows $(cat -A "$W/out" | head -20)"
if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$W/out" || grep -q $'\xc2\x9b' "$W/out"; then
  fail "a control character reaches the terminal: $(cat -A "$W/out" | grep -n '\^\[\|M-BM-' | head -3)"
else pass "fleet show: no control character in its output"; fi
$PY -c 'import sys, xml.etree.ElementTree as e; e.parse(sys.argv[1])' "$W/t.svg" 2>"$W/err" \
  && grep -q 'r13?&lt;&amp;&gt;&quot;' "$W/t.svg" \
  && pass "fleet show --svg: the plots parse as XML (xml.etree), the names escaped" \
  || fail "svg: $(cat "$W/err")"
"$GW" fleet show --db "$DB" --svg "$W/n.svg" $'r01\x01' r10 >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 0 ] && $PY -c 'import sys, xml.etree.ElementTree as e; e.parse(sys.argv[1])' "$W/n.svg" 2>>"$W/err" \
  && pass "fleet show --svg with a named node holding a control character: well-formed" \
  || fail "named svg: rc=$rc $(cat "$W/err")"
finish
