"""The analysis of every PyTorch file in one process: its CPU time and the share of `xref.references`.

    nice -n 10 python bench/bench_xref.py [--with OTHER.py] [--stride N]
    python bench/bench_xref.py --compare OTHER.py [--stride N]

Each file is analysed as an analysis worker of `repodoc generate` does it (`analyse_chunk`: read,
decode, parse, facts, cache row; cycle collector as the CLI sets it). Prints one JSON line: CPU
seconds of the whole pass and of the `references` calls in it. `--with` runs the `references` of
OTHER.py instead (a copy of an earlier `repodoc_lsp/analysis/xref.py`): interleave runs with and
without it. `--compare` analyses each file with both and stops at the first whose facts (cache
row) or whose names read (with the file's heads, and with any name) differ.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import ensure_corpus

import repodoc_lsp.analysis.python as python_analysis
from repodoc_lsp.analysis import xref
from repodoc_lsp.pipeline.runtime import collect_less
from repodoc_lsp.store.facts import analyse_chunk


def _load(path: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location("xref_other", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.references


def _timed(references: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    def timed(tree: ast.AST, heads: set[str] | None) -> Any:
        started = time.process_time()
        try:
            return references(tree, heads)
        finally:
            spent[0] += time.process_time() - started
    return timed


def _time(root: str, rels: list[str], references: Callable[..., Any]) -> dict[str, float]:
    spent = [0.0]
    python_analysis.references = _timed(references, spent)
    started = time.process_time()
    analyse_chunk(root, rels)
    return {"analysis_cpu": round(time.process_time() - started, 3), "references_cpu": round(spent[0], 3)}


def _compare(root: str, rels: list[str], other: Callable[..., Any]) -> int:
    for rel in rels:
        python_analysis.references = xref.references
        mine = analyse_chunk(root, [rel])[0]
        python_analysis.references = other
        theirs = analyse_chunk(root, [rel])[0]
        if mine != theirs or mine.row != theirs.row:  # facts or skip reason, and the JSON of the facts
            print(f"facts differ: {rel}")
            return 1
        try:
            tree = ast.parse(Path(root, rel).read_bytes())
        except (SyntaxError, ValueError):
            continue
        heads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}  # every name of the file; half of them below
        for wanted in (None, set(sorted(heads)[::2])):
            if xref.references(tree, wanted) != other(tree, wanted):
                print(f"references differ: {rel}")
                return 1
    print(f"same facts and references for {len(rels)} files")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--with", dest="other", help="a file whose `references` replaces xref's")
    parser.add_argument("--compare", help="a file whose `references` to compare with xref's")
    parser.add_argument("--stride", type=int, default=1, help="every N-th file only")
    args = parser.parse_args()
    collect_less()  # as the CLI, whose analysis workers inherit it
    warnings.simplefilter("ignore")
    root = str(ensure_corpus())
    rels = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if f.endswith(".py"))[:: args.stride]
    if args.compare:
        return _compare(root, rels, _load(args.compare))
    analyse_chunk(root, rels[1:4])  # imports, regexes, cattrs' generated code: once per worker
    references = _load(args.other) if args.other else xref.references
    print(json.dumps({"files": len(rels), "with": args.other or "xref", **_time(root, rels, references)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
