"""One scan of a workspace's inputs (`Workspace.scan`): the files' digests (an earlier scan's for a file
whose stat did not move: `Seen`) against the cache (`known`), then the analysis of the others
(`analyse`), each result taken by a `ScanState` as it arrives: the facts, the cache's new rows, the
import relations and the graph's sketches."""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from repodoc_lsp.analysis import FileFacts, Language
from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.views import PartsOf, Sketch, no_parts, sketch_of
from repodoc_lsp.pipeline.pool import run_chunks
from repodoc_lsp.pipeline.runtime import Runtime, default_jobs
from repodoc_lsp.store.cache import Encoded, FactsCache, digest
from repodoc_lsp.store.facts import Analysed, FactsStore, SavedImports, analyse_chunk, analyse_path
from repodoc_lsp.store.regular import read_regular

if TYPE_CHECKING:
    from repodoc_lsp.store.sketches import SavedRelations

# What a saved run knew of its files (`known`'s `saved`): imports by content digest, and its import relations
SavedScan = tuple[Mapping[str, "tuple[Import, ...] | SavedImports"], "SavedRelations | None"]

# Below this many files to analyse, worker processes cost more than they save.
PARALLEL_THRESHOLD = 48
STORE_BATCH = 256  # new cache rows written together during a scan

ProgressFn = Callable[[str, int, int, str], None]  # phase, done, total, message
Stat = tuple[int, int, int, int]  # a file's size, modification and status change times (ns), inode
# A file's times this close to a scan's start may not move when it is written right after (coarse clocks)
RACY_NS = 2_000_000_000


def as_stat(raw: object) -> Stat | None:
    """A stat as a kept file wrote it (a JSON list of four ints), or None when `raw` is not one."""
    if isinstance(raw, list) and len(raw) == 4 and all(type(n) is int for n in raw):
        return raw[0], raw[1], raw[2], raw[3]
    return None


@dataclass(frozen=True, slots=True)
class Seen:
    """Each file's content digest and stat as an earlier scan found them, and when that scan began."""

    digests: Mapping[str, str]
    stats: Mapping[str, Stat]
    began: int  # `time.time_ns()` before that scan's walk

    def digest(self, rel: str, stat: Stat | None) -> str | None:
        """`rel`'s digest then, when its stat is the same now and its times were older than that scan by
        RACY_NS: a file is not read and digested again when its stat says it did not change (every write
        moves its status change time, which nothing sets back)."""
        if stat is None or self.stats.get(rel) != stat or max(stat[1], stat[2]) > self.began - RACY_NS:
            return None
        return self.digests.get(rel)


NOT_SEEN = Seen({}, {}, 0)


class CancelToken(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ScanMode:
    """What a scan keeps beside the facts, as its workspace needs."""

    release: bool  # new facts forgotten once the cache holds them (the server)
    once: bool  # a workspace built once (the CLI's): its import relations made as the facts arrive

    @property
    def sketch(self) -> bool:
        """The graph's sketch of each new file made as its facts arrive (in the CLI's graph thread they
        lengthened its build past the first keyword pages: bench/README.md, "The parent of a cold run")."""
        return self.release or self.once


@dataclass
class ScanState:
    """A scan under way: what it found so far, filled as the files' facts arrive (`take`).

    New rows go to the cache in batches as they arrive (the parent waits on the workers meanwhile),
    not all at the end while the workers are idle; after a failed write (the cache locked by another
    process) the scan does not wait on it again. The rows come encoded by the analysis workers (those
    analysed here are encoded one at a time as SQLite takes them); render workers come from a fork
    server, not from this process, and inherit nothing of what the rows' strings leave behind in it."""

    cache: FactsCache
    mode: ScanMode
    facts: FactsStore
    digests: dict[str, str]
    sizes: dict[str, int]
    read_skipped: dict[str, str]
    todo: list[str]  # files to analyse
    relations: Relations | None  # made as the facts arrive (a workspace built once), else None
    total: int = 0  # files discovered
    cached: int = 0  # files whose facts were kept or came from the cache
    done: int = 0
    new: int = 0  # files analysed
    progress: ProgressFn | None = None
    on_facts: Callable[[str, FileFacts], None] | None = None
    parts: PartsOf = no_parts  # each file's page's part map, as the graph's sketches take it
    rows: list[tuple[str, FileFacts | Encoded]] = field(default_factory=list)
    stored: dict[str, str] = field(default_factory=dict)  # rel -> digest of the rows
    storing: bool = True
    sketches: dict[str, tuple[str, Sketch | None]] = field(default_factory=dict)

    def take(self, result: Analysed) -> None:
        """One file's analysis, as it arrives."""
        self.done += 1
        if result.facts is None:
            self.read_skipped[result.rel] = result.skip_reason
            self.digests.pop(result.rel, None)
        else:
            self._add(result, result.facts)
        if self.progress:
            self.progress("analyse", self.done, self.total, posixpath.dirname(result.rel))

    def _add(self, result: Analysed, facts: FileFacts) -> None:
        rel = result.rel
        self.facts[rel] = facts
        if self.relations is not None:
            self.relations.update(rel, self.facts.imports()[rel])  # as interned by the store
        if self.on_facts is not None:
            self.on_facts(rel, facts)
        self.digests[rel] = result.digest
        self.sizes[rel] = result.size
        self.new += 1
        self.rows.append((result.digest, result.row or facts))
        if self.mode.sketch:
            # what the graph takes of them, while the workers analyse (the parent mostly waits on them)
            self.sketches[rel] = (result.digest, sketch_of(facts, self.parts(facts))
                                  if facts.language is Language.PYTHON else None)
        self.stored[rel] = result.digest
        if len(self.rows) >= STORE_BATCH:
            self.store()

    def store(self) -> None:
        """Write the rows taken since the last batch to the cache."""
        if self.rows and self.storing:
            self.storing = self.cache.put_many(self.rows)
            if self.storing and self.mode.release:
                self.facts.release(self.stored)
        self.rows.clear()
        self.stored.clear()


def known(root: Path, rels: list[str], cache: FactsCache, mode: ScanMode, *, fresh: bool,
          loaded: Callable[[str, str], FileFacts | None], stats: Mapping[str, Stat] | None = None,
          seen: Seen = NOT_SEEN, imports: Mapping[str, tuple[Import, ...] | SavedImports] | None = None,
          saved: Callable[[], SavedScan] | None = None) -> ScanState:
    """A scan of `rels` with what is known of them: each file digested (cheap; `seen` says the digest of a
    file whose stat, in `stats`, did not move), then the facts the workspace holds for the same content
    (`loaded(rel, digest)`) or the cache has (`imports`: content digest -> imports known already, not read
    from the cache); the others are to analyse. `fresh` (a cache that holds no row and a workspace that
    holds no facts: none is known): nothing is read here, each file is read once, by the analysis that
    digests it (read and digested here first, both cores stayed idle meanwhile). `saved`: what a saved run knew,
    asked for only when a file of `seen` has another content now (what it holds is for a run after an edit):
    more imports by content digest, and the import relations of its files (`_relations`)."""
    digests: dict[str, str] = {}
    sizes: dict[str, int] = {}
    read_skipped: dict[str, str] = {}
    stats = stats or {}
    for rel in () if fresh else rels:
        key = seen.digest(rel, stat := stats.get(rel))
        if key is not None and stat is not None:
            digests[rel], sizes[rel] = key, stat[0]
            continue
        try:
            data = read_regular(root / rel)
        except OSError as exc:
            read_skipped[rel] = f"unreadable: {exc.strerror or exc}"
            continue
        digests[rel] = digest(data, rel)
        sizes[rel] = len(data)
    # Facts already loaded for the same content are kept (the server's rescans): loading them again
    # from the cache takes a while on a large workspace.
    kept = {rel: f for rel, key in digests.items() if (f := loaded(rel, key)) is not None}
    cached = dict(imports or {})  # content digest -> imports known already (not read from the cache)
    relations = None
    if saved is not None and any(seen.digests.get(rel, key) != key for rel, key in digests.items()):
        more, relations = saved()
        cached.update(more)
    cached.update(cache.get_imports_many({k for rel, k in digests.items() if rel not in kept and k not in cached}))
    facts = FactsStore(root, cache)
    todo: list[str] = list(rels) if fresh else []
    for rel, key in digests.items():
        if rel in kept:
            facts[rel] = kept[rel]
        elif key in cached:
            facts.add_cached(rel, key, cached[key], interned=True)  # the cache's are interned as read
        else:
            todo.append(rel)
    # A workspace built once (the CLI's) makes its import relations as each file's facts arrive
    # (`take`; the parent mostly waits on the analysis workers), not after the last one, on one core
    # before the first page. Their module names come from the files discovered: a file the analysis
    # skips changes them, and they are made afresh.
    made = _relations(relations, digests, facts, todo) if mode.once else None
    if made is None and todo and mode.once:
        made = Relations({**facts.imports(), **dict.fromkeys(todo, ())})
    return ScanState(cache, mode, facts, digests, sizes, read_skipped, todo, made, total=len(rels),
                     cached=len(facts), done=len(facts))


def _relations(saved: SavedRelations | None, digests: Mapping[str, str], facts: FactsStore,
               todo: list[str]) -> Relations | None:
    """The import relations of the files of `digests` made from those a saved run had (`saved`), when it was of
    the same files: each file's imports resolved only when asked, those changed since updated (the files
    to analyse as their facts arrive); made from every file's imports, they were a tenth of a run after an
    edit. None otherwise."""
    if saved is None or saved.digests.keys() != {*facts, *todo}:
        return None
    relations = saved.made()
    for rel in facts:
        if digests[rel] != saved.digests[rel]:
            relations.update(rel, facts.imports()[rel])
    return relations


def analyse(state: ScanState, root: Path, settings: Settings, runtime: Runtime, *, jobs: int | None,
            cancel: CancelToken | None) -> bool:
    """Analyse the files `state.todo`, each result taken by `state` as it arrives: in worker processes
    when they are many, else here. False when `cancel` stopped it."""
    todo = state.todo
    workers = min(default_jobs(settings, jobs), max(1, len(todo) // 8))
    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        chunk = max(4, min(32, len(todo) // (workers * 8) or 1))
        chunks = [todo[i : i + chunk] for i in range(0, len(todo), chunk)]
        with runtime.holding():
            work = functools.partial(analyse_chunk, str(root))
            for results in run_chunks(work, chunks, workers=workers, context=runtime.context(),
                                      initializer=runtime.worker_setup(), cancel=cancel, what="analysis"):
                for result in results:
                    state.take(result)
        return not (cancel is not None and cancel.is_set())
    for rel in todo:
        if cancel is not None and cancel.is_set():
            return False
        state.take(analyse_path(str(root), rel))
    return True
