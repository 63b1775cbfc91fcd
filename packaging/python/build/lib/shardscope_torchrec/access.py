"""Measured access distributions for the ShardScope planner (``shardscope.access/1``).

A trainer wraps its batches; the recorder counts, per table, the ids looked
up in bounded memory: a histogram over ``buckets`` equal row buckets (exact)
and the ``hot`` most looked-up ids (Space-Saving heavy hitters, reported with
a guaranteed lower bound of their counts). ``write`` saves the file the
desktop attaches to a project and ``shardscope-cli`` reads
(docs/formats/access.md)::

    recorder = AccessRecorder({"cat_0": 40_000_000, "cat_1": 39_060}, buckets=1024)
    for batch in recorder.wrap(loader):           # or: kjt = recorder.record(kjt)
        ...
    recorder.write("access.json")

Works with TorchRec's ``KeyedJaggedTensor`` (``keys()``, ``length_per_key()``,
``values()``) or any object with those methods (lists or tensors), and with
batches that carry one as ``sparse_features``. Pure standard library; torch
tensors are counted with torch ops when torch is there.
"""

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

SCHEMA = "shardscope.access/1"
MAX_HOT_IDS = 4096
MAX_BUCKETS = 65536


class _SpaceSaving:
    """Heavy hitters in at most ``capacity`` counters (Metwally et al., 2005)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.counts: Dict[int, int] = {}
        self.errors: Dict[int, int] = {}

    def add(self, key: int, weight: int = 1) -> None:
        if key in self.counts:
            self.counts[key] += weight
            return
        if len(self.counts) < self.capacity:
            self.counts[key] = weight
            self.errors[key] = 0
            return
        victim = min(self.counts, key=self.counts.__getitem__)
        floor = self.counts.pop(victim)
        del self.errors[victim]
        self.counts[key] = floor + weight
        self.errors[key] = floor

    def top(self, n: int) -> List[Tuple[int, int]]:
        """The ``n`` heaviest (id, lower bound of its count), heaviest first; bounds of 0 left out."""
        bounds = [(k, c - self.errors[k]) for k, c in self.counts.items()]
        bounds = [(k, b) for k, b in bounds if b > 0]
        bounds.sort(key=lambda kv: (-kv[1], kv[0]))
        return bounds[:n]


def _as_ints(values: Any) -> List[int]:
    if hasattr(values, "tolist"):
        return [int(v) for v in values.tolist()]
    return [int(v) for v in values]


class _TableCounts:
    def __init__(self, name: str, rows: int, buckets: int, hot: int) -> None:
        self.name = name
        self.rows = rows
        self.buckets = [0] * min(buckets, rows)
        self.lookups = 0
        self.hot = hot
        self.heavy = _SpaceSaving(max(4 * hot, 64)) if hot > 0 else None

    def add(self, ids: Any) -> None:
        counted = self._add_tensor(ids)
        if counted:
            return
        b = len(self.buckets)
        for i in _as_ints(ids):
            if i < 0 or i >= self.rows:
                raise ValueError(f"table {self.name}: id {i} outside its {self.rows} rows")
            self.buckets[i * b // self.rows] += 1
            if self.heavy is not None:
                self.heavy.add(i)
            self.lookups += 1

    def _add_tensor(self, ids: Any) -> bool:
        """Counts a torch tensor with torch ops; False when `ids` is not one."""
        try:
            import torch
        except Exception:  # no torch: plain Python counting
            return False
        if not isinstance(ids, torch.Tensor):
            return False
        ids = ids.reshape(-1).to(torch.int64)
        if ids.numel() == 0:
            return True
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= self.rows:
            bad = lo if lo < 0 else hi
            raise ValueError(f"table {self.name}: id {bad} outside its {self.rows} rows")
        b = len(self.buckets)
        per_bucket = torch.bincount(ids * b // self.rows, minlength=b).tolist()
        for i, c in enumerate(per_bucket):
            self.buckets[i] += int(c)
        if self.heavy is not None:
            unique, counts = torch.unique(ids, return_counts=True)
            for key, c in zip(unique.tolist(), counts.tolist()):
                self.heavy.add(int(key), int(c))
        self.lookups += int(ids.numel())
        return True

    def to_dict(self) -> Dict[str, Any]:
        hot = self.heavy.top(self.hot) if self.heavy is not None else []
        return {"name": self.name, "rows": self.rows, "lookups": self.lookups,
                "hot": [[k, c] for k, c in hot], "buckets": list(self.buckets)}


class AccessRecorder:
    """Counts the ids of ``KeyedJaggedTensor`` batches per table; writes ``shardscope.access/1``.

    ``tables`` maps each table to its row count; ``feature_to_table`` maps
    feature keys to tables when they differ (several features may share a
    table); features of no known table are ignored. Memory per table: one
    counter per bucket and ``4 x hot`` heavy-hitter counters, whatever the
    number of batches.
    """

    def __init__(self, tables: Mapping[str, int], *, buckets: int = 1024, hot: int = 256,
                 feature_to_table: Optional[Mapping[str, str]] = None, source: str = "") -> None:
        if not 1 <= buckets <= MAX_BUCKETS:
            raise ValueError(f"buckets: expected 1 to {MAX_BUCKETS}, got {buckets}")
        if not 0 <= hot <= MAX_HOT_IDS:
            raise ValueError(f"hot: expected 0 to {MAX_HOT_IDS}, got {hot}")
        self._tables: Dict[str, _TableCounts] = {}
        for name, rows in tables.items():
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
                raise ValueError(f"tables[{name!r}]: expected a positive row count, got {rows!r}")
            self._tables[name] = _TableCounts(name, rows, buckets, hot)
        self._feature_to_table = dict(feature_to_table or {})
        for feature, table in self._feature_to_table.items():
            if table not in self._tables:
                raise ValueError(f"feature_to_table[{feature!r}]: no table {table!r} among {sorted(self._tables)}")
        self.source = source
        self.batches = 0

    def record(self, kjt: Any) -> Any:
        """Counts the ids of one ``KeyedJaggedTensor`` (or a batch with ``sparse_features``); returns it."""
        features = getattr(kjt, "sparse_features", kjt)
        keys = list(features.keys())
        lengths = [int(n) for n in _as_ints(features.length_per_key())]
        if len(lengths) != len(keys):
            raise ValueError(f"length_per_key() has {len(lengths)} entries for {len(keys)} keys")
        values = features.values()
        offset = 0
        for key, n in zip(keys, lengths):
            table = self._tables.get(self._feature_to_table.get(key, key))
            if table is not None and n > 0:
                table.add(values[offset:offset + n])
            offset += n
        self.batches += 1
        return kjt

    def wrap(self, batches: Iterable[Any]) -> Iterator[Any]:
        """Yields every batch after counting it: ``for batch in recorder.wrap(loader): ...``."""
        for batch in batches:
            yield self.record(batch)

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": SCHEMA, "source": self.source, "batches": self.batches,
                "tables": [t.to_dict() for t in self._tables.values()]}

    def write(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the file atomically (a temporary file in the same folder, then a rename)."""
        path = os.fspath(path)
        tmp = path + ".tmp-shardscope"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f)
            f.write("\n")
        os.replace(tmp, path)
