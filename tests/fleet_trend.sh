#!/bin/bash
# gangway fleet flagged and fleet show's trends on a small spool ingested as a
# site has it: 8 nodes over 30 days, root's node checks (GPU copy rates) and
# two users' job checks (TCP and links); node tn3's GPU drops to 70 % for the
# last 3 days (root's checks see it), the link tn5-tn6 to half (both users'
# jobs see it), and a third user's jobs alone call tn1 slow. `fleet flagged`
# prints the node and the link, one line each, exit 1, and never tn1; a node
# with no flag gives exit 0; a usage error 2; no store 3. `fleet show` has
# the trend columns and `--svg` writes a well-formed SVG.
set -u
. "$(dirname "$0")/lib/script_env.sh"
test_needs_root "chown of the spool's files"
test_workdir fleet-trend
chmod 755 "$W"
S=$W/spool DB=$W/fleet.db
mkdir -m 1733 "$S"

# The reports, by writer: root/ (node checks), u1/ and u2/ (honest jobs), liar/.
$PY - "$W/gen" <<'EOF' || { echo "FAIL: the synthetic reports"; exit 1; }
import json, os, random, sys, time
out = sys.argv[1]
rnd = random.Random(25)
now = int(time.time())
nodes = ["tn%d" % i for i in range(8)]
def noise():
    return 1 + max(-0.04, min(0.04, rnd.gauss(0, 0.02)))
def write(who, rid, r):
    os.makedirs(os.path.join(out, who), exist_ok=True)
    with open(os.path.join(out, who, rid + ".json"), "w") as f:
        json.dump(r, f)
def gpu(node, h2d):
    return {"node": node, "index": 0, "name": "NVIDIA H100 80GB HBM3", "bus_id": "0000:1b:00.0", "pcie_gen": 5,
            "pcie_width": 16, "h2d_gbps": round(h2d, 3), "d2h_gbps": round(50 * noise(), 3), "error": ""}
def job(who, k, t, names, tx, link):
    rid = "job-%s-%d.0.%d.%016x" % (who, k, t, rnd.getrandbits(64))
    r = {"kind": "gangway-job-check", "schema": 2, "id": rid, "time": t, "verdict": "ok", "exit_code": 0,
         "job_id": str(k), "step_id": "0", "mode": "quick", "bootstrap": "tcp", "seconds": 3.5,
         "deadline_s": 60, "expected_bps": 1.25e9, "slow_ratio": 0.5,
         "nodes": [{"name": m, "addr": "198.19.0.%d" % (i + 1), "status": "ok", "tx_bps": tx(m), "rx_bps": 1.2e9 * noise(),
                    "nic_mbps": 10000, "reasons": []} for i, m in enumerate(names)],
         "links": [{"from": names[i], "to": names[(i + 1) % len(names)], "stage": "bandwidth", "ok": True,
                    "bps": link(names[i], names[(i + 1) % len(names)]), "ms": None, "error": ""} for i in range(len(names))],
         "stages": [{"name": "bandwidth", "status": "ok", "detail": "", "seconds": 1.0}],
         "gpus": [], "nccl": [], "ports": [], "findings": [], "notes": []}
    write(who, rid, r)
for k in range(60):                       # every 12 hours for 30 days, the newest an hour ago
    t = now - 3600 - (59 - k) * 43200
    recent = t > now - 3 * 86400
    for m in nodes:
        rid = "node-%s.%d.%016x" % (m, t, rnd.getrandbits(64))
        h2d = 53 * noise() * (0.7 if m == "tn3" and recent else 1)
        write("root", rid, {"kind": "gangway-node-check", "schema": 1, "id": rid, "node": m, "level": "full", "time": t,
                            "seconds": 30.5, "verdict": "healthy",
                            "stages": [{"name": "cuda", "status": "ok", "detail": "1 GPU(s)", "seconds": 2.0}],
                            "records": [], "gpus": [gpu(m, h2d)], "nccl": []})
    for who, dt in (("u1", 600), ("u2", 1200)):
        job(who, k, t + dt, nodes, lambda m: 1.2e9 * noise(),
            lambda a, b: 1.2e9 * noise() * (0.5 if {a, b} == {"tn5", "tn6"} and recent else 1))
    if recent:                            # the third user: tn1 at a third, ten jobs an hour apart
        for j in range(10):
            if t + 1800 + 3600 * j > now:     # none in the future: the ingest refuses those (issue 31, item 5)
                break
            job("liar", 100 * k + j, t + 1800 + 3600 * j, ["tn0", "tn1", "tn2"],
                lambda m: 1.2e9 * noise() * (0.33 if m == "tn1" else 1),
                lambda a, b: 1.2e9 * noise() * (0.33 if "tn1" in (a, b) else 1))
EOF
cp "$W"/gen/root/*.json "$W"/gen/u1/*.json "$W"/gen/u2/*.json "$W"/gen/liar/*.json "$S"/
(cd "$W/gen/u1" && for f in *.json; do chown 65534 "$S/$f"; done)   # nobody
(cd "$W/gen/u2" && for f in *.json; do chown 1 "$S/$f"; done)       # daemon
(cd "$W/gen/liar" && for f in *.json; do chown 2 "$S/$f"; done)     # bin
out=$("$GW" fleet ingest --spool "$S" --db "$DB" 2>&1); rc=$?
[ $rc = 0 ] && grep -q " 0 rejected" <<<"$out" && pass "the synthetic spool is ingested ($(grep -o '[0-9]* stored' <<<"$out"))" \
  || { fail "ingest: rc=$rc $out"; finish; }

# fleet flagged: the node and the link, one line each, exit 1; never tn1.
"$GW" fleet flagged --db "$DB" >"$W/out" 2>"$W/err"; rc=$?
lines=$(wc -l <"$W/out")
if [ $rc = 1 ] && [ "$lines" = 2 ] && [ ! -s "$W/err" ] \
   && grep -Eq '^tn3 gpu_h2d 0000:1b:00.0 [0-9]+ [0-9]+ [0-9]+ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' "$W/out" \
   && grep -Eq '^tn5->tn6 link_bandwidth - [0-9]+ [0-9]+ [0-9]+ [0-9T:Z-]+$' "$W/out" && ! grep -q tn1 "$W/out"; then
  pass "fleet flagged: tn3's GPU and the link tn5->tn6, one line each, exit 1; one user's tn1 is not there"
else fail "flagged: rc=$rc $(cat "$W/out" "$W/err")"; fi
read -r _ _ _ recent baseline peers _ < <(grep '^tn3 ' "$W/out")
[ "$recent" -lt "$baseline" ] && [ "$recent" -lt "$peers" ] && [ "$baseline" -gt 45000000000 ] \
  && pass "tn3's line: recent $recent below baseline $baseline and peers $peers (bytes per second)" \
  || fail "tn3's figures: $recent $baseline $peers"
"$GW" fleet flagged --db "$DB" tn0 tn1 >"$W/out" 2>&1; rc=$?
[ $rc = 0 ] && [ ! -s "$W/out" ] && pass "fleet flagged tn0 tn1: nothing, exit 0" || fail "flagged tn0: rc=$rc $(cat "$W/out")"
"$GW" fleet flagged --db "$DB" tn6 >"$W/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q '^tn5->tn6 ' "$W/out" && pass "fleet flagged tn6: the link, named at either end" \
  || fail "flagged tn6: rc=$rc $(cat "$W/out")"
"$GW" fleet flagged --db "$DB" --bogus >"$W/out" 2>&1; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$W/out")" = 1 ] && pass "fleet flagged --bogus: one line, exit 2" || fail "usage: rc=$rc $(cat "$W/out")"
"$GW" fleet flagged --db "$DB" --days 3 --recent-days 3 >"$W/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "must be fewer than --days" "$W/out" && pass "a recent window as long as the history: exit 2" \
  || fail "windows: rc=$rc $(cat "$W/out")"
"$GW" fleet flagged --db "$W/none.db" >"$W/out" 2>&1; rc=$?
[ $rc = 3 ] && [ ! -e "$W/none.db" ] && pass "fleet flagged without a store: exit 3, nothing created" || fail "no db: rc=$rc $(cat "$W/out")"

# fleet show: the trend columns; --svg writes a well-formed SVG.
"$GW" fleet show --db "$DB" --svg "$W/trends.svg" >"$W/out" 2>"$W/err"; rc=$?
if [ $rc = 0 ] && grep -q '^NODE .* BASELINE  *TREND  *FLAG ' "$W/out" \
   && grep -Eq '^tn3 +gpu_h2d .* -[23][0-9]\.[0-9] % +degrading 0000:1b:00.0 ' "$W/out" \
   && grep -Eq '^tn5 +link_bandwidth .* degrading -> tn6 ' "$W/out" && grep -Eq '^tn6 +link_bandwidth .* degrading -> tn5 ' "$W/out" \
   && ! grep -q '^tn1 .*degrading' "$W/out" && grep -q '^noise gpu_h2d NVIDIA H100 80GB HBM3: 8 series' "$W/out"; then
  pass "fleet show: baseline, trend and flag columns; tn3 and the link degrading, tn1 not; the fleet's noise"
else fail "show: rc=$rc $(cat "$W/out" "$W/err")"; fi
if command -v xmllint >/dev/null; then wf() { xmllint --noout "$1"; }
else wf() { $PY -c 'import sys, xml.etree.ElementTree as e; e.parse(sys.argv[1])' "$1"; }; fi
[ -s "$W/trends.svg" ] && wf "$W/trends.svg" && grep -q 'tn3 (degrading)' "$W/trends.svg" \
  && [ "$(stat -c %s "$W/trends.svg")" -lt 400000 ] && pass "fleet show --svg: a well-formed SVG with tn3 marked" \
  || fail "svg: $(head -c 300 "$W/trends.svg" 2>&1)"
"$GW" fleet show --db "$DB" --svg "$W/tn1.svg" tn1 >"$W/out" 2>&1; rc=$?
[ $rc = 0 ] && ! grep -v '^NODE\|^tn1 ' "$W/out" | grep -q . && wf "$W/tn1.svg" && ! grep -q degrading "$W/out" \
  && grep -Eq '^tn1 +tcp_send .* -[5-7][0-9]\.[0-9] % +- ' "$W/out" \
  && pass "fleet show tn1: its rows only; its TCP median far down (one user's figures) yet not degrading; its plots well-formed" \
  || fail "show tn1: rc=$rc $(cat "$W/out")"
"$GW" fleet show --db "$DB" --svg "$W/no/such/dir/x.svg" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && pass "--svg into a missing directory: one line, exit 1" \
  || fail "svg no dir: rc=$rc $(cat "$W/err")"
finish
