"""gangway's post-mortem dumps (issue 33): what a rank leaves for `gangway
postmortem` when SLURM stops it or it raises.

The gangway plugin sets GANGWAY_POSTMORTEM_DIR (a directory of the job's
owner on each node) in every task of a step when the site turned the
post-mortem on (plugstack.conf postmortem_dir=). Where it is set and the task
is a rank (RANK is set), this module, loaded at `import torch` through the
"torch.backends" entry point (PyTorch 2.5 and later; an older one imports it
by hand, `import gangway_torch_postmortem`):
  - turns PyTorch's Flight Recorder on (TORCH_FR_BUFFER_SIZE=2000 unless the
    job set it; 0 turns it off), so every collective is recorded with its
    sequence number;
  - on SIGTERM (scancel, the time limit, a failed step's teardown) writes
    GANGWAY_POSTMORTEM_DIR/rank.RANK.json: the collectives this rank entered
    and completed (the Flight Recorder's dump, gloo or NCCL), and when it
    entered (and, with NCCL, started and completed) each group's 32 newest
    ones (of the 8 groups used last), on the node's clock; then ends as
    SIGTERM would, or hands the signal to the job's own handler. A rank
    blocked in a collective does not return to Python, so a thread of its
    own hears the signal too (Python's wakeup fd);
  - on an uncaught Python exception writes the same file with the
    exception's type and first line, then lets Python report it as usual;
  - where the site watches running jobs (the plugin sets
    GANGWAY_WATCH_INTERVAL, seconds), a thread of its own writes
    GANGWAY_POSTMORTEM_DIR/pace.RANK.json at each multiple of the interval
    on the node's clock (so every rank's report of a round covers the same
    collectives): each group's newest collective entered and completed, and
    when this rank entered its kMaxEnters newest ones (docs/watch.md), from
    the Flight Recorder or, where this PyTorch keeps none of gloo's
    collectives and the hook was imported by hand, from the collectives it
    records itself (_Recorder); and,
    when gangway's node agent leaves GANGWAY_POSTMORTEM_DIR/dump.request (a
    hang was seen), writes rank.RANK.json at once, as SIGTERM would, without
    ending. A rank blocked in a collective has released the GIL, so the
    thread runs.
The Epilog (`gangway postmortem collect`) reads the files as the user's:
they can point at a rank of the job, never at a node. Nothing here may fail
`import torch` or the job: every error leaves things as they were.
"""
import json
import os
import pickle
import signal
import sys
import threading
import time

_TIMES = ("time_created_ns", "time_discovered_started_ns", "time_discovered_completed_ns")
_TIMED = 32  # each group's newest collectives kept with their times (the reader's kMaxTimed)
_TIMED_GROUPS = 8  # groups timed, those used last (the reader's kMaxTimedRows = 8 x 32)
_installed = False
_written = False
_lock = threading.RLock()


def _fr_entries():
    """The collectives this process recorded: the Flight Recorder's entries,
    else, where this PyTorch has none and the hook records them itself
    (_Recorder), the recorder's; [] where neither has any."""
    entries = _fr_dump()
    if not entries and _recorder is not None:
        return _recorder.entries()
    return entries


def _fr_dump():
    """The Flight Recorder's entries of this process ([] where there are none).
    Never imports: this runs on the hook's threads too, which must not take
    the import lock while `import torch` runs (which loads this hook): an
    import there raised _DeadlockError in the job's own `import torch`. So
    only once torch is imported, and its distributed module with it."""
    t = sys.modules.get("torch")
    spec = getattr(t, "__spec__", None)
    if t is None or spec is None or getattr(spec, "_initializing", False):
        return []
    c10d = sys.modules.get("torch._C._distributed_c10d")
    if c10d is None:
        return []
    # The pickled dump without stack traces first: a third of the JSON one's
    # time (31 against 91 ms, and 4 against 39 ms to load, for 2,000 entries
    # on a loaded 2-core machine). It is this process's own data.
    for name in ("_dump_fr_trace", "_dump_nccl_trace"):
        fn = getattr(c10d, name, None)
        if fn is None:
            continue
        try:
            entries = pickle.loads(fn(includeCollectives=True, includeStackTraces=False, onlyActive=False)).get("entries", [])
            return entries or []
        except Exception:
            continue
    for name in ("_dump_fr_trace_json", "_dump_nccl_trace_json"):
        fn = getattr(c10d, name, None)
        if fn is None:
            continue
        try:
            return json.loads(fn(includeCollectives=True, onlyActive=False)).get("entries", []) or []
        except Exception:
            continue
    return []


class _Recorder:
    """Where this PyTorch keeps no Flight Recorder of gloo's collectives
    (before 2.8; none at all before 2.2), the hook records what the watch needs
    itself, when imported by hand (`import gangway_torch_postmortem` before
    or after `import torch`, before the first collective): each call of
    torch.distributed's collectives (all_reduce, all_gather, broadcast,
    barrier, ...: those called from Python; DDP's reducer calls its
    all-reduces from C++ and is not seen), numbered per process group as
    the Flight Recorder numbers them, the same on every member since every
    member calls the same collectives in the same order. Entries in the
    Flight Recorder's own form, so everything after reads them alike: the
    pace reports and the post-mortem's dumps. About 2.5 us a call (bench/torch_recorder.py)."""

    _NAMES = ("all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor", "_all_gather_base",
              "all_gather_coalesced", "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "broadcast",
              "reduce", "barrier", "monitored_barrier", "all_to_all", "all_to_all_single", "gather", "scatter")
    _KEEP = 2000  # entries kept, as TORCH_FR_BUFFER_SIZE's default here

    def __init__(self, c10d):
        self._c10d = c10d
        self._lock = threading.Lock()
        self._seq = {}
        self._entries = []
        self._pending = []  # (entry, work) of async_op calls not yet seen completed
        self._local = threading.local()

    def _name(self, group):
        c = self._c10d
        try:
            pg = group if group is not None else c._get_default_group()
            world = getattr(c, "_world", None)
            names = getattr(world, "pg_names", None) if world is not None else getattr(c, "_pg_names", None)
            name = names.get(pg) if names is not None else None
        except Exception:
            return None
        return str(name)[:64] if name is not None else None  # None: not a member, or no group yet

    def _enter(self, group):
        name = self._name(group)
        if name is None:
            return None
        with self._lock:
            seq = self._seq.get(name, 0) + 1
            self._seq[name] = seq
            e = {"collective_seq_id": seq, "process_group": [name, ""], "time_created_ns": time.time_ns(),
                 "state": "scheduled"}
            self._entries.append(e)
            if len(self._entries) > 2 * self._KEEP:
                del self._entries[:-self._KEEP]
        return e

    def wrap(self, fn):
        import inspect
        params = list(inspect.signature(fn).parameters)
        gi = params.index("group") if "group" in params else None
        ai = params.index("async_op") if "async_op" in params else None
        rec = self

        def recorded(*args, **kwargs):
            if getattr(rec._local, "inside", False):  # one collective calling another: counted once
                return fn(*args, **kwargs)
            group = kwargs["group"] if "group" in kwargs else (args[gi] if gi is not None and gi < len(args) else None)
            async_op = kwargs["async_op"] if "async_op" in kwargs else (args[ai] if ai is not None and ai < len(args) else False)
            e = rec._enter(group)
            rec._local.inside = True
            try:
                out = fn(*args, **kwargs)
            finally:
                rec._local.inside = False
            if e is not None:
                if async_op and out is not None and hasattr(out, "is_completed"):
                    with rec._lock:
                        rec._pending.append((e, out))
                        del rec._pending[:-rec._KEEP]
                else:
                    e["state"] = "completed"
            return out

        recorded.__wrapped__ = fn
        recorded.__name__ = getattr(fn, "__name__", "collective")
        recorded.__doc__ = getattr(fn, "__doc__", None)
        return recorded

    def install(self, dist):
        """The same wrapper in torch.distributed and in distributed_c10d,
        where the others (all_gather_object, ...) find it."""
        for n in self._NAMES:
            fn = getattr(self._c10d, n, None)
            if fn is None or getattr(fn, "__wrapped__", None) is not None:
                continue
            w = self.wrap(fn)
            setattr(self._c10d, n, w)
            if getattr(dist, n, None) is fn:
                setattr(dist, n, w)

    def entries(self):
        with self._lock:
            still = []
            for e, work in self._pending:
                try:
                    done = work.is_completed()
                except Exception:
                    done = True
                if done:
                    e["state"] = "completed"
                else:
                    still.append((e, work))
            self._pending = still
            return [dict(e) for e in self._entries[-self._KEEP:]]


_recorder = None


def _record_collectives():
    """The recorder, where the watch is on and this PyTorch keeps no Flight
    Recorder. Only from the main thread, outside `import torch` (a hand
    import): it imports torch.distributed."""
    global _recorder
    t = sys.modules.get("torch")
    spec = getattr(t, "__spec__", None) if t is not None else None
    if spec is not None and getattr(spec, "_initializing", False):
        return  # loaded by torch's entry point, during `import torch`: a PyTorch with its Flight Recorder
    import torch
    import torch.distributed as dist
    if not dist.is_available():
        return
    c10d_C = getattr(torch._C, "_distributed_c10d", None)
    if c10d_C is None or hasattr(c10d_C, "_dump_fr_trace"):
        return  # 2.8 and later: the Flight Recorder records gloo's collectives too
    rec = _Recorder(dist.distributed_c10d)
    rec.install(dist)
    _recorder = rec


def _ns(v):
    """A Flight Recorder time as a whole number of ns, 0 where it has none."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 else 0


def _groups(entries, timed_keys, keep):
    """The Flight Recorder's collectives by process group: each group's
    entered and completed sequence numbers, and its `keep` newest rows of
    [seq, times...]. Each process group numbers its collectives on its own:
    kept apart by the group's name (the same on every member)."""
    groups = {}
    for e in entries:
        seq = e.get("collective_seq_id")
        if not isinstance(seq, int) or e.get("is_p2p"):
            continue
        pg = e.get("process_group")
        name = (str(pg[0]) if isinstance(pg, (list, tuple)) and pg else str(e.get("pg_id", "")))[:64] or "0"
        g = groups.get(name)
        if g is None:
            if len(groups) >= 32:
                continue
            g = groups[name] = {"entered": [], "completed": [], "timed": []}
        g["entered"].append(seq)
        if e.get("retired") or e.get("state") == "completed":
            g["completed"].append(seq)
        g["timed"].append([seq] + [_ns(e.get(k)) for k in timed_keys])
        del g["timed"][:-keep]
    return groups


def _write(exception="", final=True):
    """The dump. The final one (SIGTERM, an exception) once: a second caller
    (the handler and the watching thread both hear one SIGTERM) waits until
    the first one has written it. One asked for by a hang (final=False)
    leaves room for the final one."""
    global _written
    with _lock:
        if _written:
            return
        _written = final
        try:
            d = os.environ["GANGWAY_POSTMORTEM_DIR"]
            rank = int(os.environ["RANK"])
            # When: the call (time_created_ns, on this rank's thread) and,
            # where the backend watches it (NCCL), the start and the
            # completion; gloo records neither. The node's clock, 0 unknown.
            groups = _groups(_fr_entries()[-4000:], _TIMES, _TIMED)
            # Times for the 8 groups used last (the reader takes 256 rows in all).
            by_last = sorted(groups.values(), key=lambda g: max([t[1] for t in g["timed"]] or [0]), reverse=True)
            for g in by_last[_TIMED_GROUPS:]:
                g["timed"] = []
            doc = {"kind": "gangway-rank-dump", "schema": 3, "rank": rank, "groups": groups,
                   "exception": exception[:1000]}
            tmp = os.path.join(d, ".rank.%d.json.%d" % (rank, os.getpid()))
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f)
            os.rename(tmp, os.path.join(d, "rank.%d.json" % rank))
        except Exception:
            pass


_ENTERS = 64  # each group's newest collectives whose entry a pace report times (the reader's kMaxEnters)
_PACE_GROUPS = 8  # groups reported, those used last (kMaxPaceGroups)


def _write_pace(d, rank):
    """One pace report (pace.RANK.json, replaced atomically)."""
    groups = _groups(_fr_entries(), ("time_created_ns",), _ENTERS)
    rows = sorted(groups.items(), key=lambda kv: max([t[1] for t in kv[1]["timed"]] or [0]), reverse=True)
    doc = {"kind": "gangway-rank-pace", "schema": 1, "rank": rank, "time_ns": time.time_ns(), "groups": {
        name: {"entered": max(g["entered"] or [0]), "completed": max(g["completed"] or [0]), "enters": g["timed"]}
        for name, g in rows[:_PACE_GROUPS]}}
    tmp = os.path.join(d, ".pace.%d.json.%d" % (rank, os.getpid()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.rename(tmp, os.path.join(d, "pace.%d.json" % rank))


def _pace(interval):
    """The pace thread: a report at each multiple of the interval, and a
    dump as soon as (within a second) the node agent asks for one."""
    d = os.environ["GANGWAY_POSTMORTEM_DIR"]
    rank = int(os.environ["RANK"])
    request = os.path.join(d, "dump.request")
    served = None
    next_at = (time.time() // interval + 1) * interval
    while True:
        now = time.time()
        try:
            st = os.stat(request)
            if (st.st_mtime_ns, st.st_ino) != served:
                served = (st.st_mtime_ns, st.st_ino)
                _write(final=False)
        except OSError:
            pass
        if now >= next_at:
            try:
                _write_pace(d, rank)
            except Exception:
                pass
            next_at = (now // interval + 1) * interval
        time.sleep(max(0.05, min(1.0, next_at - time.time())))


def _terminate():
    """Ends this process as SIGTERM would have."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    except Exception:
        os._exit(128 + signal.SIGTERM)


def _on_sigterm(signum, frame):
    """The Python handler: runs in the main thread when it is in Python."""
    if os.getpid() == _pid:
        _write()
    _terminate()


def _watch(fd):
    """The main thread may be blocked in a collective and never see its
    handler run: Python's C handler also writes the signal's number to the
    wakeup fd, which this thread reads."""
    while True:
        try:
            got = os.read(fd, 64)
        except InterruptedError:
            continue
        except Exception:
            return
        if not got:
            return
        if signal.SIGTERM in got and signal.getsignal(signal.SIGTERM) is _on_sigterm:
            _write()
            _terminate()


_pid = 0


def autoload():
    global _installed, _pid
    try:
        if _installed or not os.environ.get("GANGWAY_POSTMORTEM_DIR") or not os.environ.get("RANK", "").isdigit():
            return
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            return  # the job handles SIGTERM itself
        _installed = True
        _pid = os.getpid()
        os.environ.setdefault("TORCH_FR_BUFFER_SIZE", "2000")
        r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        os.set_blocking(r, True)
        if signal.set_wakeup_fd(w, warn_on_full_buffer=False) != -1:
            signal.set_wakeup_fd(-1)  # someone else's: leave it to them
            os.close(r)
            os.close(w)
        else:
            threading.Thread(target=_watch, args=(r,), name="gangway-postmortem", daemon=True).start()
        signal.signal(signal.SIGTERM, _on_sigterm)
        previous = sys.excepthook

        def excepthook(kind, value, tb):
            try:
                if os.getpid() == _pid and not issubclass(kind, (KeyboardInterrupt, SystemExit)):
                    first = str(value).splitlines()[0] if str(value) else ""
                    _write("%s: %s" % (kind.__name__, first) if first else kind.__name__)
            except Exception:
                pass
            previous(kind, value, tb)

        sys.excepthook = excepthook
        interval = os.environ.get("GANGWAY_WATCH_INTERVAL", "")
        if interval.isdigit() and 1 <= int(interval) <= 3600:
            try:
                _record_collectives()
            except Exception:
                pass
            threading.Thread(target=_pace, args=(int(interval),), name="gangway-pace", daemon=True).start()
    except Exception:
        return


autoload()
