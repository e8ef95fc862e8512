"""A plan carried out: the pages whose key changed rendered and written, what the plan says is gone
deleted, every outcome counted in the run's `Summary`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from repodoc_lsp.output.writer import Outcome, Writer, WriteResult
from repodoc_lsp.pipeline.keys import keyed, run_stamp
from repodoc_lsp.pipeline.rendering import RenderFn, Rendering, rendered
from repodoc_lsp.render.pages import GATHER, Page, Renderer, Site, anchor_state, where_of
from repodoc_lsp.render.parts import page_of_part, part_paths
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.store.discover import Skipped
from repodoc_lsp.store.workspace import CancelToken, ProgressFn, Workspace


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

    def complete(self) -> bool:
        """The tree on disk is the tree planned: nothing cancelled, failed, kept or stale."""
        return not (self.cancelled or self.errors or self.conflicts or self.stale)

    def count(self, result: WriteResult) -> None:
        """One page's outcome."""
        if result.outcome is Outcome.WRITTEN:
            self.written.append(result.page)
            if result.reason:
                self.set_aside.append(result)
        elif result.outcome is Outcome.UNCHANGED:
            self.unchanged += 1
        elif result.outcome is Outcome.STALE:
            self.stale.append(result)
        elif result.outcome is Outcome.ERROR:
            self.errors.append(result)
        else:
            self.conflicts.append(result)

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


@dataclass(frozen=True, slots=True)
class Plan:
    """The pages a run renders, each keyed by what its view reads, and what it deletes."""

    pages: list[Page]
    whole: bool  # the whole tree: generated pages not planned go (even unknown to the manifest)
    structural: bool  # files appeared or vanished: pages of the manifest not planned go


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
    base = run_stamp(ws)

    def render(page: Page) -> tuple[list[tuple[str, str]], str]:
        text = ws.read_text(page.subject) if page.kind == "docs" else None
        inputs = GATHER[page.kind](site, page.subject)
        pages = renderer.render_pages(where_of(site), page.kind, page.subject, inputs, site.facts, text)
        return pages, keyed(page, base, inputs).key
    return render


def with_parts(pages: Iterable[Page], writer: Writer) -> set[str]:
    """The paths of `pages` and of the part pages the manifest records for them."""
    found = set()
    for page in pages:
        found.add(page.path)
        if page.kind == "docs":
            found.update(part_paths(page.path, writer.manifest))
    return found


def _parts_unchanged(writer: Writer, page: Page) -> bool:
    """The part pages the manifest records for `page` are on disk as written with its key."""
    return all(writer.unchanged(part, page.key) for part in part_paths(page.path, writer.manifest))


def _removed(summary: Summary, writer: Writer, removed: list[str], conflicts: list[WriteResult]) -> None:
    """Pages the plan no longer has, deleted (with --check: reported stale), and those kept."""
    if writer.check:
        summary.stale.extend(WriteResult(p, Outcome.STALE, "would be removed") for p in removed)
    else:
        summary.removed.extend(removed)
    summary.conflicts.extend(conflicts)


@dataclass
class Writing:
    """What a run needs to carry out its plan: where it writes, how it renders, what it reports."""

    writer: Writer
    summary: Summary
    progress: ProgressFn | None = None
    cancel: CancelToken | None = None
    pause: Callable[[], None] | None = None
    how: Rendering | None = None
    prepare: Callable[[], None] = lambda: None  # before rendering the whole tree: every file's facts loaded
    settle: Callable[[Page], None] | None = None  # each page left or written as planned


def write_plan(plan: Plan, w: Writing) -> None:
    """Render and write the planned pages whose key changed, then delete what the plan says
    is gone; the writer holds the output folder. The caller saves the manifest once."""
    writer, summary = w.writer, w.summary
    todo = _todo(plan, w)
    # part pages the manifest records of the pages to render: those not made again are deleted
    parts_before = {page.path: part_paths(page.path, writer.manifest) for page in todo if page.kind == "docs"}
    if plan.whole:  # also clear what a killed run left
        writer.sweep_temporaries()
    elif plan.structural:  # pages of files and folders that vanished (and their part pages)
        removed, conflicts = writer.remove(set(writer.manifest) - with_parts(plan.pages, writer))
        summary.removed.extend(removed)
        summary.conflicts.extend(conflicts)
    if todo and plan.whole:
        w.prepare()
    parts_now = _render_todo(todo, w, len(plan.pages))
    stale_parts = {part for page, made in parts_now.items() for part in parts_before.get(page, ()) if part not in made}
    if stale_parts:  # part pages their page no longer has
        _removed(summary, writer, *writer.remove(stale_parts))
    if w.cancel is not None and w.cancel.is_set():
        summary.cancelled = True
    if plan.whole and not summary.cancelled:  # pages of vanished sources, known or only marked
        _removed(summary, writer, *writer.remove_stale(with_parts(plan.pages, writer)))


def _todo(plan: Plan, w: Writing) -> list[Page]:
    """The planned pages not on disk as planned (each left as it is counted unchanged and settled)."""
    todo = []
    for page in plan.pages:
        if not w.writer.check and w.writer.unchanged(page.path, page.key) and _parts_unchanged(w.writer, page):
            w.summary.unchanged += 1
            if w.settle is not None and page.path not in w.writer.anchors:
                w.settle(page)
        else:
            todo.append(page)
    return todo


def _render_todo(todo: list[Page], w: Writing, total: int) -> dict[str, set[str]]:
    """`todo` rendered and written, each outcome counted: page -> the part pages it has now (for
    each page whose render ended as planned)."""
    writer, summary = w.writer, w.summary
    planned = {page.path: page for page in todo}
    parts_now: dict[str, set[str]] = {}
    done = summary.unchanged
    assert w.how is not None
    for result, record in rendered(todo, w.how, writer, w.cancel, w.pause):
        done += 1
        if record is not None:
            writer.manifest[result.page] = record
        if result.page not in planned:  # a part page of the page before it
            parts_now.setdefault(page_of_part(result.page), set()).add(result.page)
            done -= 1  # counted with its page
        elif w.settle is not None and result.outcome in (Outcome.WRITTEN, Outcome.UNCHANGED):
            w.settle(planned[result.page])
        if result.page in planned and result.outcome in (Outcome.WRITTEN, Outcome.UNCHANGED, Outcome.STALE):
            parts_now.setdefault(result.page, set())
        summary.count(result)
        if w.progress and (done % 25 == 0 or done == total):
            w.progress("write", done, total, folder_of(result.page))
    return parts_now
