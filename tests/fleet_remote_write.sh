#!/bin/bash
# Past one host (issue 34, item 5): gangway's series through Prometheus'
# remote_write into a long-term store, VictoriaMetrics' single-node server
# (Debian's victoria-metrics), with the files of contrib/prometheus/:
#  - promtool (Debian's, 2.42) accepts contrib/prometheus/prometheus.yml (the
#    scrape job, the rule file, the remote_write block) and its recording
#    rules (gangway.rules.yml), and its unit tests of them pass
#    (gangway.rules.test.yml: two stores' nodes of one name kept apart, none
#    degrading counted 0);
#  - a store of three weeks of checks and one real node check with GPUs and
#    ports (tests/fleet_prom_lib.sh, as tests/fleet_prometheus.sh), served by
#    `fleet serve` on loopback; VictoriaMetrics and Prometheus on loopback
#    ports the kernel chooses, Prometheus on that prometheus.yml with only the
#    addresses and intervals changed;
#  - through VictoriaMetrics' own Prometheus-compatible API: /api/v1/series
#    holds every series serve exports, no more and no fewer, each with the
#    scrape job and the admin_host external label; /api/v1/query gives serve's
#    values (node08's GPUs, ports and NCCL, the degrading node and link); each
#    recording rule's series arrived and equals its expression evaluated by
#    VictoriaMetrics on the raw series; and every panel of
#    contrib/grafana/gangway-fleet.json returns data with VictoriaMetrics as
#    the data source.
# Every wait is bounded and asks again; nothing asserts how long it took.
set -u
. "$(dirname "$0")/fleet_prom_lib.sh"
fleet_requires victoria-metrics ss
C=$top_srcdir/contrib/prometheus
fleet_workdir fleet-rw

# 1. The files sites copy, as promtool reads them.
out=$(promtool check config "$C/prometheus.yml" 2>&1) && grep -q 'SUCCESS: 1 rule files found' <<<"$out" \
  && pass "promtool check config: contrib/prometheus/prometheus.yml, its rule file found" || fail "check config: $out"
out=$(promtool check rules "$C/gangway.rules.yml" 2>&1) && grep -q 'SUCCESS: 6 rules found' <<<"$out" \
  && pass "promtool check rules: gangway.rules.yml, 6 recording rules" || fail "check rules: $out"
out=$(cd "$C" && promtool test rules gangway.rules.test.yml 2>&1) && grep -q SUCCESS <<<"$out" \
  && pass "promtool test rules: each rule's answer on two stores with a node of the same name (gangway.rules.test.yml)" || fail "test rules: $out"

# 2. The store, and fleet serve on it.
S=$W/spool DB=$W/fleet.db
mkdir -m 1733 "$S"
fleet_history "$S" || { echo "FAIL: the synthetic reports"; exit 1; }
out=$(fleet_real_node_check "$S") || { fail "the real node check: $out"; finish; }
"$GW" fleet ingest --spool "$S" --db "$DB" >"$W/ingest" 2>&1 && grep -q "^gangway fleet ingest: 295 stored, 0 already there, 0 rejected" "$W/ingest" \
  && pass "295 checks ingested (294 synthetic, node08's real node check)" || { fail "ingest: $(cat "$W/ingest")"; finish; }
start_serve "$W/serve.log" --db "$DB" || { fail "fleet serve did not start: $(cat "$W/serve.log")"; finish; }
# What serve exports, in the classic format: every sample line, and the figures the API must give back.
$PY -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$SERVE_URL" >"$W/serve.txt"

# 3. VictoriaMetrics, and Prometheus on contrib/prometheus/prometheus.yml.
mkdir "$W/vm" "$W/prom"
start_victoria_metrics "$W/vm" || { fail "victoria-metrics did not start: $(tail -5 "$W/vm/log")"; finish; }
hostport=${SERVE_URL#http://}; hostport=${hostport%/metrics}
sed -e "s|'10.0.0.5:9464'|'$hostport'|" -e "s|url: http://victoria-metrics.example:8428/|url: $VM_API/|" \
  -e 's/^\(  *\)\(scrape_interval\|evaluation_interval\): 60s/\1\2: 1s/' -e 's/batch_send_deadline: 5s/batch_send_deadline: 1s/' \
  "$C/prometheus.yml" >"$W/prom/prometheus.yml"
cp "$C/gangway.rules.yml" "$W/prom/"
changed=$(diff "$C/prometheus.yml" "$W/prom/prometheus.yml" | grep -c '^>')
out=$(promtool check config "$W/prom/prometheus.yml" 2>&1) && [ "$changed" = 5 ] \
  && pass "the test's prometheus.yml: contrib's, 5 lines changed (serve's and VictoriaMetrics' addresses, 1 s intervals and batches)" \
  || { fail "the test's prometheus.yml ($changed lines changed): $out"; finish; }
start_prometheus "$W/prom" || { fail "prometheus did not start: $(tail -5 "$W/prom/log")"; finish; }
out=$(prometheus_target_up "$PROM_API") && pass "Prometheus scrapes fleet serve: the target is up" \
  || { fail "Prometheus: $out; $(grep -i 'error\|warn' "$W/prom/log" | tail -3)"; finish; }

# 4. gangway's series in VictoriaMetrics, through its own API.
out=$($PY - "$VM_API" "$W/serve.txt" "$C/gangway.rules.yml" <<'PY'
import json, re, sys, time, urllib.parse, urllib.request
vm, served, rules_file = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
def get(path, params):
    with urllib.request.urlopen(vm + path + "?" + urllib.parse.urlencode(params, doseq=True), timeout=10) as r:
        d = json.load(r)
    assert d["status"] == "success", d
    return d["data"]
def query(q):
    return get("/api/v1/query", {"query": q})["result"]
def key(labels):
    return tuple(sorted(labels.items()))
# Serve's sample lines: name{labels} value.
want = {}
for line in served.splitlines():
    if not line or line.startswith("#"):
        continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
    labels["__name__"] = m.group(1)
    want[key(labels)] = float(m.group(3))
extra = {"job": "gangway-fleet", "admin_host": "admin1"}
def strip(labels):
    return key({k: v for k, v in labels.items() if k not in ("job", "instance", "admin_host")})
# 1. /api/v1/series: every series serve exports, each with the scrape job and the external label.
deadline, got = time.time() + 60, []
while True:
    got = get("/api/v1/series", {"match[]": '{__name__=~"gangway_.*"}', "start": int(time.time()) - 3600})
    if {strip(s) for s in got} >= set(want) or time.time() > deadline:
        break
    time.sleep(0.5)
have = {strip(s) for s in got}
missing, more = set(want) - have, have - set(want)
bad = [s for s in got if any(s.get(k) != v for k, v in extra.items())]
if missing or more or bad:
    print("series: %d of %d, missing %s, more %s, without job/admin_host %s" %
          (len(have & set(want)), len(want), sorted(missing)[:3], sorted(more)[:3], bad[:2])); sys.exit(1)
print("series %d" % len(want))
# 2. /api/v1/query: serve's values, among them node08's GPUs, ports and NCCL, and the flags.
checked = 0
for q in ('{__name__=~"gangway_.*", node="node08"}', 'gangway_node_degrading == 1', 'gangway_link_degrading_bytes_per_second',
          'gangway_checks_total'):
    res = query(q)
    if not res:
        print("no answer to", q); sys.exit(1)
    for r in res:
        k = strip(r["metric"])
        if k not in want or abs(float(r["value"][1]) - want[k]) > 1e-9 * max(1.0, abs(want[k])):
            print("%s: %s = %s, serve says %s" % (q, dict(k), r["value"][1], want.get(k))); sys.exit(1)
        checked += 1
n08 = {dict(k)["__name__"] for k in want if dict(k).get("node") == "node08"}
if not {"gangway_gpu_h2d_bytes_per_second", "gangway_gpu_d2h_bytes_per_second", "gangway_port_rate_bytes_per_second",
        "gangway_node_nccl_busbw_bytes_per_second"} <= n08:
    print("node08's figures:", sorted(n08)); sys.exit(1)
flags = sorted((dict(k)["node"], dict(k)["metric"]) for k, v in want.items() if dict(k)["__name__"] == "gangway_node_degrading" and v == 1)
print("values %d %s" % (checked, flags))
# 3. The recording rules: each recorded series arrived, the same labels and values as its
#    expression evaluated by VictoriaMetrics on the raw series.
rules = re.findall(r'- record: (\S+)\n\s+expr: (.+)', rules_file)
for name, expr in rules:
    deadline = time.time() + 30
    while True:
        rec, raw = query(name), query(expr)
        a = {key({k: v for k, v in r["metric"].items() if k != "__name__"}): float(r["value"][1]) for r in rec}
        b = {key({k: v for k, v in r["metric"].items() if k != "__name__"}): float(r["value"][1]) for r in raw}
        # Ages and rates move between two evaluations: their labels must match, their values be near.
        loose = "time()" in expr or "rate(" in expr
        if a and set(a) == set(b) and all(abs(a[k] - b[k]) <= (5 if loose else 1e-9 * max(1.0, abs(b[k]))) for k in a):
            break
        if time.time() > deadline:
            print("rule %s: recorded %s, evaluated %s" % (name, sorted(a.items())[:3], sorted(b.items())[:3])); sys.exit(1)
        time.sleep(0.5)
print("rules %d" % len(rules))
PY
)
series=$(sed -n 's/^series //p' <<<"$out") values=$(sed -n 's/^values //p' <<<"$out") rules=$(sed -n 's/^rules //p' <<<"$out")
[ -n "$series" ] && pass "VictoriaMetrics' /api/v1/series: all $series series serve exports, each with job=\"gangway-fleet\" and admin_host=\"admin1\"" \
  || fail "remote_write: $out; $(grep -i 'error\|warn' "$W/prom/log" | tail -3) $(grep -i 'error\|warn' "$W/vm/log" | tail -3)"
[ "$values" = "${values%% *} [('gpu00003', 'nccl_busbw')]" ] \
  && pass "its /api/v1/query: serve's values (${values%% *} series: node08's GPUs, ports and NCCL, the flags, the counters), gpu00003's NCCL flagged" \
  || fail "values: $out"
[ "$rules" = 6 ] && pass "the 6 recording rules' series arrived, each equal to its expression evaluated in VictoriaMetrics" || fail "rules: $out"
out=$(dashboard_panels "$VM_API")
[ "${out%% *}" = ok ] && pass "every panel of the dashboard returns data from VictoriaMetrics (${out#ok } queries)" \
  || fail "dashboard through VictoriaMetrics: $out"
finish
