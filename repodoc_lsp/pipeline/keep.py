"""What a complete `repodoc generate` keeps for the next run: its state (`lastrun`) and its symbol graph's
sketches and links (`store/sketches.py`), which a run after an edit builds its graph from.

The sketches of a whole run are written while its pages are (`Sketches`): the file is made from the graph
alone, so the graph's thread writes it beside its place as soon as the graph is built, and the run puts it
in place only once it is kept (a run that fails or is cancelled keeps nothing). Written after the last page,
it was the parent alone on one core at the end of every cold run (bench/README.md, "the saved sketches
written beside the pages").
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repodoc_lsp.analysis.treesitter import blank_macros_variant
from repodoc_lsp.pipeline import lastrun
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.store import kept, sketches
from repodoc_lsp.store.cache import ANALYSIS_VERSION
from repodoc_lsp.store.workspace import Workspace

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph


def sketch_stamp(ws: Workspace) -> str:
    """What a sketch is made by: the analysis (its version and variant) and the page-splitting rule."""
    return f"{ANALYSIS_VERSION}{blank_macros_variant()} {render_stamp()} {ws.parts.__module__}.{ws.parts.__qualname__}"


def many_unsketched(missing: int, files: int) -> bool:
    """More than one file in twenty lacks its sketch or link in the saved file: a run after an edit leaves the
    file as it is below that (rewriting every file's sketch to change one was a tenth of that run), the
    next run reading those files' facts and linking them instead."""
    return missing * 20 > files


class Stopped(Exception):
    """The sketches written aside were dropped before they were all written."""


class Sketches:
    """The sketches file of `ws`'s graph for the next run, written aside (`write`, the graph's thread, once the
    graph is built: the run's `graph_built`) or, when no thread wrote it (no graph built in a thread, or none
    needed by the run), by `keep` itself; whichever claims it first writes it. `drop` stops a write under way
    and removes what it wrote. The graph's thread only reads the built graph, the facts and the relations,
    which the run no longer changes (CONTRIBUTING.md, "Threads: who owns what")."""

    def __init__(self, ws: Workspace, state: Path) -> None:
        self.ws, self.state = ws, state
        self.written: Future[kept.Aside] = Future()
        self._claimed = False
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def _claim(self) -> bool:
        with self._lock:
            first, self._claimed = not self._claimed, True
            return first

    def write(self, _graph: Graph | None = None) -> None:
        """Write the file aside, unless it was claimed before: in the graph's thread once the graph is built
        (a failure is raised where `keep` reads it), or by `keep`."""
        if self._claim():
            try:
                self.written.set_result(self._aside())
            except BaseException as exc:  # raised by `keep`, in the run's thread
                self.written.set_exception(exc)

    def keep(self) -> None:
        """Put the file in place (written here if no thread did: the graph built here if the run did not need
        it, else the next run after an edit loads and links every file)."""
        self.write()
        self.written.result().keep()

    def drop(self) -> None:
        """Stop a write under way and remove what it wrote; none starts after. Nothing to do once kept."""
        self._stop.set()
        if not self._claim() and self.written.exception() is None:
            self.written.result().drop()

    def _aside(self) -> kept.Aside:
        ws = self.ws
        graph = ws.graph()  # built by the graph's thread, or here
        entries = sketches.OfGraph(graph, ws.digests)
        return sketches.write_aside(sketches.sketches_path(self.state), sketch_stamp(ws), self._until_stopped(entries),
                                    sketches.encode_imports_of(ws.facts.imports(), ws.digests),
                                    sketches.encode_relations(ws.relations), sketches.users_of(graph), entries.table())

    def _until_stopped(self, entries: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
        for entry in entries:
            if self._stop.is_set():
                raise Stopped
            yield entry


def whole_sketches(state: Path | None, check: bool, last: lastrun.LastRun | None, held: Workspace,
                   files: tuple[str, ...] | None) -> Sketches | None:
    """The sketches a whole run (`files` None) keeps when it completes, to write while it runs; None when it
    keeps none (a check, no state) or none new (the last run's files, with their contents)."""
    if state is None or check or files is not None or (last is not None and last.files == held.digests):
        return None
    return Sketches(held, state)


def keep_run(state: Path, last: lastrun.LastRun | None, held: Workspace, scanned: Workspace,
             files: tuple[str, ...] | None, touched: int = 0, whole: Sketches | None = None) -> None:
    """Keep what a complete run of the files changed since the last one (`files`; None: every file) knew for
    the next run: its state when it differs from the last one's, its graph's sketches and links when they
    changed and more than one in twenty of the saved ones are stale (`many_unsketched`); `touched`: the day
    the cache's rows of its files were last marked used (`generate._rows_used`); `whole`: the sketches of a
    whole run (`whole_sketches`), written while it ran."""
    if last is not None and last.files == held.digests and last.seen.stats == scanned.stats and last.touched == touched:
        return
    lastrun.save(state, held.digests, scanned.stats, scanned.scan_began, touched)
    if whole is not None:
        whole.keep()
    elif files is not None and many_unsketched(_stale_kept(held, files), len(held.digests)):
        Sketches(held, state).keep()


def _stale_kept(held: Workspace, changed: Iterable[str]) -> int:
    """The files of `held` whose sketch and link the saved file holds no more after a run of `changed`: those
    its graph did not take from there, and those whose link consulted a changed file."""
    graph = held.graph_ready
    return len(held.digests) - len(held.kept_taken - (graph.consulting(changed) if graph is not None else set()))

