"""AccessRecorder without torch: exact bucket counts, heavy hitters within
bounded memory, the invariants the C++ reader checks, and bad input."""

import json
import os
import random
import tempfile
import unittest

from shardscope_torchrec import AccessRecorder
from shardscope_torchrec.access import _SpaceSaving


class FakeKJT:
    """What the recorder reads of a KeyedJaggedTensor: keys, ids per key, the ids."""

    def __init__(self, per_key):
        self._keys = list(per_key)
        self._ids = [list(per_key[k]) for k in self._keys]

    def keys(self):
        return self._keys

    def length_per_key(self):
        return [len(v) for v in self._ids]

    def values(self):
        return [i for v in self._ids for i in v]


class Batch:
    def __init__(self, kjt):
        self.sparse_features = kjt


def zipf_ids(rng, rows, n, alpha=1.1):
    weights = [1.0 / (r + 1) ** alpha for r in range(rows)]
    return rng.choices(range(rows), weights=weights, k=n)


class AccessRecorderTest(unittest.TestCase):
    def check_invariants(self, doc):
        """What core::accessFromJson requires of a file."""
        self.assertEqual(doc["schema"], "shardscope.access/1")
        for t in doc["tables"]:
            self.assertEqual(sum(t["buckets"]), t["lookups"])
            self.assertLessEqual(len(t["buckets"]), min(65536, t["rows"]))
            counts = [c for _, c in t["hot"]]
            self.assertEqual(counts, sorted(counts, reverse=True))
            self.assertEqual(len({i for i, _ in t["hot"]}), len(t["hot"]))
            b = len(t["buckets"])
            for i, c in t["hot"]:
                self.assertTrue(0 <= i < t["rows"] and c >= 1)
                self.assertLessEqual(c, t["buckets"][i * b // t["rows"]])

    def test_counts_every_id_of_every_table(self):
        rng = random.Random(7)
        rec = AccessRecorder({"a": 1000, "b": 10}, buckets=8, hot=4, feature_to_table={"f_a": "a", "f_a2": "a"},
                             source="generated")
        expected = {"a": [0] * 8, "b": [0] * 8}
        for _ in range(20):
            ids_a = zipf_ids(rng, 1000, 50)
            ids_a2 = [rng.randrange(1000) for _ in range(5)]
            ids_b = [rng.randrange(10) for _ in range(rng.randrange(0, 4))]
            ids_other = [123456789]  # a feature of no table: ignored
            batch = FakeKJT({"f_a": ids_a, "b": ids_b, "f_a2": ids_a2, "unknown": ids_other})
            self.assertIs(rec.record(batch), batch)
            for i in ids_a + ids_a2:
                expected["a"][i * 8 // 1000] += 1
            for i in ids_b:
                expected["b"][i * 8 // 10] += 1
        doc = rec.to_dict()
        self.check_invariants(doc)
        self.assertEqual(doc["batches"], 20)
        self.assertEqual(doc["source"], "generated")
        tables = {t["name"]: t for t in doc["tables"]}
        self.assertEqual(tables["a"]["buckets"], expected["a"])
        self.assertEqual(tables["b"]["buckets"], expected["b"])
        self.assertEqual(tables["a"]["lookups"], 20 * 55)
        # Zipf: row 0 is the hottest id, found with a count no larger than its true one.
        self.assertEqual(tables["a"]["hot"][0][0], 0)

    def test_heavy_hitters_are_exact_when_they_fit_and_bounded_otherwise(self):
        rng = random.Random(1)
        ids = zipf_ids(rng, 100000, 20000, alpha=1.2)
        rec = AccessRecorder({"t": 100000}, buckets=1024, hot=8)
        for start in range(0, len(ids), 1000):
            rec.record(FakeKJT({"t": ids[start:start + 1000]}))
        true = {}
        for i in ids:
            true[i] = true.get(i, 0) + 1
        top = sorted(true.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        got = rec.to_dict()["tables"][0]["hot"]
        self.check_invariants(rec.to_dict())
        self.assertEqual([i for i, _ in got[:3]], [i for i, _ in top[:3]])
        for i, c in got:
            self.assertLessEqual(c, true[i])  # a lower bound, never more than seen
        # Bounded memory: 4 x hot counters however many distinct ids went by.
        self.assertLessEqual(len(rec._tables["t"].heavy.counts), 64)
        self.assertGreater(len(true), 1000)

    def test_space_saving_lower_bounds(self):
        s = _SpaceSaving(2)
        for k in [1, 1, 1, 2, 3, 3, 3, 3]:
            s.add(k)
        # 3 took over 2's counter (count 1): 3's counter reads 5 with error 1, so its lower bound is its true 4.
        self.assertEqual(s.top(2), [(3, 4), (1, 3)])
        self.assertLessEqual(len(s.counts), 2)

    def test_wrap_and_batches_with_sparse_features(self):
        rec = AccessRecorder({"t": 4}, buckets=2, hot=2)
        batches = [Batch(FakeKJT({"t": [0, 0, 3]})), Batch(FakeKJT({"t": [1]}))]
        self.assertEqual(list(rec.wrap(batches)), batches)
        t = rec.to_dict()["tables"][0]
        self.assertEqual(t["buckets"], [3, 1])
        self.assertEqual(t["hot"][0], [0, 2])

    def test_write_is_the_document(self):
        rec = AccessRecorder({"t": 3}, buckets=3)
        rec.record(FakeKJT({"t": [2, 2, 1]}))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "access.json")
            rec.write(path)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(json.load(f), rec.to_dict())
            self.assertEqual(os.listdir(d), ["access.json"])

    def test_bad_input_says_what(self):
        with self.assertRaisesRegex(ValueError, r"tables\['t'\]: expected a positive row count"):
            AccessRecorder({"t": 0})
        with self.assertRaisesRegex(ValueError, r"buckets: expected 1 to 65536"):
            AccessRecorder({"t": 5}, buckets=0)
        with self.assertRaisesRegex(ValueError, r"feature_to_table\['f'\]: no table 'x'"):
            AccessRecorder({"t": 5}, feature_to_table={"f": "x"})
        rec = AccessRecorder({"t": 5})
        with self.assertRaisesRegex(ValueError, r"table t: id 5 outside its 5 rows"):
            rec.record(FakeKJT({"t": [1, 5]}))

        class Broken(FakeKJT):
            def length_per_key(self):
                return [1]

        with self.assertRaisesRegex(ValueError, r"length_per_key\(\) has 1 entries for 2 keys"):
            rec.record(Broken({"t": [1], "u": [2]}))


if __name__ == "__main__":
    unittest.main()
