"""A root's worker: its one thread, and where its pages are written.

Every change of a root's workspace runs on the worker's single thread, so scans, generation
and regeneration on save never overlap. Pages are written by the page pipeline
(`generate.run`) in the root's page process (`regen_process`: a replica of the workspace, so
hovers never share the interpreter with rendering), or by the same pipeline here when that
process cannot run (not started yet, still loading for a save, failed). The worker keeps the
process's bookkeeping: its failures, and the files whose pages were written here while it
ran (news to its replica, sent with the next job).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from repodoc_lsp.generate import RUN_ERRORS, Job, Summary, run
from repodoc_lsp.render import Renderer
from repodoc_lsp.server.regen_process import RegenProcess, RegenProcessError
from repodoc_lsp.workspace import CancelToken, ProgressFn, Workspace

log = logging.getLogger(__name__)
MAX_PROCESS_FAILURES = 3  # after this many, pages are written here


class Worker:
    def __init__(self, ws: Workspace, renderer: Renderer, name: str,
                 pause: Callable[[], None] | None = None) -> None:
        self.ws = ws
        self.renderer = renderer
        self.pause = pause  # called between units of background work: requests go first
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"repodoc-{name}")
        self.process: RegenProcess | None = None  # started by the first job
        self.failures = 0
        self._behind: set[str] = set()  # files whose pages were written here since it started
        self.closed = False

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future:
        """Run `fn` on the worker's thread."""
        return self._thread.submit(fn, *args, **kwargs)

    def restart(self) -> None:
        """A new page process, replica of the workspace as it is now (after a scan). It loads
        it (facts from the cache) while the server goes on."""
        self._stop()
        if self.closed or self.failures >= MAX_PROCESS_FAILURES:
            return
        try:
            self.process = RegenProcess(self.ws)
        except OSError as exc:
            self.failures = MAX_PROCESS_FAILURES
            log.warning("no page process (%s): pages are written in the server", exc)

    def write(self, job: Job, progress: ProgressFn | None = None, cancel: CancelToken | None = None) -> Summary:
        """Run `job` through the page pipeline: in the page process, else here. The whole tree
        waits for a process that is loading; files changed on disk do not (their pages are
        written here meanwhile). Afterwards this workspace holds the job's files too."""
        process = self._ready(job, cancel)
        if process is not None:
            sent = job if job.files is None else dataclasses.replace(
                job, files=tuple(sorted({*job.files, *self._behind})))
            try:
                summary = process.run(sent, progress, cancel)
            except RegenProcessError as exc:
                self._failed(exc, job)
            except RUN_ERRORS:  # its replica took the files before the run failed, as here
                self._caught_up(job)
                raise
            else:
                self._caught_up(job)
                return summary
        summary = run(self.ws, job, self.renderer, progress=progress, cancel=cancel, pause=self.pause)
        if self.process is not None and job.files is not None:
            self._behind.update(job.files)
        return summary

    def _caught_up(self, job: Job) -> None:
        """The process ran `job`: its replica holds what it was behind, and this workspace takes
        the job's files (facts from the cache the process filled)."""
        self._behind.clear()
        if job.files is not None:
            self.ws.update_files(job.files, pause=self.pause)

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
