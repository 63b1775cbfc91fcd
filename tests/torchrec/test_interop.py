#!/usr/bin/env python3
"""A real TorchRec run of ShardScope's exported plans (ctest label `torchrec`).

ShardScope plans a small model (every sharding type it exports: table-wise,
row-wise with uneven and empty blocks, column-wise, table-row-wise, grid,
data-parallel) and a skewed one (the optimizer's own choice), the adapter
turns each plan into a TorchRec ShardingPlan, and torchrec shards an
EmbeddingBagCollection with it on CPU, gloo, one process per rank:

  1D: DistributedModelParallel, 4 ranks on 2 "nodes" of 2 (LOCAL_WORLD_SIZE=2).
  2D: DMPCollection, 8 ranks on 2 nodes of 4, M = 4, R = 2, strided, with the
      adapter's dmp_collection_kwargs (node_group_size = 2). DMPCollection
      asserts a CUDA or MTIA device before anything else
      (torchrec/distributed/model_parallel.py: "DMPCollection only supports
      CUDA or MTIA"); everything after that assertion runs on CPU with gloo,
      so this phase runs the real DMPCollection under `python -O`, which drops
      the assertion (and nothing else this test relies on).

Every rank loads the weights of a single-process reference
EmbeddingBagCollection (same seed), checks that each shard of the plan holds
exactly the reference's rows and columns on the rank the plan names (an empty
block: no rows there), and that the pooled embeddings of every feature for
its own batch equal the reference's (max abs error < 1e-5).

Before the runs, the forced plan goes through the adapter to a TorchRec
ShardingPlan and back with dump_plan, and `shardscope-cli evaluate` must price
that file exactly as it prices the plan.

The same model planned for ShardScope's engine (row blocks placed freely)
must either run exactly as planned or be refused by the adapter with the
rule it breaks; it is never handed to TorchRec as a different layout.

A negative control proves the checks can fail: a hand-made plan with row_wise
blocks swapped between ranks (TorchRec ignores the placement and puts block k
on rank k) and a grid column block's row blocks swapped (TorchRec returns
wrong embeddings) must be caught by both checks.

    $(scripts/torchrec-venv)/bin/python tests/torchrec/test_interop.py --cli build/ci/app/cli/shardscope-cli
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import traceback
import warnings
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, os.path.join(ROOT, "packaging", "python"))

TOLERANCE = 1e-5
BATCH = 4  # samples per rank
COLLECTIVE_TIMEOUT_S = 120


class Failure(Exception):
    pass


def check(cond: bool, message: str) -> None:
    # Not `assert`: the 2D phase runs under python -O.
    if not cond:
        raise Failure(message)


# --- the planning side (plain Python + shardscope-cli) -----------------------------------------

def plan_with_cli(cli: str, out: str, model: str, cluster: str, constraints: str = "", target: str = "torchrec") -> str:
    cmd = [cli, "plan", "--model", model, "--cluster", cluster, "--grid", "4", "--layout", "strided",
           "--target", target, "--out", out]
    if constraints:
        cmd += ["--constraints", constraints]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def priced_step_ms(cli: str, plan: str, model: str, cluster: str, *extra: str) -> float:
    out = subprocess.run([cli, "evaluate", "--plan", plan, "--model", model, "--cluster", cluster, "--json", *extra],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return float(json.loads(out)["evaluated"]["step"]["step_ms"])


def priced_as_run(cli: str, plan_path: str, model: str, cluster: str, tmp: str) -> List[str]:
    """The TorchRec ShardingPlan the adapter builds, written back with dump_plan, prices exactly as the
    plan it came from: what a trainer runs is what was priced, and a user can price their own plan."""
    from shardscope_torchrec import dump_plan, load_plan, to_torchrec
    plan = load_plan(plan_path)
    dumped = os.path.join(tmp, "dumped_" + os.path.basename(plan_path))
    dump_plan(to_torchrec(plan, "", device_type="cpu"), dumped)
    want = priced_step_ms(cli, plan_path, model, cluster)
    got = priced_step_ms(cli, dumped, model, cluster, "--world-size", str(plan.world_size), "--layout", plan.layout)
    print(f"  priced as planned {want:.6f} ms, as TorchRec runs it (dump_plan) {got:.6f} ms", flush=True)
    return [] if abs(got - want) <= 1e-9 * max(1.0, want) else [
        f"{plan_path}: the dumped TorchRec plan prices {got} ms, the plan {want} ms"]


def engine_plan_case(cli: str, model: str, cluster: str, constraints: str, tmp: str, phase: str):
    """A plan for ShardScope's engine (row blocks placed freely) either goes to TorchRec exactly as planned
    or is refused by the adapter with the rule it breaks: never run as a different layout."""
    from shardscope_torchrec import load_plan
    path = plan_with_cli(cli, os.path.join(tmp, f"engine_{phase}.json"), model, cluster, constraints, "shardscope")
    plan = load_plan(path)
    rules = plan.torchrec_problems()
    if not rules:
        return {"name": "engine-target plan", "model": model, "plan": path}, []
    try:
        plan.to_torchrec("", device_type="cpu")
    except ValueError as e:
        print(f"  {phase}: engine-target plan refused for TorchRec ({len(rules)} rule(s), e.g. {rules[0][:80]}...)",
              flush=True)
        return None, [] if rules[0] in str(e) else [f"{phase}: the refusal does not name the rule: {e}"]
    return None, [f"{phase}: the adapter exported an engine-target plan TorchRec would run differently: {rules}"]


def describe(plan_path: str) -> Dict[str, str]:
    with open(plan_path, encoding="utf-8") as f:
        doc = json.load(f)
    return {t["name"]: t["sharding_type"] for t in doc["tables"]}


# --- one rank ------------------------------------------------------------------------------------

def tables_of(model: Dict[str, Any]):
    from torchrec.modules.embedding_configs import EmbeddingBagConfig
    return [EmbeddingBagConfig(name=t["name"], embedding_dim=t["dim"], num_embeddings=t["rows"],
                               feature_names=[t["name"]]) for t in model["tables"]]


def batch_of(model: Dict[str, Any], rank: int):
    import torch
    from torchrec.sparse.jagged_tensor import KeyedJaggedTensor
    g = torch.Generator().manual_seed(1000 + rank)
    keys, lengths, values = [], [], []
    for t in model["tables"]:
        keys.append(t["name"])
        for _ in range(BATCH):
            n = int(torch.randint(0, 5, (1,), generator=g))
            lengths.append(n)
            values.append(torch.randint(0, t["rows"], (n,), generator=g))
    return KeyedJaggedTensor.from_lengths_sync(keys=keys, values=torch.cat(values),
                                               lengths=torch.tensor(lengths, dtype=torch.int64))


# The negative control: row_wise blocks 0 and 1 on each other's ranks (TorchRec ignores the
# placement and puts block k on group rank k, so the named ranks hold the wrong rows) and the first
# grid column block's two (equal) row blocks swapped (TorchRec then returns wrong embeddings).
SWAPPED = {"t_rw": {0: 1, 1: 0}, "t_grid": {0: 1, 1: 0}}


def shard_ranks(plan, name: str, swapped: bool) -> List[int]:
    """The group rank of each shard of a table, as the plan (or the negative control) names it."""
    table = next(t for t in plan.tables if t["name"] == name)
    ranks = [s["group_rank"] for s in table["shards"]]
    for i, j in (SWAPPED.get(name, {}) if swapped else {}).items():
        ranks[i] = table["shards"][j]["group_rank"]
    return ranks


def negative_control_plan(plan):
    """The plan's layout with SWAPPED applied, built directly as TorchRec objects (the adapter
    refuses such layouts)."""
    from torch.distributed._shard.sharding_spec import EnumerableShardingSpec, ShardMetadata
    from torchrec.distributed.types import ParameterSharding, ShardingPlan
    module_plan = {}
    for name, ps in plan.parameter_shardings("cpu").items():
        if ps["shards"] is None:
            module_plan[name] = ParameterSharding(sharding_type="data_parallel", compute_kernel="dense",
                                                  ranks=ps["ranks"], sharding_spec=None)
            continue
        ranks = list(ps["ranks"])
        for i, j in SWAPPED.get(name, {}).items():
            ranks[i] = ps["ranks"][j]
        spec = EnumerableShardingSpec([
            ShardMetadata(shard_offsets=s["shard_offsets"], shard_sizes=s["shard_sizes"], placement=f"rank:{r}/cpu")
            for s, r in zip(ps["shards"], ranks)])
        module_plan[name] = ParameterSharding(sharding_type=ps["sharding_type"], compute_kernel=ps["compute_kernel"],
                                              ranks=ranks, sharding_spec=spec)
    return ShardingPlan(plan={"": module_plan})


def expected_shards(plan, group_rank: int, swapped: bool) -> Dict[str, List[Dict[str, int]]]:
    """Per table, the non-empty shards the plan puts on `group_rank`; data_parallel tables are whole
    everywhere."""
    out: Dict[str, List[Dict[str, int]]] = {}
    for t in plan.tables:
        ranks = shard_ranks(plan, t["name"], swapped)
        out[t["name"]] = [s for s, r in zip(t["shards"], ranks) if r == group_rank and s["rows"] > 0]
    return out


def placement_errors(sharded, ref, plan, group_rank: int, swapped: bool) -> List[str]:
    """Each table's local weights on this rank must be exactly the reference's slice the plan names."""
    import torch
    errors = []
    ref_weights = {name: bag.weight.detach() for name, bag in ref.embedding_bags.items()}
    for name, shards in expected_shards(plan, group_rank, swapped).items():
        bag = sharded.embedding_bags[name] if name in sharded.embedding_bags else None
        local = getattr(bag, "weight", None) if bag is not None else None
        local = local.detach() if local is not None else torch.empty(0)
        if not shards:
            if local.numel() != 0:
                errors.append(f"{name}: the plan puts nothing on group rank {group_rank}, "
                              f"it holds {tuple(local.shape)}")
            continue
        if len(shards) != 1:
            errors.append(f"{name}: {len(shards)} shards on one rank (not produced by ShardScope)")
            continue
        s = shards[0]
        rows = slice(s["row_offset"], s["row_offset"] + s["rows"])
        cols = slice(s["col_offset"], s["col_offset"] + s["cols"])
        want = ref_weights[name][rows, cols]
        if tuple(local.shape) != tuple(want.shape) or not torch.equal(local, want):
            errors.append(f"{name}: group rank {group_rank} should hold rows [{s['row_offset']}, "
                          f"{s['row_offset'] + s['rows']}) x cols [{s['col_offset']}, {s['col_offset'] + s['cols']}), "
                          f"holds {tuple(local.shape)} that are not those rows")
    return errors


def run_case(case: Dict[str, Any], rank: int, world: int, two_d: bool) -> Dict[str, Any]:
    import torch
    import torch.distributed as dist
    from shardscope_torchrec import load_plan
    from torchrec.distributed.model_parallel import DistributedModelParallel, DMPCollection
    from torchrec.modules.embedding_modules import EmbeddingBagCollection

    with open(case["model"], encoding="utf-8") as f:
        model = json.load(f)
    plan = load_plan(case["plan"])
    torch.manual_seed(7)
    ref = EmbeddingBagCollection(tables=tables_of(model), device=torch.device("cpu"))
    meta = EmbeddingBagCollection(tables=tables_of(model), device=torch.device("meta"))
    negative = bool(case.get("negative"))
    if negative:
        sharding_plan = negative_control_plan(plan)
    else:
        sharding_plan = plan.to_torchrec("", device_type="cpu")
    if two_d:
        dmp = DMPCollection(module=meta, device=torch.device("cpu"), plan=sharding_plan,
                            global_pg=dist.group.WORLD, init_data_parallel=False, **plan.dmp_collection_kwargs())
        group_rank = plan.sharding_groups[rank % plan.replicas].index(rank)
    else:
        dmp = DistributedModelParallel(meta, device=torch.device("cpu"), plan=sharding_plan, init_data_parallel=False)
        group_rank = rank
    dmp.load_state_dict(ref.state_dict())
    kjt = batch_of(model, rank)
    with torch.no_grad():
        out = dmp(kjt)
        out = out.wait() if hasattr(out, "wait") else out
        want = ref(kjt)
    errors = {k: float((out[k] - want[k]).abs().max()) if out[k].numel() else 0.0 for k in kjt.keys()}
    return {"max_abs_error": errors, "placement_errors": placement_errors(dmp.module, ref, plan, group_rank, negative)}


def worker(rank: int, world: int, port: int, local_world: int, two_d: bool, cases: List[Dict[str, Any]],
           out_dir: str) -> None:
    import logging

    import torch.distributed as dist
    # TorchRec's per-table notices and deprecation warnings, times eight ranks, would bury a failure.
    logging.getLogger().setLevel(logging.ERROR)
    logging.getLogger("torchrec").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), LOCAL_WORLD_SIZE=str(local_world),
                      RANK=str(rank), WORLD_SIZE=str(world))
    # A rank that fails mid-collective must not leave the others waiting forever.
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    results = {}
    for case in cases:
        if rank == 0:
            print(f"  {'2d' if two_d else '1d'}: running {case['name']}", flush=True)
        try:
            results[case["name"]] = run_case(case, rank, world, two_d)
        except Exception:  # reported by the driver with the rank
            results[case["name"]] = {"exception": traceback.format_exc()}
            print(f"rank {rank}, {case['name']}:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        dist.barrier()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as f:
        json.dump(results, f)
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_phase(phase: str, cases_file: str, out_dir: str) -> None:
    import torch.multiprocessing as mp
    with open(cases_file, encoding="utf-8") as f:
        cases = json.load(f)
    world, local_world, two_d = (4, 2, False) if phase == "1d" else (8, 4, True)
    mp.spawn(worker, args=(world, free_port(), local_world, two_d, cases, out_dir), nprocs=world, join=True)


# --- the driver ----------------------------------------------------------------------------------

def judge(phase: str, cases: List[Dict[str, Any]], out_dir: str, world: int) -> List[str]:
    problems = []
    results = []
    for r in range(world):
        with open(os.path.join(out_dir, f"rank{r}.json"), encoding="utf-8") as f:
            results.append(json.load(f))
    for case in cases:
        name = case["name"]
        worst = {}
        placement = []
        for r, res in enumerate(results):
            got = res[name]
            if "exception" in got:
                problems.append(f"{phase} {name} rank {r} raised:\n{got['exception']}")
                continue
            for k, e in got["max_abs_error"].items():
                worst[k] = max(worst.get(k, 0.0), e)
            placement += [f"rank {r}: {p}" for p in got["placement_errors"]]
        if not worst:
            continue
        bad = {k: e for k, e in worst.items() if e >= TOLERANCE}
        print(f"{phase} {name}: max abs error {max(worst.values()):.2e} over {len(worst)} features, "
              f"{len(placement)} placement mismatches", flush=True)
        if case.get("negative"):
            if not any(": t_rw:" in p for p in placement):
                problems.append(f"{phase} {name}: the swapped row_wise blocks went unnoticed")
            if "t_grid" not in bad:
                problems.append(f"{phase} {name}: the swapped grid blocks gave exact embeddings "
                                f"({worst.get('t_grid')})")
        else:
            if bad:
                problems.append(f"{phase} {name}: pooled embeddings differ from the reference: {bad}")
            problems += [f"{phase} {name}: {p}" for p in placement]
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", help="shardscope-cli, to make the plans")
    ap.add_argument("--phase", choices=["1d", "2d"], help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        run_phase(args.phase, args.cases, args.out)
        return 0
    if not args.cli:
        ap.error("--cli is required")
    import inspect

    from torchrec.distributed.model_parallel import DMPCollection

    from shardscope_torchrec import load_plan

    problems: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(DATA, "every_type.model.json")
        constraints = os.path.join(DATA, "every_type.constraints.json")
        skewed = os.path.join(DATA, "skewed.model.json")
        for phase, cluster in (("1d", "cpu4"), ("2d", "cpu8")):
            cluster_file = os.path.join(DATA, cluster + ".cluster.json")
            every = plan_with_cli(args.cli, os.path.join(tmp, f"every_{phase}.json"), model, cluster_file, constraints)
            types = describe(every)
            expected_types = {"table_wise", "row_wise", "column_wise", "table_row_wise", "grid_shard", "data_parallel"}
            check(set(types.values()) == expected_types, f"{phase}: forced plan has types {types}")
            rw = next(t for t in load_plan(every).tables if t["name"] == "t_rw_empty")
            check(any(s["rows"] == 0 for s in rw["shards"]), f"{phase}: t_rw_empty has no empty block: {rw}")
            optimized = plan_with_cli(args.cli, os.path.join(tmp, f"skewed_{phase}.json"), skewed, cluster_file)
            print(f"{phase}: optimizer's plan for the skewed model: {describe(optimized)}", flush=True)
            check(len(set(describe(optimized).values())) >= 3,
                  f"{phase}: optimizer plan too plain: {describe(optimized)}")
            problems += priced_as_run(args.cli, every, model, cluster_file, tmp)
            cases = [{"name": "every sharding type", "model": model, "plan": every},
                     {"name": "optimizer plan", "model": skewed, "plan": optimized}]
            engine_case, engine_problems = engine_plan_case(args.cli, model, cluster_file, constraints, tmp, phase)
            problems += engine_problems
            if engine_case:
                cases.append(engine_case)
            if phase == "1d":
                cases.append({"name": "negative control", "model": model, "plan": every, "negative": True})
            else:
                kwargs = load_plan(every).dmp_collection_kwargs()
                inspect.signature(DMPCollection.__init__).bind(None, module=None, device=None, plan=None,
                                                               global_pg=None, **kwargs)
                check(kwargs == {"world_size": 8, "sharding_group_size": 4, "node_group_size": 2,
                                 "use_inter_host_allreduce": False}, f"2d kwargs {kwargs}")
            cases_file = os.path.join(tmp, f"cases_{phase}.json")
            with open(cases_file, "w", encoding="utf-8") as f:
                json.dump(cases, f)
            out_dir = os.path.join(tmp, phase)
            os.makedirs(out_dir)
            flags = ["-O"] if phase == "2d" else []
            rc = subprocess.run([sys.executable, *flags, os.path.abspath(__file__), "--phase", phase,
                                 "--cases", cases_file, "--out", out_dir]).returncode
            if rc != 0:
                problems.append(f"{phase}: the ranks exited with {rc}")
                continue
            problems += judge(phase, cases, out_dir, 4 if phase == "1d" else 8)
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    print("torchrec interop:", "FAILED" if problems else "passed", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
