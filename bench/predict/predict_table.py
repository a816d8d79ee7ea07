# The table of predict_bench.sh: per job and node, the predicted mean step and data wait beside the
# job's measured ones (the learn run on that node: mean of its measured steps), the error, and the
# goals: median |step error| <= 10%, worst <= 20%, data wait within 7 points, the nodes ranked by
# samples/s as measured.
# The ranking is judged pair by pair: two nodes the prediction separates by more than 10% in
# samples/s (its own precision goal) must be measured in the same order; two it puts within 10% of
# each other are a predicted tie, right when they are measured within 20% (the worst-error goal).
# Usage: python predict_table.py OUT_DIR
import json
import statistics
import sys
from pathlib import Path


def measured(path):
    doc = json.loads(path.read_text())
    for probe in doc["probes"]:
        if probe["id"] == "learn.job":
            m = probe.get("info", {}).get("job_measured")
            if not m:
                return None
            return {"step_s": m["step_s"], "wait": m["data_wait_s"] / m["step_s"], "samples_per_s": m["samples_per_step"] / m["step_s"]}
    return None


def ranking_misses(pairs):
    """The node pairs ranked wrong: (node, predicted samples/s, measured samples/s) each."""
    misses = []
    for i, (a, pa, ma) in enumerate(pairs):
        for b, pb, mb in pairs[i + 1:]:
            predicted_ratio, measured_ratio = pa / pb, ma / mb
            if abs(predicted_ratio - 1) <= 0.10:
                if abs(measured_ratio - 1) > 0.20:
                    misses.append("%s and %s predicted within 10%%, measured %.2fx apart" % (a, b, measured_ratio))
            elif (predicted_ratio > 1) != (measured_ratio > 1):
                misses.append("%s/%s predicted %.2fx, measured %.2fx" % (a, b, predicted_ratio, measured_ratio))
    return misses


def main(out):
    out = Path(out)
    rows, errors, waits, rankings = [], [], [], []
    for job in ("images", "tokens", "checkpoint"):
        predicted_file = out / ("%s-predicted.json" % job)
        if not predicted_file.exists():
            continue
        cells = json.loads(predicted_file.read_text())["cells"][0]
        pairs = []
        for cell in cells:
            node = cell["node"].split("-node-", 1)[1]
            m_path = out / ("%s-measured-%s.json" % (job, node))
            m = measured(m_path) if m_path.exists() else None
            p_step = cell.get("step_s")
            if m is None or p_step is None:
                rows.append("| %s | %s | %s | %s | | | | %s |" % (job, node, "%.1f ms" % (p_step * 1e3) if p_step else "not judged",
                                                             "%.1f ms" % (m["step_s"] * 1e3) if m else "not measured", cell.get("limiting", "")))
                continue
            error = (p_step - m["step_s"]) / m["step_s"]
            p_wait = cell.get("data_wait_share")
            wait_diff = (p_wait - m["wait"]) * 100 if p_wait is not None else None
            errors.append(abs(error))
            if wait_diff is not None:
                waits.append(abs(wait_diff))
            pairs.append((node, cell["samples_per_s"], m["samples_per_s"]))
            rows.append("| %s | %s | %.1f ms | %.1f ms | %+.1f%% | %s | %.1f%% | %s |" % (
                job, node, p_step * 1e3, m["step_s"] * 1e3, error * 100,
                "%.1f%%" % (p_wait * 100) if p_wait is not None else "not judged", m["wait"] * 100, cell.get("limiting", "")))
        by_prediction = [n for n, _, _ in sorted(pairs, key=lambda p: -p[1])]
        by_measurement = [n for n, _, _ in sorted(pairs, key=lambda p: -p[2])]
        rankings.append((job, by_prediction, by_measurement, ranking_misses(pairs)))
    print("| job | node | predicted step | measured step | error | predicted wait | measured wait | limiting (predicted) |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    if errors:
        print("median |step error| %.1f%% (goal <= 10%%), worst %.1f%% (goal <= 20%%), over %d job x node pairs" % (
            statistics.median(errors) * 100, max(errors) * 100, len(errors)))
    if waits:
        print("data wait: median |difference| %.1f points, worst %.1f points (goal: within 7)" % (statistics.median(waits), max(waits)))
    for job, predicted_order, measured_order, misses in rankings:
        print("%s: nodes by samples/s predicted %s, measured %s: %s" % (
            job, " > ".join(predicted_order), " > ".join(measured_order), "right" if not misses else "WRONG: " + "; ".join(misses)))


if __name__ == "__main__":
    main(sys.argv[1])
