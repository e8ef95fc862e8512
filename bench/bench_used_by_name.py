"""The cost of "Used by" by name for the tree-sitter languages, on torch 2.13.0's `torch/include`
headers (`bench/languages_corpus.py` fetches them):

- analysis speed (bytes per CPU second, this process, parsing included) with the used names recorded
  (`FileFacts.refs`) against a floor measured in the same run: the same analysis with them not
  recorded; medians of `--runs` alternating passes over every `--step`th header;
- the name table (`NameUsers`) built from every header's facts: its memory (tracemalloc, the facts
  made beforehand), its names and (name, file) pairs, and the bytes of the `refs` texts it keeps.

    python bench/bench_used_by_name.py [--root ~/.cache/repodoc-bench/langs] [--runs 3] [--step 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from repodoc_lsp.analysis.treesitter import analyse_tree_sitter, core
from repodoc_lsp.analysis.treesitter.byname import NameUsers


def _pass(files: list[tuple[str, str]]) -> float:
    started = time.process_time()
    for name, text in files:
        analyse_tree_sitter(name, text)
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path.home() / ".cache/repodoc-bench/langs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--step", type=int, default=4)
    args = parser.parse_args()
    include = args.root / "torch-include/torch/include"
    paths = sorted(p for p in include.rglob("*") if p.is_file() and p.suffix in (".h", ".hpp", ".cuh"))
    if not paths:
        print(f"no headers under {include}", file=sys.stderr)
        return 1
    every = [(p.relative_to(include).as_posix(), p.read_text("utf-8", "replace")) for p in paths]
    sample = every[::args.step]
    size = sum(len(t.encode()) for _n, t in sample)
    recorded = core.used_names
    with_refs, floor = [], []
    for _ in range(args.runs):
        with_refs.append(_pass(sample))
        core.used_names = lambda *a: ""  # type: ignore[assignment]  # the floor: nothing recorded
        floor.append(_pass(sample))
        core.used_names = recorded
    mb = size / 1e6
    print(f"sample: {len(sample):,} headers, {mb:.1f} MB; runs {args.runs}")
    print(f"with used names: {mb / statistics.median(with_refs):.2f} MB/s per CPU s "
          f"(median {statistics.median(with_refs):.1f} s); floor {mb / statistics.median(floor):.2f} MB/s; "
          f"ratio {statistics.median(with_refs) / statistics.median(floor):.2f}")
    facts = [(name, analyse_tree_sitter(name, text)) for name, text in every]
    started = time.perf_counter()
    NameUsers(facts)
    untraced = time.perf_counter() - started
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    table = NameUsers(facts)
    took = time.perf_counter() - started
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    pairs = sum(len(table.users(n)) for n in table._definers)
    refs = sum(len(f.refs) for _n, f in facts)
    print(f"table of {len(every):,} headers ({sum(len(t.encode()) for _n, t in every) / 1e6:.1f} MB): "
          f"{held / 1e6:.1f} MB (tracemalloc), built in {untraced:.2f} s ({took:.2f} s traced); "
          f"{len(table._definers):,} names defined, {pairs:,} (name, file) pairs; refs texts {refs / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
