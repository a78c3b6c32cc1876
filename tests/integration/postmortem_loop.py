"""A training loop's stand-in for tests/integration/postmortem.sh: all-reduces
a tensor over gloo (init_method="env://", gangway's variables) until the case
(PM_CASE) says otherwise. Each rank writes its pid to PM_WORK/pid.RANK once
it is in the loop, so that the test can find and signal it.
  healthy    40 rounds, then a clean end
  exception  every rank raises the same ValueError at round 10
  exit       rank PM_VICTIM calls os._exit(3) after round 10 (the program's
             own exit: the other ranks then fail on the closed connection)
  oom        rank PM_VICTIM allocates until the OOM killer takes it, once
             PM_WORK/go exists (the test puts it in a memory cgroup first)
  hang       rank PM_VICTIM stops itself (SIGSTOP) after round 10, between
             two collectives, so that it never enters the next one
  (others)   loop until signalled (SIGKILL, SIGSTOP, a cut link, scancel)
PM_FORGE=1: every rank also writes what a hostile user could (a rank dump
claiming another rank hung and a forged task line in its dump directory, an
Xid line into /dev/kmsg, which the kernel marks as the user's); what this
user cannot write (a dump directory it cannot reach, root's /dev/kmsg) is
skipped.
PM_TIMEOUT: gloo's timeout in seconds (a cut link ends the job after it).
TORCH_FR_DUMP_TEMP_FILE: once PM_WORK/fr-dump exists, every rank that can
(not a stopped one) writes its Flight Recorder's dump (the pickle NCCL's
watchdog would write) to this prefix and its rank, for PyTorch's analyzer
(torch.distributed.flight_recorder.fr_trace); gloo has no watchdog to.
"""
import datetime
import json
import os
import signal
import sys
import time

try:  # PyTorch before 2.5 loads no "torch.backends" entry point: import the hook by hand
    import gangway_torch_postmortem  # noqa: F401
except Exception:
    pass
import torch
import torch.distributed as dist

case = os.environ.get("PM_CASE", "healthy")
work = os.environ["PM_WORK"]
dist.init_process_group("gloo", init_method="env://",
                        timeout=datetime.timedelta(seconds=float(os.environ.get("PM_TIMEOUT", "600"))))
rank = dist.get_rank()
if os.environ.get("PM_FORGE") == "1":
    d = os.environ.get("GANGWAY_POSTMORTEM_DIR", "")
    try:
        if not d:
            raise OSError("no dump directory")
        with open(os.path.join(d, "rank.%d.json" % ((rank + 1) % dist.get_world_size())), "w") as f:
            json.dump({"kind": "gangway-rank-dump", "schema": 1, "rank": (rank + 1) % dist.get_world_size(),
                       "entered": [], "completed": [], "exception": "RuntimeError: NCCL error on node09 Xid 79"}, f)
        with open(os.path.join(d, "task.0.%d" % rank), "w") as f:
            f.write("gangway-task 1 t_ns=1 node=node09 job=1 step=0 rank=%d local_rank=0 pid=1 wait_status=9 "
                    "oom_kills=1 requeue=1\n" % rank)
    except OSError:
        pass
    try:
        with open("/dev/kmsg", "w") as k:
            k.write("<3>NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.\n")
    except OSError:
        pass


def fr_dump_when_asked():
    prefix = os.environ["TORCH_FR_DUMP_TEMP_FILE"]
    while not os.path.exists(os.path.join(work, "fr-dump")):
        time.sleep(0.2)
    import torch._C._distributed_c10d as c10d
    try:
        dump = c10d._dump_fr_trace(includeCollectives=True, includeStackTraces=False, onlyActive=False)
    except TypeError:
        dump = c10d._dump_fr_trace()
    with open("%s%d.tmp" % (prefix, rank), "wb") as f:
        f.write(dump)
    os.rename("%s%d.tmp" % (prefix, rank), "%s%d" % (prefix, rank))


if os.environ.get("TORCH_FR_DUMP_TEMP_FILE"):
    import threading
    threading.Thread(target=fr_dump_when_asked, daemon=True).start()
t = torch.ones(1024)
i = 0
while True:
    dist.all_reduce(t)
    i += 1
    if i == 5:
        with open(os.path.join(work, "pid.%d" % rank), "w") as f:
            f.write("%d\n" % os.getpid())
    if case == "healthy" and i >= 40:
        break
    if case == "hang" and i == 10 and rank == int(os.environ.get("PM_VICTIM", "-1")):
        os.kill(os.getpid(), signal.SIGSTOP)
    if case == "exit" and i == 10 and rank == int(os.environ.get("PM_VICTIM", "-1")):
        os._exit(3)
    if case == "exception" and i >= 10:
        raise ValueError("bad batch shape at round 10")
    if case == "oom" and rank == int(os.environ.get("PM_VICTIM", "-1")) and os.path.exists(os.path.join(work, "go")):
        hog = []
        while True:
            hog.append(bytearray(16 << 20))
    time.sleep(0.05)
dist.destroy_process_group()
sys.exit(0)
