#!/bin/bash
# The coordinator's cost per size (BENCHMARKS.md, "The coordinator at scale"):
# bench/coordinator_sim at each size, REPEATS times, one line of figures per
# run, then a least-squares fit (a + b*N + c*N^2) of each figure and what it
# predicts at 512 and 2,048 nodes.
#   bench/coordinator_scale.sh [SIZES="4 16 32 64 128 512 2048"] [REPEATS=3] [-- ARGS for coordinator_sim]
# Run from the build directory (make bench/coordinator_sim first). It raises
# the soft descriptor limit to the hard one: 2,048 nodes need about 4,400.
set -eu
SIZES=${1:-"4 16 32 64 128 512 2048"}
REPEATS=${2:-3}
shift $(($# > 2 ? 2 : $#)); [ "${1:-}" = -- ] && shift
ulimit -n "$(ulimit -Hn)"
SIM=${SIM:-bench/coordinator_sim}
OUT=$(mktemp -d /tmp/gangway-coordinator-scale.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
for n in $SIZES; do
  for r in $(seq "$REPEATS"); do
    "$SIM" --nodes="$n" --out="$OUT/$n.$r" "$@" | grep '^nodes=' | tee -a "$OUT/lines"
  done
done
command -v python3 >/dev/null || exit 0
python3 - "$OUT/lines" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
    rows.setdefault(int(kv["nodes"]), []).append(kv)
keys = ["verdict_s", "wall_s", "cpu_s", "main_cpu_s", "maxrss_kb", "peak_threads", "peak_fds",
        "bytes_from_coord", "bytes_to_coord", "report_bytes", "svg_bytes"]
ns = sorted(rows)
med = {k: [statistics.median(float(r[k]) for r in rows[n]) for n in ns] for k in keys}
print("median of %s run(s) per size" % ",".join(str(len(rows[n])) for n in ns))
print("%-16s" % "N" + "".join("%12d" % n for n in ns))
for k in keys:
    print("%-16s" % k + "".join("%12.4g" % v for v in med[k]))
def fit(x, y, deg):  # least squares a + b x (+ c x^2), normal equations
    k = deg + 1
    s = [sum(xi ** p for xi in x) for p in range(2 * k)]
    t = [sum(yi * xi ** p for xi, yi in zip(x, y)) for p in range(k)]
    m = [[s[i + j] for j in range(k)] + [t[i]] for i in range(k)]
    for i in range(k):
        piv = m[i][i]
        m[i] = [v / piv for v in m[i]]
        for j in range(k):
            if j != i:
                f = m[j][i]
                m[j] = [a - f * b for a, b in zip(m[j], m[i])]
    return [m[i][k] for i in range(k)] + [0.0] * (2 - deg)
# Linear in N (a fixed part and a part per node) except the heatmap, a cell per pair of nodes.
small = [i for i, n in enumerate(ns) if n <= 128]
if len(small) >= 3:
    print("fit on N <= 128: a + b*N (svg_bytes: a + b*N + c*N^2); prediction at 512 and 2048 against the measured median")
    for k in keys:
        if min(med[k]) < 0:
            continue
        a, b, c = fit([ns[i] for i in small], [med[k][i] for i in small], 2 if k == "svg_bytes" else 1)
        pred = "  ".join("N=%d: %.4g (measured %s)" % (n, a + b * n + c * n * n,
                         "%.4g" % med[k][ns.index(n)] if n in ns else "-") for n in (512, 2048))
        print("%-16s a=%.4g b=%.4g c=%.4g   %s" % (k, a, b, c, pred))
PY
