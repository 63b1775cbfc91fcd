"""ShardScope -> TorchRec trainer adapter.

Load a ``shardscope.plan/1`` file and get what a TorchRec trainer needs:

    from shardscope_torchrec import load_plan
    plan = load_plan("plan.json")
    sharding_plan = plan.to_torchrec_sharding_plan("sparse_arch.embedding_bag_collection")
    model = DMPCollection(module=m, device=device, plan=sharding_plan, global_pg=pg,
                          **plan.dmp_collection_kwargs())

Everything except ``to_torchrec_sharding_plan`` is pure standard library.
"""

from .plan import LAYOUTS, SCHEMA, SHARDING_TYPES, ShardScopePlan, layout_groups, load_plan

__all__ = ["LAYOUTS", "SCHEMA", "SHARDING_TYPES", "ShardScopePlan", "layout_groups", "load_plan"]
__version__ = "0.1.0"
