"""Open buffers against the real server: an edit batch applied in one pass, buffers over
max-file-bytes not analysed, and only a buffer's newest version analysed."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import build, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

CORE = '"""Core."""\n\n\nclass Gadget:\n    """A gadget."""\n'
LINES = 500
END = 2**31 - 1  # "past the end of the line": the line's end (LSP)


def _range(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


async def test_a_replace_all_is_one_batch_and_requests_are_answered(client: LanguageClient, tmp_path: Path) -> None:
    """One didChange with 1,001 edits (a Replace All as VS Code sends it: last first, each range
    the text before the batch; UTF-16 columns after 😋), then a request: it is answered, and the
    diagnostics of the new version are the edited text's, every stale name where the edits put it.
    A name is added at character 2**31-1 of the last line, past its end: at its end (pygls's
    per-edit path put it one character short of the end of a last line without a line break)."""
    text = "".join(f"{i} 😋 `shapes.core.Gadget` or `shapes.core.Gadget`\n" for i in range(LINES)) + "end"
    root = build(tmp_path / "ws", {"shapes/__init__.py": "", "shapes/core.py": CORE, "notes.md": text})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Gadget"))
    uri = (root / "notes.md").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=text)))
    await wait_for(lambda: uri in client.diagnostics, 20)
    assert not client.diagnostics[uri]
    changes: list[types.TextDocumentContentChangeEvent] = [
        types.TextDocumentContentChangePartial(range=_range(LINES, END, END), text=" `shapes.core.Widget`")]
    for i in reversed(range(LINES)):
        first = len(f"{i} 😋 `shapes.core.") + 1  # 😋: two UTF-16 units
        second = first + len("Gadget` or `shapes.core.")
        changes += [types.TextDocumentContentChangePartial(range=_range(i, at, at + 6), text="Widget")
                    for at in (second, first)]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=changes))
    assert await symbols(client, "Gadget")  # answered after the batch
    found = await wait_for(lambda: client.diagnostics.get(uri), 30)
    starts = sorted((d.range.start.line, d.range.start.character) for d in found)
    expected = [(i, len(f"{i} 😋 {before}") + 1) for i in range(LINES)
                for before in ("`", "`shapes.core.Widget` or `")]
    assert starts == [*expected, (LINES, len("end `"))]
    assert all("`Widget` is not defined in shapes.core" in d.message for d in found)
