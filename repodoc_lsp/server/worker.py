"""A root's worker: its one thread, and where its pages are written.

Every change of a root's workspace runs on the worker's single thread, so scans, generation
and regeneration on save never overlap. Pages are written by the page pipeline
(`generate.run`) in the root's page process (`regen_process`: a replica of the workspace, so
hovers never share the interpreter with rendering), or by the same pipeline here when that
process cannot run (not started yet, still loading for a save, failed). The worker keeps the
process's bookkeeping: its failures, the files whose pages were written here while it ran
(news to its replica, sent with the next job), and the files it wrote that this workspace has
not taken yet (the process sends their states: this workspace takes them in `catch_up`, after
the saves queued meanwhile, so a save after a checkout of 1,500 files is not kept waiting).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repodoc_lsp.server.regen_process import RegenProcess, RegenProcessError
from repodoc_lsp.store.workspace import CancelToken, FileState, ProgressFn, Workspace

if TYPE_CHECKING:  # the pipeline and the templates load with the first page written here
    from repodoc_lsp.pipeline.generate import Job, Summary
    from repodoc_lsp.render.pages import Renderer

log = logging.getLogger(__name__)
MAX_PROCESS_FAILURES = 3  # after this many, pages are written here


class Worker:
    def __init__(self, ws: Workspace, templates: str | Path | None, name: str,
                 pause: Callable[[], None] | None = None,
                 on_taken: Callable[[list[str]], None] | None = None) -> None:
        self.ws = ws
        self.templates = templates  # of the pages written here (`renderer`)
        self._renderer: Renderer | None = None
        self.pause = pause  # called between units of background work: requests go first
        self.on_taken = on_taken  # told the files this workspace took from the process
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"repodoc-{name}")
        self._queued = 0  # work submitted, not started
        self._counting = threading.Lock()
        self.process: RegenProcess | None = None  # started by the first job
        self.failures = 0
        self._behind: set[str] = set()  # files whose pages were written here since it started
        # files the process wrote that this workspace has not taken: their states as the process
        # holds them (None: read from disk, the facts from the cache the process filled)
        self._untaken: dict[str, FileState | None] = {}
        self.closed = False

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future:
        """Run `fn` on the worker's thread."""
        def started() -> Any:
            with self._counting:
                self._queued -= 1
            return fn(*args, **kwargs)

        with self._counting:
            self._queued += 1
        try:
            return self._thread.submit(started)
        except RuntimeError:  # shut down
            with self._counting:
                self._queued -= 1
            raise

    @property
    def renderer(self) -> Renderer:
        """The renderer of the pages written here, made when first needed: most roots write theirs in
        the page process, `repodoc mcp` writes none (made with the root, it was a good part of its start)."""
        if self._renderer is None:
            from repodoc_lsp.render.pages import Renderer

            self._renderer = Renderer(self.templates)
        return self._renderer

    def template_failure(self) -> str:
        """Why the pages' templates do not compile ("": they do). Repodoc's own do; a person's may
        not: the TemplateFailure `renderer` raises says which file and line."""
        from repodoc_lsp.render.environment import TemplateFailure

        try:
            if self.templates is not None:
                self.renderer  # noqa: B018 (made once, on first use)
        except TemplateFailure as exc:
            return str(exc)
        return ""

    def queued(self) -> bool:
        """Work waits for the worker's thread (long work lets it go first)."""
        return self._queued > 0

    def restart(self) -> None:
        """A new page process, replica of the workspace as it is now (after a scan, or with
        what the last process wrote taken). It loads it (facts from the cache) while the server
        goes on."""
        self._stop()
        if self.closed or self.failures >= MAX_PROCESS_FAILURES:
            return
        if self.template_failure():  # the process would fail to start: a job fails here, before any page
            return
        self.catch_up()
        try:
            self.process = RegenProcess(self.ws)
        except OSError as exc:
            self.failures = MAX_PROCESS_FAILURES
            log.warning("no page process (%s): pages are written in the server", exc)

    def write(self, job: Job, progress: ProgressFn | None = None, cancel: CancelToken | None = None) -> Summary:
        """Run `job` through the page pipeline: in the page process, else here. The whole tree
        waits for a process that is loading; files changed on disk do not (their pages are
        written here meanwhile). Files the process wrote are this workspace's after `catch_up`;
        a job written here first takes them (the pipeline reads this workspace)."""
        from repodoc_lsp.pipeline.generate import RUN_ERRORS, run

        process = self._ready(job, cancel)
        if process is not None:
            sent = job if job.files is None else dataclasses.replace(
                job, files=tuple(sorted({*job.files, *self._behind})))
            try:
                ran = process.run(sent, progress, cancel)
            except RegenProcessError as exc:
                self._failed(exc, job)
            except RUN_ERRORS:  # its replica took the files before the run failed, as here
                self._ran(sent, None)
                raise
            else:
                self._ran(sent, ran.states)
                return ran.summary
        self.catch_up()
        summary = run(self.ws, job, self.renderer, progress=progress, cancel=cancel, pause=self.pause)
        if self.process is not None and job.files is not None:
            self._behind.update(job.files)
        return summary

    def _ran(self, job: Job, states: dict[str, FileState] | None) -> None:
        """The process ran `job`: its replica holds what it was behind, and its files are for
        this workspace to take (`catch_up`)."""
        self._behind.clear()
        for rel in job.files or ():
            self._untaken[rel] = states.get(rel) if states is not None else None

    def untaken(self) -> bool:
        """Files the process wrote wait for `catch_up`."""
        return bool(self._untaken)

    def catch_up(self) -> None:
        """This workspace takes the files the process wrote: as it sent them (nothing read or
        analysed again), else from disk with facts from the cache it filled; in one batch."""
        if not self._untaken:
            return
        untaken, self._untaken = self._untaken, {}
        known = {rel: state for rel, state in untaken.items() if state is not None}
        self.ws.update_files(untaken, pause=self.pause, known=known)
        if self.on_taken is not None:
            self.on_taken(list(untaken))

    def forget_untaken(self) -> None:
        """This workspace was scanned anew: what the process wrote before is in it already."""
        self._untaken.clear()

    def _ready(self, job: Job, cancel: CancelToken | None) -> RegenProcess | None:
        """The page process if it is ready (for the whole tree: once it is); None: write here
        (the first job starts it)."""
        wait = job.files is None
        if self.process is None:
            self.restart()
            if not wait:
                return None
        process = self.process
        if process is None:
            return None
        try:
            return process if process.ready(wait=wait, cancel=cancel) else None
        except RegenProcessError as exc:
            self._failed(exc, job)
            return None

    def _failed(self, exc: RegenProcessError, job: Job) -> None:
        """The process failed (it is gone): `job` is written here. A new process is started
        for the next save at once; after a whole tree, by the next job (it would load its
        replica while this process writes the tree)."""
        log.warning("%s; writing the pages in the server", exc)
        self.failures += 1
        if job.files is None:
            self._stop()
        else:
            self.restart()

    def _stop(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None
        self._behind.clear()

    def close(self) -> None:
        """No more work: the thread ends after the work under way, the page process with it."""
        self.closed = True
        self._thread.shutdown(wait=False, cancel_futures=True)
        self._stop()
