"""A symbol graph built once and never updated (`repodoc generate`): the same resolution as `Graph`,
without what updates need (surfaces and mentions' marks are not kept; each file's dependencies are,
for a later graph to take its links: `links`), and with two memos across files that only such a graph
keeps (each answer with the files it consulted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.graph import Graph
from repodoc_lsp.knowledge.linking import Links
from repodoc_lsp.knowledge.resolution import Linked
from repodoc_lsp.knowledge.views import Key, LaterSketch, PartsOf, Sketch, View


class BuiltOnce(Graph):
    """`Graph` that refuses updates. Memoises what each `from module import name` names and what
    each absolute dotted name names (`_import`, `_absolute`): a tenth of its build (bench/README.md,
    "Symbol graph and keyword index: the figures")."""

    updatable = False

    def __init__(self, relations: Relations, facts: Iterable[tuple[str, FileFacts | Sketch | LaterSketch]], *,
                 parts: PartsOf, pause: Callable[[], None] | None = None,
                 linked: Links | None = None, views: MutableMapping[str, View] | None = None,
                 only: Iterable[str] | None = None) -> None:
        # module -> name -> (what it names, the files consulted)
        self._imported: dict[str, dict[str, tuple[Key | None, tuple[str, ...]]]] = {}
        self._absolutes: dict[str, tuple[Key | None, tuple[str, ...]]] = {}
        super().__init__(relations, facts, parts=parts, pause=pause, linked=linked, views=views, only=only)

    def _forget_lookups(self) -> None:
        super()._forget_lookups()
        self._imported.clear()
        self._absolutes.clear()

    def _remember(self, rel: str, linked: Linked) -> bool:
        """What the file consulted, no mark: a graph never linked again has nothing to compare with
        (its links are kept for a later graph of the same contents, `links`)."""
        self._deps[rel] = tuple(linked.deps)
        return False

    def _import(self, module: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """`Graph._import`, memoised with the files it consulted once the module's lookup of `name` is
        (not cut short by `seen`)."""
        names = self._imported.get(module)
        known = None if names is None or not name else names.get(name)
        if known is not None:
            deps.update(known[1])
            return known[0]
        mine: set[str] = set()
        found = super()._import(module, name, mine, seen)
        deps |= mine
        if name:
            rel = self.relations.file_of.get(module)
            if rel is None or rel not in self._views or name in self._memo.get(rel, ()):
                self._imported.setdefault(module, {})[name] = (found, tuple(mine))
        return found

    def _absolute(self, dotted: str, deps: set[str]) -> Key | None:
        known = self._absolutes.get(dotted)
        if known is None:
            mine: set[str] = set()
            known = self._absolutes[dotted] = (super()._absolute(dotted, mine), tuple(mine))
        deps.update(known[1])
        return known[0]
