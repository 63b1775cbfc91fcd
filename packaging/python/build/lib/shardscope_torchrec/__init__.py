"""ShardScope -> TorchRec trainer adapter.

Load a ``shardscope.plan/1`` file and get what a TorchRec trainer needs:

    from shardscope_torchrec import load_plan
    plan = load_plan("plan.json")
    sharding_plan = plan.to_torchrec("sparse_arch.embedding_bag_collection")
    model = DMPCollection(module=m, device=device, plan=sharding_plan, global_pg=pg,
                          **plan.dmp_collection_kwargs())

and the other way, to price the plan a trainer runs today:

    shardscope_torchrec.dump_plan(sharding_plan, "torchrec_plan.json")
    # shardscope-cli evaluate --plan torchrec_plan.json --model my_model.json

and record what a trainer looks up, for the planner (``shardscope.access/1``):

    recorder = shardscope_torchrec.AccessRecorder({"cat_0": 40_000_000}, buckets=1024)
    for batch in recorder.wrap(loader): ...
    recorder.write("access.json")

Everything except ``to_torchrec`` / ``to_torchrec_sharding_plan`` is pure standard library.
"""

from .access import AccessRecorder
from .plan import (LAYOUTS, SCHEMA, SHARDING_TYPES, TARGETS, ShardScopePlan, dump_plan, layout_groups, load_plan,
                   to_torchrec)
from .rules import column_shard_width, layout_problems, node_group_size, row_wise_blocks

__all__ = ["AccessRecorder", "LAYOUTS", "SCHEMA", "SHARDING_TYPES", "TARGETS", "ShardScopePlan", "dump_plan",
           "layout_groups", "load_plan", "to_torchrec", "column_shard_width", "layout_problems", "node_group_size",
           "row_wise_blocks"]
__version__ = "0.1.0"
