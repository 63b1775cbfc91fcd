#!/usr/bin/env bash
# Runs bench_engine_kernels and torch's embedding_bag on the same inputs, back to
# back, and prints our forward GB/s against the gather bound (bar >= 60%) and
# against torch (bar >= 1.0). Builds nothing.
#
#   run_kernels_bench.sh BENCH_BINARY OUT_DIR [extra bench_engine_kernels options...]
#
# torch is installed here only, into a venv under the build dir (the folder with
# CMakeCache.txt above the binary): the CPU wheel index first, PyPI otherwise.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BENCH_BINARY OUT_DIR [bench options...]" >&2
  exit 2
fi
bench=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
[[ -x "$bench" ]] || { echo "run_kernels_bench.sh: $bench is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

build=$(dirname "$bench")
while [[ "$build" != "/" && ! -f "$build/CMakeCache.txt" ]]; do build=$(dirname "$build"); done
[[ -f "$build/CMakeCache.txt" ]] || build=$(dirname "$bench")
venv="$build/venv-torch"
if ! "$venv/bin/python" -c "import torch, numpy" 2>/dev/null; then
  echo "== installing torch (CPU) and numpy into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy
  "$venv/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu \
    || "$venv/bin/pip" install -q torch
fi

mkdir -p "$out/inputs"
threads=$(nproc)
echo "== bench_engine_kernels ($threads threads)"
"$bench" --threads "$threads" --write-inputs "$out/inputs" --json "$out/kernels.json" "$@"
echo "== torch embedding_bag on the same inputs"
"$venv/bin/python" "$here/torch_embedding_bag.py" "$out/inputs" --json "$out/torch.json"
rm -f "$out/inputs/weights.f32"  # the table copy is large; ids and offsets stay

"$venv/bin/python" - "$out/kernels.json" "$out/torch.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
f = k["forward"][0]
ratio_bound = f["gbps"] / f["gather_bound_gbps"]
ratio_torch = f["gbps"] / t["gbps"]
print()
print(f"forward f32 dim {f['dim']} sum, {k['threads']} threads, {k['bags']} bags x {k['pooling']} ids, "
      f"table {f['table_gb']:.2f} GB")
print(f"  ours          {f['gbps']:8.2f} GB/s")
print(f"  gather bound  {f['gather_bound_gbps']:8.2f} GB/s   ours/bound = {100 * ratio_bound:5.1f}%  "
      f"(bar >= 60%: {'met' if ratio_bound >= 0.6 else 'NOT met'})")
print(f"  torch {t['torch']:<8}{t['gbps']:8.2f} GB/s   ours/torch = {ratio_torch:5.2f}   "
      f"(bar >= 1.0: {'met' if ratio_torch >= 1.0 else 'NOT met'})")
print(f"  streaming copy {k['copy_gbps']:.2f} GB/s; backward+adagrad {k['backward']['ms']:.2f} ms "
      f"({k['backward']['mlookups_per_s']:.1f} M lookups/s)")
print("  (one run on a possibly shared machine: numbers are noisy)")
PY
