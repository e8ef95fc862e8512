"""Incremental equals fresh, through the real server: after every random edit the client sends
didSave or workspace/didChangeWatchedFiles (as editors do), and the tree the server keeps must
become byte for byte what a fresh `repodoc generate` of a copy writes. More examples:
REPODOC_PROPERTY_EXAMPLES=100."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from edits import SETTINGS, EditMachine, differences, tree
from hypothesis.stateful import run_state_machine_as_test
from lsp_helpers import SAMPLE, SERVER, build, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SETTLE_SECONDS = 20  # a regeneration of this tiny workspace takes well under a second


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop in a thread of its own: the state machine's rules are not coroutines."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


class ServerEdits(EditMachine):
    loop: asyncio.AbstractEventLoop

    def __init__(self) -> None:
        super().__init__()
        self.client: LanguageClient = self.call(self._start())

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> LanguageClient:
        client = await ClientServerConfig(server_command=SERVER, server_env=self.env).start(None)
        client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
        client.set_configuration({}, section="repodoc")
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=self.ws.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.ws.as_uri(), name="ws")],
            initialization_options={"cacheDir": str(self.home / "cache")}))
        return client

    async def _notify(self, changed: list[str], folders: list[str]) -> None:
        if self.steps == 1:  # the first tree: repodoc.generate
            await self.client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
            return
        if folders and self.steps % 2 == 0:  # as VS Code reports a folder deleted, moved or moved in
            kinds = {True: types.FileChangeType.Created, False: types.FileChangeType.Deleted}
            self.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=(self.ws / f).as_uri(), type=kinds[(self.ws / f).is_dir()]) for f in folders]))
            return
        existing = [rel for rel in changed if (self.ws / rel).is_file()]
        gone = [rel for rel in changed if rel not in existing]
        saves = existing if self.steps % 2 else []  # odd steps: saved in the editor
        for rel in saves:
            self.client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=(self.ws / rel).as_uri())))
        events = [types.FileEvent(uri=(self.ws / rel).as_uri(), type=types.FileChangeType.Changed)
                  for rel in existing if rel not in saves]
        events += [types.FileEvent(uri=(self.ws / rel).as_uri(), type=types.FileChangeType.Deleted) for rel in gone]
        if events:
            self.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))

    def after_edit(self, changed: list[str], folders: list[str]) -> None:
        self.call(self._notify(changed, folders))
        fresh = self.fresh()
        deadline = time.monotonic() + SETTLE_SECONDS
        while (diff := differences(tree(self.ws / "docs"), fresh)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert diff == [], f"after {changed}, {SETTLE_SECONDS} s later"

    def teardown(self) -> None:
        super().teardown()
        self.call(asyncio.wait_for(self.client.shutdown_session(), 10), timeout=20)


def test_server_incremental_equals_fresh(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> None:
    machine = type("Run", (ServerEdits,), {"base": tmp_path, "loop": loop})
    run_state_machine_as_test(machine, settings=SETTINGS)


async def test_folder_events_reach_every_file_below(client: LanguageClient, tmp_path: Path) -> None:
    """A watcher may report only the folder of a deleted, moved or moved-in package."""
    root = build(tmp_path / "ws", {**SAMPLE, "extra/__init__.py": '"""Extra."""\n', "extra/more.py": "x = 1\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert (root / "docs/extra/more.py_docs.md").exists()
    shutil.move(root / "extra", root / "moved")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(root / "extra").as_uri(), type=types.FileChangeType.Deleted),
        types.FileEvent(uri=(root / "moved").as_uri(), type=types.FileChangeType.Created)]))
    index = root / "docs/index.md"
    # the folder index is written after the file pages: wait for the whole regeneration
    await wait_for(lambda: (root / "docs/moved/more.py_docs.md").exists() and not (root / "docs/extra").exists()
                   and "moved" in index.read_text(), 20)
    assert "moved" in index.read_text() and "extra" not in index.read_text()
