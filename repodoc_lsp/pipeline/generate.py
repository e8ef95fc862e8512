"""The page pipeline, one for the CLI and the language server, whichever process runs it:
a `Job` (the whole tree, or files changed on disk) -> workspace facts -> `Site` -> page plan
(each page keyed by what its view reads) -> render what changed -> write (`run`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import marshal
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from repodoc_lsp import MARKER, __version__
from repodoc_lsp.knowledge.graph import Graph
from repodoc_lsp.output.writer import CLI_FORCE, LockWaitCancelled, Outcome, OutputError, Record, Writer, WriteResult
from repodoc_lsp.pipeline import lastrun
from repodoc_lsp.pipeline.pool import WorkersLost, run_chunks, stop_fork_server
from repodoc_lsp.pipeline.runtime import Runtime, default_jobs
from repodoc_lsp.render import Renderer, Site
from repodoc_lsp.render.anchors import AnchorState
from repodoc_lsp.render.environment import TemplateFailure
from repodoc_lsp.render.pages import GATHER, Page, Where, anchor_state, view_files, where_of
from repodoc_lsp.render.parts import is_part, page_of_part, part_paths
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.store.discover import Skipped
from repodoc_lsp.store.workspace import CancelToken, Change, ProgressFn, Workspace, WorkspaceState, read_text

T = TypeVar("T")

__all__ = ["RUN_ERRORS", "Job", "OutputError", "Page", "Plan", "Summary", "generate", "plan_pages", "regenerate",
           "run"]


@dataclass
class Summary:
    root: str
    out: str
    files: int = 0
    analysed: int = 0
    cached: int = 0
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    conflicts: list[WriteResult] = field(default_factory=list)
    errors: list[WriteResult] = field(default_factory=list)
    stale: list[WriteResult] = field(default_factory=list)
    set_aside: list[WriteResult] = field(default_factory=list)  # --force: edited pages copied aside
    seconds: float = 0.0
    cancelled: bool = False

    def as_dict(self) -> dict:
        return {
            "root": self.root, "out": self.out, "files": self.files, "analysed": self.analysed,
            "cached": self.cached, "written": len(self.written), "writtenPages": self.written,
            "unchanged": self.unchanged, "removed": len(self.removed), "removedPages": self.removed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "conflicts": [{"path": c.page, "reason": c.reason} for c in self.conflicts],
            "errors": [{"path": e.page, "reason": e.reason} for e in self.errors],
            "stale": [{"path": s.page, "reason": s.reason} for s in self.stale],
            "setAside": [{"path": s.page, "reason": s.reason} for s in self.set_aside],
            "seconds": round(self.seconds, 3), "cancelled": self.cancelled,
        }


def _h(*parts: object) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _templates_stamp(folder: str) -> str:
    if not folder:
        return ""
    try:
        return _h(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(folder)))
    except OSError:
        return "missing"


# page -> ((path, Markdown) of it and of its part pages, the page first; its key)
RenderFn = Callable[[Page], tuple[list[tuple[str, str]], str]]


def inputs_stamp(ws: Workspace) -> str:
    """A digest of everything the whole tree is made of: each file's content, the settings,
    the project, the paths, the templates and this version. When it equals the one a complete
    run recorded in the manifest, every planned page would have the key it has there."""
    return _h(_run_stamp(ws), repr(ws.settings), sorted(ws.digests.items()))


def _run_stamp(ws: Workspace) -> str:
    """What every page of a run is made with besides its view: this version, the renderer, the
    project, the embedding limit, the paths and the person's templates."""
    return _h(__version__, render_stamp(), ws.project, ws.settings.embed_source_max_bytes, ws.root.as_posix(),
              ws.out.as_posix(), _templates_stamp(ws.settings.templates))


def site_of(ws: Workspace, anchors: Mapping[str, AnchorState] | None = None, *, later: bool = False) -> Site:
    """The workspace as pages see it (the view layer's `Site`), with its symbol graph (built
    here if it is not yet; `later`: in a thread, while the pages that read none of it render) and
    the anchors the manifest recorded of its file pages."""
    relations = ws.relations  # made here, before a build in a thread would make it too (it reads them)
    graph: Graph | Future[Graph]
    if later:
        ws.facts.load_all()  # here, not in the build's thread, while this one plans from the facts
        graph = _in_thread(ws.graph, "repodoc-graph")
    else:
        graph = ws.graph()
    site = Site.build(project=ws.project, root=ws.root.as_posix(), out=ws.out.as_posix(),
                      embed_max=ws.settings.embed_source_max_bytes, relations=relations,
                      facts=ws.facts, sizes=ws.sizes, folders=ws.folders, digests=ws.digests,
                      graph=graph)
    site.anchors = dict(anchors or {})  # as the run found them: pages settled meanwhile change the writer's
    site.llms_full_max = ws.settings.llms_full_max_bytes
    return site


def _in_thread(fn: Callable[[], T], name: str) -> Future[T]:
    """`fn()` run in a new thread: its result (or its failure) when the future is read."""
    future: Future[T] = Future()

    def work() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # raised where the result is read
            future.set_exception(exc)
    threading.Thread(target=work, name=name, daemon=True).start()
    return future


def settle_anchors(site: Site, writer: Writer) -> Callable[[Page], None]:
    """`page -> None`, called for each page that is on disk as planned: a file page's anchors
    as it holds them now go to the manifest (the history of its rename aliases)."""
    def settle(page: Page) -> None:
        if page.kind != "docs" or writer.check:
            return
        state = anchor_state(site, page.subject)
        if state is None:
            writer.anchors.pop(page.path, None)
        else:
            writer.anchors[page.path] = state
    return settle


def page_renderer(ws: Workspace, renderer: Renderer, site: Site) -> RenderFn:
    """`page -> ((path, Markdown) of it and its part pages, its key)` (a docs page embeds the source
    as it is on disk): the plan's key, or for a page planned without one, the key of the inputs
    gathered to render it (its part pages are made from the same inputs: the key is theirs too)."""
    base = _run_stamp(ws)

    def render(page: Page) -> tuple[list[tuple[str, str]], str]:
        text = ws.read_text(page.subject) if page.kind == "docs" else None
        inputs = GATHER[page.kind](site, page.subject)
        pages = renderer.render_pages(where_of(site), page.kind, page.subject, inputs, site.facts, text)
        return pages, _keyed(page, base, inputs).key
    return render


def _keyed(page: Page, base: str, inputs: object) -> Page:
    """`page` with its key: the one it was planned with, else the digest of the run's stamp
    (`base`) and the inputs its view reads (the plan, the render in this process and the parts
    sent to render workers key a page by this one rule)."""
    return page if page.key else Page(page.kind, page.subject, _inputs_key(base, page.kind, page.subject, inputs))


def _inputs_key(*parts: object) -> str:
    """A digest of plain data (str, int, None, tuples, lists and dicts of them: a page's inputs) as
    `marshal` writes it in version 2, which refers back to nothing: the same bytes for equal data,
    whatever of it is shared or interned (the parent's gathered inputs, a worker's unpickled ones).
    Anything else is a ValueError. A third of the time `repr` takes (3.4% of a render worker's)."""
    return hashlib.blake2b(marshal.dumps(parts, 2), digest_size=16).hexdigest()  # type: ignore[arg-type]


def plan_pages(ws: Workspace, site: Site, change: Change | None = None, *,
               recorded: Container[str] | None = None) -> list[Page]:
    """The pages of the whole tree, or of those `change` may alter (all of them when files
    appeared or vanished), each keyed by a digest of everything its view reads. With
    `recorded` (the pages the manifest knows), a page not among them is planned without its key:
    it is rendered whatever its key, and the render gathers its inputs and keys it (a cold run's
    pages are gathered once, by the render workers, not also beforehand by this process alone)."""
    base = _run_stamp(ws)
    if change is None or change.structural:
        files, folders = set(ws.facts), set(ws.folders)
    else:
        touched = change.files | change.related | change.xref
        if site.graph is not None:  # pages listing members inherited from a changed class
            touched |= site.graph.heirs(change.files | change.xref)
        files = set(touched) & set(ws.facts)
        folders = {folder_of(r) for r in touched} & ws.folders
        folders |= {folder_of(f) for f in folders if f}  # a parent's index.md says what its sub-folders are for
    pages: list[Page] = []
    for kind, subjects in (("docs", files), ("kw", files), ("index", folders), ("doc", folders)):
        gather = GATHER[kind]
        # The gathered inputs are hashed, not kept: kept for every page, they would live in the
        # parent for the whole run; a page's inputs are gathered again when it is rendered (in
        # this process, or when its part is sent to a render worker: cheap since the graph
        # groups class members once).
        for subject in sorted(subjects):
            page = Page(kind, subject, "")
            if recorded is None or page.path in recorded:
                page = _keyed(page, base, gather(site, subject))
            pages.append(page)
    # llms.txt (and llms-full.txt) at the root: planned with every run, kept if their inputs are the same
    for kind in ("llms", "llms-full") if ws.settings.llms_full_max_bytes > 0 else ("llms",):
        page = Page(kind, "", "")
        pages.append(page if recorded is not None and page.path not in recorded
                     else _keyed(page, base, GATHER[kind](site, "")))
    return pages


@dataclass(frozen=True, slots=True)
class Job:
    """What a run writes, as data (the server sends it as it is to the process that writes)."""

    files: tuple[str, ...] | None = None  # None: the whole tree; else files changed on disk
    check: bool = False  # compare with the tree on disk, write nothing
    force: bool = False  # overwrite pages a person edited, after copying each aside
    force_hint: str = CLI_FORCE  # how the person asks for that, named in a conflict's reason
    jobs: int | None = None  # render workers for the whole tree (None: the `jobs` setting)
    # `files` changed since the last complete run of the whole tree, whose workspace `ws` holds (the
    # CLI's `since_last_run`): when the manifest vouches for that tree, only their pages are planned
    # and the run leaves a complete tree again
    since: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    """The pages a run renders, each keyed by what its view reads, and what it deletes."""

    pages: list[Page]
    whole: bool  # the whole tree: generated pages not planned go (even unknown to the manifest)
    structural: bool  # files appeared or vanished: pages of the manifest not planned go


# The failures of a run as a whole (not of one page), raised the same wherever it runs.
RUN_ERRORS = (OutputError, WorkersLost, TemplateFailure)

# Pages to render before worker processes pay off.
PARALLEL_PAGES = 400
_CHUNK = 40  # pages of a part (but the last) at least: whole folders, each with its own pages (`_cuts`)
_MOST = 4 * _CHUNK  # a folder of more pages is cut into parts of this many


def _start_render_workers_early(ws: Workspace, writer: Writer, jobs: int) -> bool:
    """Start the render workers' fork server now, before the symbol graph is built, when the
    pages the manifest does not know (rendered whatever their key) are enough for render workers
    (`_rendered`): its start (an interpreter importing the renderer) overlaps the build instead of
    following it while both cores idle. True when started (the caller stops it)."""
    unknown = 2 * (len(ws.facts) + len(ws.folders)) - len(writer.manifest)  # docs + kw, index + doc
    if jobs > 1 and unknown >= PARALLEL_PAGES and ws.runtime.forks():
        ws.runtime.render_context(built_in=not ws.settings.templates)
        return True
    return False


def render_and_write(page: Page, render: RenderFn, writer: Writer) -> list[WriteResult]:
    """One page and its part pages (the page's result first): a page that cannot be rendered is an
    error of that page (the old one and its parts stay)."""
    try:
        pages, key = render(page)
    except Exception as exc:  # any failure of one view (a template, a docstring) stays with it
        return [WriteResult(page.path, Outcome.ERROR, f"cannot render: {type(exc).__name__}: {exc}")]
    if not all(content.startswith(MARKER) for _path, content in pages):
        return [WriteResult(page.path, Outcome.ERROR, "cannot render: the page does not start with the marker line")]
    return [writer.write(path, content, key) for path, content in pages]


def _parts_unchanged(writer: Writer, page: Page) -> bool:
    """The part pages the manifest records for `page` are on disk as written with its key."""
    return all(writer.unchanged(part, page.key) for part in part_paths(page.path, writer.manifest))


# -- render workers ---------------------------------------------------------------------------
# They come from a fork server (`Runtime.render_context`), not from this process: forked from it
# after the analysis they inherited every file's facts and the graph (the CLI's tree on 17,150
# files: 3.4 GB RSS summed). Each is given what its pages' views read (`Part`), nothing else.

@dataclass(frozen=True, slots=True)
class RenderSetup:
    """What every render worker of a run starts with."""

    where: Where
    templates: str | None
    root: str
    out: str
    check: bool
    force: bool
    force_hint: str
    setup: Callable[[], None]  # the runtime's worker setup
    base: str = ""  # the run's stamp: a page sent without its key is keyed by the worker (`_keyed`)


# A part of the pages: each with its view's inputs and what the writer knows of it, and the
# facts of the files their views read, each pickled apart (`_Parts`).
Part = tuple[list[tuple[Page, dict, list[tuple[str, tuple[Record | None, frozenset[str]]]]]], dict[str, bytes]]
# file -> its facts pickled as an analysis worker sent them (None: not kept); `last`: not asked again
PackedFn = Callable[..., bytes | None]

_WORKER: tuple[RenderSetup, Renderer, Writer] | None = None


def _start_worker(setup: RenderSetup) -> None:
    global _WORKER
    # Ctrl-C in a terminal reaches the whole process group: the run that started this worker
    # stops it (as a forked worker, it inherited that run's handler).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    setup.setup()
    writer = Writer(Path(setup.out), check=setup.check, force=setup.force, force_hint=setup.force_hint,
                    read_manifest=False)
    _WORKER = (setup, Renderer.shared(setup.templates), writer)


def _render_part(part: Part) -> list[tuple[WriteResult, Record | None]]:
    assert _WORKER is not None
    setup, renderer, writer = _WORKER
    pages, packed = part
    facts = {rel: pickle.loads(data) for rel, data in packed.items()}
    root = Path(setup.root)
    out: list[tuple[WriteResult, Record | None]] = []
    for page, inputs, known in pages:
        def render(page: Page, inputs: dict = inputs) -> tuple[list[tuple[str, str]], str]:
            # the source of a file its page does not show (too big to embed) is not read
            text = read_text(root, page.subject) if page.kind == "docs" and \
                renderer.reads_source(setup.where, inputs) else None
            # a page planned without its key is keyed here, by the inputs it was sent (their repr is
            # the one the parent would have hashed: plain data), not by the parent that gathered them
            key = _keyed(page, setup.base, inputs).key
            return renderer.render_pages(setup.where, page.kind, page.subject, inputs, facts, text), key
        for path, what in known:  # the page and its part pages as the parent's writer knows them
            writer.learn(path, what)
        results = render_and_write(page, render, writer)
        out.extend((result, writer.manifest.get(result.page)) for result in results)
        for path in {path for path, _what in known} | {result.page for result in results}:
            writer.forget(path)
    return out


class _Parts(Sequence[Part]):
    """The parts of `pages`, each made when it is sent (the inputs of one part at a time live here);
    a page planned without its key goes without it: the render worker keys it by the inputs it is sent
    (`RenderSetup.base`: the run's stamp), so the parent does not hash what it gathered.
    A file's facts go as the bytes an analysis worker pickled them to (`packed`) when the workspace
    kept them, kept until the last part that reads them is made; else pickled here."""

    def __init__(self, pages: list[Page], site: Site, writer: Writer, packed: PackedFn | None = None) -> None:
        self.pages, self.site, self.writer, self.packed = pages, site, writer, packed
        self.cuts = _cuts(pages)
        # the last part whose views read each file (a folder's pages read its files' facts: `view_files`);
        # only what is held meanwhile depends on it (facts asked again are pickled here)
        self.last: dict[str, int] = {}
        if packed is not None:
            for i, (start, end) in enumerate(self.cuts):
                for page in pages[start:end]:
                    files = [page.subject] if page.kind in ("docs", "kw") else site.child_files.get(page.subject, [])
                    for rel in files:
                        self.last[rel] = i

    def __len__(self) -> int:
        return len(self.cuts)

    def __getitem__(self, i: int) -> Part:  # type: ignore[override]
        items, facts = [], {}
        start, end = self.cuts[i]
        for page in self.pages[start:end]:
            inputs = GATHER[page.kind](self.site, page.subject)
            for rel in view_files(page.kind, page.subject, inputs):
                if rel not in facts:
                    facts[rel] = self._packed(rel, i)
            paths = (page.path, *part_paths(page.path, self.writer.manifest))
            known = [(path, self.writer.known(path)) for path in paths]
            items.append((page, inputs, known))
        return items, facts

    def _packed(self, rel: str, i: int) -> bytes:
        data = None if self.packed is None else self.packed(rel, last=self.last.get(rel, i) <= i)
        return pickle.dumps(self.site.facts[rel], pickle.HIGHEST_PROTOCOL) if data is None else data


def _cuts(pages: list[Page]) -> list[tuple[int, int]]:
    """`pages` (in `_by_folder`'s order) cut into parts: (start, end) of each. A part ends where a
    folder's pages end (its files' and its own, which read its files' facts: each file's facts go
    to one part, unpickled once) once it holds `_CHUNK` pages, or at `_MOST` pages (a large folder).
    Parts of `_CHUNK` pages each sent the facts of a folder's files again with the folder's own
    pages, a third of all facts for PyTorch's tree."""
    cuts: list[tuple[int, int]] = []
    start = 0
    for i, page in enumerate(pages):
        size = i + 1 - start
        last = i + 1 == len(pages)
        if last or size >= _MOST or (size >= _CHUNK and _by_folder(pages[i + 1])[0] != _by_folder(page)[0]):
            cuts.append((start, i + 1))
            start = i + 1
    return cuts


# While the symbol graph is being built (`site_of(later=True)`), this share of the files' keyword
# pages (their views read none of it) render first: the graph's build, one core, beside them.
_LEAD_SHARE = 3


def _ordered(todo: list[Page], site: Site) -> list[Page]:
    """`todo` in the order parts are cut and sent: `_by_folder`'s, after the first folders' keyword
    pages (a `_LEAD_SHARE`th of the files) while the graph is still being built."""
    pages = sorted(todo, key=_by_folder)
    if not site.graph_pending():
        return pages
    lead = set(itertools.islice((i for i, page in enumerate(pages) if page.kind == "kw"),
                                len(site.facts) // _LEAD_SHARE))
    return [pages[i] for i in sorted(lead)] + [page for i, page in enumerate(pages) if i not in lead]


def _by_folder(page: Page) -> tuple[str, int, str, int]:
    """A folder's file pages (both of a file side by side), then its own: a part's files are few.
    Its first item is the folder whose pages `page` is among (`_cuts`)."""
    if page.kind in ("index", "doc"):
        return page.subject, 1, "", _KIND_ORDER[page.kind]
    return folder_of(page.subject), 0, page.subject, _KIND_ORDER.get(page.kind, 4)


_KIND_ORDER = {"docs": 0, "kw": 1, "index": 2, "doc": 3}


def _rendered(todo: list[Page], render: RenderFn, writer: Writer, jobs: int, cancel: CancelToken | None,
              pause: Callable[[], None] | None, runtime: Runtime,
              site: Site | None = None, templates: str | None = None,
              base: str = "", packed: PackedFn | None = None,
              stop: Callable[[], None] = stop_fork_server) -> Iterator[tuple[WriteResult, Record | None]]:
    """Render and write `todo`: render workers for many pages when this process may start them
    (the CLI, the server's page process), else in this process, calling `pause` before each page;
    `stop()` ends the render workers' fork server once they are done."""
    if jobs > 1 and len(todo) >= PARALLEL_PAGES and runtime.forks() and site is not None:
        setup = RenderSetup(where_of(site), templates, site.root, str(writer.out), writer.check, writer.force,
                            writer.force_hint, runtime.worker_setup(), base)
        try:
            yield from itertools.chain.from_iterable(run_chunks(
                _render_part, _Parts(_ordered(todo, site), site, writer, packed), workers=jobs,
                context=runtime.render_context(built_in=templates is None),
                initializer=functools.partial(_start_worker, setup), cancel=cancel,
                what="writing pages"))
        finally:
            stop()
        return
    for page in todo:
        if pause is not None:
            pause()
        if cancel is not None and cancel.is_set():
            return
        for result in render_and_write(page, render, writer):
            yield result, None


def _write(plan: Plan, render: RenderFn, writer: Writer, summary: Summary, *, jobs: int, runtime: Runtime,
           progress: ProgressFn | None, cancel: CancelToken | None, pause: Callable[[], None] | None,
           prepare: Callable[[], None], settle: Callable[[Page], None] | None = None,
           site: Site | None = None, templates: str | None = None, base: str = "",
           packed: PackedFn | None = None, stop: Callable[[], None] = stop_fork_server) -> None:
    """Render and write the planned pages whose key changed, then delete what the plan says
    is gone; the writer holds the output folder. `settle(page)` is called for each page left
    or written as planned. Render workers are given the pages' views from `site` and make
    their pages with `templates`, and the facts kept pickled by `packed`."""
    total = len(plan.pages)
    todo = []
    for page in plan.pages:
        if not writer.check and writer.unchanged(page.path, page.key) and _parts_unchanged(writer, page):
            summary.unchanged += 1
            if settle is not None and page.path not in writer.anchors:
                settle(page)
        else:
            todo.append(page)
    planned = {page.path: page for page in todo}
    # part pages the manifest records of the pages to render: those not made again are deleted
    parts_before = {page.path: part_paths(page.path, writer.manifest) for page in todo if page.kind == "docs"}
    parts_now: dict[str, set[str]] = {}
    if plan.whole:  # also clear what a killed run left
        writer.sweep_temporaries()
    elif plan.structural:  # pages of files and folders that vanished (and their part pages)
        removed, conflicts = writer.remove(set(writer.manifest) - _with_parts(plan.pages, writer))
        summary.removed.extend(removed)
        summary.conflicts.extend(conflicts)
    if todo and plan.whole:
        prepare()  # load every file's facts (pending in the cache) at once
    done = summary.unchanged
    for result, record in _rendered(todo, render, writer, jobs, cancel, pause, runtime, site, templates, base,
                                     packed, stop):
        done += 1
        if record is not None:
            writer.manifest[result.page] = record
        if result.page not in planned:  # a part page of the page before it
            parts_now.setdefault(page_of_part(result.page), set()).add(result.page)
            done -= 1  # counted with its page
        elif settle is not None and result.outcome in (Outcome.WRITTEN, Outcome.UNCHANGED):
            settle(planned[result.page])
        if result.page in planned and result.outcome in (Outcome.WRITTEN, Outcome.UNCHANGED, Outcome.STALE):
            parts_now.setdefault(result.page, set())
        if result.outcome is Outcome.WRITTEN:
            summary.written.append(result.page)
            if result.reason:
                summary.set_aside.append(result)
        elif result.outcome is Outcome.UNCHANGED:
            summary.unchanged += 1
        elif result.outcome is Outcome.STALE:
            summary.stale.append(result)
        elif result.outcome is Outcome.ERROR:
            summary.errors.append(result)
        else:
            summary.conflicts.append(result)
        if progress and (done % 25 == 0 or done == total):
            progress("write", done, total, folder_of(result.page))
    stale_parts = {part for page, made in parts_now.items() for part in parts_before.get(page, ()) if part not in made}
    if stale_parts:  # part pages their page no longer has
        removed, conflicts = writer.remove(stale_parts)
        if writer.check:
            summary.stale.extend(WriteResult(p, Outcome.STALE, "would be removed") for p in removed)
        else:
            summary.removed.extend(removed)
        summary.conflicts.extend(conflicts)
    if cancel is not None and cancel.is_set():
        summary.cancelled = True
    if plan.whole and not summary.cancelled:  # pages of vanished sources, known or only marked
        removed, conflicts = writer.remove_stale(_with_parts(plan.pages, writer))
        if writer.check:
            summary.stale.extend(WriteResult(p, Outcome.STALE, "would be removed") for p in removed)
        else:
            summary.removed.extend(removed)
        summary.conflicts.extend(conflicts)
    # the caller saves the manifest once, with the inputs stamp of a complete run


def _not_planned(plan: Plan, writer: Writer) -> int:
    """The pages of the manifest (part pages aside) that `plan` leaves out."""
    planned = {page.path for page in plan.pages}
    return sum(1 for path in writer.manifest if path not in planned and not is_part(path))


def _with_parts(pages: Iterable[Page], writer: Writer) -> set[str]:
    """The paths of `pages` and of the part pages the manifest records for them."""
    found = set()
    for page in pages:
        found.add(page.path)
        if page.kind == "docs":
            found.update(part_paths(page.path, writer.manifest))
    return found


def run(ws: Workspace, job: Job, renderer: Renderer, *, progress: ProgressFn | None = None,
        cancel: CancelToken | None = None, pause: Callable[[], None] | None = None) -> Summary:
    """The page pipeline, the same in every process that runs it (the CLI, the server's page
    process, the server itself when that process cannot run): files of `job` updated in `ws`
    -> plan -> render -> write.

    The contract: `progress(phase, done, total, where)` as pages are done; `cancel.is_set()`
    looked at while waiting for the output folder and between pages (a cancelled run writes
    whole pages only, deletes nothing and says `cancelled`); `pause()` between files and
    pages (the server lets its requests go first). A page that cannot be rendered or written
    is an error of that page, in `Summary.errors`; the run's own failures raise `RUN_ERRORS`.
    """
    started = time.perf_counter()
    summary = Summary(root=str(ws.root), out=str(ws.out))
    before = inputs_stamp(ws) if job.since else ""  # the stamp the last run's tree must carry
    change = None if job.files is None else ws.update_files(job.files, pause=pause)  # one batch
    if cancel is not None and cancel.is_set():
        summary.cancelled = True
        return summary
    inputs = inputs_stamp(ws) if change is None or before else ""
    writer = Writer(ws.out, check=job.check, force=job.force, force_hint=job.force_hint,
                    read_manifest=False)  # `hold` reads it under the lock
    stopping: list[threading.Thread] = []  # the render workers' fork server ending (`_stop_later`)
    try:
        with writer.hold(cancel=None if cancel is None else cancel.is_set, pause=pause):  # one run at a time
            if inputs and writer.inputs == inputs and writer.intact():
                # the tree on disk is the tree of these very inputs: no page to plan or render
                writer.sweep_temporaries()
                summary.unchanged = len(writer.manifest)
                writer.save_manifest()  # writes only an earlier version's manifest anew, compressed
            else:
                if before and not (writer.inputs == before and writer.intact()):
                    change = None  # the tree on disk is not the last run's (edited, another run's): every page
                jobs = default_jobs(ws.settings, job.jobs) if change is None or before else 1
                early = _start_render_workers_early(ws, writer, jobs)
                site: Site | None = None
                try:
                    # a graph built once (the CLI's) is built while the first keyword pages render
                    site = site_of(ws, writer.anchors, later=early and not ws.incremental)
                    plan = Plan(plan_pages(ws, site, change, recorded=writer.manifest), whole=change is None,
                                structural=change is not None and change.structural)
                    _write(plan, page_renderer(ws, renderer, site), writer, summary, jobs=jobs, runtime=ws.runtime,
                           progress=progress, cancel=cancel, pause=pause, prepare=ws.facts.load_all,
                           settle=settle_anchors(site, writer), site=site,
                           templates=None if renderer.templates is None else str(renderer.templates),
                           base=_run_stamp(ws), packed=ws.packed, stop=functools.partial(_stop_later, stopping))
                    if before and not plan.whole:  # the other pages are the last run's, on disk as written
                        summary.unchanged += _not_planned(plan, writer)
                finally:
                    if early and not stopping:  # also when the run failed or was cancelled before its pages were sent
                        stop_fork_server()
                    if site is not None and isinstance(site.symbols, Future):  # no build outlives its run
                        wait([site.symbols])
                complete = not (summary.cancelled or summary.errors or summary.conflicts or summary.stale)
                writer.inputs = inputs if complete else ""
                writer.save_manifest()
    except LockWaitCancelled:
        summary.cancelled = True
    finally:
        for thread in stopping:  # each stop kills what has not ended within its deadline
            thread.join()
    summary.files = len(ws.facts)
    summary.seconds = time.perf_counter() - started
    return summary


def _stop_later(stopping: list[threading.Thread]) -> None:
    """End the render workers' fork server in a thread (`run` joins it): its end (an interpreter's
    exit, 0.1 s on PyTorch's tree) overlaps the end of the run (stale pages, the manifest's save)
    instead of preceding it, both cores idle."""
    thread = threading.Thread(target=stop_fork_server, name="repodoc-stop-render-workers")
    thread.start()
    stopping.append(thread)


def regenerate(ws: Workspace, rels: Iterable[str], renderer: Renderer, *, progress: ProgressFn | None = None,
               cancel: CancelToken | None = None, pause: Callable[[], None] | None = None) -> Summary:
    """Files changed on disk (saves in the editor): `rels` updated from disk (gone: removed)
    and the pages the change can alter rewritten. When files appeared or vanished, every page
    is planned (the keys decide what is written) and pages of vanished sources go."""
    return run(ws, Job(files=tuple(rels)), renderer, progress=progress, cancel=cancel, pause=pause)


def since_last_run(ws: Workspace, last: Mapping[str, str] | None, job: Job) -> tuple[Workspace, Job]:
    """The workspace as the last complete run documented it (`last`: file -> digest) and `job` as the
    files changed since, when only contents changed: the run then plans only the pages they can alter
    (the server's `Change` propagation) instead of gathering every page's inputs to compare keys.
    Else (no state, files appeared or vanished, nothing changed, or the cache lost what the changed
    files were) `ws` and `job` as they are."""
    if not last or last.keys() != ws.digests.keys():
        return ws, job
    changed = tuple(rel for rel, key in ws.digests.items() if last[rel] != key)
    if not changed or len(ws.cache.get_imports_many({last[rel] for rel in changed})) < len(set(map(last.get, changed))):
        return ws, job
    held = Workspace(ws.root, ws.settings, runtime=ws.runtime)
    held.restore(WorkspaceState(dict(last), dict(ws.sizes), set(ws.folders), list(ws.discovery_skipped),
                                dict(ws.read_skipped)),  # the scan's imports of the same contents: not read again
                 {ws.digests[rel]: found for rel, found in ws.facts.imports().items() if rel not in changed})
    held.facts.load_all()  # once: the graph's build streamed them, then the pages' views loaded them again
    held.graph()  # before the update, as the server holds it: the update says whose graph answers changed (xref)
    return held, replace(job, files=changed, since=True)


def generate(
    root: Path, ws: Workspace, *, check: bool = False, force: bool = False, jobs: int | None = None,
    progress: ProgressFn | None = None, cancel: CancelToken | None = None,
    renderer: Renderer | None = None, rescan: bool = True, state: Path | None = None,
) -> Summary:
    """Scan `ws` (rescan=True), then write (or with check=True, compare) its whole tree;
    force=True overwrites pages a person edited after copying each to PAGE.orig. `state`: the file
    of what the last complete run knew (`lastrun`): only the pages of files changed since are planned."""
    started = time.perf_counter()
    if rescan and not ws.scan(jobs=jobs, progress=progress, cancel=cancel):  # cancelled: nothing written
        summary = Summary(root=str(ws.root), out=str(ws.out), cancelled=True)
    else:
        last = lastrun.load(state) if state is not None else None
        held, job = since_last_run(ws, last, Job(check=check, force=force, jobs=jobs))
        summary = run(held, job, renderer or Renderer(ws.settings.templates or None, lazy=not ws.settings.templates),
                      progress=progress, cancel=cancel)
        complete = not (summary.cancelled or summary.errors or summary.conflicts or summary.stale)
        if state is not None and not check and complete and last != held.digests:
            lastrun.save(state, held.digests)
    summary.files, summary.analysed, summary.cached = len(ws.facts), ws.analysed, ws.cached
    summary.skipped = ws.skipped
    summary.seconds = time.perf_counter() - started
    return summary
