#!/usr/bin/env python3
"""PyTorch's own figures for the work nodeaudit's GPU probes time, on the same GPU and the same sizes.

One call measures one round and writes one JSON document; scripts/device-run.sh alternates it with
nodeaudit's probes (A B A B) and bench/gpu/peer_table.py puts both side by side.

What is measured, counted the way nodeaudit counts it:
  gemm_tflops[dtype]   torch.matmul (bf16) or torch._scaled_mm (fp8 e4m3 in, bf16 out, as
                       gpu.gemm) at the shape gpu.gemm chose (info.best_shape), random inputs
                       (never zeros), `products` products back to back per timing as gpu.gemm's
                       info.products_per_timing, FLOPs = 2*M*N*K per product
  d2d_copy_gbps        dst.copy_(src) over gpu.memory-bandwidth's --buffer-size, bytes = read +
                       written = 2 x size (gpu.memory-bandwidth's copy kernel counts the same)
  h2d_pinned_gbps      device.copy_(pinned host, non_blocking) of gpu.pcie's --transfer-size
  d2h_pinned_gbps      pinned host.copy_(device, non_blocking), same size
Every timing is CUDA events around the work, under nodeaudit's repetition policy for the level
(quick: 1 warm-up repetition, then at least 5 timed ones and until 1 s of host time has gone into
timed work; standard: 2, 10, 5 s; at most 1000): both tools time the same amount of sustained work,
so clocks and temperature are alike. GEMMs also run the single-product warm-ups gpu.gemm runs
before it sizes its batch. The figure is the median of the timings, with min, max and the count.

Usage: torch_peers.py --result NODEAUDIT.json --out PEERS.json [--level quick|standard]
       [--device cpu --small]  (cpu: only to check this script where no GPU is present)
"""
import argparse
import json
import statistics
import sys
import time


def fail(message):
    print(f"torch_peers: {message}", file=sys.stderr)
    sys.exit(2)


def probe_entry(result, probe_id):
    for probe in result.get("probes", []):
        if probe.get("id") == probe_id:
            return probe
    return None


def size_bytes(text):
    """nodeaudit's binary size spelling (4GiB, 256MiB, 4096) -> bytes."""
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
    for suffix, factor in units.items():
        if str(text).endswith(suffix):
            return int(float(str(text)[: -len(suffix)]) * factor)
    return int(text)


def plan_from_result(result):
    """The sizes nodeaudit used, so both tools do the same work; defaults are nodeaudit's own."""
    plan = {"gemm": {}, "copy_bytes": 4 << 30, "transfer_bytes": 256 << 20, "sources": {}}
    gemm = probe_entry(result, "gpu.gemm")
    info = (gemm or {}).get("info", {})
    for dtype, shape in info.get("best_shape", {}).items():
        m, n, k = (int(v) for v in shape.split("x"))
        products = int(info.get("products_per_timing", {}).get(dtype, 10))
        plan["gemm"][dtype] = {"m": m, "n": n, "k": k, "products": products}
    plan["sources"]["gemm"] = "gpu.gemm info.best_shape" if plan["gemm"] else "gpu.gemm did not run: no shape"
    bandwidth = probe_entry(result, "gpu.memory-bandwidth")
    if bandwidth and "buffer-size" in bandwidth.get("params", {}):
        plan["copy_bytes"] = size_bytes(bandwidth["params"]["buffer-size"])
    pcie = probe_entry(result, "gpu.pcie")
    if pcie and "transfer-size" in pcie.get("params", {}):
        plan["transfer_bytes"] = size_bytes(pcie["params"]["transfer-size"])
    return plan


# nodeaudit's RepeatPolicy per level (harness default_policy): warm-up repetitions, the least
# timed repetitions, the host seconds of timed work after which it stops, the most repetitions.
POLICIES = {
    "quick": {"warmup": 1, "min_repetitions": 5, "budget_s": 1.0, "max_repetitions": 1000},
    "standard": {"warmup": 2, "min_repetitions": 10, "budget_s": 5.0, "max_repetitions": 1000},
}


class Timer:
    """CUDA events on a GPU; perf_counter on the CPU (the check-only path). Each repetition is
    synchronous, as in nodeaudit: record, work, record, wait."""

    def __init__(self, torch, device, policy):
        self.torch, self.cuda, self.policy = torch, device == "cuda", policy

    def one(self, work):
        """(timed seconds, host seconds) of one repetition."""
        begin = time.perf_counter()
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            stop = self.torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) / 1e3, time.perf_counter() - begin
        work()
        host_s = time.perf_counter() - begin
        return host_s, host_s

    def seconds(self, work):
        p = self.policy
        for _ in range(p["warmup"]):
            self.one(work)
        out, host_total_s = [], 0.0
        while len(out) < p["max_repetitions"]:
            if len(out) >= p["min_repetitions"] and host_total_s >= p["budget_s"]:
                break
            timed_s, host_s = self.one(work)
            out.append(timed_s)
            host_total_s += host_s
        return out


def figure(name, unit, work_amount, seconds, labels, note):
    rates = [work_amount / s for s in seconds if s > 0]
    return {
        "name": name, "unit": unit, "labels": labels, "n": len(rates),
        "median": statistics.median(rates), "min": min(rates), "max": max(rates), "note": note,
    }


def gemm_figures(torch, device, plan, timer):
    figures, skipped = [], {}
    for dtype, s in plan["gemm"].items():
        m, n, k, products = s["m"], s["n"], s["k"], s["products"]
        if dtype == "bf16":
            a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
            b = torch.randn(k, n, device=device, dtype=torch.bfloat16)
            c = torch.empty(m, n, device=device, dtype=torch.bfloat16)

            def work(a=a, b=b, c=c):
                for _ in range(products):
                    torch.matmul(a, b, out=c)

            def single(a=a, b=b, c=c):
                torch.matmul(a, b, out=c)

            note = "torch.matmul bf16"
        elif dtype == "fp8":
            if device != "cuda" or torch.cuda.get_device_capability() < (8, 9):
                skipped[dtype] = "fp8 needs a GPU of compute capability 8.9 or newer"
                continue
            a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()  # column-major K x N
            one = torch.ones((), device=device, dtype=torch.float32)

            def work(a=a, b=b, one=one):
                for _ in range(products):
                    torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

            def single(a=a, b=b, one=one):
                torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

            note = "torch._scaled_mm fp8 e4m3 -> bf16"
        else:
            skipped[dtype] = "no PyTorch peer measured for this dtype"
            continue
        for _ in range(2):  # gpu.gemm times two single products (kernel loading, then sizing) first
            timer.one(single)
        seconds = timer.seconds(work)
        figures.append(figure("gemm_tflops", "TFLOP/s", 2.0 * m * n * k * products / 1e12, seconds,
                              {"dtype": dtype, "shape": f"{m}x{n}x{k}", "products": products}, note))
    return figures, skipped


def copy_figures(torch, device, plan, timer):
    copy_bytes, transfer = plan["copy_bytes"], plan["transfer_bytes"]
    src = torch.randint(0, 255, (copy_bytes,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    figures = [figure("d2d_copy_gbps", "GB/s", 2.0 * copy_bytes / 1e9, timer.seconds(lambda: dst.copy_(src)),
                      {"bytes": copy_bytes}, "dst.copy_(src); bytes read + written")]
    del src, dst
    pin = device == "cuda"
    host = torch.randint(0, 255, (transfer,), dtype=torch.uint8).pin_memory() if pin else torch.randint(0, 255, (transfer,), dtype=torch.uint8)
    on_device = torch.empty(transfer, dtype=torch.uint8, device=device)
    figures.append(figure("h2d_pinned_gbps", "GB/s", transfer / 1e9,
                          timer.seconds(lambda: on_device.copy_(host, non_blocking=True)),
                          {"bytes": transfer}, "device.copy_(pinned host, non_blocking=True)"))
    figures.append(figure("d2h_pinned_gbps", "GB/s", transfer / 1e9,
                          timer.seconds(lambda: host.copy_(on_device, non_blocking=True)),
                          {"bytes": transfer}, "pinned host.copy_(device, non_blocking=True)"))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--result", required=True, help="nodeaudit result JSON (sizes and shapes are taken from it)")
    parser.add_argument("--out", required=True, help="where to write this round's figures (JSON)")
    parser.add_argument("--level", choices=sorted(POLICIES), default="quick",
                        help="nodeaudit's level whose repetition policy to follow (that of the result's run)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--small", action="store_true", help="shrink every size (script check only)")
    args = parser.parse_args()
    try:
        with open(args.result) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"--result {args.result}: {e}")
    try:
        import torch
    except ImportError as e:
        fail(f"{sys.executable} cannot import torch: {e}")
    doc = {"tool": "pytorch", "torch": torch.__version__, "device": args.device, "level": args.level,
           "policy": POLICIES[args.level], "result": args.result, "figures": [], "skipped": {}}
    if args.device == "cuda" and not torch.cuda.is_available():
        doc["skipped"]["all"] = "no CUDA device (torch.cuda.is_available() is False)"
    else:
        plan = plan_from_result(result)
        if args.small:
            plan["gemm"] = {d: {"m": 256, "n": 256, "k": 256, "products": 2} for d in plan["gemm"] or {"bf16": 0}}
            plan["copy_bytes"], plan["transfer_bytes"] = 8 << 20, 8 << 20
        doc["plan"] = plan
        if args.device == "cuda":
            doc["gpu"] = torch.cuda.get_device_name()
            doc["cuda"] = torch.version.cuda
        timer = Timer(torch, args.device, POLICIES[args.level])
        gemms, skipped = gemm_figures(torch, args.device, plan, timer)
        doc["figures"] += gemms
        doc["skipped"].update(skipped)
        doc["figures"] += copy_figures(torch, args.device, plan, timer)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    import os
    os.replace(tmp, args.out)
    for fig in doc["figures"]:
        print(f"torch_peers: {fig['name']:<16} {json.dumps(fig['labels'])} median {fig['median']:.4g} {fig['unit']} "
              f"(min {fig['min']:.4g}, max {fig['max']:.4g}, n {fig['n']})")
    for what, why in doc["skipped"].items():
        print(f"torch_peers: {what} skipped: {why}")


if __name__ == "__main__":
    main()
