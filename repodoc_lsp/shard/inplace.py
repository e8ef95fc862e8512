"""`repodoc merge --in-place --out DIR`: every page job's artifact downloaded into DIR itself (a CI's
`merge-multiple`), the pages already where the merged tree has them: nothing is linked or copied, the shares'
manifests are joined into DIR's once every page is verified.

The same proof as a merge of separate folders: every share of one split once (its note, by its name), all of
the same inputs and tree, made for DIR; each share's manifest the one its run wrote (the copy beside its note);
each page in one share only, a regular file whose bytes have the digest its share's manifest records; and no
other file of DIR named as a page is (one left there from an earlier tree: a tree is never vouched for with a
page no manifest knows; files of other names are a person's, left alone as `generate` leaves them). Any of
these wrong is a ShardError naming the share or the file, before anything is written: DIR keeps the manifest
the download left (a share's, which vouches for no tree). Once verified, DIR's manifest is the merged one and
the notes and copies are deleted: the tree one `repodoc generate` writes, byte for byte.

Each page is read once, two shares at a time (threads: its reads and digest are the system's and zlib's)."""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repodoc_lsp.output.folders import Folders
from repodoc_lsp.output.manifest import MANIFEST, Manifest, Record, content_digest, is_page_name
from repodoc_lsp.output.writer import OutputError, Writer
from repodoc_lsp.render.anchors import AnchorState
from repodoc_lsp.shard.facts_file import ShardError
from repodoc_lsp.shard.merge import (
    MAX_PAGE_BYTES,
    THREADS,
    MergeSummary,
    PageShare,
    check_shares,
    notes_in,
    placed,
    read_note,
    share_manifest,
)
from repodoc_lsp.shard.pages import manifest_copy_name, sidecar_name

# Strangers named in the refusal (the first of them in path order).
_NAMED = 3


def merge_in_place(out: Path) -> MergeSummary:
    """Join the page shares downloaded into `out` (see the module's doc); ShardError naming what is wrong."""
    out = out.resolve()
    shares = [read_note(out, name) for name in notes_in(out)]
    check_shares(shares, out)
    writer = Writer(out, read_manifest=False)
    with writer.hold(read=False):  # (the manifest the download left, one share's, is not read: replaced below)
        held = [share_manifest(s) for s in shares]
        owner: dict[str, int] = {}
        for i, manifest in enumerate(held):
            for page in manifest.pages:
                if (other := owner.setdefault(page, i)) != i:
                    raise ShardError(f"{page} is in both {shares[other].name} and {shares[i].name}")
        _no_strangers(out, owner)
        del owner
        records = _verified(shares, held)
        writer.state.pages = records
        writer.anchors.clear()
        for manifest in held:
            writer.anchors.update(_anchored(manifest.anchors, records))
        writer.inputs = shares[0].inputs
        if not writer.save_manifest():
            raise OutputError(f"{out / MANIFEST}: cannot write the merged manifest")
        for s in shares:
            for name in (manifest_copy_name(s.share), sidecar_name(s.share)):  # (killed here: the tree is whole)
                try:
                    os.unlink(out / name)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise OutputError(f"{out / name}: cannot be deleted: {exc.strerror or exc}") from None
    return MergeSummary(str(out), shares=len(shares), pages=len(records), in_place=True)


def _anchored(anchors: dict[str, AnchorState], records: dict[str, Record]) -> dict[str, AnchorState]:
    return {page: state for page, state in anchors.items() if page in records}


def _no_strangers(out: Path, owner: dict[str, int]) -> None:
    """ShardError when `out` holds a file named as repodoc names a page (`is_page_name`) that is no share's
    (`owner`): the merged tree would hold a page no manifest knows (one of an earlier tree). Files of other
    names are a person's (or the shares' notes), left as they are, as `generate` leaves them."""
    strangers: list[str] = []
    for folder, _dirs, files in os.walk(out):
        rel = os.path.relpath(folder, out)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in files:
            if prefix + name not in owner and is_page_name(prefix + name):
                strangers.append(prefix + name)
    if strangers:
        named = ", ".join(sorted(strangers)[:_NAMED]) + (", ..." if len(strangers) > _NAMED else "")
        raise ShardError(f"{out}: {len(strangers)} page{'s' if len(strangers) > 1 else ''} of no page share's "
                         f"manifest ({named}): merge in place into a folder holding no pages but the page jobs'")


def _verified(shares: list[PageShare], held: list[Manifest]) -> dict[str, Record]:
    """Every share's pages (`held`: its manifest's, let go once verified), each read where it is and its digest
    checked against its share's manifest, `THREADS` shares at a time; the merged manifest's records (their size
    and time as found). ShardError at the first page that is not as its share's manifest records (the other
    threads stop)."""
    stop = threading.Event()

    def one(i: int) -> dict[str, Record]:
        try:
            found = _share_verified(shares[i], held[i].pages, stop)
        except BaseException:
            stop.set()
            raise
        held[i].pages = {}
        return found
    records: dict[str, Record] = {}
    with ThreadPoolExecutor(max(1, min(THREADS, len(shares))), thread_name_prefix="repodoc-merge") as pool:
        for found in pool.map(one, range(len(shares))):  # (the first share's error in order)
            records.update(found)
    return records


def _share_verified(s: PageShare, pages: dict[str, Record], stop: threading.Event) -> dict[str, Record]:
    """Share `s`'s pages (`pages`: its manifest's), read in place in path order (a folder open once for its pages)."""
    folders = Folders(s.folder)
    found: dict[str, Record] = {}
    folder: tuple[str, int] | None = None
    try:
        for page in sorted(pages):
            if stop.is_set():
                break
            record = pages[page]
            parent, _, name = page.rpartition("/")
            try:
                if folder is None or folder[0] != parent:
                    folder = parent, folders.open(s.folder / parent if parent else s.folder)
                st, data = placed(name, folder[1], record[1]) if record[1] <= MAX_PAGE_BYTES else (None, b"")
            except OSError as exc:
                raise ShardError(f"{s.name}: {page}: cannot be read: {exc.strerror or exc} (was every page job's "
                                 "artifact downloaded?)") from None
            if st is None or not stat.S_ISREG(st.st_mode) or st.st_size != record[1] \
                    or content_digest(data) != record[3]:
                raise ShardError(f"{s.name}: {page}: not the page its run wrote (damaged)")
            found[page] = (record[0], st.st_size, st.st_mtime_ns, record[3])
    finally:
        folders.close_all()
    return found
