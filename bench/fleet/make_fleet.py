#!/usr/bin/env python3
"""Writes a generated fleet of nodeaudit results for timing `nodeaudit report --fleet`: NODES copies
(default 1000) of a recorded result (default tests/fixtures/results/balanced.json, 8 GPUs) named
node-0001.json ..., every figure scaled by a per-node factor drawn from N(1, 1%) and each GPU's by a
further N(1, 0.5%), with faults planted at known places so the report's answer can be checked:
  every 100th node (node-0100, node-0200, ...)   all gpu.gemm figures 20% low   (slow nodes)
  every 250th node, counting from node-0125      GPU 5's gpu.gemm 15% low       (outlier GPUs)
  every 40th node, counting from node-0007       NVIDIA driver 550.90.07        (drift)
and three files that are not results (skipped with their reasons). Seeded: the same files each run.
Usage: make_fleet.py OUT_DIR [--nodes N] [--from RESULT.json]"""
import argparse, copy, json, os, random

HERE = os.path.dirname(os.path.abspath(__file__))
STATS = ("median", "mean", "min", "max", "p5", "p95", "stdev")
LISTS = ("ci95", "samples", "round_medians")


def scale(metric, factor):
    for key in STATS:
        if key in metric:
            metric[key] *= factor
    for key in LISTS:
        if key in metric:
            metric[key] = [v * factor for v in metric[key]]


def node(base, number, rng):
    doc = copy.deepcopy(base)
    doc["assessment"] = None
    doc["env"]["host"]["hostname"] = "node-%04d" % number
    if number % 40 == 7:
        doc["env"]["software"]["driver"] = "550.90.07"
    node_factor = rng.gauss(1.0, 0.01)
    gpu_factor = {}
    for probe in doc["probes"]:
        for metric in probe["metrics"]:
            gpu = metric["labels"].get("gpu")
            factor = node_factor
            if gpu is not None:
                factor *= gpu_factor.setdefault(gpu, rng.gauss(1.0, 0.005))
            if probe["id"] == "gpu.gemm" and metric["name"] != "spread_pct":
                if number % 100 == 0:
                    factor *= 0.80
                if number % 250 == 125 and gpu == "5":
                    factor *= 0.85
            scale(metric, factor)
    return doc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--from", dest="source",
                        default=os.path.join(HERE, "..", "..", "tests", "fixtures", "results", "balanced.json"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(args.source) as f:
        base = json.load(f)
    rng = random.Random(20261204)
    for number in range(1, args.nodes + 1):
        with open(os.path.join(args.out, "node-%04d.json" % number), "w") as f:
            json.dump(node(base, number, rng), f, indent=1)
    with open(os.path.join(args.out, "inventory.json"), "w") as f:
        json.dump({"racks": 40}, f)
    open(os.path.join(args.out, "empty.json"), "w").close()
    with open(os.path.join(args.out, "truncated.json"), "w") as f:
        f.write(json.dumps(base)[:5000])


if __name__ == "__main__":
    main()
