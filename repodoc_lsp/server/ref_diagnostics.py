"""Stale references in open docs (Markdown, reST, text) and Python docstrings as diagnostics
(Warning, source `repodoc`), computed from the editor's text (saved or not): on open, at once on
save, CHANGE_QUIET_SECONDS after the last change while typing, and again for every open document
of a root after a save or a watched file changed its workspace; a quick fix replaces a stale name
or link with the suggestion (the preferred fix only when the suggestion is confident)."""

from __future__ import annotations

import asyncio
import logging
import posixpath
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.source import normalise_newlines
from repodoc_lsp.refs.check import Stale, check_doc, check_docstrings, ignored, is_doc
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
SOURCE = "repodoc"
CHANGE_QUIET_SECONDS = 0.3  # while typing: checked this long after the last change, not per keystroke


def wanted(rel: str, history: bool = False) -> bool:
    return rel.endswith(".py") or is_doc(rel, history)


def stale_in(root: Root, rel: str, text: str) -> list[Stale]:
    """The buffer's stale references (on the root's thread: the workspace does not change meanwhile)."""
    resolver = Resolver(root.ws, root.index)
    if rel.endswith(".py"):
        try:
            facts = analyse_source(posixpath.basename(rel), text.encode("utf-8", "surrogatepass"))
        except Exception:
            return []
        return check_docstrings(resolver, rel, facts, lambda: text)[0]
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
    try:
        found = await asyncio.wrap_future(root.submit(stale_in, root, rel, text))
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


class Typing:
    """Checks of documents being edited: one per document, CHANGE_QUIET_SECONDS after its last
    change (a newer change cancels the pending one), at once on save."""

    def __init__(self, ls: RepodocServer) -> None:
        self.ls = ls
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def changed(self, uri: str) -> None:
        self._drop(uri)
        if not self.ls.stopping:
            self.timers[uri] = asyncio.get_running_loop().call_later(CHANGE_QUIET_SECONDS, self._fire, uri)

    def saved(self, uri: str) -> None:
        """A saved doc is checked now (a saved source waits for the index: its save's refresh)."""
        self._drop(uri)
        path = path_of(uri)
        if path is not None and not path.name.endswith(".py") and not self.ls.stopping:
            self.ls.spawn(refresh(self.ls, uri))

    def closed(self, uri: str) -> None:
        self._drop(uri)
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def cancel(self) -> None:
        for uri in list(self.timers):
            self._drop(uri)

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
