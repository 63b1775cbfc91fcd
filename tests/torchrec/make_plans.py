#!/usr/bin/env python3
"""Writes TorchRec's own EmbeddingShardingPlanner plans for ShardScope's
fixture models and grids: the baseline our optimizer must never lose to.

Run with torchrec installed (scripts/torchrec-venv prints such a venv):

    $(scripts/torchrec-venv)/bin/python tests/torchrec/make_plans.py \
        --cli build/ci/app/cli/shardscope-cli --out tests/data/torchrec/planner

For each case it reads the model (a shardscope.model/1 file) and the cluster
(a preset in resources/clusters), plans one sharding group of M GPUs as
DMPCollection expects (TorchRec's world = M, hosts of `node_group_size`
ranks, the model's batch size and pooling factors, and either the cluster's
HBM and bandwidths or, for the "_trdefaults" cases, TorchRec's own default
topology constants, as a user who does not tune them gets), and writes

    {"case": ..., "model": <preset name, or a file next to the fixture>,
     "cluster": <preset>, "world_size": N, "sharding_group_size": M,
     "layout": ..., "node_group_size": L, "topology": "cluster" | "torchrec defaults",
     "torchrec": "<version>", "planning_seconds": s,
     "plan": {"plan": {"ebc": <EmbeddingModuleShardingPlan._serialize()>}}}

The synthetic models are written next to the plans (gen-model with a fixed
seed; the uniform one has every table's access set to uniform).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "packaging", "python"))

from shardscope_torchrec import layout_groups, rules  # noqa: E402
MODULE = "ebc"

# (case name, model, cluster preset, world size, sharding group size M, layout, TorchRec's default topology)
CASES = [
    ("kaggle_h100x8_m8", "criteo_kaggle", "h100x8", 8, 8, "strided", False),
    ("kaggle_h100x8_m4", "criteo_kaggle", "h100x8", 8, 4, "strided", False),
    ("kaggle_h100x8_m8_trdefaults", "criteo_kaggle", "h100x8", 8, 8, "strided", True),
    ("kaggle_h100x64_m8_trdefaults", "criteo_kaggle", "h100x64", 64, 8, "contiguous", True),
    ("dcnv2_h100x8_m8", "dcnv2", "h100x8", 8, 8, "strided", False),
    ("dcnv2_h100x8_m8_trdefaults", "dcnv2", "h100x8", 8, 8, "strided", True),
    ("dcnv2_h100x64_m64", "dcnv2", "h100x64", 64, 64, "strided", False),
    ("dcnv2_h100x64_m16", "dcnv2", "h100x64", 64, 16, "strided", False),
    ("synth50_skewed_h100x8_m8_trdefaults", "synth50_skewed", "h100x8", 8, 8, "strided", True),
    ("synth50_skewed_h100x64_m64", "synth50_skewed", "h100x64", 64, 64, "strided", False),
    ("synth50_skewed_h100x64_m16", "synth50_skewed", "h100x64", 64, 16, "contiguous", False),
    ("synth200_uniform_h100x64_m64", "synth200_uniform", "h100x64", 64, 64, "strided", False),
    ("synth200_uniform_h100x8_m8", "synth200_uniform", "h100x8", 8, 8, "strided", False),
]


def node_group_size(world_size: int, gpus_per_node: int, m: int, layout: str) -> int:
    """L of the grid (core::nodeGroupSize, docs/formats/plan.md), from the adapter's rules."""
    return rules.node_group_size(world_size, gpus_per_node, m, layout_groups(world_size, m, layout)[0])


def synthetic_models(cli: str, out: str) -> dict:
    paths = {}
    skewed = os.path.join(out, "synth50_skewed.model.json")
    subprocess.run([cli, "gen-model", "--tables", "50", "--seed", "11", "--out", skewed], check=True,
                   stdout=subprocess.DEVNULL)
    uniform = os.path.join(out, "synth200_uniform.model.json")
    subprocess.run([cli, "gen-model", "--tables", "200", "--seed", "23", "--out", uniform], check=True,
                   stdout=subprocess.DEVNULL)
    with open(uniform, encoding="utf-8") as f:
        doc = json.load(f)
    doc["name"] = doc["name"] + " (uniform access)"
    for t in doc["tables"]:
        t["access"] = {"kind": "uniform"}
    with open(uniform, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    paths["synth50_skewed"] = skewed
    paths["synth200_uniform"] = uniform
    return paths


def model_file(models: dict, name: str) -> str:
    return models.get(name) or os.path.join(ROOT, "resources", "models", name + ".json")


def torchrec_plan(model: dict, cluster: dict, m: int, local: int, defaults: bool):
    import torch
    from fbgemm_gpu.split_embedding_configs import EmbOptimType
    from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
    from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
    from torchrec.distributed.planner.types import ParameterConstraints
    from torchrec.modules.embedding_configs import DataType, EmbeddingBagConfig
    from torchrec.modules.embedding_modules import EmbeddingBagCollection

    dtypes = {"fp32": DataType.FP32, "fp16": DataType.FP16, "bf16": DataType.BF16, "int8": DataType.INT8}
    tables = [EmbeddingBagConfig(name=t["name"], embedding_dim=t["dim"], num_embeddings=t["rows"],
                                 feature_names=[t["name"]], data_type=dtypes[t.get("dtype", "fp32")])
              for t in model["tables"]]
    ebc = EmbeddingBagCollection(tables=tables, device=torch.device("meta"))
    constraints = {t["name"]: ParameterConstraints(pooling_factors=[float(t["pooling"]["mean"])])
                   for t in model["tables"]}
    gbps = 1e9 / 1e3  # GB/s -> bytes/ms
    if defaults:
        topology = Topology(world_size=m, local_world_size=local, compute_device="cuda")
    else:
        topology = Topology(world_size=m, local_world_size=local, compute_device="cuda",
                            hbm_cap=cluster["gpu"]["hbm_bytes"],
                            hbm_mem_bw=cluster["gpu"]["hbm_bandwidth_gbps"] * gbps,
                            intra_host_bw=cluster["intra_node"]["bandwidth_gbps"] * gbps,
                            inter_host_bw=cluster["inter_node"]["bandwidth_gbps"] * gbps)
    optimizers = {"rowwise_adagrad": EmbOptimType.EXACT_ROWWISE_ADAGRAD, "sgd": EmbOptimType.EXACT_SGD,
                  "adam": EmbOptimType.ADAM}
    sharder = EmbeddingBagCollectionSharder(fused_params={"optimizer": optimizers[model.get("optimizer", "sgd")]})
    planner = EmbeddingShardingPlanner(topology=topology, batch_size=model["batch_size_per_gpu"],
                                       constraints=constraints)
    start = time.perf_counter()
    plan = planner.plan(ebc, [sharder])
    seconds = time.perf_counter() - start
    return plan._serialize()["plan"][""], seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="path to shardscope-cli (for gen-model)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "torchrec", "planner"))
    ap.add_argument("--only", help="plan only the cases whose name contains this")
    args = ap.parse_args()
    import torchrec  # noqa: F401  (fail early and clearly without it)
    from importlib.metadata import version

    os.makedirs(args.out, exist_ok=True)
    models = synthetic_models(args.cli, args.out)
    for case, model_name, preset, n, m, layout, defaults in CASES:
        if args.only and args.only not in case:
            continue
        with open(model_file(models, model_name), encoding="utf-8") as f:
            model = json.load(f)
        with open(os.path.join(ROOT, "resources", "clusters", preset + ".json"), encoding="utf-8") as f:
            cluster = json.load(f)
        local = node_group_size(n, cluster["gpus_per_node"], m, layout)
        plan, seconds = torchrec_plan(model, cluster, m, local, defaults)
        doc = {
            "case": case,
            "model": os.path.basename(models[model_name]) if model_name in models else model_name,
            "cluster": preset,
            "world_size": n,
            "sharding_group_size": m,
            "layout": layout,
            "node_group_size": local,
            "topology": "torchrec defaults" if defaults else "cluster",
            "torchrec": version("torchrec"),
            "planning_seconds": round(seconds, 3),
            "plan": {"plan": {MODULE: plan}},
        }
        path = os.path.join(args.out, case + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        types = {}
        for ps in plan.values():
            types[ps["sharding_type"]] = types.get(ps["sharding_type"], 0) + 1
        print(f"{case}: {len(plan)} tables {types} in {seconds:.2f} s -> {os.path.relpath(path)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
