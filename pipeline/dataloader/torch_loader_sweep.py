#!/usr/bin/env python3
"""host.dataloader's framework side: a real PyTorch DataLoader over nodeaudit's generated samples.

Run by the probe as a child process in the Python the user's training uses. For each decoder and
worker count it builds one DataLoader (the batch size, pin_memory, persistent workers as asked),
lets the workers start and fill the pipeline (--warmup-batches, not timed), then times --batches
batches or --max-seconds, whichever ends first, and reports:

  samples/s     = samples delivered to the main process / wall seconds
  cpu_seconds   = CPU time (user + system) of the main process and every worker over the window

Output: JSON lines in --out, one object each, nothing else; "done" is the last line of a complete
run. The probe parses them strictly. Kinds:
  {"kind": "loader", ...versions, "cpus": N}
  {"kind": "unavailable", "module": "torch", "why": "..."}   (then exit 0: the probe skips)
  {"kind": "point", "decoder": "pil", "workers": 2, ...}
  {"kind": "decoder_skipped", "decoder": "dali", "why": "..."}
  {"kind": "done"}

With --train-steps N (pipeline.step --loader pytorch) it instead runs N training steps on one
DataLoader (one decoder, one worker count): each step takes the next batch (data_wait_s: the time
next() blocked), then emulates the GPU with sleeps of --compute-s and --comm-s, as DLIO and MLPerf
Storage do. The first step starts the workers; the CPU figures cover the steps after it:
  {"kind": "step", "step": i, "samples": n, "data_wait_s": ..., "compute_s": ..., "comm_s": ..., "end_s": ...}
  {"kind": "train_cpu", "steps": N-1, "samples": ..., "seconds": ..., "main_cpu_seconds": ...,
   "worker_cpu_seconds": ..., "workers": w, "cpus": c}
"""
import argparse
import io
import json
import os
import platform
import sys
import time


def emit(out, record):
    out.write(json.dumps(record, sort_keys=True) + "\n")
    out.flush()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only the loader (or unavailable) line, then exit: a "
                   "preflight before samples are made")
    p.add_argument("--files", help="file with one sample path per line")
    p.add_argument("--kind", choices=["jpeg", "raw"], help="jpeg: decode + augment; raw: bytes to tensor")
    p.add_argument("--decoders", default="pil,torchvision", help="jpeg decoders to sweep: pil, torchvision")
    p.add_argument("--workers", help="comma-separated num_workers values")
    p.add_argument("--batch", type=int)
    p.add_argument("--batches", type=int, help="timed batches per point")
    p.add_argument("--warmup-batches", type=int, default=2)
    p.add_argument("--max-seconds", type=float, help="timed window cap per point")
    p.add_argument("--pin-memory", choices=["0", "1"], default="1")
    p.add_argument("--crop", type=int, default=224)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train-steps", type=int, help="run this many emulated training steps instead of the sweep")
    p.add_argument("--compute-s", type=float, default=0.0, help="emulated compute per step (a sleep)")
    p.add_argument("--prefetch-factor", type=int, default=2, help="batches each worker prefetches (--train-steps)")
    p.add_argument("--comm-s", type=float, default=0.0, help="emulated exposed all-reduce per step (a sleep)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    needed = ("files", "kind", "workers", "batch") + (() if args.train_steps else ("batches", "max_seconds"))
    missing = [name for name in needed if not args.check and getattr(args, name) is None]
    if missing:
        p.error("the sweep needs --" + ", --".join(m.replace("_", "-") for m in missing))
    return args


def import_framework(out):
    """torch and torchvision, or an 'unavailable' record naming what failed."""
    for module in ("torch", "torchvision"):
        try:
            __import__(module)
        except Exception as error:  # an ImportError, or a broken install raising something else
            emit(out, {"kind": "unavailable", "module": module, "why": f"{type(error).__name__}: {error}"})
            return False
    return True


def cpu_seconds_of(pid):
    """utime + stime of one process from /proc (seconds); 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def worker_pids(loader_iter):
    # The workers of a live iterator; a private attribute, so fall back to /proc's children list.
    workers = getattr(loader_iter, "_workers", None)
    if workers:
        return [w.pid for w in workers]
    pids = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            with open(f"/proc/{os.getpid()}/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return pids


def make_dataset(args, decoder):
    import torch
    from torch.utils.data import Dataset

    with open(args.files) as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]

    if args.kind == "raw":
        class RawSamples(Dataset):
            def __len__(self):
                return len(paths)

            def __getitem__(self, i):
                with open(paths[i], "rb") as f:
                    return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
        return RawSamples()

    from torchvision import transforms as v1
    from torchvision.transforms import v2

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    if decoder == "pil":
        from PIL import Image
        # The torchvision ImageNet example's training transform, on PIL images.
        transform = v1.Compose([v1.RandomResizedCrop(args.crop), v1.RandomHorizontalFlip(), v1.ToTensor(),
                                v1.Normalize(mean, std)])

        class PilSamples(Dataset):
            def __len__(self):
                return len(paths)

            def __getitem__(self, i):
                with open(paths[i], "rb") as f:
                    image = Image.open(io.BytesIO(f.read())).convert("RGB")
                return transform(image)
        return PilSamples()

    from torchvision.io import decode_jpeg
    # The same augmentation on uint8 tensors from libjpeg-turbo (torchvision.io), transforms v2.
    transform = v2.Compose([v2.RandomResizedCrop(args.crop, antialias=True), v2.RandomHorizontalFlip(),
                            v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])

    class TensorSamples(Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            with open(paths[i], "rb") as f:
                data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
            return transform(decode_jpeg(data))
    return TensorSamples()


def next_batch(state, loader):
    """The next batch, starting a new epoch (same persistent workers) when one ends."""
    try:
        return next(state["it"])
    except StopIteration:
        state["it"] = iter(loader)
        return next(state["it"])


def measure_point(args, decoder, workers, pin_memory):
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(args.seed)
    dataset = make_dataset(args, decoder)
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=workers, pin_memory=pin_memory,
                        persistent_workers=True, drop_last=True)
    state = {"it": iter(loader)}
    for _ in range(args.warmup_batches):  # workers start, import, and fill their prefetch queues
        next_batch(state, loader)
    pids = worker_pids(state["it"])
    cpu_start = time.process_time() + sum(cpu_seconds_of(p) for p in pids)
    start = time.perf_counter()
    samples = batches = 0
    while batches < args.batches and time.perf_counter() - start < args.max_seconds:
        batch = next_batch(state, loader)
        samples += batch.shape[0]
        batches += 1
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() + sum(cpu_seconds_of(p) for p in pids) - cpu_start
    del state
    del loader
    return {"kind": "point", "decoder": decoder, "workers": workers, "batch": args.batch, "batches": batches,
            "samples": samples, "seconds": seconds, "cpu_seconds": cpu_seconds, "pin_memory": pin_memory}


def sleep_for(seconds):
    """Sleeps `seconds` and returns how long it took (the emulated stage's measured time)."""
    start = time.perf_counter()
    if seconds > 0:
        time.sleep(seconds)
    return time.perf_counter() - start


def endless_shuffle(size, seed):
    """A sampler of shuffled epochs one after another: batches flow across epoch ends as in the
    native loader, so a small sample set does not add the DataLoader's end-of-epoch drain (the
    last batches finishing while the other workers idle) every few steps, which a training set of
    thousands of batches per epoch rarely sees."""
    import torch
    from torch.utils.data import Sampler

    class EndlessShuffle(Sampler):
        def __iter__(self):
            generator = torch.Generator()
            generator.manual_seed(seed)
            while True:
                yield from torch.randperm(size, generator=generator).tolist()
    return EndlessShuffle()


def run_steps(args, out, decoder, workers, pin_memory):
    """--train-steps: the training loop of a job whose GPU work is emulated, one record per step."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(args.seed)
    dataset = make_dataset(args, decoder)
    extra = {"prefetch_factor": args.prefetch_factor, "persistent_workers": True} if workers > 0 else {}
    loader = DataLoader(dataset, batch_size=args.batch, sampler=endless_shuffle(len(dataset), args.seed),
                        num_workers=workers, pin_memory=pin_memory, drop_last=True, **extra)
    state = {"it": iter(loader)}
    start = time.perf_counter()
    cpu_start = None
    pids = []
    samples_after_first = 0
    for step in range(args.train_steps):
        t0 = time.perf_counter()
        batch = next_batch(state, loader)
        t1 = time.perf_counter()
        compute_s = sleep_for(args.compute_s)
        comm_s = sleep_for(args.comm_s)
        end = time.perf_counter()
        emit(out, {"kind": "step", "step": step, "samples": int(batch.shape[0]), "data_wait_s": t1 - t0,
                   "compute_s": compute_s, "comm_s": comm_s, "end_s": end - start})
        if step == 0:  # the workers are up: the CPU window starts here
            pids = worker_pids(state["it"])
            cpu_start = (time.process_time(), sum(cpu_seconds_of(p) for p in pids), end)
        else:
            samples_after_first += int(batch.shape[0])
    if cpu_start is not None and args.train_steps > 1:
        emit(out, {"kind": "train_cpu", "steps": args.train_steps - 1, "samples": samples_after_first,
                   "seconds": time.perf_counter() - cpu_start[2],
                   "main_cpu_seconds": time.process_time() - cpu_start[0],
                   "worker_cpu_seconds": sum(cpu_seconds_of(p) for p in pids) - cpu_start[1],
                   "workers": workers, "cpus": len(os.sched_getaffinity(0))})


def optional_decoders():
    """What else a loader here could use; reported, never installed or measured by this script."""
    notes = []
    try:
        import PIL
        if "post" in PIL.__version__:  # Pillow-SIMD's versions carry a .postN suffix
            notes.append({"kind": "decoder_note", "decoder": "pillow-simd", "note": f"PIL is Pillow-SIMD {PIL.__version__}: "
                          "the pil points measure it"})
    except ImportError:
        pass
    try:
        import nvidia.dali  # noqa: F401
        notes.append({"kind": "decoder_skipped", "decoder": "dali", "why": "importable, but its CPU pipeline is not "
                      "measured by this version"})
    except ImportError:
        notes.append({"kind": "decoder_skipped", "decoder": "dali", "why": "not importable"})
    return notes


def main():
    args = parse_args()
    with open(args.out, "w") as out:
        if not import_framework(out):
            return 0
        import torch
        import torchvision
        import PIL
        pin_memory = args.pin_memory == "1" and torch.cuda.is_available()
        emit(out, {"kind": "loader", "python": platform.python_version(), "executable": sys.executable,
                   "torch": torch.__version__, "torchvision": torchvision.__version__, "pillow": PIL.__version__,
                   "cpus": len(os.sched_getaffinity(0)), "cuda": torch.cuda.is_available(),
                   "pin_memory_requested": args.pin_memory == "1", "pin_memory": pin_memory})
        if args.check:
            return 0
        decoders = args.decoders.split(",") if args.kind == "jpeg" else ["raw"]
        if args.train_steps:
            run_steps(args, out, decoders[0], int(args.workers), pin_memory)
            emit(out, {"kind": "done"})
            return 0
        for record in optional_decoders() if args.kind == "jpeg" else []:
            emit(out, record)
        for decoder in decoders:
            for workers in [int(w) for w in args.workers.split(",")]:
                emit(out, measure_point(args, decoder, workers, pin_memory))
        emit(out, {"kind": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
