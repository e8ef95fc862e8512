"""Checks of open buffers on a root's thread: only a document's newest version is analysed (a
queued check of an older one is dropped before it runs), a save drops the queued check, and a
buffer over max-file-bytes is not analysed."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repodoc_lsp.config import Settings
from repodoc_lsp.server import ref_diagnostics
from repodoc_lsp.server.ref_diagnostics import Latest, Typing, refresh


class _Session:
    """What `refresh` reads of the server and of a root; the root's thread is held until `release`."""

    def __init__(self, tmp_path: Path, settings: Settings, uri: str = "file:///ws/notes.md") -> None:
        self.uri = uri
        self.thread = ThreadPoolExecutor(max_workers=1)
        self.held = threading.Event()
        self.thread.submit(self.held.wait)  # the root's thread is busy (a scan, a save's pages)
        indexed = threading.Event()
        indexed.set()
        self.root = SimpleNamespace(path=tmp_path, settings=settings, indexed=indexed, submit=self.thread.submit,
                                    rel=lambda path: path.name)
        self.doc = SimpleNamespace(source="", version=0)
        self.published: list[int | None] = []
        self.stopping = False
        self.spawned: list[asyncio.Task] = []
        self.typing = Typing(self)  # type: ignore[arg-type]

    def spawn(self, coro: Any) -> None:
        self.spawned.append(asyncio.ensure_future(coro))

    def root_for(self, path: Path) -> Any:
        return self.root

    def open_documents(self) -> list[str]:
        return [self.uri]

    def document(self, uri: str) -> Any:
        return self.doc

    def text_document_publish_diagnostics(self, params: Any) -> None:
        self.published.append(params.version)

    def release(self) -> None:
        self.held.set()
        self.thread.shutdown(wait=True)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    texts: list[str] = []
    monkeypatch.setattr(ref_diagnostics, "stale_in", lambda root, rel, text: texts.append(text) or [])
    return texts


async def _type(session: _Session, versions: range) -> list[asyncio.Task]:
    """A version of the document each pause, each check queued behind the busy thread."""
    assert session.uri.endswith((".md", ".py"))
    tasks = []
    for version in versions:
        session.doc.source, session.doc.version = f"# Notes {version}\n", version
        tasks.append(asyncio.ensure_future(refresh(session, session.uri)))  # type: ignore[arg-type]
        await asyncio.sleep(0)  # it reads the text and queues its check
    return tasks


async def test_only_the_newest_version_is_analysed(tmp_path: Path, analysed: list[str]) -> None:
    session = _Session(tmp_path, Settings())
    tasks = await _type(session, range(1, 6))
    await asyncio.to_thread(session.release)
    await asyncio.gather(*tasks)
    assert analysed == ["# Notes 5\n"]  # versions 1-4 were dropped before they ran
    assert session.published == [5]
    assert session.typing.checks.dropped == 4 and not session.typing.checks.queued


@pytest.mark.parametrize("how", ["saved", "a save of the root"])
async def test_a_save_drops_the_queued_check(tmp_path: Path, analysed: list[str], how: str) -> None:
    """The saved document's queued check (`Typing.saved`), and every queued check of the root whose
    files were saved (`drop_checks`, before the save's job is queued): `refresh_root` checks the
    open documents again once the workspace has the saved files."""
    session = _Session(tmp_path, Settings(), "file:///ws/code.py")
    tasks = await _type(session, range(1, 3))
    if how == "saved":
        session.typing.saved(session.uri)  # a source: checked again after the save's pages
    else:
        ref_diagnostics.drop_checks(session, session.root)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    await asyncio.to_thread(session.release)
    await asyncio.gather(*tasks, *session.spawned)
    assert session.typing.checks.dropped == 2  # version 1 by version 2, version 2 by the save
    assert analysed == [] and session.published == []


async def test_a_buffer_over_max_file_bytes_is_not_analysed(tmp_path: Path, analysed: list[str]) -> None:
    session = _Session(tmp_path, Settings(max_file_bytes=5))
    try:
        tasks = await _type(session, range(1, 4))
        done, _ = await asyncio.wait(tasks, timeout=10)  # the thread is still busy: nothing was queued on it
        assert len(done) == 3
    finally:
        await asyncio.to_thread(session.release)
    assert analysed == [] and session.published == [1, 2, 3]  # empty diagnostics, each version


def test_latest_runs_what_is_running_and_the_newest_queued() -> None:
    thread = ThreadPoolExecutor(max_workers=1)
    started, held = threading.Event(), threading.Event()
    ran: list[str] = []

    def work(name: str) -> None:
        ran.append(name)
        if name == "a1":
            started.set()
            held.wait()

    latest = Latest()
    latest.submit("a", thread.submit, work, "a1")
    started.wait()  # a1 runs: it cannot be dropped
    for name in ("a2", "b1", "a3", "a4"):
        latest.submit(name[0], thread.submit, work, name)
    held.set()
    thread.shutdown(wait=True)
    assert ran == ["a1", "b1", "a4"] and latest.dropped == 2 and not latest.queued
