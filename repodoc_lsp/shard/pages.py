"""`repodoc generate [ROOT] --facts FILE... [--pages K/N]`: the workspace taken from the facts files of
every analysis share (a file is parsed again only when its content on disk is not the one analysed),
then the whole tree's pages, or with `--pages K/N` those of share K of N (whole folders, `split.py`),
written with a note (`sidecar_name`) and a copy of its manifest that `repodoc merge` reads."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from repodoc_lsp import __version__
from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.views import LaterSketch, Sketch
from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.output.writer import OutputError, Writer
from repodoc_lsp.pipeline.generate import Job, run
from repodoc_lsp.pipeline.keys import inputs_stamp
from repodoc_lsp.pipeline.write import Summary
from repodoc_lsp.render.own_pages import has_pages
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.shard.answering import answered
from repodoc_lsp.shard.answers import inputs_digest, read_answers
from repodoc_lsp.shard.check import open_shards, up_to_date
from repodoc_lsp.shard.facts_file import (
    FactsReader,
    Record,
    ShardError,
    Share,
    Tree,
    tree_of,
)
from repodoc_lsp.shard.links import Records, has_links
from repodoc_lsp.shard.links import read_records as read_link_records
from repodoc_lsp.shard.share_facts import FactsSource, ShareFacts
from repodoc_lsp.shard.split import file_share, folder_shares, folder_weights
from repodoc_lsp.store.cache import digest
from repodoc_lsp.store.discover import Discovery, discover
from repodoc_lsp.store.facts import analyse_bytes, interned_imports
from repodoc_lsp.store.regular import read_regular
from repodoc_lsp.store.workspace import CancelToken, ProgressFn, Workspace, WorkspaceState

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph

# In a page share's output folder: what `repodoc merge` needs to know of it (examples/README.md), named by the
# share, and a copy of the share's manifest beside it: the page jobs' artifacts can be downloaded into one folder
# (`merge --in-place`), where their manifests have one name. Version 1 was `.repodoc-pages.json` (OLD_SIDECAR).
SIDECAR_FORMAT = "repodoc-pages"
SIDECAR_VERSION = 2
OLD_SIDECAR = ".repodoc-pages.json"
SIDECAR_PREFIX = ".repodoc-pages-"
OnDisk = Callable[[Discovery], Callable[[str], bool]]  # given the discovery: the files a job reads on disk


def sidecar_name(share: Share) -> str:
    """The name of page share `share`'s note (`.repodoc-pages-K-of-N.json`)."""
    return f"{SIDECAR_PREFIX}{share[0]}-of-{share[1]}.json"


def manifest_copy_name(share: Share) -> str:
    """The name of the copy of page share `share`'s manifest written beside its note."""
    return f"{SIDECAR_PREFIX}{share[0]}-of-{share[1]}.manifest.json.gz"


def generate_sharded(ws: Workspace, *, facts: Sequence[str] = (), share: Share | None = None, check: bool = False,
                     force: bool = False, jobs: int | None = None, progress: ProgressFn | None = None,
                     cancel: CancelToken | None = None, answers: Path | None = None,
                     renderer: Renderer | None = None) -> Summary:
    """`generate` with the workspace taken from `facts` files (else scanned), writing share `share` of
    the pages (else all); `answers`: the graph job's output folder, whose answers of `share` stand for the
    symbol graph (none built here); `renderer`: the person's templates compiled already; ShardError when
    the facts files are not the whole of this tree's analysis, or the answers not of these facts files."""
    if share is not None and not check:
        for name in (sidecar_name(share), manifest_copy_name(share), OLD_SIDECAR):
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):  # (not a folder: the writer says so)
                (ws.out / name).unlink()  # written again only by a complete run
    if facts and check and (done := up_to_date(ws, facts, jobs)) is not None:
        return done
    if facts:
        take_facts(ws, facts, progress=progress, share=share, check=check, answers=answers)
    elif not ws.scan(jobs=jobs, progress=progress, cancel=cancel):
        return Summary(root=str(ws.root), out=str(ws.out), cancelled=True)
    renderer = renderer or Renderer(ws.settings.templates or None, lazy=not ws.settings.templates)
    summary = run(ws, Job(check=check, force=force, jobs=jobs, share=share), renderer, progress=progress,
                  cancel=cancel)
    summary.files, summary.analysed, summary.cached = len(ws.facts), ws.analysed, ws.cached
    summary.skipped = ws.skipped
    complete = not (summary.cancelled or summary.errors or summary.conflicts or summary.stale)
    if share is not None and not check and complete:
        inputs = sorted({*ws.digests, *ws.read_skipped})  # the inputs discovery found
        write_sidecar(ws.out, share, inputs_stamp(ws), tree_of(ws.root, inputs))
    return summary


def read_records(readers: list[FactsReader], files: Sequence[str], source: FactsSource,
                 wanted: Callable[[str], bool] = lambda _rel: True, *, light: bool = False,
                 with_sketch: bool = True, light_others: bool = False, indexed: bool = False) -> dict[str, Record]:
    """rel -> its record, from the shards (`open_shards`) of the inputs `files`: each shard holds
    exactly the inputs of its share, each once (else ShardError naming it). The facts of the files
    `wanted` are read; the others' are left in their facts files, where `source` finds them again.
    `indexed`: the others' records read from each facts file's index (`FactsReader.indexed`), no other block
    read (every line of every facts file was two thirds of a page job's reading for the tree's files, and a
    link job's largest work per file of the tree but linking, bench/README.md, issue 40): a block is read
    when its file's facts, view or imports are needed, and its damage found there or by its folder's page job."""
    n = readers[0].header.shard[1]
    share = {rel: file_share(rel, n) for rel in files}
    records: dict[str, Record] = {}
    for index, reader in enumerate(readers):
        k = reader.header.shard[0]
        found = reader.indexed(wanted, with_sketch=with_sketch) if indexed else \
            reader.records(wanted, light=light, with_sketch=with_sketch, light_others=light_others)
        for record in found:
            if share.get(record.path) != k:
                raise ShardError(f"{reader.name}: holds {record.path!r}, which is not an input of its share")
            if record.path in records:
                raise reader.damaged(f"{record.path!r} is in it twice")
            records[record.path] = record
            if record.at >= 0:
                source.note(index, record)
        expected = sum(1 for s in share.values() if s == k)
        if reader.header.files != expected:
            raise ShardError(f"{reader.name}: holds {reader.header.files} files, its share has {expected}")
    return records


def _own(found: Discovery, share: Share | None, check: bool) -> frozenset[str] | None:
    """The files whose facts a run reads with the facts files: every file's for the whole tree (None), a
    page share's own folders' files (`split.py`), none for a check (read when the tree is not up to date)
    nor for the graph job (`check` too: it builds the graph from the sketches)."""
    if check:
        return frozenset()
    if share is None:
        return None
    shares = folder_shares(folder_weights(found.files, found.folders), share[1])
    return frozenset(rel for rel in found.files if shares.get(folder_of(rel), 1) == share[0])


def take_facts(ws: Workspace, paths: Sequence[str], progress: ProgressFn | None = None, *,
               share: Share | None = None, check: bool = False, answers: Path | None = None,
               none_held: bool = False, later: bool = False,
               on_disk: OnDisk | None = None) -> dict[str, tuple[str, Sketch | LaterSketch | None]]:
    """`ws` made of the facts in the facts files `paths` (the whole of one split of this tree), as a scan would
    make it; a file whose content on disk is not the one analysed is analysed again (`_taken`). The facts of the
    files outside `share`'s folders (all of them for a `check`, or `none_held`: the graph job's; their relations
    are then the files' module names alone, `_names_only`) stay in the facts files (`ShareFacts`): the graph is
    built from the files' sketches, or `answers` (the graph job's output folder) stands for the answers of
    `share` (no sketch decoded), or, when
    the folder holds the link jobs' records for `share` (`links.py`), the answers are made here from them and
    the views of the files (then dropped: the share's pages read the answers alone); `later`:
    each sketch decoded when its view is made (a `LaterSketch`, its block read again); `on_disk`: given the
    discovery, which files' content on disk is read and compared (the others' from their facts files: a link
    job's). Returns the sketches."""
    found = discover(ws.root, ws.settings)
    own, read_on_disk = _own(found, share, check or none_held), on_disk(found) if on_disk is not None else None
    tree = tree_of(ws.root, found.files)
    linked = answers is not None and share is not None and has_links(answers, share)  # answered here
    later = later or linked
    readers = open_shards(paths, tree)
    source = FactsSource(readers)
    store = ShareFacts(ws.root, source, None if check else own)  # a check that renders loads every file's
    try:  # a link job (and a page share's answer job) reads the index alone (`read_records`' `indexed`)
        records = read_records(readers, found.files, source, lambda rel: own is None or rel in own,
                               light=none_held and later, with_sketch=answers is None and not later,
                               light_others=linked, indexed=linked or (none_held and later))
    finally:
        for reader in readers:
            reader.close()
    digests: dict[str, str] = {}
    sizes: dict[str, int] = {}
    skipped: dict[str, str] = {}
    sketched: dict[str, tuple[str, Sketch | LaterSketch | None]] = {}
    paged: set[str] = set()
    others: dict[str, tuple[Import, ...]] = {}  # a page share's: the imports of the files not its own
    rendered = share is not None and not (check or none_held)
    analysed = 0
    for i, rel in enumerate(found.files, 1):
        record = _taken(ws.root, records.pop(rel), own if rendered else None, read_on_disk)
        if not record.analysed:
            skipped[rel] = record.skipped
            continue
        if record.facts is None:  # left in its facts file
            store.add_cached(rel, rel, () if rendered else record.imports)
            if rendered:
                others[rel] = record.imports
        else:
            store[rel] = record.facts
        if record.at == _ANALYSED:  # its graph view made from its facts
            analysed += 1
        elif later:  # (a file whose facts are held here: its view made from them)
            if record.facts is None:
                sketched[rel] = (record.digest, _later(source, rel) if record.sketched else None)
        elif answers is None:
            sketched[rel] = (record.digest, record.sketch and replace(record.sketch,
                                                                      imports=interned_imports(record.imports)))
        digests[rel], sizes[rel] = record.digest, record.size
        if record.pages:
            paged.add(rel)
        if progress and (i % 256 == 0 or i == len(found.files)):
            progress("analyse", i, len(found.files), os.path.dirname(rel))
    store.paged = frozenset(paged)
    graph = None
    state = WorkspaceState(digests, sizes, set(found.folders), found.skipped, skipped)
    relations = _names_only(digests) if none_held else _share_relations(store.imports(), others) \
        if rendered and not linked else None
    if linked and answers is not None and share is not None:
        run = tree_of(ws.root, sorted({*digests, *skipped})), inputs_digest(digests)  # `run_of(ws)`, restored
        got = read_link_records([answers], share, *run)  # (others' imports: not read, `light_others`)
        ws.restore(state, store=store, relations=_linked_relations(store.imports(), others.keys(), got))
        graph = cast("Graph", answered(ws, sketched, share, [answers], got))
        sketched = {}
        ws.restore(state, store=store, relations=ws.relations, graph=graph)
    elif answers is not None and share is not None and own is not None:
        graph = cast("Graph", read_answers(answers, share, tree, inputs_digest(digests), own & digests.keys()))
    if not linked:
        ws.restore(state, sketches=sketched, store=store, graph=graph, relations=relations)
    ws.analysed, ws.cached = analysed, len(digests) - analysed
    return sketched


def _taken(root: Path, record: Record, own: frozenset[str] | None, on_disk: Callable[[str], bool] | None) -> Record:
    """`record` as a job takes it: a page share (its `own` files given) reads its own files on disk and refuses
    one that changed (`_own_on_disk`), and takes the others as analysed; any other job reads on disk the files
    `on_disk` says (every file by default: a link job's own share) and analyses again one that changed."""
    if own is not None:
        return _own_on_disk(root, record) if record.path in own else record
    return _as_on_disk(root, record) if on_disk is None or on_disk(record.path) else record


def _later(source: FactsSource, rel: str) -> LaterSketch:
    """`rel`'s sketch with its imports, read from its facts file when its view is made."""
    return LaterSketch(lambda: source.sketch(rel))


def _names_only(files: Iterable[str]) -> Relations:
    """The relations of `files` from their names alone (which module each is: what the graph's views and
    resolution read), no file's imports: a graph or link job renders no page, and every file's imports held
    were a third of what it held per file of the tree (bench/README.md, issue 40)."""
    return Relations({rel: () for rel in files})


def _share_relations(imports: Mapping[str, tuple[Import, ...]], others: Mapping[str, tuple[Import, ...]]) -> Relations:
    """A page share's relations: those of the files of `imports` (its own: their pages list what they import)
    as `Relations` makes them, the files of `others` only as importers (`imported_by`: a page lists its file's
    importers and tests, a folder's index and llms.txt rank the most imported). Every file's imports and import
    tables held were the most a page job held per file of the tree (bench/README.md, issue 40)."""
    relations = Relations({**imports, **dict.fromkeys(others, ())})
    for rel, found in others.items():
        for imp in found:
            for target, _name in relations.resolve(rel, imp):
                if target != rel:
                    relations.imported_by[target].add(rel)
    return relations


def _linked_relations(imports: Mapping[str, tuple[Import, ...]], others: Collection[str], got: Records) -> Relations:
    """A page share's relations made with the link jobs' records (`links.py`): those of its own files (those
    of `imports` but `others`) as `Relations` makes them, who imports them from the records, and for the files
    of `others`, how many files import each: no other file's imports decoded (they were the largest per-file
    time of a page job, bench/README.md, issue 40)."""
    own = imports.keys() - others
    relations = _CountedRelations({**imports, **dict.fromkeys(others, ())}, own, got.counts)
    for target, importers in got.importers.items():
        if target not in own:
            raise ShardError(f"damaged link records: {target!r} is not a file of this page share")
        relations.imported_by[target] |= importers
    return relations


class _CountedRelations(Relations):
    """Relations whose files not `own` are known by how many files import them (`counts`), not by whom."""

    def __init__(self, imports: Mapping[str, tuple[Import, ...]], own: Iterable[str], counts: Mapping[str, int]):
        super().__init__(imports)
        self._own, self._counts = frozenset(own), counts

    def importer_count(self, rel: str) -> int:
        return super().importer_count(rel) if rel in self._own else self._counts.get(rel, 0)

    def importers(self, rel: str) -> list[str]:
        if rel not in self._own and self._counts.get(rel):  # never a partial list
            raise ShardError(f"{rel}: its importers are not known to this page share")
        return super().importers(rel)


_ANALYSED = -2  # a record's `at` when its file was analysed here (changed since its facts file was made)


def _as_on_disk(root: Path, record: Record, analyse: bool = True) -> Record:
    """`record` of a file whose content on disk is the one analysed; else the file read and analysed
    here (its `at`: `_ANALYSED`; `analyse` False: not analysed), or why it cannot be (unreadable)."""
    try:
        data = read_regular(root / record.path)
    except OSError as exc:
        return Record(record.path, skipped=f"unreadable: {exc.strerror or exc}")
    key = digest(data, record.path)
    if key == record.digest:
        return record
    if not analyse:
        return Record(record.path, key, len(data))
    made = analyse_bytes(record.path, data)  # changed since it was analysed (or unreadable then)
    if made.facts is None:
        return Record(record.path, key, len(data), None, made.skip_reason)
    return Record(record.path, key, len(data), made.facts, pages=has_pages(made.facts), at=_ANALYSED)


def _own_on_disk(root: Path, record: Record) -> Record:
    """`record` of a page share's own file, whose content on disk must be the one analysed: a page job reads
    the sources of its own files only (its pages embed them); another share's page job uses this file's facts
    as its facts file says, so one that changed since is a ShardError naming it, never a tree of two contents.
    (The other files' contents are proved by the final `generate --facts ... --check`.)"""
    now = _as_on_disk(root, record, analyse=False)
    if now is not record:  # (`_as_on_disk` gives the record itself back when the content is the one analysed)
        why = now.skipped or "its content is not the one analysed"
        raise ShardError(f"{record.path}: changed since its analysis ({why}): every job must run on the checkout "
                         "the analysis jobs read")
    return record


def pages_digest(manifest: dict[str, Any]) -> str:
    """A digest of a page share's pages: each page's name and the digest of its content."""
    h = hashlib.blake2b(digest_size=20)
    for page in sorted(manifest):
        h.update(f"{page} {manifest[page][3]}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def write_sidecar(out: Path, share: Share, inputs: str, tree: Tree) -> None:
    """The note of a complete page share: what merge checks (its pages, as their digests say), and a copy of the
    share's manifest beside it (the note's count and digest vouch for it)."""
    writer = Writer(out)
    manifest = writer.manifest
    table = {"format": SIDECAR_FORMAT, "version": SIDECAR_VERSION, "repodoc": __version__, "pages": list(share),
             "inputs": inputs, "tree": tree.as_json(), "out": str(out), "count": len(manifest),
             "digest": pages_digest(manifest)}
    note = out / sidecar_name(share)
    try:
        try:
            copy = (out / MANIFEST).read_bytes()
        except FileNotFoundError:  # a share of no page: none was written
            copy = writer.state.encoded()
        _replace(out / manifest_copy_name(share), copy)
        _replace(note, (json.dumps(table, indent=1) + "\n").encode("utf-8"))
    except OSError as exc:
        raise OutputError(f"{note}: cannot write the page share's note: {exc.strerror or exc}") from exc


def _replace(path: Path, data: bytes) -> None:
    """`data` written to `path` through a temporary file renamed into place."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(data)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
