"""shardscope_torchrec without torch: loading, validation, DMPCollection
arguments and the TorchRec serialized form."""

import copy
import json
import os
import tempfile
import unittest

from shardscope_torchrec import load_plan, layout_groups

DATA_DIR = os.environ.get(
    "SHARDSCOPE_TEST_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"),
)
PLAN = os.path.join(DATA_DIR, "plans", "strided_8x4.json")
MODULE = "sparse_arch.embedding_bag_collection"


def plan_doc():
    with open(PLAN, encoding="utf-8") as f:
        return json.load(f)


def tiles_exactly(rows, dim, shards):
    """Every (row, column) cell of rows x dim lies in exactly one shard (by column strips)."""
    cuts = sorted({0, dim, *(s["shard_offsets"][1] for s in shards),
                   *(s["shard_offsets"][1] + s["shard_sizes"][1] for s in shards)})
    for c0, c1 in zip(cuts, cuts[1:]):
        spans = sorted((s["shard_offsets"][0], s["shard_offsets"][0] + s["shard_sizes"][0]) for s in shards
                       if s["shard_offsets"][1] <= c0 and s["shard_offsets"][1] + s["shard_sizes"][1] >= c1)
        covered = 0
        for a, b in spans:
            if a != covered:
                return False
            covered = b
        if covered != rows:
            return False
    return True


class LoadPlanTest(unittest.TestCase):
    def test_loads_the_fixture_from_a_path(self):
        plan = load_plan(PLAN)
        self.assertEqual(plan.world_size, 32)
        self.assertEqual(plan.sharding_group_size, 8)
        self.assertEqual(plan.replicas, 4)
        self.assertEqual(plan.layout, "strided")
        self.assertEqual([t["name"] for t in plan.tables], ["cat_0", "cat_1", "cat_2", "cat_5"])

    def test_loads_a_dict(self):
        self.assertEqual(load_plan(plan_doc()).model, "DLRM-DCNv2 (MLPerf, Criteo 1TB)")

    def test_rejects_another_schema(self):
        doc = plan_doc()
        doc["schema"] = "shardscope.model/1"
        with self.assertRaisesRegex(ValueError, r'/schema: expected "shardscope.plan/1"'):
            load_plan(doc)

    def test_rejects_missing_schema(self):
        doc = plan_doc()
        del doc["schema"]
        with self.assertRaisesRegex(ValueError, "/schema: missing required field"):
            load_plan(doc)

    def test_rejects_missing_key_naming_its_path(self):
        doc = plan_doc()
        del doc["grid"]["layout"]
        with self.assertRaisesRegex(ValueError, "/grid/layout: missing required field"):
            load_plan(doc)

    def test_rejects_bad_shard_rows_naming_its_path(self):
        doc = plan_doc()
        doc["tables"][3]["shards"][0]["rows"] = 0
        with self.assertRaises(ValueError) as cm:
            load_plan(doc)
        self.assertIn("/tables/3/shards/0/rows: expected an integer >= 1 (only row_wise, table_row_wise and "
                      "grid_shard row blocks may be empty), got 0 for a data_parallel table", str(cm.exception))

    def test_rejects_booleans_and_fractions_as_integers(self):
        doc = plan_doc()
        doc["world_size"] = True
        doc["tables"][0]["shards"][1]["row_offset"] = 2.5
        with self.assertRaises(ValueError) as cm:
            load_plan(doc)
        self.assertIn("/world_size: expected an integer in [1, 16777216], got boolean true", str(cm.exception))
        self.assertIn("/tables/0/shards/1/row_offset: expected an integer >= 0, got 2.5", str(cm.exception))

    def test_file_errors_name_the_file(self):
        doc = plan_doc()
        doc["tables"][1]["sharding_type"] = "diagonal"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            with self.assertRaises(ValueError) as cm:
                load_plan(path)
        self.assertTrue(str(cm.exception).startswith(path + ": /tables/1/sharding_type: expected one of"),
                        str(cm.exception))

    def test_rejects_grid_that_does_not_multiply(self):
        doc = plan_doc()
        doc["grid"]["replicas"] = 3
        with self.assertRaisesRegex(ValueError,
                                    r"/grid: expected sharding_group_size x replicas = world_size, got 8 x 3 != 32"):
            load_plan(doc)

    def test_rejects_groups_that_are_not_the_layouts(self):
        doc = plan_doc()
        doc["grid"]["layout"] = "contiguous"
        with self.assertRaisesRegex(ValueError, r"/sharding_groups: expected the contiguous layout's groups"):
            load_plan(doc)

    def test_rejects_a_gap(self):
        doc = plan_doc()
        del doc["tables"][2]["shards"][1]
        with self.assertRaisesRegex(ValueError,
                                    r'/tables/2/shards: expected shards to cover table "cat_2" exactly once: '
                                                r"rows \[2, 4\) of columns \[0, 128\) are not covered"):
            load_plan(doc)

    def test_empty_row_blocks_are_kept(self):
        # 10 rows over 8 ranks: TorchRec's blocks are 2,2,2,2,2,0,0,0.
        cat_2 = load_plan(PLAN).tables[2]
        self.assertEqual([s["rows"] for s in cat_2["shards"]], [2, 2, 2, 2, 2, 0, 0, 0])

    def test_target_defaults_to_torchrec_and_is_checked(self):
        doc = plan_doc()
        del doc["target"]
        self.assertEqual(load_plan(doc).target, "torchrec")
        doc["target"] = "trainer"
        with self.assertRaisesRegex(ValueError, r'/target: expected "torchrec" or "shardscope", got string "trainer"'):
            load_plan(doc)

    def test_torchrec_target_rejects_row_blocks_on_other_ranks(self):
        doc = plan_doc()
        shards = doc["tables"][0]["shards"]
        shards[0]["group_rank"], shards[1]["group_rank"] = 1, 0
        with self.assertRaises(ValueError) as cm:
            load_plan(doc)
        self.assertIn('/tables/0/shards/0: expected block 0 of table "cat_0" to be rows [0, 5000000) on group rank 0 '
                      "(TorchRec gives row block k of ceil(rows / 8) rows to group rank k", str(cm.exception))
        # The same plan for ShardScope's engine loads, but will not become a TorchRec plan.
        doc["target"] = "shardscope"
        plan = load_plan(doc)
        self.assertEqual(len(plan.torchrec_problems()), 1)
        with self.assertRaisesRegex(ValueError, r"is not a layout TorchRec runs as written"):
            plan.parameter_shardings()
        with self.assertRaisesRegex(ValueError, r"is not a layout TorchRec runs as written"):
            plan.dmp_collection_kwargs()

    def test_a_missing_target_names_the_key_when_torchrec_rules_fail(self):
        doc = plan_doc()
        del doc["target"]
        del doc["tables"][0]["shards"][7]
        doc["tables"][0]["shards"][6]["rows"] = 10000000
        with self.assertRaisesRegex(ValueError, r'/target: missing, so the plan is held to TorchRec'):
            load_plan(doc)

    def test_rejects_a_wrong_node_group_size(self):
        doc = plan_doc()
        doc["grid"]["node_group_size"] = 8
        with self.assertRaisesRegex(ValueError, r"/grid/node_group_size: expected 2, the node group size of 32 GPUs "
                                                r"\(8 per node\) as 8 x 4 strided, got 8"):
            load_plan(doc)

    def test_rejects_partial_data_parallel(self):
        doc = plan_doc()
        doc["tables"][3]["shards"].pop()
        with self.assertRaisesRegex(ValueError, r"/tables/3/shards: expected one full-table shard on every group rank"):
            load_plan(doc)


class DmpCollectionTest(unittest.TestCase):
    def test_strided_kwargs(self):
        # 32 GPUs as 8 x 4 strided: group 0 is [0, 4, 8, ..., 28], two members per node of 8.
        self.assertEqual(load_plan(PLAN).dmp_collection_kwargs(),
                         {"world_size": 32, "sharding_group_size": 8, "node_group_size": 2,
                          "use_inter_host_allreduce": False})

    def test_contiguous_uses_inter_host_allreduce(self):
        doc = plan_doc()
        doc["grid"]["layout"] = "contiguous"
        doc["sharding_groups"], doc["replica_groups"] = layout_groups(32, 8, "contiguous")
        del doc["grid"]["node_group_size"]
        kwargs = load_plan(doc).dmp_collection_kwargs()
        self.assertTrue(kwargs["use_inter_host_allreduce"])
        self.assertEqual(kwargs["node_group_size"], 8)  # [0..7] is one node

    def test_sync_interval_reaches_the_train_pipeline(self):
        # A plan without the key assumed TorchRec's default: sync every batch.
        self.assertEqual(load_plan(PLAN).train_pipeline_kwargs(), {"dmp_collection_sync_interval_batches": 1})
        doc = plan_doc()
        doc["sync_interval"] = 8
        self.assertEqual(load_plan(doc).sync_interval, 8)
        self.assertEqual(load_plan(doc).train_pipeline_kwargs(), {"dmp_collection_sync_interval_batches": 8})
        for bad in (0, 2.5, "4", True):
            doc["sync_interval"] = bad
            with self.assertRaisesRegex(ValueError, r"/sync_interval: expected an integer in \[1, 1000000\]"):
                load_plan(doc)

    def test_layout_groups_match_the_fixture(self):
        doc = plan_doc()
        self.assertEqual(layout_groups(32, 8, "strided"), (doc["sharding_groups"], doc["replica_groups"]))


class ParameterShardingsTest(unittest.TestCase):
    def setUp(self):
        self.plan = load_plan(PLAN)
        self.ps = self.plan.parameter_shardings()

    def test_row_wise_table(self):
        cat_2 = self.ps["cat_2"]
        self.assertEqual(cat_2["sharding_type"], "row_wise")
        self.assertEqual(cat_2["compute_kernel"], "fused")
        self.assertEqual(cat_2["ranks"], list(range(8)))
        self.assertEqual(cat_2["shards"][3], {"shard_offsets": [6, 0], "shard_sizes": [2, 128],
                                              "placement": "rank:3/cuda:4"})
        self.assertEqual(cat_2["shards"][7], {"shard_offsets": [10, 0], "shard_sizes": [0, 128],
                                              "placement": "rank:7/cuda:4"})

    def test_cpu_uses_the_dense_kernel(self):
        ps = self.plan.parameter_shardings("cpu")
        self.assertEqual(ps["cat_0"]["compute_kernel"], "dense")
        self.assertEqual(ps["cat_0"]["shards"][2]["placement"], "rank:2/cpu")
        shardings = self.plan.parameter_shardings("cpu", compute_kernel="fused")
        self.assertEqual(shardings["cat_0"]["compute_kernel"], "fused")

    def test_placement_names_the_group_rank_and_its_local_device(self):
        # Strided 8 x 4: group rank i is global rank 4i in sharding group 0, device 4i % 8.
        cat_0 = self.ps["cat_0"]
        self.assertEqual([s["placement"] for s in cat_0["shards"]],
                         [f"rank:{i}/cuda:{(4 * i) % 8}" for i in range(8)])

    def test_table_wise_table(self):
        self.assertEqual(self.ps["cat_1"], {
            "sharding_type": "table_wise", "compute_kernel": "fused", "ranks": [3],
            "shards": [{"shard_offsets": [0, 0], "shard_sizes": [39060, 128], "placement": "rank:3/cuda:4"}]})

    def test_data_parallel_table_has_every_rank_and_no_shards(self):
        self.assertEqual(self.ps["cat_5"], {"sharding_type": "data_parallel", "compute_kernel": "dense",
                                            "ranks": list(range(8)), "shards": None})

    def test_column_shards_come_in_column_order(self):
        doc = plan_doc()
        doc["tables"].append({"name": "wide", "rows": 100, "dim": 256, "sharding_type": "grid_shard", "shards": [
            {"group_rank": 7, "row_offset": 50, "rows": 50, "col_offset": 128, "cols": 128},
            {"group_rank": 6, "row_offset": 0, "rows": 50, "col_offset": 128, "cols": 128},
            {"group_rank": 3, "row_offset": 50, "rows": 50, "col_offset": 0, "cols": 128},
            {"group_rank": 2, "row_offset": 0, "rows": 50, "col_offset": 0, "cols": 128}]})
        wide = load_plan(doc).parameter_shardings()["wide"]
        self.assertEqual(wide["ranks"], [2, 3, 6, 7])
        self.assertEqual([s["shard_offsets"] for s in wide["shards"]], [[0, 0], [50, 0], [0, 128], [50, 128]])


class SerializedRoundTripTest(unittest.TestCase):
    """ShardScope plan -> TorchRec _serialize() form -> JSON file -> what the C++ importer reads."""

    def test_round_trip_structure_and_tiling(self):
        plan = load_plan(PLAN)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "torchrec_plan.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(plan.to_torchrec_serialized(MODULE), f)
            with open(path, encoding="utf-8") as f:
                back = json.load(f)
        self.assertEqual(list(back), ["plan"])
        self.assertEqual(list(back["plan"]), [MODULE])
        module = back["plan"][MODULE]
        self.assertEqual(set(module), {t["name"] for t in plan.tables})
        group_ranks = set()
        for t in plan.tables:
            ps = module[t["name"]]
            self.assertEqual(set(ps), {"sharding_type", "compute_kernel", "ranks", "shards"})
            self.assertEqual(ps["sharding_type"], t["sharding_type"])
            if t["sharding_type"] == "data_parallel":
                self.assertIsNone(ps["shards"])
                self.assertEqual(ps["ranks"], list(range(plan.sharding_group_size)))
                continue
            self.assertEqual(len(ps["ranks"]), len(ps["shards"]))
            # The table is the extent of its shards, and the shards tile it exactly once.
            rows = max(s["shard_offsets"][0] + s["shard_sizes"][0] for s in ps["shards"])
            dim = max(s["shard_offsets"][1] + s["shard_sizes"][1] for s in ps["shards"])
            self.assertEqual((rows, dim), (t["rows"], t["dim"]))
            self.assertTrue(tiles_exactly(rows, dim, ps["shards"]), t["name"])
            for rank, s in zip(ps["ranks"], ps["shards"]):
                self.assertRegex(s["placement"], r"^rank:\d+/cuda:\d+$")
                self.assertEqual(s["placement"].split("/")[0], f"rank:{rank}")
                group_ranks.add(rank)
        # Group-local ranks only (DMPCollection remaps them per sharding group).
        self.assertTrue(group_ranks <= set(range(plan.sharding_group_size)))

    def test_matches_the_checked_in_fixture_the_cpp_importer_reads(self):
        fixture = os.path.join(DATA_DIR, "torchrec", "from_strided_8x4.json")
        with open(fixture, encoding="utf-8") as f:
            expected = json.load(f)
        self.assertEqual(load_plan(PLAN).to_torchrec_serialized(MODULE), expected)

    def test_does_not_modify_the_input(self):
        doc = plan_doc()
        before = copy.deepcopy(doc)
        load_plan(doc).to_torchrec_serialized(MODULE)
        self.assertEqual(doc, before)


class WithoutTorchRecTest(unittest.TestCase):
    def test_sharding_plan_needs_torchrec(self):
        try:
            import torchrec  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "needs torch and torchrec"):
                load_plan(PLAN).to_torchrec_sharding_plan(MODULE)
        else:
            self.skipTest("torchrec is installed; see test_torchrec_integration")


if __name__ == "__main__":
    unittest.main()
