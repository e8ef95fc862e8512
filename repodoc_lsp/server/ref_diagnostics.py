"""Stale references in open docs (Markdown, reST, text) and Python docstrings as diagnostics
(Warning, source `repodoc`), computed from the editor's text (saved or not): on open, at once on
save, CHANGE_QUIET_SECONDS after the last change while typing, and again for every open document
of a root after a save or a watched file changed its workspace; a quick fix replaces a stale name
or link with the suggestion (the preferred fix only when the suggestion is confident).

A Python buffer is parsed on a thread of its own and its references resolved on the root's
thread, where saves are handled too; a document has one parse and one check queued at most (a
newer version's drops the queued ones before they run, and a save drops them: twelve pauses in
a 1.3 MB buffer queued twelve full analyses on the root's thread, and the next save's pages
waited 113-141 s behind them), and a document over max-file-bytes is not checked at all, as
such a file is not analysed."""

from __future__ import annotations

import asyncio
import logging
import posixpath
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.source import normalise_newlines
from repodoc_lsp.refs.check import Stale, check_doc, check_docstrings, ignored, is_doc
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.server.convert import over_limit, path_of
from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
SOURCE = "repodoc"
CHANGE_QUIET_SECONDS = 0.3  # while typing: checked this long after the last change, not per keystroke


def wanted(rel: str, history: bool = False) -> bool:
    return rel.endswith(".py") or is_doc(rel, history)


def analysed(rel: str, text: str) -> FileFacts | None:
    """A Python buffer's facts (None: it cannot be analysed). Pure: on the buffers' thread, so the
    root's thread (saves) does not wait while a large buffer is parsed."""
    try:
        return analyse_source(posixpath.basename(rel), text.encode("utf-8", "surrogatepass"))
    except Exception:
        return None


def stale_in(root: Root, rel: str, text: str, facts: FileFacts | None = None) -> list[Stale]:
    """The buffer's stale references (on the root's thread: the workspace does not change meanwhile);
    a Python buffer's from its `facts`."""
    resolver = Resolver(root.ws, root.index)
    resolver.names.known_strings(root.dotted.of(root.ws))
    if rel.endswith(".py"):
        return check_docstrings(resolver, rel, facts, lambda: text)[0] if facts is not None else []
    return check_doc(resolver, rel, text)[0]


def _diagnostic(s: Stale, lines: list[str], ls: RepodocServer) -> types.Diagnostic:
    line = lines[s.line - 1].rstrip("\r\n") if 0 < s.line <= len(lines) else ""
    start, end = s.col, s.col + len(s.text)
    if not line.isascii():
        codec = ls.position_codec
        start, end = codec.client_num_units(line[:start]), codec.client_num_units(line[:end])
    rng = types.Range(start=types.Position(line=s.line - 1, character=start),
                      end=types.Position(line=s.line - 1, character=end))
    return types.Diagnostic(range=rng, message=s.describe(), severity=types.DiagnosticSeverity.Warning,
                            source=SOURCE,
                            data={"suggestion": s.suggestion, "preferred": s.sure} if s.suggestion else None)


async def refresh(ls: RepodocServer, uri: str) -> None:
    """Compute and publish the diagnostics of one open document (none outside every root)."""
    path = path_of(uri)
    root = ls.root_for(path)
    if root is None or path is None or ls.stopping or not root.indexed.is_set():
        return  # a root being indexed: the end of indexing refreshes every open document
    rel = root.rel(path)
    if not wanted(rel, root.settings.refs_history) or ignored(root.settings)(rel):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        return
    if uri not in ls.open_documents():
        return  # closed meanwhile
    document = ls.document(uri)
    text, version = document.source, document.version
    typing = ls.typing
    if not isinstance(typing, Typing):
        return
    if size := over_limit(text, root.settings.max_file_bytes):
        typing.drop_check(uri)
        typing.too_large(uri, rel, size, root.settings.max_file_bytes)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[]))
        return
    typing.told.discard(uri)
    try:
        facts = None
        if rel.endswith(".py"):  # parsed off the root's thread, then resolved on it
            future = typing.analyses.submit(uri, typing.thread.submit, analysed, rel, text)
            facts = await asyncio.wrap_future(future)
        future = typing.checks.submit(uri, root.submit, stale_in, root, rel, text, facts)
        found = await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        if future.cancelled():  # dropped before it ran: a newer check, or a save, takes over
            return
        raise
    except Exception:  # a closed root, or a bug: no diagnostics rather than a broken server
        log.exception("checking references of %s failed", rel)
        return
    if uri not in ls.open_documents() or ls.document(uri).version != version:
        return  # changed or closed meanwhile: the newer text's own check publishes
    lines = normalise_newlines(text).split("\n")  # the lines the references were found on (LSP's)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, version=document.version, diagnostics=[_diagnostic(s, lines, ls) for s in found]))


def refresh_root(ls: RepodocServer, root: Root) -> None:
    """After the workspace changed (indexed, a source saved): every open document of the root again."""
    for uri in ls.open_documents():
        path = path_of(uri)
        if path is not None and ls.root_for(path) is root:
            ls.spawn(refresh(ls, uri))


def drop_checks(ls: RepodocServer, root: Root) -> None:
    """Changed files of `root` go to its thread: the checks of its documents still queued there are
    dropped (`refresh_root` checks every open document again once the workspace has them)."""
    checks = ls.typing.checks if isinstance(ls.typing, Typing) else Latest()
    for uri in list(checks.queued):
        if ls.root_for(path_of(uri)) is root:
            checks.drop(uri)


class Latest:
    """Work queued per key (a document), one at a time: submitting for a key drops (cancels) the
    work still queued for it, so only its newest is run; work already running runs to its end."""

    def __init__(self) -> None:
        self.queued: dict[str, Future] = {}
        self.dropped = 0  # work dropped before it ran
        self._lock = threading.Lock()  # work ends on the thread it runs on

    def submit(self, key: str, submit: Callable[..., Future], fn: Callable[..., Any], *args: Any) -> Future:
        future = submit(fn, *args)
        with self._lock:
            previous, self.queued[key] = self.queued.get(key), future
        self._cancel(previous)
        future.add_done_callback(lambda done: self._forget(key, done))
        return future

    def drop(self, key: str) -> None:
        with self._lock:
            previous = self.queued.pop(key, None)
        self._cancel(previous)

    def _cancel(self, future: Future | None) -> None:
        if future is not None and future.cancel():
            self.dropped += 1

    def _forget(self, key: str, done: Future) -> None:
        with self._lock:
            if self.queued.get(key) is done:
                del self.queued[key]


class Typing:
    """Checks of documents being edited: one per document, CHANGE_QUIET_SECONDS after its last
    change (a newer change cancels the pending one), at once on save. A Python buffer is parsed
    on the buffers' thread (`thread`, one analysis queued per document: `analyses`), its
    references resolved on the root's thread (one queued per document: `checks`)."""

    def __init__(self, ls: RepodocServer) -> None:
        self.ls = ls
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repodoc-buffers")
        self.analyses = Latest()
        self.checks = Latest()
        self.told: set[str] = set()  # documents over max-file-bytes whose skip is logged

    def drop_check(self, uri: str) -> None:
        self.analyses.drop(uri)
        self.checks.drop(uri)

    def too_large(self, uri: str, rel: str, size: int, limit: int) -> None:
        """Logged once while the document is open (and small enough again in between)."""
        if uri not in self.told:
            self.told.add(uri)
            log.warning("%s is not checked while open: %s bytes, over max-file-bytes (%s)", rel,
                        f"{size:,}", f"{limit:,}")

    def changed(self, uri: str) -> None:
        self._drop(uri)
        if not self.ls.stopping:
            self.timers[uri] = asyncio.get_running_loop().call_later(CHANGE_QUIET_SECONDS, self._fire, uri)

    def saved(self, uri: str) -> None:
        """A saved doc is checked now (a saved source waits for the index: its save's refresh);
        the check queued for an older text is dropped, so the save's pages do not wait for it."""
        self._drop(uri)
        self.drop_check(uri)
        path = path_of(uri)
        if path is not None and not path.name.endswith(".py") and not self.ls.stopping:
            self.ls.spawn(refresh(self.ls, uri))

    def closed(self, uri: str) -> None:
        self._drop(uri)
        self.drop_check(uri)
        self.told.discard(uri)
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def cancel(self) -> None:
        for uri in list(self.timers):
            self._drop(uri)
        self.thread.shutdown(wait=False, cancel_futures=True)

    def _drop(self, uri: str) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def _fire(self, uri: str) -> None:
        self.timers.pop(uri, None)
        if not self.ls.stopping:
            self.ls.spawn(refresh(self.ls, uri))


def register(server: RepodocServer) -> None:
    typing = server.typing = Typing(server)
    server.on_shutdown.append(typing.cancel)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RepodocServer, params: types.DidChangeTextDocumentParams) -> None:
        typing.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RepodocServer, params: types.DidCloseTextDocumentParams) -> None:
        typing.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: RepodocServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        actions = []
        for d in params.context.diagnostics:
            suggestion = _suggestion(d.data) if d.source == SOURCE else ""
            if suggestion:
                edit = types.WorkspaceEdit(changes={params.text_document.uri: [
                    types.TextEdit(range=d.range, new_text=suggestion)]})
                actions.append(types.CodeAction(title=f"Replace with `{suggestion}`",
                                                kind=types.CodeActionKind.QuickFix, diagnostics=[d], edit=edit,
                                                is_preferred=_preferred(d.data)))
        return actions or None


def _preferred(data: Any) -> bool:
    """Only a confident suggestion (a rename, a close name of the same kind) is the preferred fix."""
    return isinstance(data, dict) and data.get("preferred") is True


def _suggestion(data: Any) -> str:
    value = data.get("suggestion") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""
