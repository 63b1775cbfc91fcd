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

__all__ = ["SCHEMA", "SHARDING_TYPES", "LAYOUTS", "ShardScopePlan", "load_plan", "layout_groups"]


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
    out["world_size"] = n = r.integer(doc, "", "world_size", 1, 1 << 24)
    out["gpus_per_node"] = r.integer(doc, "", "gpus_per_node", 1, 1024)
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
                    r.fail(f"{tpath}/name", f'expected a unique table name, "{t["name"]}" is also at /tables/{seen[t["name"]]}')
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
                         "rows": r.integer(sj, spath, "rows", 1),
                         "col_offset": r.integer(sj, spath, "col_offset", 0, 65535),
                         "cols": r.integer(sj, spath, "cols", 1, 65536)}
                    if None not in s.values() and t["rows"] and t["dim"]:
                        if s["row_offset"] + s["rows"] > t["rows"]:
                            r.fail(spath, f"expected rows [row_offset, row_offset + rows) inside the table's {t['rows']} rows")
                        if s["col_offset"] + s["cols"] > t["dim"]:
                            r.fail(spath, f"expected columns [col_offset, col_offset + cols) inside the table's dim {t['dim']}")
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
        self.world_size: int = data["world_size"]
        self.gpus_per_node: int = data["gpus_per_node"]
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
        """Keyword arguments for torchrec's ``DMPCollection`` (plus module, device, plan, global_pg)."""
        return {
            "sharding_group_size": self.sharding_group_size,
            "world_size": self.world_size,
            "use_inter_host_allreduce": self.layout == "contiguous",
        }

    # --- TorchRec forms ---------------------------------------------------
    @staticmethod
    def _ordered_shards(table: Mapping[str, Any]) -> List[Dict[str, Any]]:
        # TorchRec orders shards by column block, then by row (column-wise, grid).
        return sorted(table["shards"], key=lambda s: (s["col_offset"], s["row_offset"], s["group_rank"]))

    def _placement(self, group_rank: int, device_type: str) -> str:
        if device_type == "cpu":
            return f"rank:{group_rank}/cpu"
        return f"rank:{group_rank}/{device_type}:{self.local_device(group_rank)}"

    def parameter_shardings(self, device_type: str = "cuda") -> Dict[str, Dict[str, Any]]:
        """Table name -> a TorchRec ``ParameterSharding`` in ``ShardingPlan._serialize()`` form.

        Sharded tables: compute kernel "fused", ``ranks`` = the group rank of each
        shard in shard order (TorchRec's convention: one entry per shard), shards
        with group-local placements "rank:<group rank>/cuda:<local device>".
        data_parallel tables: compute kernel "dense", every group rank, no shards
        (TorchRec writes none; rows and dim come from the model).
        """
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
                "compute_kernel": "fused",
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

    def to_torchrec_serialized(self, module_path: str, device_type: str = "cuda") -> Dict[str, Any]:
        """``{"plan": {module_path: {table: ParameterSharding}}}``, as ``ShardingPlan._serialize()`` writes."""
        return {"plan": {module_path: self.parameter_shardings(device_type)}}

    def to_torchrec_sharding_plan(self, module_path: str, device_type: str = "cuda") -> Any:
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
        for name, ps in self.parameter_shardings(device_type).items():
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
