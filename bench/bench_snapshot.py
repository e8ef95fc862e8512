"""What a save costs the next workspace/symbol search on PyTorch: the keyword index's search
snapshot is retaken after a change (tables copied; the blob of names rebuilt when the save added
or removed a name). Reported against the floor of the same search with the snapshot already taken.

    python bench/bench_snapshot.py [--saves 200]

In one process, no server: the index built from PyTorch's facts (from the analysis cache,
filled the first time), then for each of N files: the file set again unchanged (no new name),
a search; the file set with one new name, a search; the same search again (the floor).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
import time

from _common import median, p95
from corpus import ensure_corpus

from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.index import entries_of
from repodoc_lsp.refs.check import build_index
from repodoc_lsp.store.workspace import Workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=200)
    args = parser.parse_args(argv)
    root = ensure_corpus()
    ws = Workspace(root, Settings())
    ws.scan()
    ws.facts.load_all()
    index = build_index(ws)
    index.warm()
    gc.freeze()  # as the server does after indexing: full collections skip what lives on
    same: list[float] = []
    added: list[float] = []
    floor: list[float] = []
    rels = [r for r in ws.facts if r.endswith(".py")][: args.saves]
    for i, rel in enumerate(rels):
        entries = entries_of(rel, ws.facts[rel], ws.relations.module_of.get(rel, ""))
        index.set_file(rel, entries)
        start = time.perf_counter()
        index.search("tensor", 20)
        same.append(time.perf_counter() - start)
        if entries:
            index.set_file(rel, [*entries, dataclasses.replace(entries[0], name=f"new_name_{i}")])
            start = time.perf_counter()
            index.search("tensor", 20)
            added.append(time.perf_counter() - start)
        start = time.perf_counter()
        index.search("tensor", 20)
        floor.append(time.perf_counter() - start)
    print(f"{len(index):,} entries, {len(rels)} saves; search after a save, in ms (median / p95):")
    base = median(floor)
    for label, values in (("no new name", same), ("a new name", added), ("floor: snapshot taken", floor)):
        print(f"  {label:22} {median(values) * 1e3:8.2f} / {p95(values) * 1e3:8.2f}   {median(values) / base:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
