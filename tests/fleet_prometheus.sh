#!/bin/bash
# gangway fleet metrics and fleet serve against the real thing (issue 25):
# a store filled by `gangway fleet ingest` with three weeks of synthetic
# checks (root's node checks and two users' job checks; one node's NCCL
# figure and one link fall in the last days) and one node check that
# `gangway node-check --level=full --json` wrote on a fixture node with the
# GPU and RDMA test doubles (GPUs, NCCL and ports: issue 34), then
#  - `promtool check metrics` (Debian's, 2.42) accepts `fleet metrics` in
#    both formats, and the degrading node and link are in it;
#  - `fleet serve` on loopback answers /metrics in the format the Accept
#    header asks for, 404 elsewhere, 405 to a POST, 431 to 20 KiB of
#    headers, and closes a 9th connection from one address; with
#    --request-deadline, clients trickling their headers are cut
#    (framing, bodies and busy keep-alive connections:
#    tests/unit/fleet_serve_test.cpp);
#  - Debian's Prometheus scrapes it every second, the target is up, and
#    every panel of contrib/grafana/gangway-fleet.json returns data through
#    Prometheus' HTTP API (a failure names the panel); the GPU, NCCL and
#    port panels also for the real node check's node alone;
#  - SIGTERM stops fleet serve cleanly.
# The path on into VictoriaMetrics: tests/fleet_remote_write.sh.
set -u
. "$(dirname "$0")/fleet_prom_lib.sh"
fleet_requires

fleet_workdir fleet-prom
S=$W/spool DB=$W/fleet.db
mkdir -m 1733 "$S"

# 1. Three weeks of checks (tests/fleet_prom_lib.sh), and node08's real node check.
fleet_history "$S" || { echo "FAIL: the synthetic reports"; exit 1; }
out=$(fleet_real_node_check "$S") && pass "gangway node-check --level=full --json on a fixture node: a report with GPUs, NCCL and ports" \
  || { fail "the real node check: $out"; finish; }
"$GW" fleet ingest --spool "$S" --db "$DB" >"$W/ingest" 2>&1 \
  && grep -q "^gangway fleet ingest: 295 stored, 0 already there, 0 rejected" "$W/ingest" \
  && pass "294 synthetic checks and the real node check ingested" || { fail "ingest: $(cat "$W/ingest")"; finish; }

# 2. fleet metrics, and promtool on both formats.
"$GW" fleet metrics --db "$DB" >"$W/om.txt" 2>"$W/om.err"; rc=$?
[ $rc = 0 ] && [ "$(tail -1 "$W/om.txt")" = "# EOF" ] && pass "fleet metrics: OpenMetrics text ending in # EOF" \
  || fail "fleet metrics: rc=$rc $(cat "$W/om.err") $(tail -2 "$W/om.txt")"
out=$(promtool check metrics <"$W/om.txt" 2>&1) && pass "promtool check metrics accepts the OpenMetrics text" \
  || fail "promtool on OpenMetrics: $out"
"$GW" fleet metrics --db "$DB" --format text --output "$W/gangway.prom" \
  && out=$(promtool check metrics <"$W/gangway.prom" 2>&1) && ! grep -q '# EOF' "$W/gangway.prom" \
  && [ "$(stat -c %a "$W/gangway.prom")" = 644 ] \
  && pass "fleet metrics --format text --output: the classic format, written 0644, accepted by promtool" \
  || fail "text format: $out"
if grep -q '^gangway_node_degrading{node="gpu00003",metric="nccl_busbw"} 1$' "$W/om.txt" \
   && grep -q '^gangway_link_degrading_bytes_per_second{node="gpu00000",peer="gpu00001"} ' "$W/om.txt" \
   && [ "$(grep -c '^gangway_node_degrading{.*} 1$' "$W/om.txt")" = 1 ] && grep -q '^gangway_links_degrading 1$' "$W/om.txt"; then
  pass "the degrading node and link are flagged, nothing else"
else fail "flags: $(grep -E 'degrading' "$W/om.txt" | grep -v ' 0$')"; fi
flagged=$("$GW" fleet flagged --db "$DB" | cut -d' ' -f1,2 | tr '\n' ' ')
[ "$flagged" = "gpu00000->gpu00001 link_bandwidth gpu00003 nccl_busbw " ] \
  && pass "the same flags as gangway fleet flagged" || fail "fleet flagged: $flagged"
grep -q '^gangway_checks_total{source="node_check"} 253$' "$W/om.txt" && grep -q '^gangway_checks_total{source="job_check"} 42$' "$W/om.txt" \
  && grep -q '^gangway_rejected_files_total 0$' "$W/om.txt" && grep -q '^gangway_fleet_last_ingest_timestamp_seconds [0-9]*$' "$W/om.txt" \
  && pass "the ingest's counters: 253 node checks, 42 job checks, 0 rejected, the last ingest's time" \
  || fail "counters: $(grep -E '^gangway_(checks|rejected|fleet_last)' "$W/om.txt")"
# A service user of the store's group reads it without root and without
# write access to its directory (the store keeps its -wal and -shm files).
chgrp 65534 "$DB" "$DB-wal" "$DB-shm" 2>/dev/null
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$GW" fleet metrics --db "$DB" 2>&1)
[ "$out" = "$(cat "$W/om.txt")" ] && pass "a user of the store's group, not root, reads the same metrics" \
  || fail "as uid 65534: $(head -c 300 <<<"$out"); $(ls -l "$W")"
! grep -q 'peer=' <(grep -v '^gangway_link_degrading_bytes_per_second' "$W/om.txt") \
  && pass "no per-pair series but the flagged link's" || fail "per-pair series: $(grep 'peer=' "$W/om.txt" | head -3)"
n08=$(grep -cE '^gangway_(gpu_h2d|gpu_d2h|port_rate)_bytes_per_second\{node="node08",|^gangway_node_nccl_busbw_bytes_per_second\{node="node08"\}' "$W/om.txt")
[ "$n08" = 7 ] && pass "the real node check's figures exported: node08's 2 GPUs both ways, 2 ports, its NCCL bus bandwidth" \
  || fail "node08's series: $n08 of 7; $(grep 'node08' "$W/om.txt" | head -8)"

# 3. fleet serve on loopback, a port the kernel chooses.
start_serve "$W/serve.log" --db "$DB" --cache 0
url=$SERVE_URL
[ -n "$url" ] && pass "fleet serve: $url" || { fail "fleet serve did not start: $(cat "$W/serve.log")"; finish; }
out=$($PY - "$url" <<'PY'
import sys, urllib.request, urllib.error
url = sys.argv[1]
def get(u, accept=None, data=None):
    req = urllib.request.Request(u, data=data, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()
s, t, b = get(url, "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
assert s == 200 and t.startswith("application/openmetrics-text; version=1.0.0") and b.endswith("# EOF\n"), (s, t, b[-20:])
s, t, b = get(url)
assert s == 200 and t.startswith("text/plain; version=0.0.4") and "# EOF" not in b, (s, t)
s, t, b = get(url.replace("/metrics", "/"))
assert s == 404, s
s, t, b = get(url, data=b"x=1")
assert s == 405, s
# The limits: 16 KiB of request headers, 8 connections from one address.
import socket
host, port = url.split("/")[2].split(":")
def raw(req):
    c = socket.create_connection((host, int(port)), timeout=5)
    c.sendall(req)
    out = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            out += d
    except (ConnectionResetError, socket.timeout):
        pass
    c.close()
    return out
big = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"a" * 100) for i in range(200)) + b"\r\n"
r = raw(big)
assert r.startswith(b"HTTP/1.1 431"), r[:80]
idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(8)]
r = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert r == b"", r[:80]
for c in idle:
    c.close()
import time
for _ in range(50):
    r = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    if r:
        break
    time.sleep(0.1)
assert r.startswith(b"HTTP/1.1 200"), r[:80]
print("ok")
PY
)
[ "$out" = ok ] && pass "/metrics: OpenMetrics when asked, the classic format otherwise; 404 elsewhere, 405 to a POST; 431 past 16 KiB of headers; a 9th connection from one address closed" \
  || fail "HTTP: $out"

# 3b. The request deadline: 8 clients trickling a header byte every 0.5 s, which the idle timeout
#     (10 s) never ends, and which held every connection an address may have before: with
#     --request-deadline 2 each connection is cut about 2 s after it opened (the watchdog looks
#     every second), and the next request from that address is answered.
SERVE1=$SERVE
start_serve "$W/serve2.log" --db "$DB" --request-deadline 2
SERVE2=$SERVE SERVE=$SERVE1 url2=$SERVE_URL
out=$($PY - "$url2" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split("/")[2].split(":")
t0 = time.time()
conns = []
for _ in range(8):
    c = socket.create_connection((host, int(port)), timeout=5)
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    c.setblocking(False)
    conns.append(c)
closed = {}
while len(closed) < 8 and time.time() - t0 < 12:
    for i, c in enumerate(conns):
        if i in closed:
            continue
        try:
            if c.recv(4096) == b"":
                closed[i] = time.time() - t0
                continue
        except BlockingIOError:
            pass
        except OSError:
            closed[i] = time.time() - t0
            continue
        try:
            c.send(b"a")
        except OSError:
            closed[i] = time.time() - t0
    time.sleep(0.5)
worst = max(closed.values()) if closed else None
c = socket.create_connection((host, int(port)), timeout=5)
c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
r = c.recv(64)
print("ok %.1f" % worst if len(closed) == 8 and worst < 5 and r.startswith(b"HTTP/1.1 200") else
      "closed %d of 8 (last at %s s), then %r" % (len(closed), worst, r[:20]))
PY
)
# 3c. The text is rebuilt in the background after an ingest (the store's version changed), not
#     only every --cache seconds (300 here): one more node check reaches /metrics within seconds.
checks() { $PY -c 'import re, sys, urllib.request
t = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
m = re.search(r"^gangway_checks_total\{source=\"node_check\"\} (\d+)", t, re.M)
print(m.group(1) if m else "none")' "$url2" 2>&1; }
before=$(checks)
$PY - "$top_srcdir/bench" "$S" <<'PY'
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1])
import fleet_synth as fs
rid, r = fs.node(1, random.Random(7), int(time.time()) - 60)
with open(os.path.join(sys.argv[2], rid + ".json"), "w") as f:
    json.dump(r, f)
PY
"$GW" fleet ingest --spool "$S" --db "$DB" >/dev/null 2>&1
after=$before
for _ in $(seq 50); do after=$(checks); [ "$after" != "$before" ] && break; sleep 0.1; done
[ "$after" = $((before + 1)) ] 2>/dev/null && pass "an ingest reaches fleet serve's text in the background: node checks $before, then $after" \
  || fail "background rebuild: node checks $before, then $after; $(tail -3 "$W/serve2.log")"
fleet_stop "$SERVE2"
if [ "${out%% *}" = ok ] && grep -q 'closed [0-9]* connections\{0,1\} open for over 2 s (--request-deadline)' "$W/serve2.log"; then
  pass "8 clients trickling their headers: cut by --request-deadline 2 (the last at ${out#ok } s), the next request answered"
else fail "request deadline: $out; $(tail -3 "$W/serve2.log")"; fi

# 4. Prometheus scrapes it; every panel of the dashboard returns data.
hostport=${url#http://}; hostport=${hostport%/metrics}
mkdir "$W/prom"
cat >"$W/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gangway
    static_configs:
      - targets: ['$hostport']
EOF
start_prometheus "$W/prom" || { fail "prometheus did not start: $(tail -5 "$W/prom/log")"; finish; }
out=$(prometheus_target_up "$PROM_API") && pass "Prometheus 2.42 scrapes fleet serve: the target is up" \
  || { fail "Prometheus: $out; $(grep -i 'error\|warn' "$W/prom/log" | tail -3)"; finish; }
out=$(dashboard_panels "$PROM_API")
[ "${out%% *}" = ok ] && pass "every panel of the dashboard returns data (${out#ok } queries)" \
  || fail "dashboard through Prometheus: $out; $(grep -i 'error\|warn' "$W/prom/log" | tail -3)"
out=$(dashboard_panels "$PROM_API" node08 'GPU|NCCL|Port|last check')
[ "${out%% *}" = ok ] && pass "its GPU, NCCL, port and last-check panels for node08 alone: the real node check's figures (${out#ok } queries)" \
  || fail "node08's panels: $out"

# 5. SIGTERM: fleet serve stops cleanly.
fleet_stop "$SERVE"; rc=$?
[ $rc = 0 ] && grep -q 'stopped on SIGTERM' "$W/serve.log" && pass "SIGTERM: fleet serve stopped, exit 0" \
  || fail "stop: rc=$rc $(tail -2 "$W/serve.log")"
finish
