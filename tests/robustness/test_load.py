"""Load: saves keep coming while hovers and symbol searches go on. Every request is answered,
the final pages match the final text, and memory does not keep growing over 1,000 saves.

Hover p95 under load against its idle value in the same run: the goal is 2x; on an idle 2-core
machine runs measured 1.4x to 1.7x (pages are written by the server's regeneration process,
which shares the two cores with jedi and with the test itself; 1.1x to 2.2x when regeneration
ran on a thread of the server): a timing, so not asserted here. The test asserts that hovers
are never blocked behind regeneration (p95 under 250 ms) and prints the ratio;
bench/bench_lsp.py measures it on PyTorch."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import psutil
import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

pytestmark = pytest.mark.slow


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def _workspace(root: Path) -> None:
    for i in range(200):
        path = root / f"pkg{i // 25}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {i}."""\n\n\ndef helper_{i}(x):\n    """Helper {i}."""\n    return x\n')
    (root / "main.py").write_text("from pkg0.mod1 import helper_1\n\nhelper_1(2)\n")


async def _session(root: Path, cache: Path) -> LanguageClient:
    client = LanguageClient("load-test", "1")
    client.feature(types.WORKSPACE_CONFIGURATION)(lambda params: [{} for _ in params.items])
    client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(lambda params: None)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve",
                          env={**os.environ, "REPODOC_CACHE_DIR": str(cache)})
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")]))
    client.initialized(types.InitializedParams())
    for _ in range(300):
        if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="helper_199")):
            break
        await asyncio.sleep(0.05)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    return client


async def _hover_ms(client: LanguageClient, uri: str) -> float:
    started = time.perf_counter()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=3)))
    assert hover is not None and "Helper 1." in hover.contents.value
    return (time.perf_counter() - started) * 1000


def _rss(pid: int) -> int:
    proc = psutil.Process(pid)
    return proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))


async def _save(client: LanguageClient, path: Path, n: int) -> None:
    path.write_text(f'"""Saved {n}."""\n\n\ndef saved_{n}():\n    pass\n')
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


def _page_text(page: Path) -> str:
    """The page's text while waiting for it: "" while it is gone. `_save` truncates the file before writing it, so
    a save being answered may read it empty, and an empty module has no pages until the next save's run."""
    try:
        return page.read_text()
    except FileNotFoundError:
        return ""


async def test_saves_during_requests(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _workspace(root)
    client = await _session(root, tmp_path / "cache")
    try:
        main = root / "main.py"
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=main.as_uri(), language_id="python", version=1, text=main.read_text())))
        await _hover_ms(client, main.as_uri())  # jedi warm
        idle = [await _hover_ms(client, main.as_uri()) for _ in range(30)]

        target = root / "pkg7" / "mod199.py"
        busy: list[float] = []
        symbols_answered = 0
        started = time.monotonic()
        for n in range(200):  # 200 saves in about 10 seconds
            await _save(client, target, n)
            if n % 4 == 0:
                busy.append(await _hover_ms(client, main.as_uri()))
                found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="helper"))
                symbols_answered += bool(found)
            await asyncio.sleep(max(0.0, started + (n + 1) * 0.05 - time.monotonic()))
        assert symbols_answered == 50 and len(busy) == 50
        assert _p95(busy) < 250, (statistics.median(idle), _p95(idle), _p95(busy))
        kw = root / "docs" / "pkg7" / "mod199.py_kw.md"
        for _ in range(200):
            if "**`saved_199`**" in _page_text(kw):
                break
            await asyncio.sleep(0.05)
        assert "**`saved_199`**" in kw.read_text() and "saved_198" not in kw.read_text()

        pid = client._server.pid  # type: ignore[union-attr]
        rss_at_200 = _rss(pid)
        for n in range(200, 1000):
            await _save(client, target, n)
            if n % 50 == 0:
                await asyncio.sleep(0.2)
        for _ in range(200):
            if "**`saved_999`**" in _page_text(kw):
                break
            await asyncio.sleep(0.05)
        assert "**`saved_999`**" in kw.read_text()
        growth = _rss(pid) - rss_at_200
        assert growth < 50 * 2**20, f"memory grew by {growth / 2**20:.1f} MB over 800 saves"
        print(f"hover idle p95 {_p95(idle):.1f} ms, under load p95 {_p95(busy):.1f} ms "
              f"({_p95(busy) / _p95(idle):.1f}x); "
              f"RSS growth over 800 saves {growth / 2**20:.1f} MB")
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        await asyncio.wait_for(client.stop(), 10)
