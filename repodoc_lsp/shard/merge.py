"""`repodoc merge DIR... --out DIR`: the output folders of the page shares (`generate --pages K/N`)
joined into one tree with one manifest: the tree one machine writes, byte for byte (the manifest's
sizes and modification times are those of the merged files).

The folders are untrusted input (artifacts): every share of one split must be there once, made by
this version for the same inputs and output folder, and every page must be a file of the size its
share's manifest records; otherwise nothing is written and a ShardError names the folder (each manifest is read
there, once, and held until its share is merged). The shares are then merged two at a time (two threads), each
page read once: its bytes must have the digest its manifest records, else the merge stops there (`MergeStopped`),
the merged folder's manifest without the stamp of a complete tree. A page is linked into place (a hard link: the share's
file gets a second name, nothing is written again; the shares are left as they were) where the output
folder has no file in its place and both are on one file system; otherwise it goes through the writer,
as a run's pages do: a page a person edited in the output folder is a conflict, never lost. Pages of the
folder that the shares do not have are deleted (a folder that held none before the merge is not walked for them).
Shares downloaded into the output folder itself are merged where they are: `inplace.py`."""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import re
import stat
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.output.folders import Folders
from repodoc_lsp.output.manifest import JOURNAL, MANIFEST, Manifest, content_digest
from repodoc_lsp.output.modes import PAGE_MODE
from repodoc_lsp.output.site import NOJEKYLL
from repodoc_lsp.output.writer import Outcome, OutputError, Record, Writer, WriteResult
from repodoc_lsp.render.anchors import AnchorState
from repodoc_lsp.shard.facts_file import ShardError, Tree, tree_from_json
from repodoc_lsp.shard.pages import (
    OLD_SIDECAR,
    SIDECAR_FORMAT,
    SIDECAR_PREFIX,
    SIDECAR_VERSION,
    manifest_copy_name,
    pages_digest,
    sidecar_name,
)
from repodoc_lsp.store.regular import read_inside

MAX_PAGE_BYTES = 1 << 30  # a page file larger than this in a share is damage, never read
THREADS = 2  # shares merged at once (a runner's cores)


@dataclass(frozen=True, slots=True)
class PageShare:
    """A page share's output folder, as its note (`sidecar_name`) describes it."""

    folder: Path
    share: tuple[int, int]
    inputs: str
    tree: Tree
    out: str
    count: int
    digest: str

    @property
    def name(self) -> str:
        return f"{self.folder} (pages {self.share[0]}/{self.share[1]})"


@dataclass
class MergeSummary:
    out: str
    shares: int = 0
    pages: int = 0
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    conflicts: list[WriteResult] = field(default_factory=list)
    errors: list[WriteResult] = field(default_factory=list)
    in_place: bool = False  # `merge_in_place`: every page verified where it was, none written


def read_share(folder: Path) -> PageShare:
    """The note of the page share in `folder`; ShardError when there is none, several, or it is damaged."""
    names = notes_in(folder)
    if len(names) > 1:
        raise ShardError(f"{folder}: holds the notes of {len(names)} page shares (downloaded into one folder: merge "
                         "it with --in-place)")
    return read_note(folder, names[0])


def notes_in(folder: Path) -> list[str]:
    """The names of the page shares' notes in `folder` (at least one; else ShardError)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if _NOTE.match(e.name))
    except OSError as exc:
        raise ShardError(f"{folder}: cannot be read: {exc.strerror or exc}") from None
    if not names:
        if os.path.lexists(folder / OLD_SIDECAR):
            raise ShardError(f"{folder}: {OLD_SIDECAR}: pages made by an earlier repodoc: every job must run the "
                             "same version")
        raise ShardError(f"{folder}: no {SIDECAR_PREFIX}K-of-N.json: not the output folder of a complete "
                         "`repodoc generate --pages K/N` (did that job fail?)")
    return names


_NOTE = re.compile(re.escape(SIDECAR_PREFIX) + r"[0-9]+-of-[0-9]+\.json\Z")


def read_note(folder: Path, name: str) -> PageShare:
    """The page share's note `name` in `folder`; ShardError when it is damaged or not of this version."""
    try:
        raw = read_inside(folder, folder / name, where="the page share's folder")
        table = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{folder}: no {name}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ShardError(f"{folder}: {name} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(table, dict) or table.get("format") != SIDECAR_FORMAT:
        raise ShardError(f"{folder}: {name} is not a page share's note")
    if table.get("version") != SIDECAR_VERSION or table.get("repodoc") != __version__:
        raise ShardError(f"{folder}: pages made by repodoc {table.get('repodoc')!r} (note version "
                         f"{table.get('version')!r}), this is {__version__}: every job must run the same version")
    share = _share_of(table)
    tree = tree_from_json(table.get("tree"))
    values = [table.get(k) for k in ("inputs", "out", "count", "digest")]
    if share is None or tree is None or name != sidecar_name(share) or not (
            isinstance(values[0], str) and isinstance(values[1], str) and type(values[2]) is int
            and isinstance(values[3], str)):
        raise ShardError(f"{folder}: {name} is damaged (fields of the wrong form)")
    return PageShare(folder, share, values[0], tree, values[1], values[2], values[3])


def _share_of(table: dict[str, Any]) -> tuple[int, int] | None:
    pages = table.get("pages")
    if isinstance(pages, list) and len(pages) == 2 and all(type(x) is int for x in pages) \
            and 1 <= pages[0] <= pages[1]:
        return pages[0], pages[1]
    return None


def check_shares(shares: list[PageShare], out: Path) -> None:
    """Every share of one split once, all of the same inputs, made for `out`; else ShardError."""
    first = shares[0]
    n = first.share[1]
    seen: dict[int, PageShare] = {}
    for s in shares:
        if s.share[1] != n:
            raise ShardError(f"{s.name}: one of {s.share[1]} page shares, but {first.name} is one of {n}")
        if s.share[0] in seen:
            raise ShardError(f"{seen[s.share[0]].folder} and {s.folder} are both pages {s.share[0]}/{n}")
        seen[s.share[0]] = s
        if why := first.tree.differs(s.tree):
            raise ShardError(f"{s.name}: made from another tree than {first.name}: {why}")
        if s.inputs != first.inputs:
            raise ShardError(f"{s.name}: made from other inputs than {first.name} (another commit, other "
                             "settings or flags, or other facts)")
        if s.out != str(out):
            raise ShardError(f"{s.name}: its pages were made for the output folder {s.out}, not {out}: merge "
                             "them there (their links and keys are relative to it)")
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing:
        raise ShardError(f"page share{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing")


class MergeStopped(ShardError):
    """A page found damaged while the shares were being merged (its size was right): the merged folder
    holds the pages written before it, and a manifest without the stamp of a complete tree."""


def share_manifest(s: PageShare) -> Manifest:
    """The page share's manifest and anchors (the copy beside its note), read and checked against its note."""
    held = Manifest(s.folder, manifest_copy_name(s.share))
    held.load()  # (a damaged one reads as empty: the count says so)
    if len(held.pages) != s.count or pages_digest(held.pages) != s.digest:
        raise ShardError(f"{s.name}: its manifest is not the one its run wrote ({len(held.pages)} pages, "
                         f"{s.count} written): damaged")
    return held


@dataclass(slots=True)
class Held:
    """A share's pages as its manifest records them (in order) and its anchors: read once, by `_checked`, and
    merged from there (each share's manifest was decoded twice: a serial part of the merge, bench/README.md)."""

    pages: list[tuple[str, Record]]
    anchors: dict[str, AnchorState]


def _checked(shares: list[PageShare]) -> tuple[set[str], list[Held]]:
    """The pages of all shares and each share's manifest, checked before anything is written, `THREADS` shares
    at a time (a page's check is a stat, the system's): each manifest as its note says, each page in one share
    only, on disk as a file of the size its manifest records (its bytes are checked as it is merged: each page
    is read once)."""
    owner: dict[str, int] = {}
    with ThreadPoolExecutor(max(1, min(THREADS, len(shares))), thread_name_prefix="repodoc-merge") as pool:
        held = list(pool.map(lambda i: _check_share(shares, i, owner), range(len(shares))))
    return set(owner), held


def _check_share(shares: list[PageShare], i: int, owner: dict[str, int]) -> Held:
    """Share `i`'s manifest, each of its pages stat'ed; `owner`: page -> the share it was found in first."""
    s = shares[i]
    manifest = share_manifest(s)
    pages = sorted(manifest.pages.items())
    folders = Folders(s.folder)
    folder: tuple[str, int] | None = None  # the folder of the page before, open
    try:
        for page, record in pages:
            if (other := owner.setdefault(page, i)) != i:  # (one step under the interpreter's lock)
                first, second = sorted((other, i))
                raise ShardError(f"{page} is in both {shares[first].name} and {shares[second].name}")
            parent, _, name = page.rpartition("/")
            try:
                if folder is None or folder[0] != parent:
                    folder = parent, folders.open(s.folder / parent if parent else s.folder)
                st = os.stat(name, dir_fd=folder[1], follow_symlinks=False)
            except OSError as exc:
                raise ShardError(f"{s.name}: {page}: cannot be read: {exc.strerror or exc}") from None
            if not stat.S_ISREG(st.st_mode) or st.st_size != record[1]:
                raise ShardError(f"{s.name}: {page}: not the page its run wrote (damaged)")
    finally:
        folders.close_all()
    return Held(pages, manifest.anchors)


def _page_bytes(s: PageShare, page: str, record: Record) -> bytes:
    """The page as its share wrote it; MergeStopped when its bytes are not those its manifest records."""
    try:
        data = read_inside(s.folder, s.folder / page, MAX_PAGE_BYTES, "the page share's folder")
    except OSError as exc:
        raise MergeStopped(f"{s.name}: {page}: cannot be read: {exc.strerror or exc}") from None
    if content_digest(data) != record[3]:
        raise MergeStopped(f"{s.name}: {page}: not the page its run wrote (damaged)")
    return data


def _merge_all(writer: Writer, shares: list[PageShare], held: list[Held],
               summary: MergeSummary) -> dict[str, AnchorState]:
    """Every share's pages into the writer's folder, `THREADS` shares at a time (a page's work is mostly
    the system's: links, reads, digests, made folders, which run beside each other); the shares' anchors.
    A share found damaged stops the others (MergeStopped, the first share's in order): the pages merged
    until then are in the writer's manifest."""
    lock, stop = threading.Lock(), threading.Event()
    with ThreadPoolExecutor(max(1, min(THREADS, len(shares))), thread_name_prefix="repodoc-merge") as pool:
        futures = [pool.submit(_merge_share, writer, s, h, lock, stop) for s, h in zip(shares, held, strict=True)]
        try:
            wait(futures)
        except BaseException:  # interrupted: the threads stop at their next page
            stop.set()
            raise
    anchors: dict[str, AnchorState] = {}
    for future in futures:  # in the shares' order, as one share at a time would count them
        part, its = future.result()  # MergeStopped: the first damaged share's
        summary.written.extend(part.written)
        summary.unchanged += part.unchanged
        summary.conflicts.extend(part.conflicts)
        summary.errors.extend(part.errors)
        anchors.update(its)
    return anchors


def _merge_share(writer: Writer, s: PageShare, held: Held, lock: threading.Lock,
                 stop: threading.Event) -> tuple[MergeSummary, dict[str, AnchorState]]:
    """The pages of share `s` (`held`: its manifest, let go as it is merged) into the writer's folder: linked
    where they can be (`_linked`), else written (one thread at a time uses the writer); what was done and the
    share's anchors."""
    part = MergeSummary("")
    pages, held.pages = held.pages, []
    if stop.is_set():  # another share was found damaged before this one started
        return part, {}
    source, target = Folders(s.folder), Folders(writer.out)  # this thread's
    linking = True  # until the file systems say no
    folders: tuple[str, int, int] | None = None  # the folder of the pages before: (name, share's, merged)
    try:
        for index, (page, record) in enumerate(pages):
            if stop.is_set():
                break
            parent, _, name = page.rpartition("/")
            result = None
            if linking and (folders is None or folders[0] != parent):
                folders = _both(source, target, parent)
                if folders is not None:  # (else each page goes through the writer, which notes it itself)
                    with lock:  # the writer's journal, a folder's pages at once: a merge killed leaves them known
                        writer.state.note_many((p, r[3]) for p, r in _folder_run(pages, index, parent))
            if linking and folders is not None:
                result = _linked(writer, folders[1:], name, page, record, s)
                linking = result is not _NO_LINKS
            if result is None or result is _NO_LINKS:
                with lock:
                    result = writer.write(page, _page_bytes(s, page, record).decode("utf-8"), record[0])
            _count(part, result)
    except BaseException:
        stop.set()
        raise
    finally:
        source.close_all()
        target.close_all()
    return part, held.anchors


def _folder_run(pages: list[tuple[str, Record]], start: int, parent: str) -> Iterator[tuple[str, Record]]:
    """The pages of `pages` from `start` on that are in the folder `parent` (in order: one after another)."""
    for page, record in itertools.islice(pages, start, None):
        if page.rpartition("/")[0] != parent:
            return
        yield page, record


def _both(source: Folders, target: Folders, parent: str) -> tuple[str, int, int] | None:
    """`parent` (a folder of pages, "" the top) open in the share and in the merged folder (made there if
    absent); None when either cannot be (a link or a file in the way: the writer's rules decide). Pages
    are merged in order, a folder's one after another: its two descriptors serve them all."""
    try:
        return (parent, source.open(source.out / parent if parent else source.out),
                target.open(target.out / parent if parent else target.out, create=True))
    except OSError:
        return None


# Why a share's page cannot be linked into the merged folder, whichever page it is: another file system
# (EXDEV), one without hard links (EPERM, EOPNOTSUPP), a file with as many links as it can have (EMLINK).
_NOT_LINKABLE = frozenset({errno.EXDEV, errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK})
_NO_LINKS = WriteResult("", Outcome.ERROR, "no links between these folders")


def _linked(writer: Writer, fds: tuple[int, int], name: str, page: str, record: Record,
            s: PageShare) -> WriteResult | None:
    """Share `s`'s page `page` (`name` in the folders open as `fds`: the share's, the merged one's) linked
    into the merged folder: a second name of the same file, not written again; its bytes read once, in their
    place, and checked against the digest `record` holds (MergeStopped, the link undone, when they differ).
    Only where no file is in its place (the link is refused then: the writer's rules decide, a person's
    edited page is a conflict, never lost), and only a regular file of this user and of the mode the writer
    gives a page. None when it is not linked (the writer writes it), `_NO_LINKS` when no page can be."""
    from_fd, to_fd = fds
    if record[1] > MAX_PAGE_BYTES:  # never read: refused as it is read for the writer
        return None
    try:  # (in the writer's journal already: `_merge_share`)
        os.link(name, name, src_dir_fd=from_fd, dst_dir_fd=to_fd, follow_symlinks=False)
    except OSError as exc:  # EEXIST: a file in its place
        return _NO_LINKS if exc.errno in _NOT_LINKABLE else None
    try:
        st, data = placed(name, to_fd, record[1])
    except OSError:  # a link to elsewhere was linked (ELOOP), or it is gone
        st, data = None, b""
    same = st is not None and stat.S_ISREG(st.st_mode) and content_digest(data) == record[3]
    if same and st is not None and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == PAGE_MODE:
        writer.manifest[page] = (record[0], st.st_size, st.st_mtime_ns, record[3])
        return WriteResult(page, Outcome.WRITTEN)
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=to_fd)
    if st is not None and stat.S_ISREG(st.st_mode) and not same:
        raise MergeStopped(f"{s.name}: {page}: not the page its run wrote (damaged)")
    return None  # not a page file of this user and mode: the writer writes it


def placed(name: str, folder: int, size: int) -> tuple[os.stat_result, bytes]:
    """The status and bytes (at most `size` + 1) of the file `name` in the folder open as `folder`, no
    link followed, never blocking."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder)
    try:
        st = os.fstat(fd)
        return st, os.read(fd, size + 1) if stat.S_ISREG(st.st_mode) else b""
    finally:
        os.close(fd)


def merge(folders: Sequence[Path], out: Path) -> MergeSummary:
    """Join the page shares in `folders` into `out` (see the module's doc), `THREADS` shares at a time."""
    out = out.resolve()
    if any(f.resolve() == out for f in folders):
        raise ShardError(f"{out}: the merged tree's folder cannot be one of the page shares")
    shares = [read_share(f) for f in folders]
    check_shares(shares, out)
    pages, held = _checked(shares)  # before anything is written
    summary = MergeSummary(str(out), shares=len(shares), pages=len(pages))
    writer = Writer(out)
    with writer.hold():
        fresh = not writer.manifest and _empty(out)  # no page of the folder can be stale: none is walked for
        try:
            anchors = _merge_all(writer, shares, held, summary)
        except MergeStopped:
            writer.inputs = ""
            writer.save_manifest()  # the pages written so far, not vouched for as a tree
            raise
        writer.anchors.clear()
        writer.anchors.update({page: state for page, state in anchors.items() if page in writer.manifest})
        if not fresh:
            removed, conflicts = writer.remove_stale(pages)
            summary.removed.extend(removed)
            summary.conflicts.extend(conflicts)
        writer.inputs = shares[0].inputs if not (summary.conflicts or summary.errors) else ""
        if not writer.save_manifest():
            raise OutputError(f"{out / MANIFEST}: cannot write the merged manifest")
    if any((s.folder / NOJEKYLL).is_file() for s in shares):  # the `site` setting's file, in each share
        (out / NOJEKYLL).touch()
    return summary


def _empty(out: Path) -> bool:
    """True when the folder `out` holds nothing but a manifest and the journal (a merge job's new folder, its
    manifest of no page): walking it for stale pages once merged (a stat per page) would find none."""
    with os.scandir(out) as entries:
        return all(entry.name in _OWN for entry in entries)


_OWN = frozenset({JOURNAL, MANIFEST})


def _count(summary: MergeSummary, result: WriteResult) -> None:
    if result.outcome is Outcome.WRITTEN:
        summary.written.append(result.page)
    elif result.outcome is Outcome.UNCHANGED:
        summary.unchanged += 1
    elif result.outcome is Outcome.ERROR:
        summary.errors.append(result)
    else:
        summary.conflicts.append(result)
