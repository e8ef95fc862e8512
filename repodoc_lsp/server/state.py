"""One workspace root as the server holds it: analysed workspace, keyword index, worker.

Every change of a root's workspace runs on its worker's single thread, so scans,
generation and on-save regeneration never overlap; requests (hover, symbols) read the
index, which is safe to read while it is being filled. Pages are written by the worker
(`worker.py`: the page process, or this process when that cannot run).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repodoc_lsp.analysis.model import FileFacts, Language
from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.index import Entry, KeywordIndex, entries_of
from repodoc_lsp.output.manifest import has_manifest
from repodoc_lsp.output.writer import SERVER_FORCE, OutputError, Writer
from repodoc_lsp.pipeline.runtime import Runtime, settle
from repodoc_lsp.refs.scope import DottedStrings
from repodoc_lsp.render.paths import pages_of_file
from repodoc_lsp.server.worker import Worker
from repodoc_lsp.store.discover import rules_saved
from repodoc_lsp.store.workspace import CancelToken, ProgressFn, Workspace

if TYPE_CHECKING:  # the pipeline loads with the first run (`repodoc mcp` starts without it)
    from repodoc_lsp.pipeline.generate import Summary

log = logging.getLogger(__name__)
INDEX_BATCH = 256  # files whose symbols enter the index together
_NO_SYMBOLS = FileFacts(Language.TEXT, 0)  # `entries_of` it: a file's module entry alone


@dataclass(frozen=True)
class Run:
    """A run that wrote pages (`generate`: the whole tree; `save`: files changed on disk)."""

    kind: str
    when: float  # time.time() when it started
    summary: Summary | None  # None: it failed as a whole (`failure`)
    failure: str


class Root:
    def __init__(self, path: Path, settings: Settings, runtime: Runtime,
                 pause: Callable[[], None] | None = None) -> None:
        self.path = path.resolve()
        self.given_settings = settings
        if settings.templates:
            settings = settings.replace(templates=str((self.path / settings.templates).resolve()))
        self.settings = settings
        self.ws = Workspace(self.path, settings, runtime=runtime)
        self.index = KeywordIndex()
        self.dotted = DottedStrings()  # the code's dotted strings, for the checks of saved docs
        self._unindexed: set[str] = set()  # files whose index entries follow (`catch_up`)
        self._catching_up: Future | None = None  # `catch_up` queued on the root's thread
        self.worker = Worker(self.ws, settings.templates or None, self.path.name, pause,
                             on_taken=self._unindexed.update)
        self.ready = threading.Event()
        self.indexed = threading.Event()  # the first indexing ended (well or not)
        self.wait_until: float | None = None  # workspace/symbol waits for `indexed` until then
        self.generated = False  # repodoc.generate ran for this root in this session
        self.pause = pause  # called between units of background work: requests go first
        self._uris: dict[str, str] = {}
        self.closed = False
        self.output_refused = ""  # why no page may be written (README "Trust"); set by the server
        self.last_run: Run | None = None  # the last run that wrote (or tried to write) pages
        self.index_failure = ""  # why the last indexing failed ("": it did not)
        self.hover_warm = False  # jedi did what a first hover would (`Cursor.warm`)

    def uri(self, rel: str) -> str:
        """The file URI of a workspace file, remembered: a symbol answer needs up to 200."""
        from repodoc_lsp.server.convert import uri_of  # here: `repodoc mcp` loads no LSP types

        uri = self._uris.get(rel)
        if uri is None:
            uri = self._uris[rel] = uri_of(self.path / rel)
        return uri

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future:
        return self.worker.submit(fn, *args, **kwargs)  # on the root's thread

    def contains(self, path: Path) -> bool:
        try:
            path.resolve().relative_to(self.path)
            return True
        except ValueError:
            return False

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.path).as_posix()

    def has_tree(self) -> bool:
        """Saves write pages only into a tree that exists (its manifest) or that the person asked
        for in this session (repodoc.generate): a save never starts a docs folder by itself."""
        return self.generated or has_manifest(self.ws.out)

    # -- work on the root's thread -----------------------------------------------------
    def scan(self, progress: ProgressFn | None = None) -> None:
        """Analyse the workspace, filling the index as files are analysed."""
        if not self._scan(progress, self):
            return  # closed meanwhile (settings changed, folder removed): a new root takes over
        self._reindex_all()
        self.ready.set()

    def _scan(self, progress: ProgressFn | None, cancel: CancelToken | None) -> bool:
        """`Workspace.scan`, the index taking each file's entries as its facts arrive (all but its
        module's, known at the end): searches see files as they are analysed, 32 at a time."""
        batch: list[tuple[str, list[Entry]]] = []

        def on_facts(rel: str, facts: FileFacts) -> None:
            if self.pause is not None:  # between two files: requests go first (hovers while indexing)
                self.pause()
            batch.append((rel, entries_of(rel, facts)))
            if len(batch) >= 32:
                self.index.set_many(batch)
                batch.clear()
                self.index.refresh()  # here, not on the event loop (workspace/symbol: search_latest)

        if not self.ws.scan(progress=progress, on_facts=on_facts, cancel=cancel, release=True):
            return False
        self.index.set_many(batch)
        return True

    def is_set(self) -> bool:
        """The cancel token of this root's scans: set once it is closed."""
        return self.closed

    def _reindex_all(self) -> None:
        """After a scan (`_scan`): the index and the symbol graph take every file in one read. The
        files analysed by the scan need no facts: the index has their entries but their module's,
        and the scan sketched their graph views as they arrived. The others' facts (from the
        cache) are loaded a batch at a time, indexed and given to the graph, then forgotten: the
        index and the graph summarise them, and a request loads the file it needs (every file's
        facts held took 490 MB on the 17,150-file corpus)."""
        rels = list(self.ws.facts)
        module_of = self.ws.relations.module_of
        sketched = self.ws.sketched()
        if self.pause is not None:
            self.pause()
        self.index.add_many((rel, entries_of(rel, _NO_SYMBOLS, module)) for rel in sketched
                            if (module := module_of.get(rel, "")))

        def each(batch: list[tuple[str, FileFacts]]) -> None:
            if self.pause is not None:
                self.pause()
            self.index.set_many((rel, entries_of(rel, facts, module_of.get(rel, ""))) for rel, facts in batch)
            self.index.refresh()

        if self.ws.graph_ready is None:  # the graph's build reads the facts (a scan dropped the graph)
            self.ws.graph(each=each, pause=self.pause)  # hover's "used by", references, code lenses
        else:
            for rel in rels:
                if rel not in sketched:
                    each([(rel, facts)] if (facts := self.ws.facts.one(rel)) is not None else [])
        self.ws.by_name  # noqa: B018  # built here: the hover's "used by" of tree-sitter files (by name)
        self.ws.release_facts()
        self.index.retain(set(rels))
        self.index.warm()
        settle()  # what is alive now (index, graph) is left out of full collections

    def _entries(self, rel: str) -> list[Entry]:
        """A file's index entries, its module among them (known once the workspace is scanned)."""
        facts = self.ws.facts.one(rel)  # not `facts[rel]`: that loads every pending file's
        return entries_of(rel, facts, self.ws.relations.module_of.get(rel, "")) if facts is not None else []

    def generate(self, progress: ProgressFn | None = None, cancel: CancelToken | None = None, *,
                 force: bool = False) -> Summary:
        """Scan the workspace here, then write the whole tree through the worker (in the page
        process, started anew as a replica of this scan, or here if it cannot run); `force`
        overwrites pages a person edited after copying each to PAGE.orig."""
        if self.output_refused:
            raise OutputError(f"{self.output_refused}; no pages are written")
        return self._recorded("generate", self._generate, progress, cancel, force=force)

    def _generate(self, progress: ProgressFn | None, cancel: CancelToken | None, *, force: bool) -> Summary:
        from repodoc_lsp.pipeline.generate import Job, Summary

        started = time.perf_counter()
        self.generated = True
        if self._scan(progress, cancel):
            self.worker.forget_untaken()  # the scan read them
            self._unindexed.clear()
            self.worker.restart()  # it loads the workspace while the index is rebuilt
            self._reindex_all()
            summary = self.worker.write(Job(force=force, force_hint=SERVER_FORCE), progress, cancel)
            summary.analysed, summary.cached = self.ws.analysed, self.ws.cached  # the scan's counts
        else:  # cancelled (then nothing is written), as the CLI does
            summary = Summary(root=str(self.ws.root), out=str(self.ws.out), cancelled=True)
        summary.files, summary.skipped = len(self.ws.facts), self.ws.skipped
        summary.seconds = time.perf_counter() - started
        return summary

    def regenerate(self, rels: list[str], write: bool = True) -> Summary | None:
        """Files changed on disk: (write=True) rewrite their pages, and update the workspace and
        index. Pages written by the page process are answered at once: this workspace and the
        index take its files in `catch_up`, queued after the work waiting meanwhile (a save
        during a checkout's batch is answered right after the batch, not after the server has
        taken the batch's 1,500 files too)."""
        inputs = self._inputs(rels)
        if not inputs:
            return None
        summary = None
        if write and not self.output_refused:
            from repodoc_lsp.pipeline.generate import Job

            summary = self._recorded("save", self.worker.write, Job(files=tuple(inputs), force_hint=SERVER_FORCE))
        else:  # no pages asked: the workspace and index follow the files
            self.worker.catch_up()  # first what the process wrote (older than these)
            self.ws.update_files(inputs, pause=self.pause)
        self._unindexed.update(inputs)
        if self._catching_up is None or self._catching_up.done():  # else the queued one does it
            self._catching_up = self.submit(self.catch_up)
        return summary

    def catch_up(self) -> None:
        """On the root's thread: the workspace takes the files the page process wrote, and the
        index follows, a batch of files at a time; work queued meanwhile (a save) goes first,
        the rest of the index follows it."""
        self.worker.catch_up()
        # A batch at a time: each group of names the batch touches is sorted once (a file at a
        # time, 1,500 new files took 18 s on a loaded machine, and the save after them waited).
        gone = False
        while self._unindexed:
            if self.worker.queued():
                self._catching_up = self.submit(self.catch_up)
                break
            if self.pause is not None:
                self.pause()
            batch = sorted(self._unindexed)[:INDEX_BATCH]
            self._unindexed.difference_update(batch)
            present = [rel for rel in batch if rel in self.ws.facts]
            gone = gone or len(present) < len(batch)
            self.index.set_many((rel, self._entries(rel)) for rel in present)
        if gone:  # files gone: dropped together
            self.index.retain(set(self.ws.facts))
        # No snapshot here: the next search takes one, so a stream of saves without searches
        # costs no snapshots on this thread, which shares the interpreter with the hovers.

    def settling(self) -> Future | None:
        """The queued `catch_up`, if one is still to run (None: the workspace and index hold
        every file regenerated so far)."""
        future = self._catching_up
        return None if future is None or future.done() else future

    def _inputs(self, rels: list[str]) -> list[str]:
        """The input files among `rels`; a folder stands for every file below it, known or on
        disk (a watcher may report only a folder deleted, moved or moved in)."""
        inputs: dict[str, None] = {}
        if (rules := rules_saved(self.path, self.ws.settings, rels, self.ws.facts)) is not None:
            self.ws.filter, added, gone = rules  # a saved .gitignore: the files whose verdict it changed too
            rels = [*rels, *added, *gone]
        for rel in rels:
            path = self.path / rel
            if rel in self.ws.facts or (path.is_file() and self.ws.filter.is_input(path)):
                inputs[rel] = None
                continue
            prefix = rel.rstrip("/") + "/"
            inputs.update(dict.fromkeys(sorted(r for r in self.ws.facts if r.startswith(prefix))))
            for folder, _dirs, files in os.walk(path):  # nothing if it is gone or not a folder
                for name in sorted(files):
                    path = Path(folder, name)
                    if self.ws.filter.is_input(path):
                        inputs[path.relative_to(self.path).as_posix()] = None
        return list(inputs)

    def _recorded(self, kind: str, fn: Callable[..., Summary], *args: Any, **kwargs: Any) -> Summary:
        """`fn(*args, **kwargs)`, its summary (or the failure it raised) kept as `last_run`."""
        when = time.time()
        try:
            summary = fn(*args, **kwargs)
        except Exception as exc:
            self.last_run = Run(kind, when, None, str(exc) or type(exc).__name__)
            raise
        self.last_run = Run(kind, when, summary, "")
        return summary

    def status(self) -> dict[str, Any]:
        """What `repodoc.status` tells of this root: its folders, files, pages, last run and errors."""
        pages = len(Writer(self.ws.out).manifest) if has_manifest(self.ws.out) else 0
        errors = [f"indexing failed: {self.index_failure}"] if self.index_failure else []
        if self.output_refused:
            errors.append(self.output_refused)
        run = self.last_run
        last: dict[str, Any] | None = None
        if run is not None:
            when = datetime.fromtimestamp(run.when, timezone.utc).isoformat(timespec="seconds")
            last = {"kind": run.kind, "when": when, "failure": run.failure}
            if run.summary is not None:
                d = run.summary.as_dict()
                last.update({k: d[k] for k in ("written", "unchanged", "removed", "seconds", "cancelled")})
                last.update(conflicts=len(d["conflicts"]), errors=len(d["errors"]))
                errors += [f"{e['path']}: {e['reason']}" for e in d["errors"]]
            elif run.failure:
                errors.append(f"{run.kind} failed: {run.failure}")
        return {"root": str(self.path), "out": str(self.ws.out), "indexed": self.indexed.is_set(),
                "files": len(self.ws.facts), "skipped": len(self.ws.skipped), "pages": pages,
                "lastRun": last, "errors": errors, "hoverReady": self.hover_warm}

    def pages_for(self, rel: str) -> tuple[Path, Path]:
        docs, kw = pages_of_file(rel)
        return self.ws.out / docs, self.ws.out / kw

    def close(self) -> None:
        self.closed = True
        self.worker.close()
        self.ws.cache.close()
