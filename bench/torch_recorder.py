"""What the torch hook's own recorder (torch-hook/gangway_torch_postmortem.py,
_Recorder: where PyTorch keeps no Flight Recorder of gloo's collectives and
the hook is imported by hand) adds to a collective call: a one-rank gloo
group on this host (no network, so the call itself is as cheap as it gets),
blocks of N all_reduce calls of 16 floats through the recorded function and
through the original (__wrapped__), interleaved so that both see the same
machine noise. Prints each pair's microseconds a call and the median extra.

    /usr/bin/python3 bench/torch_recorder.py [PAIRS] [CALLS]   (default 15 pairs of 5000)
"""
import os
import statistics
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "torch-hook"))
os.environ.setdefault("GANGWAY_POSTMORTEM_DIR", tempfile.mkdtemp(prefix="gangway-recorder-bench."))
os.environ.setdefault("GANGWAY_WATCH_INTERVAL", "10")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(29400 + os.getpid() % 500))
import gangway_torch_postmortem as hook  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

if hook._recorder is None:
    sys.exit("this PyTorch keeps a Flight Recorder of gloo's collectives: the hook records nothing itself")
pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
dist.init_process_group("gloo", rank=0, world_size=1)
t = torch.ones(16)
recorded, raw = dist.all_reduce, dist.all_reduce.__wrapped__


def block(f):
    t0 = time.perf_counter()
    for _ in range(calls):
        f(t)
    return (time.perf_counter() - t0) / calls * 1e6


block(recorded), block(raw)  # warm-up
rows = []
for i in range(pairs):
    if i % 2:
        a = block(recorded); b = block(raw)
    else:
        b = block(raw); a = block(recorded)
    rows.append((a, b))
    print("pair %2d: recorded %.2f us, original %.2f us a call" % (i + 1, a, b))
print("torch %s, %d pairs of %d calls: median recorded %.2f us, original %.2f us, extra %.2f us a call (median of the pairs' differences)"
      % (torch.__version__, pairs, calls, statistics.median(a for a, _ in rows), statistics.median(b for _, b in rows),
         statistics.median(a - b for a, b in rows)))
