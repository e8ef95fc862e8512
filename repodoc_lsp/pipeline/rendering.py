"""Rendering and writing the pages to render: one at a time in this process (`render_and_write`), or,
for many pages, in parts on render workers (`rendered`).

Render workers come from a fork server (`Runtime.render_context`), not from this process: forked from
it after the analysis they inherited every file's facts and the graph (counted again in each worker's
memory). Each is given what its pages' views read (`Part`), nothing else, and keeps its
renderer and writer in `WORKER`, the object its initializer sets up.
"""

from __future__ import annotations

import functools
import itertools
import pickle
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from repodoc_lsp import MARKER
from repodoc_lsp.output.manifest import Record
from repodoc_lsp.output.writer import Outcome, Writer, WriteResult
from repodoc_lsp.pipeline.keys import keyed
from repodoc_lsp.pipeline.pool import run_chunks
from repodoc_lsp.pipeline.runtime import Runtime
from repodoc_lsp.render.pages import GATHER, Page, Renderer, Site, Where, view_files, where_of
from repodoc_lsp.render.parts import part_paths
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.store.workspace import CancelToken, read_text

# page -> ((path, Markdown) of it and of its part pages, the page first; its key)
RenderFn = Callable[[Page], tuple[list[tuple[str, str]], str]]
# A part of the pages: each with its view's inputs and what the writer knows of it and its part pages,
# and the facts of the files their views read, pickled
Part = tuple[list[tuple[Page, dict, list[tuple[str, tuple[Record | None, frozenset[str]]]]]], dict[str, bytes]]

# Pages to render before worker processes pay off.
PARALLEL_PAGES = 400
CHUNK = 40  # pages of a part (but the last) at least: whole folders, each with its own pages (`cuts`)
MOST = 4 * CHUNK  # a folder of more pages is cut into parts of this many


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
    base: str = ""  # the run's stamp: a page sent without its key is keyed by the worker (`keyed`)


class RenderWorker:
    """A render worker's state: its run's setup, renderer and writer, set by `start` (the pool's
    initializer) and read by `render_part`. Pickled by name (`WORKER`): the functions a pool sends
    are this process's one object, not copies of it."""

    def __init__(self) -> None:
        self.state: tuple[RenderSetup, Renderer, Writer] | None = None

    def __reduce__(self) -> str:
        return "WORKER"

    def start(self, setup: RenderSetup) -> None:
        # Ctrl-C in a terminal reaches the whole process group: the run that started this worker
        # stops it (as a forked worker, it inherited that run's handler).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        setup.setup()
        writer = Writer(Path(setup.out), check=setup.check, force=setup.force, force_hint=setup.force_hint,
                        read_manifest=False)
        self.state = (setup, Renderer.shared(setup.templates), writer)

    def render_part(self, part: Part) -> list[tuple[WriteResult, Record | None]]:
        assert self.state is not None
        setup, renderer, writer = self.state
        pages, packed = part
        facts = {rel: pickle.loads(data) for rel, data in packed.items()}
        root = Path(setup.root)
        out: list[tuple[WriteResult, Record | None]] = []
        for page, inputs, known in pages:
            def render(page: Page, inputs: dict = inputs) -> tuple[list[tuple[str, str]], str]:
                # the source of a file its page does not show (too big to embed) is not read
                text = read_text(root, page.subject) if page.kind == "docs" and \
                    renderer.reads_source(setup.where, inputs) else None
                # a page planned without its key is keyed here, by the inputs it was sent (plain data:
                # the digest the parent would have made), not by the parent that gathered them
                key = keyed(page, setup.base, inputs).key
                return renderer.render_pages(setup.where, page.kind, page.subject, inputs, facts, text), key
            for path, what in known:  # the page and its part pages as the parent's writer knows them
                writer.learn(path, what)
            results = render_and_write(page, render, writer)
            out.extend((result, writer.manifest.get(result.page)) for result in results)
            for path in {path for path, _what in known} | {result.page for result in results}:
                writer.forget(path)
        return out


WORKER = RenderWorker()


class Parts(Sequence[Part]):
    """The parts of `pages`, each made when it is sent (the inputs of one part at a time live here);
    a page planned without its key goes without it: the render worker keys it by the inputs it is sent
    (`RenderSetup.base`: the run's stamp), so the parent does not hash what it gathered. The facts of
    the files their views read go pickled, each once a part."""

    def __init__(self, pages: list[Page], site: Site, writer: Writer) -> None:
        self.pages, self.site, self.writer = pages, site, writer
        self.cuts = cuts(pages)

    def __len__(self) -> int:
        return len(self.cuts)

    def __getitem__(self, i: int) -> Part:  # type: ignore[override]
        items, facts = [], {}
        start, end = self.cuts[i]
        for page in self.pages[start:end]:
            inputs = GATHER[page.kind](self.site, page.subject)
            for rel in view_files(page.kind, page.subject, inputs):
                if rel not in facts:
                    facts[rel] = pickle.dumps(self.site.facts[rel], pickle.HIGHEST_PROTOCOL)
            paths = (page.path, *part_paths(page.path, self.writer.manifest))
            known = [(path, self.writer.known(path)) for path in paths]
            items.append((page, inputs, known))
        return items, facts


def cuts(pages: list[Page]) -> list[tuple[int, int]]:
    """`pages` (in `by_folder`'s order) cut into parts: (start, end) of each. A part ends where a
    folder's pages end (its files' and its own, which read its files' facts: each file's facts go
    to one part, unpickled once) once it holds `CHUNK` pages, or at `MOST` pages (a large folder)."""
    found: list[tuple[int, int]] = []
    start = 0
    for i, page in enumerate(pages):
        size = i + 1 - start
        last = i + 1 == len(pages)
        if last or size >= MOST or (size >= CHUNK and by_folder(pages[i + 1])[0] != by_folder(page)[0]):
            found.append((start, i + 1))
            start = i + 1
    return found


# While the symbol graph is being built (`site_of(later=True)`), this share of the files' keyword
# pages (their views read none of it) render first: the graph's build, one core, beside them.
_LEAD_SHARE = 3


def ordered(todo: list[Page], site: Site) -> list[Page]:
    """`todo` in the order parts are cut and sent: `by_folder`'s, after the first folders' keyword
    pages (a `_LEAD_SHARE`th of the files) while the graph is still being built."""
    pages = sorted(todo, key=by_folder)
    if not site.graph_pending():
        return pages
    lead = set(itertools.islice((i for i, page in enumerate(pages) if page.kind == "kw"),
                                len(site.facts) // _LEAD_SHARE))
    return [pages[i] for i in sorted(lead)] + [page for i, page in enumerate(pages) if i not in lead]


def by_folder(page: Page) -> tuple[str, int, str, int]:
    """A folder's file pages (both of a file side by side), then its own: a part's files are few.
    Its first item is the folder whose pages `page` is among (`cuts`)."""
    if page.kind in ("index", "doc"):
        return page.subject, 1, "", _KIND_ORDER[page.kind]
    return folder_of(page.subject), 0, page.subject, _KIND_ORDER.get(page.kind, 4)


_KIND_ORDER = {"docs": 0, "kw": 1, "index": 2, "doc": 3}


@dataclass(frozen=True, slots=True)
class Rendering:
    """How a run renders its pages: in this process with `render`, or on `jobs` render workers (when
    this process may start them and there are enough pages) given the views of `site` and the
    person's `templates`; `stop` ends their fork server."""

    render: RenderFn
    runtime: Runtime
    jobs: int = 1
    site: Site | None = None
    templates: str | None = None
    base: str = ""
    stop: Callable[[], None] = lambda: None
    compiled_in: str = ""  # the folder of the run's compiled templates (`Renderer.compiled_in`)


def rendered(todo: list[Page], how: Rendering, writer: Writer, cancel: CancelToken | None,
             pause: Callable[[], None] | None) -> Iterator[tuple[WriteResult, Record | None]]:
    """Render and write `todo`: render workers for many pages when this process may start them
    (the CLI, the server's page process), else in this process, calling `pause` before each page."""
    if how.jobs > 1 and len(todo) >= PARALLEL_PAGES and how.runtime.forks() and how.site is not None:
        site = how.site
        setup = RenderSetup(where_of(site), how.templates, site.root, str(writer.out), writer.check, writer.force,
                            writer.force_hint, how.runtime.worker_setup(), how.base)
        try:
            yield from itertools.chain.from_iterable(run_chunks(
                WORKER.render_part, Parts(ordered(todo, site), site, writer), workers=how.jobs,
                context=how.runtime.render_context(built_in=how.templates is None, compiled_in=how.compiled_in),
                initializer=functools.partial(WORKER.start, setup), cancel=cancel, what="writing pages"))
        finally:
            how.stop()
        return
    for page in todo:
        if pause is not None:
            pause()
        if cancel is not None and cancel.is_set():
            return
        for result in render_and_write(page, how.render, writer):
            yield result, None
