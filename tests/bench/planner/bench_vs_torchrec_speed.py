#!/usr/bin/env python3
"""Planner speed against TorchRec's planner, measured in one script.

For each case: TorchRec's EmbeddingShardingPlanner plans ONE grid (one
sharding group of M GPUs, as make_plans.py does), and `shardscope-cli plan`
sweeps EVERY grid of the cluster (every M dividing N, both rank layouts),
timed as a whole process (start-up and JSON loading included). The bar:
our full sweep at least 100x faster than TorchRec's one grid.

    $(scripts/torchrec-venv)/bin/python tests/bench/planner/bench_vs_torchrec_speed.py \
        --cli build/ci/app/cli/shardscope-cli [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "torchrec"))

import make_plans  # noqa: E402  (TorchRec planner set-up shared with the fixtures)

# (model file, cluster preset, M for TorchRec's one grid)
CASES = [
    ("resources/models/criteo_kaggle.json", "h100x8", 8),
    ("resources/models/dcnv2.json", "h100x64", 64),
    ("tests/data/torchrec/planner/synth50_skewed.model.json", "h100x64", 64),
    ("tests/data/torchrec/planner/synth200_uniform.model.json", "h100x8", 8),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--reps", type=int, default=3, help="runs of our sweep (median); TorchRec runs once")
    args = ap.parse_args()
    print("| model | cluster | TorchRec, one grid (M) | ShardScope, full sweep (grids) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    worst = None
    for model_path, preset, m in CASES:
        with open(os.path.join(ROOT, model_path), encoding="utf-8") as f:
            model = json.load(f)
        with open(os.path.join(ROOT, "resources", "clusters", preset + ".json"), encoding="utf-8") as f:
            cluster = json.load(f)
        local = make_plans.node_group_size(cluster["world_size"], cluster["gpus_per_node"], m, "strided")
        _, torchrec_s = make_plans.torchrec_plan(model, cluster, m, local, False)
        ours = []
        grids = 0
        for _ in range(args.reps):
            start = time.perf_counter()
            out = subprocess.run([args.cli, "plan", "--model", os.path.join(ROOT, model_path), "--cluster", preset,
                                  "--json"], check=True, capture_output=True, text=True).stdout
            ours.append(time.perf_counter() - start)
            grids = len(json.loads(out)["grids"])
        ours_s = statistics.median(ours)
        ratio = torchrec_s / ours_s
        worst = ratio if worst is None else min(worst, ratio)
        print(f"| {model['name']} | {preset} | {torchrec_s:.2f} s (M = {m}) | {ours_s * 1e3:.0f} ms ({grids}) | "
              f"{ratio:.0f}x |", flush=True)
    print(f"\nslowest ratio: {worst:.0f}x (bar: >= 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
