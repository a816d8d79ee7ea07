# nodeaudit learn, the torch side: optimizer steps, backward calls, DataLoader batches and waits,
# checkpoints and torch.distributed, timed per optimizer step; then, over the last step(s), PyTorch's
# own FLOP counter, the dtype of the matmuls, autograd's saved tensors (activations) and the model's
# top-level input. A "step" ends when the first optimizer the job stepped steps again, so a job with
# several optimizers (a GAN's two) has each step cover all of them.
import json
import os
import sys
import threading
import time

_MATMUL_OPS = {"mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution", "matmul", "linear",
               "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
               "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu"}
_DTYPE_NAMES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float64": "fp64",
                "torch.float8_e4m3fn": "fp8", "torch.float8_e5m2": "fp8"}

_STEPS = None


def steps_record_exists():
    # A forked DataLoader worker inherits a copy of its parent's steps: only the process that took
    # the steps writes a rank record.
    return _STEPS is not None and _STEPS.step > 0 and _STEPS.pid == os.getpid()


def _tensor_bytes_and_rows(batch, depth=0):
    """Bytes of every tensor in a batch (tuple/list/dict nesting) and the first tensor's leading dim."""
    torch = _STEPS.torch
    if isinstance(batch, torch.Tensor):
        return batch.element_size() * batch.numel(), (batch.shape[0] if batch.dim() > 0 else 1)
    if depth > 3:
        return 0, None
    items = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else ()
    total, rows = 0, None
    for item in items:
        b, r = _tensor_bytes_and_rows(item, depth + 1)
        total += b
        rows = r if rows is None else rows
    return total, rows


class _Steps:
    def __init__(self, state, torch):
        self.state, self.torch = state, torch
        self.step = 0
        self.pid = os.getpid()
        self.primary = None
        self.optimizers = {}
        self.t_pre = {}
        self.last_end_s = None
        # The first step starts at the loop's first batch request, not at the interpreter's start:
        # imports, model building and data set indexing are not a step (it matters with --warmup 0).
        self.first_start_s = None
        # CPU time of this rank's own process (all its threads, not its DataLoader workers): with
        # the tree's CPU that nodeaudit samples, it splits the job's CPU into main process and loader.
        self.last_cpu_s = time.process_time()
        self.open = self._fresh_step()
        self.facts = {"optimizers": [], "dataloaders": [], "checkpoints": [], "compiled": False,
                      "distributed": {"initialized": False, "all_reduce_calls": 0, "all_reduce_bytes": 0, "ddp": False}}
        self.counting = None
        self.path = os.path.join(state.dir, "rank-%d.json" % os.getpid())
        # One line per step, appended as it ends (a few microseconds), so a job that dies keeps every
        # step it took; the record with the learned facts is rewritten only a few times.
        self.steps_file = None
        self.main_thread = threading.main_thread()

    @staticmethod
    def _fresh_step():
        return {"data_wait_s": 0.0, "fetch_cpu_s": 0.0, "backward_s": 0.0, "backward_calls": 0, "optimizer_s": 0.0, "batches": 0,
                "batch_samples": 0, "batch_bytes": 0, "checkpoint_s": 0.0, "checkpoint_bytes": 0}

    # --- per step -------------------------------------------------------------------------------
    def end_step(self):
        now = time.perf_counter() - self.state.t0
        cpu_s = time.process_time()
        self.step += 1
        if self.last_end_s is not None:
            start, began = self.last_end_s, None
        elif self.first_start_s is not None:
            start, began = self.first_start_s, "first batch request"
        else:
            start, began = 0.0, "process start"  # no DataLoader batch before it: the start-up is in the step
        entry = dict(self.open, step=self.step, end_s=now, main_cpu_s=cpu_s - self.last_cpu_s,
                     duration_s=now - start, phase=self._phase(self.step))
        if began:
            entry["began_at"] = began
        self._append_step(entry)
        self.last_end_s = now
        self.last_cpu_s = cpu_s
        self.open = self._fresh_step()
        facts_step = self.step == 1 or self.step == self.state.warmup + 1
        if facts_step:
            self._guarded(self._learn_model_state)
            self._guarded(self._learn_distributed)
        total = self.state.warmup + self.state.steps + self.state.flop_steps
        if self.step == self.state.warmup + self.state.steps and self.state.flop_steps > 0:
            self._guarded(self._start_counting)
        if self.step == total:
            self._guarded(self._stop_counting)
            self._guarded(self._learn_model_state)
            self.write("done")
            raise SystemExit(0)
        if facts_step:
            self.write("running")

    def _guarded(self, learn):
        # What learn measures must never fail the job: a failure is noted in the record and the
        # figure it was for is left out.
        try:
            learn()
        except Exception as error:
            problems = self.state.loader.setdefault("problems", [])
            if len(problems) < 10:
                problems.append("%s: %r" % (learn.__name__, error))

    def _phase(self, step):
        if step <= self.state.warmup:
            return "warmup"
        return "measured" if step <= self.state.warmup + self.state.steps else "counted"

    def _learn_model_state(self):
        facts, seen = [], set()
        for optimizer in self.optimizers.values():
            params = [p for g in optimizer.param_groups for p in g["params"] if id(p) not in seen]
            seen.update(id(p) for p in params)
            state_bytes = 0
            for per_param in optimizer.state.values():
                for value in per_param.values():
                    if isinstance(value, self.torch.Tensor):
                        state_bytes += value.element_size() * value.numel()
            grads = [p.grad for p in params if p.grad is not None]
            facts.append({"class": type(optimizer).__name__, "module": type(optimizer).__module__,
                          "parameters": sum(p.numel() for p in params),
                          "trainable_parameters": sum(p.numel() for p in params if p.requires_grad),
                          "param_bytes": sum(p.element_size() * p.numel() for p in params),
                          "grad_bytes": sum(g.element_size() * g.numel() for g in grads),
                          "grad_elements": sum(g.numel() for g in grads),
                          "grad_dtypes": sorted({str(g.dtype) for g in grads}),
                          "param_dtypes": sorted({str(p.dtype) for p in params}),
                          "state_bytes": state_bytes})
        self.facts["optimizers"] = facts

    def _learn_distributed(self):
        dist = getattr(self.torch, "distributed", None)
        info = self.facts["distributed"]
        if dist is not None and dist.is_available() and dist.is_initialized():
            info.update(initialized=True, world_size=dist.get_world_size(), rank=dist.get_rank(),
                        backend=str(dist.get_backend()))

    # --- the counted step(s): FLOPs, matmul dtypes, saved tensors, top-level module --------------
    def _start_counting(self):
        torch = self.torch
        from torch.utils.flop_counter import FlopCounterMode
        from torch.utils._python_dispatch import TorchDispatchMode

        counting = {"dtypes": {}, "activation_bytes": [], "current": [0, set()], "inputs": [], "modules": {},
                    "depth": [0], "contexts": [], "param_ptrs": set(), "start_step": self.step + 1}
        for optimizer in self.optimizers.values():
            for g in optimizer.param_groups:
                for p in g["params"]:
                    counting["param_ptrs"].add(p.untyped_storage().data_ptr())
        dtypes = counting["dtypes"]

        class MatmulDtypes(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ in _MATMUL_OPS:
                    for a in args:
                        if isinstance(a, torch.Tensor):
                            dtypes[str(a.dtype)] = dtypes.get(str(a.dtype), 0) + 1
                            break
                return func(*args, **(kwargs or {}))

        def pack(t):
            try:
                storage = t.untyped_storage()
                ptr = storage.data_ptr()
                if ptr not in counting["param_ptrs"] and ptr not in counting["current"][1]:
                    counting["current"][1].add(ptr)
                    counting["current"][0] += storage.nbytes()
            except Exception:
                pass
            return t

        def pre_forward(module, args):
            # Every module's own weights and buffers, trained or frozen, are not activations: autograd
            # saves a frozen weight to pass the gradient through its layer.
            for tensor in list(module.parameters(recurse=False)) + list(module.buffers(recurse=False)):
                try:
                    counting["param_ptrs"].add(tensor.untyped_storage().data_ptr())
                except Exception:
                    pass
            if counting["depth"][0] == 0:
                counting["modules"][id(module)] = module
                first = next((a for a in args if isinstance(a, torch.Tensor)), None)
                if first is not None and len(counting["inputs"]) < 8:
                    counting["inputs"].append({"shape": list(first.shape), "dtype": str(first.dtype),
                                               "bytes": sum(a.element_size() * a.numel() for a in args
                                                            if isinstance(a, torch.Tensor))})
            counting["depth"][0] += 1

        def post_forward(module, args, output):
            counting["depth"][0] = max(0, counting["depth"][0] - 1)

        modules = torch.nn.modules.module
        counting["handles"] = [modules.register_module_forward_pre_hook(pre_forward),
                               modules.register_module_forward_hook(post_forward)]
        flops = FlopCounterMode(display=False)
        counting["flops"] = flops
        contexts = [flops, MatmulDtypes()]
        if not self.facts["compiled"]:
            contexts.append(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
        entered = []
        try:
            for c in contexts:
                c.__enter__()
                entered.append(c)
        except Exception:
            for c in reversed(entered):
                c.__exit__(None, None, None)
            for handle in counting["handles"]:
                handle.remove()
            raise
        counting["contexts"] = contexts
        self.counting = counting

    def end_micro_batch(self):
        c = self.counting
        if c is not None and c["current"][0] > 0:
            c["activation_bytes"].append(c["current"][0])
            c["current"] = [0, set()]

    def _stop_counting(self):
        c = self.counting
        if c is None:
            return
        for context in reversed(c["contexts"]):
            context.__exit__(None, None, None)
        for handle in c["handles"]:
            handle.remove()
        self.end_micro_batch()
        seen, parameters = set(), 0
        for module in c["modules"].values():
            for p in module.parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    parameters += p.numel()
        self.facts["counted"] = {
            "steps": [c["start_step"], self.step], "flops": int(c["flops"].get_total_flops()),
            "matmul_dtypes": {_DTYPE_NAMES.get(k, k): v for k, v in c["dtypes"].items()},
            "activation_bytes_per_micro_batch": c["activation_bytes"],
            "activation_source": None if self.facts["compiled"] else "autograd saved tensors",
            "model_inputs": c["inputs"], "model_parameters": parameters,
            "tf32": bool(getattr(self.torch.backends.cuda.matmul, "allow_tf32", False))}
        self.counting = None

    # --- the record ------------------------------------------------------------------------------
    def _append_step(self, entry):
        try:
            if self.steps_file is None:
                self.steps_file = open(os.path.join(self.state.dir, "rank-%d.steps" % os.getpid()), "a", buffering=1)
            self.steps_file.write(json.dumps(entry) + "\n")
        except OSError:
            pass

    def write(self, status):
        torch = self.torch
        gpu = None
        if hasattr(torch, "cuda") and torch.cuda.is_initialized():
            gpu = {"name": torch.cuda.get_device_name(), "peak_allocated_bytes": torch.cuda.max_memory_allocated()}
        doc = {"kind": "rank", "pid": os.getpid(), "status": status, "python": sys.executable,
               "torch": torch.__version__, "env_rank": os.environ.get("RANK"),
               "warmup": self.state.warmup, "steps": self.state.steps, "flop_steps": self.state.flop_steps,
               "steps_done": self.step, "gpu": gpu, "loader": self.state.loader}
        doc.update(self.facts)
        try:
            temp = "%s.tmp" % self.path
            with open(temp, "w") as f:
                json.dump(doc, f)
            os.replace(temp, self.path)
        except OSError:
            pass


def _wrap(owner, name, make):
    original = getattr(owner, name, None)
    if original is not None:
        setattr(owner, name, make(original))


def _install_step_hooks(steps, torch):
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    def pre(optimizer, args, kwargs):
        steps.t_pre[id(optimizer)] = time.perf_counter()

    def post(optimizer, args, kwargs):
        started = steps.t_pre.pop(id(optimizer), None)
        if started is not None:
            steps.open["optimizer_s"] += time.perf_counter() - started
        if id(optimizer) not in steps.optimizers:
            steps.optimizers[id(optimizer)] = optimizer
        if steps.primary is None:
            steps.primary = id(optimizer)
        if id(optimizer) == steps.primary:
            steps.end_step()

    register_optimizer_step_pre_hook(pre)
    register_optimizer_step_post_hook(post)

    def make_backward(original):
        def backward(*args, **kwargs):
            steps.end_micro_batch()
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                steps.open["backward_s"] += time.perf_counter() - started
                steps.open["backward_calls"] += 1

        return backward

    _wrap(torch.autograd, "backward", make_backward)


def _install_data_hooks(steps, torch):
    import torch.utils.data.dataloader as dataloader

    def make_next(original):
        def next_batch(self):
            if threading.current_thread() is not steps.main_thread:
                return original(self)
            started, started_cpu = time.perf_counter(), time.thread_time()
            if steps.last_end_s is None and steps.first_start_s is None:
                steps.first_start_s = started - steps.state.t0
                steps.last_cpu_s = time.process_time()
            batch = original(self)
            steps.open["data_wait_s"] += time.perf_counter() - started
            # The main thread's own CPU in next(): receiving the batch from the workers, paid on every
            # step even when the workers are ahead; a wait for a slow loader costs no CPU.
            steps.open["fetch_cpu_s"] += time.thread_time() - started_cpu
            nbytes, rows = _tensor_bytes_and_rows(batch)
            steps.open["batches"] += 1
            steps.open["batch_samples"] += rows or 0
            steps.open["batch_bytes"] += nbytes
            return batch

        return next_batch

    _wrap(dataloader._BaseDataLoaderIter, "__next__", make_next)

    def make_init(original):
        import inspect

        signature = inspect.signature(original)
        overrides = steps.state.overrides.get("dataloader", {})

        def init(self, dataset, *args, **kwargs):
            if overrides:
                # `learn --vary`: the one setting changed, whether the job passed it by name or by
                # position; every other argument as the job gave it. Arguments that do not bind are
                # passed on unchanged, for the DataLoader to refuse as it would.
                try:
                    bound = signature.bind(self, dataset, *args, **kwargs)
                    bound.arguments.update(overrides)
                    args, kwargs = bound.args[2:], bound.kwargs
                except TypeError:
                    pass
            original(self, dataset, *args, **kwargs)
            try:
                length = len(dataset)
            except Exception:
                length = None
            if len(steps.facts["dataloaders"]) < 8:
                steps.facts["dataloaders"].append({
                    "dataset_class": type(dataset).__name__, "dataset_len": length, "batch_size": self.batch_size,
                    "num_workers": self.num_workers, "prefetch_factor": self.prefetch_factor,
                    "pin_memory": bool(self.pin_memory), "persistent_workers": bool(self.persistent_workers),
                    "drop_last": bool(self.drop_last)})
            if steps.state.probe:
                _end_probe(steps)

        return init

    _wrap(dataloader.DataLoader, "__init__", make_init)


def _end_probe(steps):
    # `learn --vary`'s probe run: the job's own DataLoader arguments are known once it makes its
    # first DataLoader, so the job ends there, before a worker starts or a step runs.
    steps.write("probe")
    raise SystemExit(0)


def _install_job_hooks(steps, torch):
    def make_save(original):
        def save(obj, f, *args, **kwargs):
            started = time.perf_counter()
            result = original(obj, f, *args, **kwargs)
            seconds = time.perf_counter() - started
            try:
                size = os.path.getsize(f) if isinstance(f, (str, os.PathLike)) else f.tell()
            except (OSError, AttributeError, ValueError):
                size = None
            steps.open["checkpoint_s"] += seconds
            steps.open["checkpoint_bytes"] += size or 0
            if len(steps.facts["checkpoints"]) < 100:
                steps.facts["checkpoints"].append({"after_step": steps.step, "bytes": size, "seconds": seconds})
            return result

        return save

    _wrap(torch, "save", make_save)

    def make_compile(original):
        def compile(*args, **kwargs):
            steps.facts["compiled"] = True
            return original(*args, **kwargs)

        return compile

    _wrap(torch, "compile", make_compile)
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return

    def make_all_reduce(original):
        def all_reduce(tensor, *args, **kwargs):
            info = steps.facts["distributed"]
            info["all_reduce_calls"] += 1
            info["all_reduce_bytes"] += tensor.element_size() * tensor.numel()
            return original(tensor, *args, **kwargs)

        return all_reduce

    _wrap(dist, "all_reduce", make_all_reduce)
    import torch.nn.parallel as parallel

    def make_ddp_init(original):
        def init(self, *args, **kwargs):
            steps.facts["distributed"]["ddp"] = True
            return original(self, *args, **kwargs)

        return init

    _wrap(parallel.DistributedDataParallel, "__init__", make_ddp_init)


def install(state, torch):
    global _STEPS
    if _STEPS is not None:
        return
    _STEPS = _Steps(state, torch)
    _install_step_hooks(_STEPS, torch)
    _install_data_hooks(_STEPS, torch)
    _install_job_hooks(_STEPS, torch)
