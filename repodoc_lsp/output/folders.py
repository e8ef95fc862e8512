"""The output folder's folders as open descriptors: every write, read and deletion of a page is relative
to one, opened from the output folder down with no link followed (`Folders.open`)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import OrderedDict
from pathlib import Path

# Folders of the output a process keeps open: pages are written folder by folder.
OPEN_DIRS = 32


class Folders:
    """Descriptors of `out` and folders in it, opened by this process (a forked worker opens its own)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        # (process id, folder -> (descriptor, device, inode)), the most recently used last
        self._open: tuple[int, OrderedDict[Path, tuple[int, int, int]]] = (os.getpid(), OrderedDict())

    def open(self, folder: Path, create: bool = False) -> int:
        """A descriptor of `folder` (the output folder or a folder in it) open as a directory: every write,
        read and deletion of a page is relative to it, so a link swapped onto its path after this cannot
        send them elsewhere. It is opened from the output folder down, one part at a time, no link
        followed (ELOOP: a link on its path, to anywhere; ENOTDIR: a file), the parts made if absent when
        `create` (else FileNotFoundError). Kept per process (the last `OPEN_DIRS`), and used again while a
        `stat` of `folder` finds that very directory: another put in its place is opened again. (That
        directory itself moved out of the output folder, a link to it left in its place, passes the
        `stat`: writes follow it.)"""
        if self._open[0] != os.getpid():  # a forked worker: its parent's stay open, unused
            self._open = (os.getpid(), OrderedDict())
        dirs = self._open[1]
        entry = dirs.get(folder)
        if entry is not None:
            try:
                st: os.stat_result | None = os.stat(folder)
            except (OSError, ValueError):
                st = None
            if st is not None and (st.st_dev, st.st_ino) == entry[1:]:
                dirs.move_to_end(folder)
                return entry[0]
            del dirs[folder]
            os.close(entry[0])
        if folder == self.out:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # it may be a link (checked by config)
        elif folder.parent == folder or folder.name in ("", ".", ".."):  # never a page's (`is_page_name`)
            raise OSError(errno.EXDEV, "not inside the output folder", str(folder))
        else:
            parent = self.open(folder.parent, create)
            if create:  # render workers make the same folders at the same time
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder.name, dir_fd=parent)
            try:
                fd = os.open(folder.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            except NotADirectoryError:  # what Linux says of a link too, with O_DIRECTORY
                if stat.S_ISLNK(os.stat(folder.name, dir_fd=parent, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link", str(folder)) from None
                raise
        st = os.fstat(fd)
        dirs[folder] = (fd, st.st_dev, st.st_ino)
        while len(dirs) > OPEN_DIRS:
            os.close(dirs.popitem(last=False)[1][0])
        return fd

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close_all()

    def close_all(self) -> None:
        if self._open[0] == os.getpid():
            for fd, _dev, _ino in self._open[1].values():
                os.close(fd)
        self._open = (os.getpid(), OrderedDict())

    def dropped(self, folder: Path) -> None:
        """`folder` was removed: its descriptor is closed."""
        entry = self._open[1].pop(folder, None)
        if entry is not None:
            os.close(entry[0])
