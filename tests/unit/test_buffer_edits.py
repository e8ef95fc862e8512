"""An open document's edit batch (one didChange) applied in one pass equals its changes applied
one after the other, each to the text the one before left, as LSP says."""

from __future__ import annotations

import re
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec

from repodoc_lsp.server import convert
from repodoc_lsp.server.convert import EditorDocument, split_lines

_BREAK = re.compile(r"\r\n|\r|\n")
_PIECES = ["a", "b = 2", "é", "😋", "\U0001d518x", "\ud800", "\t", "\n", "\r\n", "\r", "\x0c", "\u2028", " "]
ENCODINGS = [types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32]


def _units(char: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32:
        return 1
    if encoding == types.PositionEncodingKind.Utf16:
        return 2 if ord(char) > 0xFFFF else 1
    return len(char.encode("utf-8", "surrogatepass"))


def _offset(text: str, position: types.Position, encoding: str) -> int:
    """Where `position` is in `text`, the plain way: lines end at \\r\\n, \\r or \\n (the break is not
    in the line), a column inside a character is after it, past the line's end is its end, past
    the last line is the end of the text."""
    starts = [0, *(m.end() for m in _BREAK.finditer(text))]
    if position.line >= len(starts):
        return len(text)
    begin = starts[position.line]
    line = text[begin:starts[position.line + 1]] if position.line + 1 < len(starts) else text[begin:]
    content = _BREAK.sub("", line)
    index = used = 0
    while index < len(content) and used < position.character:
        used += _units(content[index], encoding)
        index += 1
    return begin + index


def _one_by_one(text: str, changes: list[types.TextDocumentContentChangeEvent], encoding: str) -> str:
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            a, b = sorted((_offset(text, change.range.start, encoding), _offset(text, change.range.end, encoding)))
            text = text[:a] + change.text + text[b:]
        else:
            text = change.text
    return text


_TEXT = st.lists(st.sampled_from(_PIECES), max_size=25).map("".join)
_POSITION = st.builds(types.Position, line=st.integers(0, 8), character=st.integers(0, 12))
_CHANGE = st.one_of(
    st.builds(types.TextDocumentContentChangePartial, range=st.builds(types.Range, start=_POSITION, end=_POSITION),
              text=st.lists(st.sampled_from(["", "X", "\n", "\r", "\r\n", "😋", "é\n"]), max_size=3).map("".join)),
    st.builds(types.TextDocumentContentChangeWholeDocument, text=_TEXT),
)


def _at(line: int, start: int, end: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(text=text, range=types.Range(
        start=types.Position(line=line, character=start), end=types.Position(line=line, character=end)))


@settings(max_examples=150)
@given(_TEXT, st.lists(_CHANGE, max_size=12), st.sampled_from(ENCODINGS))
@example("a\rb", [_at(1, 0, 0, "\n")], types.PositionEncodingKind.Utf16)  # a lone \r and a new \n: one break
@example("x\nab", [_at(1, 0, 2, "")], types.PositionEncodingKind.Utf16)  # the last line emptied: no line left
@example("a\rX\nb", [_at(1, 0, 1, "")], types.PositionEncodingKind.Utf16)  # the \r and \n meet
@example("x😋y\n", [_at(0, 2, 2, "Z")], types.PositionEncodingKind.Utf16)  # inside 😋: after it
@example("x😋y\nz", [_at(0, 9, 1, "W")], types.PositionEncodingKind.Utf16)  # end before start; past the line
@example("xéy", [_at(0, 2, 2, "Z"), _at(3, 0, 0, "!")], types.PositionEncodingKind.Utf8)  # inside é; past the end
def test_a_batch_is_its_changes_one_after_the_other(text: str, changes: list, encoding: str) -> None:
    """Random texts (\\r\\n, lone \\r and \\n, astral characters, a lone surrogate, a form feed) and
    random ranges (inside characters, past line ends and the last line, end before start, a
    \\n inserted after a lone \\r) in UTF-16, UTF-8 and UTF-32 columns."""
    _check(text, changes, encoding)


def _check(text: str, changes: list, encoding: str) -> None:
    """Batch == one by one, also with every line long enough for runs of one line's edits."""
    expected = _one_by_one(text, changes, encoding)
    for long_line in (convert.LONG_LINE, 0):
        with mock.patch.object(convert, "LONG_LINE", long_line):
            doc = EditorDocument("file:///x.py", text, position_codec=PositionCodec(encoding))
            doc.apply_changes(changes)
        assert doc.source == expected
        assert tuple(doc.lines) == split_lines(doc.source)  # the lines kept are the text's own


@settings(max_examples=150)
@given(_TEXT, st.integers(0, 3), st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14),
                                                     st.sampled_from(["", "X", "😋", "é", "\n"])), max_size=8),
       st.sampled_from(ENCODINGS))
@example("a\rXY\nb", 1, [(2, 2, ""), (0, 1, "")], types.PositionEncodingKind.Utf16)  # the \r and \n meet
@example("x😋y😋z", 0, [(9, 4, "A"), (3, 2, "B"), (1, 1, "C")], types.PositionEncodingKind.Utf16)
@example("a", 0, [(2, 2, "X"), (0, 2, "X")], types.PositionEncodingKind.Utf16)  # past the end, then up to it
@example("xéyéz", 0, [(6, 4, "A"), (2, 2, "B")], types.PositionEncodingKind.Utf8)
def test_edits_of_one_line_last_first_are_one_pass(text: str, row: int, edits: list, encoding: str) -> None:
    """A Replace All in one line as VS Code sends it: each range ends where the one before starts,
    or before (a run applied in one pass over the line), mixed with ranges that do not."""
    changes = [_at(row, a, b, new) for a, b, new in edits]
    _check(text, changes, encoding)


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_a_replace_all_in_one_batch_either_order() -> None:
    """A Replace All: two edits on each 10th line of a 20,000-line text, sent last first (as VS Code
    does: each range is the original text's) and first first (each range against the text the
    one before left: the second edit of a line is one unit further right)."""
    lines = [f"v{i} = name + '😋' + name\r\n" for i in range(20_000)]
    rows = range(0, 20_000, 10)
    first, second = _utf16("v0 = "), _utf16("v0 = name + '😋' + ")

    def edit(row: int, at: int) -> types.TextDocumentContentChangePartial:
        shift = _utf16(str(row)) - 1  # "v0" -> "v123"
        return _at(row, at + shift, at + shift + 4, "title")

    last_first = [edit(row, at) for row in reversed(rows) for at in (second, first)]
    first_first = [edit(row, at) for row in rows for at in (first, second + 1)]
    expected = "".join(line.replace("name", "title") if i % 10 == 0 else line for i, line in enumerate(lines))
    for changes in (last_first, first_first):
        doc = EditorDocument("file:///x.py", "".join(lines),
                             position_codec=PositionCodec(types.PositionEncodingKind.Utf16))
        doc.apply_changes(changes)
        assert doc.source == expected
