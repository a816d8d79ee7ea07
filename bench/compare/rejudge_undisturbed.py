#!/usr/bin/env python3
"""The runs of noise_goals.sh compared again with the disturbance marks taken out.

On a node that other work loads throughout, every probe is marked `disturbed` and compare judges
none of its figures, so the goals cannot be read from noise_goals.sh's own summary. This strips
`disturbance`/`disturbed` from copies of the results (OUT_DIR/undisturbed/) and prints the same
goals as if the runs had been quiet: what the noise band alone does with that node's noise.

Usage: rejudge_undisturbed.py OUT_DIR [NODEAUDIT]   (OUT_DIR as given to noise_goals.sh)
"""
import itertools
import json
import os
import re
import subprocess
import sys

out = os.path.realpath(sys.argv[1])
binary = sys.argv[2] if len(sys.argv) > 2 else "build/nodeaudit"
copies = os.path.join(out, "undisturbed")
os.makedirs(copies, exist_ok=True)
COUNTS = r"(\d+) (regressed|improved|unchanged|inconclusive|not judged|incomparable)"


def stripped(path):
    doc = json.load(open(path))
    for probe in doc["probes"]:
        probe.pop("disturbance", None)
        probe.pop("disturbed", None)
    copy = os.path.join(copies, os.path.relpath(path, out).replace("/", "_"))
    with open(copy, "w") as f:
        json.dump(doc, f)
    return copy


def compare(baseline, candidate):
    r = subprocess.run([binary, "compare", baseline, candidate], capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if re.match(r"^\*\*(NO )?REGRESSION\*\*", l)), "")
    return r.returncode, {k: int(v) for v, k in re.findall(COUNTS, line)}, r.stdout


for mode in ("after-quick", "after-rounds3", "before-quick", "before-rounds3"):
    if not os.path.isdir(os.path.join(out, mode)):
        continue
    runs = sorted(os.path.join(out, mode, f) for f in os.listdir(os.path.join(out, mode)) if re.match(r"run\d+\.json$", f))
    runs = [stripped(r) for r in runs]
    totals, exit1, pairs = {}, 0, 0
    for a, b in itertools.permutations(runs, 2):
        rc, counts, _ = compare(a, b)
        pairs += 1
        exit1 += rc == 1
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
    figures = sum(totals.values()) or 1
    shares = ", ".join(f"{k} {v} ({100 * v / figures:.0f}%)" for k, v in totals.items() if v)
    print(f"{mode}: A/A pairs exiting 1: {exit1} of {pairs}; figures: {shares}")

single = os.path.join(out, "single.json")
if os.path.exists(single):
    rc, counts, _ = compare(stripped(single), stripped(os.path.join(out, "single-20pct-slower.json")))
    print(f"20% drop between two single-run results: exit {rc} (goal 1); {counts}")
slow = os.path.join(out, "slow.json")
if os.path.exists(slow) and os.path.isdir(os.path.join(out, "after-quick")):
    caught, tried = 0, 0
    for f in sorted(os.listdir(os.path.join(out, "after-quick"))):
        if not re.match(r"run\d+\.json$", f):
            continue
        rc, _, text = compare(stripped(os.path.join(out, "after-quick", f)), stripped(slow))
        tried += 1
        caught += rc == 1 and any(re.match(r"^\| host\.[a-z-]* .* \| regression", l) for l in text.splitlines())
    print(f"slowdown under the quota caught (exit 1, a host.* figure regressed): {caught} of {tried}")
