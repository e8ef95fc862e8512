"""Reading a workspace file that must be a regular file: a FIFO, device or socket never blocks a read."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# The files repodoc reads that are not sources (a workspace's pyproject.toml and ignore files): larger
# ones are not read. Real ones are a few kB; git itself refuses ignore files of 100 MB.
CONTROL_MAX_BYTES = 1 << 20


def read_regular(path: str | Path, limit: int | None = None, *, max_bytes: int | None = None,
                 dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed; the first `limit` bytes
    when given); OSError for anything else, and (errno EFBIG) for a file of more than `max_bytes`.
    `dir_fd`: `path` is relative to that open directory.

    It is checked before opening (opening a FIFO waits for a writer) and again on the open file (it
    may have been replaced meanwhile). A regular file of size 0 is read as empty without reading:
    that is what `/proc` files look like, and some (`/proc/kmsg`) block.
    """
    if not stat.S_ISREG(os.stat(path, dir_fd=dir_fd).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size == 0:
            return b""
        if max_bytes is not None and st.st_size > max_bytes:
            raise _too_large(path, st.st_size, max_bytes)
        if limit is not None:
            return os.read(fd, limit)
        chunks = []
        size = 0
        while chunk := os.read(fd, max(st.st_size + 1, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:  # it grew while read
                raise _too_large(path, size, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_inside(root: str | Path, path: str | Path, max_bytes: int = CONTROL_MAX_BYTES,
                where: str = "the workspace") -> bytes:
    """`read_regular` of the file at `path` when it resolves (symbolic links followed) inside the
    folder `root` (`where` names it in the error), of at most `max_bytes`; OSError saying why not
    (its `strerror` is the reason to show: "symbolic link to outside the workspace", "not a regular
    file", "too large (...)"). The resolved path is what is opened."""
    os.lstat(path)  # FileNotFoundError first: most folders have no such file
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise OSError(errno.EXDEV, f"symbolic link to outside {where}", str(path))
    return read_regular(real, max_bytes=max_bytes)


def _too_large(path: str | Path, size: int, max_bytes: int) -> OSError:
    return OSError(errno.EFBIG, f"too large ({size:,} bytes; at most {max_bytes:,} are read)", str(path))
