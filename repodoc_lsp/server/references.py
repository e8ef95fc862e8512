"""textDocument/references for workspace definitions, answered from the symbol graph
(no jedi: every file that names the definition, through imports and re-exports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.graph import Graph, Key
from repodoc_lsp.regular import read_regular
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.xref import target

if TYPE_CHECKING:
    from repodoc_lsp.server.app import RepodocServer
    from repodoc_lsp.server.state import Root


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: RepodocServer, params: types.ReferenceParams) -> list[types.Location] | None:
        with ls.requests:  # regeneration waits meanwhile
            return _references(ls, params)


def _references(ls: RepodocServer, params: types.ReferenceParams) -> list[types.Location] | None:
    path = path_of(params.text_document.uri)
    root = ls.root_for(path) if path is not None and path.suffix in PYTHON_SUFFIXES else None
    graph = root.ws.graph_ready if root is not None else None
    if root is None or graph is None or path is None:
        return None
    doc = ls.workspace.get_text_document(params.text_document.uri)
    try:
        pos = doc.position_from_client_units(params.position)
        line_text = doc.lines[pos.line] if pos.line < len(doc.lines) else ""
    except (IndexError, ValueError):
        return None
    rel = root.rel(path)
    key = target(graph, rel, line_text, pos.line + 1, pos.character)
    if key is None:
        return None
    return locations(root, graph, key, params.context.include_declaration, ls.workspace.position_codec)


def locations(root: Root, graph: Graph, key: Key, declaration: bool, codec: PositionCodec) -> list[types.Location]:
    """Each line that names `key` (the name's columns found in the line; the whole line when
    it is not spelt there, as in a star import), and its definition if asked."""
    name = key[1].rpartition(".")[2] or root.ws.relations.module_of.get(key[0], "").rpartition(".")[2]
    found = []
    if declaration and (d := graph.definition(*key)) is not None:
        found.append(_location(root, key[0], d.line, _line(root, key[0], d.line), name, codec))
    texts: dict[str, list[str]] = {}
    for use in graph.uses(key):
        lines = texts.get(use.rel)
        if lines is None:
            lines = texts[use.rel] = _lines(root, use.rel)
        text = lines[use.line - 1] if use.line <= len(lines) else ""
        found.append(_location(root, use.rel, use.line, text, name, codec))
    return found


def _lines(root: Root, rel: str) -> list[str]:
    try:
        return read_regular(root.path / rel).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def _line(root: Root, rel: str, line: int) -> str:
    lines = _lines(root, rel)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _location(root: Root, rel: str, line: int, text: str, name: str, codec: PositionCodec) -> types.Location:
    """The name's first whole-word occurrence in the line (in the client's units), else the line."""
    at = _word(text, name) if name else -1
    start, end = (0, len(text)) if at < 0 else (at, at + len(name))
    if not text.isascii():  # columns differ between encodings only after non-ASCII text
        start, end = codec.client_num_units(text[:start]), codec.client_num_units(text[:end])
    return types.Location(uri=root.uri(rel), range=types.Range(
        start=types.Position(line=line - 1, character=start), end=types.Position(line=line - 1, character=end)))


def _word(text: str, name: str) -> int:
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        at = text.find(name, at + 1)
    return -1

