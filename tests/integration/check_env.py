"""Checks the GWENV lines of one step against what the layout says they must be.

The expectations are written from the cluster's address plan and SLURM's
layout, not from gangway's code: node i is node(08+i), its data address
198.19.0.(11+i) on eth1.

usage: check_env.py FILE --mode node|task --tpn 2,2,2,1 [--trainers N]
                     [--port P] [--addr A] [--world W] [--off] [--no-node-addrs]
Prints "port=P" of the step on success; exits 1 with the reasons otherwise.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--mode", choices=["node", "task"])
ap.add_argument("--tpn", required=True, help="tasks per node, comma separated")
ap.add_argument("--trainers", type=int)
ap.add_argument("--port", type=int)
ap.add_argument("--addr")
ap.add_argument("--world", type=int)
ap.add_argument("--off", action="store_true", help="gangway must have set nothing")
ap.add_argument("--no-node-addrs", action="store_true", help="NODE_ADDRS must be unset (a step above node_addrs_max)")
ap.add_argument("--hashed", action="store_true", help="the port must be hashed even if SLURM reserved ports")
a = ap.parse_args()

tpn = [int(x) for x in a.tpn.split(",")]
tasks = [json.loads(l.split(" ", 1)[1]) for l in open(a.file) if l.startswith("GWENV ")]
# The step's nodes in SLURM's order (by name here; zero padded, so text order
# is number order); node08 is the cluster's first node, with data address .11.
nodes = sorted({t.get("SLURMD_NODENAME", "?") for t in tasks})
data = ["198.19.0.%d" % (int(n[4:]) - 8 + 11) if n[4:].isdigit() else "?" for n in nodes]
errors = []


def expect(task, key, want):
    got = task.get(key)
    if got != want:
        errors.append("%s rank %s: %s=%r, want %r" % (task.get("SLURMD_NODENAME"), task.get("SLURM_PROCID"), key, got, want))


if len(nodes) != len(tpn):
    errors.append("tasks ran on %r, want %d nodes" % (nodes, len(tpn)))
if len(tasks) != sum(tpn):
    errors.append("%d tasks reported, want %d" % (len(tasks), sum(tpn)))
ports = {t.get("MASTER_PORT") for t in tasks}
for t in tasks:
    i = nodes.index(t["SLURMD_NODENAME"]) if t.get("SLURMD_NODENAME") in nodes else None
    if i is None:
        errors.append("unknown node %r" % t.get("SLURMD_NODENAME"))
        continue
    if t.get("TORCHELASTIC") or t.get("NCCL_COMM_ID") is not None:
        errors.append("TORCHELASTIC_* or NCCL_COMM_ID set: %r" % t)
    if a.off:
        for k in ("MASTER_ADDR", "WORLD_SIZE", "NODE_RANK", "GANGWAY_SET", "PRIMARY_ADDR"):
            expect(t, k, None)
        continue
    addr = a.addr or data[0]
    if i >= len(tpn):
        continue
    port = str(a.port) if a.port else t.get("MASTER_PORT")
    expect(t, "SLURM_NODEID", str(i))
    for k in ("PRIMARY_ADDR", "MASTER_ADDR"):
        expect(t, k, addr)
    for k in ("PRIMARY_PORT", "MASTER_PORT"):
        expect(t, k, port)
    expect(t, "HOST_NODE_ADDR", "%s:%s" % (addr, port))
    expect(t, "JAX_COORDINATOR_ADDRESS", "%s:%s" % (addr, port))
    expect(t, "NODE_ADDR", data[i])
    expect(t, "NODE_RANK", str(i))
    expect(t, "NUM_NODES", str(len(tpn)))
    expect(t, "NODE_ADDRS", None if a.no_node_addrs else ",".join(data))
    expect(t, "NCCL_SOCKET_IFNAME", "=eth1")
    expect(t, "GLOO_SOCKET_IFNAME", "eth1")
    expect(t, "GANGWAY_LAYOUT", a.mode)
    if a.mode == "node":
        trainers = a.trainers or 1
        expect(t, "NUM_TRAINERS", str(trainers))
        expect(t, "WORLD_SIZE", str(a.world or len(tpn) * trainers))
        expect(t, "PET_NNODES", str(len(tpn)))
        expect(t, "PET_NODE_RANK", str(i))
        expect(t, "PET_NPROC_PER_NODE", str(trainers))
        expect(t, "PET_MASTER_ADDR", addr)
        expect(t, "PET_MASTER_PORT", port)
        for k in ("RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
            expect(t, k, None)
    else:
        expect(t, "NUM_TRAINERS", str(a.trainers or tpn[i]))
        expect(t, "WORLD_SIZE", str(a.world or sum(tpn)))
        expect(t, "RANK", t.get("SLURM_PROCID"))
        expect(t, "LOCAL_RANK", t.get("SLURM_LOCALID"))
        expect(t, "LOCAL_WORLD_SIZE", str(tpn[i]))
        for k in ("PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"):
            expect(t, k, None)
if not a.off:
    if len(ports) != 1:
        errors.append("tasks disagree on MASTER_PORT: %r" % sorted(map(str, ports)))
    port = next(iter(ports)) if ports else None
    resv = {t.get("SLURM_STEP_RESV_PORTS") for t in tasks}
    if not a.port and port is not None:
        p = int(port)
        if resv != {None} and not a.hashed:
            # srun reserved ports (MpiParams=ports=): the first one is the step's.
            first = {int(r.replace("-", ",").split(",")[0]) for r in resv if r}
            if first != {p} or None in resv:
                errors.append("port %d is not the first of SLURM_STEP_RESV_PORTS %r" % (p, sorted(map(str, resv))))
        elif not (61000 <= p <= 65535 and (p - 61000) % 4 == 0):
            errors.append("port %d is not a block start in 61000-65535" % p)
    if a.mode == "task":
        ranks = sorted(int(t.get("RANK", -1)) for t in tasks)
        if ranks != list(range(sum(tpn))):
            errors.append("ranks are %r" % ranks)
if errors:
    print("\n".join(errors[:20]))
    sys.exit(1)
if not a.off:
    print("port=%s" % next(iter(ports)))
