"""Hover and workspace/symbol on C++ and TypeScript files, against the real server: the definitions
come from tree-sitter (jedi stays for Python)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from lsp_helpers import build, open_file, position_of, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

FILES = {
    "src/ops.h": "#pragma once\nnamespace ops {\n/// Adds two numbers.\n/// @param a first\n"
                 "TORCH_API int add(int a, int b);\n}\n",
    "src/ops.cpp": '#include "ops.h"\nint ops::add(int a, int b) { return a + b; }\n'
                   "int twice(int x) { return add(x, x); }\n",
    "web/util.ts": "/** Doubles. */\nexport function double(x: number): number { return 2 * x; }\n",
    "web/app.ts": 'import { double } from "./util";\nconsole.log(double(2));\n',
}


async def test_hover_and_symbols_on_cpp_and_typescript(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", FILES)
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "double"))
    assert any(s.location.uri.endswith("src/ops.h") for s in await symbols(client, "add"))

    header = root / "src/ops.h"
    text = header.read_text()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=open_file(client, header)),
        position=position_of(text, "add(int a")))
    assert hover is not None
    value = hover.contents.value
    # as C++ writes it (the language's word, not Python's `def`)
    assert "```cpp\nfunction add(int a, int b)" in value and "Adds two numbers." in value and "- `a`: first" in value
    assert "`src/ops.h:5`" in value

    source = root / "src/ops.cpp"
    text = source.read_text()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=open_file(client, source)),
        position=position_of(text, "add(x, x)")))
    assert hover is not None and "`src/ops.cpp:2`" in hover.contents.value  # the definition in this file


async def _hover_text(client: LanguageClient, path: Path, at: str) -> str:
    text = path.read_text()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=open_file(client, path)), position=position_of(text, at)))
    return hover.contents.value if hover is not None else ""


async def test_hover_lists_users_by_name(client: LanguageClient, tmp_path: Path) -> None:
    """A C++ or TypeScript definition's hover lists the files naming it, marked as name matches."""
    root = build(tmp_path / "ws", FILES)
    await start(client, root, "visual-studio-code", options={"cacheDir": str(tmp_path / "cache")})
    value = await wait_for(lambda: _has_users(client, root / "src/ops.h", "add(int a"))
    assert "**Used by** 1 file (by name; not resolved): [`src/ops.cpp`](" in value and "ops.cpp#L3)" in value
    value = await _hover_text(client, root / "web/util.ts", "double(x")
    assert "**Used by** 1 file (by name; not resolved): [`web/app.ts`](" in value
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    page = root / "docs/web/util.ts_docs.md"
    assert "**Used by** (1 file naming it; by name, not resolved):\n\n- [app.ts](app.ts_docs.md)" in page.read_text()
    # a save that stops naming it: the page on save and the hover follow
    app = root / "web/app.ts"
    uri = open_file(client, app)
    app.write_text("console.log(2);\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_for(lambda: "Used by" not in page.read_text(), 20)
    # the server takes the saved file's state from the page process once its pages are written
    assert "Used by" not in await wait_for(lambda: _has_users(client, root / "web/util.ts", "double(x", False), 20)


async def _has_users(client: LanguageClient, path: Path, at: str, users: bool = True) -> str:
    """The hover at `at` once it lists users (`users`), or once it lists none."""
    value = await _hover_text(client, path, at)
    return value if ("Used by" in value) == users else ""


async def test_an_edited_header_is_analysed_again_under_new_settings(client: LanguageClient, tmp_path: Path) -> None:
    """The hovers of an edited (unsaved) header keep its analysis until the text changes, or until the
    settings make the root anew: `blankMacros` changed, the same text shows what it hid."""
    root = build(tmp_path / "ws", {"src/ops.h": "/// A tensor.\nstruct MYMAC Tensor { int size; };\n"})
    options = {"cacheDir": str(tmp_path / "cache")}
    await start(client, root, "visual-studio-code", options=options)
    uri = open_file(client, root / "src/ops.h")
    edited = "/// A tensor.\nstruct MYMAC Tensor { int size; };\nint unsaved;\n"
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))

    async def hover() -> str:
        found = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(edited, "Tensor {")))
        return found.contents.value if found is not None else ""

    assert "struct Tensor" not in await hover()  # `MYMAC` is no macro repodoc blanks by default
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"repodoc": {**options, "blankMacros": r"\bMYMAC\b"}}))
    assert "A tensor." in await wait_for(lambda: _having(hover, "struct Tensor"), 20)


async def _having(hover: Callable[[], Awaitable[str]], text: str) -> str:
    value = await hover()
    return value if text in value else ""
