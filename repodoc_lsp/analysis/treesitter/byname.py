"""Who names what, by name, across the files read with tree-sitter (C, C++, CUDA, JS, TS, Go, Rust,
Java): their definitions have no resolution (no symbol graph), so a file page's "Used by" of one of
them lists the files that name it, marked as name matches.

`NameUsers` is a workspace-wide relation, kept as the import relations are (built from every such
file's facts, updated a file at a time): for each name a tree-sitter file defines, the files naming it
(`FileFacts.refs` of a tree-sitter file: the names it uses, with their first lines). Only names some
file defines are tabled; each file's own `refs` text is kept (one string a file) so that a name newly
defined finds its users without reading every file again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from repodoc_lsp.analysis.model import FileFacts, Symbol, SymbolKind
from repodoc_lsp.analysis.treesitter import SUFFIXES

# a definition's users listed at most (pages and hover show this many, and the count of all)
SHOWN_USERS = 20
_KINDS = (SymbolKind.CLASS, SymbolKind.FUNCTION, SymbolKind.METHOD)


def is_tree_sitter(rel: str) -> bool:
    return rel.lower().endswith(SUFFIXES)


def _first_lines(refs: str, wanted: Collection[str] | None = None) -> dict[str, int]:
    """name -> the first line naming it, of `refs` (a `FileFacts.refs` text), of the names in `wanted`
    (None: all); the other names' lines are not parsed."""
    found = {}
    for row in refs.split("\n") if refs else ():
        name, _, lines = row.partition(" ")
        if wanted is None or name in wanted:
            found[name] = int(lines.partition(",")[0])
    return found


def shows_users(s: Symbol) -> bool:
    """Whether "Used by" is shown for a definition of a tree-sitter file (classes, functions, methods,
    macros; not namespaces: every file of one names it)."""
    return s.kind in _KINDS and s.word != "namespace" and len(s.name) > 2


def defined_names(facts: FileFacts) -> frozenset[str]:
    """The names of a tree-sitter file's definitions that show their users (`shows_users`)."""
    return frozenset(s.name for s in facts.symbols if shows_users(s))


class NameUsers:
    """name -> file -> the first line naming it, for the names tree-sitter files define."""

    def __init__(self, files: Iterable[tuple[str, FileFacts]] = ()) -> None:
        self._refs: dict[str, str] = {}  # file -> its `refs` text
        self._defs: dict[str, frozenset[str]] = {}  # file -> the names it defines
        self._definers: dict[str, set[str]] = {}  # name -> files defining it
        self._users: dict[str, dict[str, int]] = {}  # name -> file -> first line
        for rel, facts in files:
            if is_tree_sitter(rel):
                self._take(rel, facts)
        for rel, refs in self._refs.items():
            for name, line in _first_lines(refs, self._definers).items():
                self._users.setdefault(name, {})[rel] = line

    def _take(self, rel: str, facts: FileFacts) -> None:
        if facts.refs:
            self._refs[rel] = facts.refs
        defs = defined_names(facts)
        if defs:
            self._defs[rel] = defs
            for name in defs:
                self._definers.setdefault(name, set()).add(rel)

    def users(self, name: str) -> Mapping[str, int]:
        """The files naming `name` (defining files included), with the first line naming it in each."""
        return self._users.get(name, {})

    def counted(self, name: str, rel: str) -> tuple[list[tuple[str, int]], int]:
        """The files other than `rel` naming `name`: the first `SHOWN_USERS` by path, with the first
        line naming it in each, and how many files in all."""
        table = self.users(name)
        found = sorted((r, line) for r, line in table.items() if r != rel)
        return found[:SHOWN_USERS], len(found)

    def update_many(self, files: Mapping[str, FileFacts | None]) -> set[str]:
        """Take the new facts of `files` (None: gone). Returns the files defining a name whose users
        changed (their pages' "Used by" changed), the changed files included."""
        touched: set[str] = set()  # names whose users changed
        fresh: set[str] = set()  # names newly defined: their users looked for in every file
        for rel, facts in files.items():
            if not is_tree_sitter(rel):
                continue
            old_uses = _first_lines(self._refs.pop(rel, ""))
            for name in self._defs.pop(rel, ()):
                definers = self._definers[name]
                definers.discard(rel)
                if not definers:
                    del self._definers[name]
                    self._users.pop(name, None)
            if facts is not None:
                self._take(rel, facts)
                fresh.update(n for n in self._defs.get(rel, ()) if n not in self._users)
            new_uses = _first_lines(self._refs.get(rel, ""))
            for name in old_uses.keys() | new_uses.keys():
                # (a name defined anew is looked for in every file below: no table of this file alone)
                if old_uses.get(name) != new_uses.get(name) and name in self._definers and name not in fresh:
                    touched.add(name)
                    table = dict(self._users.get(name, {}))  # replaced, not changed: hovers read it
                    if name in new_uses:
                        table[rel] = new_uses[name]
                    else:
                        table.pop(rel, None)
                    self._users[name] = table
        fresh = {n for n in fresh if n in self._definers and n not in self._users}
        if fresh:
            self._find(fresh)
            touched |= fresh
        changed = {rel for rel in files if is_tree_sitter(rel)}
        for name in touched:
            changed |= self._definers.get(name, set())
        return changed

    def _find(self, names: set[str]) -> None:
        """The users of newly defined `names`, from every file's `refs`."""
        found: dict[str, dict[str, int]] = {name: {} for name in names}
        for rel, refs in self._refs.items():
            text = "\n" + refs
            if any(f"\n{name} " in text for name in names):
                for name, line in _first_lines(refs, names).items():
                    found[name][rel] = line
        self._users.update(found)
