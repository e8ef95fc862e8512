"""Strings -> files in the output folder, and nothing else.

Rules: a generated page carries `MARKER` on its first line and is recorded
in the manifest with a digest of what was written; a file without the marker
is a person's and is never overwritten or deleted, nor is a page whose content
differs from what repodoc wrote (a person's edit): a conflict is reported instead,
and `force` overwrites or deletes it after copying it aside to `PAGE.orig`; a page is
deleted only when its bytes have the digest recorded (no digest: kept, as a person's); writes
go to a temporary file renamed into place; an unchanged page is not rewritten; no
path outside the output folder is written or deleted, whatever the symlinks say.

The manifest is data from disk (a checkout ships it): it is used only when each of its pages is a
name repodoc writes (`is_page_name`), and read only as large as the pages on disk can need (ROOM_FIXED).

One run writes an output folder at a time: `Writer.hold` takes an advisory lock on the
folder itself (flock: released by the kernel when its holder dies, so never stale) and
reads the manifest afresh. Temporary files carry the writing process's id; a sweep deletes
only those whose process is gone.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import fcntl
import hashlib
import itertools
import json
import logging
import os
import re
import stat
import struct
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from repodoc_lsp import MARKER, __version__
from repodoc_lsp.envlimits import env_seconds
from repodoc_lsp.output.modes import PAGE_MODE
from repodoc_lsp.render.anchors import AnchorState, state_from_json
from repodoc_lsp.render.parts import is_part
from repodoc_lsp.store.regular import read_inside, read_regular

# The manifest: JSON compressed with gzip (zlib level 1, no time in its header: identical runs write
# identical bytes; `zcat` reads it). Earlier versions wrote it uncompressed as OLD_MANIFEST: that one is
# read while it is there (only an earlier version writes it, so it is the newer), and removed at the next save.
MANIFEST = ".repodoc-manifest.json.gz"
OLD_MANIFEST = ".repodoc-manifest.json"
# A compressed manifest inflating past this many times its size (JSON of hex digests compresses about
# 3 times) is damaged, not a reason to fill the memory.
_MAX_RATIO = 64
# Larger manifests and journals are damaged (or put there), not read: the scale corpus's 17,150 files
# have a manifest of about 2 MB.
_MAX_MANIFEST_BYTES = 64 << 20
# What a manifest's JSON can need, whatever a checkout ships (it is data from disk, like any file of the
# checkout): ROOM_FIXED bytes (the pages of a tree of about 6,000 pages), and for each page file on disk
# (a `.md` file of the output folder, no link followed) ROOM_PER_PAGE bytes, its name at most 6 bytes a
# byte twice (its entry and its anchors, `\u` escapes) and its size (the definitions its anchors record
# take fewer bytes than its anchors on it). PyTorch's 5,427 pages need 3.25 MB; a larger one is damaged,
# never parsed. The output folder is walked only as far as a manifest larger than ROOM_FIXED needs.
ROOM_FIXED = 1 << 20
ROOM_PER_PAGE = 256
_INFLATE_STEP = 1 << 20
# A manifest's JSON opens at most one list or table per this many bytes (an entry of the shortest page name
# takes about 80): a parsed list or table costs 30 times its two bytes of JSON.
_BYTES_PER_CONTAINER = 24
_E = TypeVar("_E")  # a parsed manifest entry
# Folders of the output a process keeps open (`Writer._dir`): pages are written folder by folder.
_OPEN_DIRS = 32


def owned_page(path: Path | str, dir_fd: int | None = None) -> bool:
    """True when the file at `path` (relative to `dir_fd` when given) is a page repodoc generated
    (marker on line 1)."""
    try:  # a FIFO is nobody's page
        return read_regular(path, len(_MARKER_BYTES), dir_fd=dir_fd) == _MARKER_BYTES
    except OSError:
        return False


def has_manifest(folder: Path) -> bool:
    """True when `folder` holds a manifest (it is a repodoc output folder), of this version or an earlier one."""
    return any((folder / name).is_file() for name in (MANIFEST, OLD_MANIFEST))


def encode_manifest(table: dict[str, object]) -> bytes:
    """The manifest's bytes: `table` as compact JSON, gzip-compressed, the same bytes for the same table."""
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False)  # C encoder: fast
    return _gzip(data.encode("utf-8"))


# JSON of more than this many bytes is deflated in pieces of this size at once, each in a thread (zlib lets go
# of the GIL while it deflates), as pigz does: the manifest is saved after the last page, the cores idle
# but one (the 17,150-file corpus's 23 MB of JSON took 0.3 s in one piece). The pieces are cut by size
# alone: the same bytes for the same table on any machine.
_PIECE = 4 << 20
_GZIP_HEADER = bytes((0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 4, 3))  # deflate, no name, mtime 0, fastest, Unix: as zlib's


def _gzip(data: bytes) -> bytes:
    """`data` as one gzip stream of zlib level 1 (one piece: `zlib.compress`'s own bytes). A piece but
    the last ends with a full flush (its blocks end on a byte, the next piece's refer to nothing before
    them): the raw deflate streams of the pieces joined are one stream."""
    if len(data) <= _PIECE:
        return zlib.compress(data, level=1, wbits=31)  # wbits 31: a gzip stream, mtime 0
    view = memoryview(data)
    starts = range(0, len(data), _PIECE)
    deflated: list[bytes | None] = [None] * len(starts)  # None: its thread failed (MemoryError...)

    def deflate(i: int) -> None:
        with contextlib.suppress(Exception):  # left None: deflated again below, where a failure is raised
            piece = zlib.compressobj(1, zlib.DEFLATED, -15)  # raw deflate: no header of its own
            last = i == len(starts) - 1
            deflated[i] = piece.compress(view[starts[i] : starts[i] + _PIECE]) + \
                piece.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)
    threads = [threading.Thread(target=deflate, args=(i,), name="repodoc-manifest-deflate")
               for i in range(len(starts) - 1)]
    for thread in threads:
        thread.start()
    deflate(len(starts) - 1)
    check = zlib.crc32(data)
    for thread in threads:
        thread.join()
    pieces = [piece for piece in deflated if piece is not None]
    if len(pieces) < len(deflated):  # never a manifest with a piece left out: deflated whole, here
        return zlib.compress(data, level=1, wbits=31)
    return b"".join((_GZIP_HEADER, *pieces, struct.pack("<II", check, len(data) & 0xFFFFFFFF)))


def decode_manifest(raw: bytes, compressed: bool = True, room: Callable[[int], bool] | None = None) -> object:
    """The JSON value of a manifest's bytes (`compressed=False`: an earlier version's plain JSON);
    ValueError (saying why) when they are not a whole gzip stream of UTF-8 JSON, when `room(n)` says
    the tree cannot need `n` bytes of JSON (it is asked before each step of inflation: a larger one
    is never inflated whole), or when it holds more lists and tables than a manifest of its size
    (never parsed); RecursionError when the JSON is nested too deep."""
    if compressed:
        raw = _inflate(raw, room)
    elif room is not None and not room(len(raw)):
        raise ValueError(f"larger than its pages can need ({len(raw):,} bytes)")
    if raw.count(b"[") + raw.count(b"{") > 16 + len(raw) // _BYTES_PER_CONTAINER:
        raise ValueError("more lists and tables than a manifest holds")
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is one
        raise ValueError(f"not JSON: {exc}") from None


def _inflate(raw: bytes, room: Callable[[int], bool] | None) -> bytes:
    """The bytes a gzip stream inflates to, a step at a time: ValueError when it is not one, inflates past
    `_MAX_RATIO` times its size or past what `room` allows."""
    inflate = zlib.decompressobj(wbits=31)
    most = _MAX_RATIO * len(raw) + (1 << 20)
    pieces: list[bytes] = []
    size = 0
    pending = raw
    while True:
        try:
            piece = inflate.decompress(pending, _INFLATE_STEP)
        except zlib.error as exc:
            raise ValueError(f"not gzip: {exc}") from None
        pieces.append(piece)
        size += len(piece)
        pending = inflate.unconsumed_tail
        if inflate.eof or not (pending or piece):
            break
        if size > most:
            raise ValueError(f"inflates past {_MAX_RATIO} times its size")
        if room is not None and not room(size + _INFLATE_STEP):
            raise ValueError(f"larger than its pages can need (past {size:,} bytes)")
    if not inflate.eof or inflate.unused_data:
        raise ValueError("truncated" if not inflate.eof else "bytes after its end")
    return b"".join(pieces)


def is_page_name(name: object) -> bool:
    """True when `name` (a manifest's key) names a page repodoc writes: relative, normalised (no empty,
    `.` or `..` part, not absolute), no NUL, a path the system can take, and page-shaped (`index.md`,
    `doc.md`, `F_docs.md`, `F_kw.md`, `F_docs.partN.md`, and `llms.txt`, `llms-full.txt` at the
    tree's root). Any other key is not from repodoc."""
    if not isinstance(name, str) or not 0 < len(name) <= 4096 or "\0" in name:
        return False
    wrapped = f"/{name}/"
    if "//" in wrapped or "/./" in wrapped or "/../" in wrapped:  # an empty part: absolute, or a / at its end
        return False
    if name in ("llms.txt", "llms-full.txt"):
        return True
    last = name.rpartition("/")[2]
    if not ((last.endswith(("_docs.md", "_kw.md")) and last not in ("_docs.md", "_kw.md"))
            or last in ("index.md", "doc.md") or is_part(name)):
        return False
    if not name.isascii():
        try:
            os.fsencode(name)  # a lone surrogate no path has
        except UnicodeError:
            return False
    return True


class _Room:
    """`room(n)`: True when the pages in the output folder `out` can need `n` bytes of manifest JSON (see
    ROOM_FIXED). The folder is walked only as far as the largest question asked needs."""

    def __init__(self, out: Path) -> None:
        self._pages = _page_room(out)
        self.bytes = ROOM_FIXED

    def __call__(self, n: int) -> bool:
        while self.bytes < n:
            more = next(self._pages, None)
            if more is None:
                return False
            self.bytes += more
        return True


def _page_room(out: Path) -> Iterator[int]:
    """For each `.md` file below `out` (no link followed), the bytes of manifest JSON it can need."""
    top = os.fspath(out)
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                found = list(entries)
        except OSError:
            continue
        for entry in found:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    name = len(os.fsencode(entry.path)) - len(os.fsencode(top))
                    yield ROOM_PER_PAGE + 12 * name + entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue

log = logging.getLogger(__name__)
# Digests of pages about to be written, appended before each write and dropped when the
# manifest is saved: a run killed in between leaves pages that are still repodoc's.
JOURNAL = ".repodoc-journal"
_MARKER_BYTES = MARKER.encode()
# A page file read back (to compare or digest it) is at most this large; a larger one behind a
# page's marker line is a person's (generated pages are cut at about 100 KB).
PAGE_MOST = 64 << 20
# A temporary file's writer: process id and start time (a reused id is not mistaken for it).
_TEMPORARY = re.compile(r"\.repodoc-(?:(\d+)-(\d+)-)?.*\.tmp\Z")


# How long a run waits for another to finish writing the same folder.
LOCK_SECONDS = env_seconds("REPODOC_LOCK_TIMEOUT", 300.0)
# page -> (render key, size, mtime_ns, digest of the bytes written; "" if not known)
Record = tuple[str, int, int, str]
EDITED = "changed since repodoc wrote it"
UNRECORDED = "not recorded as repodoc wrote it"  # the marker, but no digest of it (or it cannot be read)
# How a person overwrites an edited page, named in the conflict's reason (the server names its command).
CLI_FORCE = "--force"
SERVER_FORCE = ('repodoc.generate with {"force": true} (VS Code: "RepoDoc: Generate, Overwriting Edited Pages"; '
                "Neovim: :RepoDoc! generate)")


_HEX_DIGEST = re.compile(r"[0-9a-f]{32}\Z")  # what `content_digest` gives


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


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
        self.out_real = os.path.realpath(out)
        self.manifest: dict[str, Record] = {}
        # a digest of every input of the whole tree, when the manifest's pages are exactly the
        # tree of those inputs (set by a complete run of the whole tree, cleared by any other)
        self.inputs = ""
        # file page -> its anchors as last written (rename aliases: `render/anchors.py`)
        self.anchors: dict[str, AnchorState] = {}
        self._warned = False  # about a damaged manifest
        self._read_from = out / MANIFEST  # the manifest read (an earlier version's: rewritten at the next save)
        self._journaled: dict[str, set[str]] = {}  # page -> digests a killed run may have left
        self._journal: tuple[int, int] | None = None  # (pid, fd): forked workers open their own
        # Folders of the output opened by this process (`_dir`; a forked worker opens its own): folder ->
        # (descriptor, device, inode), the most recently used last.
        self._dirs: tuple[int, OrderedDict[Path, tuple[int, int, int]]] = (os.getpid(), OrderedDict())
        self._saved: dict[str, Record] = {}  # the manifest as read: save_manifest writes only a change
        self._saved_inputs = ""
        self._saved_anchors: dict[str, AnchorState] = {}
        if read_manifest:
            self._reload()

    def _reload(self) -> None:
        self._load_manifest()
        self._saved = dict(self.manifest)
        self._saved_inputs = self.inputs
        self._saved_anchors = dict(self.anchors)

    # -- manifest -----------------------------------------------------------------
    def _load_manifest(self) -> None:
        """Read the manifest; a damaged one (or damaged entries) is ignored with a warning: the
        pages it should list are rebuilt or recognised by their marker, and it is written anew."""
        self.manifest = {}
        self.inputs = ""
        self.anchors = {}
        old = self.out / OLD_MANIFEST
        self._read_from = old if os.path.lexists(old) else self.out / MANIFEST
        try:
            raw = read_inside(self.out, self._read_from, _MAX_MANIFEST_BYTES, "the output folder")
        except (FileNotFoundError, NotADirectoryError):  # no tree yet (or no folder: said elsewhere)
            raw = None
        except OSError as exc:
            raw = None
            self._damaged(f"unreadable: {exc.strerror or exc}")
        room = _Room(self.out)
        if raw is not None:
            try:
                data = decode_manifest(raw, compressed=self._read_from.name == MANIFEST, room=room)
            except ValueError as exc:
                data = None
                self._damaged(str(exc)[:90])
            except RecursionError:
                data = None
                self._damaged("not JSON: nested too deep")
            pages = data.get("pages") if isinstance(data, dict) else None
            if not isinstance(pages, dict):
                if data is not None:
                    self._damaged("no table of pages")
                pages = {}
            strangers = sum(not is_page_name(page) for page in pages)
            if strangers:  # not written by repodoc: nothing of it is believed
                self._damaged(f"{strangers} page names repodoc does not write")
                data, pages = None, {}
            inputs = data.get("inputs") if isinstance(data, dict) else None
            self.inputs = inputs if isinstance(inputs, str) else ""
            self.manifest = self._valid(pages, lambda _page, value: _manifest_entry(value), "entries")
            anchors = data.get("anchors", {}) if isinstance(data, dict) else {}
            if not isinstance(anchors, dict):
                self._damaged("no table of anchors")
                anchors = {}
            known = self.manifest
            self.anchors = self._valid(
                anchors, lambda page, value: state_from_json(value) if page in known else None, "anchor entries")
        with contextlib.suppress(OSError, ValueError):
            journal = read_inside(self.out, self.out / JOURNAL, _MAX_MANIFEST_BYTES, "the output folder")
            if not room(len(journal)):  # more than the pages can need: not from repodoc
                return
            for line in journal.decode("utf-8").splitlines():
                digest, _, page = line.partition(" ")
                if _HEX_DIGEST.match(digest) and is_page_name(page):
                    self._journaled.setdefault(page, set()).add(digest)

    def _valid(self, table: dict, parse: Callable[[str, object], _E | None], what: str) -> dict[str, _E]:
        """The entries of a manifest table that `parse` accepts; the others are counted in one warning."""
        good = {}
        for page, value in table.items():
            entry = parse(page, value)
            if entry is not None:
                good[page] = entry
        if len(good) < len(table):
            self._damaged(f"{len(table) - len(good)} {what} of the wrong form")
        return good

    def _damaged(self, why: str) -> None:
        if not self._warned:  # once per run, however often it is read
            self._warned = True
            log.warning("repodoc: warning: %s: damaged manifest (%s): ignored, it is rebuilt", self._read_from, why)

    def _note(self, page: str, digest: str) -> None:
        """Append `digest page` to the journal before the page is written."""
        if self._journal is None or self._journal[0] != os.getpid():
            self._journal = (os.getpid(), self._open_journal())
        if self._journal[1] >= 0:
            os.write(self._journal[1], f"{digest} {page}\n".encode())

    def _open_journal(self) -> int:
        """The journal opened to append (made if absent); -1, with a warning, when a folder is in its place.

        Only a regular file is opened, never through a link: a link (out of the output folder), FIFO
        (opening it waits for a reader), device or socket in its place (its name is repodoc's) is
        deleted and the journal made anew."""
        path = self.out / JOURNAL
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _attempt in range(3):
            with contextlib.suppress(FileNotFoundError):
                mode = os.lstat(path).st_mode
                if stat.S_ISDIR(mode):
                    break
                if not stat.S_ISREG(mode):
                    os.unlink(path)
            try:
                fd = os.open(path, flags, 0o644)
            except OSError as exc:  # ELOOP: a link; ENXIO: a FIFO without reader; put there meanwhile
                if exc.errno in (errno.ELOOP, errno.ENXIO):
                    continue
                raise
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
        log.warning("repodoc: warning: %s: not a file (a folder?): pages are written without a journal (a run "
                    "killed while writing leaves pages the next run takes for edited ones)", path)
        return -1

    def save_manifest(self) -> None:
        if self.check or (self.manifest == self._saved and self.inputs == self._saved_inputs
                          and self.anchors == self._saved_anchors and self._read_from.name == MANIFEST):
            return
        table: dict[str, object] = {"generator": f"repodoc-lsp {__version__}",
                                    "pages": dict(sorted(self.manifest.items()))}
        if self.inputs:
            table["inputs"] = self.inputs
        anchors = {page: state.as_json() for page, state in sorted(self.anchors.items()) if page in self.manifest}
        if anchors:
            table["anchors"] = anchors
        data = encode_manifest(table)
        with contextlib.suppress(OSError, OutputError):
            self._ensure_out()
            self._atomic_write(self.out / MANIFEST, data, self._dir(self.out))
            if self._read_from.name != MANIFEST:  # an earlier version's, read in its place: gone before the journal
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._read_from)
                self._read_from = self.out / MANIFEST
            self._saved = dict(self.manifest)
            self._saved_inputs = self.inputs
            self._saved_anchors = dict(self.anchors)
            if self._journal is not None and self._journal[0] == os.getpid() and self._journal[1] >= 0:
                os.close(self._journal[1])
                self._journal = None
            self._journaled.clear()
            os.unlink(self.out / JOURNAL)

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None, cancel: Callable[[], bool] | None = None,
             pause: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold the output folder's lock (waiting up to `timeout`, LOCK_SECONDS by default,
        while another run holds it; `pause` is called as it waits, `cancel()` stops the wait)
        and read the manifest afresh: what a run that held it before wrote is known. A check
        writes nothing: it reads the manifest without the lock."""
        if self.check:
            self._reload()
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
            self._reload()
            yield
        finally:
            self._close_dirs()
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
        self.out_real = os.path.realpath(self.out)

    def owned(self, path: Path | str, dir_fd: int | None = None) -> bool:
        """True when the file at `path` (relative to `dir_fd` when given) is a page repodoc generated
        (marker on line 1)."""
        return owned_page(path, dir_fd)

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
        """True when every page of the manifest is on disk as it was written (its size and
        modification time)."""
        for page, (_key, size, mtime_ns, digest) in self.manifest.items():
            try:
                st = os.lstat(self.out / page)
            except OSError:
                return False
            if not digest or (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
                return False
        return bool(self.manifest)

    def _record(self, page: str, key: str, digest: str) -> None:
        try:
            st = os.lstat(self.out / page)
        except OSError:
            return
        self.manifest[page] = (key, st.st_size, st.st_mtime_ns, digest)

    def known(self, page: str) -> tuple[Record | None, frozenset[str]]:
        """What this writer knows of `page` (its manifest entry, digests a killed run may have
        left there): what a render worker's writer needs to `learn` before writing it."""
        return self.manifest.get(page), frozenset(self._journaled.get(page, ()))

    def learn(self, page: str, known: tuple[Record | None, frozenset[str]]) -> None:
        """Hold `page` as another writer knows it (`known`), in a render worker."""
        record, journaled = known
        if record is None:
            self.manifest.pop(page, None)
        else:
            self.manifest[page] = record
        if journaled:
            self._journaled[page] = set(journaled)
        else:
            self._journaled.pop(page, None)

    def forget(self, page: str) -> None:
        """Drop what `learn` took of `page` (a render worker holds only the pages of its part)."""
        self.manifest.pop(page, None)
        self._journaled.pop(page, None)

    def _as_written(self, page: str, current: bytes) -> bool:
        """True when `current` (a page's bytes on disk) is what repodoc wrote there: the digest the
        manifest records (one is recorded), or one a killed run's journal left."""
        entry = self.manifest.get(page)
        digest = content_digest(current)
        return bool(entry and entry[3] == digest) or digest in self._journaled.get(page, ())

    def edited(self, page: str, current: bytes) -> bool:
        """True when the page on disk is not what repodoc last wrote there (a person's edit)."""
        entry = self.manifest.get(page)
        if entry is None or not entry[3]:
            return False
        digest = content_digest(current)
        return digest != entry[3] and digest not in self._journaled.get(page, ())

    def _set_aside(self, path: Path, dir_fd: int) -> Path:
        """Move a page a person edited (`path`, in the folder open as `dir_fd`) to the first free
        `PAGE.orig`, `PAGE.orig.2`, ... (renamed: not read, whatever its size)."""
        n = 1
        while True:
            aside = path.with_name(path.name + (".orig" if n == 1 else f".orig.{n}"))
            try:
                os.stat(aside.name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                break
            n += 1
        os.rename(path.name, aside.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
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
        try:
            folder: int | None = self._dir(path.parent)
        except FileNotFoundError:  # not there yet: made below
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
        if exists and not self.owned(path.name, folder):
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
        edited = too_large or (current is not None and self.edited(page, current))
        if edited and not self.force:
            return WriteResult(page, Outcome.CONFLICT, f"{EDITED} (kept; {self.force_hint} overwrites it after "
                                                       "copying it to PAGE.orig)")
        if self.check:
            return WriteResult(page, Outcome.STALE, "differs" if exists else "missing")
        try:
            if folder is None:
                self._ensure_out()
                folder = self._dir(path.parent, create=True)
            aside = self._set_aside(path, folder) if edited else None
            digest = content_digest(data)
            self._note(page, digest)
            try:
                written = self._atomic_write(path, data, folder)
            except FileNotFoundError:  # a folder it had made was removed meanwhile: made again
                self._close_dirs()
                written = self._atomic_write(path, data, self._dir(path.parent, create=True))
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return self._refused(page, exc)
            return WriteResult(page, Outcome.ERROR, f"cannot write: {exc.strerror or exc}")
        # what `_record` would read with lstat: the file renamed into place is the one written
        self.manifest[page] = (key, written.st_size, written.st_mtime_ns, digest)
        return WriteResult(page, Outcome.WRITTEN, f"{EDITED}: copied to {aside.name}" if aside else "")

    @staticmethod
    def _refused(page: str, exc: OSError) -> WriteResult:
        """A page whose folder cannot be opened: a link (ELOOP) or a file (ENOTDIR) on its path."""
        if exc.errno == errno.ENOTDIR:
            return WriteResult(page, Outcome.CONFLICT, "a file is in the way of its folder")
        return WriteResult(page, Outcome.CONFLICT, "its folder links outside the output folder")

    def _dir(self, folder: Path, create: bool = False) -> int:
        """A descriptor of `folder` (the output folder or a folder in it) open as a directory: every write,
        read and deletion of a page is relative to it, so a link swapped onto its path after this cannot
        send them elsewhere. It is opened from the output folder down, one part at a time, no link
        followed (ELOOP: a link on its path, to anywhere; ENOTDIR: a file), the parts made if absent when
        `create` (else FileNotFoundError). Kept per process (the last `_OPEN_DIRS`), and used again while a
        `stat` of `folder` finds that very directory: another put in its place is opened again. (That
        directory itself moved out of the output folder, a link to it left in its place, passes the
        `stat`: writes follow it.)"""
        if self._dirs[0] != os.getpid():  # a forked worker: its parent's stay open, unused
            self._dirs = (os.getpid(), OrderedDict())
        dirs = self._dirs[1]
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
            parent = self._dir(folder.parent, create)
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
        while len(dirs) > _OPEN_DIRS:
            os.close(dirs.popitem(last=False)[1][0])
        return fd

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close_dirs()

    def _close_dirs(self) -> None:
        if self._dirs[0] == os.getpid():
            for fd, _dev, _ino in self._dirs[1].values():
                os.close(fd)
        self._dirs = (os.getpid(), OrderedDict())

    def _atomic_write(self, path: Path, data: bytes, folder: int) -> os.stat_result:
        """Write `data` to a new temporary file in `path`'s folder, open as `folder` (named by this
        process, created exclusively, no link followed) and rename it to `path`; the written file's status."""
        pid, started = _started_here()
        while True:
            tmp = f".repodoc-{pid}-{started}-{next(_SERIAL)}.tmp"
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
            os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
        return written

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
                         and self.owned(Path(folder, name)))
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
                folder = self._dir(path.parent)
                ours = not stat.S_ISLNK(os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode) \
                    and self.owned(path.name, folder)
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
            edited = current is None or not self._as_written(page, current)
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
                    self._set_aside(path, folder)  # moved: gone from its place
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
        """Delete temporary files left by a run that was killed mid-write (their process is gone;
        without a process id: left by an older version)."""
        if self.check or not os.path.isdir(self.out):
            return
        for folder, _dirs, files in os.walk(self.out):
            for name in files:
                m = _TEMPORARY.match(name)
                if m and not (m.group(1) and _alive(int(m.group(1)), int(m.group(2)))):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(folder, name))

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty by deletions, up to the output folder."""
        while folder != self.out and folder.is_relative_to(self.out):
            try:
                os.rmdir(folder.name, dir_fd=self._dir(folder.parent))
            except OSError:
                return
            entry = self._dirs[1].pop(folder, None)
            if entry is not None:
                os.close(entry[0])
            folder = folder.parent


def _started(pid: int) -> int:
    """When process `pid` started (clock ticks since boot; 0: unknown, not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


_SERIAL = itertools.count()  # temporary files' numbers (with the process's id and start: unique)
_STARTED: tuple[int, int] | None = None  # (this process's id, when it started), read once per process


def _started_here() -> tuple[int, int]:
    """This process's id and `_started` of it (a forked process reads its own)."""
    global _STARTED
    pid = os.getpid()
    if _STARTED is None or _STARTED[0] != pid:
        _STARTED = (pid, _started(pid))
    return _STARTED


def _alive(pid: int, started: int) -> bool:
    """True while the process that wrote a temporary file runs (not another with its id)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass
    except (OverflowError, OSError):
        return False
    return not started or _started(pid) in (started, 0)


def _manifest_entry(value: object) -> tuple[str, int, int, str] | None:
    """A manifest entry `[key, size, mtime_ns, digest?]` as a tuple; None when it has another form (a
    digest is a digest `content_digest` makes, or "": not known)."""
    if not isinstance(value, list) or len(value) not in (3, 4):
        return None
    key, size, mtime, *rest = value
    if not (isinstance(key, str) and type(size) is int and type(mtime) is int
            and all(isinstance(r, str) and (not r or _HEX_DIGEST.match(r)) for r in rest)):
        return None
    return key, size, mtime, rest[0] if rest else ""
