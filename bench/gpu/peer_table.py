#!/usr/bin/env python3
"""nodeaudit's GPU figures beside PyTorch's, from rounds run alternately on the same GPU.

Each round is one nodeaudit result file and one torch_peers.py file. Per figure and side the
round's median is taken; the table shows the median over rounds, the range of the per-round
medians, and the ratio nodeaudit / PyTorch (median of the per-round ratios, with their range).
Two rows compare nodeaudit with itself: pipeline.step's host-to-device rate against gpu.pcie's
pinned H2D, and pipeline.step's GEMM rate against gpu.gemm at the same dtype (the probes' median
over the rounds; each round counted once).

Usage: peer_table.py --nodeaudit R1.json [R2.json ..] --torch P1.json [P2.json ..]
                     [--run FULL_RUN.json] [--commit REV] [--md OUT.md] [--json OUT.json]
Rounds pair in order (R1 with P1, ...). --run adds the pipeline.step rows from a full run (which
may itself be R1) and the node's driver and the run's date to the heading; --commit names the
nodeaudit build.
Exit 0 with the table (a missed goal is a row saying so), 2 on unreadable input.
"""
import argparse
import json
import statistics
import sys


def fail(message):
    print(f"peer_table: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def metric_median(result, probe_id, name, labels):
    """The median of the first metric of probe_id named `name` whose labels include `labels`."""
    for probe in result.get("probes", []):
        if probe.get("id") != probe_id:
            continue
        for m in probe.get("metrics", []):
            if m.get("name") == name and all(m.get("labels", {}).get(k) == v for k, v in labels.items()):
                return m.get("median")
    return None


def probe_of(result, probe_id):
    return next((p for p in result.get("probes", []) if p.get("id") == probe_id), None)


def torch_median(doc, name, labels):
    for f in doc.get("figures", []):
        if f["name"] == name and all(str(f["labels"].get(k)) == str(v) for k, v in labels.items()):
            return f["median"]
    return None


# (row, unit, goal ratio, nodeaudit probe, metric, labels, torch figure, torch labels)
PEER_ROWS = [
    ("GEMM bf16", "TFLOP/s", 1.00, "gpu.gemm", "tflops", {"gpu": "0", "dtype": "bf16"}, "gemm_tflops", {"dtype": "bf16"}),
    ("GEMM fp8 e4m3", "TFLOP/s", 1.00, "gpu.gemm", "tflops", {"gpu": "0", "dtype": "fp8"}, "gemm_tflops", {"dtype": "fp8"}),
    ("HBM copy", "GB/s", 1.00, "gpu.memory-bandwidth", "bandwidth", {"gpu": "0", "kernel": "copy"}, "d2d_copy_gbps", {}),
    ("H2D pinned", "GB/s", 0.98, "gpu.pcie", "h2d_bandwidth", {"gpu": "0", "memory": "pinned", "mode": "single"},
     "h2d_pinned_gbps", {}),
    ("D2H pinned", "GB/s", 0.98, "gpu.pcie", "d2h_bandwidth", {"gpu": "0", "memory": "pinned", "mode": "single"},
     "d2h_pinned_gbps", {}),
]


def spread(values):
    return f"{min(values):.4g}-{max(values):.4g}" if len(values) > 1 else "one round"


def peer_row(spec, nodeaudit_rounds, torch_rounds):
    label, unit, goal, probe, metric, labels, peer, peer_labels = spec
    ours = [metric_median(r, probe, metric, labels) for r in nodeaudit_rounds]
    theirs = [torch_median(t, peer, peer_labels) for t in torch_rounds]
    row = {"figure": label, "unit": unit, "goal": f">= {goal:.2f}x"}
    pairs = [(a, b) for a, b in zip(ours, theirs) if a is not None and b is not None and b > 0]
    if not pairs:
        why = [f"nodeaudit {probe} {metric} not measured" for _ in [0] if all(v is None for v in ours)]
        why += [f"PyTorch {peer} not measured" for _ in [0] if all(v is None for v in theirs)]
        row.update(nodeaudit=None, peer=None, ratio=None, met=None, note="; ".join(why) or "no round with both figures")
        return row
    a_values, b_values = [a for a, _ in pairs], [b for _, b in pairs]
    ratios = [a / b for a, b in pairs]
    ratio = statistics.median(ratios)
    row.update(nodeaudit=statistics.median(a_values), peer=statistics.median(b_values), ratio=ratio,
               met=ratio >= goal - 1e-9, rounds=len(pairs),
               note=f"rounds {len(pairs)}; nodeaudit {spread(a_values)}, PyTorch {spread(b_values)}, ratios {spread(ratios)}")
    if metric == "tflops":
        row["note"] += shape_note(labels["dtype"], nodeaudit_rounds, torch_rounds)
    return row


def shape_note(dtype, nodeaudit_rounds, torch_rounds):
    """Names the rounds where gpu.gemm's shape search chose another shape than PyTorch ran."""
    differ = []
    for i, (r, t) in enumerate(zip(nodeaudit_rounds, torch_rounds), start=1):
        ours = ((probe_of(r, "gpu.gemm") or {}).get("info", {}).get("best_shape", {})).get(dtype)
        theirs = next((f["labels"].get("shape") for f in t.get("figures", [])
                       if f["name"] == "gemm_tflops" and f["labels"].get("dtype") == dtype), None)
        if ours and theirs and ours != theirs:
            differ.append(f"round {i} nodeaudit {ours} vs PyTorch {theirs}")
    return f"; shapes differ: {', '.join(differ)}" if differ else ""


def self_rows(run, probe_rounds):
    """pipeline.step against the probes that measure the same work alone (goal: within 5%), over
    the nodeaudit rounds only: the full run is one of them when it is round 1, never added twice."""
    rows = []
    step = probe_of(run, "pipeline.step") if run else None
    if not step or step.get("status") != "ok":
        why = "pipeline.step " + (step.get("status", "?") + ": " + step.get("reason", "") if step else "not in --run")
        return [{"figure": f, "unit": u, "goal": "within 5%", "nodeaudit": None, "peer": None, "ratio": None, "met": None,
                 "note": why} for f, u in (("pipeline.step H2D vs gpu.pcie", "GB/s"), ("pipeline.step GEMM vs gpu.gemm", "TFLOP/s"))]
    h2d = metric_median(run, "pipeline.step", "host_to_device_bandwidth", {})
    pcie = [metric_median(r, "gpu.pcie", "h2d_bandwidth", {"gpu": "0", "memory": "pinned", "mode": "single"})
            for r in probe_rounds]
    pcie = [p for p in pcie if p]
    rows.append(within_row("pipeline.step H2D vs gpu.pcie", "GB/s", h2d, statistics.median(pcie) if pcie else None,
                           "pipeline.step host_to_device_bandwidth; gpu.pcie pinned single H2D"))
    info = step.get("info", {})
    dtype = info.get("gemms", {}).get("dtype")
    gemm = [metric_median(r, "gpu.gemm", "tflops", {"gpu": "0", "dtype": dtype}) for r in probe_rounds]
    gemm = [g for g in gemm if g]
    rows.append(within_row("pipeline.step GEMM vs gpu.gemm", "TFLOP/s", info.get("gemm_tflops_per_gpu"),
                           statistics.median(gemm) if gemm else None,
                           f"pipeline.step info.gemm_tflops_per_gpu; gpu.gemm {dtype}"))
    return rows


def within_row(label, unit, ours, reference, note):
    row = {"figure": label, "unit": unit, "goal": "within 5%", "nodeaudit": ours, "peer": reference, "note": note}
    if ours is None or not reference:
        row.update(ratio=None, met=None, note=note + ": " + ("first figure" if ours is None else "second figure") + " not measured")
    else:
        row.update(ratio=ours / reference, met=abs(ours / reference - 1) <= 0.05)
    return row


def markdown(rows, header):
    def num(v):
        return "—" if v is None else f"{v:.4g}"

    lines = [header, "", "| figure | unit | nodeaudit | PyTorch / reference | ratio | goal | met | rounds and spread |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        met = "not measured" if r["met"] is None else ("yes" if r["met"] else "**no**")
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f}x"
        lines.append(f"| {r['figure']} | {r['unit']} | {num(r['nodeaudit'])} | {num(r['peer'])} | {ratio} | {r['goal']} | "
                     f"{met} | {r['note']} |")
    return "\n".join(lines) + "\n"


def heading_facts(run, ours, theirs, commit):
    """What the table was measured on and with: GPU, driver, versions, commit, date, round count."""
    env = (run or {}).get("env") or next((r.get("env") for r in ours if r.get("env")), {}) or {}
    gpus = env.get("gpus") or []
    gpu = next((t.get("gpu") for t in theirs if t.get("gpu")), None) or (gpus[0].get("name") if gpus else "no GPU")
    versions = next((f"torch {t.get('torch')}, CUDA {t.get('cuda')}" for t in theirs if t.get("torch")), "PyTorch did not run")
    return {"gpu": gpu, "driver": (env.get("software") or {}).get("driver", "unknown"), "versions": versions,
            "commit": commit or "unknown commit", "date": (run or {}).get("started_at") or "unknown",
            "rounds": len(ours)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodeaudit", nargs="+", required=True)
    parser.add_argument("--torch", nargs="+", required=True)
    parser.add_argument("--run", help="full nodeaudit run with pipeline.step")
    parser.add_argument("--commit", help="the nodeaudit build's commit")
    parser.add_argument("--md")
    parser.add_argument("--json")
    args = parser.parse_args()
    if len(args.nodeaudit) != len(args.torch):
        fail(f"{len(args.nodeaudit)} nodeaudit rounds and {len(args.torch)} PyTorch rounds: give one of each per round")
    ours = [load(p) for p in args.nodeaudit]
    theirs = [load(p) for p in args.torch]
    run = load(args.run) if args.run else None
    rows = [peer_row(spec, ours, theirs) for spec in PEER_ROWS] + self_rows(run, ours)
    about = heading_facts(run, ours, theirs, args.commit)
    heading = (f"nodeaudit {about['commit']} beside PyTorch on {about['gpu']}: driver {about['driver']}, "
               f"{about['versions']}; {about['rounds']} alternating rounds; run started {about['date']}")
    text = markdown(rows, heading)
    print(text, end="")
    for path, content in ((args.md, text), (args.json, json.dumps(dict(about, rows=rows), indent=1))):
        if path:
            with open(path + ".tmp", "w") as f:
                f.write(content)
            import os
            os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
