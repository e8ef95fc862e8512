"""Files repodoc keeps for itself in the cache folder as gzip-compressed JSON (the last run's state,
the graph's sketches): written whole or not at all, read back within a bound, so that a damaged or
forged file can neither be half-read nor make a run allocate without limit."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def read(path: Path, max_bytes: int) -> Any:
    """The JSON value of the gzip file `path`; None when it is missing or unreadable, larger than
    `max_bytes` compressed or inflated, or not JSON."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
        if len(raw) > max_bytes:
            return None
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # bounded: a small file may inflate past it
        text = inflater.decompress(raw, max_bytes)
        if inflater.unconsumed_tail:
            return None
        return json.loads(text)
    except (OSError, ValueError, EOFError, zlib.error, RecursionError):
        return None


def write(path: Path, value: Any, *, level: int) -> None:
    """Keep `value` as gzip JSON (compression `level`) at `path`, replacing it atomically, in a folder
    only its owner may enter; a failure (a read-only cache folder) only means nothing is kept."""
    write_text(path, (json.dumps(value, separators=(",", ":")),), level=level)


def write_text(path: Path, chunks: Iterable[str], *, level: int, most: int | None = None) -> bool:
    """Keep the JSON text made of `chunks` as `write` does, each chunk compressed and written as it comes: a
    large file's text, its bytes and its compressed bytes are never held whole (the graph's sketches file of
    a large tree doubled the peak memory of the run that saved it). Past `most` characters (the bound its
    reader reads up to) nothing is kept, the file at `path` removed: it could not be read back. True when
    kept."""
    return write_aside(path, chunks, level=level, most=most).keep()


class Aside:
    """A file `write_aside` wrote beside its place, not yet in it: `keep` puts it there, `drop` removes it."""

    def __init__(self, path: Path, temporary: str | None, *, past_bound: bool = False) -> None:
        self.path, self.temporary, self.past_bound = path, temporary, past_bound

    def keep(self) -> bool:
        """Replace the file at `path` with this one, atomically; True when kept. Past its bound, the file at
        `path` is removed instead (it would no longer say what its next reader expects)."""
        if self.temporary is None:
            if self.past_bound:
                with contextlib.suppress(OSError):
                    self.path.unlink(missing_ok=True)
            return False
        try:
            os.replace(self.temporary, self.path)
        except OSError:
            self.drop()
            return False
        self.temporary = None
        return True

    def drop(self) -> None:
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None


def write_aside(path: Path, chunks: Iterable[str], *, level: int, most: int | None = None) -> Aside:
    """`write_text`'s file written beside `path`, in a new temporary file of its folder, and left there for
    the caller to keep or drop; a failure to write (a read-only cache folder) leaves nothing to keep."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".kept-", suffix=".tmp")
        aside = Aside(path, temporary)
        try:
            with os.fdopen(fd, "wb") as fh, gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=fh,
                                                          mtime=0) as packed, \
                    io.TextIOWrapper(packed, encoding="utf-8", write_through=False) as text:
                if not _within(text, chunks, most):
                    aside.drop()
                    return Aside(path, None, past_bound=True)
        except BaseException:
            aside.drop()
            raise
        return aside
    return Aside(path, None)


def _within(text: io.TextIOWrapper, chunks: Iterable[str], most: int | None) -> bool:
    """`chunks` written to `text` up to `most` characters in all (None: no bound); False past it."""
    if most is None:
        text.writelines(chunks)
        return True
    written = 0
    for chunk in chunks:
        written += len(chunk)
        if written > most:
            return False
        text.write(chunk)
    return True
