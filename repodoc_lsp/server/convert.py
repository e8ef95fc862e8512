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
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, TextDocument, Workspace
from pygls.workspace.position_codec import Utf8, Utf32

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.knowledge.index import MODULE

LSP_SYMBOL_KINDS = {  # the keyword index's kinds (`Entry.kind`) -> LSP's
    SymbolKind.CLASS.value: types.SymbolKind.Class,
    SymbolKind.FUNCTION.value: types.SymbolKind.Function,
    SymbolKind.METHOD.value: types.SymbolKind.Method,
    SymbolKind.HEADING.value: types.SymbolKind.String,
    MODULE: types.SymbolKind.Module,
}


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # two UTF-16 units each
_ENDS = ("\n", "\r")
LONG_LINE = 4096  # characters: a run of edits of a line this long is applied in one pass (`_edit_line`)


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

    def apply_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        self.apply_changes([change])

    def apply_changes(self, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        """The changes of one didChange, each applied to the text the one before it left (LSP's
        rule), on the list of the text's lines: a change rewrites the lines its range touches, and
        the text is joined once at the end. pygls rewrote the whole text and split it again for
        each change: one Replace All of 1,000 edits in a 900 KB buffer took 74 s, every request
        waiting. Positions past a line's end are its end (the line break is not in the line);
        lines past the last are the end of the text; a range given end first is taken start first."""
        if not self._is_sync_kind_incremental:
            for change in changes:
                super().apply_change(change)
            return
        lines = list(self.lines)
        i = 0
        while i < len(changes):
            change = changes[i]
            if isinstance(change, types.TextDocumentContentChangePartial):
                end = _line_run(lines, changes, i)
                if end > i + 1 and _edit_line(lines, changes[i:end], self.position_codec):
                    i = end
                    continue
                _splice(lines, change.range, change.text, self.position_codec)
            else:
                lines = list(split_lines(change.text))
            i += 1
        source = "".join(lines)
        self._source = source
        self._split = (source, tuple(lines))

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


def _line_run(lines: Sequence[str], changes: Sequence[types.TextDocumentContentChangeEvent], i: int) -> int:
    """The end of the run of changes from `i` that edit one line of at least LONG_LINE characters,
    last first (as VS Code sends a Replace All), without line breaks: each range ends where the
    one before it starts, or before, so all of them are ranges of the line as it was."""
    first = changes[i]
    row = first.range.start.line if isinstance(first, types.TextDocumentContentChangePartial) else -1
    if not 0 <= row < len(lines) or len(lines[row]) < LONG_LINE:
        return i + 1
    line = lines[row]
    size = len(line) - (2 if line.endswith("\r\n") else 1 if line.endswith(_ENDS) else 0)
    end, before = i, None
    while end < len(changes):
        change = changes[end]
        if (not isinstance(change, types.TextDocumentContentChangePartial) or change.range.start.line != row
                or change.range.end.line != row or "\n" in change.text or "\r" in change.text):
            break
        start, stop = sorted((max(change.range.start.character, 0), max(change.range.end.character, 0)))
        if before is not None and (stop > before or before > size):  # `before` past the end: the line's
            break  # end, so the text after it is no longer what `stop` counted in
        before, end = start, end + 1
    return end


def _edit_line(lines: list[str], run: Sequence[types.TextDocumentContentChangeEvent], codec: PositionCodec) -> bool:
    """Apply a `_line_run` in one pass over its line (each change of it copied the whole line:
    1,000 edits of a 980 KB one-line file); False (nothing done) when it cannot be."""
    row = run[0].range.start.line  # type: ignore[union-attr]
    line = lines[row]
    content = line[:len(line) - (2 if line.endswith("\r\n") else 1 if line.endswith(_ENDS) else 0)]
    ranges = [sorted((max(c.range.start.character, 0), max(c.range.end.character, 0)))  # type: ignore[union-attr]
              for c in run]
    points = _code_points_many(content, sorted({u for pair in ranges for u in pair}), codec)
    if points is None:
        return False
    pieces, cursor = [], len(line)
    for (start, stop), change in zip(ranges, run, strict=True):
        pieces += [line[points[stop]:cursor], change.text]
        cursor = points[start]
    pieces.append(line[:cursor])
    new = "".join(reversed(pieces))
    if not new or new.startswith("\n"):  # no line left; a lone \r before it would join it: `_splice`
        return False
    lines[row] = new
    return True


def _code_points_many(content: str, units: Sequence[int], codec: PositionCodec) -> dict[int, int] | None:
    """`_code_points` of each of `units` (ascending), in one pass over `content`; None for UTF-16
    columns of a text with a lone surrogate."""
    if isinstance(codec.impl, Utf32) or content.isascii():
        return {u: min(u, len(content)) for u in units}
    if isinstance(codec.impl, Utf8):
        encoding, errors, size = "utf-8", "surrogatepass", 1
        data = content.encode(encoding, errors)
    else:
        encoding, errors, size = "utf-16-le", "strict", 2
        try:
            data = content.encode(encoding)
        except UnicodeEncodeError:
            return None
    found, points, done = {}, 0, 0
    for u in units:
        at = min(u * size, len(data))
        if size == 1:
            while at < len(data) and data[at] & 0xC0 == 0x80:  # inside a character: after it
                at += 1
        elif at < len(data) and 0xDC <= data[at + 1] <= 0xDF:  # the second unit of a pair: after it
            at += 2
        if at > done:
            points += len(data[done:at].decode(encoding, errors))
            done = at
        found[u] = points
    return found


def _splice(lines: list[str], rng: types.Range, text: str, codec: PositionCodec) -> None:
    """Replace `rng` (the client's units) of the text whose lines (ends kept) are `lines` by `text`:
    the lines the range touches become the lines of their new text. A line end is never cut
    (positions stop before it), but a lone \\r before the new text's \\n makes one \\r\\n: that
    line is split again with them."""
    start, end = _point(lines, rng.start, codec), _point(lines, rng.end, codec)
    if end < start:
        start, end = end, start
    (first, column), (last, end_column) = start, end
    if first == last < len(lines) and "\n" not in text and "\r" not in text:  # within one line (Replace All)
        line = lines[first]
        new = line[:column] + text + line[end_column:]
        if new and not new.startswith("\n"):  # else no line is left, or a lone \r before joins it
            lines[first] = new
            return
    head = lines[first][:column] if first < len(lines) else ""
    tail = lines[last][end_column:] if last < len(lines) else ""
    new = head + text + tail
    if new.startswith("\n") and first and lines[first - 1].endswith("\r"):
        first -= 1
        new = lines[first] + new
    lines[first:last + 1] = split_lines(new)


def _point(lines: Sequence[str], position: types.Position, codec: PositionCodec) -> tuple[int, int]:
    """A position as (line, code points into it); the end of the text is past its last line when
    the text ends with a line break (an empty line follows), else at the last line's end."""
    row = max(position.line, 0)
    if row >= len(lines):
        if lines and not lines[-1].endswith(_ENDS):
            return len(lines) - 1, len(lines[-1])
        return len(lines), 0
    line = lines[row]
    content = line[:len(line) - (2 if line.endswith("\r\n") else 1 if line.endswith(_ENDS) else 0)]
    return row, _code_points(content, max(position.character, 0), codec)


def _code_points(content: str, units: int, codec: PositionCodec) -> int:
    """How many code points of `content` the first `units` units of the client's encoding hold; a
    position inside a character is after it (as pygls's codec has it), past the end is the end."""
    if isinstance(codec.impl, Utf32) or content.isascii():
        return min(units, len(content))
    if isinstance(codec.impl, Utf8):
        data = content.encode("utf-8", "surrogatepass")  # a lone surrogate: 3 bytes, as pygls counts it
        if units >= len(data):
            return len(content)
        while units < len(data) and data[units] & 0xC0 == 0x80:  # a continuation byte: inside a character
            units += 1
        return len(data[:units].decode("utf-8", "surrogatepass"))
    try:
        data = content.encode("utf-16-le")  # two bytes a unit
    except UnicodeEncodeError:  # a lone surrogate (JSON can send one): counted one at a time below
        pass
    else:
        end = 2 * units
        if end >= len(data):
            return len(content)
        if 0xDC <= data[end + 1] <= 0xDF:  # the second unit of a pair: after it
            end += 2
        return len(data[:end].decode("utf-16-le"))
    astral = 0  # code points before `units` are units less the astral characters among them
    for match in _ASTRAL.finditer(content):
        at = match.start()
        if at + astral >= units:
            break
        astral += 1
        if at + astral >= units:  # at or inside its second unit: after it
            return at + 1
    return min(units - astral, len(content))


class EditorWorkspace(Workspace):
    """pygls's open documents, as `EditorDocument`s (set on pygls's workspace at initialize)."""

    def update_text_document_all(self, text_doc: types.VersionedTextDocumentIdentifier,
                                 changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        """The changes of one didChange in one pass over the text (`EditorDocument.apply_changes`);
        pygls's `update_text_document` takes one change at a time. KeyError: not open."""
        document = self.text_documents[unquote(text_doc.uri)]
        if isinstance(document, EditorDocument):
            document.apply_changes(changes)
        else:
            for change in changes:
                document.apply_change(change)
        document.version = text_doc.version

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return EditorDocument(doc_uri, source=source, version=version, language_id=language_id,
                              sync_kind=self._sync_kind, position_codec=self._position_codec)


def over_limit(text: str, limit: int) -> int:
    """The UTF-8 size of an open document's text when it is over `limit` bytes (max-file-bytes),
    else 0: such a buffer is not analysed, as such a file is not."""
    if len(text) * 4 <= limit:  # four bytes a code point at most
        return 0
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > limit else 0


def path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def uri_of(path: Path, fragment: str = "") -> str:
    uri = from_fs_path(str(path)) or path.as_uri()
    return f"{uri}#{fragment}" if fragment else uri
