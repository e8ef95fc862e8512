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
        self.held, self.parsing = threading.Event(), threading.Event()
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
        self.typing.thread.submit(self.parsing.wait)  # and so is the buffers' thread (a large buffer)

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
        self.parsing.set()
        self.held.set()

    def close(self) -> None:
        self.release()
        self.thread.shutdown(wait=True)
        self.typing.thread.shutdown(wait=True)


@pytest.fixture
def sessions(tmp_path: Path) -> Any:
    """Make a `_Session`; its threads end with the test."""
    made: list[_Session] = []

    def make(settings: Settings, uri: str = "file:///ws/notes.md") -> _Session:
        made.append(_Session(tmp_path, settings, uri))
        return made[-1]

    yield make
    for session in made:
        session.close()


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts checked (a Python buffer's parsed first: those parsed are listed too)."""
    texts: list[str] = []
    monkeypatch.setattr(ref_diagnostics, "analysed", lambda rel, text: texts.append(f"parsed {text}") and None)
    monkeypatch.setattr(ref_diagnostics, "stale_in", lambda root, rel, text, facts=None: texts.append(text) or [])
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


@pytest.mark.parametrize("name", ["notes.md", "code.py"])
async def test_only_the_newest_version_is_analysed(sessions: Any, analysed: list[str], name: str) -> None:
    """Five versions while the threads are busy: only the fifth is parsed (a source, on the buffers'
    thread) and checked (on the root's); the other four were dropped before they ran."""
    session = sessions(Settings(), f"file:///ws/{name}")
    tasks = await _type(session, range(1, 6))
    session.release()
    await asyncio.gather(*tasks)
    assert analysed == ["parsed # Notes 5\n"] * name.endswith(".py") + ["# Notes 5\n"]
    assert session.published == [5]
    dropped = session.typing.analyses if name.endswith(".py") else session.typing.checks
    assert dropped.dropped == 4 and not dropped.queued


@pytest.mark.parametrize("how", ["saved", "a save of the root"])
async def test_a_save_drops_the_queued_check(sessions: Any, analysed: list[str], how: str) -> None:
    """The saved document's queued check (`Typing.saved`), and every queued check of the root whose
    files were saved (`drop_checks`, before the save's job is queued): `refresh_root` checks the
    open documents again once the workspace has the saved files."""
    session = sessions(Settings(), "file:///ws/code.py")
    tasks = await _type(session, range(1, 3))
    session.parsing.set()  # the buffers' thread goes on, the root's does not
    for _ in range(1000):  # parsed on the buffers' thread: then its check waits for the root's
        if session.uri in session.typing.checks.queued and not session.typing.analyses.queued:
            break
        await asyncio.sleep(0.01)
    if how == "saved":
        session.typing.saved(session.uri)  # a source: checked again after the save's pages
    else:
        ref_diagnostics.drop_checks(session, session.root)  # type: ignore[arg-type]
    session.release()
    await asyncio.gather(*tasks, *session.spawned)
    assert analysed == ["parsed # Notes 2\n"] and session.published == []  # parsed, never checked


async def test_a_buffer_over_max_file_bytes_is_not_analysed(sessions: Any, analysed: list[str]) -> None:
    session = sessions(Settings(max_file_bytes=5))
    tasks = await _type(session, range(1, 4))
    done, _ = await asyncio.wait(tasks, timeout=10)  # the threads are still busy: nothing was queued
    assert len(done) == 3
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
