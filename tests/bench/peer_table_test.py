#!/usr/bin/env python3
"""bench/gpu/peer_table.py and torch_peers.py's sizing, on hand-made result files: the ratio is the
median of the per-round ratios, goals are judged per row, a figure missing on either side says so,
and the PyTorch side takes gpu.gemm's chosen shape and the probes' sizes."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_BENCH = os.path.join(HERE, "..", "..", "bench", "gpu")
sys.path.insert(0, GPU_BENCH)
import torch_peers  # noqa: E402  (the module under test; it imports torch only inside main)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def metric(name, labels, median, unit="GB/s"):
    return {"name": name, "labels": labels, "median": median, "unit": unit}


def nodeaudit_round(bf16, copy, h2d, d2h):
    return {"probes": [
        {"id": "gpu.gemm", "status": "ok", "params": {}, "info": {"best_shape": {"bf16": "8192x4096x8192"},
                                                                  "products_per_timing": {"bf16": 12}},
         "metrics": [metric("tflops", {"gpu": "0", "dtype": "bf16"}, bf16, "TFLOP/s")]},
        {"id": "gpu.memory-bandwidth", "status": "ok", "params": {"buffer-size": "2GiB"},
         "metrics": [metric("bandwidth", {"gpu": "0", "kernel": "copy"}, copy)]},
        {"id": "gpu.pcie", "status": "ok", "params": {"transfer-size": "128MiB"},
         "metrics": [metric("h2d_bandwidth", {"gpu": "0", "memory": "pinned", "mode": "single"}, h2d),
                     metric("d2h_bandwidth", {"gpu": "0", "memory": "pinned", "mode": "single"}, d2h)]},
    ]}


def torch_round(bf16, copy, h2d, d2h):
    return {"tool": "pytorch", "torch": "2.11", "gpu": "NVIDIA H200", "cuda": "13.0", "figures": [
        {"name": "gemm_tflops", "labels": {"dtype": "bf16"}, "median": bf16},
        {"name": "d2d_copy_gbps", "labels": {}, "median": copy},
        {"name": "h2d_pinned_gbps", "labels": {}, "median": h2d},
        {"name": "d2h_pinned_gbps", "labels": {}, "median": d2h}]}


class PeerTable(unittest.TestCase):
    def table(self, ours, theirs, run=None, extra=()):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for side, docs in (("a", ours), ("b", theirs)):
                for i, doc in enumerate(docs):
                    p = os.path.join(d, f"{side}{i}.json")
                    write_json(p, doc)
                    paths.append(p)
            args = [sys.executable, os.path.join(GPU_BENCH, "peer_table.py"), "--nodeaudit", *paths[:len(ours)],
                    "--torch", *paths[len(ours):], "--json", os.path.join(d, "t.json")]
            if run is not None:
                write_json(os.path.join(d, "run.json"), run)
                args += ["--run", os.path.join(d, "run.json")]
            r = subprocess.run(args + list(extra), capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.doc = read_json(os.path.join(d, "t.json"))
            return {row["figure"]: row for row in self.doc["rows"]}, r.stdout

    def test_ratio_is_the_median_of_per_round_ratios(self):
        rows, text = self.table([nodeaudit_round(800, 4000, 50, 52), nodeaudit_round(780, 3900, 55, 50),
                                 nodeaudit_round(790, 4100, 54, 51)],
                                [torch_round(790, 4000, 50, 52), torch_round(800, 4000, 50, 50),
                                 torch_round(790, 4000, 60, 51)])
        gemm = rows["GEMM bf16"]
        # per-round ratios 800/790, 780/800, 790/790 -> median 1.0
        self.assertAlmostEqual(gemm["ratio"], 1.0)
        self.assertTrue(gemm["met"])
        self.assertAlmostEqual(gemm["nodeaudit"], 790)
        # copy ratios 1.0, 0.975, 1.025 -> 1.0; H2D 1.0, 1.1, 0.9 -> 1.0
        self.assertAlmostEqual(rows["HBM copy"]["ratio"], 1.0)
        self.assertAlmostEqual(rows["H2D pinned"]["ratio"], 1.0)
        self.assertIn("beside PyTorch on NVIDIA H200", text)
        self.assertNotIn("shapes differ", gemm["note"])

    def test_a_round_whose_gemm_shape_differs_is_named(self):
        other = nodeaudit_round(800, 4000, 50, 50)
        other["probes"][0]["info"]["best_shape"]["bf16"] = "4096x4096x4096"
        theirs = torch_round(800, 4000, 50, 50)
        theirs["figures"][0]["labels"]["shape"] = "8192x4096x8192"
        rows, _ = self.table([nodeaudit_round(800, 4000, 50, 50), other], [theirs, theirs])
        self.assertIn("shapes differ: round 2 nodeaudit 4096x4096x4096 vs PyTorch 8192x4096x8192", rows["GEMM bf16"]["note"])

    def test_goal_missed_and_missing_figures_are_said(self):
        rows, text = self.table([nodeaudit_round(700, 4000, 45, 50)], [torch_round(800, 4000, 50, 50)])
        self.assertAlmostEqual(rows["GEMM bf16"]["ratio"], 0.875)
        self.assertFalse(rows["GEMM bf16"]["met"])
        self.assertFalse(rows["H2D pinned"]["met"])  # 0.90 < 0.98
        self.assertTrue(rows["D2H pinned"]["met"])
        self.assertIsNone(rows["GEMM fp8 e4m3"]["met"])
        self.assertIn("not measured", rows["GEMM fp8 e4m3"]["note"])
        self.assertIn("**no**", text)
        self.assertIn("pipeline.step not in --run", rows["pipeline.step H2D vs gpu.pcie"]["note"])

    def test_pipeline_rows_compare_the_step_with_the_probes(self):
        run = nodeaudit_round(800, 4000, 50, 50)
        run["probes"].append({"id": "pipeline.step", "status": "ok", "info": {"gemm_tflops_per_gpu": 780,
                                                                              "gemms": {"dtype": "bf16"}},
                              "metrics": [metric("host_to_device_bandwidth", {}, 46)]})
        rows, _ = self.table([run], [torch_round(800, 4000, 50, 50)], run=run)
        self.assertAlmostEqual(rows["pipeline.step H2D vs gpu.pcie"]["ratio"], 0.92)
        self.assertFalse(rows["pipeline.step H2D vs gpu.pcie"]["met"])
        self.assertAlmostEqual(rows["pipeline.step GEMM vs gpu.gemm"]["ratio"], 0.975)
        self.assertTrue(rows["pipeline.step GEMM vs gpu.gemm"]["met"])

    def test_the_full_run_as_round_one_counts_once(self):
        run = nodeaudit_round(800, 4000, 50, 50)
        run["probes"].append({"id": "pipeline.step", "status": "ok", "info": {"gemm_tflops_per_gpu": 800,
                                                                              "gemms": {"dtype": "bf16"}},
                              "metrics": [metric("host_to_device_bandwidth", {}, 55)]})
        later = nodeaudit_round(800, 4000, 60, 50)
        peers = [torch_round(800, 4000, 50, 50)] * 2
        rows, _ = self.table([run, later], peers, run=run)
        # gpu.pcie H2D over the two rounds: median(50, 60) = 55; counting the run twice would give 50.
        self.assertAlmostEqual(rows["pipeline.step H2D vs gpu.pcie"]["peer"], 55)
        self.assertAlmostEqual(rows["pipeline.step H2D vs gpu.pcie"]["ratio"], 1.0)

    def test_heading_names_driver_commit_and_date(self):
        run = nodeaudit_round(800, 4000, 50, 50)
        run["env"] = {"software": {"driver": "580.159"}, "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}
        run["started_at"] = "2026-12-06T02:00:00Z"
        _, text = self.table([run], [torch_round(800, 4000, 50, 50)], run=run, extra=["--commit", "abc1234"])
        self.assertIn("nodeaudit abc1234 beside PyTorch on NVIDIA H200: driver 580.159, torch 2.11, CUDA 13.0; "
                      "1 alternating rounds; run started 2026-12-06T02:00:00Z", text)
        self.assertEqual((self.doc["driver"], self.doc["commit"], self.doc["date"]), ("580.159", "abc1234", "2026-12-06T02:00:00Z"))

    def test_rounds_must_pair(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.json")
            write_json(p, nodeaudit_round(1, 1, 1, 1))
            r = subprocess.run([sys.executable, os.path.join(GPU_BENCH, "peer_table.py"), "--nodeaudit", p, p,
                                "--torch", p], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("2 nodeaudit rounds and 1 PyTorch rounds", r.stderr)


class TorchPeersTiming(unittest.TestCase):
    """The PyTorch side follows nodeaudit's repetition policy: warm-ups, then at least the minimum
    count and until the level's host seconds of timed work have run."""

    def test_quick_policy_times_at_least_a_second_of_work(self):
        timer = torch_peers.Timer(None, "cpu", torch_peers.POLICIES["quick"])
        calls = []
        seconds = timer.seconds(lambda: (calls.append(1), time.sleep(0.05)))
        self.assertGreaterEqual(len(seconds), 5)
        self.assertGreaterEqual(sum(seconds), 1.0)
        self.assertLess(sum(seconds), 1.3)
        self.assertEqual(len(calls), len(seconds) + 1)  # one warm-up repetition, discarded

    def test_fast_work_stops_at_the_most_repetitions(self):
        timer = torch_peers.Timer(None, "cpu", torch_peers.POLICIES["quick"])
        self.assertEqual(len(timer.seconds(lambda: None)), 1000)


class TorchPeersPlan(unittest.TestCase):
    def test_sizes_come_from_the_nodeaudit_result(self):
        plan = torch_peers.plan_from_result(nodeaudit_round(1, 1, 1, 1))
        self.assertEqual(plan["gemm"]["bf16"], {"m": 8192, "n": 4096, "k": 8192, "products": 12})
        self.assertEqual(plan["copy_bytes"], 2 << 30)
        self.assertEqual(plan["transfer_bytes"], 128 << 20)

    def test_defaults_are_nodeaudits_when_a_probe_did_not_run(self):
        plan = torch_peers.plan_from_result({"probes": []})
        self.assertEqual(plan["gemm"], {})
        self.assertEqual(plan["copy_bytes"], 4 << 30)
        self.assertEqual(plan["transfer_bytes"], 256 << 20)
        self.assertIn("did not run", plan["sources"]["gemm"])


if __name__ == "__main__":
    unittest.main()
