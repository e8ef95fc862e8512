"""The adapter between repodoc's data and lsprotocol types.

Positions: repodoc and jedi count lines from 1 and columns in code points;
LSP counts lines from 0 and columns in the negotiated encoding (UTF-16 for
VS Code, UTF-8 for Neovim 0.11): cursor positions go through the document's
position codec (hover.py); definition starts need none (symbols.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.index import MODULE

LSP_SYMBOL_KINDS = {  # the keyword index's kinds (`Entry.kind`) -> LSP's
    SymbolKind.CLASS.value: types.SymbolKind.Class,
    SymbolKind.FUNCTION.value: types.SymbolKind.Function,
    SymbolKind.METHOD.value: types.SymbolKind.Method,
    SymbolKind.HEADING.value: types.SymbolKind.String,
    MODULE: types.SymbolKind.Module,
}


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class EditorDocument(TextDocument):
    """pygls's open document with its lines as LSP and Python count them, ends kept: broken at
    \\n, \\r\\n and \\r only (pygls's `str.splitlines` also breaks at a form feed, \\x1c-\\x1e,
    \\x85 and \\u2028-9: every line after one was the next line's text, so a cursor there named
    another line's name, in hover, references and document links). pygls applies an editor's
    incremental change at `lines[range.start.line]`, and its `str.splitlines` lines put a change
    below a form feed on the line above (`b = 2` after a ^L edited to `b = 3` left `\\x0c3` and
    `b = 2`: every check of the buffer read other text). The lines are split once per text, not
    at each request (a hover on a 6,000-line file split it again on the event loop: 1-2 ms)."""

    _split: tuple[str, tuple[str, ...]] | None = None  # (the source, its lines): split once per text

    @property
    def lines(self) -> Sequence[str]:
        source, split = self.source, self._split  # one attribute: read whole from any thread
        if split is None or split[0] is not source:  # a change gives a new source object
            split = self._split = (source, split_lines(source))
        return split[1]


def split_lines(source: str) -> tuple[str, ...]:
    """The lines of a text as `EditorDocument` counts them, ends kept. Without a `\r`, split at
    `\n` (a 1.37 MB file not open in the editor, split at each request: 150-190 ms by `_LINE`
    at load 5, a few ms so)."""
    if "\r" in source:
        return tuple(_LINE.findall(source))
    lines = source.split("\n")
    last = lines.pop()
    found = [line + "\n" for line in lines]
    if last:
        found.append(last)
    return tuple(found)


class EditorWorkspace(Workspace):
    """pygls's open documents, as `EditorDocument`s (set on pygls's workspace at initialize)."""

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return EditorDocument(doc_uri, source=source, version=version, language_id=language_id,
                              sync_kind=self._sync_kind, position_codec=self._position_codec)


def path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def uri_of(path: Path, fragment: str = "") -> str:
    uri = from_fs_path(str(path)) or path.as_uri()
    return f"{uri}#{fragment}" if fragment else uri
