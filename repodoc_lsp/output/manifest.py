"""The manifest of an output folder (`.repodoc-manifest.json.gz`), what a run writes beside its pages:
the render key, size, modification time and digest of each page as written, the inputs stamp of a
complete run, the rename anchors of file pages; and the journal, digests of pages about to be
written (a run killed before it saved the manifest leaves pages that are still repodoc's).

The digest rule: a page is repodoc's as it wrote it when its bytes have the digest the manifest
records, or one a killed run's journal left (`Manifest.as_written`, `Manifest.edited`).

The manifest is data from disk (a checkout ships it): it is used only when each of its pages is a
name repodoc writes (`is_page_name`), and read only as large as the pages on disk can need
(ROOM_FIXED); a damaged one is ignored with one warning and written anew.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import itertools
import json
import logging
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from repodoc_lsp import __version__
from repodoc_lsp.anchor_state import AnchorState, state_from_json
from repodoc_lsp.output.gzipstream import GzipStream
from repodoc_lsp.render.parts import is_part
from repodoc_lsp.store.regular import read_inside

log = logging.getLogger(__name__)

# The manifest: JSON compressed with gzip (zlib level 1, no time in its header: identical runs write
# identical bytes; `zcat` reads it). Earlier versions wrote it uncompressed as OLD_MANIFEST: that one is
# read while it is there (only an earlier version writes it, so it is the newer), and removed at the next save.
MANIFEST = ".repodoc-manifest.json.gz"
OLD_MANIFEST = ".repodoc-manifest.json"
# A compressed manifest inflating past this many times its size (JSON of hex digests compresses about
# 3 times) is damaged, not a reason to fill the memory.
_MAX_RATIO = 64
# Larger manifests and journals are damaged (or put there), not read, unless the pages on disk can need that
# many bytes of JSON (`_Room`): a tree of 1,000,000 files has a manifest of hundreds of MB (bench/README.md).
MAX_MANIFEST_BYTES = 64 << 20
# What a manifest's JSON can need, whatever a checkout ships (it is data from disk, like any file of the
# checkout): ROOM_FIXED bytes (the pages of a tree of about 6,000 pages), and for each page file on disk
# (a `.md` file of the output folder, no link followed) ROOM_PER_PAGE bytes, its name at most 6 bytes a
# byte twice (its entry and its anchors, `\u` escapes) and its size (the definitions its anchors record
# take fewer bytes than its anchors on it). A larger one is damaged, never parsed. The output folder is
# walked only as far as a manifest larger than ROOM_FIXED needs.
ROOM_FIXED = 1 << 20
ROOM_PER_PAGE = 256
_INFLATE_STEP = 1 << 20
# A manifest's JSON opens at most one list or table per this many bytes (an entry of the shortest page name
# takes about 80): a parsed list or table costs 30 times its two bytes of JSON.
_BYTES_PER_CONTAINER = 24
_E = TypeVar("_E")  # a parsed manifest entry
# Digests of pages about to be written, appended before each write and dropped when the
# manifest is saved: a run killed in between leaves pages that are still repodoc's.
JOURNAL = ".repodoc-journal"
# page -> (render key, size, mtime_ns, digest of the bytes written; "" if not known)
Record = tuple[str, int, int, str]
_HEX_DIGEST = re.compile(r"[0-9a-f]{32}\Z")  # what `content_digest` gives


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def has_manifest(folder: Path) -> bool:
    """True when `folder` holds a manifest (it is a repodoc output folder), of this version or an earlier one."""
    return any((folder / name).is_file() for name in (MANIFEST, OLD_MANIFEST))


class Entries:
    """A table of a manifest written a batch of entries at a time (`encode_manifest`): `pairs` yields its
    (key, JSON value) in their order; only a batch of them is ever made into JSON at once."""

    def __init__(self, pairs: Iterable[tuple[str, object]]) -> None:
        self.pairs = pairs


# Entries made into JSON at once (one `json.dumps` of a table of them, the braces cut): a batch's JSON-ready
# values and their text are all a manifest's encoding holds beside one piece of JSON and the bytes deflated.
_BATCH = 512


def encode_manifest(table: dict[str, object]) -> bytes:
    """The manifest's bytes: `table` as compact JSON, gzip-compressed, the same bytes for the same table.
    A value that is a table (a dict or `Entries`) is encoded a batch of entries at a time, each piece of
    JSON deflated as it is complete: never the whole JSON, nor a copy of every entry, held at once."""
    stream = GzipStream(_PIECE)
    for text in _json_pieces(table):
        stream.add(text.encode("utf-8"))
    return stream.finish()


def _json_pieces(table: dict[str, object]) -> Iterator[str]:
    """`json.dumps(table, separators=(",", ":"), ensure_ascii=False)` in pieces, tables a batch at a time."""
    dumps = functools.partial(json.dumps, separators=(",", ":"), ensure_ascii=False)  # C encoder: fast
    yield "{"
    for i, (key, value) in enumerate(table.items()):
        yield ("," if i else "") + dumps(key) + ":"
        if not isinstance(value, (dict, Entries)):
            yield dumps(value)
            continue
        pairs = iter(value.items() if isinstance(value, dict) else value.pairs)
        yield "{"
        first = True
        while batch := dict(itertools.islice(pairs, _BATCH)):
            yield ("" if first else ",") + dumps(batch)[1:-1]  # the entries without the table's braces
            first = False
        yield "}"
    yield "}"


# JSON of more than this many bytes is deflated in pieces of this size, each in a thread as it is complete
# (zlib lets go of the GIL while it deflates), as pigz does: the manifest is saved after the last page, the
# cores idle but one (a large tree's JSON takes tenths of a second in one piece: bench/README.md). The pieces
# are cut by size alone: the same bytes for the same table on any machine, however its JSON was made.
_PIECE = 4 << 20


def decode_manifest(raw: bytes, compressed: bool = True, room: Callable[[int], bool] | None = None) -> object:
    """The JSON value of a manifest's bytes (`compressed=False`: an earlier version's plain JSON);
    ValueError (saying why) when they are not a whole gzip stream of UTF-8 JSON, when `room(n)` says
    the tree cannot need `n` bytes of JSON (it is asked before each step of inflation: a larger one
    is never inflated whole), or when it holds more lists and tables than a manifest of its size
    (never parsed); RecursionError when the JSON is nested too deep."""
    return parse_manifest(manifest_text(raw, compressed, room))


def manifest_text(raw: bytes, compressed: bool = True, room: Callable[[int], bool] | None = None) -> str:
    """`decode_manifest`'s JSON text, checked as it says, not parsed (`parse_manifest`): the bytes it was decoded
    from are let go before it is parsed (at 1,000,000 files, a GB less at the peak of reading a manifest)."""
    if compressed:
        raw = _inflate(raw, room)
    elif room is not None and not room(len(raw)):
        raise ValueError(f"larger than its pages can need ({len(raw):,} bytes)")
    if raw.count(b"[") + raw.count(b"{") > 16 + len(raw) // _BYTES_PER_CONTAINER:
        raise ValueError("more lists and tables than a manifest holds")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None


def parse_manifest(text: str) -> object:
    """The JSON value of a manifest's text (`manifest_text`); ValueError when it is not JSON, RecursionError when
    it is nested too deep."""
    try:
        return json.loads(text)
    except ValueError as exc:
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


def _most(path: Path, room: Callable[[int], bool]) -> int:
    """The most bytes of the manifest or journal at `path` that are read: MAX_MANIFEST_BYTES, or its size when
    the pages on disk can need that many bytes of JSON (`room`; compressed JSON is not larger than itself)."""
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError):
        return MAX_MANIFEST_BYTES
    return size if size > MAX_MANIFEST_BYTES and room(size) else MAX_MANIFEST_BYTES


def _manifest_entry(value: object) -> tuple[str, int, int, str] | None:
    """A manifest entry `[key, size, mtime_ns, digest?]` as a tuple; None when it has another form (a
    digest is a digest `content_digest` makes, or "": not known)."""
    if not isinstance(value, list):
        return None
    if len(value) == 4:  # (unpacked by length: a generator per entry was a fifth of a large manifest's reading)
        key, size, mtime, digest = value
        if not (isinstance(digest, str) and (not digest or _HEX_DIGEST.match(digest))):
            return None
    elif len(value) == 3:
        (key, size, mtime), digest = value, ""
    else:
        return None
    return (key, size, mtime, digest) if isinstance(key, str) and type(size) is int and type(mtime) is int else None


class Manifest:
    """An output folder's manifest as read (`load`) and as this run changes it: `pages`, `inputs` (a
    digest of every input of the whole tree, when the pages are exactly the tree of those inputs: set
    by a complete run of the whole tree, cleared by any other), `anchors` (file page -> its anchors as
    last written, `render/anchors.py`), and its journal. Each process appends to the journal through
    its own descriptor (a forked render worker opens its own)."""

    def __init__(self, out: Path, name: str = MANIFEST) -> None:
        self.out = out
        self._name = name  # another name: a copy of a manifest (a page share's), read only, without a journal
        self.pages: dict[str, Record] = {}
        self.inputs = ""
        self.anchors: dict[str, AnchorState] = {}
        self._warned = False  # about a damaged manifest
        self._read_from = out / name  # the manifest read (an earlier version's: rewritten at the next save)
        self._journaled: dict[str, set[str]] = {}  # page -> digests a killed run may have left
        self._journal: tuple[int, int] | None = None  # (pid, fd): forked workers open their own
        # the manifest as read or last saved: `changed` tells whether there is anything to write
        self._saved: tuple[dict[str, Record], str, dict[str, AnchorState]] = ({}, "", {})

    def load(self) -> None:
        """Read the manifest; a damaged one (or damaged entries) is ignored with a warning: the
        pages it should list are rebuilt or recognised by their marker, and it is written anew."""
        self.pages, self.inputs, self.anchors = {}, "", {}
        old = self.out / OLD_MANIFEST
        self._read_from = old if self._name == MANIFEST and os.path.lexists(old) else self.out / self._name
        room = _Room(self.out)
        try:
            raw = read_inside(self.out, self._read_from, _most(self._read_from, room), "the output folder")
        except (FileNotFoundError, NotADirectoryError):  # no tree yet (or no folder: said elsewhere)
            raw = None
        except OSError as exc:
            raw = None
            self._damaged(f"unreadable: {exc.strerror or exc}")
        if raw is not None:
            text = self._decoded(manifest_text, raw, self._read_from.name != OLD_MANIFEST, room)
            raw = None  # (the compressed bytes, then the text, let go before the next step: `manifest_text`)
            value = self._decoded(parse_manifest, text) if text is not None else None
            text = None
            self._take(value)
        if self._name == MANIFEST:
            self._read_journal(room)
        self._mark_saved()

    def _decoded(self, step: Callable[..., _E], *args: object) -> _E | None:
        """`step(*args)`, the manifest's text or JSON value; None (with a warning) when it is not JSON of a
        manifest's size."""
        try:
            return step(*args)
        except ValueError as exc:
            self._damaged(str(exc)[:90])
        except RecursionError:
            self._damaged("not JSON: nested too deep")
        return None

    def _take(self, data: object) -> None:
        """Hold the entries of the manifest's JSON value `data` that have the right form; none when a
        page name is not one repodoc writes."""
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
        self.pages = self._valid(pages, lambda _page, value: _manifest_entry(value), "entries")
        anchors = data.get("anchors", {}) if isinstance(data, dict) else {}
        if not isinstance(anchors, dict):
            self._damaged("no table of anchors")
            anchors = {}
        known = self.pages
        self.anchors = self._valid(
            anchors, lambda page, value: state_from_json(value) if page in known else None, "anchor entries")

    def _read_journal(self, room: Callable[[int], bool]) -> None:
        with contextlib.suppress(OSError, ValueError):
            journal = read_inside(self.out, self.out / JOURNAL, _most(self.out / JOURNAL, room), "the output folder")
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

    # -- the journal ----------------------------------------------------------------
    def note(self, page: str, digest: str) -> None:
        """Append `digest page` to the journal before the page is written."""
        self.note_many(((page, digest),))

    def note_many(self, pages: Iterable[tuple[str, str]]) -> None:
        """`note` of each (page, digest) of `pages`, in one write (a merge's folder of pages)."""
        if self._journal is None or self._journal[0] != os.getpid():
            self._journal = (os.getpid(), self._open_journal())
        if self._journal[1] >= 0:
            os.write(self._journal[1], "".join(f"{digest} {page}\n" for page, digest in pages).encode())

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

    # -- saving ---------------------------------------------------------------------
    def changed(self) -> bool:
        """True when the manifest to write differs from the one read or last saved (an earlier
        version's manifest read: always, so that it is replaced)."""
        return (self.pages, self.inputs, self.anchors) != self._saved or self._read_from.name == OLD_MANIFEST

    def encoded(self) -> bytes:
        """The manifest's bytes as they are to be written, encoded as they are streamed (`Entries`): never
        a JSON-ready copy of every page's record and anchors, nor their whole JSON, held at once."""
        pages = self.pages
        table: dict[str, object] = {"generator": f"repodoc-lsp {__version__}",
                                    "pages": Entries((page, pages[page]) for page in sorted(pages))}
        if self.inputs:
            table["inputs"] = self.inputs
        anchored = sorted(page for page in self.anchors if page in pages)
        if anchored:
            anchors = self.anchors
            table["anchors"] = Entries((page, anchors[page].as_json()) for page in anchored)
        return encode_manifest(table)

    def saved(self) -> None:
        """After the manifest's bytes are in place: an earlier version's manifest and the journal are
        deleted (OSError when they cannot be, the journal being gone included)."""
        if self._read_from.name == OLD_MANIFEST:  # an earlier version's, read in its place: gone before the journal
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._read_from)
            self._read_from = self.out / MANIFEST
        self._mark_saved()
        if self._journal is not None and self._journal[0] == os.getpid() and self._journal[1] >= 0:
            os.close(self._journal[1])
            self._journal = None
        self._journaled.clear()
        os.unlink(self.out / JOURNAL)

    def _mark_saved(self) -> None:
        self._saved = (dict(self.pages), self.inputs, dict(self.anchors))

    # -- the digest rule ------------------------------------------------------------
    def as_written(self, page: str, current: bytes) -> bool:
        """True when `current` (a page's bytes on disk) is what repodoc wrote there: the digest the
        manifest records (one is recorded), or one a killed run's journal left."""
        entry = self.pages.get(page)
        digest = content_digest(current)
        return bool(entry and entry[3] == digest) or digest in self._journaled.get(page, ())

    def edited(self, page: str, current: bytes) -> bool:
        """True when the page on disk is not what repodoc last wrote there (a person's edit)."""
        entry = self.pages.get(page)
        if entry is None or not entry[3]:
            return False
        digest = content_digest(current)
        return digest != entry[3] and digest not in self._journaled.get(page, ())

    # -- a render worker's share ------------------------------------------------------
    def known(self, page: str) -> tuple[Record | None, frozenset[str]]:
        """What is known of `page` (its entry, digests a killed run may have left there): what a
        render worker's writer needs to `learn` before writing it."""
        return self.pages.get(page), frozenset(self._journaled.get(page, ()))

    def learn(self, page: str, known: tuple[Record | None, frozenset[str]]) -> None:
        """Hold `page` as another process's manifest knows it (`known`), in a render worker."""
        record, journaled = known
        if record is None:
            self.pages.pop(page, None)
        else:
            self.pages[page] = record
        if journaled:
            self._journaled[page] = set(journaled)
        else:
            self._journaled.pop(page, None)

    def forget(self, page: str) -> None:
        """Drop what `learn` took of `page` (a render worker holds only the pages of its part)."""
        self.pages.pop(page, None)
        self._journaled.pop(page, None)
