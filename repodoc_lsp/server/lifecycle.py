"""The server's lifecycle: initialize, settings (pulled after a burst of changes), workspace
folders as roots, indexing each root in the background, open documents, shutdown."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability

from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.config import live_changes
from repodoc_lsp.server import failures, hover, ref_diagnostics
from repodoc_lsp.server.convert import EditorWorkspace, path_of
from repodoc_lsp.server.roots import project_folder
from repodoc_lsp.server.server import RepodocServer
from repodoc_lsp.server.settings import SECTION, unwrap
from repodoc_lsp.server.state import Root
from repodoc_lsp.store.discover import capped
from repodoc_lsp.words import plural

log = logging.getLogger(__name__)
SETTINGS_QUIET_SECONDS = 0.3  # a burst of settings changes is applied once, after this much quiet


async def index_root(ls: RepodocServer, root: Root) -> None:
    """Scan a root on its own thread, reporting `RepoDoc: indexing` progress."""
    token = await ls.begin_progress("RepoDoc: indexing", cancellable=False)
    progress = ls.thread_progress(token, "analyse") if token else None
    try:
        await check_templates(ls, root)
        await asyncio.wrap_future(root.submit(root.scan, progress))  # opens the cache, off the loop
        if root.ws.cache.problem:
            ls.tell(f"repodoc: {root.ws.cache.problem}", types.MessageType.Warning)
        if (cap := capped(root.ws.discovery_skipped)) is not None:
            ls.tell(f"repodoc: {root.path} has {cap.reason}", types.MessageType.Warning)
    except Exception as exc:  # a broken root must not take the server down
        if not root.closed:  # a closed root (folder removed, settings changed) stops anyhow
            root.index_failure = str(exc) or type(exc).__name__
            log.exception("indexing %s failed", root.path)
            ls.tell(f"repodoc: indexing {root.path} failed: {exc}", types.MessageType.Error)
    finally:
        root.indexed.set()
        if not root.closed:
            ref_diagnostics.refresh_root(ls, root)  # documents opened meanwhile
            hover.warm(ls, root)  # the first hover as fast as the next
        if token:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message=f"{plural(len(root.ws.facts), 'file')} indexed"))


async def check_templates(ls: RepodocServer, root: Root) -> None:
    """A person's templates that do not compile are told as the root starts, naming the file and line
    (as `repodoc generate` does), not at the first page: no page is written until they compile;
    hovers and symbols go on."""
    if root.worker.templates and (failure := await asyncio.wrap_future(root.submit(root.worker.template_failure))):
        ls.tell(f"repodoc: error: {failure} (templates: {root.worker.templates}); no page is written until "
                "they compile", types.MessageType.Error)


class SettingsBurst:
    """The editor's settings changed: pull them (and rescan the roots they change) once the
    burst is over, not once per change (20 rescans piled up: RSS 148 -> 409 MB)."""

    def __init__(self, ls: RepodocServer) -> None:
        self.ls = ls
        self.timer: asyncio.TimerHandle | None = None
        self.lock: asyncio.Lock | None = None  # one pull of the settings at a time

    def changed(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(
            SETTINGS_QUIET_SECONDS, lambda: self.ls.spawn(self.apply()))

    async def apply(self) -> None:
        self.timer = None
        if self.ls.stopping:
            return
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            await pull_configuration(self.ls, rebuild=True)


def _folders(params: types.InitializeParams) -> list[Path]:
    paths = [path_of(f.uri) for f in params.workspace_folders or ()]
    if not paths and params.root_uri:
        paths = [path_of(params.root_uri)]
    if not paths and params.root_path:
        paths = [Path(params.root_path)]
    return [p for p in paths if p is not None and p.is_dir()]


def register(server: RepodocServer) -> None:
    burst = SettingsBurst(server)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RepodocServer, params: types.InitializeParams) -> None:
        ls.workspace.__class__ = EditorWorkspace  # made by pygls just before; no document open yet
        ls.init_options = unwrap(params.initialization_options)
        failures.log_to_client(ls)
        for folder in _folders(params):
            ls.add_root(folder)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RepodocServer, params: types.InitializedParams) -> None:
        await pull_configuration(ls)
        await register_watchers(ls)
        for root in list(ls.roots.values()):
            ls.spawn(index_root(ls, root))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RepodocServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = unwrap(params.settings) if isinstance(params.settings, dict) else {}
        if pushed:
            ls.init_options = {**ls.init_options, **pushed}
        burst.changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: RepodocServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = path_of(folder.uri)
            if path is not None:
                ls.remove_root(path)
        for folder in params.event.added:
            path = path_of(folder.uri)
            if path and path.is_dir() and path.resolve() not in ls.roots and (root := ls.add_root(path)):
                ls.spawn(index_root(ls, root))

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
        for clean_up in ls.on_shutdown:
            clean_up()
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
            ls.spawn(index_root(ls, fresh))


async def register_watchers(ls: RepodocServer) -> None:
    """Watch files changed outside the editor, when the client can register watchers."""
    if not ls.watches_files():
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
