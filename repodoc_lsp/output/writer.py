"""Strings -> files in the output folder, and nothing else.

Rules: a generated page carries `MARKER` on its first line and is recorded in the manifest with a digest of what was
written; a file without the marker is a person's and is never overwritten or deleted, nor is a page whose content
differs from what repodoc wrote (a person's edit): a conflict is reported instead, and `force` overwrites or deletes
it after copying it aside to `PAGE.orig`; a page is deleted only when its bytes have the digest recorded (no digest:
kept, as a person's); writes go to a temporary file renamed into place; an unchanged page is not rewritten; no path
outside the output folder is written or deleted, whatever the symlinks say.

The manifest, its journal and the rule that says a page is as repodoc wrote it are `manifest.py`'s
(`Writer.state`); the writer writes the manifest's bytes as it writes a page.

One run writes an output folder at a time: `Writer.hold` takes an advisory lock on the folder itself (flock:
released by the kernel when its holder dies, so never stale) and reads the manifest afresh. A file is put in place
whole by `atomic.py` (a temporary file named by its process, renamed; a sweep deletes those whose process is gone).
"""

from __future__ import annotations

import contextlib
import enum
import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from repodoc_lsp import MARKER
from repodoc_lsp.anchor_state import AnchorState
from repodoc_lsp.envlimits import env_seconds
from repodoc_lsp.output.atomic import sweep, write_atomically
from repodoc_lsp.output.folders import Folders
from repodoc_lsp.output.manifest import MANIFEST, Manifest, Record, content_digest
from repodoc_lsp.store.regular import read_regular


def owned_page(path: Path | str, dir_fd: int | None = None) -> bool:
    """True when the file at `path` (relative to `dir_fd` when given) is a page repodoc generated
    (marker on line 1)."""
    try:  # a FIFO is nobody's page
        return read_regular(path, len(_MARKER_BYTES), dir_fd=dir_fd) == _MARKER_BYTES
    except OSError:
        return False


_MARKER_BYTES = MARKER.encode()
# A page file read back (to compare or digest it) is at most this large; a larger one behind a
# page's marker line is a person's (generated pages are cut at about 100 KB).
PAGE_MOST = 64 << 20


# How long a run waits for another to finish writing the same folder.
LOCK_SECONDS = env_seconds("REPODOC_LOCK_TIMEOUT", 300.0)
EDITED = "changed since repodoc wrote it"
UNRECORDED = "not recorded as repodoc wrote it"  # the marker, but no digest of it (or it cannot be read)
# How a person overwrites an edited page, named in the conflict's reason (the server names its command).
CLI_FORCE = "--force"
SERVER_FORCE = ('repodoc.generate with {"force": true} (VS Code: "RepoDoc: Generate, Overwriting Edited Pages"; '
                "Neovim: :RepoDoc! generate)")


class Outcome(enum.Enum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    CONFLICT = "conflict"  # a file repodoc did not write is in the way: left alone
    ERROR = "error"  # the system refused the write (disk full, permissions): the old page stays
    STALE = "stale"  # --check: the page on disk differs from what would be written


@dataclass(frozen=True, slots=True)
class WriteResult:
    page: str
    outcome: Outcome
    reason: str = ""


class OutputError(Exception):
    """The output folder cannot be used at all (message names it)."""


class OutputBusy(OutputError):
    """Another run kept writing the output folder for longer than the wait allowed."""


class LockWaitCancelled(Exception):
    """Cancelled while waiting for another run to finish writing the output folder."""


class Writer:
    """Writes pages under `out`; `check=True` compares instead of writing; `force=True`
    overwrites (and deletes) pages a person edited, after copying each aside. The manifest is read
    here unless `read_manifest=False`: `hold` reads it again once the folder is locked."""

    def __init__(self, out: Path, *, check: bool = False, force: bool = False, force_hint: str = CLI_FORCE,
                 read_manifest: bool = True) -> None:
        self.out = out
        self.check = check
        self.force = force and not check
        self.force_hint = force_hint  # how the person forces it, in a conflict's reason
        self.state = Manifest(out)  # the manifest: pages as written, inputs stamp, anchors, journal
        self.folders = Folders(out)  # the output's folders as open descriptors
        if read_manifest:
            self.state.load()

    # -- the manifest (`manifest.py`) -------------------------------------------------
    @property
    def manifest(self) -> dict[str, Record]:
        """Page -> its record as written (the manifest's pages)."""
        return self.state.pages

    @property
    def inputs(self) -> str:
        """A digest of every input of the whole tree, when the manifest's pages are exactly the tree
        of those inputs (set by a complete run of the whole tree, cleared by any other)."""
        return self.state.inputs

    @inputs.setter
    def inputs(self, value: str) -> None:
        self.state.inputs = value

    @property
    def anchors(self) -> dict[str, AnchorState]:
        """File page -> its anchors as last written (rename aliases: `render/anchors.py`)."""
        return self.state.anchors

    def save_manifest(self) -> bool:
        """Write the manifest if changed; False when it cannot be (a merge fails; a run's next run plans every page)."""
        if self.check or not self.state.changed():
            return True
        data = self.state.encoded()
        with contextlib.suppress(OSError, OutputError):
            self._ensure_out()
            write_atomically(self.folders.open(self.out), MANIFEST, data)
            self.state.saved()
        return not self.state.changed()

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None, cancel: Callable[[], bool] | None = None,
             pause: Callable[[], None] | None = None, *, read: bool = True) -> Iterator[None]:
        """Hold the output folder's lock (waiting up to `timeout`, LOCK_SECONDS by default, while another run
        holds it; `pause` is called as it waits, `cancel()` stops the wait) and read the manifest afresh (what a
        run that held it before wrote is known; `read=False`: a holder that writes its own). A check writes
        nothing: it reads the manifest without the lock."""
        if self.check:
            self.state.load()
            yield
            return
        self._ensure_out()
        try:
            fd = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise OutputError(f"{self.out}: cannot open the output folder: {exc.strerror or exc}") from exc
        try:
            limit = LOCK_SECONDS if timeout is None else timeout
            deadline = time.monotonic() + limit
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if cancel is not None and cancel():
                        raise LockWaitCancelled(str(self.out)) from None
                    if time.monotonic() > deadline:
                        raise OutputBusy(f"{self.out}: another repodoc run is writing it (waited {limit:.0f} s; "
                                         "REPODOC_LOCK_TIMEOUT sets the wait)") from None
                    if pause is not None:
                        pause()
                    time.sleep(0.05)
            if read:
                self.state.load()
            yield
        finally:
            self.folders.close_all()
            os.close(fd)  # forked workers that still hold it are gone by now

    # -- safety -------------------------------------------------------------------
    def _ensure_out(self) -> None:
        if os.path.islink(self.out) and not os.path.isdir(self.out):
            raise OutputError(f"{self.out}: output folder is a broken link")
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise OutputError(f"{self.out}: exists and is not a folder") from exc
        except OSError as exc:
            raise OutputError(f"{self.out}: cannot create output folder: {exc.strerror or exc}") from exc

    # -- writing ------------------------------------------------------------------
    def unchanged(self, page: str, key: str) -> bool:
        """True when the page on disk is the one generated from the same inputs (no render needed):
        same key, and the file still has the size and modification time it was written with."""
        entry = self.manifest.get(page)
        if entry is None or entry[0] != key or not entry[3]:  # no digest yet (an older manifest)
            return False
        try:
            st = os.lstat(self.out / page)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == entry[1:3]

    def intact(self) -> bool:
        """True when every page of the manifest is on disk as written (size, modification time); stat'ed in
        the output folder opened once (a path joined per page was two thirds of this check, every edit run's)."""
        try:
            fd = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            for page, (_key, size, mtime_ns, digest) in self.manifest.items():
                st = os.stat(page, dir_fd=fd, follow_symlinks=False)
                if not digest or (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
                    return False
        except OSError:
            return False
        finally:
            os.close(fd)
        return bool(self.manifest)

    def _record(self, page: str, key: str, digest: str) -> None:
        try:
            st = os.lstat(self.out / page)
        except OSError:
            return
        self.manifest[page] = (key, st.st_size, st.st_mtime_ns, digest)

    def known(self, page: str) -> tuple[Record | None, frozenset[str]]:
        """What this writer knows of `page`: what a render worker's writer needs to `learn` before writing it."""
        return self.state.known(page)

    def learn(self, page: str, known: tuple[Record | None, frozenset[str]]) -> None:
        """Hold `page` as another writer knows it (`known`), in a render worker."""
        self.state.learn(page, known)

    def forget(self, page: str) -> None:
        """Drop what `learn` took of `page` (a render worker holds only the pages of its part)."""
        self.state.forget(page)

    def _set_aside(self, name: str, dir_fd: int) -> str:
        """Move a page a person edited (`name`, in the folder open as `dir_fd`) to the first free
        `PAGE.orig`, `PAGE.orig.2`, ... (renamed: not read, whatever its size); the name it has there."""
        n = 1
        while True:
            aside = name + (".orig" if n == 1 else f".orig.{n}")
            try:
                os.stat(aside, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                break
            n += 1
        os.rename(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return aside

    @staticmethod
    def _page_on_disk(name: str, dir_fd: int) -> bytes | None:
        """The bytes of the page file `name` (in the folder open as `dir_fd`) to compare with what
        repodoc wrote; None when it is larger than PAGE_MOST: no generated page is, so it is a
        person's (a repository may ship a multi-gigabyte file behind a page's marker line). OSError
        when it cannot be read."""
        try:
            return read_regular(name, dir_fd=dir_fd, max_bytes=PAGE_MOST)
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                return None
            raise

    def write(self, page: str, content: str, key: str) -> WriteResult:
        path = self.out / page
        data = content.encode("utf-8")
        if not content.startswith(MARKER):
            raise ValueError(f"{page}: a generated page must start with the marker")
        try:  # (written: its folders made now; no page is in the way in a folder that was not there)
            folder: int | None = self.folders.open(path.parent, create=not self.check)
        except FileNotFoundError:  # not there (written: the output folder is not, made below)
            folder = None
        except OSError as exc:
            return self._refused(page, exc)
        try:
            mode = None if folder is None else os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode
        except (OSError, ValueError):
            mode = None
        if mode is not None and stat.S_ISLNK(mode):
            return WriteResult(page, Outcome.CONFLICT, "a symbolic link is in the way")
        exists = mode is not None
        if mode is not None and stat.S_ISDIR(mode):
            return WriteResult(page, Outcome.CONFLICT, "a folder is in the way")
        if exists and not owned_page(path.name, folder):
            return WriteResult(page, Outcome.CONFLICT, "a file repodoc did not generate is in the way")
        current, too_large = None, False
        if exists and folder is not None:
            with contextlib.suppress(OSError):  # unreadable: written over
                current = self._page_on_disk(path.name, folder)
                too_large = current is None
            if current == data:
                if not self.check:
                    self._record(page, key, content_digest(data))
                return WriteResult(page, Outcome.UNCHANGED)
        edited = too_large or (current is not None and self.state.edited(page, current))
        if edited and not self.force:
            return WriteResult(page, Outcome.CONFLICT, f"{EDITED} (kept; {self.force_hint} overwrites it after "
                                                       "copying it to PAGE.orig)")
        if self.check:
            return WriteResult(page, Outcome.STALE, "differs" if exists else "missing")
        try:
            if folder is None:
                self._ensure_out()
                folder = self.folders.open(path.parent, create=True)
            aside = self._set_aside(path.name, folder) if edited else None
            digest = content_digest(data)
            self.state.note(page, digest)
            try:
                written = write_atomically(folder, path.name, data)
            except FileNotFoundError:  # a folder it had made was removed meanwhile: made again
                self.folders.close_all()
                written = write_atomically(self.folders.open(path.parent, create=True), path.name, data)
        except OSError as exc:
            return self._refused(page, exc)
        # what `_record` would read with lstat: the file renamed into place is the one written
        self.manifest[page] = (key, written.st_size, written.st_mtime_ns, digest)
        return WriteResult(page, Outcome.WRITTEN, f"{EDITED}: copied to {aside}" if aside else "")

    @staticmethod
    def _refused(page: str, exc: OSError) -> WriteResult:
        """A page whose folder cannot be opened or made, or that cannot be written: a link (ELOOP) or a file
        (ENOTDIR) on its folder's path is a conflict; anything else the system refuses, an error."""
        if exc.errno == errno.ENOTDIR:
            return WriteResult(page, Outcome.CONFLICT, "a file is in the way of its folder")
        if exc.errno in (errno.ELOOP, errno.EXDEV):
            return WriteResult(page, Outcome.CONFLICT, "its folder links outside the output folder")
        return WriteResult(page, Outcome.ERROR, f"cannot write: {exc.strerror or exc}")

    # -- removal ------------------------------------------------------------------
    def remove_stale(self, keep: set[str]) -> tuple[list[str], list[WriteResult]]:
        """Delete generated pages not in `keep`: those of the manifest, as `remove` does. Pages with the
        marker that it does not know (a deleted manifest, a copy a person made) are not known to be as
        repodoc wrote them: conflicts, kept (`force`: moved aside)."""
        unknown = self._unknown_pages(keep)
        for page in unknown:
            self.manifest[page] = ("", -1, -1, "")  # the marker, no digest: `remove` keeps it
        try:
            return self.remove(set(self.manifest) - keep)
        finally:
            for page in unknown:  # still there: never recorded as repodoc's
                self.manifest.pop(page, None)

    def _unknown_pages(self, keep: set[str]) -> list[str]:
        if not os.path.isdir(self.out):
            return []
        found: list[str] = []
        known = keep | self.manifest.keys()
        for folder, _dirs, files in os.walk(self.out):
            rel = os.path.relpath(folder, self.out)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            found.extend(prefix + name for name in files if name.endswith(".md") and prefix + name not in known
                         and owned_page(Path(folder, name)))
        return found

    def remove(self, pages: Iterable[str]) -> tuple[list[str], list[WriteResult]]:
        """Delete these pages if repodoc generated them (in the manifest, marker on line 1).

        Returns (removed pages, conflicts); with check=True nothing is deleted
        and the pages that would go are returned as removed.
        """
        removed: list[str] = []
        conflicts: list[WriteResult] = []
        for page in sorted(set(pages) & set(self.manifest)):
            path = self.out / page
            if not os.path.lexists(path):
                if not self.check:
                    del self.manifest[page]
                    self.anchors.pop(page, None)
                continue
            try:
                folder = self.folders.open(path.parent)
                ours = not stat.S_ISLNK(os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode) \
                    and owned_page(path.name, folder)
            except OSError:  # a link or a file on its folder's path
                ours = False
            if not ours:
                conflicts.append(WriteResult(page, Outcome.CONFLICT, "no longer generated, but not ours to delete"))
                if not self.check:
                    del self.manifest[page]
                    self.anchors.pop(page, None)
                continue
            try:
                current = self._page_on_disk(path.name, folder)
            except OSError:
                current = None
            # deleted only as repodoc wrote it: its digest recorded, never on the manifest's word alone
            edited = current is None or not self.state.as_written(page, current)
            if edited and not self.force:  # stays in the manifest: reported again until resolved
                why = EDITED if self.manifest[page][3] else UNRECORDED
                reason = (f"no longer generated, but {why} (kept; {self.force_hint} deletes it after copying it "
                          "to PAGE.orig)")
                conflicts.append(WriteResult(page, Outcome.CONFLICT, reason))
                continue
            if self.check:
                removed.append(page)
                continue
            try:
                if edited:
                    self._set_aside(path.name, folder)  # moved: gone from its place
                else:
                    os.unlink(path.name, dir_fd=folder)
                removed.append(page)
                del self.manifest[page]
                self.anchors.pop(page, None)
                self._prune(path.parent)
            except OSError as exc:
                conflicts.append(WriteResult(page, Outcome.CONFLICT, f"cannot delete: {exc.strerror or exc}"))
        return removed, conflicts

    def sweep_temporaries(self) -> None:
        """Delete temporary files left by a run that was killed mid-write (`atomic.sweep`)."""
        if not self.check and os.path.isdir(self.out):
            sweep(self.out)

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty by deletions, up to the output folder."""
        while folder != self.out and folder.is_relative_to(self.out):
            try:
                os.rmdir(folder.name, dir_fd=self.folders.open(folder.parent))
            except OSError:
                return
            self.folders.dropped(folder)
            folder = folder.parent

