"""TorchRec's layout rules in the adapter (shardscope_torchrec.rules) and
dump_plan, the way back from a TorchRec plan to what `evaluate` reads."""

import json
import os
import tempfile
import unittest

from shardscope_torchrec import (column_shard_width, dump_plan, layout_groups, layout_problems, load_plan,
                                 node_group_size, row_wise_blocks)

DATA_DIR = os.environ.get(
    "SHARDSCOPE_TEST_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"),
)
PLAN = os.path.join(DATA_DIR, "plans", "strided_8x4.json")
MODULE = "sparse_arch.embedding_bag_collection"


def table(name, sharding_type, rows, shards, dim=16):
    return {"name": name, "sharding_type": sharding_type, "rows": rows, "dim": dim,
            "shards": [{"group_rank": r, "row_offset": o, "rows": n, "col_offset": c, "cols": w}
                       for r, o, n, c, w in shards]}


class RowBlocksTest(unittest.TestCase):
    def test_torchrec_cuts_ceil_blocks_and_keeps_empty_ones(self):
        self.assertEqual([n for _, n in row_wise_blocks(10, 4)], [3, 3, 3, 1])
        self.assertEqual(row_wise_blocks(5, 4), [(0, 2), (2, 2), (4, 1), (5, 0)])
        self.assertEqual([n for _, n in row_wise_blocks(3, 8)], [1, 1, 1, 0, 0, 0, 0, 0])
        self.assertEqual(row_wise_blocks(8, 4), [(0, 2), (2, 2), (4, 2), (6, 2)])
        self.assertEqual(row_wise_blocks(7, 0), [])

    def test_blocks_tile_the_rows(self):
        for rows in range(1, 40):
            for ways in range(1, 12):
                blocks = row_wise_blocks(rows, ways)
                self.assertEqual(len(blocks), ways)
                self.assertEqual(sum(n for _, n in blocks), rows)
                for (o1, n1), (o2, _) in zip(blocks, blocks[1:]):
                    self.assertEqual(o1 + n1, o2)


class ColumnWidthTest(unittest.TestCase):
    def test_smallest_divisor_from_the_minimum_partition(self):
        self.assertEqual(column_shard_width(256), 128)
        self.assertEqual(column_shard_width(384), 128)
        self.assertEqual(column_shard_width(128), 128)
        self.assertEqual(column_shard_width(64), 64)
        self.assertEqual(column_shard_width(1000), 200)
        self.assertEqual(column_shard_width(300), 300)  # 150 divides but is not a multiple of 4
        self.assertEqual(column_shard_width(260), 260)  # 130 divides but is not a multiple of 4


class NodeGroupSizeTest(unittest.TestCase):
    def ngs(self, n, per_node, m, layout):
        return node_group_size(n, per_node, m, layout_groups(n, m, layout)[0])

    def test_strided_is_gpus_per_node_over_replicas(self):
        self.assertEqual(self.ngs(32, 8, 8, "strided"), 2)
        self.assertEqual(self.ngs(8, 4, 4, "strided"), 2)
        self.assertEqual(self.ngs(64, 8, 8, "strided"), 1)

    def test_contiguous_and_one_group(self):
        self.assertEqual(self.ngs(32, 8, 8, "contiguous"), 8)
        self.assertEqual(self.ngs(32, 8, 16, "contiguous"), 8)
        self.assertEqual(self.ngs(4, 2, 4, "strided"), 2)
        self.assertEqual(self.ngs(16, 8, 16, "strided"), 8)


class LayoutProblemsTest(unittest.TestCase):
    def test_torchrec_layouts_pass(self):
        tables = [
            table("rw", "row_wise", 5, [(0, 0, 2, 0, 16), (1, 2, 2, 0, 16), (2, 4, 1, 0, 16), (3, 5, 0, 0, 16)]),
            table("twrw", "table_row_wise", 9, [(2, 0, 5, 0, 16), (3, 5, 4, 0, 16)]),
            table("grid", "grid_shard", 4, [(2, 0, 2, 0, 128), (3, 2, 2, 0, 128), (0, 0, 2, 128, 128),
                                            (1, 2, 2, 128, 128)], dim=256),
            table("cw", "column_wise", 4, [(1, 0, 4, 0, 128), (0, 0, 4, 128, 128)], dim=256),
        ]
        self.assertEqual(layout_problems(tables, 4, 2), [])

    def test_row_wise_block_on_another_rank(self):
        t = table("rw", "row_wise", 8, [(1, 0, 2, 0, 16), (0, 2, 2, 0, 16), (2, 4, 2, 0, 16), (3, 6, 2, 0, 16)])
        [problem] = layout_problems([t], 4, 2)
        self.assertIn("/tables/0/shards/0: expected block 0 of table \"rw\" to be rows [0, 2) on group rank 0", problem)
        self.assertIn("got rows [0, 2) on group rank 1", problem)

    def test_row_wise_with_empty_blocks_dropped(self):
        t = table("rw", "row_wise", 5, [(0, 0, 2, 0, 16), (1, 2, 2, 0, 16), (2, 4, 1, 0, 16)])
        [problem] = layout_problems([t], 4, 2)
        self.assertIn("/tables/0/shards: expected 4 row_wise shards", problem)

    def test_grid_row_blocks_swapped_or_across_node_groups(self):
        swapped = table("g", "grid_shard", 4, [(3, 0, 2, 0, 128), (2, 2, 2, 0, 128), (0, 0, 2, 128, 128),
                                               (1, 2, 2, 128, 128)], dim=256)
        across = table("g", "grid_shard", 4, [(0, 0, 2, 0, 128), (2, 2, 2, 0, 128), (1, 0, 2, 128, 128),
                                              (3, 2, 2, 128, 128)], dim=256)
        [problem] = layout_problems([swapped], 4, 2)
        self.assertIn('/tables/0/shards/0: expected block 0 of table "g" to be rows [0, 2) on group rank 2', problem)
        self.assertIn("one node group of 2 consecutive group ranks", problem)
        [problem] = layout_problems([across], 4, 2)
        self.assertIn('/tables/0/shards/1: expected block 1 of table "g" to be rows [2, 4) on group rank 1', problem)
        self.assertIn("got rows [2, 4) on group rank 2", problem)

    def test_table_wise_must_be_one_shard_and_column_shards_span_all_rows(self):
        tw = table("tw", "table_wise", 4, [(0, 0, 2, 0, 16), (0, 2, 2, 0, 16)])
        cw = table("cw", "column_wise", 4, [(0, 0, 2, 0, 16), (1, 2, 2, 0, 16)])
        problems = layout_problems([tw, cw], 4, 2)
        self.assertEqual(len(problems), 2)
        self.assertIn("/tables/0/shards: expected one table_wise shard", problems[0])
        self.assertIn("/tables/1/shards/0: expected a column_wise shard spanning all 4 rows", problems[1])


class DumpPlanTest(unittest.TestCase):
    def test_writes_the_serialized_form_evaluate_reads(self):
        serialized = load_plan(PLAN).to_torchrec_serialized(MODULE)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "today.json")
            returned = dump_plan(serialized, path)
            with open(path, encoding="utf-8") as f:
                written = json.load(f)
            self.assertEqual(os.listdir(d), ["today.json"])  # no temporary file left behind
        self.assertEqual(written, serialized)
        self.assertEqual(returned, serialized)
        with open(os.path.join(DATA_DIR, "torchrec", "from_strided_8x4.json"), encoding="utf-8") as f:
            self.assertEqual(written, json.load(f))

    def test_takes_an_object_with_serialize(self):
        serialized = load_plan(PLAN).to_torchrec_serialized(MODULE)

        class FakeShardingPlan:
            def _serialize(self):
                return serialized

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            dump_plan(FakeShardingPlan(), path)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(json.load(f), serialized)

    def test_rejects_what_is_not_a_plan_and_keeps_the_old_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write("kept")
            for bad in ({"tables": []}, {"plan": []}, [1, 2]):
                with self.assertRaisesRegex(ValueError, "ShardingPlan or its _serialize"):
                    dump_plan(bad, path)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), "kept")


if __name__ == "__main__":
    unittest.main()
