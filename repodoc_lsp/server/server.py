"""The server type: roots, jedi's states, settings, messages and progress. It registers
nothing: the feature modules import it and register their handlers on it (`app.FEATURES`)."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp import __version__
from repodoc_lsp.analysis.cursor import Cursor
from repodoc_lsp.config import Settings, apply, output_notice
from repodoc_lsp.pipeline.pool import end_children
from repodoc_lsp.pipeline.runtime import Runtime
from repodoc_lsp.server.document_memo import DocumentMemo
from repodoc_lsp.server.priority import Requests
from repodoc_lsp.server.protocol import RepodocProtocol, run_stdio
from repodoc_lsp.server.roots import refusal
from repodoc_lsp.server.settings import output_refusal, settings_for
from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
MAX_OUTSIDE_CURSORS = 8  # jedi states kept for folders of files outside every root (hover only)
SYMBOLS_WAIT_SECONDS = 2.0  # workspace/symbol waits this long in all for a root's first index
EXIT_SECONDS = 2.0  # at exit, a regeneration process finishes the pages under way for this long


class RepodocServer(LanguageServer):
    def __init__(self, runtime: Runtime) -> None:
        super().__init__("repodoc-lsp", __version__, protocol_cls=RepodocProtocol, max_workers=4)
        self.runtime = runtime  # chosen by the entry point (`runtime.enter_server`)
        self.roots: dict[Path, Root] = {}
        self.init_options: dict[str, Any] = {}
        self.editor_settings: dict[Path, dict[str, Any]] = {}
        self.told: set[str] = set()
        self.jedi = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repodoc-jedi")  # jedi: one thread
        self.cursors: dict[tuple[Path, str], Cursor] = {}  # jedi's state per folder and interpreter
        self.code_hovers = DocumentMemo()  # the other languages' hovers: what they keep of documents
        self.requests = Requests()  # hover and symbol requests in flight: background work waits
        if isinstance(self.protocol, RepodocProtocol):  # from their reading to their answer's writing
            self.protocol.requests = self.requests
        self.background: set[asyncio.Task] = set()
        self.stopping = False
        self.on_shutdown: list[Callable[[], None]] = []  # features' own clean-up at `shutdown`
        self.typing: Any = None  # ref_diagnostics.Typing: checks of documents being edited

    def _start_io_async(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio server, its input read by a thread of its own (`protocol.run_stdio`)."""
        assert isinstance(self.protocol, RepodocProtocol)
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(run_stdio(self._stop_event, stdin or sys.stdin.buffer, self.protocol,
                                  self.report_server_error))
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # -- roots ----------------------------------------------------------------------
    def root_for(self, path: Path | None) -> Root | None:
        if path is None:
            return None
        best = None
        for root in self.roots.values():
            if root.contains(path) and (best is None or len(str(root.path)) > len(str(best.path))):
                best = root
        return best

    def cursor_for(self, folder: Path, python_path: str) -> Cursor:
        """jedi's state for a root folder (or the folder of a file outside every root)."""
        key = (folder, python_path)
        if key not in self.cursors:
            outside = [k for k in self.cursors if k[0] not in self.roots]
            if folder not in self.roots and len(outside) >= MAX_OUTSIDE_CURSORS:
                del self.cursors[outside[0]]  # folders outside every root: the oldest goes
            self.cursors[key] = Cursor(folder, python_path, keep=self.watches_files())
        return self.cursors[key]

    def watches_files(self) -> bool:
        """The client reports files changed outside it (`lifecycle.register_watchers`): Neovim on
        Linux does not, by default."""
        return bool(get_capability(self.client_capabilities,
                                   "workspace.did_change_watched_files.dynamic_registration", False))

    def files_changed(self) -> None:
        """Files changed on disk: jedi's kept inference is worked out again at the next hover."""
        for cursor in self.cursors.values():
            cursor.forget()

    def forget_cursors(self, folder: Path) -> None:
        """Drop jedi's state (its caches) for a folder that is no longer a root."""
        for key in [k for k in self.cursors if k[0] == folder]:
            del self.cursors[key]

    def editor_of(self, path: Path) -> dict[str, Any]:
        return {**self.init_options, **self.editor_settings.get(path.resolve(), {})}

    def settings_of(self, path: Path) -> Settings:
        """Settings of a root; a bad value is told to the user once and replaced by its default."""
        settings, problems = settings_for(path, self.editor_of(path))
        for problem in problems:
            self.tell(f"repodoc: {problem}; using the default", types.MessageType.Warning)
        return settings

    def outside_settings(self) -> Settings:
        """Settings for a file outside every root (hover only): the editor's, over the defaults;
        nothing is read from the folder the file is in."""
        settings, problems = apply(Settings(), self.init_options, source="settings", strict=False)
        for problem in problems:
            self.tell(f"repodoc: {problem}; using the default", types.MessageType.Warning)
        return settings

    def make_root(self, path: Path, settings: Settings | None = None) -> Root:
        settings = settings or self.settings_of(path)
        root = Root(path, settings, self.runtime, pause=self.requests.step_aside)
        self.code_hovers.clear()  # its settings may analyse documents otherwise
        root.output_refused = output_refusal(path, self.editor_of(path), settings)
        if root.output_refused:
            self.tell(f"repodoc: {root.output_refused}; no pages are written for {root.path}",
                      types.MessageType.Error)
        elif notice := output_notice(path, settings):  # `docs/` is the project's own documentation
            self.tell(f"{notice} ({root.path})", types.MessageType.Info)
        return root

    def add_root(self, folder: Path) -> Root | None:
        """A workspace folder becomes a root unless `roots.refusal` says why not (told once)."""
        why = refusal(folder)
        if why:
            self.tell(f"repodoc: {why}: not indexed, no pages; files there get hover only",
                      types.MessageType.Warning)
            return None
        real = folder.resolve()
        if real not in self.roots:
            self.roots[real] = self.make_root(folder)
        return self.roots[real]

    def remove_root(self, folder: Path) -> None:
        """A workspace folder removed: its root is closed (threads, cache, regeneration process)."""
        root = self.roots.pop(folder.resolve(), None)
        if root is not None:
            root.close()
            self.forget_cursors(root.path)
            self.code_hovers.clear()

    async def until_indexed(self) -> None:
        """Wait for roots not indexed yet, at most SYMBOLS_WAIT_SECONDS from the first wait for each."""
        loop = asyncio.get_running_loop()
        while True:
            waiting = [r for r in self.roots.values() if not r.indexed.is_set()]
            for root in waiting:
                if root.wait_until is None:
                    root.wait_until = loop.time() + SYMBOLS_WAIT_SECONDS
            if not any(loop.time() < r.wait_until for r in waiting if r.wait_until is not None):
                return
            await asyncio.sleep(0.02)

    def tell(self, message: str, message_type: types.MessageType = types.MessageType.Info) -> None:
        """window/showMessage, once per distinct message."""
        if message not in self.told:
            self.told.add(message)
            self.window_show_message(types.ShowMessageParams(type=message_type, message=message))

    # -- open documents: pygls keeps them in what it calls the workspace (`self.workspace`);
    # repodoc's workspace is a root's `ws`. Features read documents through these only.
    def document(self, uri: str) -> TextDocument:
        return self.workspace.get_text_document(uri)

    def open_documents(self) -> list[str]:
        """The URIs of the documents open in the editor."""
        return list(self.workspace.text_documents)

    @property
    def position_codec(self) -> PositionCodec:
        """Code points <-> the client's units (utf-16 for VS Code, utf-8 for Neovim 0.11)."""
        return self.workspace.position_codec

    def spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def supports_progress(self) -> bool:
        return bool(get_capability(self.client_capabilities, "window.work_done_progress", False))

    def stop_background(self) -> None:
        """At exit: stop the background work, and end every child process (the regeneration
        processes get EXIT_SECONDS to finish the pages under way; then each child is killed,
        a stopped one too, and waited for)."""
        self.stopping = True
        for task in list(self.background):
            task.cancel()
        self.jedi.shutdown(wait=False, cancel_futures=True)
        writing = [root.worker.process.pid for root in self.roots.values() if root.worker.process is not None]
        for root in self.roots.values():
            root.close()
        end_children([pid for pid in writing if pid is not None], EXIT_SECONDS)

    async def begin_progress(self, title: str, *, cancellable: bool) -> str | None:
        if not self.supports_progress():
            return None
        token = f"repodoc-{title.split()[-1]}-{time.monotonic_ns()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            return None
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=title, cancellable=cancellable, percentage=0))
        return token

    def thread_progress(self, token: str, only_phase: str | None = None,
                        cancel: threading.Event | None = None) -> Any:
        """A progress callback for worker threads: reports on the event loop, at most 10 a second,
        and turns a user's cancel of the token into `cancel` at once (not at the next report: the
        rest of the work may take less time than the wait for it)."""
        loop = asyncio.get_running_loop()
        last = [0.0]
        fut = self.work_done_progress.tokens.get(token)
        if cancel is not None and fut is not None:
            fut.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)

        def progress(phase: str, done: int, total: int, where: str) -> None:
            if only_phase and phase != only_phase:
                return
            now = time.monotonic()
            if now - last[0] < 0.1 and done != total:
                return
            last[0] = now
            label = "analysing" if phase == "analyse" else "writing"
            report = types.WorkDoneProgressReport(
                message=f"{done}/{total}" if only_phase else f"{label} {done}/{total}",
                percentage=int(100 * done / total) if total else 100)
            loop.call_soon_threadsafe(self.work_done_progress.report, token, report)

        return progress
