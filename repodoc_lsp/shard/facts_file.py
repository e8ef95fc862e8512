"""The facts file: what an analysis job (`repodoc analyze --shard K/N`) hands to the page jobs.

Format (version 1; described in examples/README.md): gzip-compressed JSON lines in UTF-8, data
only (a shard file is untrusted input: nothing in it is run or unpickled, every value is checked
against the facts model on load, and a line longer than MAX_LINE is refused unread).

    {"format": "repodoc-facts", "version": 1, "repodoc": "0.1.0", "analysis": "0.1.0-12",
     "tree": {"root": "proj", "files": 1234, "paths": "<blake2b of the input paths>"},
     "shard": [2, 3], "files": 411}                                  <- the header
    {"path": "pkg/a.py", "digest": "<blake2b of its bytes>", "size": 120, "facts": {...}}
    {"path": "img/x.svg", "digest": "...", "size": 9, "skipped": "not text (...)"}
    {"path": "locked.py", "skipped": "unreadable: Permission denied"}
    {"end": 411}                                                      <- a file cut short has none

`facts` is the facts model as the analysis cache stores it (`store/cache.py`'s `encode`). `tree`
names the checkout: the root folder's name, how many inputs discovery found and a digest of their
paths (the settings that choose inputs are in it); `analysis` is the analysis cache's version (with
the `blank_macros` setting's tag), which facts depend on.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import stat
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.treesitter import blank_macros_variant
from repodoc_lsp.store.cache import ANALYSIS_VERSION, encode, structure_facts

FORMAT = "repodoc-facts"
FORMAT_VERSION = 1
MAX_LINE = 64 << 20  # a line (one file's facts) longer than this is damage, never read whole
Share = tuple[int, int]


class ShardError(Exception):
    """A shard (facts file or page folder) that cannot be used; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class Tree:
    """The checkout a shard was made from."""

    root: str  # the root folder's name
    files: int  # inputs found by discovery
    paths: str  # digest of their paths

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "files": self.files, "paths": self.paths}

    def differs(self, other: Tree) -> str:
        """Why `other` is not this tree ("" when it is)."""
        if other.root != self.root:
            return f"its root folder is {other.root!r}, this one is {self.root!r}"
        if other.files != self.files:
            return f"it has {other.files} input files, this one {self.files}"
        if other.paths != self.paths:
            return "its input paths differ (another commit, or other include/exclude settings)"
        return ""


def tree_of(root: Path, files: Sequence[str]) -> Tree:
    """The tree of the inputs `files` (discovery's list, sorted) under `root`."""
    h = hashlib.blake2b(digest_size=20)
    for rel in files:
        h.update(rel.encode("utf-8", "surrogatepass") + b"\x00")
    return Tree(root.resolve().name, len(files), h.hexdigest())


def tree_from_json(value: object) -> Tree | None:
    if not isinstance(value, dict) or set(value) != {"root", "files", "paths"}:
        return None
    root, files, paths = value["root"], value["files"], value["paths"]
    if not (isinstance(root, str) and type(files) is int and isinstance(paths, str)):
        return None
    return Tree(root, files, paths)


def analysis_version() -> str:
    """What facts depend on besides the file: the analysis version and the `blank_macros` setting."""
    return ANALYSIS_VERSION + blank_macros_variant()


@dataclass(frozen=True, slots=True)
class Header:
    repodoc: str
    analysis: str
    tree: Tree
    shard: Share
    files: int


@dataclass(frozen=True, slots=True)
class Record:
    """One input of the shard: its facts, or why it is skipped (no digest: it could not be read)."""

    path: str
    digest: str = ""
    size: int = 0
    facts: FileFacts | None = None
    skipped: str = ""


_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def facts_from_json(value: object) -> FileFacts:
    """The facts `encode` wrote as JSON (parsed); ValueError when `value` is not exactly that."""
    if not isinstance(value, dict):
        raise ValueError("facts are not a table")
    try:
        return structure_facts(value)
    except Exception as exc:  # any way the data does not fit the model
        raise ValueError(f"facts of the wrong form ({type(exc).__name__})") from None


class FactsWriter:
    """Writes a facts file: `add` each record, then `close`; the file appears whole (renamed into
    place) only then, and a writer left unclosed (a failure) leaves nothing behind."""

    def __init__(self, path: Path, tree: Tree, shard: Share, files: int) -> None:
        self.path = path
        self._temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self._raw = open(self._temp, "wb")  # noqa: SIM115 (closed by `close` or `discard`)
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0, compresslevel=6)
        self.count = 0
        self._line({"format": FORMAT, "version": FORMAT_VERSION, "repodoc": __version__,
                    "analysis": analysis_version(), "tree": tree.as_json(), "shard": list(shard), "files": files})

    def _line(self, value: dict[str, Any], facts: str = "") -> None:
        text = _json(value)
        if facts:  # the facts' JSON as the cache's `encode` wrote it, put in as it is
            text = f'{text[:-1]},"facts":{facts}}}'
        self._gz.write(text.encode("utf-8", "surrogatepass") + b"\n")

    def add(self, record: Record) -> None:
        value: dict[str, Any] = {"path": record.path}
        if record.digest:
            value.update(digest=record.digest, size=record.size)
        if record.facts is None:
            value["skipped"] = record.skipped
            self._line(value)
        else:
            self._line(value, encode(record.facts).data)
        self.count += 1

    def close(self) -> None:
        self._line({"end": self.count})
        self._gz.close()
        self._raw.close()
        os.replace(self._temp, self.path)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self._gz.close()
        self._raw.close()
        with contextlib.suppress(OSError):
            os.unlink(self._temp)


class FactsReader:
    """A facts file read: `header` on opening, then `records()`; every damage is a ShardError naming
    the file (and its shard, once known)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise ShardError(f"{path}: not a file")
            self._gz = gzip.GzipFile(path, "rb")
        except OSError as exc:
            raise ShardError(f"{path}: cannot read the facts file: {exc.strerror or exc}") from None
        first = self._next()
        if first is None:
            raise self.damaged("empty")
        self.header = self._header(first)
        self.name = f"{path} (shard {self.header.shard[0]}/{self.header.shard[1]})"

    def damaged(self, why: str) -> ShardError:
        return ShardError(f"{self.name}: damaged facts file: {why}")

    def _next(self) -> dict[str, Any] | None:
        try:
            line = self._gz.readline(MAX_LINE + 1)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise self.damaged(str(exc) or type(exc).__name__) from None
        if not line:
            return None
        if not line.endswith(b"\n"):
            raise self.damaged("a line is cut short, or longer than a file's facts can be")
        try:
            value = json.loads(line.decode("utf-8", "surrogatepass"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self.damaged("a line is not JSON") from None
        if not isinstance(value, dict):
            raise self.damaged("a line is not a JSON table")
        return value

    def _header(self, value: dict[str, Any]) -> Header:
        if value.get("format") != FORMAT:
            raise ShardError(f"{self.path}: not a repodoc facts file")
        if value.get("version") != FORMAT_VERSION:
            raise ShardError(f"{self.path}: facts file format version {value.get('version')!r}, "
                             f"this repodoc reads version {FORMAT_VERSION}")
        repodoc, analysis, shard, files = (value.get(k) for k in ("repodoc", "analysis", "shard", "files"))
        tree = tree_from_json(value.get("tree"))
        if not (isinstance(repodoc, str) and isinstance(analysis, str) and tree is not None and type(files) is int
                and isinstance(shard, list) and len(shard) == 2 and all(type(x) is int for x in shard)
                and 1 <= shard[0] <= shard[1]):
            raise self.damaged("its header is of the wrong form")
        return Header(repodoc, analysis, tree, (shard[0], shard[1]), files)

    def records(self) -> Iterator[Record]:
        """Each record, checked; a ShardError at the first damage, or when the file ends early."""
        count = 0
        while (value := self._next()) is not None:
            if "end" in value:
                if value != {"end": count} or count != self.header.files:
                    raise self.damaged(f"it ends after {count} of {self.header.files} files")
                if self._next() is not None:
                    raise self.damaged("lines after its end")
                return
            yield self._record(value)
            count += 1
        raise self.damaged(f"cut short: no end after {count} of its {self.header.files} files")

    def _record(self, value: dict[str, Any]) -> Record:
        path, key, size = value.get("path"), value.get("digest", ""), value.get("size", 0)
        if not (isinstance(path, str) and isinstance(key, str) and type(size) is int and size >= 0):
            raise self.damaged("a file's record is of the wrong form")
        if "facts" in value:
            if set(value) != {"path", "digest", "size", "facts"}:
                raise self.damaged(f"{path}: a record of the wrong form")
            try:
                facts = facts_from_json(value["facts"])
            except ValueError as exc:
                raise self.damaged(f"{path}: {exc}") from None
            return Record(path, key, size, facts)
        skipped = value.get("skipped")
        if not isinstance(skipped, str) or not set(value) <= {"path", "digest", "size", "skipped"}:
            raise self.damaged(f"{path}: a record of the wrong form")
        return Record(path, key, size, None, skipped)

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, zlib.error):
            self._gz.close()
