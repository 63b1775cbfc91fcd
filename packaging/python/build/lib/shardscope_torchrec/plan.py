"""Reading a ``shardscope.plan/1`` file and handing it to TorchRec.

Pure Python 3 standard library; only :meth:`ShardScopePlan.to_torchrec_sharding_plan`
imports torch/torchrec, and only when called.

The plan is generated for one sharding group (group-local ranks 0..M-1), which
is what TorchRec's ``DMPCollection`` expects: build the ``ShardingPlan`` for
the group, then pass :meth:`ShardScopePlan.dmp_collection_kwargs` so every
replica of the group gets the same placement.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from .rules import layout_problems, node_group_size

SCHEMA = "shardscope.plan/1"
SHARDING_TYPES = (
    "table_wise",
    "row_wise",
    "column_wise",
    "table_row_wise",
    "table_column_wise",
    "grid_shard",
    "data_parallel",
)
LAYOUTS = ("strided", "contiguous")
TARGETS = ("torchrec", "shardscope")
ROW_BLOCK_TYPES = ("row_wise", "table_row_wise", "grid_shard")  # the only types whose row blocks may be empty

__all__ = ["SCHEMA", "SHARDING_TYPES", "LAYOUTS", "TARGETS", "ShardScopePlan", "load_plan", "layout_groups",
           "dump_plan"]


def layout_groups(world_size: int, group_size: int, layout: str) -> Tuple[List[List[int]], List[List[int]]]:
    """(sharding_groups, replica_groups) of a layout, as docs/formats/plan.md defines them.

    strided (DMPCollection default): sharding group g = [g, g+R, ..., g+(M-1)R];
    contiguous (use_inter_host_allreduce): sharding group g = [g*M, ..., g*M+M-1].
    Member i of every sharding group forms replica group i.
    """
    m, r = group_size, world_size // group_size
    if layout == "strided":
        sharding = [[g + i * r for i in range(m)] for g in range(r)]
    elif layout == "contiguous":
        sharding = [[g * m + i for i in range(m)] for g in range(r)]
    else:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    replica = [[sharding[g][i] for g in range(r)] for i in range(m)]
    return sharding, replica


class _Reader:
    """Collects problems as "<pointer>: <expectation>", like the C++ JsonReader."""

    def __init__(self) -> None:
        self.problems: List[str] = []

    def fail(self, path: str, expectation: str) -> None:
        self.problems.append(f"{path or '/'}: {expectation}")

    @staticmethod
    def _describe(v: Any) -> str:
        if v is None:
            return "null"
        if isinstance(v, bool):
            return f"boolean {'true' if v else 'false'}"
        if isinstance(v, str):
            return f'string "{v if len(v) <= 40 else v[:37] + "..."}"'
        if isinstance(v, (int, float)):
            return json.dumps(v)
        if isinstance(v, Mapping):
            return "an object"
        if isinstance(v, list):
            return "an array"
        return f"a {type(v).__name__}"

    def member(self, obj: Mapping[str, Any], path: str, key: str, what: str, required: bool = True) -> Any:
        if key not in obj or obj[key] is None:
            if required:
                self.fail(f"{path}/{key}", f"missing required field (expected {what})")
            return None
        return obj[key]

    def integer(self, obj: Mapping[str, Any], path: str, key: str, minimum: int,
                maximum: Optional[int] = None) -> Optional[int]:
        rng = f"an integer >= {minimum}" if maximum is None else f"an integer in [{minimum}, {maximum}]"
        v = self.member(obj, path, key, rng)
        if v is None:
            return None
        return self.integer_value(v, f"{path}/{key}", minimum, maximum)

    def integer_value(self, v: Any, path: str, minimum: int, maximum: Optional[int] = None) -> Optional[int]:
        rng = f"an integer >= {minimum}" if maximum is None else f"an integer in [{minimum}, {maximum}]"
        value: Optional[int] = None
        if isinstance(v, bool):
            value = None
        elif isinstance(v, int):
            value = v
        elif isinstance(v, float) and v.is_integer():
            value = int(v)  # 4e7 written by hand
        if value is None or value < minimum or (maximum is not None and value > maximum):
            self.fail(path, f"expected {rng}, got {self._describe(v)}")
            return None
        return value

    def string(self, obj: Mapping[str, Any], path: str, key: str) -> Optional[str]:
        v = self.member(obj, path, key, "a non-empty string")
        if v is None:
            return None
        if not isinstance(v, str) or not v:
            self.fail(f"{path}/{key}", f"expected a non-empty string, got {self._describe(v)}")
            return None
        return v

    def obj(self, v: Any, path: str) -> bool:
        if isinstance(v, Mapping):
            return True
        self.fail(path, f"expected an object, got {self._describe(v)}")
        return False

    def array(self, v: Any, path: str) -> bool:
        if isinstance(v, list):
            return True
        self.fail(path, f"expected an array, got {self._describe(v)}")
        return False


def _check_cover(r: _Reader, t: Dict[str, Any], path: str) -> None:
    """Shards of a sharded table tile rows x dim exactly once (same rule as the C++ reader)."""
    rows, dim, shards = t["rows"], t["dim"], t["shards"]
    cuts = sorted({0, dim, *(s["col_offset"] for s in shards), *(s["col_offset"] + s["cols"] for s in shards)})
    for c0, c1 in zip(cuts, cuts[1:]):
        if c0 >= dim:
            break
        spans = sorted((s["row_offset"], s["row_offset"] + s["rows"]) for s in shards
                       if s["col_offset"] <= c0 and s["col_offset"] + s["cols"] >= c1)
        covered = 0
        for a, b in spans:
            if a != covered:
                what = f"rows [{covered}, {a})" if a > covered else f"rows [{a}, {min(covered, b)})"
                state = "are not covered" if a > covered else "are covered twice"
                r.fail(path, f'expected shards to cover table "{t["name"]}" exactly once: '
                             f"{what} of columns [{c0}, {c1}) {state}")
                return
            covered = b
        if covered != rows:
            r.fail(path, f'expected shards to cover table "{t["name"]}" exactly once: '
                         f"rows [{covered}, {rows}) of columns [{c0}, {c1}) are not covered")
            return


def _validate(doc: Any) -> Tuple[Dict[str, Any], List[str]]:
    r = _Reader()
    if not r.obj(doc, ""):
        return {}, r.problems
    schema = doc.get("schema")
    if schema != SCHEMA:
        r.fail("/schema", f'expected "{SCHEMA}", got {r._describe(schema)}' if schema is not None
               else f'missing required field (expected "{SCHEMA}")')
        return {}, r.problems
    out: Dict[str, Any] = {}
    out["model"] = r.string(doc, "", "model")
    # Plans written before "target" existed are held to TorchRec's rules, the strict default.
    out["target"] = doc.get("target", "torchrec")
    if out["target"] not in TARGETS:
        r.fail("/target", f'expected "torchrec" or "shardscope", got {r._describe(out["target"])}')
    out["world_size"] = n = r.integer(doc, "", "world_size", 1, 1 << 24)
    out["gpus_per_node"] = r.integer(doc, "", "gpus_per_node", 1, 1024)
    # Plans written before "sync_interval" existed assumed TorchRec's default, every step.
    out["sync_interval"] = (r.integer(doc, "", "sync_interval", 1, 1000000)
                            if "sync_interval" in doc else 1)
    m = rr = layout = None
    grid = r.member(doc, "", "grid", "an object {sharding_group_size, replicas, layout}")
    if grid is not None and r.obj(grid, "/grid"):
        m = r.integer(grid, "/grid", "sharding_group_size", 1, 1 << 24)
        rr = r.integer(grid, "/grid", "replicas", 1, 1 << 24)
        layout = r.string(grid, "/grid", "layout")
        if layout is not None and layout not in LAYOUTS:
            r.fail("/grid/layout", f'expected "strided" or "contiguous", got "{layout}"')
            layout = None
    out.update(sharding_group_size=m, replicas=rr, layout=layout)
    shape_ok = not r.problems
    if shape_ok and m * rr != n:
        r.fail("/grid", f"expected sharding_group_size x replicas = world_size, got {m} x {rr} != {n}")
        shape_ok = False

    for key, count, size in (("sharding_groups", rr, m), ("replica_groups", m, rr)):
        groups = r.member(doc, "", key, "an array of rank lists")
        out[key] = []
        if groups is None or not r.array(groups, f"/{key}"):
            continue
        if shape_ok and len(groups) != count:
            r.fail(f"/{key}", f"expected {count} groups, got {len(groups)}")
        for g, lst in enumerate(groups):
            gpath = f"/{key}/{g}"
            if not r.array(lst, gpath):
                continue
            if shape_ok and len(lst) != size:
                r.fail(gpath, f"expected {size} ranks, got {len(lst)}")
            out[key].append([r.integer_value(x, f"{gpath}/{i}", 0, (n or 1) - 1) for i, x in enumerate(lst)])
    if shape_ok and not r.problems:
        expect_s, expect_r = layout_groups(n, m, layout)
        if out["sharding_groups"] != expect_s:
            r.fail("/sharding_groups", f"expected the {layout} layout's groups {expect_s}")
        if out["replica_groups"] != expect_r:
            r.fail("/replica_groups", f"expected the {layout} layout's groups {expect_r}")
    out["node_group_size"] = None
    if shape_ok and not r.problems:
        out["node_group_size"] = node_group_size(n, out["gpus_per_node"], m, expect_s)
        given = grid.get("node_group_size")
        if given is not None and given != out["node_group_size"]:
            r.fail("/grid/node_group_size", f"expected {out['node_group_size']}, the node group size of {n} GPUs "
                                            f"({out['gpus_per_node']} per node) as {m} x {rr} {layout}, got "
                                            f"{r._describe(given)}")

    tables = r.member(doc, "", "tables", "an array of tables")
    out["tables"] = []
    seen: Dict[str, int] = {}
    if tables is not None and r.array(tables, "/tables"):
        for ti, tj in enumerate(tables):
            tpath = f"/tables/{ti}"
            if not r.obj(tj, tpath):
                continue
            before = len(r.problems)
            t: Dict[str, Any] = {"name": r.string(tj, tpath, "name"),
                                 "rows": r.integer(tj, tpath, "rows", 1),
                                 "dim": r.integer(tj, tpath, "dim", 1, 65536)}
            st = r.string(tj, tpath, "sharding_type")
            if st is not None and st not in SHARDING_TYPES:
                r.fail(f"{tpath}/sharding_type", f"expected one of {', '.join(SHARDING_TYPES)}, got \"{st}\"")
            t["sharding_type"] = st
            if t["name"] is not None:
                if t["name"] in seen:
                    r.fail(f"{tpath}/name",
                           f'expected a unique table name, "{t["name"]}" is also at /tables/{seen[t["name"]]}')
                seen.setdefault(t["name"], ti)
            t["shards"] = []
            shards = r.member(tj, tpath, "shards", "an array of shards")
            if shards is not None and r.array(shards, f"{tpath}/shards"):
                if not shards:
                    r.fail(f"{tpath}/shards", "expected at least one shard")
                for si, sj in enumerate(shards):
                    spath = f"{tpath}/shards/{si}"
                    if not r.obj(sj, spath):
                        continue
                    s = {"group_rank": r.integer(sj, spath, "group_rank", 0, (m or 1) - 1),
                         "row_offset": r.integer(sj, spath, "row_offset", 0),
                         "rows": r.integer(sj, spath, "rows", 0),
                         "col_offset": r.integer(sj, spath, "col_offset", 0, 65535),
                         "cols": r.integer(sj, spath, "cols", 1, 65536)}
                    if s["rows"] == 0 and st not in ROW_BLOCK_TYPES:
                        r.fail(f"{spath}/rows", "expected an integer >= 1 (only row_wise, table_row_wise and "
                                                f"grid_shard row blocks may be empty), got 0 for a {st} table")
                    if None not in s.values() and t["rows"] and t["dim"]:
                        if s["row_offset"] + s["rows"] > t["rows"]:
                            r.fail(spath, "expected rows [row_offset, row_offset + rows) inside the table's "
                                          f"{t['rows']} rows")
                        if s["col_offset"] + s["cols"] > t["dim"]:
                            r.fail(spath, "expected columns [col_offset, col_offset + cols) inside the table's "
                                          f"dim {t['dim']}")
                    t["shards"].append(s)
            if len(r.problems) == before and m:
                if st == "data_parallel":
                    ranks = sorted(s["group_rank"] for s in t["shards"])
                    full = all(s["row_offset"] == 0 and s["rows"] == t["rows"] and s["col_offset"] == 0
                               and s["cols"] == t["dim"] for s in t["shards"])
                    if not full or ranks != list(range(m)):
                        r.fail(f"{tpath}/shards", "expected one full-table shard on every group rank (data_parallel)")
                else:
                    _check_cover(r, t, f"{tpath}/shards")
            out["tables"].append(t)
    if not r.problems and out["target"] == "torchrec":
        for p in layout_problems(out["tables"], m, out["node_group_size"]):
            r.problems.append(p)
        if r.problems and "target" not in doc:
            r.fail("/target", "missing, so the plan is held to TorchRec's layout rules; a plan for ShardScope's "
                              'engine, which runs any placement that tiles each table, says "target": "shardscope"')
    return out, r.problems


class ShardScopePlan:
    """A validated ``shardscope.plan/1`` document (see docs/formats/plan.md)."""

    def __init__(self, doc: Mapping[str, Any], source: str = "<plan>") -> None:
        data, problems = _validate(doc)
        if problems:
            prefix = f"{source}: " if source else ""
            raise ValueError("\n".join(prefix + p for p in problems))
        self.source = source
        self.model: str = data["model"]
        self.target: str = data["target"]
        self.node_group_size: int = data["node_group_size"]
        self.world_size: int = data["world_size"]
        self.gpus_per_node: int = data["gpus_per_node"]
        self.sync_interval: int = data["sync_interval"]
        self.sharding_group_size: int = data["sharding_group_size"]
        self.replicas: int = data["replicas"]
        self.layout: str = data["layout"]
        self.sharding_groups: List[List[int]] = data["sharding_groups"]
        self.replica_groups: List[List[int]] = data["replica_groups"]
        self.tables: List[Dict[str, Any]] = data["tables"]

    def __repr__(self) -> str:
        return (f"ShardScopePlan(model={self.model!r}, world_size={self.world_size}, "
                f"sharding_group_size={self.sharding_group_size}, layout={self.layout!r}, "
                f"tables={len(self.tables)})")

    # --- ranks ------------------------------------------------------------
    def global_rank(self, group_rank: int, sharding_group: int = 0) -> int:
        """Global rank holding ``group_rank`` in sharding group ``sharding_group``."""
        return self.sharding_groups[sharding_group][group_rank]

    def local_device(self, group_rank: int) -> int:
        """CUDA device index of ``group_rank`` in sharding group 0 (its global rank % gpus_per_node)."""
        return self.global_rank(group_rank, 0) % self.gpus_per_node

    def dmp_collection_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments for torchrec's ``DMPCollection`` (plus module, device, plan, global_pg).

        ``node_group_size`` is the block of consecutive group ranks that share a
        node in this layout; TorchRec lays table_row_wise and grid_shard tables
        out on such blocks, and without it would assume ``LOCAL_WORLD_SIZE``
        ranks per block, which spans nodes whenever R > 1 (strided layout).
        """
        self._require_torchrec_layout()
        return {
            "world_size": self.world_size,
            "sharding_group_size": self.sharding_group_size,
            "node_group_size": self.node_group_size,
            "use_inter_host_allreduce": self.layout == "contiguous",
        }

    def train_pipeline_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments for torchrec's ``TrainPipelineSparseDist`` that the plan's prediction assumes.

        The replicas sync weights and optimizer state every ``sync_interval`` batches;
        a pipeline that syncs at another interval runs a different step than was priced.
        """
        return {"dmp_collection_sync_interval_batches": self.sync_interval}

    def torchrec_problems(self) -> List[str]:
        """Why TorchRec would not run this plan exactly as written (empty when it would).

        A plan for the ``torchrec`` target is checked when loaded; one for
        ``shardscope`` (ShardScope's engine runs any placement) may place row
        blocks where TorchRec would not.
        """
        return layout_problems(self.tables, self.sharding_group_size, self.node_group_size)

    def _require_torchrec_layout(self) -> None:
        problems = self.torchrec_problems()
        if problems:
            prefix = f"{self.source}: " if self.source else ""
            raise ValueError("\n".join(
                [f"{prefix}the plan (target {self.target!r}) is not a layout TorchRec runs as written:"]
                + [prefix + p for p in problems]
                + ["plan it again for the torchrec target (shardscope-cli plan --target torchrec)"]))

    # --- TorchRec forms ---------------------------------------------------
    @staticmethod
    def _ordered_shards(table: Mapping[str, Any]) -> List[Dict[str, Any]]:
        # TorchRec orders shards by column block, then by row (column-wise, grid).
        return sorted(table["shards"], key=lambda s: (s["col_offset"], s["row_offset"], s["group_rank"]))

    def _placement(self, group_rank: int, device_type: str) -> str:
        if device_type == "cpu":
            return f"rank:{group_rank}/cpu"
        return f"rank:{group_rank}/{device_type}:{self.local_device(group_rank)}"

    @staticmethod
    def default_compute_kernel(device_type: str) -> str:
        """"fused" on GPUs; "dense" on CPU, where fbgemm-gpu-cpu's fused lookup
        refuses CPU weights ("weights[0] must be a GPU or MTIA tensor"). The
        kernel does not change where shards live."""
        return "dense" if device_type == "cpu" else "fused"

    def parameter_shardings(self, device_type: str = "cuda",
                            compute_kernel: Optional[str] = None) -> Dict[str, Dict[str, Any]]:
        """Table name -> a TorchRec ``ParameterSharding`` in ``ShardingPlan._serialize()`` form.

        Sharded tables: compute kernel ``compute_kernel`` (default "fused", "dense"
        on CPU), ``ranks`` = the group rank of each shard in TorchRec's shard order
        (by column block, then row block: shard k of a row_wise table is row
        block k on group rank k), shards with group-local placements
        "rank:<group rank>/cuda:<local device>", empty row blocks included.
        data_parallel tables: compute kernel "dense", every group rank, no shards
        (TorchRec writes none; rows and dim come from the model).
        Raises ValueError when TorchRec would not run the plan as written.
        """
        self._require_torchrec_layout()
        kernel = compute_kernel or self.default_compute_kernel(device_type)
        out: Dict[str, Dict[str, Any]] = {}
        for t in self.tables:
            if t["sharding_type"] == "data_parallel":
                out[t["name"]] = {
                    "sharding_type": "data_parallel",
                    "compute_kernel": "dense",
                    "ranks": list(range(self.sharding_group_size)),
                    "shards": None,
                }
                continue
            shards = self._ordered_shards(t)
            out[t["name"]] = {
                "sharding_type": t["sharding_type"],
                "compute_kernel": kernel,
                "ranks": [s["group_rank"] for s in shards],
                "shards": [
                    {
                        "shard_offsets": [s["row_offset"], s["col_offset"]],
                        "shard_sizes": [s["rows"], s["cols"]],
                        "placement": self._placement(s["group_rank"], device_type),
                    }
                    for s in shards
                ],
            }
        return out

    def to_torchrec_serialized(self, module_path: str, device_type: str = "cuda",
                               compute_kernel: Optional[str] = None) -> Dict[str, Any]:
        """``{"plan": {module_path: {table: ParameterSharding}}}``, as ``ShardingPlan._serialize()`` writes."""
        return {"plan": {module_path: self.parameter_shardings(device_type, compute_kernel)}}

    def to_torchrec(self, module_path: str, device_type: str = "cuda", compute_kernel: Optional[str] = None) -> Any:
        """Alias of :meth:`to_torchrec_sharding_plan`."""
        return self.to_torchrec_sharding_plan(module_path, device_type, compute_kernel)

    def to_torchrec_sharding_plan(self, module_path: str, device_type: str = "cuda",
                                  compute_kernel: Optional[str] = None) -> Any:
        """A real ``torchrec.distributed.types.ShardingPlan`` for the sharding group.

        Pass it to ``DMPCollection(..., plan=..., **plan.dmp_collection_kwargs())``.
        Needs torch and torchrec (imported here, not at module import).
        """
        try:
            from torch.distributed._shard.sharding_spec import EnumerableShardingSpec, ShardMetadata
            from torchrec.distributed import types as trtypes
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "to_torchrec_sharding_plan needs torch and torchrec (pip install torchrec); "
                f"the rest of shardscope_torchrec works without them ({e})"
            ) from e
        ParameterSharding = trtypes.ParameterSharding
        module_plan_type = getattr(trtypes, "EmbeddingModuleShardingPlan", dict)
        module_plan = module_plan_type()
        for name, ps in self.parameter_shardings(device_type, compute_kernel).items():
            if ps["shards"] is None:
                module_plan[name] = ParameterSharding(
                    sharding_type="data_parallel", compute_kernel="dense", ranks=ps["ranks"], sharding_spec=None)
                continue
            spec = EnumerableShardingSpec([
                ShardMetadata(shard_offsets=list(s["shard_offsets"]), shard_sizes=list(s["shard_sizes"]),
                              placement=s["placement"])
                for s in ps["shards"]
            ])
            module_plan[name] = ParameterSharding(sharding_type=ps["sharding_type"],
                                                  compute_kernel=ps["compute_kernel"],
                                                  ranks=list(ps["ranks"]), sharding_spec=spec)
        return trtypes.ShardingPlan(plan={module_path: module_plan})


def to_torchrec(plan: Union[str, "os.PathLike[str]", Mapping[str, Any], ShardScopePlan], module_path: str,
                device_type: str = "cuda", compute_kernel: Optional[str] = None) -> Any:
    """A ShardScope plan (path, dict or loaded plan) as a TorchRec ``ShardingPlan`` for one sharding group."""
    loaded = plan if isinstance(plan, ShardScopePlan) else load_plan(plan)
    return loaded.to_torchrec_sharding_plan(module_path, device_type, compute_kernel)


def dump_plan(sharding_plan: Any, path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
    """Write a TorchRec ``ShardingPlan`` (or its ``_serialize()`` dict) as the JSON
    that ``shardscope-cli evaluate --plan`` reads, so a plan TorchRec's planner
    made can be priced in two lines::

        plan = planner.collective_plan(model, sharders, pg)   # what you run today
        shardscope_torchrec.dump_plan(plan, "torchrec_plan.json")

    Returns the serialized dict. Data-parallel tables carry no shards; evaluate
    takes their rows and dim from the model (--model).
    """
    serialize = getattr(sharding_plan, "_serialize", None)
    doc = sharding_plan if isinstance(sharding_plan, Mapping) else serialize() if callable(serialize) else None
    if not isinstance(doc, Mapping) or not isinstance(doc.get("plan"), Mapping):
        raise ValueError('expected a torchrec ShardingPlan or its _serialize() form {"plan": {module: {table: ...}}}')
    out_path = os.fspath(path)
    tmp = out_path + ".tmp-shardscope"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, out_path)
    return dict(doc)


def load_plan(path_or_dict: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> ShardScopePlan:
    """Load and validate a ``shardscope.plan/1`` plan from a file path or an already-parsed dict.

    Raises ValueError naming the JSON pointer of every problem, e.g.
    ``plan.json: /tables/3/shards/0/rows: expected an integer >= 1, got 0``.
    """
    if isinstance(path_or_dict, Mapping):
        return ShardScopePlan(path_or_dict, source="")
    path = os.fspath(path_or_dict)
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}") from e
    return ShardScopePlan(doc, source=path)
