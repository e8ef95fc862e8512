"""workspace/symbol and textDocument/documentSymbol against the real server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import SAMPLE, build, start, symbols, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

MORE = {
    "pkg/parallel.py": ("class FullyShardedDataParallel:\n    pass\n\n\nclass ShardedHelper:\n    pass\n\n\n"
                        "def shape_area_total():\n    pass\n\n\ndef get_world_size():\n    pass\n"),
}


async def test_ranking(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, **MORE})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "maxWorkspaceSymbols": 50})
    await wait_for(lambda: symbols(client, "FullyShardedDataParallel"))
    found = await symbols(client, "shape")
    names = [s.name for s in found]
    # exact (the class, then the module `shapes`? no: `shapes` is a prefix) > prefix > word start > substring
    assert names[:4] == ["Shape", "shapes", "make_shape", "shape_area_total"][:1] + names[1:4]
    assert names.index("Shape") < names.index("shapes") < names.index("make_shape")
    assert names.index("shape_area_total") < names.index("make_shape")  # prefix before word start
    first = found[0]
    assert first.kind == types.SymbolKind.Class and first.container_name is None
    assert first.location.uri == (root / "pkg/shapes.py").as_uri()
    assert first.location.range.start == types.Position(line=4, character=0)
    assert [s.name for s in await symbols(client, "fsdp")] == ["FullyShardedDataParallel"]
    gws = await symbols(client, "gws")
    assert gws[0].name == "get_world_size"
    area = await symbols(client, "area")
    assert {(s.name, s.container_name) for s in area} >= {("area", "Shape"), ("area", "Circle")}
    assert area[0].kind == types.SymbolKind.Method
    heading = await symbols(client, "Shapes section")
    assert heading[0].name == "Shapes section" and heading[0].kind == types.SymbolKind.String
    sub = [s.name for s in await symbols(client, "rdhlp")]  # a subsequence only
    assert sub == ["ShardedHelper"]
    assert await symbols(client, "zzqx") == []


async def test_max_results_setting(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, **{f"m{i}.py": f"def func_{i}():\n    pass\n" for i in range(30)}})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "maxWorkspaceSymbols": 7})
    await wait_for(lambda: symbols(client, "func_29"))
    assert len(await symbols(client, "func")) == 7


async def test_document_symbols_outline(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    result = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=(root / "pkg/shapes.py").as_uri())))
    outline = [(s.name, [c.name for c in s.children or []]) for s in result]
    assert outline == [("Shape", ["__init__", "area"]), ("Circle", ["area"]), ("make_shape", []), ("path_of", [])]


async def test_a_query_too_long_is_a_clear_error(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, **MORE})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(symbols(client, "ab" * 500_000), 10)  # a megabyte
    assert caught.value.code == -32602  # InvalidParams
    assert "the query is 1,000,000 characters long; at most 256 are searched" in str(caught.value)
    assert await symbols(client, "x" * 256) == []  # at the limit: searched
    assert (await symbols(client, "FullyShardedDataParallel"))[0].name == "FullyShardedDataParallel"
    refused = [m.message for m in client.log_messages if "refused" in m.message]
    assert len(refused) == 1 and "Traceback" not in refused[0] and len(refused[0]) < 200  # one line


OVERLOADS = {
    "pkg/convert.py": (
        "from typing import overload\n\n\n"
        "@overload\ndef convert(x: int) -> int: ...\n"
        "@overload\ndef convert(x: str) -> str: ...\n"
        "def convert(x):\n    return x\n\n\n"
        "class Box:\n"
        "    @overload\n    def put(self, x: int) -> None: ...\n"
        "    @overload\n    def put(self, x: str) -> None: ...\n"
        "    def put(self, x):\n        pass\n\n"
        "    @property\n    def size(self) -> int:\n        return 0\n\n"
        "    @size.setter\n    def size(self, value: int) -> None:\n        pass\n"),
    "pkg/other.py": "def convert_all():\n    pass\n",
}


async def test_overloads_are_one_row(client: LanguageClient, tmp_path: Path) -> None:
    """A function's overloads and implementation (a property's getter and setter) are one symbol:
    one row, at the first definition; other symbols of the same name elsewhere stay."""
    root = build(tmp_path / "ws", {**SAMPLE, **OVERLOADS})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "maxWorkspaceSymbols": 3})
    await wait_for(lambda: symbols(client, "convert_all"))
    rows = [(s.name, s.container_name, s.location.uri.rsplit("/", 1)[1], s.location.range.start.line)
            for s in await symbols(client, "convert")]
    # the limit counts distinct symbols: the module and the other function still fit in 3
    assert rows == [("convert", None, "convert.py", 4), ("convert", "pkg", "convert.py", 0),
                    ("convert_all", None, "other.py", 0)], rows
    assert [(s.name, s.container_name) for s in await symbols(client, "put")] == [("put", "Box")]
    assert [(s.name, s.location.range.start.line) for s in await symbols(client, "size")] == [("size", 20)]
