# nodeaudit learn, inside the user's job: hooks torch, numpy, PIL and torchvision.io when the job
# imports them, and writes what it saw as JSON records into NODEAUDIT_LEARN_DIR, one per process:
# `rank-<pid>.json` for a process that takes optimizer steps, `loader-<pid>.json` for a process that
# only loads data (a DataLoader worker). Standard library and torch only; every hook calls the
# original with the same arguments and returns its result, so the job computes what it computes
# without us. What it costs per step: two clock reads per DataLoader batch, backward call and
# optimizer step, and one small JSON file rewritten after each optimizer step (so a job that dies
# keeps the steps it took). The FLOP counter and the saved-tensor hooks, which are slow, run only in
# the last step(s), which are not timed.
#
# How the job ends: after WARMUP + STEPS + FLOP_STEPS optimizer steps every rank writes its final
# record and raises SystemExit(0) from the optimizer's step hook, in the main thread, so the job's
# own `finally`/atexit code and the DataLoader's worker shutdown run as on a normal exit. Every rank
# counts the same steps, so torchrun's ranks stop at the same step with no collective pending. The
# parent (nodeaudit) kills the process group if anything is still running after a grace period.
import builtins
import importlib.abc
import importlib.util
import json
import os
import sys
import threading
import time

_STATE = None


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


class _State:
    def __init__(self):
        self.dir = os.environ["NODEAUDIT_LEARN_DIR"]
        self.warmup = _env_int("NODEAUDIT_LEARN_WARMUP", 5)
        self.steps = _env_int("NODEAUDIT_LEARN_STEPS", 20)
        self.flop_steps = _env_int("NODEAUDIT_LEARN_FLOP_STEPS", 1)
        self.t0 = time.perf_counter()
        self.pid = os.getpid()
        self.torch = None
        self.lock = threading.Lock()
        # Loader side: what dataset fetches opened and decoded (any process).
        self.loader = {"samples_fetched": 0, "files_opened": 0, "bytes_opened": 0, "decoders": {}, "memmaps": []}
        self.in_fetch = threading.local()
        self.last_loader_flush = 0.0
        self.dataloaders = []
        self.overrides = json.loads(os.environ.get("NODEAUDIT_LEARN_OVERRIDES", "{}") or "{}")
        self.probe = os.environ.get("NODEAUDIT_LEARN_PROBE") == "1"


def _write_json(path, doc):
    temp = "%s.tmp-%d" % (path, os.getpid())
    with open(temp, "w") as f:
        json.dump(doc, f)
    os.replace(temp, path)


def _now():
    return time.perf_counter() - _STATE.t0


# --- loader side: files opened and images decoded inside a dataset fetch, memmaps made ----------


def _flush_loader_record(force=False):
    s = _STATE
    now = time.perf_counter()
    # Every fetch of the first few hundred samples is written (the files' sizes and the decoder are
    # known from the start), later ones at most four times a second.
    if not force and s.loader["samples_fetched"] > 256 and now - s.last_loader_flush < 0.25:
        return
    s.last_loader_flush = now
    from nodeaudit_learn_steps import steps_record_exists

    if steps_record_exists():
        return  # a rank: the loader counters go into its rank record
    try:
        _write_json(os.path.join(s.dir, "loader-%d.json" % os.getpid()),
                    {"kind": "loader", "pid": os.getpid(), "python": sys.executable, "loader": s.loader})
    except OSError:
        pass


def _wrap_fetch(fetcher_class):
    original = fetcher_class.fetch

    def fetch(self, possibly_batched_index):
        s = _STATE
        s.in_fetch.on = True
        try:
            data = original(self, possibly_batched_index)
        finally:
            s.in_fetch.on = False
        try:
            s.loader["samples_fetched"] += len(possibly_batched_index) if self.auto_collation else 1
        except TypeError:
            s.loader["samples_fetched"] += 1
        _flush_loader_record()
        return data

    fetcher_class.fetch = fetch


_original_open = builtins.open


def _open(file, mode="r", *args, **kwargs):
    f = _original_open(file, mode, *args, **kwargs)
    s = _STATE
    if getattr(s.in_fetch, "on", False) and not any(c in mode for c in "wax+"):
        try:
            size = os.fstat(f.fileno()).st_size
            s.loader["files_opened"] += 1
            s.loader["bytes_opened"] += size
        except (OSError, ValueError, AttributeError):
            pass
    return f


def _count_decoder(name):
    decoders = _STATE.loader["decoders"]
    decoders[name] = decoders.get(name, 0) + 1


def _hook_pil(image_module):
    original = image_module.open

    def open_image(*args, **kwargs):
        image = original(*args, **kwargs)
        _count_decoder("PIL:" + str(getattr(image, "format", None) or "unknown"))
        return image

    image_module.open = open_image


def _hook_torchvision_io(io_module):
    for name in ("decode_jpeg", "decode_image", "read_image"):
        original = getattr(io_module, name, None)
        if original is None:
            continue

        def decode(*args, _original=original, _name=name, **kwargs):
            _count_decoder("torchvision.io:" + _name)
            return _original(*args, **kwargs)

        setattr(io_module, name, decode)


def _hook_numpy(numpy_module):
    memmap = numpy_module.memmap
    original_new = memmap.__new__

    def new(subtype, filename, *args, **kwargs):
        array = original_new(subtype, filename, *args, **kwargs)
        try:
            path = getattr(filename, "name", filename)
            entry = {"path": os.path.abspath(str(path)), "file_bytes": os.path.getsize(path),
                     "itemsize": int(array.itemsize), "dtype": str(array.dtype)}
            if entry not in _STATE.loader["memmaps"]:
                _STATE.loader["memmaps"].append(entry)
        except (OSError, TypeError, ValueError):
            pass
        return array

    memmap.__new__ = new


def _hook_torch(torch_module):
    _STATE.torch = torch_module
    import torch.utils.data._utils.fetch as fetch

    _wrap_fetch(fetch._MapDatasetFetcher)
    _wrap_fetch(fetch._IterableDatasetFetcher)
    import nodeaudit_learn_steps

    nodeaudit_learn_steps.install(_STATE, torch_module)


# --- import hooks: run a function on a module right after the job imports it ----------------------

_AFTER_IMPORT = {"torch": _hook_torch, "numpy": _hook_numpy, "PIL.Image": _hook_pil, "torchvision.io": _hook_torchvision_io}


class _AfterImportLoader(importlib.abc.Loader):
    def __init__(self, loader, hook):
        self.loader, self.hook = loader, hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        try:
            self.hook(module)
        except Exception as error:  # a hook that fails must not fail the job: note it and go on
            _note_problem("hooking %s: %r" % (module.__name__, error))


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        hook = _AFTER_IMPORT.pop(fullname, None)
        if hook is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None:
            return None
        spec.loader = _AfterImportLoader(spec.loader, hook)
        return spec


def _note_problem(text):
    problems = _STATE.loader.setdefault("problems", [])
    if len(problems) < 10:
        problems.append(text)


def _note_python_without_torch():
    # A process that never imported torch: say so when it had none to import, so nodeaudit can name
    # the interpreter instead of guessing from the job's last lines.
    if _STATE.torch is not None or "torch" in sys.modules:
        return
    try:
        has_torch = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        has_torch = False
    if not has_torch:
        try:
            _write_json(os.path.join(_STATE.dir, "python-%d.json" % os.getpid()),
                        {"kind": "python", "pid": os.getpid(), "python": sys.executable, "torch": False})
        except OSError:
            pass


def install():
    global _STATE
    if _STATE is not None:
        return
    _STATE = _State()
    builtins.open = _open
    for name in list(_AFTER_IMPORT):
        if name in sys.modules:
            _AFTER_IMPORT.pop(name)(sys.modules[name])
    sys.meta_path.insert(0, _AfterImportFinder())
    import atexit

    atexit.register(_note_python_without_torch)
