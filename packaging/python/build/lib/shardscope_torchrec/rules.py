"""TorchRec's sharding rules, as its runtime applies them (the same rules as
ShardScope's C++ ``core/torchrec_sharding.h``; docs/formats/plan.md links
each to the TorchRec source it comes from).

Pure standard library.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple

__all__ = ["row_wise_blocks", "column_shard_width", "node_group_size", "layout_problems"]


def row_wise_blocks(rows: int, ways: int) -> List[Tuple[int, int]]:
    """Exactly ``ways`` (offset, rows) blocks of ceil(rows / ways) rows, as TorchRec cuts them:
    10 rows on 4 -> 3,3,3,1; 5 on 4 -> 2,2,1,0 (empty blocks at offset ``rows``)."""
    if ways <= 0:
        return []
    block = -(-rows // ways)
    out, offset = [], 0
    for _ in range(ways):
        n = min(block, rows - offset)
        out.append((offset, n))
        offset += n
    return out


def column_shard_width(dim: int, min_partition: int = 128) -> int:
    """Smallest width >= min_partition dividing dim and divisible by 4; dim when none."""
    for w in range(min_partition, dim):
        if dim % w == 0 and w % 4 == 0:
            return w
    return dim


def node_group_size(world_size: int, gpus_per_node: int, group_size: int,
                    sharding_groups: Sequence[Sequence[int]]) -> int:
    """Largest L dividing M such that every block of L consecutive members of
    every sharding group sits on one node: DMPCollection's ``node_group_size``."""
    for size in range(group_size, 1, -1):
        if group_size % size:
            continue
        if all(len({rank // gpus_per_node for rank in g[b:b + size]}) == 1
               for g in sharding_groups for b in range(0, group_size, size)):
            return size
    return 1


def _row_blocks(t: Mapping[str, Any], idx: List[int], ways: int, node_group: bool, L: int, what: str,
                path: str) -> List[str]:
    shards = t["shards"]
    if node_group:
        rule = (f"TorchRec puts block j of ceil(rows / {ways}) rows on rank j of one node group of {L} "
                f"consecutive group ranks, empty blocks included")
    else:
        rule = f"TorchRec gives row block k of ceil(rows / {ways}) rows to group rank k, empty blocks included"
    if len(idx) != ways:
        return [f'{path}: expected {ways} {what} shards of table "{t["name"]}" ({rule}), got {len(idx)}']
    blocks = row_wise_blocks(t["rows"], ways)
    order = sorted(idx, key=lambda i: shards[i]["row_offset"])
    base = shards[order[0]]["group_rank"] // L * L if node_group else 0
    for j, i in enumerate(order):
        s = shards[i]
        off, n = blocks[j]
        if (s["row_offset"], s["rows"], s["group_rank"]) != (off, n, base + j):
            return [f'{path}/{i}: expected block {j} of table "{t["name"]}" to be rows [{off}, {off + n}) on group '
                    f'rank {base + j} ({rule}), got rows [{s["row_offset"]}, {s["row_offset"] + s["rows"]}) on '
                    f'group rank {s["group_rank"]}']
    return []


def layout_problems(tables: Sequence[Mapping[str, Any]], group_size: int, node_group: int) -> List[str]:
    """"<JSON pointer>: <expectation>" for every table TorchRec would run
    differently from its shards, or not at all (tables already tile exactly)."""
    out: List[str] = []
    for ti, t in enumerate(tables):
        path = f"/tables/{ti}/shards"
        shards, st = t["shards"], t["sharding_type"]
        idx = list(range(len(shards)))
        if st == "table_wise" and len(shards) != 1:
            out.append(f"{path}: expected one table_wise shard (the whole table on one group rank), got {len(shards)}")
        elif st == "row_wise":
            out += _row_blocks(t, idx, group_size, False, node_group, "row_wise", path)
        elif st == "table_row_wise":
            out += _row_blocks(t, idx, node_group, True, node_group, "table_row_wise", path)
        elif st in ("column_wise", "table_column_wise"):
            for i, s in enumerate(shards):
                if s["row_offset"] != 0 or s["rows"] != t["rows"]:
                    out.append(f'{path}/{i}: expected a {st} shard spanning all {t["rows"]} rows, got rows '
                               f'[{s["row_offset"]}, {s["row_offset"] + s["rows"]})')
                    break
        elif st == "grid_shard":
            by_col: Dict[int, List[int]] = {}
            for i, s in enumerate(shards):
                by_col.setdefault(s["col_offset"], []).append(i)
            for col in sorted(by_col):
                problems = _row_blocks(t, by_col[col], node_group, True, node_group,
                                       f"grid_shard (columns from {col})", path)
                if problems:
                    out += problems
                    break
    return out
