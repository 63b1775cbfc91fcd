#!/usr/bin/env python3
"""torch.nn.functional.embedding_bag (mode="sum", CPU) on the exact inputs that
bench_engine_kernels --write-inputs DIR wrote: same table values, ids, offsets and
thread count. Prints GB/s of row bytes read (lookups x dim x 4 / time, best of
reps after a warm-up), the same metric as the C++ benchmark, checks that torch's
output matches ours (different summation order allowed: max abs diff), and
writes JSON.

  torch_embedding_bag.py DIR [--json FILE] [--reps N] [--threads T]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--threads", type=int)
    a = ap.parse_args()

    with open(os.path.join(a.dir, "meta.json")) as f:
        meta = json.load(f)
    rows, dim, bags = int(meta["rows"]), int(meta["dim"]), int(meta["bags"])
    threads = a.threads or int(meta["threads"])
    reps = a.reps or int(meta["reps"])
    torch.set_num_threads(threads)

    def raw(name, dtype, count):
        arr = np.fromfile(os.path.join(a.dir, name), dtype=np.dtype(dtype).newbyteorder("<"))
        if arr.size != count:
            sys.exit(f"torch_embedding_bag.py: {name}: expected {count} values, found {arr.size}")
        return arr

    offsets = raw("offsets.u32", np.uint32, bags + 1)
    ids = raw("ids.u32", np.uint32, int(offsets[-1]))
    weights = torch.from_numpy(raw("weights.f32", np.float32, rows * dim).reshape(rows, dim))
    ours = raw("ours_out.f32", np.float32, bags * dim).reshape(bags, dim)

    ids_t = torch.from_numpy(ids.astype(np.int64))
    # embedding_bag takes the bags' start offsets (include_last_offset=False).
    offsets_t = torch.from_numpy(offsets[:-1].astype(np.int64))

    def run():
        return torch.nn.functional.embedding_bag(ids_t, weights, offsets_t, mode="sum")

    with torch.no_grad():
        out = run()  # warm-up
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            out = run()
            times.append(time.perf_counter() - t0)
    times.sort()
    row_bytes = ids.size * dim * 4
    best_gbps = row_bytes / times[0] / 1e9
    median_gbps = row_bytes / times[len(times) // 2] / 1e9
    max_diff = float(np.max(np.abs(out.numpy() - ours))) if bags else 0.0

    print(f"torch {torch.__version__} embedding_bag sum: threads {threads}, rows {rows}, dim {dim}, "
          f"bags {bags}, lookups {ids.size}")
    print(f"torch: {times[0] * 1e3:.3f} ms, {best_gbps:.2f} GB/s (median {median_gbps:.2f}), "
          f"max |torch - ours| = {max_diff:.3g}")
    result = {"schema": "shardscope.bench-torch-embedding-bag/1", "torch": torch.__version__,
              "threads": threads, "rows": rows, "dim": dim, "bags": bags, "lookups": int(ids.size),
              "ms": times[0] * 1e3, "gbps": best_gbps, "median_gbps": median_gbps,
              "max_abs_diff_vs_ours": max_diff}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
