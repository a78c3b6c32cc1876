#!/usr/bin/python3
"""Synthetic gangway reports for the fleet ingest's test and benchmark.

  fleet_synth.py job DIR COUNT NODES [SEED]   COUNT job-check reports of NODES nodes each
  fleet_synth.py node DIR COUNT [SEED]        COUNT node-check reports of one node each

Each report is what `gangway check` (schema 2) or `gangway node-check --json`
(schema 1) writes: a job check has every node's ring figures, one bandwidth
link per node per ring round (two rounds), 8 GPUs and 8 ports a node and each
node's all-reduce; a node check has 8 GPUs, 8 ports and its all-reduce.
Files are named ID.json, as the checks name them in the spool; the first
report is a day old (FLEET_SYNTH_T0: its unix time), the others a minute apart.
"""
import json
import os
import random
import sys
import time


def gpus(node, rnd):
    return [{"node": node, "index": i, "name": "NVIDIA H100 80GB HBM3", "bus_id": "0000:%02x:00.0" % (0x18 + 16 * i),
             "pcie_gen": 5, "pcie_width": 16, "h2d_gbps": round(rnd.gauss(53, 1), 2),
             "d2h_gbps": round(rnd.gauss(52, 1), 2), "error": ""} for i in range(8)]


def ports(node):
    return [{"node": node, "name": "mlx5_%d/1" % i, "rate_gbps": 400, "usable": True} for i in range(8)]


def nccl(node, rnd):
    return [{"node": node, "ranks": 8, "bytes": 1073741824, "algbw_gbps": 200.0,
             "busbw_gbps": round(rnd.gauss(370, 5), 2), "data_ok": True, "error": ""}]


def job(n, k, rnd, t):
    names = ["gpu%05d" % ((k * 7 + i) % 4096) for i in range(n)]
    names = list(dict.fromkeys(names))
    n = len(names)
    rid = "job-%d.0.%d.%016x" % (1000 + k, t, rnd.getrandbits(64))
    r = {"kind": "gangway-job-check", "schema": 2, "id": rid, "time": t, "verdict": "ok", "exit_code": 0,
         "job_id": str(1000 + k), "step_id": "0", "mode": "quick", "bootstrap": "tcp", "seconds": 3.5,
         "deadline_s": 60, "expected_bps": 1.25e9, "slow_ratio": 0.5,
         "nodes": [{"name": m, "addr": "198.19.%d.%d" % (i // 250, i % 250 + 1), "status": "ok",
                    "tx_bps": rnd.gauss(1.2e9, 1e7), "rx_bps": rnd.gauss(1.2e9, 1e7), "nic_mbps": 10000, "reasons": []}
                   for i, m in enumerate(names)],
         "links": [], "stages": [{"name": "bandwidth", "status": "ok", "detail": "%d links" % (2 * n), "seconds": 1.0}],
         "gpus": [], "nccl": [], "ports": [], "findings": [], "notes": []}
    for shift in (1, 2) if n > 2 else ((1,) if n > 1 else ()):
        for i in range(n):
            r["links"].append({"from": names[i], "to": names[(i + shift) % n], "stage": "bandwidth", "ok": True,
                               "bps": rnd.gauss(1.2e9, 1e7), "ms": None, "error": ""})
    for m in names:
        r["gpus"] += gpus(m, rnd)
        r["ports"] += ports(m)
        r["nccl"] += nccl(m, rnd)
    return rid, r


def node(k, rnd, t):
    m = "gpu%05d" % (k % 2048)
    rid = "node-%s.%d.%016x" % (m, t, rnd.getrandbits(64))
    recs = [{"node": m, "check": "port-rate", "device": "mlx5_%d/1" % i, "figure": 400, "unit": "Gb/s",
             "expected": 400, "status": "ok", "confirmed": False, "reason": ""} for i in range(8)]
    return rid, {"kind": "gangway-node-check", "schema": 1, "id": rid, "node": m, "level": "full", "time": t,
                 "seconds": 30.5, "verdict": "healthy",
                 "stages": [{"name": "cuda", "status": "ok", "detail": "8 GPU(s)", "seconds": 2.0}],
                 "records": recs, "gpus": gpus(m, rnd), "nccl": nccl(m, rnd)}


def main():
    kind, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    nodes = int(sys.argv[4]) if kind == "job" else 1
    seed = int(sys.argv[5 if kind == "job" else 4]) if len(sys.argv) > (5 if kind == "job" else 4) else 1
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    # A day ago, one minute apart: inside any store's raw window. FLEET_SYNTH_T0 sets another start.
    t0 = int(os.environ.get("FLEET_SYNTH_T0", int(time.time()) - 86400))
    for k in range(count):
        t = t0 + k * 60
        rid, r = job(nodes, k, rnd, t) if kind == "job" else node(k, rnd, t)
        with open(os.path.join(out, rid + ".json"), "w") as f:
            json.dump(r, f)


if __name__ == "__main__":
    main()
