"""gangway's fallback for PyTorch built without libuv (Debian's python3-torch).

PyTorch 2.4 and later create every TCPStore with libuv unless told otherwise,
and a build without libuv then fails: "use_libuv was requested but PyTorch was
build without libuv support". USE_LIBUV=0 reaches init_process_group("env://")
only; torchrun's own rendezvous stores ignore it. PyTorch 2.5 and later call
every "torch.backends" entry point at the end of `import torch`, which finds
this module when its directory is on PYTHONPATH (the gangway plugin puts it
there when the site sets torch_hook=). It wraps TCPStore.__init__: a store
that fails only because libuv is missing is made again with the legacy
backend; on a build with libuv the first call succeeds and nothing changes.
USE_LIBUV=1 (asked for explicitly) keeps the error. Nothing here may fail
`import torch`: every error leaves torch as it was.
"""
import os


def autoload():
    try:
        from torch.distributed import TCPStore
    except Exception:  # torch built without distributed support, or anything else
        return
    try:
        orig = TCPStore.__init__
        if getattr(orig, "_gangway_nolibuv", False):
            return

        def __init__(self, *args, **kwargs):
            try:
                orig(self, *args, **kwargs)
            except RuntimeError as e:  # torch's DistStoreError is a RuntimeError
                if "without libuv support" not in str(e) or os.environ.get("USE_LIBUV") == "1":
                    raise
                # use_libuv is TCPStore's ninth parameter: drop it if given by position.
                args = args[:8]
                kwargs["use_libuv"] = False
                orig(self, *args, **kwargs)

        __init__._gangway_nolibuv = True
        __init__.__doc__ = orig.__doc__
        TCPStore.__init__ = __init__
    except Exception:
        return
