"""The workspace symbol graph: every definition, who names it, its bases and subclasses.

Built from the analysis alone (nothing from the workspace is imported or run): each Python file's
view (`views.py`), names resolved as Python binds them (`resolution.py`), the tables of who names
what kept by link passes (`linking.py`). `update` re-links one file; when the names it offers
changed, the files whose resolution consulted it are re-linked too. A graph built once and never
updated (`repodoc generate`) is `once.BuiltOnce`: the same resolution, without what updates need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.linking import Link, Linker, Links
from repodoc_lsp.knowledge.views import (
    KIND_BITS,
    KIND_CODE,
    KIND_MASK,
    KINDS,
    Def,
    Key,
    LaterSketch,
    PartsOf,
    Sketch,
    Use,
    View,
    base_name,
)

__all__ = ["Def", "Graph", "Key", "LaterSketch", "Link", "Sketch", "Use", "base_name", "files_of"]

NO_USERS: Mapping[str, tuple[int, ...]] = {}


class Graph(Linker):
    """Definitions, uses, bases and subclasses of one workspace's Python files."""

    def __init__(self, relations: Relations, facts: Iterable[tuple[str, FileFacts | Sketch | LaterSketch]], *,
                 parts: PartsOf, pause: Callable[[], None] | None = None,
                 linked: Links | None = None, views: MutableMapping[str, View] | None = None,
                 only: Iterable[str] | None = None) -> None:
        """Each file's facts, or the sketch of its facts made beforehand (a Python file's); `parts`:
        the part map of a file's page, from its facts (`render.parts`; the graph keeps each file's
        as part of what a link into it depends on); `pause` is called between every two files
        viewed or linked (the server's requests go first); `linked`: what an earlier link of files
        kept (`links`), taken instead of linking them, the caller vouching that every file each
        consulted has the content it had then, or a `Taken` (an earlier graph whole: its stale files
        linked again); `views`: where the views are kept (a `held.HeldViews`
        drops views, made again when read: a share of a tree too large to hold); `only`: link these files
        alone (the others are read by their lookups, never linked: a link job's share)."""
        super().__init__(relations, parts, pause)
        if views is not None:
            self._views = views
        for rel, f in facts:  # each file's facts are read here only: they may be streamed
            view = self._view(rel, f)
            if view is not None:
                self._views[rel] = view
            if pause is not None:
                pause()
        self.links_taken, gone = self._take(linked)
        self._relink(set(self._views if only is None else only) - self.links_taken, gone)
        self._pause = None  # updates come one batch at a time, under the lock


    # -- queries --------------------------------------------------------------------
    def definition(self, rel: str, qualname: str) -> Def | None:
        view = self._views.get(rel)
        return view.definition(qualname) if view else None

    def definitions(self, rel: str) -> list[Def]:
        view = self._views.get(rel)
        return list(view.ordered()) if view else []

    def outline(self, rel: str, kinds: Iterable[str] | None = None, top: bool = False) -> list[tuple[str, str]]:
        """(qualname, kind) of each of `definitions(rel)`, in their order, without making them (`kinds`:
        only those of these kinds; `top`: only those at module level)."""
        view = self._views.get(rel)
        return view.outline(kinds, top) if view else []

    def outline_users(self, rel: str, kinds: Iterable[str], every: str = "") -> list[tuple[str, str, Mapping[
            str, tuple[int, ...]]]]:
        """(qualname, kind, `users_table`) of each definition of `rel` of `kinds` that some file names
        (its own included), and of each of kind `every` named or not, in `outline`'s order: one call for
        a page's cross references, not one per definition (most are named by none)."""
        view = self._views.get(rel)
        if view is None:
            return []
        if rel in self._later_users:
            self._users_read(rel)
        defs, users, names = view.defs, self._users, KINDS
        codes = {KIND_CODE[k] for k in kinds}
        always = KIND_CODE[every] if every else -1
        return [(q, names[k], table or NO_USERS) for q in view.ordered_names()
                if (k := defs[q] & KIND_MASK) in codes and ((table := users.get((rel, q))) is not None or k == always)]

    def kind(self, key: Key) -> str:
        """The kind of definition `key` ("" when the graph has no such definition)."""
        view = self._views.get(key[0])
        return view.kind(key[1]) if view else ""

    def at(self, rel: str, line: int) -> Def | None:
        """The innermost definition whose span holds `line` (1-based)."""
        view = self._views.get(rel)
        if view is None:
            return None
        qual = view.within(line)
        return view.definition(qual) if qual else None

    def named(self, rel: str, line: int, name: str) -> Def | None:
        """The definition of `name` on `line` of `rel` (a class, function or attribute)."""
        view = self._views.get(rel)
        if view is None:
            return None
        return next((view.definition(q) for q, c in view.defs.items()
                     if c >> KIND_BITS == line and q and q.rpartition(".")[2] == name), None)

    def users_table(self, key: Key) -> Mapping[str, tuple[int, ...]]:
        """Every file that names the definition, its own included, with the lines: the graph's own
        table, not a copy (read it, never change it; `users` copies)."""
        return self._users_of(key) or NO_USERS

    def users(self, key: Key, own: bool = False) -> dict[str, tuple[int, ...]]:
        """Files other than its own (`own`: and its own) that name the definition, with the lines."""
        table = self._users_of(key)
        if not table:  # most definitions (pages ask for each)
            return {}
        if own or key[0] not in table:
            return dict(table)
        return {rel: lines for rel, lines in table.items() if rel != key[0]}

    def user_count(self, key: Key) -> int:
        """How many files other than its own name the definition (`len(users(key))`)."""
        table = self._users_of(key)
        return 0 if table is None else len(table) - (key[0] in table)

    def uses(self, key: Key) -> list[Use]:
        """Every place the definition is named, its own file included, in file and line order."""
        found = []
        for rel, lines in sorted((self._users_of(key) or NO_USERS).items()):
            view = self._views.get(rel)
            for line in lines:
                found.append(Use(rel, line, view.within(line) if view else ""))
        return found

    def bases(self, key: Key) -> tuple[Key, ...]:
        """The workspace classes a class names as its bases."""
        return self._shown_bases.get(key, ())

    def subclasses(self, key: Key) -> list[Key]:
        """Workspace classes that name this class as a base, direct only."""
        return sorted(self._subclasses.get(key, ()))

    def members(self, key: Key) -> list[Def]:
        """The definitions directly inside a class (methods, attributes, nested classes), in line order."""
        view = self._views.get(key[0])
        return list(view.members(key[1])) if view and key[1] else []

    def member_names(self, key: Key, public: bool = False) -> tuple[str, ...]:
        """The names of `members(key)`, in their order, without making them (`public`: those not
        starting with `_`, each once)."""
        view = self._views.get(key[0])
        if view is None or not key[1]:
            return ()
        return tuple(view.public_member_names(key[1])) if public else view.member_names(key[1])

    def member_lists(self, key: Key) -> tuple[str, tuple[str, ...], list[str]]:
        """`kind(key)`, `member_names(key)` and `member_names(key, public=True)` in one look-up of its
        file (a page's inherited members ask for them of every ancestor); the public names as the
        graph's own list, not a copy (read it, never change it)."""
        view = self._views.get(key[0])
        if view is None or not key[1]:
            return (view.kind(key[1]) if view is not None else ""), (), []
        return view.kind(key[1]), view.member_names(key[1]), view.public_member_names(key[1])

    def ancestors(self, key: Key) -> list[Key]:
        """The workspace classes a class derives from at any depth, nearest first (depth-first,
        left to right, each once: Python's method resolution order when bases do not share ancestors)."""
        bases = self._shown_bases  # one table throughout, whatever a link step does meanwhile
        direct = bases.get(key)
        if not direct:  # most classes
            return []
        if len(direct) == 1 and direct[0] not in bases and direct[0] != key:  # one base, itself of none
            return [direct[0]]
        found: list[Key] = []
        seen = {key}
        todo = list(reversed(direct))
        while todo:
            base = todo.pop()
            if base in seen:
                continue
            seen.add(base)
            found.append(base)
            todo.extend(reversed(bases.get(base, ())))
        return found

    def mentioned(self, rel: str) -> dict[str, Key]:
        """The names `rel`'s docstrings mention (roles, backticked dotted names) and its signatures'
        annotations name that resolve, in the file's namespace or as an absolute dotted name, to
        workspace definitions."""
        return self._mentioned.get(rel, {})

    def heirs(self, rels: Iterable[str]) -> set[str]:
        """The files of every class deriving, at any depth, from a class of `rels` (their pages
        list members inherited from `rels`)."""
        todo = [d.key for rel in rels for d in self.definitions(rel) if d.kind == "class"]
        seen: set[Key] = set()
        while todo:
            for sub in self._subclasses.get(todo.pop(), ()):
                if sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
        return files_of(seen)

    def sketch(self, rel: str) -> Sketch | None:
        """What the graph took of `rel`'s facts, without its imports (the relations hold them): the
        sketch a later build of the same content can start from (None: no view of `rel`)."""
        view = self._views.get(rel)
        if view is None:
            return None
        own = (view.defs, view.starts, view.ends, view.quals, view.bases, view.mentions, view.parts)
        return Sketch(own, (), view.all_names, view.refs)

    def resolve(self, rel: str, dotted: str) -> Key | None:
        """What a dotted name read in `rel` names (None: not a workspace definition)."""
        with self._lock:
            return self._resolve(rel, dotted, set())


def files_of(keys: Iterable[Key]) -> set[str]:
    """The files that define these definitions."""
    return {rel for rel, _ in keys}
