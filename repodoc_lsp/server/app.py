"""The server object and its lifecycle: initialize, settings, roots, background indexing."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from repodoc_lsp import __version__
from repodoc_lsp.analysis.cursor import Cursor
from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.config import Settings, apply, live_changes
from repodoc_lsp.discover import capped
from repodoc_lsp.server import ref_diagnostics
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.priority import Requests
from repodoc_lsp.server.protocol import RepodocProtocol
from repodoc_lsp.server.roots import project_folder, refusal
from repodoc_lsp.server.settings import SECTION, output_refusal, settings_for, unwrap
from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
MAX_OUTSIDE_CURSORS = 8  # jedi states kept for folders of files outside every root (hover only)
SYMBOLS_WAIT_SECONDS = 2.0  # workspace/symbol waits this long in all for a root's first index
SETTINGS_QUIET_SECONDS = 0.3  # a burst of settings changes is applied once, after this much quiet


class RepodocServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("repodoc-lsp", __version__, protocol_cls=RepodocProtocol, max_workers=4)
        self.roots: dict[Path, Root] = {}
        self.init_options: dict[str, Any] = {}
        self.editor_settings: dict[Path, dict[str, Any]] = {}
        self.told: set[str] = set()
        self.jedi = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repodoc-jedi")  # jedi: one thread
        self.cursors: dict[tuple[Path, str], Cursor] = {}  # jedi's state per folder and interpreter
        self.requests = Requests()  # hover and symbol requests in flight: background work waits
        self.background: set[asyncio.Task] = set()
        self.stopping = False
        self.save_queue: Any = None  # on_save.SaveQueue
        self._settings_timer: asyncio.TimerHandle | None = None
        self._settings_lock: asyncio.Lock | None = None  # one pull of the settings at a time

    def settings_changed(self) -> None:
        """The editor's settings changed: pull them (and rescan the roots they change) once the
        burst is over, not once per change (20 rescans piled up: RSS 148 -> 409 MB)."""
        if self._settings_timer is not None:
            self._settings_timer.cancel()
        self._settings_timer = asyncio.get_running_loop().call_later(
            SETTINGS_QUIET_SECONDS, lambda: self.spawn(self._apply_settings()))

    async def _apply_settings(self) -> None:
        self._settings_timer = None
        if self.stopping:
            return
        if self._settings_lock is None:
            self._settings_lock = asyncio.Lock()
        async with self._settings_lock:
            await pull_configuration(self, rebuild=True)

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
            self.cursors[key] = Cursor(folder, python_path)
        return self.cursors[key]

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
        root = Root(path, settings, pause=self.requests.step_aside)
        root.output_refused = output_refusal(path, self.editor_of(path), settings)
        if root.output_refused:
            self.tell(f"repodoc: {root.output_refused}; no pages are written for {root.path}",
                      types.MessageType.Error)
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

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """window/showMessage, once per distinct message."""
        if message not in self.told:
            self.told.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def supports_progress(self) -> bool:
        return bool(get_capability(self.client_capabilities, "window.work_done_progress", False))

    def stop_background(self) -> None:
        self.stopping = True
        for task in list(self.background):
            task.cancel()
        self.jedi.shutdown(wait=False, cancel_futures=True)
        for root in self.roots.values():
            root.close()

    # -- indexing ---------------------------------------------------------------------
    async def index_root(self, root: Root) -> None:
        """Scan a root on its own thread, reporting `RepoDoc: indexing` progress."""
        token = await self.begin_progress("RepoDoc: indexing", cancellable=False)
        progress = self.thread_progress(token, "analyse") if token else None
        try:
            await asyncio.wrap_future(root.submit(root.scan, progress))  # opens the cache, off the loop
            if root.ws.cache.problem:
                self.tell(f"repodoc: {root.ws.cache.problem}", types.MessageType.Warning)
            if (cap := capped(root.ws.discovery_skipped)) is not None:
                self.tell(f"repodoc: {root.path} has {cap.reason}", types.MessageType.Warning)
        except Exception as exc:  # a broken root must not take the server down
            if not root.closed:  # a closed root (folder removed, settings changed) stops anyhow
                log.exception("indexing %s failed", root.path)
                self.tell(f"repodoc: indexing {root.path} failed: {exc}", types.MessageType.Error)
        finally:
            root.indexed.set()
            if not root.closed:
                ref_diagnostics.refresh_root(self, root)  # documents opened meanwhile
            if token:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(
                    message=f"{len(root.ws.facts)} files indexed"))

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


def create_server() -> RepodocServer:
    server = RepodocServer()
    from repodoc_lsp.server import codelens, commands, hover, links, on_save, ref_diagnostics, references, symbols

    _register_lifecycle(server)
    for module in (hover, symbols, commands, on_save, references, codelens, links, ref_diagnostics):
        module.register(server)
    return server


def _folders(params: types.InitializeParams) -> list[Path]:
    paths = [path_of(f.uri) for f in params.workspace_folders or ()]
    if not paths and params.root_uri:
        paths = [path_of(params.root_uri)]
    if not paths and params.root_path:
        paths = [Path(params.root_path)]
    return [p for p in paths if p is not None and p.is_dir()]


def _register_lifecycle(server: RepodocServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: RepodocServer, params: types.InitializeParams) -> None:
        ls.init_options = unwrap(params.initialization_options)
        for folder in _folders(params):
            ls.add_root(folder)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RepodocServer, params: types.InitializedParams) -> None:
        await pull_configuration(ls)
        await register_watchers(ls)
        for root in list(ls.roots.values()):
            ls.spawn(ls.index_root(root))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RepodocServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = unwrap(params.settings) if isinstance(params.settings, dict) else {}
        if pushed:
            ls.init_options = {**ls.init_options, **pushed}
        ls.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: RepodocServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = path_of(folder.uri)
            if path is not None:
                ls.remove_root(path)
        for folder in params.event.added:
            path = path_of(folder.uri)
            if path and path.is_dir() and path.resolve() not in ls.roots and (root := ls.add_root(path)):
                ls.spawn(ls.index_root(root))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RepodocServer, params: types.DidOpenTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None or ls.stopping:
            return
        # Outside every workspace folder (the standard library, a vendored folder): hover only,
        # no root, nothing indexed or written there.
        root = ls.root_for(path)
        folder, python_path = (root.path, root.settings.python_path) if root else (project_folder(path), "")
        if path.suffix in PYTHON_SUFFIXES:  # hovers will follow: parse it for jedi now
            ls.jedi.submit(ls.cursor_for(folder, python_path).prepare, params.text_document.text, path)
        if root is not None and root.indexed.is_set():  # else the end of indexing does it
            ls.spawn(ref_diagnostics.refresh(ls, params.text_document.uri))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RepodocServer, params: None) -> None:
        ls.stopping = True
        if ls.save_queue is not None:
            ls.save_queue.cancel()
        # Pending requests to the client (progress, configuration): pygls cancels them after
        # this handler while iterating the very dict their callbacks shrink; cancel them here.
        current = getattr(ls.protocol, "msg_id", None)
        for msg_id, future in list(getattr(ls.protocol, "_request_futures", {}).items()):
            if msg_id != current and not future.done():
                future.cancel()
        for task in list(ls.background):
            task.cancel()


async def pull_configuration(ls: RepodocServer, rebuild: bool = False) -> None:
    """Ask the client for the `repodoc` section of each root; rebuild roots whose settings changed."""
    if get_capability(ls.client_capabilities, "workspace.configuration", False) and ls.roots:
        items = [types.ConfigurationItem(scope_uri=r.path.as_uri(), section=SECTION) for r in ls.roots.values()]
        try:
            answers = await asyncio.wait_for(
                ls.workspace_configuration_async(types.ConfigurationParams(items=items)), 5)
        except Exception:
            answers = []
        for root, answer in zip(list(ls.roots.values()), answers or [], strict=False):
            ls.editor_settings[root.path] = unwrap(answer)
    for path, root in list(ls.roots.items()):
        settings = ls.settings_of(path)
        if settings == root.given_settings:
            continue
        live = live_changes(root.given_settings, settings)
        if live is not None:  # hover mode, result limits: no need to index again
            root.given_settings, root.settings = settings, root.settings.replace(**live)
            continue
        root.close()
        fresh = ls.roots[path] = ls.make_root(path, settings)
        fresh.generated = root.generated
        if rebuild:  # at start-up, indexing begins once the settings are known
            ls.spawn(ls.index_root(fresh))


async def register_watchers(ls: RepodocServer) -> None:
    """Watch files changed outside the editor, when the client can register watchers."""
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [types.FileSystemWatcher(glob_pattern="**/*")]
    registration = types.Registration(
        id="repodoc-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))
    try:
        await asyncio.wait_for(ls.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])), 5)
    except Exception:
        log.warning("the client did not register the file watchers")
