"""The pipeline, shared by the CLI and the language server:
workspace facts -> page plan (each page keyed by its inputs) -> render what changed -> write.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from repodoc_lsp import __version__
from repodoc_lsp.discover import Skipped
from repodoc_lsp.pool import run_chunks
from repodoc_lsp.render import Renderer, Site
from repodoc_lsp.render.paths import folder_of, pages_of_file, pages_of_folder
from repodoc_lsp.workspace import CancelToken, ProgressFn, Workspace, default_jobs
from repodoc_lsp.writer import Outcome, OutputError, Writer, WriteResult

__all__ = ["OutputError", "Page", "Summary", "generate", "plan_pages", "write_pages"]


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
            "seconds": round(self.seconds, 3), "cancelled": self.cancelled,
        }


@dataclass(frozen=True, slots=True)
class Page:
    path: str  # relative to the output folder
    key: str  # digest of everything the page is rendered from
    render: Callable[[], str]


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


def _docs_page(renderer: Renderer, site: Site, ws: Workspace, rel: str) -> str:
    return renderer.file_docs(site, rel, ws.read_text(rel))


def plan_pages(ws: Workspace, renderer: Renderer, site: Site, *, files: set[str] | None = None,
               folders: set[str] | None = None) -> list[Page]:
    """Every page of the tree (or of `files` and `folders` only), with a key that changes
    whenever its content could."""
    s = ws.settings
    base = _h(__version__, ws.project, s.embed_source_max_bytes, site.root, site.out,
              _templates_stamp(s.templates))
    rels = ws.relations
    folder_listing = {f: _h(files) for f, files in site.child_files.items()}
    pages: list[Page] = []
    for rel in sorted(ws.facts if files is None else files & set(ws.digests)):
        d = ws.digests[rel]
        docs, kw = pages_of_file(rel)
        targets = sorted((t or "") for t in rels.targets.get(rel, {}).values())
        key = _h(base, "docs", rel, d, ws.sizes[rel], rels.module_of.get(rel), rels.importers(rel),
                 folder_listing.get(folder_of(rel)), targets)
        pages.append(Page(docs, key, functools.partial(_docs_page, renderer, site, ws, rel)))
        pages.append(Page(kw, _h(base, "kw", rel, d), functools.partial(renderer.file_kw, site, rel)))
    for folder in sorted(ws.folders if folders is None else folders & ws.folders):
        children = site.child_files.get(folder, [])
        subs = site.child_folders.get(folder, [])
        content = [(r, ws.digests[r]) for r in children]
        sub_counts = [(f, site.files_below.get(f, 0)) for f in subs]
        index, doc = pages_of_folder(folder)
        pages.append(Page(index, _h(base, "index", folder, content, sub_counts),
                          functools.partial(renderer.folder_index, site, folder)))
        links = [(r, rels.importers(r), sorted((t or "") for t in rels.targets.get(r, {}).values()))
                 for r in children]
        pages.append(Page(doc, _h(base, "doc", folder, content, len(subs), links),
                          functools.partial(renderer.folder_doc, site, folder)))
    return pages


# Pages to render before worker processes pay off.
PARALLEL_PAGES = 400
_CHUNK = 40

# What forked render workers inherit (set just before the fork, never pickled).
_FORKED: tuple[list[Page], Writer] | None = None


def _render_chunk(start: int) -> list[tuple[WriteResult, tuple[str, int, int] | None]]:
    assert _FORKED is not None
    pages, writer = _FORKED
    out = []
    for page in pages[start : start + _CHUNK]:
        result = writer.write(page.path, page.render(), page.key)
        out.append((result, writer.manifest.get(page.path)))
    return out


def _fork_is_safe() -> bool:
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def _rendered(todo: list[Page], writer: Writer, jobs: int, cancel: CancelToken | None,
              pause: Callable[[], None] | None = None) -> Iterator[tuple[WriteResult, tuple[str, int, int] | None]]:
    """Render and write `todo`: forked workers for many pages in a single-threaded process
    (the CLI), else in this process (the language server), calling `pause` before each page."""
    global _FORKED
    if jobs > 1 and len(todo) >= PARALLEL_PAGES and _fork_is_safe():
        _FORKED = (todo, writer)
        try:
            for chunk in run_chunks(_render_chunk, range(0, len(todo), _CHUNK), workers=jobs,
                                    context=multiprocessing.get_context("fork"), cancel=cancel,
                                    what="writing pages"):
                yield from chunk
        finally:
            _FORKED = None
        return
    for page in todo:
        if pause is not None:
            pause()
        if cancel is not None and cancel.is_set():
            return
        yield writer.write(page.path, page.render(), page.key), None


def write_pages(
    pages: Iterable[Page], writer: Writer, summary: Summary, *, progress: ProgressFn | None = None,
    cancel: CancelToken | None = None, remove_stale: bool = True, jobs: int = 1,
    prepare: Callable[[], None] | None = None, pause: Callable[[], None] | None = None,
) -> None:
    """Render and write the pages whose inputs changed; then drop pages of vanished sources.
    `pause` is called between pages (the server lets requests go first)."""
    pages = list(pages)
    total = len(pages)
    todo = []
    for page in pages:
        if not writer.check and writer.unchanged(page.path, page.key):
            summary.unchanged += 1
        else:
            todo.append(page)
    if remove_stale:  # a whole run: also clear what a killed run left
        writer.sweep_temporaries()
    if todo and prepare is not None:
        prepare()  # e.g. load facts before workers fork
    done = summary.unchanged
    for result, record in _rendered(todo, writer, jobs, cancel, pause):
        done += 1
        if record is not None:
            writer.manifest[result.page] = record
        if result.outcome is Outcome.WRITTEN:
            summary.written.append(result.page)
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
    if cancel is not None and cancel.is_set():
        summary.cancelled = True
    if remove_stale and not summary.cancelled:
        removed, conflicts = writer.remove_stale({p.path for p in pages})
        if writer.check:
            summary.stale.extend(WriteResult(p, Outcome.STALE, "would be removed") for p in removed)
        else:
            summary.removed.extend(removed)
        summary.conflicts.extend(conflicts)
    writer.save_manifest()


def affected(ws: Workspace, changed: Iterable[str]) -> tuple[set[str], set[str]]:
    """The files and folders whose pages a change of `changed` may alter (call right after
    `ws.update_file`/`ws.remove_file` of each, collecting their `last_related`)."""
    files = set(changed)
    folders: set[str] = set()
    for rel in list(files):
        folder = folder_of(rel)
        folders.add(folder)
        if ws.last_structural:  # sibling lists, folder counts and the module map change
            files.update(r for r in ws.facts if folder_of(r) == folder)
            while folder:
                folder = folder_of(folder)
                folders.add(folder)
    files |= ws.last_related
    folders |= {folder_of(r) for r in ws.last_related}
    return files, folders


def regenerate(ws: Workspace, rels: Iterable[str], writer: Writer, renderer: Renderer,
               data: dict[str, bytes] | None = None, pause: Callable[[], None] | None = None) -> Summary:
    """Update `rels` (from `data`, else from disk; gone: removed) and rewrite only the pages
    they can change; for saves in the editor. Never removes pages of other files.
    `pause` is called between files and between pages."""
    started = time.perf_counter()
    summary = Summary(root=str(ws.root), out=str(ws.out))
    files: set[str] = set()
    folders: set[str] = set()
    structural = False
    related: set[str] = set()
    gone: list[str] = []
    for rel in rels:
        if pause is not None:
            pause()
        known = rel in ws.facts
        ws.update_file(rel, (data or {}).get(rel))
        structural |= ws.last_structural
        related |= ws.last_related
        files.add(rel)
        if known and rel not in ws.facts:
            gone.extend(pages_of_file(rel))
    ws.last_structural, ws.last_related = structural, related
    files, folders = affected(ws, files)
    gone.extend(page for f in folders - ws.folders for page in pages_of_folder(f))
    removed, conflicts = writer.remove(gone)
    summary.removed.extend(removed)
    summary.conflicts.extend(conflicts)
    site = ws.site()
    write_pages(plan_pages(ws, renderer, site, files=files, folders=folders), writer, summary,
                remove_stale=False, pause=pause)
    summary.files = len(ws.facts)
    summary.seconds = time.perf_counter() - started
    return summary


def generate(
    root: Path, ws: Workspace, *, check: bool = False, jobs: int | None = None,
    progress: ProgressFn | None = None, cancel: CancelToken | None = None,
    renderer: Renderer | None = None, rescan: bool = True,
) -> Summary:
    """Write (or with check=True, compare) the whole documentation tree of `ws`."""
    started = time.perf_counter()
    summary = Summary(root=str(ws.root), out=str(ws.out))
    if (rescan and not ws.scan(jobs=jobs, progress=progress, cancel=cancel)) or \
            (cancel is not None and cancel.is_set()):
        summary.cancelled = True
    summary.files, summary.analysed, summary.cached = len(ws.facts), ws.analysed, ws.cached
    summary.skipped = ws.skipped
    if not summary.cancelled:
        writer = Writer(ws.out, check=check)
        renderer = renderer or Renderer(ws.settings.templates or None)
        site = ws.site()
        write_pages(plan_pages(ws, renderer, site), writer, summary, progress=progress, cancel=cancel,
                    jobs=jobs or default_jobs(ws.settings), prepare=ws.facts.load_all)
    summary.seconds = time.perf_counter() - started
    return summary
