"""The workspace as the tools read it: the language server's root (`server/state.py`), loaded on
the root's thread and kept current with the disk.

Threads: every change of the workspace runs on the root's thread (its scan, the disk's changes,
the pages' site); a request waits for it (`answer`). The keyword index may be read from any
thread: while the workspace loads, searches read it as soon as it holds every file (`search`),
from the index the last session kept (`saved.py`) when nothing changed since.

Before a request, files changed on disk since the last look (their size or modification time,
folders for files that appeared) go through the root's own update path; a look is taken at most
every `poll` seconds. Every path a tool or resource is given is resolved (symbolic links
followed) and must lie inside the workspace: nothing outside it is read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from repodoc_lsp.config import Settings
from repodoc_lsp.mcp import saved
from repodoc_lsp.mcp.disk import Disk, FileStat
from repodoc_lsp.pipeline.runtime import Runtime

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Key
    from repodoc_lsp.server.state import Root

log = logging.getLogger(__name__)
T = TypeVar("T")

READY_TIMEOUT = 600.0  # seconds a request waits for the first scan
KEEP_TIMEOUT = 30.0  # seconds a stop waits for the index to be kept


class DocsError(Exception):
    """A request that cannot be answered (unknown symbol, path outside the workspace): its message
    is what the client is told."""


class Docs:
    """The server's root for one workspace, kept current with the disk."""

    def __init__(self, path: Path, settings: Settings, runtime: Runtime, *, poll: float = 1.0) -> None:
        from repodoc_lsp.server.state import Root

        self.root: Root = Root(path, settings, runtime)
        self.path = self.root.path
        self.poll = poll
        self.disk = Disk(self.path)
        self._looked = 0.0  # time.monotonic() of the last look at the disk
        self._looking = threading.Lock()
        self.version = 0  # bumped when the workspace changed: what was made of it is made again
        self.searchable = threading.Event()  # the index holds every file (saved, or scanned)
        self._saved = saved.saved_path(self.path, self.root.settings)
        self._kept = -1  # `version` when the index was last kept
        # the stats of the files and folders the kept index was made from, when it was restored
        self._restored: tuple[dict[str, FileStat], dict[str, int]] | None = None
        self.failure = ""
        self.on_ready: list[Callable[[], None]] = []  # run on the root's thread after the scan

    # -- life ------------------------------------------------------------------------
    def start(self) -> None:
        """Load the index the last session kept, then scan the workspace, on the root's thread
        (requests wait for it: `ready`), then what first answers would make (`on_ready`)."""
        self.root.submit(self._load_saved)
        self.root.submit(self._scan)
        self.root.submit(self._after_scan)

    def _load_saved(self) -> None:
        self._restored = saved.load(self._saved, self.path, self.root.index)
        if self._restored is not None:
            self.searchable.set()

    def _scan(self) -> None:
        try:
            self.root.scan()
            self.disk.see(self.root.ws.facts, self.root.ws.folders)
            self._looked = time.monotonic()
            if self._restored == (self.disk.files, self.disk.folders):  # the kept index is this one
                saved.touch(self._saved)
                self._kept = self.version
            else:
                self._keep_index()
        except Exception as exc:
            log.exception("scanning %s failed", self.path)
            self.failure = str(exc) or type(exc).__name__
        finally:
            self.root.indexed.set()
            self.searchable.set()

    def _keep_index(self) -> None:
        """On the root's thread: keep the index for the next start, with the disk as last seen (it
        holds what that look found). Here, not on a thread of its own: made and written in one go
        (bench/README.md has its cost), it does not share the interpreter with the answers."""
        saved.save(self._saved, self.path, self.disk.files, self.disk.folders, self.root.index)
        self._kept = self.version

    def _after_scan(self) -> None:
        for fn in () if self.failure else self.on_ready:
            try:
                fn()
            except Exception:  # the request that needs it says why
                log.exception("preparing answers failed")

    def close(self) -> None:
        """Stop; the index is kept again if files changed since it was (the next start uses it)."""
        if self.root.indexed.is_set() and not self.failure and self.version != self._kept:
            try:
                self.root.submit(self._keep_index).result(timeout=KEEP_TIMEOUT)
            except Exception:  # the next start scans without it
                log.exception("keeping the index failed")
        self.root.close()

    def ready(self, timeout: float = READY_TIMEOUT) -> None:
        if not self.root.indexed.wait(timeout):
            raise DocsError("the workspace is still being analysed; ask again")
        if self.failure:
            raise DocsError(f"analysing the workspace failed: {self.failure}")

    def answer(self, fn: Callable[[], T]) -> T:
        """`fn()` on the root's thread, with the workspace as the disk has it (no update meanwhile)."""
        self.ready()
        self.current()
        return self.root.submit(fn).result()

    def search(self, fn: Callable[[], T]) -> T:
        """`fn()`, which reads only the keyword index, here: while the workspace loads, as soon as
        the index holds every file; then with the index as the disk has it."""
        if not self.root.indexed.is_set() and self.searchable.wait(READY_TIMEOUT) and not self.root.indexed.is_set():
            return fn()  # the index the last session kept: the disk was seen unchanged at the start
        self.ready()
        self.current()
        return fn()

    # -- current with the disk ---------------------------------------------------------
    def current(self) -> None:
        """Take files changed on disk since the last look (at most one look every `poll` seconds):
        through the root's update path (`Root.regenerate` without pages), the index following."""
        with self._looking:
            if time.monotonic() - self._looked < self.poll:
                return
            self.root.submit(self._look).result()
            while (settling := self.root.settling()) is not None:  # the index takes the files
                settling.result()

    def _look(self) -> None:
        ws = self.root.ws
        changed = self.disk.changed_files()
        for folder, names in self.disk.changed_folders():
            for name in names:
                rel = f"{folder}/{name}" if folder else name
                if rel in ws.facts or rel in self.disk.folders:
                    continue
                path = self.path / rel
                if path.is_dir() and not path.is_symlink():
                    if not ws.filter.dir_excluded(rel, str(path)):
                        changed.append(rel)  # a new folder: the root takes the inputs it holds
                elif ws.filter.is_input(path):
                    changed.append(rel)  # a new file
        if changed:
            self.root.regenerate(changed, write=False)
            self.version += 1
        self.disk.follow(changed, ws.facts, ws.folders)
        self._looked = time.monotonic()

    # -- paths and symbols -------------------------------------------------------------
    def rel_of(self, path: str) -> str:
        """`path` (relative to the root, or absolute) as a POSIX path relative to the root, after
        resolving symbolic links; a DocsError when it is outside the workspace."""
        if not isinstance(path, str) or "\x00" in path:
            raise DocsError("a path must be a string without NUL characters")
        given = Path(path)
        full = given if given.is_absolute() else self.path / given
        try:
            rel = full.resolve().relative_to(self.path)
        except (ValueError, OSError, RuntimeError):
            raise DocsError(f"{path}: outside the workspace {self.path}") from None
        return rel.as_posix() if rel.parts else ""

    def key_of(self, symbol: str) -> Key:
        """A dotted name (`pkg.mod.Class.method`, or a module `pkg.mod`) -> its definition."""
        if not isinstance(symbol, str) or not symbol.strip():
            raise DocsError("symbol: give a dotted name such as pkg.module.Class")
        symbol = symbol.strip()
        ws = self.root.ws
        graph = ws.graph_ready
        parts = symbol.split(".")
        file_of = ws.relations.file_of
        for i in range(len(parts), 0, -1):
            rel = file_of.get(".".join(parts[:i]))
            if rel is None:
                continue
            qual = ".".join(parts[i:])
            if not qual:
                return (rel, "")
            if graph is not None:
                if graph.definition(rel, qual) is not None:
                    return (rel, qual)
                key = graph.resolve(rel, qual)  # a name the module imports (`pkg.Widget`, from pkg.core)
                if key is not None:
                    return key
            break
        raise DocsError(f"unknown symbol: {symbol} (no workspace module or definition of that name; "
                        "search_symbols finds the dotted name of a symbol)")

    def dotted(self, rel: str, qual: str) -> str:
        module = self.root.ws.relations.module_of.get(rel, "")
        return f"{module}.{qual}" if module and qual else module or ""
