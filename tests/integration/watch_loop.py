"""A training loop's stand-in for tests/integration/watch.sh: each step
computes (a few matrix products on one thread, WATCH_WORK of them) and then
all-reduces WATCH_TENSOR floats (default 1024) over gloo (init_method="env://", gangway's variables), for
WATCH_SECONDS or until WATCH_DIR/stop exists. Each rank writes its pid to
WATCH_DIR/pid.RANK once it is in the loop, and its steps' times to
WATCH_DIR/steps.RANK at the end (the test compares the job's pace with and
without a slowed node). WATCH_FORGE=1: rank 0 also writes what a user could
to mislead the watch: pace reports for a rank that is not on its node and
for a rank that does not exist. WATCH_HOOK=0: the hook not imported by hand
(on a PyTorch before 2.5: no rank reports, root's view alone).
"""
import datetime
import json
import os
import sys
import time

if os.environ.get("WATCH_HOOK", "1") != "0":
    try:  # PyTorch before 2.5 loads no "torch.backends" entry point: import the hook by hand
        import gangway_torch_postmortem  # noqa: F401
    except Exception:
        pass
import torch
import torch.distributed as dist

torch.set_num_threads(1)
work = os.environ["WATCH_DIR"]
dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=900))
rank = dist.get_rank()
world = dist.get_world_size()
a = torch.rand(96, 96)
t = torch.zeros(int(os.environ.get("WATCH_TENSOR", "1024")))
n_work = int(os.environ.get("WATCH_WORK", "20"))
end = time.time() + float(os.environ.get("WATCH_SECONDS", "60"))
steps = []
i = 0
while True:
    t0 = time.time()
    b = a
    for _ in range(n_work):
        b = torch.tanh(b @ a)
    # Every rank ends at the same step: the all-reduce carries who wants to.
    t.zero_()
    t[0] = 1.0 if time.time() >= end or os.path.exists(os.path.join(work, "stop")) else 0.0
    dist.all_reduce(t)
    if t[0] > 0:
        break
    steps.append((t0, time.time() - t0))
    i += 1
    if i == 5:
        with open(os.path.join(work, "pid.%d" % rank), "w") as f:
            f.write("%d\n" % os.getpid())
    if i == 5 and rank == 0 and os.environ.get("WATCH_FORGE") == "1":
        d = os.environ.get("GANGWAY_POSTMORTEM_DIR", "")
        now = time.time_ns()
        for victim in (world - 1, 999):  # another node's rank, and no rank at all
            doc = {"kind": "gangway-rank-pace", "schema": 1, "rank": victim, "time_ns": now,
                   "groups": {"0": {"entered": 10 ** 6, "completed": 0,
                                    "enters": [[10 ** 6 - 1, now + 10 ** 12], [10 ** 6, now + 2 * 10 ** 12]]}}}
            try:
                with open(os.path.join(d, "pace.%d.json" % victim), "w") as f:
                    json.dump(doc, f)
            except OSError:
                pass
with open(os.path.join(work, "steps.%d" % rank), "w") as f:
    f.write("".join("%.3f %.4f\n" % s for s in steps))
dist.destroy_process_group()
sys.exit(0)
