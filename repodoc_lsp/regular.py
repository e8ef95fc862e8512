"""Reading a workspace file that must be a regular file: a FIFO, device or socket never blocks a read."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def read_regular(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed; the first `limit` bytes
    when given); OSError for anything else.

    It is checked before opening (opening a FIFO waits for a writer) and again on the open file (it
    may have been replaced meanwhile). A regular file of size 0 is read as empty without reading:
    that is what `/proc` files look like, and some (`/proc/kmsg`) block.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size == 0:
            return b""
        if limit is not None:
            return os.read(fd, limit)
        chunks = []
        while chunk := os.read(fd, max(st.st_size + 1, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
