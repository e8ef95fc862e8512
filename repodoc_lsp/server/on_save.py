"""Regeneration on save: didSave, and files changed outside the editor (watched files).

Saves are collected per root and handled together after a short quiet time, on the
root's worker thread: hover and symbol requests are never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from repodoc_lsp.output.writer import OutputError
from repodoc_lsp.server import failures, ref_diagnostics
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

# Saves are handled after this much quiet time, but never later than MAX_WAIT_SECONDS after
# the first save of a burst: a stream of saves costs one regeneration per burst, not one each.
DEBOUNCE_SECONDS = 0.075
MAX_WAIT_SECONDS = 0.5
log = logging.getLogger(__name__)


class SaveQueue:
    def __init__(self, ls: RepodocServer) -> None:
        self.ls = ls
        self.pending: dict[Path, set[str]] = {}
        self.timers: dict[Path, asyncio.TimerHandle] = {}
        self.first_save: dict[Path, float] = {}

    def add(self, path: Path | None) -> None:
        root = self.ls.root_for(path)
        if root is None or path is None or self.ls.stopping:
            return  # outside every workspace folder: nothing to do
        out = root.ws.out
        if path.resolve() == out or out in path.resolve().parents:
            return  # our own pages (watchers report them too)
        self.pending.setdefault(root.path, set()).add(root.rel(path))
        loop = asyncio.get_running_loop()
        first = self.first_save.setdefault(root.path, loop.time())
        timer = self.timers.pop(root.path, None)
        if timer is not None:
            timer.cancel()
        delay = min(DEBOUNCE_SECONDS, max(0.0, first + MAX_WAIT_SECONDS - loop.time()))
        self.timers[root.path] = loop.call_later(delay, self.flush, root)

    def flush(self, root: Root) -> None:
        self.timers.pop(root.path, None)
        self.first_save.pop(root.path, None)
        rels = sorted(self.pending.pop(root.path, set()))
        if rels and not self.ls.stopping:
            self.ls.spawn(self.run(root, rels))

    async def run(self, root: Root, rels: list[str]) -> None:
        try:
            write = root.settings.regenerate_on_save and root.has_tree()  # else the index only
            ref_diagnostics.drop_checks(self.ls, root)  # checked again after this (`refresh_root`)
            summary = await asyncio.wrap_future(root.submit(root.regenerate, rels, write))
        except OutputError as exc:  # the folder cannot be written at all, or another run holds it
            failures.report_exception(self.ls, "on save", exc)
        except Exception:
            log.exception("regenerating %s failed", rels)
        else:
            failures.report(self.ls, "on save", summary)
        finally:
            while (settling := root.settling()) is not None:  # the workspace takes the saved files
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(settling)
            if not root.closed:  # the saved docs, and docs naming what a saved source changed
                ref_diagnostics.refresh_root(self.ls, root)

    def cancel(self) -> None:
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        self.pending.clear()
        self.first_save.clear()


def register(server: RepodocServer) -> None:
    queue = SaveQueue(server)
    server.on_shutdown.append(queue.cancel)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: RepodocServer, params: types.DidSaveTextDocumentParams) -> None:
        if ls.typing is not None:  # a saved doc's diagnostics now, not after its pages
            ls.typing.saved(params.text_document.uri)
        ls.files_changed()
        queue.add(path_of(params.text_document.uri))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: RepodocServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed()
        for change in params.changes:
            queue.add(path_of(change.uri))
