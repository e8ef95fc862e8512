"""The parent's serial work of a cold `repodoc generate` in one process, for timing and counting
instructions (issues 14/15): the symbol graph's build, and the gathering of every page's inputs.

    REPODOC_CACHE_DIR=WARM python bench/parent_count.py prep WS PKL       # scan WS (its facts cached)
    python bench/parent_count.py graph PKL N | graphonce PKL | load PKL
    REPODOC_CACHE_DIR=WARM python bench/parent_count.py gather WS N | gatheronce WS | gathersetup WS
    REPODOC_CACHE_DIR=WARM python bench/parent_count.py parts WS N | partsonce WS | partsetup WS

`prep` scans WS with jobs=1 from a warm cache and pickles the relations and each Python file's
sketch as the CLI's scan makes them; `graph` times the CLI's graph (`BuiltOnce`) of them N times (median),
`graphonce` builds it once: under `valgrind --tool=cachegrind --cache-sim=no`, `graphonce` minus
`load` is the build. `gather` times gathering every page's inputs (`GATHER`, `view_files`) N times,
each on a graph built afresh, the cycle collector as the CLI's parent has it; `gatheronce` minus
`gathersetup` is the gathering. `parts` times what the parent does per page of a cold run's render
phase (the pages planned without keys, in the order they are sent: every part made, `Parts`, then each
docs page settled, `settle_anchors`, as its result comes back), `partsonce` minus `partsetup` counts it.
Run with PYTHONHASHSEED=0 for repeatable counts; PYTHONPATH=TREE to measure another tree's code.
"""

from __future__ import annotations

import gc
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def scan(root: str) -> tuple[Any, dict[str, Any]]:
    from repodoc_lsp.analysis.model import Language
    from repodoc_lsp.config import Settings
    from repodoc_lsp.knowledge.views import sketch_of
    from repodoc_lsp.store.workspace import Workspace

    ws = Workspace(Path(root), Settings(), incremental=False)
    ws.scan(jobs=1)
    ws.facts.load_all()
    sketches = {rel: (ws.digests[rel], sketch_of(f, ws.parts(f)) if f.language is Language.PYTHON else None)
                for rel, f in ws.facts.items()}
    return ws, sketches


def main() -> None:
    mode, arg = sys.argv[1], sys.argv[2]
    from repodoc_lsp.knowledge.once import BuiltOnce
    from repodoc_lsp.render.parts import definition_parts

    if mode == "prep":
        ws, sketches = scan(arg)
        with open(sys.argv[3], "wb") as f:
            pickle.dump((ws.relations, [(r, s) for r, (_d, s) in sketches.items() if s is not None]), f)
        return
    if mode in ("graph", "graphonce", "load"):
        with open(arg, "rb") as f:
            relations, sketched = pickle.load(f)
        if mode == "load":
            return
        times, cpu = [], []
        gc.disable()  # as `Workspace.graph` builds it
        for _ in range(int(sys.argv[3]) if mode == "graph" else 1):
            started, used = time.perf_counter(), time.process_time()
            graph = BuiltOnce(relations, sketched, parts=definition_parts)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
            del graph
            gc.collect()
        if mode == "graph":
            print(f"graph build: median {statistics.median(times):.3f} s (CPU {statistics.median(cpu):.3f} s), "
                  f"each {[round(t, 3) for t in times]}")
        return
    from repodoc_lsp.pipeline.generate import site_of
    from repodoc_lsp.render.pages import GATHER, view_files

    ws, sketches = scan(arg)
    if mode.startswith("parts"):
        parts(ws, sketches, mode, int(sys.argv[3]) if mode == "parts" else 1)
        return
    pages = [(kind, s) for kind, subjects in (("docs", ws.facts), ("kw", ws.facts), ("index", ws.folders),
                                              ("doc", ws.folders)) for s in sorted(subjects)]
    times, cpu = [], []
    for _ in range(int(sys.argv[3]) if mode == "gather" else 1):
        ws._graph, ws._sketches = None, dict(sketches)
        site = site_of(ws)
        if mode == "gathersetup":
            return
        gc.collect()
        gc.freeze()  # as the CLI's parent holds what it made (`Runtime.holding`, `collect_less`)
        gc.set_threshold(100_000, 50, 100)
        started, used = time.perf_counter(), time.process_time()
        for kind, subject in pages:
            view_files(kind, subject, GATHER[kind](site, subject))
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    if mode == "gather":
        each = [round(t, 3) for t in times]
        print(f"gather {len(pages)} pages: median {statistics.median(times):.3f} s "
              f"(CPU {statistics.median(cpu):.3f} s), each {each}")


def parts(ws: Any, sketches: dict[str, Any], mode: str, n: int) -> None:
    """`Parts` of a cold run's pages made and their docs pages settled, `n` times (each on a graph built afresh)."""
    import tempfile

    from repodoc_lsp.output.writer import Writer
    from repodoc_lsp.pipeline.generate import plan_pages, site_of
    from repodoc_lsp.pipeline.rendering import Parts, ordered
    from repodoc_lsp.pipeline.write import settle_anchors

    times, cpu = [], []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(n):
            ws._graph, ws._sketches = None, dict(sketches)
            site = site_of(ws)
            writer = Writer(Path(out), read_manifest=False)
            todo = plan_pages(ws, site, recorded=writer.manifest)
            site.graph_pending = lambda: True  # type: ignore[method-assign]  # the order of a cold run's
            pages = ordered(todo, site)
            del site.graph_pending
            made, settle = Parts(pages, site, writer), settle_anchors(site, writer)
            if mode == "partsetup":
                return
            gc.collect()
            gc.freeze()
            gc.set_threshold(100_000, 50, 100)
            started, used = time.perf_counter(), time.process_time()
            for i in range(len(made)):
                for page, _inputs, _known in made[i][0]:
                    if page.kind == "docs":
                        settle(page)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
    if mode == "parts":
        print(f"parts of {len(pages)} pages: median {statistics.median(times):.3f} s "
              f"(CPU {statistics.median(cpu):.3f} s), each {[round(t, 3) for t in times]}")


if __name__ == "__main__":
    main()
