"""Stale references as diagnostics and their quick fix, against the real server."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import build, record_diagnostics, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

FILES = {
    "shapes/__init__.py": '"""Shapes."""\n',
    "shapes/core.py": ('"""Core."""\n\n\nclass Gadget:\n    """A gadget; older docs say :class:`Gadgit`."""\n\n'
                       "    def draw(self):\n        pass\n"),
    "README.md": "# Shapes\n\nDraw with `shapes.core.Gadgit` or `shapes.core.Gadget`.\n",
    "guide.rst": "Guide\n=====\n\nThe :class:`shapes.core.Gadget` class.\n",
}


def _open(client: LanguageClient, path: Path, language: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id=language, version=1, text=path.read_text(encoding="utf-8"))))
    return uri


async def _session(client: LanguageClient, root: Path, configuration: dict | None = None) -> None:
    await start(client, root, options={"cacheDir": str(root.parent / "cache")}, configuration=configuration)
    await wait_for(lambda: symbols(client, "Gadget"))


async def test_stale_name_in_markdown_and_docstring_and_its_quick_fix(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", FILES)
    await _session(client, root)
    readme = _open(client, root / "README.md", "markdown")
    found = await wait_for(lambda: client.diagnostics.get(readme), 20)
    assert len(found) == 1
    d = found[0]
    assert d.severity == types.DiagnosticSeverity.Warning and d.source == "repodoc"
    assert d.range == types.Range(start=types.Position(line=2, character=11), end=types.Position(line=2, character=29))
    assert "did you mean `shapes.core.Gadget`?" in d.message
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=readme), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    assert actions and len(actions) == 1
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.kind == types.CodeActionKind.QuickFix
    assert action.is_preferred  # a close match of the same kind: confident
    assert action.edit is not None and action.edit.changes is not None
    assert list(action.edit.changes[readme]) == [types.TextEdit(range=d.range, new_text="shapes.core.Gadget")]
    core = _open(client, root / "shapes/core.py", "python")
    in_doc = await wait_for(lambda: client.diagnostics.get(core), 20)
    assert [x.range.start for x in in_doc] == [types.Position(line=4, character=40)]
    assert "did you mean `Gadget`?" in in_doc[0].message
    rst = _open(client, root / "guide.rst", "restructuredtext")
    await wait_for(lambda: rst in client.diagnostics, 20)
    assert len(client.diagnostics[rst]) == 0


async def test_a_changed_source_updates_open_docs(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**FILES, "README.md": "# Shapes\n\nUse `shapes.core.Gadget`.\n"})
    await _session(client, root)
    readme = _open(client, root / "README.md", "markdown")
    await wait_for(lambda: readme in client.diagnostics, 20)
    assert len(client.diagnostics[readme]) == 0
    core = root / "shapes/core.py"
    core.write_text(core.read_text().replace("class Gadget", "class Gadgets"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=core.as_uri())))
    found = await wait_for(lambda: client.diagnostics.get(readme), 20)
    assert "`shapes.core.Gadget`: `Gadget` is not defined in shapes.core" in found[0].message
    assert "did you mean `shapes.core.Gadgets`?" in found[0].message


async def test_refs_ignore_turns_it_off_per_glob(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", FILES)
    await _session(client, root, configuration={"refsIgnore": ["*.md"]})
    readme = _open(client, root / "README.md", "markdown")
    core = _open(client, root / "shapes/core.py", "python")
    assert await wait_for(lambda: client.diagnostics.get(core), 20)
    await wait_for(lambda: readme in client.diagnostics, 20)
    assert len(client.diagnostics[readme]) == 0


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def test_unsaved_changes_are_checked_once_typing_pauses(client: LanguageClient, tmp_path: Path) -> None:
    """Markdown, reST and a docstring edited without saving: one check of the last text each, from
    the buffer (the files on disk say otherwise)."""
    import asyncio

    seen = record_diagnostics(client)
    root = build(tmp_path / "ws", {**FILES, "README.md": "# Shapes\n\nUse `shapes.core.Gadget`.\n"})
    await _session(client, root)
    readme = _open(client, root / "README.md", "markdown")
    await wait_for(lambda: any(p.uri == readme for p in seen), 20)
    for version, name in enumerate(("G", "Ga", "Gad", "Gadg", "Gadgit"), start=2):  # typing
        _change(client, readme, version, f"# Shapes\n\nUse `shapes.core.{name}`.\n")
        await asyncio.sleep(0.05)
    await wait_for(lambda: any(p.uri == readme and p.version == 6 for p in seen), 20)
    after_open = [p for p in seen if p.uri == readme][1:]
    assert [p.version for p in after_open] == [6]  # the last text only, not one check per keystroke
    (d,) = after_open[0].diagnostics
    assert d.range == types.Range(start=types.Position(line=2, character=5), end=types.Position(line=2, character=23))
    assert "did you mean `shapes.core.Gadget`?" in d.message
    _change(client, readme, 7, "# Shapes\n\nUse `shapes.core.Gadget`.\n")  # fixed, still unsaved
    await wait_for(lambda: any(p.uri == readme and p.version == 7 for p in seen), 20)
    assert not client.diagnostics[readme]

    rst = _open(client, root / "guide.rst", "restructuredtext")
    await wait_for(lambda: any(p.uri == rst for p in seen), 20)
    _change(client, rst, 2, "Guide\n=====\n\nThe :class:`shapes.core.Widget` class.\n")
    found = await wait_for(lambda: client.diagnostics.get(rst), 20)
    assert found[0].range.start == types.Position(line=3, character=12)

    core = _open(client, root / "shapes/core.py", "python")
    assert await wait_for(lambda: client.diagnostics.get(core), 20)  # :class:`Gadgit` on disk
    text = (root / "shapes/core.py").read_text().replace(":class:`Gadgit`", ":class:`Gadget`")
    _change(client, core, 2, text)
    await wait_for(lambda: any(p.uri == core and p.version == 2 for p in seen), 20)
    assert not client.diagnostics[core]


async def test_a_saved_doc_is_checked_without_waiting_for_its_pages(client: LanguageClient, tmp_path: Path) -> None:
    seen = record_diagnostics(client)
    root = build(tmp_path / "ws", {**FILES, "README.md": "# Shapes\n\nUse `shapes.core.Gadget`.\n"})
    await _session(client, root)
    readme = _open(client, root / "README.md", "markdown")
    await wait_for(lambda: any(p.uri == readme for p in seen), 20)
    stale = "# Shapes\n\nUse `shapes.core.Widget`.\n"
    _change(client, readme, 2, stale)
    (root / "README.md").write_text(stale)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=readme)))
    assert await wait_for(lambda: client.diagnostics.get(readme), 20)
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=readme)))
    await wait_for(lambda: list(client.diagnostics.get(readme, [1])) == [], 20)  # closed: its warnings go


async def test_a_doc_with_lone_cr_line_ends_gets_its_diagnostic_on_the_editor_s_line(
        client: LanguageClient, tmp_path: Path) -> None:
    """A Markdown file whose lines end at `\\r` alone (old Mac) or `\\r\\n`: LSP counts each as a
    line end, as the editor does. Before, the doc's references were read from `text.split('\\n')`:
    a CR-only file was one line, its stale reference reported on line 0 at the offset from the start
    of the file, and a line's UTF-16 columns were counted on the wrong line."""
    text = "# Shapes\r\rDéjà 🙂: `shapes.core.Widget`\r\nor `shapes.core.Gadget`.\r"
    root = build(tmp_path / "ws", {**FILES, "README.md": text})
    (root / "README.md").write_bytes(text.encode("utf-8"))
    await _session(client, root)
    uri = root.joinpath("README.md").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=text)))
    found = await wait_for(lambda: client.diagnostics.get(uri), 20)
    assert [d.range for d in found] == [types.Range(start=types.Position(line=2, character=10),
                                                    end=types.Position(line=2, character=28))]  # UTF-16
    source = FILES["shapes/core.py"].replace("\n", "\r")  # a docstring's stale reference: line 4, column 40
    core = root.joinpath("shapes/core.py").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=core, language_id="python", version=1, text=source)))
    in_doc = await wait_for(lambda: client.diagnostics.get(core), 20)
    assert [d.range.start for d in in_doc] == [types.Position(line=4, character=40)]
