"""The workspace keyword index: every class, function, method, module and Markdown heading
of every file, with a ranked fuzzy search fast enough for a repository the size of PyTorch.

Ranks, best first: exact name > prefix > word or camel-hump start (also acronyms:
`fsdp` finds FullyShardedDataParallel) > substring > subsequence; shorter names first
within a rank. Matching ignores case.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from repodoc_lsp.analysis.model import FileFacts, SymbolKind

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


def initials(name: str) -> str:
    return "".join(name[i] for i in word_starts(name)).lower()


def entries_of(rel: str, facts: FileFacts, module: str = "") -> list[Entry]:
    out = [Entry(s.name, s.kind.value, s.container, rel, s.line, s.col, s.end_line, s.anchor)
           for s in facts.symbols]
    if module:
        package, _, last = module.rpartition(".")
        out.append(Entry(last, MODULE, package, rel, 1, 0, 1))
    return out


class SymbolIndex:
    """Thread safe: writers replace a file's entries; searches use a snapshot rebuilt lazily."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_file: dict[str, list[Entry]] = {}
        self._snapshot: _Snapshot | None = None
        self._generation = 0  # bumped by every change: a snapshot built meanwhile is not kept
        self._shapes: dict[str, tuple[frozenset[int], str]] = {}  # name -> (word starts, initials)

    def set_file(self, rel: str, entries: list[Entry]) -> None:
        with self._lock:
            self._by_file[rel] = entries
            self._snapshot = None
            self._generation += 1

    def set_many(self, items: Iterable[tuple[str, list[Entry]]]) -> None:
        with self._lock:
            self._by_file.update(items)
            self._snapshot = None
            self._generation += 1

    def remove_file(self, rel: str) -> None:
        with self._lock:
            if self._by_file.pop(rel, None) is not None:
                self._snapshot = None
                self._generation += 1

    def retain(self, rels: set[str]) -> None:
        """Forget every file not in `rels`."""
        with self._lock:
            gone = set(self._by_file) - rels
            for rel in gone:
                del self._by_file[rel]
            if gone:
                self._snapshot = None
                self._generation += 1

    def file_entries(self, rel: str) -> list[Entry]:
        return list(self._by_file.get(rel, ()))

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_file.values())

    def _current(self) -> _Snapshot:
        snap = self._snapshot
        if snap is None:
            with self._lock:
                files = list(self._by_file.values())
                generation = self._generation
            snap = _Snapshot((e for entries in files for e in entries), self._shapes)
            with self._lock:
                if generation == self._generation:  # else a writer changed the index meanwhile
                    self._snapshot = snap
        return snap

    def warm(self) -> None:
        """Build the search snapshot now (on a worker thread), not in the next search."""
        self._current()

    def lookup(self, name: str) -> list[Entry]:
        """Entries with exactly this name (case-sensitive)."""
        return [e for e in self._current().by_lower.get(name.lower(), ()) if e.name == name]

    def search(self, query: str, limit: int = 200) -> list[Entry]:
        return self._current().search(query, limit)


_KIND_ORDER = {SymbolKind.CLASS.value: 0, SymbolKind.FUNCTION.value: 1, MODULE: 2,
               SymbolKind.METHOD.value: 3, SymbolKind.HEADING.value: 4}


def _shape(name: str, cache: dict[str, tuple[frozenset[int], str]]) -> tuple[frozenset[int], str]:
    shape = cache.get(name)
    if shape is None:
        starts = word_starts(name)
        shape = cache[name] = (frozenset(starts), "".join(name[i] for i in starts).lower())
    return shape


class _Snapshot:
    def __init__(self, entries: Iterable[Entry], shapes: dict[str, tuple[frozenset[int], str]]) -> None:
        self.by_lower: dict[str, list[Entry]] = {}
        for e in entries:
            self.by_lower.setdefault(e.name.lower(), []).append(e)
        for group in self.by_lower.values():
            group.sort(key=lambda e: (_KIND_ORDER.get(e.kind, 9), e.rel, e.line))
        self.names = sorted(self.by_lower)
        self.blob = "\n" + "\n".join(self.names) + "\n"
        self.starts: list[int] = []
        pos = 1
        for n in self.names:
            self.starts.append(pos)
            pos += len(n) + 1
        self.word_starts: dict[str, frozenset[int]] = {}
        by_initials: dict[str, set[str]] = {}
        for lower, group in self.by_lower.items():
            starts: frozenset[int] = frozenset()
            for original in {e.name for e in group}:
                word, ini = _shape(original, shapes)
                starts |= word
                by_initials.setdefault(ini, set()).add(lower)
            self.word_starts[lower] = starts
        self.initials = sorted(by_initials)
        self.by_initials = by_initials

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
            fresh = [n for n in rank if n not in taken]
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
        if "\n" not in q:
            pos = self.blob.find(q)
            while pos != -1:
                idx = self._name_at(pos)
                name = self.names[idx]
                inner = pos - self.starts[idx]
                if inner > 0 and name not in taken:
                    if inner in self.word_starts[name]:
                        if name not in seen:
                            boundary.append(name)
                            seen.add(name)
                    elif name not in seen:
                        plain.append(name)
                        seen.add(name)
                pos = self.blob.find(q, pos + 1)
        plain = [n for n in plain if n not in set(boundary)]
        lo = bisect_left(self.initials, q)
        hi = bisect_left(self.initials, q + "\uffff", lo)
        acronyms = [n for ini in self.initials[lo:hi] for n in self.by_initials[ini]]
        if add(boundary + acronyms):
            return self._emit(ranks, limit, query.strip())
        if add(plain):
            return self._emit(ranks, limit, query.strip())
        # subsequence: the engine skips ahead to the first character in C
        pattern = re.compile("[^\\n]*?".join(re.escape(c) for c in q))
        found: dict[str, None] = {}
        for m in pattern.finditer(self.blob):
            found.setdefault(self.names[self._name_at(m.start())])
        add(list(found))
        return self._emit(ranks, limit, query.strip())

    def _emit(self, ranks: list[list[str]], limit: int, query: str = "") -> list[Entry]:
        """Entries rank by rank, shorter names first; a name spelt exactly as typed first."""
        out: list[Entry] = []
        for rank in ranks:
            for name in sorted(rank, key=lambda n: (len(n), n)):
                group = self.by_lower[name]
                if query and any(e.name != query for e in group):
                    group = sorted(group, key=lambda e: e.name != query)  # stable: kind order kept
                for entry in group:
                    out.append(entry)
                    if len(out) >= limit:
                        return out
        return out
