#!/usr/bin/env python3
"""Between-run spread per probe and metric from aa.sh's runs: the evidence for the noise floors in
harness/report/noise_band.cpp. For every series (probe, params, metric, labels) present in all runs:
the relative range (max - min) / median of the runs' medians (what one run on each side sees), and
of all their round medians. Prints, per probe and metric name, the largest over its series.
Usage: floors.py run1.json run2.json ..."""
import json
import statistics
import sys
from collections import defaultdict


def series(doc):
    for p in doc["probes"]:
        for m in p["metrics"]:
            key = (p["id"], json.dumps(p.get("params", {}), sort_keys=True), m["name"], json.dumps(m["labels"], sort_keys=True))
            yield key, m["median"], m.get("round_medians", [m["median"]]), p.get("disturbed", False)


def spread(values):
    med = statistics.median(values)
    return (max(values) - min(values)) / abs(med) * 100 if med else 0.0


def main(paths):
    runs = defaultdict(list)
    rounds = defaultdict(list)
    disturbed = defaultdict(int)
    for path in paths:
        with open(path) as f:
            for key, median, round_medians, was_disturbed in series(json.load(f)):
                runs[key].append(median)
                rounds[key].extend(round_medians)
                disturbed[key] += was_disturbed
    worst = defaultdict(lambda: [0.0, 0.0, "", 0])
    for key, medians in runs.items():
        if len(medians) < len(paths):
            continue
        name = f"{key[0]} {key[2]}"
        w = worst[name]
        if spread(medians) > w[0]:
            w[0], w[2] = spread(medians), key[3]
        w[1] = max(w[1], spread(rounds[key]))
        w[3] = max(w[3], disturbed[key])
    print(f"{'probe metric':45} {'runs spread %':>13} {'rounds spread %':>15}  worst series; runs disturbed")
    for name, (run_spread, round_spread, labels, dist) in sorted(worst.items()):
        print(f"{name:45} {run_spread:13.1f} {round_spread:15.1f}  {labels}; {dist} of {len(paths)}")


if __name__ == "__main__":
    main(sys.argv[1:])
