"""tests/torch_hook.sh's job: one rank of a gloo job on this host, which
imports the hook by hand (PyTorch before 2.5 loads no entry point).
HOOK_MODE=run: HOOK_CALLS all-reduces (every tenth async), then
all_gather_object, then prints a JSON line of what it did. HOOK_MODE=hang:
the same, then rank 1 stops calling collectives (sleeps) while
rank 0 enters one more: a hang, until the test kills them."""
import json
import os
import sys
import time

sys.path.insert(0, os.environ["HOOK_DIR"])
import gangway_torch_postmortem  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

rank = int(os.environ["RANK"])
dist.init_process_group("gloo")
t = torch.ones(1000)
calls = asyncs = 0
for _ in range(int(os.environ.get("HOOK_CALLS", "150"))):
    t.fill_(1.0)
    if calls % 10 == 9:
        dist.all_reduce(t, async_op=True).wait()
        asyncs += 1
    else:
        dist.all_reduce(t)
    calls += 1
    assert t[0].item() == 2.0, t[0].item()  # the sum of two ranks' ones: the wrapper changes nothing
    time.sleep(0.01 * (1 + rank))
got = [None, None]
dist.all_gather_object(got, calls)
print(json.dumps({"rank": rank, "calls": calls, "asyncs": asyncs, "gathered": got,
                  "recorder": gangway_torch_postmortem._recorder is not None, "name": dist.all_reduce.__name__}), flush=True)
if os.environ.get("HOOK_MODE") == "hang":
    if rank == 1:
        time.sleep(3600)
    dist.all_reduce(t)  # waits for rank 1 for ever
time.sleep(float(os.environ.get("HOOK_LINGER", "1.5")))  # a pace report after the last collective
