"""The symbol graph through the real server: hover's "used by" and "subclassed by",
textDocument/references, code lenses resolved lazily, document links to the pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import SAMPLE, build, open_file, position_of, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

FILES = {
    **SAMPLE,
    "pkg/__init__.py": '"""The demo package."""\nfrom .shapes import Shape as Shape\n',
    "pkg/more.py": ("import pkg\n\n\nclass Square(pkg.Shape):\n    pass\n\n\n"
                    "def two():\n    return pkg.Shape('a'), pkg.Shape('b')\n"),
}


async def _started(client: LanguageClient, tmp_path: Path, generate: bool = True) -> Path:
    root = build(tmp_path / "ws", FILES)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Square"))
    if generate:  # runs on the root's thread after indexing: the graph is built by then
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    return root


async def _references(client: LanguageClient, uri: str, text: str, needle: str, offset: int = 0,
                      declaration: bool = False) -> list[tuple[str, int, int, int]]:
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, needle, offset),
        context=types.ReferenceContext(include_declaration=declaration)))
    return sorted((Path(loc.uri).name, loc.range.start.line + 1, loc.range.start.character, loc.range.end.character)
                  for loc in found or ())


async def test_references_follow_reexports_and_update_on_save(client: LanguageClient, tmp_path: Path) -> None:
    root = await _started(client, tmp_path, generate=False)
    use = root / "pkg/use.py"
    text = use.read_text()
    uri = open_file(client, use)
    expected = [("__init__.py", 2, 20, 25), ("more.py", 4, 17, 22), ("more.py", 9, 15, 20), ("shapes.py", 20, 13, 18),
                ("shapes.py", 27, 29, 34), ("shapes.py", 29, 11, 16), ("use.py", 1, 23, 28), ("use.py", 4, 0, 5)]
    assert await _references(client, uri, text, "Shape('y')") == expected
    # from the definition itself, with the declaration
    shapes = root / "pkg/shapes.py"
    suri = open_file(client, shapes)
    with_decl = await _references(client, suri, shapes.read_text(), "class Shape", 6, declaration=True)
    assert with_decl == sorted([("shapes.py", 5, 6, 11), *expected])
    # a save that drops the uses: the answer follows
    use.write_text("from pkg.shapes import make_shape\n\nthing = make_shape('x')\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_for(lambda: _no_use(client, suri, shapes.read_text()))
    # nothing there: whitespace, past the end, a name that is not the workspace's
    assert await _references(client, suri, shapes.read_text(), "\n\n\nclass Shape", 1) == []
    assert await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=suri), position=types.Position(line=900, character=0),
        context=types.ReferenceContext(include_declaration=False))) is None
    assert await _references(client, suri, shapes.read_text(), "os.path", 4) == []
    # a form feed (^L between sections) breaks no line for the editor nor for Python
    feed = root / "pkg/feed.py"
    feed.write_text("from pkg.shapes import Shape\n\x0c\n\nShape('f')  # é\x0c\n\nx = Shape\n")
    furi = open_file(client, feed)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=furi)))
    await wait_for(lambda: _used_in(client, suri, shapes.read_text(), "feed.py"))
    for needle in ("Shape('f')", "= Shape"):
        assert [ref for ref in await _references(client, furi, feed.read_text(), needle, 2 * needle.startswith("="))
                if ref[0] == "feed.py"] == [("feed.py", 1, 23, 28), ("feed.py", 4, 0, 5), ("feed.py", 6, 4, 9)]
    # an edit below a form feed is applied to its own line (pygls's lines put it on the line above)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=furi, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=5, character=0), end=types.Position(line=5, character=1)),
            text="yy")]))
    edited = feed.read_text().replace("x = Shape", "yy = Shape")
    assert [ref for ref in await _references(client, furi, edited, "= Shape", 2)
            if ref[0] == "feed.py"] == [("feed.py", 1, 23, 28), ("feed.py", 4, 0, 5), ("feed.py", 6, 4, 9)]
    # lines that end at a lone \r (old Mac files) are lines for Python and for the editor
    mac = root / "pkg/mac.py"
    mac.write_bytes(b"from pkg.shapes import Shape\r\rShape('m')\r\r\nx = Shape\r")
    muri = open_file(client, mac)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=muri)))
    await wait_for(lambda: _used_in(client, suri, shapes.read_text(), "mac.py"))
    assert [ref for ref in await _references(client, suri, shapes.read_text(), "class Shape", 6)
            if ref[0] == "mac.py"] == [("mac.py", 1, 23, 28), ("mac.py", 3, 0, 5), ("mac.py", 5, 4, 9)]


async def _no_use(client: LanguageClient, uri: str, text: str) -> bool:
    return "use.py" not in {f for f, *_ in await _references(client, uri, text, "class Shape", 6)}


async def _used_in(client: LanguageClient, uri: str, text: str, name: str) -> bool:
    return name in {f for f, *_ in await _references(client, uri, text, "class Shape", 6)}


async def test_hover_says_used_by_and_subclassed_by(client: LanguageClient, tmp_path: Path) -> None:
    root = await _started(client, tmp_path)
    shapes = root / "pkg/shapes.py"
    text = shapes.read_text()
    uri = open_file(client, shapes)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "class Shape", 6)))
    value = hover.contents.value
    more, use = (root / "pkg/more.py").as_uri(), (root / "pkg/use.py").as_uri()
    assert (f"**Used by** 3 files: [`pkg/more.py`]({more}#L4), [`pkg/use.py`]({use}#L1), "
            f"[`pkg/__init__.py`]({(root / 'pkg/__init__.py').as_uri()}#L2)") in value
    assert f"**Subclassed by** [`Square`]({more}#L4), [`Circle`]({uri}#L20)" in value
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "def path_of", 4)))
    assert "**Used by** no other workspace file" in hover.contents.value
    assert "Subclassed by" not in hover.contents.value


async def test_code_lens_resolved_lazily_and_document_links(client: LanguageClient, tmp_path: Path) -> None:
    root = await _started(client, tmp_path)
    shapes = root / "pkg/shapes.py"
    uri = open_file(client, shapes)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [(lens.range.start.line + 1, lens.data["qualname"]) for lens in lenses] == [
        (5, "Shape"), (12, "Shape.__init__"), (15, "Shape.area"), (20, "Circle"), (23, "Circle.area"),
        (27, "make_shape"), (32, "path_of")]
    assert all(lens.command is None for lens in lenses)  # counted only when resolved
    docs = (root / "docs/pkg/shapes.py_docs.md").as_uri()
    resolved = await client.code_lens_resolve_async(lenses[0])
    assert resolved.command.title == "used by 3 files · docs"
    assert resolved.command.command == "repodoc.showPage"
    assert list(resolved.command.arguments) == [f"{docs}#class-Shape"]
    assert await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=resolved.command.command, arguments=resolved.command.arguments)) is True
    assert [d.uri for d in client.shown_documents] == [f"{docs}#class-Shape"]
    with pytest.raises(Exception, match="URI of a page"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.showPage",
                                                                                arguments=[42]))
    resolved = await client.code_lens_resolve_async(lenses[-1])
    assert resolved.command.title == "used by 0 files · docs"
    gone = types.CodeLens(range=lenses[0].range, data={"root": str(root), "rel": "pkg/nothing.py", "qualname": "X"})
    assert (await client.code_lens_resolve_async(gone)).command.title == "not in the workspace any more"
    junk = types.CodeLens(range=lenses[0].range, data=[1, 2])
    assert (await client.code_lens_resolve_async(junk)).command.command == ""

    links = await client.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    got = [(link.range.start.line + 1, link.range.start.character, link.range.end.character, link.target)
           for link in links]
    assert got[0] == (1, 0, len(shapes.read_text().splitlines()[0]), docs)
    assert (5, 6, 11, f"{docs}#class-Shape") in got and (15, 8, 12, f"{docs}#method-Shape.area") in got
    assert len(got) == 8


async def test_no_links_before_the_pages_exist(client: LanguageClient, tmp_path: Path) -> None:
    root = await _started(client, tmp_path, generate=False)
    uri = open_file(client, root / "pkg/shapes.py")
    assert await client.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=uri))) is None
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    resolved = await client.code_lens_resolve_async(lenses[0])
    assert resolved.command.title == "used by 3 files" and resolved.command.command == ""
