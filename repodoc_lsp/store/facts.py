"""Facts loading: one file's bytes read and analysed (every failure a skip reason), chunks of
files analysed in worker processes, and `FactsStore`, the facts of a workspace's files,
loaded from the cache on first use.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import signal
import sys
import threading
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from repodoc_lsp.analysis import FileFacts, Import, Language, analyse_source
from repodoc_lsp.analysis.source import NotText
from repodoc_lsp.store.cache import Encoded, FactsCache, checked_import, digest, encode
from repodoc_lsp.store.regular import read_regular


@dataclass(frozen=True, slots=True)
class Analysed:
    """One file's analysis: its facts, or the reason it was skipped (`facts` None)."""

    rel: str
    digest: str
    size: int
    facts: FileFacts | None
    skip_reason: str = ""
    # made by an analysis worker beside the facts (`analyse_chunk`), so that the parent, which waits
    # on the workers, only passes it on: the cache's row of the facts (its JSON, `cache.encode`)
    row: Encoded | None = field(default=None, compare=False, repr=False)


def analyse_path(root: str, rel: str) -> Analysed:
    """Read and analyse one file; every failure becomes a skip reason, never an exception."""
    path = os.path.join(root, rel)
    try:
        data = read_regular(path)
    except OSError as exc:
        return Analysed(rel, "", 0, None, f"unreadable: {exc.strerror or exc}")
    return analyse_bytes(rel, data)


# CPU seconds one file's analysis may take in a process's main thread (an analysis worker, the CLI): a
# file past it is skipped with its reason. A chunk of 32 such files stays under the pool's stall bound.
ANALYSIS_SECONDS = 15.0


class _Overtime(BaseException):
    """Raised by the CPU timer into a file's analysis (a BaseException: no `except Exception` keeps it)."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise _Overtime into this block after `seconds` of the process's CPU time (ITIMER_PROF: the
    machine's load does not count). Only in the main thread, where signals arrive, and when no
    other profiling timer runs; elsewhere (the language server's threads) the block is unbounded."""
    if (threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")
            or signal.getitimer(signal.ITIMER_PROF) != (0.0, 0.0)):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise _Overtime

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def analyse_bytes(rel: str, data: bytes) -> Analysed:
    """One file's facts, or its skip reason: not text, nesting too deep, more than ANALYSIS_SECONDS."""
    key = digest(data, rel)
    try:
        with _deadline(ANALYSIS_SECONDS):
            facts = analyse_source(posixpath.basename(rel), data)
    except NotText as exc:
        return Analysed(rel, key, len(data), None, str(exc))
    except (RecursionError, MemoryError):
        return Analysed(rel, key, len(data), None, "too deeply nested to analyse")
    except _Overtime:
        return Analysed(rel, key, len(data), None,
                        f"too long to analyse (more than {ANALYSIS_SECONDS:g} s of CPU; the limit per file)")
    return Analysed(rel, key, len(data), facts)


def interned_imports(imports: tuple[Import, ...]) -> tuple[Import, ...]:
    """The same imports, their strings interned: the workspace keeps every file's imports, and
    each file's copies of `typing`, `torch.nn` or `import-os` (as unpickled or read from the
    cache) were its own strings."""
    intern = sys.intern
    out = []
    for imp in imports:
        names = tuple(map(intern, imp.names))
        asnames = names if imp.asnames == imp.names else tuple(map(intern, imp.asnames))
        out.append(Import(intern(imp.module), names, imp.line, imp.level, intern(imp.anchor), asnames, imp.star))
    return tuple(out)


def analyse_chunk(root: str, rels: list[str]) -> list[Analysed]:
    """In an analysis worker: each file analysed, with its cache row (encoding the rows took a large
    share of a cold scan's parent, which waits on the workers: bench/README.md, "Symbol graph and
    keyword index: the figures")."""
    return [_for_parent(analyse_path(root, rel)) for rel in rels]


def _for_parent(result: Analysed) -> Analysed:
    return result if result.facts is None else replace(result, row=encode(result.facts))


@dataclass(frozen=True, slots=True, eq=False)
class SavedImports:
    """A file's imports as the last run saved them (`store/sketches.py`): the JSON text of rows of
    `checked_import`'s form, checked against its digest, made into `Import`s when first read (making every
    file's was a tenth of a run after an edit, which reads a few)."""

    rows: bytes

    def made(self) -> tuple[Import, ...]:
        return tuple(checked_import(*row) for row in json.loads(self.rows))


class Imports(MutableMapping[str, tuple[Import, ...]]):
    """rel -> its imports, strings interned; those given as `SavedImports` made when first read."""

    def __init__(self) -> None:
        self._by: dict[str, tuple[Import, ...] | SavedImports] = {}

    def __getitem__(self, rel: str) -> tuple[Import, ...]:
        found = self._by[rel]
        if isinstance(found, SavedImports):
            found = self._by[rel] = found.made()
        return found

    def given(self, rel: str) -> tuple[Import, ...] | SavedImports:
        """`rel`'s imports as given (`SavedImports` not made)."""
        return self._by[rel]

    def __setitem__(self, rel: str, imports: tuple[Import, ...] | SavedImports) -> None:
        self._by[rel] = imports

    def __delitem__(self, rel: str) -> None:
        del self._by[rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._by

    def __iter__(self) -> Iterator[str]:
        return iter(self._by)

    def __len__(self) -> int:
        return len(self._by)


class FactsStore(MutableMapping[str, FileFacts]):
    """rel -> facts. Facts the cache already holds are loaded on first use, so a run
    in which no page changes reads only each file's imports from the cache."""

    def __init__(self, root: Path, cache: FactsCache) -> None:
        self._root = root
        self._cache = cache
        # Loads come from the worker thread (pages, index) and from requests (a hover's file).
        self._loading = threading.Lock()
        self._loaded: dict[str, FileFacts] = {}
        self._pending: dict[str, str] = {}  # rel -> digest, in the cache, not loaded yet
        self._imports = Imports()

    def add_cached(self, rel: str, key: str, imports: tuple[Import, ...] | SavedImports, *,
                   interned: bool = False) -> None:
        """`rel` as the cache holds content `key`, whose `imports` are given (`interned`: their strings
        already are, as another store holds them, or will be: `SavedImports`)."""
        self._loaded.pop(rel, None)
        self._pending[rel] = key
        self._imports[rel] = imports if interned or isinstance(imports, SavedImports) else interned_imports(imports)

    def imports(self) -> Imports:
        return self._imports

    def load_all(self) -> None:
        """Load every pending file's facts (before rendering, or for the symbol index)."""
        self.load(list(self._pending))

    def load(self, rels: Iterable[str]) -> None:
        """Load these files' facts if they are pending (in batches: callers can work in between)."""
        with self._loading:
            wanted = {rel: key for rel in rels if (key := self._pending.get(rel)) is not None}
            if not wanted:
                return
            found = self._cache.get_many(set(wanted.values()))
            repaired = []
            for rel, key in wanted.items():
                facts = found.get(key)
                if facts is None:  # gone from the cache meanwhile, or damaged: analyse again
                    again = analyse_path(str(self._root), rel)
                    facts = again.facts or FileFacts(Language.TEXT, 0)
                    if again.digest == key and again.facts is not None:  # the file changed or went
                        repaired.append((key, facts))  # since: not cached as that content's facts
                self._loaded[rel] = facts
                self._pending.pop(rel, None)
            self._cache.put_many(repaired)

    def stream(self, batch: int = 256, skip: Container[str] = (),
               each: Callable[[list[tuple[str, FileFacts]]], None] | None = None
               ) -> Iterator[tuple[str, FileFacts | None]]:
        """Every file's facts, those pending in the cache loaded a batch at a time and forgotten
        again after their batch: a table built from every file (the symbol graph) without
        holding every file's facts at once. Files in `skip` come with None, never loaded; `each`
        is told each batch of facts loaded, before they are forgotten."""
        rels = list(self._imports)
        for start in range(0, len(rels), batch):
            chunk = rels[start : start + batch]
            pending = {rel: key for rel in chunk if rel not in skip and (key := self._pending.get(rel)) is not None}
            self.load(pending)
            if each is not None:
                each([(rel, facts) for rel in chunk
                      if rel not in skip and (facts := self._loaded.get(rel)) is not None])
            for rel in chunk:
                facts = None if rel in skip else self._loaded.get(rel)
                if facts is not None or rel in skip:
                    yield rel, facts
            self.release(pending)

    def release(self, keys: Mapping[str, str]) -> None:
        """Forget the loaded facts of these files (rel -> digest of the content they are the facts
        of) where the cache holds that content's facts: loaded again on use."""
        with self._loading:
            loaded = {rel: key for rel, key in keys.items() if rel in self._loaded}
            held = self._cache.has_many(set(loaded.values())) if loaded else set()
            for rel, key in loaded.items():
                if key in held:
                    del self._loaded[rel]
                    self._pending[rel] = key

    def __getitem__(self, rel: str) -> FileFacts:
        """One file's facts, loaded if pending (a run that renders every page calls `load_all` first)."""
        if rel in self._pending:
            self.load([rel])
        return self._loaded[rel]

    def one(self, rel: str) -> FileFacts | None:
        """One file's facts, loading only that file if need be (a request cannot wait for all)."""
        if rel in self._pending:
            self.load([rel])
        return self.loaded(rel)

    def loaded(self, rel: str) -> FileFacts | None:
        """The facts of `rel` if they are loaded (None: pending or unknown)."""
        return self._loaded.get(rel)

    def __setitem__(self, rel: str, facts: FileFacts) -> None:
        self._pending.pop(rel, None)
        self._loaded[rel] = facts
        # the facts take the interned copy too: one copy while they are held (the CLI holds all)
        facts.imports = self._imports[rel] = interned_imports(facts.imports)

    def __delitem__(self, rel: str) -> None:
        if rel not in self._loaded and rel not in self._pending:
            raise KeyError(rel)
        self._loaded.pop(rel, None)
        self._pending.pop(rel, None)
        self._imports.pop(rel, None)

    def __contains__(self, rel: object) -> bool:
        return rel in self._imports

    def __iter__(self) -> Iterator[str]:
        return iter(self._imports)

    def __len__(self) -> int:
        return len(self._imports)
