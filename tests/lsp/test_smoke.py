from __future__ import annotations

from pathlib import Path

from conftest import SAMPLE, build, open_file, position_of, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient


async def test_hover_and_symbols(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    found = await wait_for(lambda: symbols(client, "Shape"))
    assert found[0].name == "Shape"
    uri = open_file(client, root / "pkg/use.py")
    text = (root / "pkg/use.py").read_text()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "make_shape('x')")))
    print(hover.contents.value)
    assert "Make a shape called NAME." in hover.contents.value
