"""A symbol graph built once and never updated (`repodoc generate`): the same resolution as `Graph`,
without what updates need (each file's dependencies, surfaces and mentions' marks are not kept), and
with two memos that only such a graph may keep (an answer memoised without the files it consulted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.graph import Graph
from repodoc_lsp.knowledge.resolution import Linked
from repodoc_lsp.knowledge.views import Key, PartsOf, Sketch

_UNKNOWN: Key = ("", "\x00")  # not memoised (no definition is it)


class BuiltOnce(Graph):
    """`Graph` that refuses updates. Memoises what each `from module import name` names and what
    each absolute dotted name names (`_import`, `_absolute`): a tenth of its build (bench/README.md,
    "Symbol graph and keyword index: the figures")."""

    updatable = False

    def __init__(self, relations: Relations, facts: Iterable[tuple[str, FileFacts | Sketch]], *,
                 parts: PartsOf, pause: Callable[[], None] | None = None) -> None:
        self._imported: dict[str, dict[str, Key | None]] = {}  # module -> name -> what it names
        self._absolutes: dict[str, Key | None] = {}
        super().__init__(relations, facts, parts=parts, pause=pause)

    def _forget_lookups(self) -> None:
        super()._forget_lookups()
        self._imported.clear()
        self._absolutes.clear()

    def _remember(self, rel: str, linked: Linked) -> bool:
        """Nothing: a graph never linked again has nothing to compare with, nothing to re-link."""
        return False

    def _import(self, module: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """`Graph._import`, memoised once the module's lookup of `name` is (not cut short by `seen`)."""
        names = self._imported.get(module)
        known = _UNKNOWN if names is None or not name else names.get(name, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        found = super()._import(module, name, deps, seen)
        if name:
            rel = self.relations.file_of.get(module)
            if rel is None or rel not in self._views or name in self._memo.get(rel, ()):
                self._imported.setdefault(module, {})[name] = found
        return found

    def _absolute(self, dotted: str, deps: set[str]) -> Key | None:
        found = self._absolutes.get(dotted, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._absolutes[dotted] = super()._absolute(dotted, deps)
        return found
