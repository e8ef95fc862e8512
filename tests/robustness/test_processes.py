"""No process outlives the server: worker processes (the analysis pool on a fork server,
the regeneration process) are gone soon after `exit`, and neither they nor the server keep the client's pipes open."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import psutil
from helpers import regen_processes
from lsprotocol import types
from pygls.lsp.client import LanguageClient


def _tree(pid: int) -> set[int]:
    try:
        return {pid} | {c.pid for c in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return set()


async def test_exit_leaves_no_process(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(120):  # enough files for the parallel analysis pool
        path = root / f"pkg{i // 30}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def func_{i}():\n    pass\n")
    client = LanguageClient("process-test", "1")
    client.feature(types.WORKSPACE_CONFIGURATION)(lambda params: [{} for _ in params.items])
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve",
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    server = client._server  # type: ignore[attr-defined]
    seen = _tree(server.pid)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=root.as_uri()))
    client.initialized(types.InitializedParams())
    for _ in range(400):
        seen |= _tree(server.pid)
        if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="func_119")):
            break
        await asyncio.sleep(0.025)
    seen |= _tree(server.pid)
    assert len(seen) > 1, "the analysis pool was not used: the test proves nothing"
    # A save starts the regeneration process; exit comes while it may still be loading.
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=(root / "pkg0/mod0.py").as_uri())))
    for _ in range(200):
        regen = regen_processes(server.pid)
        if regen:
            break
        await asyncio.sleep(0.05)
    assert regen, "no regeneration process: the test proves less than it says"
    seen |= {p.pid for p in regen}
    await asyncio.wait_for(client.shutdown_async(None), 10)
    client.exit(None)
    try:
        await asyncio.wait_for(server.wait(), 5)  # also waits for the server's pipes to close
    except TimeoutError:
        raise AssertionError("5 s after exit a process still holds the client's pipes") from None
    assert server.returncode == 0
    deadline = time.monotonic() + 5
    while (alive := [p for p in seen if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not alive, [psutil.Process(p).cmdline()[:4] for p in alive]
    await client.stop()
