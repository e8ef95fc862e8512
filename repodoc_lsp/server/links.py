"""textDocument/documentLink: from a source file to its generated pages (the first line to
the file's page, each class and function name to its place there), once the pages exist."""

from __future__ import annotations

import posixpath
import re

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.render.parts import member_parts, part_page
from repodoc_lsp.server.convert import path_of, uri_of
from repodoc_lsp.server.server import RepodocServer

_DEF = re.compile(r"\b(?:def|class)\s+(\w+)")


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions(resolve_provider=False))
    def document_link(ls: RepodocServer, params: types.DocumentLinkParams) -> list[types.DocumentLink] | None:
        path = path_of(params.text_document.uri)
        root = ls.root_for(path) if path is not None else None
        if root is None or path is None:
            return None
        rel = root.rel(path)
        docs, _ = root.pages_for(rel)
        facts = root.ws.facts.one(rel) if rel in root.ws.facts else None
        if facts is None or not docs.exists():
            return None
        lines = ls.document(params.text_document.uri).lines  # as LSP counts them (EditorDocument)
        codec = ls.position_codec
        first = lines[0].rstrip("\r\n") if lines else ""
        moved = member_parts(facts)  # entries on part pages (`parts.py`)
        found = [types.DocumentLink(range=_range(0, 0, max(len(first), 1), first, codec), target=uri_of(docs),
                                    tooltip=f"Documentation of {rel}")]
        for s in facts.symbols:
            if s.kind not in (SymbolKind.CLASS, SymbolKind.FUNCTION, SymbolKind.METHOD) or s.line > len(lines):
                continue
            text = lines[s.line - 1].rstrip("\r\n")
            match = _DEF.search(text, s.col)
            if match is None or match.group(1) != s.name:
                continue  # the buffer changed since the analysis
            page = docs.with_name(posixpath.basename(part_page(rel, moved.get(s.anchor, 1))))
            found.append(types.DocumentLink(range=_range(s.line - 1, match.start(1), match.end(1), text, codec),
                                            target=uri_of(page, s.anchor),
                                            tooltip=f"Documentation of {s.qualname}"))
        return found


def _range(line: int, start: int, end: int, text: str, codec: PositionCodec) -> types.Range:
    if not text.isascii():  # code points -> the client's units
        start, end = codec.client_num_units(text[:start]), codec.client_num_units(text[:end])
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))
