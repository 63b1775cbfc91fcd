# Shared by scripts/run, scripts/test and scripts/bench. Source it, don't run it.
# shellcheck shell=bash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${SHARDSCOPE_JOBS:-$(nproc 2>/dev/null || echo 2)}

# configure_and_build <preset> [targets...]
# Extra configure arguments come from the array configure_args, if set.
configure_and_build() {
  local preset=$1
  shift
  "$root/scripts/bootstrap"
  # The configure output ends with the feature summary (CUDA, MPI, GUI, ...).
  (cd "$root" && cmake --preset "$preset" ${configure_args[@]+"${configure_args[@]}"} |
    sed -n '/The following features have been enabled/,$p') ||
    { echo "configure failed; rerun: cmake --preset $preset" >&2; return 1; }
  local args=()
  for t in "$@"; do args+=(--target "$t"); done
  (cd "$root" && cmake --build --preset "$preset" -j "$jobs" "${args[@]}")
}
