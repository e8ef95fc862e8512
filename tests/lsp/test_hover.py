"""textDocument/hover against the real server."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import SAMPLE, build, open_file, position_of, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient


async def _hover(client: LanguageClient, uri: str, text: str, needle: str, offset: int = 0) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, needle, offset)))


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11.0"])
async def test_hover_on_function_class_method_module_and_library(client: LanguageClient, tmp_path: Path,
                                                                  profile: str) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, profile, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    docs = (root / "docs/pkg/shapes.py_docs.md").as_uri()
    use = root / "pkg/use.py"
    text = use.read_text()
    uri = open_file(client, use)

    hover = await _hover(client, uri, text, "make_shape('x')")
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == (
        "```python\ndef make_shape(name: str) -> Shape\n```\n\nMake a shape called NAME.\n\n---\n\n"
        "**Defined in** `pkg/shapes.py:27`\n\n"
        "**Index**: function in module `pkg.shapes` · imported by 1 workspace file\n\n"
        f"**Used by** 1 file: [`pkg/use.py`]({use.as_uri()}#L1)\n\n"
        f"[Documentation: `shapes.py_docs.md#function-make_shape`]({docs}#function-make_shape)")

    hover = await _hover(client, uri, text, "Shape('y')")
    value = hover.contents.value
    assert value.startswith("```python\nclass Shape(name: str)\n```\n\nA shape on the plane.")
    assert "- `name`: what it is called." in value
    assert f"({docs}#class-Shape)" in value and "class in module `pkg.shapes`" in value

    hover = await _hover(client, uri, text, "area()")
    assert "Return the area of the shape." in hover.contents.value
    assert "method in class `Shape`" in hover.contents.value and f"({docs}#method-Shape.area)" in hover.contents.value

    hover = await _hover(client, uri, text, "pkg.shapes", 4)
    assert hover.contents.value.startswith("```python\nmodule pkg.shapes\n```\n\nShapes and their areas.")
    assert "module `pkg.shapes`: 2 classes, 2 functions" in hover.contents.value
    assert "imported by 2 workspace files" in hover.contents.value

    shapes = root / "pkg/shapes.py"
    stext = shapes.read_text()
    suri = open_file(client, shapes)
    hover = await _hover(client, suri, stext, "join(", 1)
    assert "```python\ndef join(" in hover.contents.value and "/lib/python3." in hover.contents.value


async def test_hover_again_after_another_file_changes(client: LanguageClient, tmp_path: Path) -> None:
    """jedi's inference of a document is kept for its next hovers (a second hover is a millisecond);
    a change on disk to the file it imports from is seen at the next hover, saved in the editor
    (didSave) or outside it (didChangeWatchedFiles)."""
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    use, shapes = root / "pkg/use.py", root / "pkg/shapes.py"
    text = use.read_text()
    uri = open_file(client, use)
    for _ in range(2):
        hover = await _hover(client, uri, text, "make_shape('x')")
        assert "Make a shape called NAME." in hover.contents.value
    for said, notify in (("Made in the editor.", "save"), ("Made outside.", "watched")):
        shapes.write_text(shapes.read_text().replace("Make a shape called NAME.", said)
                          .replace("Made in the editor.", said))
        if notify == "save":
            client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())))
        else:
            client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=shapes.as_uri(), type=types.FileChangeType.Changed)]))
        hover = await _hover(client, uri, text, "make_shape('x')")
        assert said in hover.contents.value, (notify, hover.contents.value)


async def test_hover_after_a_change_a_client_cannot_report(client: LanguageClient, tmp_path: Path) -> None:
    """A client that cannot watch files (Neovim on Linux, by default) reports no change made outside
    it: jedi's work is not kept there, and a hover sees the changed file at once."""
    root = build(tmp_path / "ws", SAMPLE)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        initialization_options={"cacheDir": str(tmp_path / "c")}))
    await wait_for(lambda: symbols(client, "Shape"))
    use, shapes = root / "pkg/use.py", root / "pkg/shapes.py"
    text = use.read_text()
    uri = open_file(client, use)
    assert "Make a shape called NAME." in (await _hover(client, uri, text, "make_shape('x')")).contents.value
    shapes.write_text(shapes.read_text().replace("Make a shape called NAME.", "Changed by git."))
    assert "Changed by git." in (await _hover(client, uri, text, "make_shape('x')")).contents.value


async def test_hover_nothing_plaintext_unsaved_and_out_of_range(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    caps = types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])))
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=root.as_uri(), initialization_options={"cacheDir": str(tmp_path / "c")}))
    await wait_for(lambda: symbols(client, "Shape"))
    use = root / "pkg/use.py"
    uri = use.as_uri()
    text = "from pkg.shapes import make_shape\n\n\ndef fresh():\n    '''Not saved yet.'''\n\n\nfresh()\n"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    hover = await _hover(client, uri, text, "fresh()\n")
    assert hover.contents.kind == types.MarkupKind.PlainText
    assert hover.contents.value.startswith("def fresh()\n\nNot saved yet.\n\nDefined in pkg/use.py:4")
    assert await _hover(client, uri, text, "\n\n\ndef", 1) is None  # blank line
    far = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=500, character=3)))
    assert far is None


async def test_hover_jedi_cannot_resolve_lists_the_index_definitions(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Circle"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    docs = (root / "docs/pkg/shapes.py_docs.md").as_uri()
    path = root / "pkg/calls.py"
    text = "def total(things):\n    return sum(t.area() for t in things) + things.nowhere()\n"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=text)))

    hover = await _hover(client, path.as_uri(), text, "area()", 1)  # `t` has no known type
    assert hover is not None and hover.contents.value == (
        "`area`: not resolved here; the keyword index has 2 definitions of this name:\n\n"
        f"- method `Shape.area` in `pkg/shapes.py:15` ([documentation]({docs}#method-Shape.area))\n"
        f"- method `Circle.area` in `pkg/shapes.py:23` ([documentation]({docs}#method-Circle.area))")
    assert await _hover(client, path.as_uri(), text, "nowhere()", 2) is None  # not in the index either


async def test_hover_runs_nothing_and_escapes_html(client: LanguageClient, tmp_path: Path) -> None:
    """Safety: hovering over a workspace module's names never runs it, and HTML from its docstrings
    reaches the hover only inside code (fences or code spans), never as markup."""
    import re

    from helpers import strip_fences

    sentinel = tmp_path / "sentinel"
    trap = f"open({str(sentinel)!r}, 'w').write('ran')\n"
    root = build(tmp_path / "ws", {
        "evil.py": ('"""Evil <script>alert(1)</script> module."""\n' + trap
                    + "def hello(x='<b>'):\n    \"\"\"Say <img src=x onerror=alert(1)> & <b>hi</b>.\n\n"
                    "    Args:\n        x: <i>markup</i>\n    \"\"\"\n"),
        "user.py": "import evil\nfrom evil import hello\nhello()\nevil.hello()\n",
    })
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "hello"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    user = root / "user.py"
    text = user.read_text()
    uri = open_file(client, user)
    values = []
    for needle, offset in [("hello()\n", 0), ("evil.hello", 6), ("import evil", 8), ("from evil", 6)]:
        hover = await _hover(client, uri, text, needle, offset)
        assert hover is not None, needle
        values.append(hover.contents.value)
    assert any("Say &lt;img" in v for v in values) and any("Evil &lt;script&gt;" in v for v in values), values
    for value in values:
        outside = re.sub(r"(`+)(?:.+?)\1", "", strip_fences(value))
        for tag in ("<script", "<img", "<b>", "<i>"):
            assert tag not in outside, (tag, value)
    assert not sentinel.exists()


async def test_hover_modes_extras_off_and_a_bad_value(client: LanguageClient, tmp_path: Path) -> None:
    """`hover`: extras shows only what repodoc adds (beside another Python server), off nothing;
    a bad value is told once and the default (full) is used."""
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache"), "hover": "extras"})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    use = root / "pkg/use.py"
    text = use.read_text()
    uri = open_file(client, use)
    hover = await _hover(client, uri, text, "make_shape('x')")
    assert hover is not None
    assert hover.contents.value.startswith("**repodoc** · **Defined in** `pkg/shapes.py:27`")
    assert "```" not in hover.contents.value and "Make a shape" not in hover.contents.value
    assert "#function-make_shape)" in hover.contents.value
    shapes = root / "pkg/shapes.py"
    stext = shapes.read_text()
    assert await _hover(client, open_file(client, shapes), stext, "join(", 1) is None  # a library name: nothing to add

    async def no_hover() -> bool:
        return await _hover(client, uri, text, "make_shape('x')") is None

    def indexings() -> int:
        return sum(1 for reports in client.progress_reports.values() for r in reports
                   if isinstance(r, types.WorkDoneProgressBegin) and "indexing" in r.title)

    before = indexings()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"repodoc": {"cacheDir": str(tmp_path / "cache"), "hover": "off"}}))
    await wait_for(no_hover, timeout=15)
    with pytest.raises(TimeoutError):  # a live setting: the root is not indexed again
        await wait_for(lambda: indexings() > before, timeout=3)
    assert before >= 1

    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"repodoc": {"cacheDir": str(tmp_path / "cache"), "hover": "loud"}}))
    await wait_for(lambda: any("loud" in m.message and "expected one of full, extras, off" in m.message
                               for m in client.log_messages + client.messages), timeout=15)
    hover = await wait_for(lambda: _hover(client, uri, text, "make_shape('x')"), timeout=15)
    assert hover.contents.value.startswith("```python\ndef make_shape(")


async def test_hover_on_odd_docstrings_shows_them_whole(client: LanguageClient, tmp_path: Path) -> None:
    """A docstring with an indented blank line (was `ValueError` from `min()`), a reST underline, a
    stray fence, notes after the arguments and roles: the hover shows all of it, as sound Markdown."""
    from helpers import contained_errors

    root = build(tmp_path / "ws", {
        "odd.py": ('def blank():\n    """Summary.\n\n        \n\n    Closing words.\n    """\n\n\n'
                   'def fenced():\n    """Title\n    ~~~~~\n\n    Text\n    ```\n    after the fence.\n    """\n\n\n'
                   'def put(device):\n    """Put it.\n\n    Args:\n'
                   '        device (:class:`torch.device`): where it runs.\n\n'
                   '    Note:\n        Read :func:`torch.load` first.\n    """\n'),
        "user.py": "from odd import blank, fenced, put\nblank()\nfenced()\nput(1)\n",
    })
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "fenced"))
    user = root / "user.py"
    text = user.read_text()
    uri = open_file(client, user)
    expected = {"blank()\n": ["Summary.", "Closing words."],
                "fenced()\n": ["**Title**", "Text", "after the fence."],
                "put(1)": ["Put it.", "- `device` (`torch.device`): where it runs.", "**Note**",
                           "Read ``torch.load`` first."]}
    for needle, parts in expected.items():
        hover = await _hover(client, uri, text, needle)
        assert hover is not None, needle
        value = hover.contents.value
        for words in parts:
            assert words in value, (words, value)
        assert contained_errors(value.split("\n---\n", 1)[0]) == [], value


async def test_hover_in_a_file_whose_lines_end_at_a_lone_cr(client: LanguageClient, tmp_path: Path) -> None:
    """An editor's text with `\\r` line ends (old Mac): LSP, the editor and jedi count each `\\r` as a
    line end. Before, the cursor was looked for in `text.split('\\n')`: one line, so a hover below
    line 1 found no name there and answered nothing, from jedi or the index."""
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Circle"))
    path = root / "pkg/calls.py"
    text = ("from pkg.shapes import make_shape\n\n\ndef total(things):\n"
            "    make_shape('x')\n    return sum(t.area() for t in things)\n")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=text.replace("\n", "\r"))))
    hover = await _hover(client, path.as_uri(), text, "make_shape('x')")  # jedi's
    assert hover is not None and "def make_shape(name: str) -> Shape" in hover.contents.value
    hover = await _hover(client, path.as_uri(), text, "area()", 1)  # the index's
    assert hover is not None and "the keyword index has 2 definitions" in hover.contents.value
