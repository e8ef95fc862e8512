"""textDocument/hover: jedi says what is under the cursor, the index and the pages say the rest;
`render/hover.py` formats what is gathered here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from repodoc_lsp.analysis.cursor import CursorInfo, word_at
from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.render.hover import (
    Definition,
    Fact,
    Xref,
    candidates_text,
    definition_text,
)
from repodoc_lsp.server.code_hover import SUFFIXES as CODE_SUFFIXES
from repodoc_lsp.server.code_hover import client_position, code_hover
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.page_links import candidates, page_link
from repodoc_lsp.server.roots import project_folder
from repodoc_lsp.server.server import RepodocServer
from repodoc_lsp.server.xref import xref_of
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from pathlib import Path

    from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
WARM_DOCUMENTS = 4  # open files whose imports jedi follows ahead of their first hover (`warm`)


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RepodocServer, params: types.HoverParams) -> types.Hover | None:
        with ls.requests:  # regeneration waits meanwhile
            return await _hover(ls, params)


async def _hover(ls: RepodocServer, params: types.HoverParams) -> types.Hover | None:
    path = path_of(params.text_document.uri)
    if path is not None and path.name.lower().endswith(CODE_SUFFIXES):  # tree-sitter's languages
        return _code_hover(ls, path, params)
    if path is None or path.suffix not in PYTHON_SUFFIXES:
        return None
    root = ls.root_for(path)
    mode = root.settings.hover if root is not None else ls.outside_settings().hover
    if mode == "off":
        return None
    doc = ls.document(params.text_document.uri)
    source = doc.source
    try:
        pos = doc.position_from_client_units(params.position)
    except (IndexError, ValueError):
        return None
    cursor = ls.cursor_for(root.path if root else project_folder(path), root.settings.python_path if root else "")
    try:
        info = await asyncio.wrap_future(ls.jedi.submit(cursor.describe, source, path, pos.line + 1, pos.character))
    except Exception:
        log.exception("jedi failed on %s:%d:%d", path, pos.line + 1, pos.character)
        info = None
    formats = get_capability(ls.client_capabilities, "text_document.hover.content_format",
                             [types.MarkupKind.Markdown])
    markup = types.MarkupKind.Markdown if types.MarkupKind.Markdown in (formats or [types.MarkupKind.Markdown]) \
        else types.MarkupKind.PlainText
    markdown = markup is types.MarkupKind.Markdown
    if info is not None:
        value = definition_text(definition(ls, info), markdown=markdown, mode=mode)
    else:  # jedi cannot tell (an attribute of an untyped object, say): what the index has of that name
        name = word_at(source, pos.line + 1, pos.character)
        value = candidates_text(name, candidates(root, name), markdown=markdown, mode=mode) \
            if root is not None and name else ""
    return types.Hover(contents=types.MarkupContent(kind=markup, value=value)) if value else None


def _code_hover(ls: RepodocServer, path: Path, params: types.HoverParams) -> types.Hover | None:
    root = ls.root_for(path)
    mode = root.settings.hover if root is not None else ls.outside_settings().hover
    doc = ls.document(params.text_document.uri)
    try:
        pos = client_position(ls.code_hovers, doc, params.position)
    except (IndexError, ValueError):
        return None
    markup = _markup(ls)
    value = code_hover(ls.code_hovers, root, path, doc.source, pos.line + 1, pos.character,
                       markdown=markup is types.MarkupKind.Markdown, mode=mode)
    return types.Hover(contents=types.MarkupContent(kind=markup, value=value)) if value else None


def _markup(ls: RepodocServer) -> types.MarkupKind:
    formats = get_capability(ls.client_capabilities, "text_document.hover.content_format",
                             [types.MarkupKind.Markdown])
    return types.MarkupKind.Markdown if types.MarkupKind.Markdown in (formats or [types.MarkupKind.Markdown]) \
        else types.MarkupKind.PlainText


def warm(ls: RepodocServer, root: Root) -> None:
    """After a root is indexed: have jedi do ahead what the first hovers would (the builtins' stubs,
    the imports of the Python files open in it), a step at a time on its thread, so that a hover
    waits for one step at most; `root.hover_warm` once done (`repodoc.status`: `hoverReady`)."""
    cursor = ls.cursor_for(root.path, root.settings.python_path)
    documents = []
    for uri, doc in list(ls.workspace.text_documents.items()):
        path = path_of(uri)
        if path is not None and path.suffix in PYTHON_SUFFIXES and root.contains(path):
            documents.append((doc.source, path))
    steps = iter(cursor.warm_steps(documents[:WARM_DOCUMENTS]))
    started = time.perf_counter()

    def step(_done: object = None) -> None:
        if ls.stopping or root.closed:
            return
        fn = next(steps, None)
        if fn is None:
            root.hover_warm = True
            log.info("jedi warmed for %s in %.2f s", root.path, time.perf_counter() - started)
            return
        with contextlib.suppress(RuntimeError):  # the server is shutting its jedi thread down
            ls.jedi.submit(fn).add_done_callback(step)

    step()


def _workspace_facts(root: Root, rel: str, info: CursorInfo) -> tuple[tuple[Fact, ...], str]:
    """Facts about the definition from the workspace's own analysis (not the keyword index), and its page link."""
    ws = root.ws
    facts = ws.facts.one(rel)
    module = ws.relations.module_of.get(rel, rel)
    if info.jedi_type == "module" or facts is None:
        found: list[Fact] = []
        if facts is not None:
            classes = sum(1 for s in facts.symbols if s.kind is SymbolKind.CLASS)
            functions = sum(1 for s in facts.symbols if s.kind is SymbolKind.FUNCTION and not s.container)
            found.append(Fact(f"module {{}}: {plural(classes, 'class')}, {plural(functions, 'function')}, "
                              f"{plural(facts.lines, 'line')}",
                              (module,)))
        found.append(Fact(f"imported by {plural(len(ws.relations.importers(rel)), 'workspace file')}"))
        return tuple(found), page_link(root, rel)
    symbol = next((s for s in facts.symbols if s.line == info.line and s.name == info.name), None)
    if symbol is None:
        return (Fact("in module {}", (module,)),), page_link(root, rel)
    if symbol.kind is SymbolKind.METHOD:
        where = Fact(f"{symbol.kind.value} in class {{}}", (symbol.container,))
    elif symbol.container:
        where = Fact(f"{symbol.kind.value} in module {{}}, inside {{}}", (module, symbol.container))
    else:
        where = Fact(f"{symbol.kind.value} in module {{}}", (module,))
    top = symbol.qualname.split(".", 1)[0]
    users = len(ws.relations.name_users.get((rel, top), set()))
    imported = f"imported by {plural(users, 'workspace file')}"
    used = Fact(f"{imported} (as {{}})", (top,)) if top != symbol.name else Fact(imported)
    return (where, used), page_link(root, rel, symbol.anchor)


def definition(ls: RepodocServer, info: CursorInfo) -> Definition:
    """What the hover shows of a name jedi resolved."""
    root = ls.root_for(info.module_path) if info.module_path else None
    where, link = "", ""
    facts: tuple[Fact, ...] = ()
    xref = None
    if info.module_path is not None:
        if root is not None and root.contains(info.module_path):
            rel = root.rel(info.module_path)
            where = f"{rel}:{info.line}" if info.line else rel
            if rel in root.ws.facts:
                facts, link = _workspace_facts(root, rel, info)
                xref = _xref(root, rel, info)
        else:
            where = f"{info.module_path}:{info.line}" if info.line else str(info.module_path)
    return Definition(kind=info.jedi_type, full_name=info.full_name, signatures=info.signatures,
                      docstring=info.docstring, where=where, facts=facts, link=link, xref=xref)


def _xref(root: Root, rel: str, info: CursorInfo) -> Xref | None:
    """Used by and subclassed by, from the symbol graph (None before it is built)."""
    graph = root.ws.graph_ready
    if graph is None:
        return None
    if info.jedi_type == "module":
        return xref_of(root, graph, (rel, ""))
    found = graph.named(rel, info.line, info.name) if info.line else None
    return xref_of(root, graph, found.key) if found is not None else None


