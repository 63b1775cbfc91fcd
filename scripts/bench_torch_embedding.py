#!/usr/bin/env python3
"""PyTorch's embedding bag on the inputs of ShardScope's kernel benchmark.

Reads the file `bench_cuda_kernels --dump-inputs PATH` writes (the same
table shape, bags, ids and gradient) and times, with CUDA events (warm-up
runs, then the median of --iters):

  forward     torch.nn.functional.embedding_bag(mode="sum") over a table of
              the same rows, dim and dtype;
  train step  nn.EmbeddingBag(sparse=True) forward, backward with the dumped
              gradient, torch.optim.Adagrad step (the backward + optimizer
              time is the train step minus the forward).

Bytes are counted as the benchmark counts them (rows read + output written).
torch's Adagrad keeps one accumulator per element, the engine's row-wise
AdaGrad one per row: the backward figures compare the whole update, not
like for like. Prints, and writes with --json, one JSON object.

Input file (little-endian): "SSKB" magic (u32 0x424b5353), u32 version 1,
u32 dtype (0 fp32, 1 fp16, 2 bf16), u32 dim, u32 bags, u64 rows, u64 ids,
f32 learning rate, f32 eps, then bags + 1 u32 offsets, ids u32 ids and
bags x dim f32 gradient values.
"""

import argparse
import json
import struct
import sys

try:
    import numpy as np
except ImportError:  # reported as the figures' error below
    np = None

MAGIC = 0x424B5353
DTYPES = {0: "f32", 1: "f16", 2: "bf16"}


def load_inputs(path):
    if np is None:
        raise ImportError("numpy is not installed")
    with open(path, "rb") as f:
        data = f.read()
    magic, version, dtype, dim, bags = struct.unpack_from("<5I", data, 0)
    if magic != MAGIC or version != 1 or dtype not in DTYPES:
        raise ValueError(f"{path}: not a version 1 kernel benchmark input file")
    rows, n = struct.unpack_from("<2Q", data, 20)
    lr, eps = struct.unpack_from("<2f", data, 36)
    at = 44
    offsets = np.frombuffer(data, np.uint32, bags + 1, at)
    at += 4 * (bags + 1)
    ids = np.frombuffer(data, np.uint32, n, at)
    at += 4 * n
    grad = np.frombuffer(data, np.float32, bags * dim, at).reshape(bags, dim)
    if offsets[-1] != n or len(grad) != bags:
        raise ValueError(f"{path}: truncated or inconsistent")
    return {"dtype": DTYPES[dtype], "dim": dim, "bags": bags, "rows": rows, "lookups": n,
            "lr": lr, "eps": eps, "offsets": offsets, "ids": ids, "grad": grad}


def median_ms(torch, fn, warmup, iters):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(warmup + iters):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def run(inp, warmup, iters):
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[inp["dtype"]]
    dev = torch.device("cuda")
    rows, dim, bags, n = inp["rows"], inp["dim"], inp["bags"], inp["lookups"]
    ids = torch.from_numpy(inp["ids"].astype(np.int64)).to(dev)
    offsets = torch.from_numpy(inp["offsets"].astype(np.int64)).to(dev)
    elem = torch.tensor([], dtype=dt).element_size()
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(dev), "rows": rows, "dim": dim,
           "dtype": inp["dtype"], "bags": bags, "lookups": n, "iterations": iters}

    weight = torch.empty(rows, dim, device=dev, dtype=dt).uniform_(-0.05, 0.05)
    fwd_ms = median_ms(torch, lambda: F.embedding_bag(ids, weight, offsets, mode="sum", include_last_offset=True),
                       warmup, iters)
    out["forward_ms"] = fwd_ms
    out["forward_gbps"] = (n * dim * elem + bags * dim * elem) / (fwd_ms * 1e6)
    del weight
    torch.cuda.empty_cache()

    emb = torch.nn.EmbeddingBag(rows, dim, mode="sum", sparse=True, include_last_offset=True, device=dev, dtype=dt)
    with torch.no_grad():
        emb.weight.uniform_(-0.05, 0.05)
    opt = torch.optim.Adagrad(emb.parameters(), lr=inp["lr"], eps=inp["eps"])
    grad = torch.from_numpy(np.ascontiguousarray(inp["grad"])).to(dev).to(dt)

    def train_step():
        pooled = emb(ids, offsets)
        pooled.backward(grad)
        opt.step()
        opt.zero_grad(set_to_none=True)

    try:
        step_ms = median_ms(torch, train_step, warmup, iters)
        out["train_step_ms"] = step_ms
        out["backward_adagrad_ms"] = max(step_ms - fwd_ms, 0.0)
    except RuntimeError as e:  # e.g. sparse Adagrad without a kernel for this dtype
        out["train_step_error"] = str(e)
    out["note"] = "torch's Adagrad is element-wise (dense state); the engine's is row-wise"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", required=True, help="file written by bench_cuda_kernels --dump-inputs")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    status = 0
    try:
        figures = run(load_inputs(args.inputs), args.warmup, max(args.iters, 1))
    except (ImportError, OSError, ValueError, RuntimeError) as e:
        figures = {"error": f"{type(e).__name__}: {e}"}
        status = 1
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
