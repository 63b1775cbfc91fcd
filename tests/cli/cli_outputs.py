#!/usr/bin/env python3
"""The README's command-line examples, output for output.

Runs shardscope-cli on the README's examples (with the repository's small
fixtures in place of the user's files) in a scratch folder and compares what
each prints, its exit code and the files it writes with the recorded outputs
in tests/cli/expected/. Refactors must leave these byte-identical; a change
that means to alter an output re-records them with --update and the diff shows
in review.

Masks, per case: `timestamps` replaces ISO 8601 times (the store's and the
plan's `created`, which say when it ran); `numbers` replaces every number and
folds runs of spaces, for commands whose figures are measured on this machine
(profile, report of a profile), and compares their lines as a sorted set, so
their wording and content are still compared. Reports against a trainer's
plan and calibration from an import need a generated job; test_cli_import
covers them. Written files are
recorded in full when small and as a SHA-256 of their masked text otherwise.

    python3 tests/cli/cli_outputs.py --cli build/ci/app/cli/shardscope-cli [--update] [-k NAME]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
EXPECTED = os.path.join(HERE, "expected")
INLINE_FILE_BYTES = 4096

# name, arguments (run in a scratch folder where data/ is tests/data), files it writes, mask.
# Cases run in order; later ones read what earlier ones wrote.
CASES: List[Dict] = [
    {"name": "plan_dcnv2_h200x512", "args": ["plan", "--model", "dcnv2", "--cluster", "h200x512", "--out", "plan.json"],
     "files": ["plan.json"], "mask": "timestamps"},
    {"name": "scaling_dcnv2_h100_k16",
     "args": ["scaling", "--model", "dcnv2", "--cluster", "h100x4096", "--sync-interval", "16"], "mask": "timestamps"},
    {"name": "plan_grid64_torchrec_greedy",
     "args": ["plan", "--grid", "64", "--layout", "strided", "--algorithm", "torchrec_greedy"], "mask": "timestamps"},
    {"name": "evaluate_torchrec_plan",
     "args": ["evaluate", "--plan", "data/torchrec/from_strided_8x4.json", "--model",
              "data/models/strided_8x4_model.json", "--world-size", "32"], "mask": "timestamps"},
    {"name": "evaluate_needs_a_model", "args": ["evaluate", "--plan", "data/torchrec/from_strided_8x4.json"],
     "mask": "timestamps"},
    {"name": "gen_model", "args": ["gen-model", "--tables", "1000", "--seed", "7", "--out", "big.json"],
     "files": ["big.json"], "mask": "timestamps"},
    {"name": "validate", "args": ["validate", "data/models/strided_8x4_model.json", "data/plans/strided_8x4.json",
                                  "plan.json", "big.json"], "mask": "timestamps"},
    {"name": "summary", "args": ["summary"], "mask": "timestamps"},
    {"name": "presets", "args": ["presets"], "mask": "timestamps"},
    {"name": "profile_emulate",
     "args": ["profile", "--model", "criteo_kaggle", "--cluster", "a100x8", "--grid", "4", "--batch", "64",
              "--steps", "2", "--store", "runs.sqlite"], "mask": "numbers"},
    {"name": "report_profile", "args": ["report", "--store", "runs.sqlite"], "mask": "numbers"},
    {"name": "import_kineto",
     "args": ["import", "kineto", "data/import/rank0.json", "data/import/rank1.json.gz", "--store", "job.sqlite"],
     "mask": "timestamps"},
    {"name": "store_info", "args": ["store", "info", "job.sqlite"], "mask": "timestamps"},
    {"name": "report_import", "args": ["report", "--store", "job.sqlite"], "mask": "timestamps"},
]

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?")
# Elapsed and remaining times of progress lines ("41s", "1m05s", "2h03m"): their units depend on the machine's speed.
DURATION = re.compile(r"\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?[hms]\b")


def masked(text: str, mask: str) -> str:
    text = ISO_TIME.sub("<time>", text)
    if mask == "numbers":
        # Measured figures change the numbers, the column widths and the order of rows sorted by them:
        # what is compared is the set of lines with numbers and runs of spaces folded.
        # Which ranks are stragglers is measured too: the marker and the list go.
        text = re.sub(r"(Stragglers \(.*?\)): .*", r"\1: <ranks>", text.replace("<- straggler", ""))
        # An ETA shows once the steps have run for 2 s: whether it does depends on the machine's speed too.
        text = re.sub(r"\beta (?:-|\S+)", "eta <eta>", text)
        # The CPU a run ran on is the machine's: its model name goes, the threads stay.
        text = re.sub(r"\bCPU \([^,()]*(?:\([^()]*\)[^,()]*)*, ", "CPU (<cpu>, ", text)
        lines = [re.sub(r" +", " ", NUMBER.sub("N", DURATION.sub("<t>", line))).rstrip() for line in text.splitlines()]
        text = "\n".join(sorted(lines)) + ("\n" if lines else "")
    return text


def record(cli: str, case: Dict, cwd: str) -> str:
    proc = subprocess.run([cli, *case["args"]], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"}, timeout=600)
    parts = [f"$ shardscope-cli {' '.join(case['args'])}", f"exit {proc.returncode}",
             "--- stdout", masked(proc.stdout, case["mask"]), "--- stderr", masked(proc.stderr, case["mask"])]
    for name in case.get("files", []):
        path = os.path.join(cwd, name)
        if not os.path.exists(path):
            parts += [f"--- file {name}: not written"]
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            content = masked(f.read(), case["mask"])
        if len(content.encode()) <= INLINE_FILE_BYTES:
            parts += [f"--- file {name}", content]
        else:
            digest = hashlib.sha256(content.encode()).hexdigest()
            parts += [f"--- file {name}: {len(content.encode())} bytes, sha256 {digest}"]
    return "\n".join(parts).rstrip("\n") + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="the shardscope-cli to run")
    ap.add_argument("--update", action="store_true", help="re-record tests/cli/expected/ instead of comparing")
    ap.add_argument("-k", dest="only", help="only the cases whose name contains this (later cases may need earlier)")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    failures = []
    with tempfile.TemporaryDirectory(prefix="shardscope-cli-outputs-") as cwd:
        os.symlink(os.path.join(ROOT, "tests", "data"), os.path.join(cwd, "data"))
        for case in CASES:
            if args.only and args.only not in case["name"]:
                continue
            got = record(cli, case, cwd)
            path = os.path.join(EXPECTED, case["name"] + ".txt")
            if args.update:
                os.makedirs(EXPECTED, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(got)
                print(f"recorded {case['name']}")
                continue
            if not os.path.exists(path):
                failures.append(f"{case['name']}: no recorded output ({path}); run with --update")
                continue
            with open(path, encoding="utf-8") as f:
                want = f.read()
            if got != want:
                diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                    f"expected/{case['name']}.txt", "now", n=2))
                failures.append(f"{case['name']}: output changed\n{diff[:6000]}")
            else:
                print(f"same: {case['name']}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if not args.update:
        print(f"cli outputs: {len(failures)} of {len(CASES)} changed" if failures else "cli outputs: all the same")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
