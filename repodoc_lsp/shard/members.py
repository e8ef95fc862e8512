"""The blocks of a facts file and of a graph job's answers file (`BlockWriter`): gzip members of about
`BLOCK` bytes each, every one ending at the end of a record (a file's lines whole in one block). Any gzip
reader reads such a file as one stream; a page share reads it a block at a time and notes where each
block starts, so that it can read one file's facts again later by its block alone (`block_at`) instead
of holding every file's facts or the whole facts file."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

BLOCK = 256 << 10  # inflated bytes a block holds, at least (but the last), before the next one starts
CHUNK = 1 << 20  # compressed bytes read at a time


class BlockError(ValueError):
    """A block that is not one (not gzip, a bad checksum, cut short, too large); the message says why."""


def compress_block(data: bytes) -> bytes:
    """One block as a gzip member (no name, no time: the same bytes for the same lines)."""
    return gzip.compress(data, compresslevel=6, mtime=0)


def blocks(raw: BinaryIO, most: int, start: int = 0, chunk: int = CHUNK) -> Iterator[tuple[int, bytes]]:
    """(offset in `raw` of the member, its inflated bytes) of each gzip member from `start` on; BlockError
    when one inflates past `most` bytes, is damaged or cut short."""
    raw.seek(start)
    offset, pending = start, b""
    while True:
        if not pending:
            pending = raw.read(chunk)
            if not pending:
                return
        inflate = zlib.decompressobj(31)  # a gzip member, its checksum and size checked at its end
        parts: list[bytes] = []
        size = used = 0
        while True:
            try:
                data = inflate.decompress(pending, most + 1 - size)
            except zlib.error as exc:
                raise BlockError(str(exc)) from None
            size += len(data)
            parts.append(data)
            if size > most:
                raise BlockError(f"a block inflates past {most} bytes")
            rest = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
            used += len(pending) - len(rest)
            pending = rest
            if inflate.eof:
                break
            if not pending:
                pending = raw.read(chunk)
                if not pending:
                    raise BlockError("cut short inside a block")
        yield offset, b"".join(parts)
        offset += used


def block_at(raw: BinaryIO, offset: int, most: int) -> bytes:
    """The inflated bytes of the member starting at `offset`."""
    for _start, data in blocks(raw, most, offset, 64 << 10):
        return data
    raise BlockError("no block where one was read before")


compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def json_table(line: bytes, damaged: Callable[[str], Exception]) -> dict[str, Any]:
    """A record's line read back: a JSON table, or `damaged(why)` raised."""
    try:
        value = json.loads(line.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise damaged("a line is not JSON") from None
    if not isinstance(value, dict):
        raise damaged("a line is not a JSON table")
    return value


class BlockWriter:
    """A file of blocks of whole records (`compress_block`), written under a temporary name: `line` each
    line of a record and `end_record` after it (a block ends only there), then `close`, which writes the
    last line (`{"end": count}`) and renames the file into place; `discard` (a failure) leaves nothing."""

    def __init__(self, path: Path, header: dict[str, Any], *, header_alone: bool = False) -> None:
        self.path = path
        self._temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self._raw = open(self._temp, "wb")  # noqa: SIM115 (closed by `close` or `discard`)
        self._lines: list[bytes] = []
        self._held = 0
        self.count = 0
        self.line(compact_json(header))
        if header_alone:
            self._block()  # a block of its own: a file cut short still says what it is

    def line(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass") + b"\n"
        self._lines.append(data)
        self._held += len(data)

    def end_record(self, counted: bool = True) -> None:
        """A record's lines are all there (a block may end after them); `counted`: the end line counts it."""
        self.count += counted
        if self._held >= BLOCK:
            self._block()

    def _block(self) -> None:
        """The lines held so far written as one block."""
        if self._lines:
            self._raw.write(compress_block(b"".join(self._lines)))
            self._lines.clear()
            self._held = 0

    def close(self) -> None:
        self.line(compact_json({"end": self.count}))
        self._block()
        self._raw.close()
        os.replace(self._temp, self.path)

    def discard(self) -> None:
        self._raw.close()
        with contextlib.suppress(OSError):
            os.unlink(self._temp)
