"""textDocument/hover: jedi says what is under the cursor; the index and the pages say the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from repodoc_lsp.analysis.cursor import CursorInfo, describe, word_at
from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.index import MODULE, Entry
from repodoc_lsp.render.markdown import code, docstring_markdown, fence
from repodoc_lsp.server.convert import path_of, uri_of

if TYPE_CHECKING:
    from repodoc_lsp.server.app import RepodocServer
    from repodoc_lsp.server.state import Root

_PREFIX = {"class": "class ", "function": "def ", "module": "module "}


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RepodocServer, params: types.HoverParams) -> types.Hover | None:
        with ls.requests:  # regeneration waits meanwhile
            return await _hover(ls, params)


async def _hover(ls: RepodocServer, params: types.HoverParams) -> types.Hover | None:
    path = path_of(params.text_document.uri)
    if path is None or path.suffix not in PYTHON_SUFFIXES:
        return None
    doc = ls.workspace.get_text_document(params.text_document.uri)
    source = doc.source
    try:
        pos = doc.position_from_client_units(params.position)
    except (IndexError, ValueError):
        return None
    root = ls.root_for(path)
    folder = root.path if root else path.parent
    python_path = root.settings.python_path if root else ""
    try:
        info = await asyncio.wrap_future(ls.jedi.submit(
            describe, source, path, pos.line + 1, pos.character, folder, python_path))
    except Exception:
        info = None
    formats = get_capability(ls.client_capabilities, "text_document.hover.content_format",
                             [types.MarkupKind.Markdown])
    kind = types.MarkupKind.Markdown if types.MarkupKind.Markdown in (formats or [types.MarkupKind.Markdown]) \
        else types.MarkupKind.PlainText
    markdown = kind is types.MarkupKind.Markdown
    if info is not None:
        value = render(ls, info, markdown=markdown)
    else:  # jedi cannot tell (an attribute of an untyped object, say): what the index has of that name
        name = word_at(source, pos.line + 1, pos.character)
        entries = root.index.lookup(name) if root is not None and name else []
        if not entries or root is None:
            return None
        value = render_candidates(root, name, entries, markdown=markdown)
    return types.Hover(contents=types.MarkupContent(kind=kind, value=value))


def _signature(info: CursorInfo) -> str:
    if info.kind == "module":
        return f"module {info.full_name}"
    if info.signatures:
        prefix = _PREFIX.get(info.kind, "")
        return "\n".join(prefix + s for s in info.signatures)
    return f"{info.kind} {info.full_name}" if info.kind in ("class", "function") else info.full_name


def _page_link(root: Root, rel: str, anchor: str = "") -> str:
    """The URI of `rel`'s generated documentation page (at `anchor`), or "" before it is written."""
    docs, _ = root.pages_for(rel)
    return uri_of(docs, anchor) if docs.exists() else ""


def _what_the_index_knows(root: Root, rel: str, info: CursorInfo) -> tuple[list[str], str]:
    """Lines about the definition from the workspace's own analysis, and its page link."""
    ws = root.ws
    facts = ws.facts.one(rel)
    module = ws.relations.module_of.get(rel, rel)
    facts_lines: list[str] = []
    if info.kind == "module" or facts is None:
        importers = ws.relations.importers(rel)
        if facts is not None:
            classes = sum(1 for s in facts.symbols if s.kind is SymbolKind.CLASS)
            functions = sum(1 for s in facts.symbols if s.kind is SymbolKind.FUNCTION and not s.container)
            facts_lines.append(f"module {code(module)}: {classes} classes, {functions} functions, "
                               f"{facts.lines} lines")
        facts_lines.append(f"imported by {len(importers)} workspace files")
        return facts_lines, _page_link(root, rel)
    symbol = next((s for s in facts.symbols if s.line == info.line and s.name == info.name), None)
    if symbol is None:
        return [f"in module {code(module)}"], _page_link(root, rel)
    where = f"{symbol.kind.value} in class {code(symbol.container)}" if symbol.kind is SymbolKind.METHOD else \
        f"{symbol.kind.value} in module {code(module)}" + (f", inside {code(symbol.container)}"
                                                             if symbol.container else "")
    top = symbol.qualname.split(".", 1)[0]
    users = ws.relations.name_users.get((rel, top), set())
    facts_lines += [where, f"imported by {len(users)} workspace files"
                    + (f" (as {code(top)})" if top != symbol.name else "")]
    return facts_lines, _page_link(root, rel, symbol.anchor)


def render(ls: RepodocServer, info: CursorInfo, *, markdown: bool) -> str:
    root = ls.root_for(info.module_path) if info.module_path else None
    where = ""
    index_lines: list[str] = []
    link = ""
    if info.module_path is not None:
        if root is not None and root.contains(info.module_path):
            rel = root.rel(info.module_path)
            where = f"{rel}:{info.line}" if info.line else rel
            if rel in root.ws.facts:
                index_lines, link = _what_the_index_knows(root, rel, info)
        else:
            where = f"{info.module_path}:{info.line}" if info.line else str(info.module_path)
    doc = info.docstring
    if info.kind == "module" and doc:
        doc = doc.strip().split("\n\n", 1)[0]  # a module's overview: its first paragraph
    if not markdown:
        parts = [_signature(info), doc.strip()]
        if where:
            parts.append(f"Defined in {where}")
        parts += [line.replace("`", "") for line in index_lines]
        if link:
            parts.append(f"Documentation: {link}")
        return "\n\n".join(p for p in parts if p)
    parts = [fence(_signature(info), "python")]
    if doc.strip():
        parts.append(docstring_markdown(doc))
    footer = []
    if where:
        footer.append(f"**Defined in** {code(where)}")
    if index_lines:
        footer.append("**Index**: " + " · ".join(index_lines))
    if link:
        label = Path(link.split("#", 1)[0]).name + (f"#{link.split('#', 1)[1]}" if "#" in link else "")
        footer.append(f"[Documentation: {code(label)}]({link})")
    if footer:
        parts.append("---\n\n" + "\n\n".join(footer))
    return "\n\n".join(parts)


CANDIDATES_SHOWN = 8


def render_candidates(root: Root, name: str, entries: list[Entry], *, markdown: bool) -> str:
    """Hover text for a name jedi could not resolve: the workspace's definitions of that name."""
    shown = entries[:CANDIDATES_SHOWN]
    more = len(entries) - len(shown)
    noun = "definition" if len(entries) == 1 else "definitions"
    lines = []
    for e in shown:
        what = "module" if e.kind == MODULE else e.kind
        qual = f"{e.container}.{e.name}" if e.container and e.kind != MODULE else e.name
        where = f"{e.rel}:{e.line}"
        link = _page_link(root, e.rel, e.anchor)
        if markdown:
            lines.append(f"- {what} {code(qual)} in {code(where)}" + (f" ([documentation]({link}))" if link else ""))
        else:
            lines.append(f"- {what} {qual} in {where}")
    if more:
        lines.append(f"- … and {more} more (workspace symbols: {name})")
    head = (f"{code(name) if markdown else name}: not resolved here; the keyword index has "
            f"{len(entries)} {noun} of this name:")
    return head + "\n\n" + "\n".join(lines)
