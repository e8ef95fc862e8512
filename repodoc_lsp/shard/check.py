"""`repodoc generate --facts FILE... --check` of a tree that is up to date, from each file's digest alone:
the tree's inputs stamp (every file's digest, the folders, the settings) made from the facts files' records and
the checkout, compared with the one its manifest records. No file's facts, imports or sketch decoded.

Its per-file work (each facts file's index read, each of its files read and digested on disk) is done per
facts file, on worker processes when there are several facts files and files enough: the records of one facts
file and its sources are independent of every other's. The parent meanwhile reads the tree's manifest and stats
its pages. A check of 1,000,000 files did this work on one core (bench/README.md, issue 40).

Every job given facts files first opens them together here (`open_shards`): this version, this tree, every
share of one split once."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repodoc_lsp import __version__
from repodoc_lsp.output.writer import Writer
from repodoc_lsp.pipeline.keys import inputs_stamp
from repodoc_lsp.pipeline.pool import run_chunks
from repodoc_lsp.pipeline.runtime import default_jobs
from repodoc_lsp.pipeline.write import Summary
from repodoc_lsp.shard.facts_file import FactsReader, ShardError, Tree, analysis_version, sketch_stamp, tree_of
from repodoc_lsp.shard.split import file_share
from repodoc_lsp.store.cache import digest
from repodoc_lsp.store.discover import Skipped, discover
from repodoc_lsp.store.regular import read_regular
from repodoc_lsp.store.workspace import Workspace

PARALLEL_FILES = 2048  # fewer input files than this are checked in this process (workers take ~0.3 s to start)

# What a facts file says of its files, each found as analysed on disk: (name of the facts file, its share (K, N),
# each file's path, digest and skip reason, all joined by NULs); None when a file is not on disk as it was analysed
# (or unreadable). One string: a list of a tuple per file, held by a worker until it was sent, was most of its
# memory (the parse's short-lived objects between them: about 4 KB a file of its share, bench/README.md).
Found = tuple[str, tuple[int, int], str] | None


def up_to_date(ws: Workspace, paths: Sequence[str], jobs: int | None = None) -> Summary | None:
    """A check from the facts files `paths` of a tree that is the complete tree of these inputs (its manifest's
    inputs stamp), from each file's digest alone. None when it is not, or a file changed since its analysis
    (the check then reads what it needs to say which pages are stale); ShardError when the facts files are not
    the whole of one split of this tree (naming the file)."""
    with ThreadPoolExecutor(1, thread_name_prefix="repodoc-check") as pool:
        held = pool.submit(_intact, ws.out)  # the manifest read and its pages stat'ed meanwhile
        found = discover(ws.root, ws.settings)
        for reader in open_shards(paths, tree_of(ws.root, found.files)):  # headers: version, tree, each share once
            reader.close()
        inputs, known = set(found.files), frozenset(found.files)
        names: dict[int, str] = {}
        digests: dict[str, str] = {}
        skipped = list(found.skipped)
        for result in _each_facts_file(ws, paths, len(found.files), jobs):
            if result is None:
                return None
            name, (k, n), joined = result
            names[k] = name
            fields = joined.split("\0") if joined else []
            for i in range(0, len(fields), 3):
                rel, key, why = fields[i : i + 3]
                if rel not in inputs:
                    raise ShardError(f"{name}: " + (f"damaged facts file: {rel!r} is in it twice" if rel in known
                                                    else f"holds {rel!r}, which is not an input of its share"))
                inputs.discard(rel)
                if why:
                    skipped.append(Skipped(rel, why))
                else:
                    digests[rel] = key
        if inputs:  # an input its share's facts file does not hold
            rel = min(inputs)
            raise ShardError(f"{names[file_share(rel, n)]}: does not hold {rel!r}, an input of its share")
        writer = held.result()  # (inputs, pages)
    ws.digests, ws.folders = digests, set(found.folders)  # what the stamp is made of
    if writer is None or writer[0] != inputs_stamp(ws):
        return None
    return Summary(root=str(ws.root), out=str(ws.out), files=len(digests), unchanged=writer[1],
                   skipped=sorted(skipped, key=lambda s: s.path))


def _intact(out: Path) -> tuple[str, int] | None:
    """The inputs stamp and the number of pages of the output folder's manifest, when it vouches for a complete
    tree whose every page is as written (the manifest itself let go: it was the most the check held)."""
    writer = Writer(out, check=True)
    return (writer.inputs, len(writer.manifest)) if writer.inputs and writer.intact() else None


def _each_facts_file(ws: Workspace, paths: Sequence[str], files: int, jobs: int | None) -> Iterator[Found]:
    """`_found` of each facts file of `paths`: on worker processes when there are several and files enough."""
    root = str(ws.root)
    workers = min(default_jobs(ws.settings, jobs), len(paths))
    if workers < 2 or files < PARALLEL_FILES:
        yield from (_found(root, path) for path in paths)
        return
    yield from run_chunks(functools.partial(_found, root), list(paths), workers=workers,
                          context=ws.runtime.context(), initializer=ws.runtime.worker_setup(), what="check")


def _found(root: str, path: str) -> Found:
    """The records of the facts file `path` as its index says (its header checked by the parent), each file's
    digest and skip reason, when every one of its files is on disk as it was analysed; None at the first that is not. A
    ShardError (naming the file) when it is damaged or holds a file of another share (twice: the parent says)."""
    reader = FactsReader(Path(path))
    try:
        k, n = reader.header.shard
        joined = io.StringIO()
        for i, record in enumerate(reader.indexed(_none)):  # the index alone: no block is read
            if file_share(record.path, n) != k:
                raise ShardError(f"{reader.name}: holds {record.path!r}, which is not an input of its share")
            if "\0" in record.path or "\0" in record.skipped:  # (no path has one: the parent splits at them)
                raise reader.damaged(f"{record.path!r}: a NUL in its record")
            if not (record.digest and _on_disk(root, record.path) == record.digest):
                return None  # changed since it was analysed, or unreadable
            joined.write(f"{chr(0) if i else ''}{record.path}\0{record.digest}\0{record.skipped}")
        return reader.name, (k, n), joined.getvalue()
    finally:
        reader.close()


def _none(_rel: str) -> bool:
    """No file's block is wanted: a check reads the facts files' indexes (each block is checked by the page job
    of its files' folders, the index against every block by the analysis that wrote it)."""
    return False


def _on_disk(root: str, rel: str, read: Callable[[str], bytes] = read_regular) -> str:
    """The digest of `rel`'s content on disk, "" when it cannot be read."""
    try:
        return digest(read(f"{root}/{rel}"), rel)
    except OSError:
        return ""


def open_shards(paths: Sequence[str], tree: Tree) -> list[FactsReader]:
    """The facts files `paths`, opened and checked together: this version, this tree, every share of
    one split once. Sorted by share."""
    readers: list[FactsReader] = []
    try:
        for path in paths:
            readers.append(FactsReader(Path(path)))
        _check_shards(readers, tree)
    except BaseException:
        for reader in readers:
            reader.close()
        raise
    return sorted(readers, key=lambda r: r.header.shard)


def _check_shards(readers: list[FactsReader], tree: Tree) -> None:
    by_share: dict[int, FactsReader] = {}
    n = readers[0].header.shard[1]
    for reader in readers:
        header = reader.header
        if header.repodoc != __version__:
            raise ShardError(f"{reader.name}: made by repodoc {header.repodoc}, this is {__version__}: "
                             "every job must run the same version")
        if header.analysis != analysis_version():
            raise ShardError(f"{reader.name}: made with analysis {header.analysis}, this run's is "
                             f"{analysis_version()} (another version, or another blank-macros setting)")
        if header.sketches != sketch_stamp():
            raise ShardError(f"{reader.name}: its graph sketches were made by another renderer ({header.sketches}, "
                             f"this one is {sketch_stamp()}): every job must run the same repodoc")
        if why := tree.differs(header.tree):
            raise ShardError(f"{reader.name}: made from another tree: {why}")
        k, its_n = header.shard
        if its_n != n:
            raise ShardError(f"{reader.name}: one of {its_n} shards, but {readers[0].name} is one of {n}")
        if k in by_share:
            raise ShardError(f"{by_share[k].name} and {reader.path} are both shard {k}/{n}")
        by_share[k] = reader
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in by_share]
    if missing:
        raise ShardError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: give the facts "
                         f"file of every `repodoc analyze --shard K/{n}`")
