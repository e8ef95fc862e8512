"""The keyword index as the last session left it, so that a restart answers `search_symbols`
before the symbol graph is built again (the graph's build reads every file's facts from the
cache, and the index is filled in the same read).

One JSON file per workspace root and settings, in the analysis cache folder. It is used only when
every file, folder and ignore file it lists has the size and modification time it had (so nothing
was added, removed or changed since): its entries are then those the scan indexes. The scan runs
anyway and its index replaces these entries with the same ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.config import Settings, cache_dir
from repodoc_lsp.knowledge.index import Entry
from repodoc_lsp.mcp.disk import FileStat, file_stats, folder_stats
from repodoc_lsp.store.regular import read_regular

log = logging.getLogger(__name__)
FORMAT = 2  # bumped when the file's shape changes
KEPT = 16  # indexes kept in the cache folder, the most recently written
IGNORE_FILES = (".gitignore", ".git/info/exclude")  # per folder: what decides the inputs beside the settings


def saved_path(root: Path, settings: Settings) -> Path:
    """Where the index of `root` under `settings` is kept."""
    key = hashlib.sha256(f"{FORMAT}\n{__version__}\n{root}\n{settings!r}".encode()).hexdigest()[:32]
    return cache_dir(settings) / "mcp" / f"{key}.json"


def _ignore_files(root: Path, folders: Iterable[str]) -> dict[str, FileStat]:
    return file_stats(root, (f"{folder}/{name}" if folder else name for folder in folders for name in IGNORE_FILES))


def save(path: Path, root: Path, files: dict[str, FileStat], folders: dict[str, int],
         entries: Iterable[tuple[str, list[Entry]]]) -> None:
    """Keep the index's `entries` with the stats they were made from (written whole, or not at all)."""
    data = {"files": files, "folders": folders, "ignore": _ignore_files(root, folders),
            "entries": {rel: [[e.name, e.kind, e.container, e.line, e.col, e.end_line, e.anchor] for e in found]
                        for rel, found in entries}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, separators=(",", ":"))  # in one go (json.dump: 4x the time, in Python)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".index-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError as exc:
        log.warning("keeping the index for the next start failed: %s", exc)


def _prune(folder: Path) -> None:
    """Keep the indexes of the KEPT workspaces (and settings) used last."""
    def written(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # removed meanwhile (another server's prune)
            return 0.0

    for old in sorted(folder.glob("*.json"), key=written, reverse=True)[KEPT:]:
        old.unlink(missing_ok=True)


def load(path: Path, root: Path) -> list[tuple[str, list[Entry]]] | None:
    """The entries kept at `path`, if every file and folder they were made from is unchanged."""
    try:
        data: Any = json.loads(read_regular(path))
        files = {rel: tuple(stat) for rel, stat in data["files"].items()}
        folders = data["folders"]
        ignore = {rel: tuple(stat) for rel, stat in data["ignore"].items()}
        if file_stats(root, files) != files or folder_stats(root, folders) != folders \
                or _ignore_files(root, folders) != ignore:
            return None
        return [(rel, [Entry(name, kind, container, rel, line, col, end, anchor)
                       for name, kind, container, line, col, end, anchor in rows])
                for rel, rows in data["entries"].items() if rel in files]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # none kept, or not this format
