"""The workspace keyword index: every class, function, method, module and Markdown heading
of every file, with a ranked fuzzy search fast enough for a large repository.

Ranks, best first: exact name > prefix > word or camel-hump start (also acronyms:
`fsdp` finds FullyShardedDataParallel) > substring > subsequence; shorter names first
within a rank. Matching ignores case.
"""

from __future__ import annotations

import itertools
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from sys import intern
from typing import Any

from repodoc_lsp.analysis.model import FileFacts, SymbolKind
from repodoc_lsp.knowledge.subsequences import Subsequences, SubsequenceView

MODULE = "module"


@dataclass(frozen=True, slots=True)
class Entry:
    """One indexed name. `kind` is a SymbolKind value or "module"; lines are 1-based."""

    name: str
    kind: str
    container: str
    rel: str
    line: int
    col: int
    end_line: int
    anchor: str = ""


def word_starts(name: str) -> list[int]:
    """Where words start in `name`: after `_`, `.`, `-` or a space, at a lower->upper hump, after digits."""
    starts = []
    prev = ""
    for i, ch in enumerate(name):
        if ch in "_.- ":
            prev = ch
            continue
        if (i == 0 or prev in "_.- " or (ch.isupper() and (prev.islower() or prev.isdigit()))
                or (ch.isdigit() and not prev.isdigit())):
            starts.append(i)
        prev = ch
    return starts


def entries_of(rel: str, facts: FileFacts, module: str = "") -> list[Entry]:
    """A file's index entries. Names and containers are interned: the same name in many files
    (`__init__`, `forward`) and a class's name in each of its methods' entries are one string."""
    out = [Entry(intern(s.name), s.kind.value, intern(s.container), rel, s.line, s.col, s.end_line, s.anchor)
           for s in facts.symbols]
    if module:
        package, _, last = module.rpartition(".")
        out.append(Entry(last, MODULE, package, rel, 1, 0, 1))
    return out


# an entry as kept (`KeywordIndex.state`): its fields but its file's, which the state gives once
_ROW = tuple(f.name for f in fields(Entry) if f.name != "rel")
assert _ROW[:3] == ("name", "kind", "container") and fields(Entry)[3].name == "rel"

_KIND_ORDER = {SymbolKind.CLASS.value: 0, SymbolKind.FUNCTION.value: 1, MODULE: 2,
               SymbolKind.METHOD.value: 3, SymbolKind.HEADING.value: 4}


def _group_order(e: Entry) -> tuple[int, str, int]:
    return (_KIND_ORDER.get(e.kind, 9), e.rel, e.line)


class KeywordIndex:
    """Thread safe. Writers update the index in place, file by file, under a lock; searches
    read an immutable snapshot taken after the last change, lookups the live groups. A snapshot
    after a save copies the tables, and builds a new blob of names only when the save added or
    removed a name; the index is never rebuilt whole (what it costs: bench/README.md)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_file: dict[str, list[Entry]] = {}
        # lower-case name -> its entries in rank order; a changed group is replaced, never mutated
        self._groups: dict[str, tuple[Entry, ...]] = {}
        # lower name -> word starts of any of its spellings, sorted. A tuple, not a frozenset (memory:
        # bench/README.md, "Symbol graph and keyword index: the figures"). The spellings themselves are the names of
        # the group's entries (no table of them is kept)
        self._word_starts: dict[str, tuple[int, ...]] = {}
        # initials -> lower names, in no order (tuples, not frozensets: most hold one name); a
        # name's own initials are its spellings' (`_shape`)
        self._by_initials: dict[str, tuple[str, ...]] = {}
        # as of the last snapshot, and what changed since: sorted names (also as one blob, with
        # where each name starts in it) and sorted initials
        self._names: list[str] = []
        self._blob = "\n"
        self._starts = array("q")  # an array, not a list of ints (a tenth of the memory)
        self._initials: list[str] = []
        self._names_changed: set[str] = set()
        self._initials_changed: set[str] = set()
        self._subsequences = Subsequences()
        self._snapshot: _Snapshot | None = None
        # the last snapshot reads `_groups`, `_word_starts` and `_by_initials` themselves (not copies:
        # they are large): the next change copies them before it changes them
        self._shared = False
        # the last snapshot taken, even if changes followed it (`search_latest`), when it was
        # taken and what it cost, and whether a search used it stale (`refresh` takes a new one)
        self._latest: _Snapshot | None = None
        self._taken = 0.0
        self._cost = 0.0
        self._wanted = True  # the first batch indexed takes one (a small one)

    def set_file(self, rel: str, entries: list[Entry]) -> None:
        self.set_many([(rel, entries)])

    def set_many(self, items: Iterable[tuple[str, list[Entry]]]) -> None:
        with self._lock:
            self._update(dict(items))

    def add_many(self, items: Iterable[tuple[str, list[Entry]]]) -> None:
        """Add these entries to their files' (a scan's files take their module's entry once every
        module name is known): only the groups of the new entries are sorted again."""
        with self._lock:
            self._update(dict(items), add=True)

    def remove_file(self, rel: str) -> None:
        with self._lock:
            self._update({rel: None})

    def retain(self, rels: set[str]) -> None:
        """Forget every file not in `rels`."""
        with self._lock:
            self._update(dict.fromkeys(set(self._by_file) - rels))

    def _update(self, changes: dict[str, list[Entry] | None], add: bool = False) -> None:
        """Replace these files' entries (None: drop the file; `add`: add them to the file's).
        Called with the lock held. Each group of entries the change touches is filtered and
        sorted once, however many of its files change (indexing a whole workspace is one call
        per batch of files)."""
        touched: dict[str, list[Entry]] = {}
        for rel, entries in changes.items():
            if add:
                self._by_file[rel] = [*self._by_file.get(rel, ()), *(entries or ())]
                continue
            for e in self._by_file.pop(rel, None) or ():
                lower = e.name.lower()
                if lower not in touched:
                    touched[lower] = [x for x in self._groups[lower] if x.rel not in changes]
            if entries is not None:
                self._by_file[rel] = entries
        for entries in changes.values():
            for e in entries or ():
                lower = e.name.lower()
                if lower not in touched:  # no entry of a changed file was in it
                    touched[lower] = list(self._groups.get(lower, ()))
                touched[lower].append(e)
        if not touched:
            return
        if self._shared:  # copied, not changed under the snapshot's searches
            self._groups, self._word_starts = dict(self._groups), dict(self._word_starts)
            self._by_initials = dict(self._by_initials)
            self._shared = False
        lost: dict[str, set[str]] = {}  # initials -> lower names that no longer have them
        gained: dict[str, list[str]] = {}  # and that now have them
        for lower, group in touched.items():
            before = {e.name for e in self._groups.get(lower, ())}
            after = {e.name for e in group}
            if group:
                group.sort(key=_group_order)
                self._groups[lower] = tuple(group)
            else:
                del self._groups[lower]
            if before != after:  # its set of spellings changed
                self._respell(lower, before, after, lost, gained)
        for ini in lost.keys() | gained.keys():
            gone = lost.get(ini, ())
            names = tuple(n for n in self._by_initials.get(ini, ()) if n not in gone) + tuple(gained.get(ini, ()))
            if names:
                if ini not in self._by_initials:
                    self._initials_changed.add(ini)
                self._by_initials[ini] = names
            elif ini in self._by_initials:
                del self._by_initials[ini]
                self._initials_changed.add(ini)
        self._snapshot = None

    def _respell(self, lower: str, before: set[str], after: set[str],
                 lost: dict[str, set[str]], gained: dict[str, list[str]]) -> None:
        """The set of spellings of `lower` changed from `before` to `after`: update its word
        starts, and note the initials it lost and gained."""
        shapes = [_shape(name) for name in after]
        had = {_shape(name)[1] for name in before}
        has = {ini for _, ini in shapes}
        for ini in had - has:
            lost.setdefault(ini, set()).add(lower)
        for ini in has - had:
            gained.setdefault(ini, []).append(lower)
        if after:
            if lower not in self._word_starts:
                self._names_changed.add(lower)
            self._word_starts[lower] = tuple(sorted(set().union(*(word for word, _ in shapes))))
        else:
            del self._word_starts[lower]
            self._names_changed.add(lower)

    def file_entries(self, rel: str) -> list[Entry]:
        return list(self._by_file.get(rel, ()))

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_file.values())

    def _current(self) -> _Snapshot:
        snap = self._snapshot
        if snap is None:
            with self._lock:
                snap = self._snapshot
                if snap is None:  # not taken by another thread meanwhile
                    began = time.monotonic()
                    snap = self._snapshot = self._latest = self._take_snapshot()
                    self._taken = time.monotonic()
                    self._cost = self._taken - began
                    self._wanted = False
        return snap

    def _take_snapshot(self) -> _Snapshot:
        names = _sortedkeys_of(self._names, self._names_changed, self._word_starts)
        if names is not self._names:
            self._subsequences.update(self._names_changed, self._word_starts)
            self._set_names(names)
        self._initials = _sortedkeys_of(self._initials, self._initials_changed, self._by_initials)
        self._names_changed, self._initials_changed = set(), set()
        self._shared = True
        return _Snapshot(by_lower=self._groups, names=self._names, blob=self._blob, starts=self._starts,
                         word_starts=self._word_starts, initials=self._initials,
                         by_initials=self._by_initials, subsequences=self._subsequences.view())

    def _set_names(self, names: list[str]) -> None:
        self._names = names
        self._blob = "\n" + "\n".join(names) + "\n"
        self._starts = array("q", itertools.accumulate((len(n) + 1 for n in names[:-1]), initial=1) if names else ())

    # -- kept between sessions: the tables themselves, not computed again from the entries ----
    def state(self) -> dict[str, Any]:
        """The index as data (JSON's types) for `restore`: the entries by file and the tables of its
        search snapshot (taken first if a change followed the last one)."""
        while True:
            snap = self._current()
            with self._lock:
                if self._snapshot is snap:  # no change since it was taken
                    return self._state_of(snap)

    def _state_of(self, snap: _Snapshot) -> dict[str, Any]:
        place = {id(e): i for i, e in enumerate(itertools.chain.from_iterable(self._by_file.values()))}
        number = {name: i for i, name in enumerate(snap.names)}
        row = attrgetter(*_ROW)
        return {"row": _ROW, "files": [[rel, [row(e) for e in entries]] for rel, entries in self._by_file.items()],
                "names": snap.names,
                "groups": [[place[id(e)] for e in snap.by_lower[name]] for name in snap.names],
                "word_starts": [snap.word_starts[name] for name in snap.names],
                "initials": snap.initials,
                "by_initials": [[number[n] for n in snap.by_initials[ini]] for ini in snap.initials],
                "subsequences": self._subsequences.state(number)}

    def restore(self, state: dict[str, Any]) -> None:
        """Fill this empty index from `state` (an index's `state()`), which then answers as that index
        did, its search snapshot taken. A ValueError, the index left empty, when `state` is not one
        (TypeError, KeyError and IndexError too, from a state of another shape)."""
        by_file, groups = _groups_of(state)
        names, initials = state["names"], [str(ini) for ini in state["initials"]]
        if any(a >= b for a, b in itertools.pairwise(names)) or any(a >= b for a, b in itertools.pairwise(initials)):
            raise ValueError("index state: names or initials not sorted")
        word = {name: tuple(starts) for name, starts in zip(names, state["word_starts"], strict=True)}
        by_initials = {ini: tuple(names[i] for i in found)
                       for ini, found in zip(initials, state["by_initials"], strict=True)}
        subsequences = Subsequences.from_state(state["subsequences"], names)
        with self._lock:
            if self._by_file:
                raise ValueError("only an empty index is restored")
            self._by_file, self._groups, self._word_starts, self._by_initials = by_file, groups, word, by_initials
            self._set_names(names)
            self._initials, self._subsequences = initials, subsequences
            self._names_changed, self._initials_changed, self._snapshot = set(), set(), None
        self._current()

    def warm(self) -> None:
        """Take the search snapshot now (on a worker thread), not in the next search."""
        self._current()

    def refresh(self, every: float = 1.0) -> None:
        """Called by the thread that fills the index, after a batch: take a new snapshot if a
        search answered from a stale one (`search_latest`), at most once in `every` seconds and
        at most a third of the time (a snapshot of a large workspace takes up to a second)."""
        if self._wanted and self._snapshot is None and \
                time.monotonic() - self._taken >= max(every, 2 * self._cost):
            self._current()

    def lookup(self, name: str) -> list[Entry]:
        """Entries with exactly this name (case-sensitive). Reads the live table, not a snapshot:
        a hover after a save must not pay for the snapshot a search needs; a group is replaced
        whole, never changed in place, so no lock is needed."""
        return [e for e in self._groups.get(name.lower(), ()) if e.name == name]

    def search(self, query: str, limit: int = 200) -> list[Entry]:
        """Search the index as it is now (a snapshot is taken first if it changed)."""
        return self._current().search(query, limit)

    def search_latest(self, query: str, limit: int = 200) -> list[Entry]:
        """Search the last snapshot taken, even if files entered the index since, and ask the
        filling thread for a new one (`refresh`): while a workspace is being indexed a search
        never waits for a snapshot. Before the first snapshot, one is taken."""
        snap = self._snapshot
        if snap is None:
            snap = self._latest
            if snap is None:
                snap = self._current()
            else:
                self._wanted = True
        return snap.search(query, limit)


def _groups_of(state: dict[str, Any]) -> tuple[dict[str, list[Entry]], dict[str, tuple[Entry, ...]]]:
    """A state's entries by file, and its groups of them by lower-case name (an entry is given by its
    number, counted over the files in their order)."""
    if list(state["row"]) != list(_ROW):  # an entry of another shape
        raise ValueError(f"index state: entries of fields {state['row']}, not {_ROW}")
    by_file: dict[str, list[Entry]] = {}
    numbered: list[Entry] = []
    for rel, rows in state["files"]:
        made = by_file[str(rel)] = [Entry(intern(name), intern(kind), intern(container), rel, *rest)
                                    for name, kind, container, *rest in rows]
        numbered.extend(made)
    at = numbered.__getitem__
    groups = {name: tuple(map(at, refs)) for name, refs in zip(state["names"], state["groups"], strict=True)}
    if sum(map(len, groups.values())) != len(numbered) or not all(groups.values()):
        raise ValueError("index state: not every entry is in one group")
    return by_file, groups


def _sortedkeys_of(old: list[str], changed: set[str], current: dict) -> list[str]:
    """`current`'s keys sorted, from the sorted `old` and the keys added or removed since:
    a few are inserted or removed in a copy; after many (the first indexing), sort afresh.
    Returns `old` itself when nothing changed."""
    if not changed:
        return old
    if len(changed) > 64:
        return sorted(current)
    keys = list(old)
    for key in sorted(changed):
        at = bisect_left(keys, key)
        present = at < len(keys) and keys[at] == key
        if key in current and not present:
            keys.insert(at, key)
        elif key not in current and present:
            del keys[at]
    return keys


def _shape(name: str) -> tuple[list[int], str]:
    """A spelling's word starts and initials, computed when its name's spellings change (no cache
    of them per spelling is kept: memory)."""
    starts = word_starts(name)
    return starts, "".join(name[i] for i in starts).lower()


@dataclass(frozen=True, slots=True)
class _Snapshot:
    by_lower: dict[str, tuple[Entry, ...]]
    names: list[str]  # sorted lower-case names
    blob: str  # "\n" + the names joined by "\n" + "\n": substring search in C
    starts: array  # where each name starts in the blob
    word_starts: dict[str, tuple[int, ...]]
    initials: list[str]  # sorted
    by_initials: dict[str, tuple[str, ...]]
    subsequences: SubsequenceView

    def _name_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def search(self, query: str, limit: int) -> list[Entry]:
        q = query.strip().lower()
        if limit <= 0:
            return []
        if not q:
            return self._emit([self.names], limit)
        taken: set[str] = set()
        ranks: list[list[str]] = []

        def add(rank: list[str]) -> bool:
            fresh = [n for n in dict.fromkeys(rank) if n not in taken]  # a name once, in its best rank
            taken.update(fresh)
            ranks.append(fresh)
            return sum(len(self.by_lower[n]) for r in ranks for n in r) >= limit

        if add([q] if q in self.by_lower else []):
            return self._emit(ranks, limit, query.strip())
        lo = bisect_left(self.names, q)
        hi = bisect_left(self.names, q + "\uffff", lo)
        if add(self.names[lo:hi]):
            return self._emit(ranks, limit, query.strip())
        # substring occurrences, split into word-start and plain ones
        boundary: list[str] = []
        plain: list[str] = []
        seen: set[str] = set()
        seen_boundary: set[str] = set()
        if "\n" not in q:
            pos = self.blob.find(q)
            while pos != -1:
                idx = self._name_at(pos)
                name = self.names[idx]
                inner = pos - self.starts[idx]
                if inner > 0 and name not in taken:
                    if inner in self.word_starts[name]:
                        if name not in seen_boundary:  # also after a plain occurrence in the same name
                            boundary.append(name)
                            seen_boundary.add(name)
                    elif name not in seen:
                        plain.append(name)
                        seen.add(name)
                pos = self.blob.find(q, pos + 1)
        plain = [n for n in plain if n not in seen_boundary]
        lo = bisect_left(self.initials, q)
        hi = bisect_left(self.initials, q + "\uffff", lo)
        acronyms = [n for ini in self.initials[lo:hi] for n in self.by_initials[ini]]
        if add(boundary + acronyms):
            return self._emit(ranks, limit, query.strip())
        if add(plain):
            return self._emit(ranks, limit, query.strip())
        shown = sum(len(self.by_lower[n]) for r in ranks for n in r)
        add(self.subsequences.search(q, self.by_lower, taken, limit - shown))
        return self._emit(ranks, limit, query.strip())

    def _emit(self, ranks: list[list[str]], limit: int, query: str = "") -> list[Entry]:
        """Entries rank by rank, shorter names first; a name spelt exactly as typed first."""
        out: list[Entry] = []
        for rank in ranks:
            for name in sorted(rank, key=lambda n: (len(n), n)):
                group: Sequence[Entry] = self.by_lower[name]
                if query and any(e.name != query for e in group):
                    group = sorted(group, key=lambda e: e.name != query)  # stable: kind order kept
                for entry in group:
                    out.append(entry)
                    if len(out) >= limit:
                        return out
        return out
