"""One gzip stream of zlib level 1 written a piece at a time (the manifest's encoding, `output/manifest.py`):
the same bytes for the same input however it was added, deflated in threads as pieces are complete."""

from __future__ import annotations

import contextlib
import struct
import threading
import zlib

_THREADS = 2  # pieces deflated at once, beside the input being made
_GZIP_HEADER = bytes((0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 4, 3))  # deflate, no name, mtime 0, fastest, Unix: as zlib's


class GzipStream:
    """Bytes added a piece at a time as one gzip stream of zlib level 1; up to `piece` bytes in all,
    `zlib.compress`'s own bytes. Past it, each `piece` bytes are deflated in a thread as soon as they are
    complete, a piece but the last ending with a full flush (its blocks end on a byte, the next piece's
    refer to nothing before them): the raw deflate streams of the pieces joined are one stream. Held at
    once: one piece of input, the pieces in their threads, and the bytes deflated."""

    def __init__(self, piece: int) -> None:
        self._piece = piece
        self._pending = bytearray()
        self._deflated: list[bytes | None] = []  # None: its thread failed (MemoryError...) or runs
        self._pieces: list[bytes] = []  # the input of a piece whose thread runs or failed
        self._threads: list[threading.Thread] = []
        self._check = 0
        self._size = 0

    def add(self, data: bytes) -> None:
        self._pending += data
        while len(self._pending) > self._piece:  # a piece is complete, and is not the last
            piece = bytes(self._pending[:self._piece])
            del self._pending[:self._piece]
            self._start(piece)

    def _start(self, piece: bytes) -> None:
        self._check = zlib.crc32(piece, self._check)
        self._size += len(piece)
        i = len(self._deflated)
        self._deflated.append(None)
        self._pieces.append(piece)
        if len(self._threads) >= _THREADS:  # the input of more pieces is not held meanwhile
            self._threads[-_THREADS].join()
        thread = threading.Thread(target=self._deflate, args=(i, False), name="repodoc-manifest-deflate")
        self._threads.append(thread)
        thread.start()

    def _deflate(self, i: int, last: bool) -> None:
        with contextlib.suppress(Exception):  # left None: deflated again in `finish`, where a failure is raised
            self._deflated[i] = _deflated(self._pieces[i], last)
            self._pieces[i] = b""  # its input is no longer held

    def finish(self) -> bytes:
        """The gzip stream's bytes (raising what deflating a piece raises)."""
        data, self._pending = self._pending, bytearray()  # not copied: zlib reads a bytearray as it is
        if not self._deflated:
            return zlib.compress(data, level=1, wbits=31)  # wbits 31: a gzip stream, mtime 0
        check = zlib.crc32(data, self._check)
        size = self._size + len(data)
        last = _deflated(data, True)
        for thread in self._threads:
            thread.join()
        pieces = [piece if piece is not None else _deflated(self._pieces[i], False)  # never a hole
                  for i, piece in enumerate(self._deflated)]
        self._threads, self._deflated, self._pieces = [], [], []
        return b"".join((_GZIP_HEADER, *pieces, last, struct.pack("<II", check, size & 0xFFFFFFFF)))


def _deflated(piece: bytes | bytearray, last: bool) -> bytes:
    """One piece of the stream as raw deflate (no header of its own), ending the stream or on a byte."""
    deflate = zlib.compressobj(1, zlib.DEFLATED, -15)
    return deflate.compress(piece) + deflate.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)
