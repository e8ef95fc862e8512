"""Files repodoc keeps for itself in the cache folder as gzip-compressed JSON (the last run's state,
the graph's sketches): written whole or not at all, read back within a bound, so that a damaged or
forged file can neither be half-read nor make a run allocate without limit. A file of texts (`texts_aside`)
is JSON texts as they are, each read only when needed, then its index naming each by its place."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def read(path: Path, max_bytes: int) -> Any:
    """The JSON value of the gzip file `path`; None when it is missing or unreadable, larger than
    `max_bytes` compressed or inflated, or not JSON."""
    data = inflated(path, max_bytes)
    try:
        return None if data is None else json.loads(data)
    except (ValueError, RecursionError):
        return None


def inflated(path: Path, max_bytes: int) -> bytes | None:
    """The inflated bytes of the gzip file `path`; None when it is missing or unreadable, larger than `max_bytes`
    compressed or inflated, cut short, or not of its checksum (gzip's, checked at its end)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
        if len(raw) > max_bytes:
            return None
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # bounded: a small file may inflate past it
        data = inflater.decompress(raw, max_bytes)
        return data if inflater.eof and not inflater.unconsumed_tail else None
    except (OSError, EOFError, zlib.error):
        return None


def write(path: Path, value: Any, *, level: int) -> None:
    """Keep `value` as gzip JSON (compression `level`) at `path`, replacing it atomically, in a folder
    only its owner may enter; a failure (a read-only cache folder) only means nothing is kept."""
    write_aside(path, (json.dumps(value, separators=(",", ":")).encode(),), level=level).keep()


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


def write_aside(path: Path, chunks: Iterable[bytes | memoryview], *, level: int, most: int | None = None) -> Aside:
    """The bytes made of `chunks` kept as `write` does, written beside `path` in a new temporary file of its
    folder and left there for the caller to keep (`Aside.keep`: atomically) or drop; a failure to write (a
    read-only cache folder) leaves nothing to keep. Each chunk is compressed and written as it comes: a large
    file's bytes and its compressed bytes are never held whole (the graph's sketches file of a large tree
    doubled the peak memory of the run that saved it). Past `most` bytes (the bound its reader reads up to)
    nothing is kept, and `Aside.keep` removes the file at `path`: it could not be read back."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".kept-", suffix=".tmp")
        aside = Aside(path, temporary)
        try:
            with os.fdopen(fd, "wb") as fh, gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=fh,
                                                          mtime=0) as packed:
                if not _within(packed, chunks, most):
                    aside.drop()
                    return Aside(path, None, past_bound=True)
        except BaseException:
            aside.drop()
            raise
        return aside
    return Aside(path, None)


def _within(packed: gzip.GzipFile, chunks: Iterable[bytes | memoryview], most: int | None) -> bool:
    """`chunks` written to `packed` up to `most` bytes in all (None: no bound); False past it."""
    if most is None:
        packed.writelines(chunks)
        return True
    written = 0
    for chunk in chunks:
        written += len(chunk)
        if written > most:
            return False
        packed.write(chunk)
    return True


@dataclass(frozen=True, slots=True)
class Text:
    """A JSON text a file of texts keeps as it is (not as a JSON string of it: encoded, written and read once),
    read only when needed: `texts_aside` writes it in the file's body, its index holding its place there,
    [offset, length] (`at`)."""

    data: bytes | memoryview


Entries = Mapping[str, Any] | Iterable[tuple[str, Any]]  # a part of a file of texts: a mapping, or its pairs in order


def texts_aside(path: Path, head: Mapping[str, Any], parts: Mapping[str, Entries], *, level: int,
                most: int | None = None) -> Aside:
    """A file of texts written aside as `write_aside` writes (`most`: its bound): each `Text` in the entries of
    `parts` as it comes, then on a line of its own the index, one JSON object of `head`'s members and of each
    part's entries (in the order `json.dumps` writes them), each text as its place."""
    return write_aside(path, _texts(head, parts), level=level, most=most)


def _texts(head: Mapping[str, Any], parts: Mapping[str, Entries]) -> Iterator[bytes | memoryview]:
    texts: list[bytes | memoryview] = []
    end = 0

    def place(text: object) -> list[int]:
        nonlocal end
        if not isinstance(text, Text):
            raise TypeError(f"{type(text).__name__} is not a kept file's value")
        texts.append(text.data)
        end += len(text.data)
        return [end - len(text.data), len(text.data)]

    # the entries' own values, never circular: not checked against those they are inside
    encode = json.JSONEncoder(separators=(",", ":"), check_circular=False, default=place).encode
    index = [encode(dict(head))[:-1]]
    for name, entries in parts.items():
        index.append(f",{encode(name)}:{{")
        sep = ""
        for key, value in entries.items() if isinstance(entries, Mapping) else entries:
            index.append(f"{sep}{encode(key)}:{encode(value)}")
            sep = ","
            yield from texts
            texts.clear()
        index.append("}")
    yield ("\n" + "".join(index) + "}").encode()


def read_texts(path: Path, max_bytes: int) -> tuple[Any, memoryview]:
    """The index of the file of texts `path` (`texts_aside`) and its body, which the places it holds are in;
    (None, empty) when the file is not one, or as `inflated`'s None says."""
    data = inflated(path, max_bytes) or b""
    cut = data.rfind(b"\n")  # the index is the last line: JSON has no newline
    try:
        return (json.loads(data[cut + 1:]) if cut >= 0 else None), memoryview(data)[:max(cut, 0)]
    except (ValueError, RecursionError):
        return None, memoryview(b"")


def at(body: memoryview, place: Any) -> memoryview:
    """The text at `place` ([offset, length], `Text`) of a file's `body`; ValueError when it is not a place in it."""
    if not (type(place) is list and len(place) == 2 and type(place[0]) is int and type(place[1]) is int
            and place[0] >= 0 and place[1] >= 0 and place[0] + place[1] <= len(body)):
        raise ValueError("not a place in the file")
    return body[place[0]:place[0] + place[1]]
