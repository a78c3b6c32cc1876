# Sourced by the script tests that run the real Prometheus against
# `gangway fleet serve` (tests/fleet_prometheus.sh, tests/fleet_remote_write.sh):
# the synthetic three weeks of checks, one real node check with GPUs and
# ports, starting serve, Prometheus and VictoriaMetrics on loopback ports the
# kernel chooses, stopping them on exit, and the dashboard's panels queried
# one by one. Sourced first: it sources the script tests' one preamble
# (lib/script_env.sh: top_builddir, top_srcdir, GW, PY, verdicts.sh).
. "$(dirname "${BASH_SOURCE[0]}")/lib/script_env.sh"

# fleet_requires [COMMAND...]: root (fleet ingest, and the spool's files given
# their owners), Debian's prometheus and promtool, and each COMMAND, or skip.
fleet_requires() {
  local p
  test_needs_root "fleet ingest, and the spool's files given their owners"
  for p in prometheus promtool "$@"; do
    command -v "$p" >/dev/null || test_skip "$p is not installed (contrib/dev/install-deps.sh installs it)"
  done
}

# fleet_workdir NAME: W, a fresh directory every service user can enter;
# every process started by start_* is stopped and W removed on exit (KEEP=1 keeps W).
FLEET_PIDS=()
fleet_workdir() {
  W=$(mktemp -d "/tmp/gangway-$1.XXXXXX")
  chmod 755 "$W"
  trap fleet_cleanup EXIT
}
# Last started, first stopped, each gone before the next: Prometheus flushes
# its remote_write queue when stopped, for up to a minute while the store
# does not answer.
fleet_cleanup() {
  local i
  for ((i = ${#FLEET_PIDS[@]} - 1; i >= 0; i--)); do
    kill "${FLEET_PIDS[i]}" 2>/dev/null && wait "${FLEET_PIDS[i]}" 2>/dev/null
  done
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}
# fleet_stop PID: SIGTERM, and its exit status once it is gone.
fleet_stop() {
  local p=$1 rc q _ left=()
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  wait "$p"; rc=$?
  for q in "${FLEET_PIDS[@]}"; do [ "$q" = "$p" ] || left+=("$q"); done
  FLEET_PIDS=("${left[@]}")
  return $rc
}

# fleet_history SPOOL: three weeks of checks, 294 files: every node's node check
# twice a day (root's; 6 nodes gpu00000-gpu00005 of 8 GPUs and 8 ports), one job
# check a day from each of two users. gpu00003's NCCL bus bandwidth (in every
# check) and the link gpu00000 -> gpu00001 lose half in the last two days.
fleet_history() {
  $PY - "$top_srcdir/bench" "$1" <<'PY'
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1])
import fleet_synth as fs
spool = sys.argv[2]
rnd = random.Random(25)
now = int(time.time())
days, nodes = 21, 6
def put(rid, r, uid):
    path = os.path.join(spool, rid + ".json")
    with open(path, "w") as f:
        json.dump(r, f)
    os.chown(path, uid, uid)
for d in range(days):
    late = d >= days - 2
    for half in (0, 1):
        t = now - (days - d) * 86400 + half * 43200 + 600
        for k in range(nodes):
            rid, r = fs.node(k, rnd, t + k)
            if late and r["node"] == "gpu00003":
                for n in r["nccl"]:
                    n["busbw_gbps"] = round(n["busbw_gbps"] / 2, 2)
            put(rid, r, 0)
    for u, uid in enumerate((65534, 65533)):
        rid, r = fs.job(nodes, 0, rnd, now - (days - d) * 86400 + 3600 * (u + 1))
        if late:
            for l in r["links"]:
                if l["from"] == "gpu00000" and l["to"] == "gpu00001":
                    l["bps"] /= 2
            for n in r["nccl"]:
                if n["node"] == "gpu00003":
                    n["busbw_gbps"] = round(n["busbw_gbps"] / 2, 2)
        put(rid, r, uid)
PY
}

# fleet_real_node_check SPOOL: `gangway node-check --level=full --json
# --fleet-spool=SPOOL` on a fixture node (tests/fixtures/node/make-node.sh, its
# RoCE variant) with the GPU and RDMA test doubles, as root: node08, 2 H100s
# with their copy figures, its NCCL all-reduce, 2 ports at 100 Gb/s, and the
# report it drops into the spool itself, as on a site's node.
fleet_real_node_check() {
  local spool=$1 d=$W/node08 f
  mkdir -p "$d/etc"
  "$top_srcdir/tests/fakes/build.sh" "$d/fakes" >"$d/build.log" 2>&1 || { echo "the GPU test doubles do not build: $(tail -3 "$d/build.log")"; return 1; }
  "$top_srcdir/tests/fixtures/node/make-node.sh" "$d/tree" roce || return 1
  : >"$d/etc/slurm.conf"
  echo "NodeName=node08 Name=gpu Type=h100 File=/dev/nvidia[0-1]" >"$d/etc/gres.conf"
  printf 'h2d_gbps=0.01\nrdma_ratio=0.04\nnccl_busbw_gbps=0.001\n' >"$d/node-check.conf"
  env LD_LIBRARY_PATH="$d/fakes" GANGWAY_FAKE_GPUS=2 GANGWAY_FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" SLURMD_NODENAME=node08 \
    SLURM_CONF="$d/etc/slurm.conf" GANGWAY_SYSFS_ROOT="$d/tree" GANGWAY_NCCL_LIB="$d/fakes/libnccl.so.2" \
    GANGWAY_NCCL_BYTES=4194304 GANGWAY_COPY_BYTES=4194304 GANGWAY_FAKE_IB_DEVICES=mlx5_0,mlx5_1 GANGWAY_FAKE_IB_GBPS=8 \
    "$GW" node-check --config="$d/node-check.conf" --level=full --state="$d/state" --json --fleet-spool="$spool" \
    >"$d/out.json" 2>"$d/err" || { echo "node-check: $(cat "$d/err")"; return 1; }
  f=$(ls "$spool"/node-node08.*.json 2>/dev/null)
  [ -n "$f" ] && [ "$(wc -l <<<"$f")" = 1 ] || { echo "node-check dropped no report into the spool: $(cat "$d/err")"; return 1; }
  $PY -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not (r.get("gpus") and r.get("nccl") and any(x["check"] == "port-rate" for x in r["records"])))' "$f" \
    || { echo "node-check's report has no GPUs, NCCL or port rates: $(head -c 300 "$f")"; return 1; }
}

# start_serve LOG [ARGS...]: fleet serve on 127.0.0.1, a port the kernel
# chooses; SERVE its pid, SERVE_URL its /metrics.
start_serve() {
  local log=$1 _; shift
  "$GW" fleet serve --listen 127.0.0.1:0 "$@" 2>"$log" &
  SERVE=$!
  FLEET_PIDS+=("$SERVE")
  for _ in $(seq 50); do grep -q 'serving http' "$log" && break; sleep 0.1; done
  SERVE_URL=$(grep -o 'http://[^ ]*/metrics' "$log")
  [ -n "$SERVE_URL" ]
}

# start_prometheus DIR: Debian's Prometheus on DIR/prometheus.yml, its
# database in DIR/data, on 127.0.0.1, a port the kernel chooses (which it
# logs); PROM its pid, PROM_API its http://ADDR:PORT.
start_prometheus() {
  local dir=$1 a= _
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address=127.0.0.1:0 >"$dir/log" 2>&1 &
  PROM=$!
  FLEET_PIDS+=("$PROM")
  for _ in $(seq 100); do
    a=$(grep -o 'msg="Listening on" address=127.0.0.1:[0-9]*' "$dir/log" | grep -o '127.0.0.1:[0-9]*$')
    [ -n "$a" ] && break; sleep 0.1
  done
  PROM_API=${a:+http://$a}
  [ -n "$a" ]
}

# start_victoria_metrics DIR: Debian's VictoriaMetrics single-node server, its
# data in DIR/data, on 127.0.0.1, a port the kernel chooses (it logs only the
# address it was given: ss finds the port); samples visible 1 s after they
# arrive (30 s by default) and no response cache (a test asks again until
# they are there); VM its pid, VM_API its http://ADDR:PORT.
start_victoria_metrics() {
  local dir=$1 a= _
  victoria-metrics -httpListenAddr=127.0.0.1:0 -storageDataPath="$dir/data" \
    -search.latencyOffset=1s -search.disableCache >"$dir/log" 2>&1 &
  VM=$!
  FLEET_PIDS+=("$VM")
  for _ in $(seq 100); do
    a=$(ss -Hltnp 2>/dev/null | grep "pid=$VM," | grep -o '127.0.0.1:[0-9]*' | head -1)
    [ -n "$a" ] && break; sleep 0.1
  done
  VM_API=${a:+http://$a}
  [ -n "$a" ]
}

# prometheus_target_up API: waits (30 s at most) until the one target of the
# Prometheus at API is up; says what it is otherwise.
prometheus_target_up() {
  $PY - "$1" <<'PY'
import json, sys, time, urllib.request
deadline = time.time() + 30
while True:
    with urllib.request.urlopen(sys.argv[1] + "/api/v1/targets", timeout=5) as r:
        targets = json.load(r)["data"]["activeTargets"]
    if targets and targets[0]["health"] == "up":
        break
    if time.time() > deadline:
        print("target not up:", targets); sys.exit(1)
    time.sleep(0.25)
PY
}

# dashboard_panels API [NODE [TITLES]]: every query of every panel of the
# Grafana dashboard (those whose title matches the regex TITLES, when given)
# through API's /api/v1/query (Prometheus' or VictoriaMetrics'), the
# dashboard's variables substituted ($node: NODE, which must be one of the
# values the variable's own query offers; its "All" value when none given or .*). Each query is asked again until 20 s have passed (rate() and increase()
# want two samples in their window). Prints "ok N" (N queries), or "no data:"
# and the panels whose queries returned nothing, by title.
dashboard_panels() {
  $PY - "$1" "$top_srcdir/contrib/grafana/gangway-fleet.json" "${2:-.*}" "${3:-}" <<'PY'
import json, re, sys, time, urllib.parse, urllib.request
api, dash, node, titles = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
def get(path, **q):
    with urllib.request.urlopen(api + path + "?" + urllib.parse.urlencode(q), timeout=5) as r:
        return json.load(r)
# The node variable's choices, as Grafana asks for them (label_values(METRIC, node)):
# "All" is its allValue, and a node asked for must be one of them.
var = [v for v in dash["templating"]["list"] if v["name"] == "node"][0]
m = re.fullmatch(r"label_values\((\w+), *(\w+)\)", var["definition"])
choices = get("/api/v1/label/%s/values" % m.group(2), **{"match[]": m.group(1)})["data"]
if node == ".*":
    node = var["allValue"]
elif node not in choices:
    print("no data: the node variable offers %s, not %s" % (choices, node)); sys.exit(1)
subst = {"$__rate_interval": "15s", "$__range": "1m", "$__interval": "1s", "${node}": node, "$node": node}
untargeted = [p["title"] for p in dash["panels"] if p.get("type") != "row" and not any(t.get("expr") for t in p.get("targets", []))]
if untargeted:
    print("no data: panels without a query:", untargeted); sys.exit(1)
panels = [(p["title"], t["expr"]) for p in dash["panels"] for t in p.get("targets", [])
          if re.search(titles, p["title"])]
if len(panels) < (10 if not titles else 1):
    print("only", len(panels), "queries in the dashboard"); sys.exit(1)
empty = []
deadline = time.time() + 20
for title, e in panels:
    q = e
    for k, v in subst.items():
        q = q.replace(k, v)
    if "$" in q:
        print("a Grafana variable left in panel %r: %s" % (title, q)); sys.exit(1)
    while True:
        r = get("/api/v1/query", query=q)
        if r["status"] == "success" and r["data"]["result"]:
            break
        if time.time() > deadline:
            empty.append("%r (%s)" % (title, q))
            break
        time.sleep(0.5)
print("ok %d" % len(panels) if not empty else "no data: " + " | ".join(empty))
PY
}
