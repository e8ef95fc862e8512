"""Hover on C, C++, CUDA, JavaScript, TypeScript, Go, Rust and Java files (jedi stays for Python):
the definition under the cursor read with tree-sitter from the document as it is in the editor, with
its doc comment, signature and page link; a name defined elsewhere: the keyword index's definitions
of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from repodoc_lsp.analysis.cursor import word_at
from repodoc_lsp.analysis.treesitter import SUFFIXES, spec_for
from repodoc_lsp.analysis.treesitter.byname import shows_users
from repodoc_lsp.render.hover import LINKS_SHOWN, Definition, Link, Xref, candidates_text, definition_text
from repodoc_lsp.server.document_memo import DocumentMemo
from repodoc_lsp.server.page_links import candidates, page_link
from repodoc_lsp.server.xref import source_link

if TYPE_CHECKING:
    from pathlib import Path

    from lsprotocol import types
    from pygls.workspace import TextDocument
    from pygls.workspace.position_codec import ServerTextPosition

    from repodoc_lsp.analysis.model import FileFacts
    from repodoc_lsp.server.state import Root

__all__ = ["SUFFIXES", "DocumentMemo", "client_position", "code_hover"]

# the code block's language of each (CUDA's signatures are C++'s)
_FENCE = {"cuda": "cpp"}
_LABEL = {"c": "C", "cpp": "C++", "cuda": "CUDA", "javascript": "JavaScript", "typescript": "TypeScript",
          "go": "Go", "rust": "Rust", "java": "Java"}


def code_hover(memo: DocumentMemo, root: Root | None, path: Path, source: str, line: int, column: int, *,
               markdown: bool, mode: str) -> str:
    """The hover text at `line` (1-based), `column` of the document `path` with text `source`."""
    lines = memo.lines(source)
    name = word_at(lines[line - 1], 1, column) if 1 <= line <= len(lines) else ""
    spec = spec_for(path.name)
    if not name or spec is None or mode == "off":
        return ""
    facts = _facts(memo, root, path, source)
    named = [s for s in facts.symbols if s.name == name] if facts is not None else []
    # the definition whose lines hold the cursor (the innermost), else the file's first of that name
    around = [s for s in named if s.line <= line <= s.end_line]
    symbol = max(around, key=lambda s: s.line) if around else (named[0] if named else None)
    if symbol is None:
        return candidates_text(name, candidates(root, name), markdown=markdown, mode=mode) if root else ""
    rel = root.rel(path) if root is not None and root.contains(path) else str(path)
    link = page_link(root, rel, symbol.anchor) if root is not None and rel in root.ws.facts else ""
    word = symbol.word or symbol.kind.value
    kind = f"{_LABEL.get(spec.language.value, spec.language.value)} {word}"
    # as the language writes it: `fn add(a: i32) -> i32`, `struct Point`, `#define MAX(a, b)`
    space = "" if symbol.signature.startswith(("(", "<", ":")) or not symbol.signature else " "
    shown = f"{word} {symbol.name}{space}{symbol.signature}"
    definition = Definition(kind=kind, full_name=symbol.qualname, signatures=(shown,),
                            docstring=symbol.docstring or "", where=f"{rel}:{symbol.line}", link=link,
                            language=_FENCE.get(spec.language.value, spec.language.value),
                            xref=_named_xref(root, rel, symbol.name) if shows_users(symbol) else None)
    return definition_text(definition, markdown=markdown, mode=mode)


def _named_xref(root: Root | None, rel: str, name: str) -> Xref | None:
    """The files naming `name`, by name (None: the table is not built yet, or the name is not one it
    keeps), the first linked to their line."""
    by_name = root.ws.by_name_ready if root is not None else None
    if by_name is None or root is None or rel not in root.ws.facts:
        return None
    shown, total = by_name.counted(name, rel)
    users = tuple(Link(r, source_link(root, r, line)) for r, line in shown[:LINKS_SHOWN])
    return Xref(used_by=total, users=users, by_name=True) if total else None


def _facts(memo: DocumentMemo, root: Root | None, path: Path, source: str) -> FileFacts | None:
    """The facts of the document: the index's when the text is the file's as indexed (a big header's
    analysis takes longer than a hover may), else its own analysis."""
    if root is not None and root.contains(path):
        rel = root.rel(path)
        key = root.ws.digests.get(rel)
        if key is not None and key == memo.digest(path.name, source):
            held = root.ws.facts.one(rel)
            if held is not None:
                return held
    return memo.analysed(path.name, source)


def client_position(memo: DocumentMemo, doc: TextDocument, position: types.Position) -> ServerTextPosition:
    """`position` in code points, from the document's kept lines (pygls splits the whole text each time)."""
    return doc.position_codec.position_from_client_units(memo.lines(doc.source), position)
