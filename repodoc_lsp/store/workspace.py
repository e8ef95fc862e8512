"""The analysed state of one workspace: discover -> facts (`facts.py`: read, analysed in
parallel, cached) -> relations -> symbol graph.

Shared by `repodoc generate` and the language server; the server keeps one
`Workspace` per root and updates single files as they are saved (each update returns
a `Change`, which the page planner takes).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from repodoc_lsp.analysis import FileFacts, Language
from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.source import NotText
from repodoc_lsp.analysis.treesitter import set_blank_macros
from repodoc_lsp.analysis.treesitter.byname import NameUsers, is_tree_sitter
from repodoc_lsp.config import Settings, cache_dir, project_name
from repodoc_lsp.knowledge.graph import Graph, LaterSketch, Sketch, files_of
from repodoc_lsp.knowledge.linking import Links
from repodoc_lsp.knowledge.once import BuiltOnce
from repodoc_lsp.knowledge.views import PartsOf
from repodoc_lsp.output.modes import wider_reason
from repodoc_lsp.pipeline.runtime import LIBRARY, Runtime, no_cycle_collection
from repodoc_lsp.render.parts import definition_parts
from repodoc_lsp.store.cache import FactsCache, digest
from repodoc_lsp.store.discover import InputFilter, Skipped, discover, input_folders
from repodoc_lsp.store.facts import FactsStore, SavedImports, analyse_bytes, analyse_path
from repodoc_lsp.store.regular import read_regular
from repodoc_lsp.store.scan import NOT_SEEN, CancelToken, ProgressFn, SavedScan, ScanMode, Seen, Stat, analyse, known


@dataclass(frozen=True, slots=True)
class Change:
    """What `Workspace.update_file`/`remove_file` changed, for the page planner. True when
    anything did."""

    files: frozenset[str] = frozenset()  # files analysed again, added or removed
    structural: bool = False  # files appeared or vanished: module names, folders, sibling lists
    related: frozenset[str] = frozenset()  # other files whose importers changed
    # files defining something whose uses, bases or subclasses changed (the symbol graph's
    # answers; empty while no graph is built)
    xref: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.files)

    def __or__(self, other: Change) -> Change:
        return Change(self.files | other.files, self.structural or other.structural,
                      self.related | other.related, self.xref | other.xref)


NO_CHANGE = Change()


class Workspace:
    def __init__(self, root: Path, settings: Settings, *, use_cache: bool = True,
                 runtime: Runtime = LIBRARY, incremental: bool = True, parts: PartsOf = definition_parts) -> None:
        self.root = root.resolve()
        self.parts = parts  # each file's page's part map, as the symbol graph is given it
        self.runtime = runtime  # chosen by the entry point: how worker processes start
        # False: scanned and written once, never updated file by file (`repodoc generate`): the
        # symbol graph keeps no dependencies, so `update_file` and friends refuse
        self.incremental = incremental
        self.settings = settings
        set_blank_macros(settings.blank_macros)  # before the cache opens and the workers start
        self.out = (self.root / settings.output).resolve() if not os.path.isabs(settings.output) \
            else Path(settings.output)
        self.project = project_name(self.root, settings)
        self.cache = FactsCache(cache_dir(settings) if use_cache else None)
        self.filter = InputFilter(self.root, settings)
        self.facts = FactsStore(self.root, self.cache)
        self.digests: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.folders: set[str] = {""}
        self.discovery_skipped: list[Skipped] = []
        self.read_skipped: dict[str, str] = {}
        self._relations: Relations | None = Relations({})
        self._relations_lock = threading.Lock()
        self._graph: Graph | None = None
        self._by_name: NameUsers | None = None  # built on first use (`by_name`)
        # file -> (digest of its content, what its graph view takes of its facts: None for a file of
        # no graph), made by a scan as the facts arrive (the CLI's, and the server's, which forgets
        # the facts): the graph takes them instead of the facts of the same content
        self._sketches: dict[str, tuple[str, Sketch | LaterSketch | None]] = {}
        self._links: Links = {}  # what an earlier link of files kept (`restore`): taken, not linked
        # files whose view and link the last graph build took from `_sketches` and `_links`
        self.kept_taken: set[str] = set()
        # a batch under way (`take`): files added or removed meanwhile, with their facts (None: gone)
        self._batch: dict[str, FileFacts | None] | None = None
        # and files changed meanwhile: the graph re-links them together at its end (what consulted
        # them is found in one pass over the graph's dependencies, not one pass per file)
        self._changed: dict[str, FileFacts] = {}
        self.analysed = 0  # files analysed (not from the cache) by the last scan
        self.cached = 0
        self.stats: dict[str, Stat] = {}  # each file's stat as the last scan found it (`Seen`)
        self.scan_began = 0  # `time.time_ns()` before that scan's walk

    # -- whole workspace ----------------------------------------------------------
    def scan(self, *, jobs: int | None = None, progress: ProgressFn | None = None,
             cancel: CancelToken | None = None,
             on_facts: Callable[[str, FileFacts], None] | None = None, release: bool = False,
             seen: Seen = NOT_SEEN,
             imports: Mapping[str, tuple[Import, ...] | SavedImports] | None = None,
             saved: Callable[[], SavedScan] | None = None) -> bool:
        """Discover and analyse every input. Returns False when cancelled: the workspace is then
        left as it was (what was analysed meanwhile is in the cache). `release`: new facts are
        forgotten once the cache holds them, loaded again on use (the server, whose index and
        graph summarise them: every file's facts held at the end of a cold scan of a large
        workspace take a lot of memory, before the index and graph are built on top). `seen`: an earlier
        scan's digests and stats (a file whose stat did not move is not read again). `imports`: content
        digest -> imports known already, strings interned (a check's kept table), not read from the cache.
        `saved`: more imports and the import relations a saved run had (`store/sketches.py`), asked for only
        when a file of `seen` has another content now; the relations made from if of these files."""
        began = time.time_ns()
        found = discover(self.root, self.settings)
        mode = ScanMode(release=release, once=not self.incremental)
        fresh = not self.digests and self.cache.empty()
        with self.runtime.holding():  # every file's imports, held: the collector's passes were a tenth of this
            state = known(self.root, found.files, self.cache, mode, fresh=fresh, loaded=self._loaded,
                          stats=found.stats, seen=seen, imports=imports, saved=saved)
        state.progress, state.on_facts, state.parts = progress, on_facts, self.parts
        if progress:
            progress("analyse", state.done, state.total, "")
        finished = analyse(state, self.root, self.settings, self.runtime, jobs=jobs, cancel=cancel)
        state.store()
        if not finished:
            return False
        self.analysed, self.cached = state.new, state.cached
        self.discovery_skipped, self.read_skipped = found.skipped, state.read_skipped
        facts = state.facts
        self.facts, self.digests = facts, {r: d for r, d in state.digests.items() if r in facts}
        self.sizes = {r: s for r, s in state.sizes.items() if r in facts}
        self.stats, self.scan_began = {r: s for r, s in found.stats.items() if r in facts}, began
        self.folders = set(found.folders)
        made = state.relations  # else built on first use: a run whose tree is intact never needs them
        self._relations = made if made is not None and made.files == set(facts) else None
        self._graph = self._by_name = None
        self._sketches, self._links = dict(state.sketches), {}
        return True

    def _loaded(self, rel: str, key: str) -> FileFacts | None:
        """The facts held of `rel` when they are of the content of digest `key`."""
        return self.facts.loaded(rel) if self.digests.get(rel) == key else None

    @property
    def relations(self) -> Relations:
        """The import relations of the files, built on first use from the facts of the last scan
        (or `restore`). Every later change of the facts goes through `_apply` or `_restructure`,
        which take them first: `Relations.update` must see a file's old imports."""
        relations = self._relations
        if relations is None:
            with self._relations_lock:  # the server's requests and its indexing thread
                if self._relations is None:
                    self._relations = Relations(self.facts.imports())
                relations = self._relations
        return relations

    @property
    def by_name(self) -> NameUsers:
        """Who names the definitions of tree-sitter files, by name (`NameUsers`), built on first use
        from their facts; `take` and `remove_file` keep it (taking it first: it must see old facts)."""
        if self._by_name is None:
            others = {rel for rel in self.facts if not is_tree_sitter(rel)}  # never loaded for this
            self._by_name = NameUsers((rel, f) for rel, f in self.facts.stream(skip=others) if f is not None)
        return self._by_name

    @property
    def by_name_ready(self) -> NameUsers | None:
        """`by_name` if it is built (a request must not build it)."""
        return self._by_name

    # -- a replica (the language server's regeneration process) -------------------------
    def state(self) -> WorkspaceState:
        """What a replica needs to hold the same workspace as this one (facts come from the cache)."""
        return WorkspaceState(dict(self.digests), dict(self.sizes), set(self.folders),
                              list(self.discovery_skipped), dict(self.read_skipped))

    def restore(self, state: WorkspaceState, imports: Mapping[str, tuple[Import, ...] | SavedImports] | None = None,
                sketches: Mapping[str, tuple[str, Sketch | LaterSketch | None]] | None = None,
                relations: Relations | None = None, store: FactsStore | None = None,
                links: Links | None = None, graph: Graph | None = None) -> None:
        """Become the workspace `state` describes: the files as they were analysed, not as they
        are on disk now (a file changed since is seen as changed by the next `update_file`).
        `imports`: content digest -> imports already read from the cache (not read again, and
        interned already); `sketches`: file -> (digest, the graph's sketch of that content), built
        from instead of facts; `relations`: those of these files and imports, made elsewhere (taken);
        `store`: the store of these files' facts, made elsewhere (a page share's: taken); `links`: what an
        earlier link of files kept, each consulting only files of the content held here; `graph`: the graph
        of these files, made elsewhere (a page share's answers: taken)."""
        known = imports or {}
        cached = self.cache.get_imports_many(set(state.digests.values()) - known.keys()) if store is None else {}
        facts = FactsStore(self.root, self.cache) if store is None else store
        for rel, key in state.digests.items() if store is None else ():
            if key in known:
                facts.add_cached(rel, key, known[key], interned=True)
            elif key in cached:
                facts.add_cached(rel, key, cached[key])
            else:  # not in the cache (disabled, or cleared): analyse what is on disk
                facts[rel] = analyse_path(str(self.root), rel).facts or FileFacts(Language.TEXT, 0)
        self.facts, self.digests, self.sizes = facts, dict(state.digests), dict(state.sizes)
        self.folders = set(state.folders)
        self.discovery_skipped, self.read_skipped = list(state.discovery_skipped), dict(state.read_skipped)
        self._relations = relations
        self._graph, self._by_name = graph, None
        self._sketches = dict(sketches or {})
        self._links = links or {}

    # -- single files (the language server) ------------------------------------------
    def rel(self, path: Path) -> str | None:
        """The workspace-relative POSIX path of an input file, or None if it is not one."""
        if not self.filter.is_input(path):
            return None
        return path.resolve().relative_to(self.root).as_posix()

    def update_files(self, rels: Iterable[str], data: dict[str, bytes] | None = None,
                     pause: Callable[[], None] | None = None, known: dict[str, FileState] | None = None) -> Change:
        """`update_file` of each of `rels` (`pause` between files), as one batch: the facts of
        contents the cache knows come in one query, and module names, folders and the symbol
        graph follow files that appeared or vanished once, at its end (a checkout of 1,500 new
        files rebuilt them 1,500 times). `known`: states of some of them, read and analysed
        elsewhere (the page process), taken as they are."""
        known = known or {}
        states = self._states([rel for rel in rels if rel not in known], data or {}, pause)
        return self.take({**states, **known}, pause)

    def update_file(self, rel: str, data: bytes | None = None) -> Change:
        """Re-analyse one file (from `data`, else from disk; gone from disk: removed).

        Returns what changed (false when nothing did).
        """
        return self.take(self._states([rel], {} if data is None else {rel: data}, None))

    def states(self, rels: Iterable[str], facts: bool = True) -> dict[str, FileState]:
        """The files `rels` as this workspace holds them: what another workspace `take`s to hold
        the same (the page process sends them to the server after a job, without the facts:
        the server finds them in the cache this one filled)."""
        found = {}
        for rel in rels:
            if rel in self.facts:
                found[rel] = FileState(self.digests[rel], self.sizes[rel], self.facts.one(rel) if facts else None)
            else:
                found[rel] = FileState(skipped=self.read_skipped.get(rel, ""))
        return found

    def take(self, states: dict[str, FileState], pause: Callable[[], None] | None = None) -> Change:
        """Hold these files as `states` says (read and analysed elsewhere; facts not given come
        from the cache in one query, else the file is read again), as one batch: module names,
        folders and the symbol graph follow files that appeared or vanished once, at the end,
        the graph re-linking only what their names reach."""
        wanted = {rel: state.digest for rel, state in states.items() if state.digest and state.facts is None}
        if wanted:
            found = self.cache.get_many(set(wanted.values()))
            states = {rel: state if rel not in wanted else replace(state, facts=found.get(state.digest))
                      for rel, state in states.items()}
            missing = [rel for rel, key in wanted.items() if key not in found]
            if missing:  # not in the cache (disabled, or pruned meanwhile): read and analysed here
                states = {rel: state for rel, state in states.items() if rel not in missing}
                states.update(self._states(missing, {}, pause))
        change = NO_CHANGE
        by_name = self.by_name if any(map(is_tree_sitter, states)) else self._by_name  # before the facts change
        skipped_before = {rel for rel in states if rel in self.read_skipped}
        self._batch, self._changed = {}, {}
        try:
            for rel, state in states.items():
                if pause is not None and len(states) > 1:
                    pause()
                change |= self._apply(rel, state)
        finally:
            added_removed, self._batch = self._batch, None
            changed, self._changed = self._changed, {}
            if added_removed:
                change |= Change(frozenset(added_removed), structural=True,
                                 xref=self._restructure({**changed, **added_removed}))
            elif changed and self._graph is not None:
                change |= Change(xref=frozenset(files_of(self._graph.update_many(changed))))
            if by_name is not None and (changed or added_removed):
                change |= Change(xref=frozenset(by_name.update_many({**changed, **added_removed})))
            if {rel for rel in states if rel in self.read_skipped} != skipped_before:
                change |= self._refold(frozenset(states))
        return change

    def _refold(self, rels: frozenset[str]) -> Change:
        """Files read but skipped (binary content, unreadable) appeared or vanished: a folder holding only
        such files has pages as the scan finds it (`discover`), so the folders follow."""
        folders = input_folders(self.facts, self.read_skipped)
        if folders == self.folders:
            return NO_CHANGE
        self.folders = folders
        return Change(rels, structural=True)

    def _states(self, rels: Iterable[str], data: dict[str, bytes],
                pause: Callable[[], None] | None) -> dict[str, FileState]:
        """Each of `rels` read (from `data`, else from disk) and analysed, unless its content is
        the one held (left out): the facts of contents the cache knows in one query, the others
        analysed and cached together."""
        states: dict[str, FileState] = {}
        todo: dict[str, tuple[str, bytes]] = {}
        for rel in rels:
            read = self._read(rel, data.get(rel))
            if isinstance(read, FileState):
                states[rel] = read
            elif read is not None:
                todo[rel] = read
        cached = self.cache.get_many({key for key, _ in todo.values()}) if todo else {}
        new = []
        for rel, (key, content) in todo.items():
            facts = cached.get(key)
            if facts is None:
                if pause is not None:
                    pause()
                result = analyse_bytes(rel, content)
                facts = result.facts
                if facts is None:
                    states[rel] = FileState(skipped=result.skip_reason)
                    continue
                new.append((key, facts))
            states[rel] = FileState(key, len(content), facts)
        if new:
            self.cache.put_many(new)
        return states

    def _read(self, rel: str, data: bytes | None) -> FileState | tuple[str, bytes] | None:
        """`rel` now: a FileState without facts when it is no input (gone, private, unreadable,
        too large), None when its content is the one held, else (digest, content) to analyse."""
        try:
            private = wider_reason(os.stat(self.root / rel).st_mode)
        except OSError:
            private = ""
        if private:  # its pages would widen who can read it
            return FileState(skipped=private)
        if data is None:
            if not _inside(self.root, rel):  # swapped for a link to outside since the scan: never read
                return FileState(skipped="symbolic link to outside the workspace")
            try:
                data = read_regular(self.root / rel)
            except FileNotFoundError:
                return FileState()
            except OSError as exc:
                return FileState(skipped=f"unreadable: {exc.strerror or exc}")
        if len(data) > self.settings.max_file_bytes:
            return FileState()
        key = digest(data, rel)
        return None if self.digests.get(rel) == key else (key, data)

    def _apply(self, rel: str, state: FileState) -> Change:
        relations = self.relations  # before the facts change (see `relations`)
        if not state.digest or state.facts is None:
            if state.skipped:
                self.read_skipped[rel] = state.skipped
            else:  # gone (or past the size limit): no longer a file of its folder
                self.read_skipped.pop(rel, None)
            return self.remove_file(rel)
        if self.digests.get(rel) == state.digest:
            return NO_CHANGE
        is_new = rel not in self.facts
        self.facts[rel] = state.facts
        self.digests[rel] = state.digest
        self.sizes[rel] = state.size
        self.read_skipped.pop(rel, None)
        if is_new:  # always in a batch (`take`): module names and the graph follow at its end
            assert self._batch is not None
            self.folders.update(input_folders([rel]))
            self._batch[rel] = state.facts
            return NO_CHANGE
        related = frozenset(relations.update(rel, state.facts.imports))
        self._changed[rel] = state.facts  # the graph follows at the batch's end (`take`)
        return Change(frozenset([rel]), related=related)

    def remove_file(self, rel: str) -> Change:
        if rel not in self.facts:
            return NO_CHANGE
        del self.facts[rel], self.digests[rel], self.sizes[rel]
        if self._batch is not None:
            self._batch[rel] = None
            return NO_CHANGE  # the batch says it at its end
        named = self._by_name.update_many({rel: None}) if self._by_name is not None else set()
        return Change(frozenset([rel]), structural=True, xref=self._restructure({rel: None}) | named)

    # -- the symbol graph -----------------------------------------------------------
    def graph(self, each: Callable[[list[tuple[str, FileFacts]]], None] | None = None,
              pause: Callable[[], None] | None = None) -> Graph:
        """The symbol graph, built on first use from every file's facts, or from what the last scan
        sketched of them as they arrived; a long-lived workspace loads those pending in the cache a
        batch at a time, tells `each` batch (the server's index takes them in the same read) and
        forgets them again. `pause` is called between files (the server's requests go first)."""
        if self._graph is None:
            sketched = {rel: sketch for rel, (key, sketch) in self._sketches.items() if self.digests.get(rel) == key}
            files: Iterable[tuple[str, FileFacts | Sketch | LaterSketch]]
            if self.incremental:  # a long-lived workspace: facts pending in the cache stay there
                files = _sketched_or(self.facts.stream(skip=sketched, each=each), sketched)
            else:  # built once to render every page, which loads them all anyway (a sketched file's: not asked)
                self.facts.load_all()
                files = _sketched_or(((rel, None if rel in sketched else self.facts[rel]) for rel in self.facts),
                                     sketched)
            # full collections of the facts took 10x its time; a process holding its graph to the end freezes it
            with no_cycle_collection(keep=self.runtime.holds):
                self._graph = (Graph if self.incremental else BuiltOnce)(self.relations, files, parts=self.parts,
                                                                         pause=pause, linked=self._links)
            taken = self._graph.links_taken  # a file of no graph has no link to take
            self.kept_taken = {rel for rel, sketch in sketched.items() if sketch is None or rel in taken}
            self._sketches, self._links = {}, {}
        return self._graph

    def sketched(self) -> set[str]:
        """The files whose graph views the last scan sketched as their facts arrived (their facts
        are not read again to build the graph)."""
        return {rel for rel, (key, _) in self._sketches.items() if self.digests.get(rel) == key}

    def release_facts(self, rels: Iterable[str] | None = None) -> None:
        """Forget the loaded facts of `rels` (None: every file) that the cache holds: they are
        loaded again on use (the server after indexing: a hover loads one file's)."""
        digests = self.digests
        self.facts.release({rel: digests[rel] for rel in (self.facts if rels is None else rels) if rel in digests})

    @property
    def graph_ready(self) -> Graph | None:
        """The graph if it is built (a request must not build it)."""
        return self._graph

    def _restructure(self, changed: dict[str, FileFacts | None]) -> frozenset[str]:
        """Files appeared or vanished (`changed`: with their facts, None when gone): folders and
        module names follow, and a built graph re-links what the changed names reach. Returns
        the files defining something whose graph answers changed (every page is planned anyway:
        the change is structural)."""
        self.folders = input_folders(self.facts, self.read_skipped)
        self._relations = Relations(self.facts.imports())
        if self._graph is None:
            return frozenset()
        with no_cycle_collection():
            return frozenset(files_of(self._graph.restructure(self.relations, changed, self.facts.one)))

    # -- views --------------------------------------------------------------------
    @property
    def skipped(self) -> list[Skipped]:
        return sorted([*self.discovery_skipped, *(Skipped(r, why) for r, why in self.read_skipped.items())],
                      key=lambda s: s.path)

    def read_text(self, rel: str) -> str | None:
        return read_text(self.root, rel)


def read_text(root: Path, rel: str) -> str | None:
    """The text of input `rel` under `root` as it is on disk (None: unreadable or not text)."""
    from repodoc_lsp.analysis.source import decode, language_for

    try:
        data = read_regular(root / rel)
        return decode(data, language_for(rel)).text
    except (OSError, NotText):
        return None


@dataclass(frozen=True, slots=True)
class FileState:
    """A file as a workspace takes it (`Workspace.take`): its content's digest, size and facts
    (None: the cache's, by that digest); or, digest "", no input any more, with the reason when
    it is skipped ("": gone, or over the size limit). The page process sends the states of a
    job's files to the server, which takes them without reading or analysing them again."""

    digest: str = ""
    size: int = 0
    facts: FileFacts | None = None
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class WorkspaceState:
    digests: dict[str, str]  # rel -> digest of the content analysed
    sizes: dict[str, int]
    folders: set[str]
    discovery_skipped: list[Skipped]
    read_skipped: dict[str, str]


def _sketched_or(files: Iterable[tuple[str, FileFacts | None]], sketched: dict[str, Sketch | LaterSketch | None]
                 ) -> Iterator[tuple[str, FileFacts | Sketch | LaterSketch]]:
    """`files` as the graph takes them: a file streamed without its facts (None) by its sketch, if
    it has one (a file of no graph has none)."""
    for rel, facts in files:
        if facts is not None:
            yield rel, facts
        elif (sketch := sketched[rel]) is not None:
            yield rel, sketch


def _inside(root: Path, rel: str) -> bool:
    real = os.path.realpath(root / rel)
    return real.startswith(f"{root}{os.sep}")

