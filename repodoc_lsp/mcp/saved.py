"""The keyword index as the last session left it, so that a restart answers `search_symbols`
before the symbol graph is built again (the graph's build reads every file's facts from the
cache, and the index is filled in the same read).

One file per workspace root and settings, in the analysis cache folder (never the workspace): a
line of JSON naming its format, repodoc's version and the SHA-256 of the rest, then the index's own
state as JSON (`KeywordIndex.state`: its entries and search tables, restored without computing
them again) with the stats of the files, folders and ignore files it was made from. Data only,
never code: a damaged, foreign or other version's file is ignored (the scan rebuilds the index). It
is used only when every file, folder and ignore file it lists has the size and modification time
it had (so nothing was added, removed or changed since): its index is then the one the scan
makes. The scan runs anyway and its index replaces these entries with the same ones.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.config import Settings, cache_dir
from repodoc_lsp.knowledge.index import KeywordIndex
from repodoc_lsp.mcp.disk import FileStat, file_stats, folder_stats
from repodoc_lsp.store.regular import read_regular

log = logging.getLogger(__name__)
FORMAT = 3  # bumped when the file's shape changes
KEPT = 16  # indexes kept in the cache folder, the most recently written
IGNORE_FILES = (".gitignore", ".git/info/exclude")  # per folder: what decides the inputs beside the settings


def saved_path(root: Path, settings: Settings) -> Path:
    """Where the index of `root` under `settings` is kept."""
    key = hashlib.sha256(f"{FORMAT}\n{__version__}\n{root}\n{settings!r}".encode()).hexdigest()[:32]
    return cache_dir(settings) / "mcp" / f"{key}.json"


def _ignore_files(root: Path, folders: Iterable[str]) -> dict[str, FileStat]:
    return file_stats(root, (f"{folder}/{name}" if folder else name for folder in folders for name in IGNORE_FILES))


def save(path: Path, root: Path, files: dict[str, FileStat], folders: dict[str, int], index: KeywordIndex) -> None:
    """Keep `index` with the stats it was made from (written whole, or not at all)."""
    body = json.dumps({"files": files, "folders": folders, "ignore": _ignore_files(root, folders),
                       "index": index.state()}, separators=(",", ":"))  # in one go (json.dump: 4x the time)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".index-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(_header(body) + "\n" + body)
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError as exc:
        log.warning("keeping the index for the next start failed: %s", exc)


def _header(body: str) -> str:
    return json.dumps({"format": FORMAT, "version": __version__, "sha256": hashlib.sha256(body.encode()).hexdigest()})


def _prune(folder: Path) -> None:
    """Keep the indexes of the KEPT workspaces (and settings) used last."""
    def written(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # removed meanwhile (another server's prune)
            return 0.0

    for old in sorted(folder.glob("*.json"), key=written, reverse=True)[KEPT:]:
        old.unlink(missing_ok=True)


def load(path: Path, root: Path, index: KeywordIndex) -> tuple[dict[str, FileStat], dict[str, int]] | None:
    """Fill the empty `index` with the one kept at `path`, if that file is whole, of this format and
    version, and every file and folder it was made from is unchanged: those files' and folders'
    stats; None (`index` left empty) if not."""
    try:
        header, _, body = read_regular(path).decode().partition("\n")
        if header != _header(body):
            return None  # damaged, or written by another format or version
        with _collector_paused():
            data: Any = json.loads(body)
            files = {rel: tuple(stat) for rel, stat in data["files"].items()}
            folders = data["folders"]
            if file_stats(root, files) != files or folder_stats(root, folders) != folders \
                    or _ignore_files(root, folders) != {rel: tuple(stat) for rel, stat in data["ignore"].items()}:
                return None
            index.restore(data["index"])
        return files, folders
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None  # none kept, or not a state of this shape


def touch(path: Path) -> None:
    """Mark the index at `path` as used now (`_prune` keeps those used last) without writing it again."""
    with suppress(OSError):
        os.utime(path)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: it walks every object made so far each few thousand
    allocations, a large share of reading and restoring a large index (bench/README.md)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
