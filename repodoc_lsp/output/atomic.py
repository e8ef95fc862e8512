"""A file of the output folder replaced whole or not at all: its bytes written to a new temporary file in its
folder, renamed over its name (`write_atomically`). A temporary file carries the id and start time of the
process writing it; `sweep` deletes those whose process is gone (a run killed mid-write), never another
process's write under way."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
from pathlib import Path

from repodoc_lsp.output.modes import PAGE_MODE

# A temporary file's writer: process id and start time (a reused id is not mistaken for it).
_TEMPORARY = re.compile(r"\.repodoc-(?:(\d+)-(\d+)-)?.*\.tmp\Z")
_SERIAL = itertools.count()  # temporary files' numbers (with the process's id and start: unique)


def write_atomically(folder: int, name: str, data: bytes) -> os.stat_result:
    """Write `data` to a new temporary file in the folder open as `folder` (named by this process, created
    exclusively, no link followed) and rename it to `name`; the written file's status."""
    pid, since = _named(os.getpid())
    while True:
        tmp = f".repodoc-{pid}-{since}-{next(_SERIAL)}.tmp"
        try:
            # the mode a new file gets (the umask decides, as for any file; PAGE_MODE is 0666 less it)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PAGE_MODE,
                         dir_fd=folder)
        except FileExistsError:  # left by a killed process of the same id and start (or put there)
            continue
        break
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            written = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    return written


def sweep(out: Path) -> None:
    """Delete the temporary files in `out` left by a process that is gone (without a process id: left by an
    older version)."""
    for folder, _dirs, files in os.walk(out):
        for name in files:
            m = _TEMPORARY.match(name)
            if m and not (m.group(1) and _alive(int(m.group(1)), int(m.group(2)))):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


@functools.lru_cache(maxsize=1)
def _named(pid: int) -> tuple[int, int]:
    """This process's id and `started` of it, which name its temporary files (read once per process: a forked
    worker, another id, reads its own)."""
    return pid, started(pid)


def started(pid: int) -> int:
    """When process `pid` started (clock ticks since boot; 0: unknown, not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def _alive(pid: int, since: int) -> bool:
    """True while the process that wrote a temporary file runs (not another with its id)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass
    except (OverflowError, OSError):
        return False
    return not since or started(pid) in (since, 0)
