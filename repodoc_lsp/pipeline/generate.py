"""The page pipeline, one for the CLI and the language server, whichever process runs it:
a `Job` (the whole tree, or files changed on disk) -> workspace facts -> `Site` -> page plan
(each page keyed by what its view reads) -> render what changed -> write (`run`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Container, Iterable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.treesitter.byname import is_tree_sitter
from repodoc_lsp.knowledge.linking import Links
from repodoc_lsp.knowledge.views import LaterSketch, Sketch, sketch_of
from repodoc_lsp.output.writer import CLI_FORCE, LockWaitCancelled, OutputError, Writer
from repodoc_lsp.pipeline import lastrun
from repodoc_lsp.pipeline.keep import keep_run, many_unsketched, sketch_stamp, whole_sketches
from repodoc_lsp.pipeline.keys import inputs_stamp, keyed, run_stamp
from repodoc_lsp.pipeline.pool import WorkersLost, stop_fork_server
from repodoc_lsp.pipeline.rendering import PARALLEL_PAGES, Rendering
from repodoc_lsp.pipeline.runtime import default_jobs
from repodoc_lsp.pipeline.write import Plan, Summary, Writing, page_renderer, settle_anchors, write_plan
from repodoc_lsp.render.anchors import AnchorState
from repodoc_lsp.render.environment import TemplateFailure, compiled_cache
from repodoc_lsp.render.own_pages import has_pages
from repodoc_lsp.render.pages import GATHER, Page, Renderer, Site
from repodoc_lsp.render.parts import is_part
from repodoc_lsp.render.paths import docs_page, folder_of
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.shard.share_facts import ShareFacts
from repodoc_lsp.shard.split import folder_shares, folder_weights, pages_of_share
from repodoc_lsp.store import sketches
from repodoc_lsp.store.cache import day
from repodoc_lsp.store.discover import rules_saved
from repodoc_lsp.store.facts import SavedImports
from repodoc_lsp.store.scan import NOT_SEEN, Seen
from repodoc_lsp.store.workspace import CancelToken, Change, FileState, ProgressFn, Workspace, WorkspaceState

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph

T = TypeVar("T")

__all__ = ["PARALLEL_PAGES", "RUN_ERRORS", "Job", "OutputError", "Page", "Plan", "Summary", "generate",
           "page_renderer", "plan_pages", "regenerate", "run", "site_of"]

# The failures of a run as a whole (not of one page), raised the same wherever it runs.
RUN_ERRORS = (OutputError, WorkersLost, TemplateFailure)


@dataclass(frozen=True, slots=True)
class Job:
    """What a run writes, as data (the server sends it as it is to the process that writes)."""

    files: tuple[str, ...] | None = None  # None: the whole tree; else files changed on disk
    check: bool = False  # compare with the tree on disk, write nothing
    force: bool = False  # overwrite pages a person edited, after copying each aside
    force_hint: str = CLI_FORCE  # how the person asks for that, named in a conflict's reason
    jobs: int | None = None  # render workers for the whole tree (None: the `jobs` setting)
    # `files` changed since the last complete run of the whole tree, whose workspace `ws` holds (the
    # CLI's `since_last_run`): when the manifest vouches for that tree, only their pages are
    # planned and the run leaves a complete tree again
    since: bool = False
    share: tuple[int, int] | None = None  # (K, N): only share K of N of the pages (shard/split.py)


def run(ws: Workspace, job: Job, renderer: Renderer, *, progress: ProgressFn | None = None,
        cancel: CancelToken | None = None, pause: Callable[[], None] | None = None,
        graph_built: Callable[[Graph], None] | None = None) -> Summary:
    """The page pipeline, the same in every process that runs it (the CLI, the server's page
    process, the server itself when that process cannot run): files of `job` updated in `ws`
    -> plan -> render -> write.

    The contract: `progress(phase, done, total, where)` as pages are done; `cancel.is_set()`
    looked at while waiting for the output folder and between pages (a cancelled run writes
    whole pages only, deletes nothing and says `cancelled`); `pause()` between files and
    pages (the server lets its requests go first). A page that cannot be rendered or written
    is an error of that page, in `Summary.errors`; the run's own failures raise `RUN_ERRORS`.
    `graph_built(graph)` is called in the graph's thread once it has built the graph (the CLI's
    cold run: the sketches kept for the next run written meanwhile, `keep.Sketches`).
    """
    started = time.perf_counter()
    summary = Summary(root=str(ws.root), out=str(ws.out))
    before = inputs_stamp(ws) if job.since else ""  # the stamp the last run's tree must carry
    change = None if job.files is None else _update(ws, job.files, pause)  # facts, graph: one batch
    if cancel is not None and cancel.is_set():
        summary.cancelled = True
        return summary
    # a share of the pages (`repodoc generate --pages`) is not the tree: its manifest never says so
    inputs = inputs_stamp(ws) if (change is None or before) and job.share is None else ""
    writer = Writer(ws.out, check=job.check, force=job.force, force_hint=job.force_hint,
                    read_manifest=False)  # `hold` reads it under the lock
    try:
        with writer.hold(cancel=None if cancel is None else cancel.is_set, pause=pause):  # one run at a time
            if not _tree_of_these_inputs(writer, inputs, summary):
                if before and not _tree_of_these_inputs(writer, before):
                    change = None  # the tree on disk is not the last run's (edited, another run's): every page
                _pages(ws, job, renderer, change, Writing(writer, summary, progress, cancel, pause), since=bool(before),
                       graph_built=graph_built)
            writer.inputs = inputs if summary.complete() else ""
            writer.save_manifest()  # with the inputs stamp of a complete run
    except LockWaitCancelled:
        summary.cancelled = True
    summary.files = len(ws.facts)
    summary.seconds = time.perf_counter() - started
    return summary


def _pages(ws: Workspace, job: Job, renderer: Renderer, change: Change | None, w: Writing, *, since: bool,
           graph_built: Callable[[Graph], None] | None = None) -> None:
    """The site (graph, index) -> the plan of the whole tree or of `change` -> render -> write."""
    writer = w.writer
    jobs = default_jobs(ws.settings, job.jobs) if change is None or since else 1
    early = _start_render_workers_early(ws, writer, jobs, renderer.compiled_in)
    site: Site | None = None
    try:
        site = site_of(ws, writer.anchors, later=_graph_in_thread(ws, early), then=graph_built,
                       paged=_paged_as_last_run(ws, change, writer) if since and change is not None else None)
        if change is not None and _pages_come_or_go(site, change, writer):
            change |= Change(structural=True)
        pages = plan_pages(ws, site, change, recorded=_keyed_by_workers(writer, ws, job.share))
        share = pages if job.share is None else pages_of_share(pages, job.share, _weights(ws))
        plan = Plan(share, whole=change is None, structural=change is not None and change.structural)
        templates = None if renderer.templates is None else str(renderer.templates)
        w.how = Rendering(page_renderer(ws, renderer, site), ws.runtime, jobs, site, templates, run_stamp(ws),
                          stop_fork_server, renderer.compiled_in)
        w.prepare, w.settle = ws.facts.load_all, settle_anchors(site, writer)
        write_plan(plan, w)
        if since and not plan.whole:  # the other pages are the last run's, on disk as written
            w.summary.unchanged += _not_planned(plan, writer)
    finally:
        if early:  # also when the run failed or was cancelled before its pages were sent
            stop_fork_server()
        if site is not None and isinstance(site.symbols, Future):  # no build outlives its run
            wait([site.symbols])


# -- fast paths: each one decision, its reason in one line -------------------------------------

def _weights(ws: Workspace) -> dict[str, int]:
    """The page split's folder weights of `ws`'s inputs (`shard/split.py`: from paths alone)."""
    return folder_weights({*ws.digests, *ws.read_skipped}, ws.folders)


def _tree_of_these_inputs(writer: Writer, inputs: str, summary: Summary | None = None) -> bool:
    """The tree on disk was made, complete, from `inputs` (the inputs stamp): with `summary`, nothing to
    plan or render (a run with nothing changed takes a fraction of a second instead of planning every page)."""
    if not (inputs and writer.inputs == inputs and writer.intact()):
        return False
    if summary is not None:
        writer.sweep_temporaries()
        summary.unchanged = len(writer.manifest)
    return True


def _start_render_workers_early(ws: Workspace, writer: Writer, jobs: int, compiled_in: str) -> bool:
    """Start the render workers' fork server before the symbol graph is built when enough pages are new
    to the manifest (rendered whatever their key): its start overlaps the build. True when started."""
    unknown = 2 * (len(ws.facts) + len(ws.folders)) - len(writer.manifest)  # docs + kw, index + doc
    if jobs > 1 and unknown >= PARALLEL_PAGES and ws.runtime.forks():
        ws.runtime.render_context(built_in=not ws.settings.templates, compiled_in=compiled_in)
        return True
    return False


def _graph_in_thread(ws: Workspace, early: bool) -> bool:
    """Build the graph (built once: the CLI's) in a thread while the render workers write the first
    keyword pages, whose views read none of it; the thread builds for the owner, the main thread, which
    reads the graph once built (`Site.graph`; CONTRIBUTING.md, "Threads: who owns what")."""
    return early and not ws.incremental


def _paged_as_last_run(ws: Workspace, change: Change, writer: Writer) -> frozenset[str]:
    """Which files have pages, for a run after the last complete one: an unchanged file has them when that
    run's manifest lists its page (asking its facts loaded every file's, most of a run after an edit)."""
    return frozenset(rel for rel in ws.facts if (has_pages(ws.facts[rel]) if rel in change.files
                                                 else docs_page(rel) in writer.manifest))


def _keyed_by_workers(writer: Writer, ws: Workspace, share: tuple[int, int] | None) -> Container[str]:
    """The pages planned with their key: those the manifest knows; the others are keyed by the render
    worker that gathers their inputs (a cold run gathers each page once, not also in this process). A
    page share keys its own folders' pages only (a page's path is in its folder; given the graph job's
    answers it has no answer for another share's pages)."""
    if share is None:
        return writer.manifest
    shares = folder_shares(_weights(ws), share[1])
    return {path for path in writer.manifest if shares.get(folder_of(path), 1) == share[0]}


def site_of(ws: Workspace, anchors: Mapping[str, AnchorState] | None = None, *, later: bool = False,
            paged: frozenset[str] | None = None, then: Callable[[Graph], None] | None = None) -> Site:
    """The workspace as pages see it (the view layer's `Site`), with its symbol graph (built
    here if it is not yet; `later`: in a thread, while the pages that read none of it render) and
    the anchors the manifest recorded of its file pages; `paged`: the files with pages of their own,
    when known (else asked of each file's facts); `then(graph)`: called after a build in a thread, in it."""
    relations = ws.relations  # made here, before a build in a thread would make it too (it reads them)
    graph: Graph | Future[Graph]
    if later:
        ws.facts.load_all()  # here, not in the build's thread, while this one plans from the facts
        graph = _in_thread(ws.graph, "repodoc-graph", then)
    else:
        graph = ws.graph()
    if isinstance(ws.facts, ShareFacts):  # a page share: which files have pages, without their facts
        paged = ws.facts.paged
    site = Site.build(project=ws.project, root=ws.root.as_posix(), out=ws.out.as_posix(),
                      embed_max=ws.settings.embed_source_max_bytes, relations=relations,
                      facts=ws.facts, sizes=ws.sizes, folders=ws.folders, digests=ws.digests,
                      graph=graph, paged=paged)
    site.anchors = dict(anchors or {})  # as the run found them: pages settled meanwhile change the writer's
    site.llms_full_max = ws.settings.llms_full_max_bytes
    site.by_name = ws.by_name if any(map(is_tree_sitter, ws.digests)) else None
    return site


def _in_thread(fn: Callable[[], T], name: str, then: Callable[[T], None] | None = None) -> Future[T]:
    """`fn()` run in a new thread: its result (or its failure) when the future is read; `then(result)` after it
    in that thread, once the result can be read."""
    future: Future[T] = Future()

    def work() -> None:
        try:
            result = fn()
        except BaseException as exc:  # raised where the result is read
            future.set_exception(exc)
            return
        future.set_result(result)
        if then is not None:
            then(result)
    threading.Thread(target=work, name=name, daemon=True).start()
    return future


def plan_pages(ws: Workspace, site: Site, change: Change | None = None, *,
               recorded: Container[str] | None = None) -> list[Page]:
    """The pages of the whole tree, or of those `change` may alter (all of them when files
    appeared or vanished), each keyed by a digest of everything its view reads. With
    `recorded`, a page not among them is planned without its key (`_keyed_by_workers`)."""
    base = run_stamp(ws)
    files, folders = _subjects(ws, site, change)
    files = {rel for rel in files if site.has_pages(rel)}  # the others: a line in their folder's index
    pages: list[Page] = []
    for kind, subjects in (("docs", files), ("kw", files), ("index", folders), ("doc", folders)):
        gather = GATHER[kind]
        # The gathered inputs are hashed, not kept (kept for every page, they would live in the
        # parent for the whole run); a page's inputs are gathered again when it is rendered.
        for subject in sorted(subjects):
            page = Page(kind, subject, "")
            if recorded is None or page.path in recorded:
                page = keyed(page, base, gather(site, subject))
            pages.append(page)
    # llms.txt (and llms-full.txt) at the root: planned with every run, kept if their inputs are the same
    for kind in ("llms", "llms-full") if ws.settings.llms_full_max_bytes > 0 else ("llms",):
        page = Page(kind, "", "")
        pages.append(page if recorded is not None and page.path not in recorded
                     else keyed(page, base, GATHER[kind](site, "")))
    return pages


def _subjects(ws: Workspace, site: Site, change: Change | None) -> tuple[set[str], set[str]]:
    """The files and folders whose pages `change` may alter (every one for None or a structural change)."""
    if change is None or change.structural:
        return set(ws.facts), set(ws.folders)
    touched = change.files | change.related | change.xref
    if site.graph is not None:  # pages listing members inherited from a changed class
        touched |= site.graph.heirs(change.files | change.xref)
    folders = {folder_of(r) for r in touched} & ws.folders
    folders |= {folder_of(f) for f in folders if f}  # a parent's index.md says what its sub-folders are for
    return set(touched) & set(ws.facts), folders


def _pages_come_or_go(site: Site, change: Change, writer: Writer) -> bool:
    """A changed file gained or lost its own pages (`render/own_pages.py`): planned as when files appear or
    vanish (its folder's pages, its siblings' lists, llms.txt), its old pages removed through the manifest."""
    return any(site.has_pages(rel) != (docs_page(rel) in writer.manifest) for rel in change.files if rel in site.facts)


def _not_planned(plan: Plan, writer: Writer) -> int:
    """The pages of the manifest (part pages aside) that `plan` leaves out."""
    planned = {page.path for page in plan.pages}
    return sum(1 for path in writer.manifest if path not in planned and not is_part(path))


def regenerate(ws: Workspace, rels: Iterable[str], renderer: Renderer, *, progress: ProgressFn | None = None,
               cancel: CancelToken | None = None, pause: Callable[[], None] | None = None) -> Summary:
    """Files changed on disk (saves in the editor): `rels` updated from disk (gone: removed)
    and the pages the change can alter rewritten. When files appeared or vanished, every page
    is planned (the keys decide what is written) and pages of vanished sources go."""
    return run(ws, Job(files=tuple(rels)), renderer, progress=progress, cancel=cancel, pause=pause)


def _update(ws: Workspace, files: Iterable[str], pause: Callable[[], None] | None) -> Change:
    """The files saved, as one batch; a saved `.gitignore` brings the files whose verdict it changed."""
    rules = rules_saved(ws.root, ws.settings, files, ws.facts)
    if rules is None:
        return ws.update_files(files, pause=pause)
    ws.filter, added, gone = rules
    return ws.update_files([*files, *added], pause=pause, known={rel: FileState() for rel in gone})


def since_last_run(ws: Workspace, last: Mapping[str, str] | None, saved: sketches.Saved | None = None
                   ) -> tuple[Workspace, tuple[str, ...] | None]:
    """The workspace as the last complete run documented it (`last`: file -> digest) and the files
    changed since, when only contents changed: the run then plans only the pages they can alter (the
    server's `Change` propagation) instead of gathering every page's inputs to compare keys. Else (no
    state, files appeared or vanished, nothing changed, or the cache lost what the changed files were)
    `ws` as it is and None. `saved`: the sketches and links the last run saved (`_SavedRun`), which the
    graph is built from."""
    if not last or last.keys() != ws.digests.keys():
        return ws, None
    changed = tuple(rel for rel, key in ws.digests.items() if last[rel] != key)
    before = ws.cache.get_imports_many({last[rel] for rel in changed}) if changed else {}
    if not changed or len(before) < len({last[rel] for rel in changed}):
        return ws, None
    held = Workspace(ws.root, ws.settings, runtime=ws.runtime)
    kept = {rel: key for rel, key in last.items() if rel not in changed}
    sketched, links = _saved_sketches(ws, saved, kept, last, _sketch_from_facts(held))
    held.restore(WorkspaceState(dict(last), dict(ws.sizes), set(ws.folders), list(ws.discovery_skipped),
                                dict(ws.read_skipped)),  # the scan's imports of the same contents: not read again
                 {ws.digests[rel]: ws.facts.imports().given(rel) for rel in ws.facts if rel not in changed}, sketched,
                 _relations_before(ws, {rel: before[last[rel]] for rel in changed}), links=links)
    if many_unsketched(len(kept) - len(sketched), len(kept)):  # once: the graph's build would stream
        held.facts.load_all()  # them, then the pages load them again
    # Built before the update, as the server holds its graph when a save comes: the update then says
    # whose graph answers changed (`Change.xref`: a page naming a member that moved to a part page).
    held.graph()
    return held, changed


def _relations_before(ws: Workspace, imports: Mapping[str, tuple[Import, ...]]) -> Relations:
    """The scan's import relations with the last run's `imports` of the changed files: what the last run's
    workspace has (made again from every file's imports, they were a tenth of a run after an edit).
    `ws` is not used after (`since_last_run`): its relations are taken, not copied."""
    relations = ws.relations
    for rel, found in imports.items():
        relations.update(rel, found)
    return relations


def _saved_sketches(ws: Workspace, saved: sketches.Saved | None, kept: Mapping[str, str], last: Mapping[str, str],
                    made: Callable[[str], Sketch]) -> tuple[dict[str, tuple[str, LaterSketch | None]], Links]:
    """The graph's sketches of the unchanged files `kept` as the last run saved them, and the links of the
    files of the last run's workspace `last` that consulted no file changed since they were saved: the
    graph of a run after an edit is built from them in one read (loading and sketching every file's facts
    was most of that run, then linking every file a third of what was left)."""
    if saved is None:
        return {}, {}
    with ws.runtime.holding():  # held to the end, without cycles: the collector's passes were a sixth of this
        return sketches.held(saved, kept, ws.facts.imports(), made), sketches.links(saved, last)


class _SavedRun:
    """The sketches, links and imports the last complete run saved beside its `state`, read when the scan asks
    (`for_scan`: a file of that run has another content), never by a run with nothing changed (reading
    the file was 40% of such a run, and five times its memory)."""

    def __init__(self, ws: Workspace, state: Path | None, last: lastrun.LastRun | None) -> None:
        self._ws, self._state, self._last = ws, state, last
        self.saved: sketches.Saved | None = None  # once read
        self.imports: dict[str, SavedImports] = {}  # its imports by content digest, once read

    def for_scan(self) -> tuple[dict[str, SavedImports], sketches.SavedRelations | None]:
        """The last run's imports by content digest (the scan takes them instead of reading each file's row and
        JSON text from the facts cache: a tenth of a run after an edit) and its import relations."""
        if self.saved is None and self._state is not None and self._last is not None:
            with self._ws.runtime.holding():  # held to the end, without cycles: the collector's passes were a sixth
                self.saved = sketches.load(sketches.sketches_path(self._state), sketch_stamp(self._ws))
            self.imports = sketches.imports_of(self.saved)
        return self.imports, None if self.saved is None else sketches.relations(self.saved, self.imports)


def _rows_used(ws: Workspace, last: lastrun.LastRun | None, imports: Mapping[str, object]) -> int:
    """The day the cache's rows of the files whose `imports` the scan took from the saved file were marked
    used, marked here once a day (the scan no longer reads them, and the cache deletes unused rows)."""
    if imports and (last is None or last.touched != day()):
        ws.cache.touch_many(imports)
    return day()


def _sketch_from_facts(ws: Workspace) -> Callable[[str], Sketch]:
    """A file's graph sketch made from its facts in `ws`: what stands for a saved sketch that does not decode."""
    def made(rel: str) -> Sketch:
        facts = ws.facts[rel]
        return sketch_of(facts, ws.parts(facts))
    return made


def _seen(last: lastrun.LastRun | None) -> Seen:
    """The last run's digests by stat: the scan reads only the files whose stat moved since (reading and
    digesting every file was a fifth of a run after an edit)."""
    return NOT_SEEN if last is None else last.seen


def _renderer(ws: Workspace, state: Path | None) -> Renderer:
    """The run's renderer; repodoc's own templates compiled once and kept in the person's cache folder, the
    one of the run's `state` (compiling them every run was a fifth of a run after an edit)."""
    renderer = Renderer(ws.settings.templates or None, lazy=not ws.settings.templates)
    if state is not None and not ws.settings.templates:
        renderer.env.bytecode_cache = compiled_cache(lastrun.cache_of(state) / "templates", render_stamp())
    return renderer


def generate(
    root: Path, ws: Workspace, *, check: bool = False, force: bool = False, jobs: int | None = None,
    progress: ProgressFn | None = None, cancel: CancelToken | None = None,
    renderer: Renderer | None = None, rescan: bool = True, state: Path | None = None,
) -> Summary:
    """Scan `ws` (rescan=True), then write (or with check=True, compare) its whole tree;
    force=True overwrites pages a person edited after copying each to PAGE.orig. `state`: the file
    of what the last complete run knew (`lastrun`): only the pages of files changed since are planned."""
    started = time.perf_counter()
    last = lastrun.load(state) if state is not None else None
    saved = _SavedRun(ws, state, last)
    if rescan and not ws.scan(jobs=jobs, progress=progress, cancel=cancel, seen=_seen(last), saved=saved.for_scan):
        summary = Summary(root=str(ws.root), out=str(ws.out), cancelled=True)  # cancelled: nothing written
    else:
        touched = _rows_used(ws, last, saved.imports)
        held, files = since_last_run(ws, None if last is None else last.files, saved.saved)
        job = Job(files=files, check=check, force=force, jobs=jobs, since=files is not None)
        whole = whole_sketches(state, check, last, held, files)
        try:
            summary = run(held, job, renderer or _renderer(ws, state), progress=progress, cancel=cancel,
                          graph_built=None if whole is None else whole.write)
            if state is not None and not check and summary.complete():
                keep_run(state, last, held, ws, files, touched, whole)
        finally:
            if whole is not None:
                whole.drop()  # a run not kept: nothing of it stays
    summary.files, summary.analysed, summary.cached = len(ws.facts), ws.analysed, ws.cached
    summary.skipped = ws.skipped
    summary.seconds = time.perf_counter() - started
    return summary

