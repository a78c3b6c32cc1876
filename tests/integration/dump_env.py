"""Prints this task's view of the contract as one JSON line (run by srun)."""
import json
import os

NAMES = [
    "PRIMARY_ADDR", "MASTER_ADDR", "PRIMARY_PORT", "MASTER_PORT", "HOST_NODE_ADDR", "NODE_ADDR",
    "NODE_RANK", "NUM_NODES", "NUM_TRAINERS", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
    "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT",
    "JAX_COORDINATOR_ADDRESS", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NODE_ADDRS", "GANGWAY_LAYOUT",
    "GANGWAY_SET", "SLURMD_NODENAME", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID",
    "SLURM_STEP_ID", "SLURM_STEP_RESV_PORTS", "SLURM_ARRAY_TASK_ID",
]
env = {k: os.environ[k] for k in NAMES if k in os.environ}
env["TORCHELASTIC"] = sorted(k for k in os.environ if k.startswith("TORCHELASTIC_"))
env["NCCL_COMM_ID"] = os.environ.get("NCCL_COMM_ID")
print("GWENV " + json.dumps(env, sort_keys=True), flush=True)
