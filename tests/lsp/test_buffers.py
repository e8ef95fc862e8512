"""Open buffers against the real server: an edit batch applied in one pass, buffers over
max-file-bytes not analysed, and only a buffer's newest version analysed."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import SAMPLE, build, open_file, record_diagnostics, start, symbols, wait_for
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


async def test_a_buffer_over_max_file_bytes_is_not_analysed_and_saves_go_on(client: LanguageClient,
                                                                            tmp_path: Path) -> None:
    """A Python buffer over max-file-bytes (2,000 here) edited, each version checked after its
    pause: it is not analysed (one line in the log says so; its diagnostics are empty), a save of
    another file writes that file's pages, a document symbol request answers without analysing
    it, and hover on it still works (jedi)."""
    seen = record_diagnostics(client)
    big = "def big_function():\n    \"\"\"Big.\"\"\"\n\n\n" + "".join(f"value_{i} = {i}\n" for i in range(300))
    root = build(tmp_path / "ws", {**SAMPLE, "pyproject.toml": '[tool.repodoc]\nmax-file-bytes = 2000\n',
                                   "pkg/big.py": big})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    uri = open_file(client, root / "pkg/big.py")
    opened = len(big)
    await wait_for(lambda: any(p.uri == uri for p in seen), 20)
    for version in range(2, 5):  # typing, a pause after each edit
        big += f"value_{version} = 0\n"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=_range(300 + version, 0, 0), text=f"value_{version} = 0\n")]))
        await wait_for(lambda version=version: any(p.uri == uri and p.version == version for p in seen), 20)
    assert all(not p.diagnostics for p in seen if p.uri == uri)
    logged = [m.message for m in client.log_messages if "big.py is not checked while open" in m.message]
    assert logged == [  # once, not at each version
        f"pkg/big.py is not checked while open: {opened:,} bytes, over max-file-bytes (2,000)"]
    shapes = root / "pkg/shapes.py"
    shapes.write_text(shapes.read_text() + "\n\ndef saved_function():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())))
    kw = root / "docs/pkg/shapes.py_kw.md"
    await wait_for(lambda: "**`saved_function`**" in kw.read_text(), 20)
    assert await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri))) == []
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=5)))
    assert hover is not None and "big_function" in str(hover.contents)
