#!/usr/bin/env python3
"""Writes the Kineto fixtures of tests/profiler/import/test_kineto_import.cpp (run from this folder).

Two ranks of a TorchRec-like step (profiler steps 5 and 6), following the
PyTorch profiler's JSON: distributedInfo, deviceProperties, traceEvents,
baseTimeNanoseconds at the end. rank0: plain .json, distributedInfo first;
rank1: .json.gz, distributedInfo after traceEvents (the rank is known only at the end).
Per step (us from the step start): a2a ids 100, emb fwd 400, a2a pooled 3500,
dense 4000, a2a grads 6000, emb bwd 7000, allreduce 10100 (after the CPU step
window: the step comes from its launch at 9000 via correlation)."""
import gzip, json

def rank_trace(rank, t0, fwd, bwd, ids_dur, base, cpu_step_cat, dist_last, world=2):
    ev = []
    pid, tid = 4242 + rank, 4242 + rank
    corr = [1000 * (rank + 1)]
    ext = [1]
    def cpu(cat, name, ts, dur, **args):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args})
    def launch_kernel(name, launch_ts, ts, dur, cat="kernel", stream=7, **nccl):
        corr[0] += 1
        ext[0] += 1
        cpu("cuda_runtime", "cudaLaunchKernel" if cat == "kernel" else "cudaMemcpyAsync", launch_ts, 4.5,
            **{"External id": ext[0], "cbid": 211, "correlation": corr[0]})
        args = {"External id": ext[0], "device": rank, "stream": stream, "correlation": corr[0],
                "registers per thread": 32, "grid": [128, 1, 1], "block": [256, 1, 1]}
        args.update(nccl)
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": rank, "tid": stream, "ts": ts, "dur": dur, "args": args})
    def nccl(coll, nel, dtype):
        return {"Collective name": coll, "In msg nelems": nel, "Out msg nelems": nel, "Group size": 2,
                "dtype": dtype, "In split size": "[]", "Out split size": "[]", "Process Group Name": "0",
                "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}
    for i, step in enumerate((5, 6)):
        T = t0 + i * 10000.0
        cpu(cpu_step_cat, f"ProfilerStep#{step}", T, 10000.0, **{"External id": 0})
        cpu("cpu_op", "aten::embedding_bag", T + 5, 300, **{"External id": 2, "Sequence number": 17})
        cpu("user_annotation", "## PooledEmbeddingsAwaitable wait() ##", T + 3400, 500)
        launch_kernel("Memcpy HtoD (Pageable -> Device)", T + 8, T + 50, 50, cat="gpu_memcpy", stream=8)
        launch_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", T + 10, T + 100, ids_dur,
                      **nccl("all_to_allv", 1024, "Long"))
        launch_kernel("void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float>(...)",
                      T + 20, T + 400, fwd)
        launch_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", T + 30, T + 3500, 300,
                      **nccl("all_to_all", 4096, "Float"))
        launch_kernel("ampere_sgemm_128x64_tn", T + 40, T + 4000, 500)
        launch_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", T + 5000, T + 6000, 300,
                      **nccl("all_to_all", 4096, "Float"))
        launch_kernel("void fbgemm_gpu::split_embedding_backward_codegen_rowwise_adagrad_unweighted_"
                      "kernel_warp_per_row_1<float>(...)",
                      T + 5100, T + 7000, bwd)
        launch_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", T + 9000,
                      T + 10100, 400, **nccl("allreduce", 1000000, "Float"))
    # Things the importer skips: a python function (unknown cat), metadata, a flow.
    ev.append({"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1501): _call_impl",
               "pid": pid, "tid": tid, "ts": t0 + 1, "dur": 2})
    ev.append({"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": "python"}})
    ev.append({"ph": "s", "id": 1001, "pid": pid, "tid": tid, "ts": t0 + 10, "cat": "ac2g", "name": "ac2g"})
    dist = {"backend": "nccl", "rank": rank, "world_size": world, "pg_count": 1,
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 2,
                           "ranks": [0, 1]}], "nccl_version": "2.21.5"}
    doc = {"schemaVersion": 1}
    if not dist_last:
        doc["distributedInfo"] = dist
    doc["deviceProperties"] = [{"id": rank, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045559296}]
    doc["record_shapes"] = 0
    doc["traceEvents"] = ev
    if dist_last:
        doc["distributedInfo"] = dist
    doc["traceName"] = f"trace_rank{rank}.json"
    doc["displayTimeUnit"] = "ms"
    doc["baseTimeNanoseconds"] = base
    return doc

r0 = rank_trace(0, 1000000.0, 1000, 1500, 200, 1733000000000000000, "user_annotation", False)
r1 = rank_trace(1, 6000123.5, 3000, 2500, 150, 1733000000000000000, "cpu_op", True)
text0 = json.dumps(r0, indent=1)
text1 = json.dumps(r1)
open("rank0.json", "w").write(text0)
with gzip.open("rank1.json.gz", "wb") as f:
    f.write(text1.encode())
# Malformed and edge cases.
open("truncated.json", "w").write(text0[: len(text0) * 2 // 3])
open("wrong.json", "w").write('{"traceEvents": [ {"ph": "X", "cat": "kernel", ] }')
open("no_events.json", "w").write(json.dumps({"distributedInfo": {"rank": 0, "world_size": 2}, "schemaVersion": 1}))
open("top_array.json", "w").write('[{"ph": "X"}]')
mixed = rank_trace(1, 6000123.5, 3000, 2500, 150, 1733000000000000000, "cpu_op", False, world=4)
open("mixed_world.json", "w").write(json.dumps(mixed))
norank = rank_trace(1, 6000123.5, 3000, 2500, 150, 1733000000000000000, "cpu_op", False)
del norank["distributedInfo"]
open("no_rank.json", "w").write(json.dumps(norank))
gz = gzip.compress(text1.encode())
open("truncated.json.gz", "wb").write(gz[: len(gz) // 2])
open("rules.json", "w").write(json.dumps({"schema": "shardscope.classify/1", "rules": [
    {"pattern": "ampere_sgemm.*", "class": "emb_fwd"}]}, indent=1) + "\n")
open("bad_rules.json", "w").write(json.dumps({"schema": "shardscope.classify/1", "rules": [
    {"pattern": ".*my_emb.*", "class": "emb_fwd"}, {"pattern": "([unclosed", "class": "dense"}]}, indent=1) + "\n")
open("events_object.json", "w").write('{"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": {"ph": "X"}}')
