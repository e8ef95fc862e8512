"""workspace/symbol and textDocument/documentSymbol, answered from the keyword index."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.knowledge.index import MODULE, Entry, entries_of
from repodoc_lsp.server.convert import LSP_SYMBOL_KINDS, over_limit, path_of
from repodoc_lsp.server.protocol import Encoded, Refused, encode
from repodoc_lsp.server.search import distinct
from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from pathlib import Path

    from repodoc_lsp.server.state import Root


MAX_QUERY = 256  # characters of a workspace/symbol query


def entry_range(entry: Entry) -> types.Range:
    """A definition's range. The text before a def, class or heading on its line is indentation
    and keywords (ASCII), so its code-point column is the column in every position encoding."""
    start = types.Position(line=max(entry.line - 1, 0), character=entry.col)
    end = types.Position(line=entry.end_line - 1, character=0) if entry.end_line > entry.line else start
    return types.Range(start=start, end=end)


def register(server: RepodocServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: RepodocServer, params: types.WorkspaceSymbolParams) -> Encoded:
        if len(params.query) > MAX_QUERY:  # a megabyte-long query kept every request waiting
            raise Refused(f"workspace/symbol: the query is {len(params.query):,} characters long; "
                          f"at most {MAX_QUERY} are searched")
        await ls.until_indexed()  # a first query right after start answers from the first index
        with ls.requests:  # off the event loop: other requests go on meanwhile
            return await asyncio.to_thread(symbols, list(ls.roots.values()), params.query)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: RepodocServer, params: types.DocumentSymbolParams
                        ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        entries = _entries(ls, path, params.text_document.uri)
        hierarchical = get_capability(
            ls.client_capabilities, "text_document.document_symbol.hierarchical_document_symbol_support", False)
        if not hierarchical:
            return [types.SymbolInformation(name=e.name, kind=LSP_SYMBOL_KINDS[e.kind],
                                            container_name=e.container or None,
                                            location=types.Location(uri=params.text_document.uri,
                                                                    range=entry_range(e))) for e in entries]
        return outline(entries)


def symbols(roots: list[Root], query: str) -> Encoded:
    """workspace/symbol's answer, as JSON. A root still being indexed answers from its last
    snapshot (the indexing thread takes a new one when asked, `KeywordIndex.refresh`), so no
    search waits for one; once indexed, from the index as it is."""
    results: list[dict[str, Any]] = []
    for root in roots:
        limit = root.settings.max_workspace_symbols - len(results)
        if limit <= 0:
            break
        for e in distinct(root, query, limit):
            start = {"line": max(e.line - 1, 0), "character": e.col}
            end = {"line": e.end_line - 1, "character": 0} if e.end_line > e.line else start
            symbol: dict[str, Any] = {"name": e.name, "kind": LSP_SYMBOL_KINDS[e.kind].value}
            if e.container:
                symbol["containerName"] = e.container
            symbol["location"] = {"uri": root.uri(e.rel), "range": {"start": start, "end": end}}
            results.append(symbol)
    return encode(results)


def _entries(ls: RepodocServer, path: Path, uri: str) -> list[Entry]:
    root = ls.root_for(path)
    if root is not None:
        rel = root.rel(path)
        found = root.index.file_entries(rel)
        if found:
            return [e for e in found if e.kind != MODULE]
    # not indexed (excluded, or not analysed yet): the buffer's own text, unless it is over
    # max-file-bytes (then neither is the file; this runs on the event loop)
    source = ls.document(uri).source
    if over_limit(source, (root.settings if root is not None else ls.outside_settings()).max_file_bytes):
        return []
    try:
        facts = analyse_source(path.name, source.encode("utf-8", "surrogatepass"))
    except Exception:
        return []
    return entries_of(path.name, facts)


def outline(entries: list[Entry]) -> list[types.DocumentSymbol]:
    """Nest entries under their containers (classes, functions, parent headings)."""
    top: list[types.DocumentSymbol] = []
    by_key: dict[str, types.DocumentSymbol] = {}
    children: dict[int, list[types.DocumentSymbol]] = {}
    for e in sorted(entries, key=lambda e: (e.line, e.col)):
        rng = entry_range(e)
        kids: list[types.DocumentSymbol] = []
        node = types.DocumentSymbol(name=e.name, kind=LSP_SYMBOL_KINDS[e.kind], range=rng,
                                    selection_range=types.Range(start=rng.start, end=rng.start), children=kids)
        children[id(node)] = kids
        parent = by_key.get(e.container) if e.container else None
        (children[id(parent)] if parent is not None else top).append(node)
        key = e.name if e.kind == "heading" else (f"{e.container}.{e.name}" if e.container else e.name)
        by_key[key] = node
    return top
