#!/usr/bin/env python3
"""Every source's #include of a ShardScope header against the libraries its
library links (docs/ARCHITECTURE.md's table, directly or through them), so a
wrong arrow fails CI; and no include reaches into another library's src/.
A header named without a path ("plan_page.h") is its own folder's, or the
folder's of a library it links (app/desktop's pages and app/cli's commands
include their planning halves' headers so).

    python3 tests/lint/check_layers.py [repo-root]
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Set

# library -> the libraries it links (the ARCHITECTURE table's "links" column).
LINKS: Dict[str, Set[str]] = {
    "core": set(),
    "store": {"core"},
    "protocol": {"core"},
    "planner": {"core"},
    "report": {"core", "planner"},
    "trace": {"core", "store"},
    "engine": {"core", "store", "trace", "report"},
    "engine_mpi": {"engine", "planner", "cuda"},  # cuda where built
    "import": {"core", "store", "trace"},
    "analysis": {"core", "store", "trace", "planner", "report"},
    "cupti_records": {"trace"},
    "cuda": {"engine", "trace", "planner", "cupti_records"},
    "nccl_plugin": set(),
    "app_args": {"core"},
    "workflow": {"engine", "import", "analysis", "planner", "cuda"},  # cuda where built
    "agent_core": {"workflow", "protocol"},
    "remote": {"protocol", "store"},
    "agent": {"agent_core", "store", "app_args"},
    "desktop_planning": {"core", "planner", "report"},
    "desktop": {"desktop_planning", "store", "remote", "workflow"},
    "cli_planning": {"app_args", "core", "planner", "report"},
    # The programs: what their mains link.
    "cli": {"cli_planning", "store", "engine", "workflow", "remote"},
    "engine_main": {"app_args", "engine", "engine_mpi", "cuda", "workflow"},
}

# Source folder -> library (the longest prefix wins).
FOLDERS = {
    "core/store": "store",
    "core/protocol": "protocol",
    "core/include/shardscope/core/store": "store",  # must stay empty: store has its own include root
    "core/include/shardscope/core/protocol": "protocol",
    "core": "core",
    "planner": "planner",
    "report": "report",
    "profiler/trace": "trace",
    "profiler/engine_mpi": "engine_mpi",
    "profiler/engine": "engine",
    "profiler/import": "import",
    "profiler/analysis": "analysis",
    "profiler/cuda": "cuda",
    "profiler/nccl_plugin": "nccl_plugin",
    "profiler/workflow": "workflow",
    "profiler/agent": "agent_core",
    "app/args": "app_args",
    "app/remote": "remote",
    "app/agent": "agent",
    "app/desktop/planning": "desktop_planning",
    "app/desktop": "desktop",
    "app/cli/planning": "cli_planning",
    "app/cli": "cli",
    "app/engine": "engine_main",
}

# Header path prefix -> library that publishes it (the longest prefix wins).
HEADERS = {
    "shardscope/core/store/": "store",
    "shardscope/core/protocol/": "protocol",
    "shardscope/core/": "core",
    "shardscope/planner/": "planner",
    "shardscope/report/": "report",
    "shardscope/profiler/trace/": "trace",
    "shardscope/profiler/engine_mpi/": "engine_mpi",
    "shardscope/profiler/engine/": "engine",
    "shardscope/profiler/import/": "import",
    "shardscope/profiler/analysis/": "analysis",
    "shardscope/profiler/cuda/cupti_records.h": "cupti_records",
    "shardscope/profiler/cuda/": "cuda",
    "shardscope/profiler/workflow/": "workflow",
    "shardscope/profiler/agent/": "agent_core",
    "shardscope/app/args.h": "app_args",
}

MPI_INCLUDE = re.compile(r'^\s*#\s*include\s+<mpi\.h>')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SUFFIXES = (".cpp", ".h", ".cu", ".cuh")


def closure(lib: str) -> Set[str]:
    seen: Set[str] = {lib}
    todo = [lib]
    while todo:
        for dep in LINKS[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def longest(table: Dict[str, str], path: str) -> Optional[str]:
    best = None
    for prefix, lib in table.items():
        if path.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return table[best] if best else None


def local_headers(root: str) -> Dict[str, Set[str]]:
    """Header file name -> the libraries whose folders hold one of that name."""
    folders = {k + "/": v for k, v in FOLDERS.items()}
    found: Dict[str, Set[str]] = {}
    for top in ("core", "planner", "report", "profiler", "app"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".h", ".cuh")):
                    rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                    lib = longest(folders, rel)
                    if lib is not None:
                        found.setdefault(name, set()).add(lib)
    return found


def main() -> int:
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems: List[str] = []
    checked = 0
    by_name = local_headers(root)
    for top in ("core", "planner", "report", "profiler", "app"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                owner = longest({k + "/": v for k, v in FOLDERS.items()}, rel)
                if owner is None:
                    problems.append(f"{rel}: in no library of the table")
                    continue
                allowed = closure(owner)
                checked += 1
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if MPI_INCLUDE.match(line) and owner != "engine_mpi":
                            problems.append(f"{rel}:{number}: includes MPI; only profiler/engine_mpi may "
                                            f"(its mpi_session.h starts MPI for a program)")
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if re.search(r"(^|/)\.\./.*src/", inc):
                            problems.append(f"{rel}:{number}: #include \"{inc}\" reaches into another library's src/")
                            continue
                        lib = longest(HEADERS, inc)
                        if lib is not None and lib not in allowed:
                            problems.append(f"{rel}:{number}: #include \"{inc}\": {owner} does not link {lib} "
                                            f"(docs/ARCHITECTURE.md)")
                        elif "/" not in inc and not os.path.exists(os.path.join(dirpath, inc)):
                            libs = by_name.get(inc, set())
                            if libs and not libs & allowed:
                                problems.append(f"{rel}:{number}: #include \"{inc}\": {owner} does not link "
                                                f"{', '.join(sorted(libs))} (docs/ARCHITECTURE.md)")
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} include(s) against the layer table", file=sys.stderr)
        return 1
    print(f"check-layers: {checked} files follow the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
