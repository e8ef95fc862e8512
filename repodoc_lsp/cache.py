"""An on-disk cache of file facts, keyed by the digest of the file's content.

One SQLite file shared by every workspace and process (the CLI's workers,
the language server); a corrupt or unreadable cache is ignored, never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.analysis.model import FileFacts, Import

# Bump when analysis output changes for the same input.
ANALYSIS_VERSION = f"{__version__}-4"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


class FactsCache:
    def __init__(self, folder: Path | None) -> None:
        self._db: sqlite3.Connection | None = None
        if folder is None:
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"facts-{ANALYSIS_VERSION}.sqlite"
            db = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, imports BLOB, data BLOB)")
            self._db = db
        except (OSError, sqlite3.Error):
            self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def _select(self, column: str, keys: Iterable[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._db is None:
            return out
        keys = list(keys)
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, {column} FROM facts WHERE key IN ({marks})", chunk)
                for key, data in rows:
                    with contextlib.suppress(Exception):
                        out[key] = pickle.loads(data)
        except sqlite3.Error:
            pass
        return out

    def get_many(self, keys: Iterable[str]) -> dict[str, FileFacts]:
        """Whole facts by content digest (the ones the cache has)."""
        return self._select("data", keys)

    def get_imports_many(self, keys: Iterable[str]) -> dict[str, tuple[Import, ...]]:
        """Only the imports: enough to relate files when no page needs rendering."""
        return self._select("imports", keys)

    def put_many(self, items: Iterable[tuple[str, FileFacts]]) -> None:
        if self._db is None:
            return
        rows = [(k, pickle.dumps(v.imports, protocol=pickle.HIGHEST_PROTOCOL),
                 pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)) for k, v in items]
        if not rows:
            return
        try:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
