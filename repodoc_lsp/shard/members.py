"""A facts file's blocks: gzip members of about `BLOCK` bytes each, every one ending at the end of a line
(a file's record whole in one block). Any gzip reader reads such a file as one stream; a page share reads
it a block at a time and notes where each block starts, so that it can read one file's facts again
later by its block alone (`block_at`) instead of holding every file's facts or the whole facts file."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from typing import BinaryIO

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
