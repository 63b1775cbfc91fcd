"""shardscope_torchrec against the real torchrec: builds a ShardingPlan and
checks it holds exactly the shards of the plan. Skipped without torchrec."""

import json
import os
import tempfile
import unittest

from shardscope_torchrec import dump_plan, load_plan, to_torchrec

DATA_DIR = os.environ.get(
    "SHARDSCOPE_TEST_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"),
)
PLAN = os.path.join(DATA_DIR, "plans", "strided_8x4.json")
MODULE = "sparse_arch.embedding_bag_collection"

try:
    import torchrec  # noqa: F401
    from torchrec.distributed.types import ParameterSharding, ShardingPlan

    HAVE_TORCHREC = True
    WHY = ""
except Exception as e:  # ImportError, or a torch/torchrec build mismatch
    HAVE_TORCHREC = False
    WHY = f"torchrec is not importable ({type(e).__name__}: {e}); skipped"


@unittest.skipUnless(HAVE_TORCHREC, WHY)
class TorchRecShardingPlanTest(unittest.TestCase):
    def setUp(self):
        self.plan = load_plan(PLAN)
        self.sharding_plan = self.plan.to_torchrec_sharding_plan(MODULE)

    def test_is_a_torchrec_sharding_plan(self):
        self.assertIsInstance(self.sharding_plan, ShardingPlan)
        module_plan = self.sharding_plan.get_plan_for_module(MODULE)
        self.assertEqual(set(module_plan), {t["name"] for t in self.plan.tables})
        for ps in module_plan.values():
            self.assertIsInstance(ps, ParameterSharding)

    def test_shards_match_the_serialized_form(self):
        module_plan = self.sharding_plan.get_plan_for_module(MODULE)
        for name, expected in self.plan.parameter_shardings().items():
            ps = module_plan[name]
            self.assertEqual(ps.sharding_type, expected["sharding_type"])
            self.assertEqual(ps.compute_kernel, expected["compute_kernel"])
            self.assertEqual(list(ps.ranks), expected["ranks"])
            if expected["shards"] is None:
                self.assertIsNone(ps.sharding_spec)
                continue
            got = [{"shard_offsets": list(s.shard_offsets), "shard_sizes": list(s.shard_sizes),
                    "placement": str(s.placement)} for s in ps.sharding_spec.shards]
            self.assertEqual(got, expected["shards"])

    def test_dump_plan_writes_what_the_cpp_importer_reads(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "today.json")
            dump_plan(to_torchrec(PLAN, MODULE), path)
            with open(path, encoding="utf-8") as f:
                written = json.load(f)
        with open(os.path.join(DATA_DIR, "torchrec", "from_strided_8x4.json"), encoding="utf-8") as f:
            expected = json.load(f)
        # TorchRec's own _serialize() leaves "shards" out where there is no sharding spec (data_parallel);
        # the importer reads an absent key and null alike.
        for table in expected["plan"][MODULE].values():
            if table["shards"] is None:
                del table["shards"]
        self.assertEqual(written, expected)

    def test_cpu_placements(self):
        sp = self.plan.to_torchrec_sharding_plan(MODULE, device_type="cpu")
        shard = sp.get_plan_for_module(MODULE)["cat_1"].sharding_spec.shards[0]
        self.assertEqual(str(shard.placement), "rank:3/cpu")


@unittest.skipUnless(HAVE_TORCHREC, WHY)
class AccessRecorderOnKeyedJaggedTensorsTest(unittest.TestCase):
    """The recorder on real KeyedJaggedTensors (torch ops) counts what plain Python counts."""

    def test_generated_kjts_count_like_lists(self):
        import torch
        from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

        from shardscope_torchrec import AccessRecorder

        gen = torch.Generator().manual_seed(3)
        tables = {"a": 5000, "b": 70}
        on_tensors = AccessRecorder(tables, buckets=64, hot=16)
        on_lists = AccessRecorder(tables, buckets=64, hot=16)
        for _ in range(30):
            lengths_a = torch.randint(0, 6, (32,), generator=gen)
            lengths_b = torch.randint(0, 3, (32,), generator=gen)
            # Skewed ids: squares of uniform draws crowd the low rows.
            ids_a = (torch.rand(int(lengths_a.sum()), generator=gen) ** 3 * 5000).to(torch.int64)
            ids_b = torch.randint(0, 70, (int(lengths_b.sum()),), generator=gen)
            kjt = KeyedJaggedTensor.from_lengths_sync(keys=["a", "b"], values=torch.cat([ids_a, ids_b]),
                                                      lengths=torch.cat([lengths_a, lengths_b]))
            self.assertIs(on_tensors.record(kjt), kjt)

            class Lists:
                def keys(self):
                    return ["a", "b"]

                def length_per_key(self):
                    return [len(ids_a), len(ids_b)]

                def values(self):
                    return ids_a.tolist() + ids_b.tolist()

            on_lists.record(Lists())
        got, want = on_tensors.to_dict(), on_lists.to_dict()
        for g, w in zip(got["tables"], want["tables"]):
            self.assertEqual(g["buckets"], w["buckets"])
            self.assertEqual(g["lookups"], w["lookups"])
            self.assertEqual(g["hot"][0][0], w["hot"][0][0])
            counts = [c for _, c in g["hot"]]
            self.assertEqual(counts, sorted(counts, reverse=True))


if __name__ == "__main__":
    unittest.main()
