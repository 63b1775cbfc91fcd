#!/usr/bin/env python3
"""Product code parses JSON text only through core's checked parser
(shardscope/core/json_io.h: parseJsonText, parseOrderedJsonText,
readJsonFile; the file, the JSON path, no key twice, the limits): no call of
nlohmann's own parse, accept or sax_parse in planner/, report/, profiler/ or
app/. core/ (with core/store and core/protocol) holds the checked parser and
may; tests/ and tools may too.

    python3 tests/lint/check_json_parse.py [repo-root]
    python3 tests/lint/check_json_parse.py --self-test   # a planted call must fail
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from typing import List

PRODUCT = ("planner", "report", "profiler", "app")
SUFFIXES = (".cpp", ".h", ".cu", ".cuh")
# json::parse(, ordered_json::parse(, nlohmann::basic_json<...>::accept(, a `using J = ...; J::sax_parse(`
# is not caught by name, but every alias of nlohmann's types in the tree is json or ordered_json.
CALL = re.compile(r"\b(?:json|ordered_json|basic_json\s*<[^>]*>)\s*::\s*(parse|accept|sax_parse)\s*\(")
LINE_COMMENT = re.compile(r"//.*$")


def strip_comments_and_strings(text: str) -> List[str]:
    """The lines of `text` without comments and string literals (line numbers kept)."""
    out: List[str] = []
    in_block = False
    for line in text.splitlines():
        code = ""
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block = False
                    i = end + 2
                continue
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            if line.startswith("//", i):
                break
            if line[i] == '"':
                end = i + 1
                while end < len(line) and line[end] != '"':
                    end += 2 if line[end] == "\\" else 1
                code += '""'
                i = end + 1
                continue
            code += line[i]
            i += 1
        out.append(code)
    return out


def check(root: str) -> List[str]:
    problems: List[str] = []
    for top in PRODUCT:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = strip_comments_and_strings(f.read())
                for number, line in enumerate(lines, 1):
                    m = CALL.search(line)
                    if m:
                        problems.append(f"{rel}:{number}: nlohmann's {m.group(1)} outside core/: parse with "
                                        f"core::parseJsonText (shardscope/core/json_io.h), or read a run's "
                                        f"configuration with readEngineRunConfig")
    return problems


def self_test() -> int:
    """A tree with one planted call of each kind must fail; without them it must pass."""
    planted = {
        "app/cli/planted.cpp": 'auto j = nlohmann::json::parse(text, nullptr, false);\n',
        "profiler/workflow/planted.cpp": "auto o = nlohmann::ordered_json::parse(text);\n",
        "report/planted.h": "bool ok = json::accept(text);\n",
    }
    harmless = {
        "app/cli/fine.cpp": ('// json::parse in a comment\nauto s = "json::parse(";\n'
                             "auto j = core::parseJsonText(t, s);\n"),
        "core/src/fine.cpp": "auto j = nlohmann::json::parse(text);\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**planted, **harmless}.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = check(root)
        files = sorted({p.split(":", 1)[0] for p in found})
        if files != sorted(planted):
            print(f"check-json-parse self-test: expected {sorted(planted)} to fail, got {found}", file=sys.stderr)
            return 1
    print(f"check-json-parse self-test: the {len(planted)} planted calls fail, the harmless ones pass")
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-json-parse: {len(problems)} JSON parse(s) outside core/", file=sys.stderr)
        return 1
    print("check-json-parse: product code outside core/ parses JSON only through core's checked parser")
    return 0


if __name__ == "__main__":
    sys.exit(main())
