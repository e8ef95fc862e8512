"""The graph's tables of relations, and how a link pass keeps them: who names each definition
(`_users`), each class's workspace bases and subclasses, what each file's docstrings mention, and
what each file's resolution consulted (`_deps`), so that a change re-links only the files it can
alter. The first build is a link pass of every file against empty tables, or takes an earlier graph's
links (`Link`, `Taken`) and links only the files whose links no longer hold.

Readers on other threads see whole values: a link pass replaces a definition's table of users and
the tables of bases and subclasses, never changes them in place once the graph is built.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias, cast

from repodoc_lsp.analysis.model import FileFacts, Language
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.resolution import NAME, Linked, Resolver
from repodoc_lsp.knowledge.views import (
    Key,
    LaterSketch,
    LaterView,
    PartsOf,
    Sketch,
    View,
    sketch_of,
    sorted_lines,
)

Users = dict[Key, dict[str, tuple[int, ...]]]
# definition -> file -> its lines now (None: it names it no more), gathered over a link pass
Delta = dict[Key, dict[str, "tuple[int, ...] | None"]]


@dataclass(frozen=True, slots=True)
class Link:
    """What linking one file kept (`Linker.links`): the definitions it names with the lines, its
    classes' workspace bases (by qualname), what its docstrings' mentions name, and the files (and
    NAME + module names) it consulted. A later graph of the same contents takes it as it is
    (`Graph(linked=...)`): it holds while every file it consulted has the content it had."""

    out: Mapping[Key, tuple[int, ...]]
    bases: dict[str, tuple[Key, ...]]
    mentioned: dict[str, Key]
    deps: tuple[str, ...]


# A definition's users by its file: qualname -> file naming it -> the lines
FileUsers = Mapping[str, dict[str, tuple[int, ...]]]


@dataclass(frozen=True, slots=True)
class Taken:
    """An earlier graph of the same files taken whole (`repodoc generate` after an edit, from its saved run):
    every file's link (each `out` a mapping its maker may decode when first read), the users' tables of each
    defined file (`FileUsers`, the same: decoded when a query or a link pass first reads that file's), and the
    files whose links no longer hold (`stale`: a file they consulted changed), linked again as an update.
    Its maker checked it whole beforehand (`store/sketches.py`): reading it later cannot fail."""

    links: Mapping[str, Link]
    users: Mapping[str, FileUsers]
    stale: frozenset[str]


# What a graph's build takes of an earlier link (`Graph(linked=...)`): the links that hold, or a `Taken`
Links: TypeAlias = "Mapping[str, Link] | Taken"


class Linker(Resolver):
    """A link pass over files (`_relink`) and the tables it keeps; updates as link passes."""

    # False: a graph built once and never updated keeps no dependencies, surfaces or marks (`once.py`)
    updatable = True

    def __init__(self, relations: Relations, parts: PartsOf, pause: Callable[[], None] | None) -> None:
        super().__init__(relations)
        self._parts = parts  # each file's part map, from its facts: the caller's rule
        # definition -> file -> lines. What a file names is read from it when the file re-links (`_named_by`)
        self._users: Users = {}
        # defined file -> its users' tables not read yet (`Taken`): moved into `_users` when first read
        self._later_users: dict[str, FileUsers] = {}
        self._later_lock = threading.Lock()  # readers on any thread move them (`_users_of`)
        # file -> what it names, kept only by a graph that took a `Taken` (`_named_by` reads it: a pass over
        # every table would read every file's saved tables); None: not kept (memory: the server's graph)
        self._outs: dict[str, Mapping[Key, tuple[int, ...]]] | None = None
        self._shown_bases: dict[Key, tuple[Key, ...]] = {}  # what queries read: replaced once a pass ends
        self._classes: dict[str, list[Key]] = {}  # file -> its classes with workspace bases
        self._subclasses: dict[Key, frozenset[Key]] = {}
        # file -> files (and NAME + module names) its resolution consulted; only iterated (a change
        # finds the files that consulted it in one pass, `_dependents`), so a tuple
        self._deps: dict[str, tuple[str, ...]] = {}
        self._mentioned: dict[str, dict[str, Key]] = {}  # file -> name its docstrings mention -> definition
        self._marks: dict[str, int] = {}  # file -> digest of its mentions' definitions, kinds and parts
        self._unmarked: set[str] = set()  # files whose link was taken, their mark not made yet
        self._lock = threading.Lock()  # resolution and updates (both fill the memo)
        self._pause = pause  # called between two files linked (the server's requests go first)

    def _view(self, rel: str, facts: FileFacts | Sketch | LaterSketch | None) -> View | None:
        """The view of a file (None: not a Python file, or gone), from its facts or its sketch."""
        if isinstance(facts, LaterSketch):
            return LaterView(rel, facts, self.relations)
        if isinstance(facts, Sketch):
            return View(rel, facts, self.relations)
        if facts is not None and facts.language is Language.PYTHON:
            return View(rel, sketch_of(facts, self._parts(facts)), self.relations)
        return None

    def part(self, key: Key) -> int:
        """The part of its file's page that holds definition `key` (1: the page itself)."""
        view = self._views.get(key[0])
        kind = view.kind(key[1]) if view is not None else ""
        return view.parts.get((kind, key[1]), 1) if view is not None and kind else 1

    # -- what links kept, for a later graph of the same contents ---------------------------
    def links(self) -> dict[str, Link]:
        """What linking each file kept, for a later build of the same contents to take as it is
        (`_take_links`): files whose dependencies were not kept are left out."""
        with self._lock:
            out = self._outs if self._outs is not None else self._named_by(set(self._deps))
            return {rel: Link(out.get(rel, {}), {key[1]: self._bases[key] for key in self._classes.get(rel, ())},
                              self._mentioned.get(rel, {}), deps)
                    for rel, deps in self._deps.items() if rel in self._views}

    def users_by_file(self) -> dict[str, FileUsers]:
        """Who names each file's definitions, by the defined file (`FileUsers`): what a later graph of the same
        files takes whole (`Taken`). A file's tables taken from a `Taken` and never read are passed on as
        they came."""
        with self._lock, self._later_lock:
            found: dict[str, dict[str, dict[str, tuple[int, ...]]]] = {}
            for (rel, qual), table in self._users.items():
                found.setdefault(rel, {})[qual] = table
            return {**found, **self._later_users}

    def _take(self, linked: Links | None) -> tuple[set[str], set[str]]:
        """Take what an earlier link kept (`Graph(linked=...)`): the files taken, and those of a `Taken` that
        have no view now (unlinked by the build's link pass)."""
        if isinstance(linked, Taken):
            return self._take_whole(linked)
        return (self._take_links(linked) if linked else set()), set()

    def _take_links(self, links: Mapping[str, Link]) -> set[str]:
        """Take what an earlier link of some files kept, as if they were linked now (linking every file
        to re-plan one was a third of a run after an edit); the caller vouches that each file their
        links consulted has the content it had then. Returns the files taken (the others are linked)."""
        taken = set()
        for rel in sorted(links.keys() & self._views.keys()):  # the users' tables in a build's order
            link = links[rel]
            taken.add(rel)
            for key, lines in link.out.items():
                table = self._users.get(key)
                if table is None:
                    self._users[key] = {rel: lines}
                else:
                    table[rel] = lines
            self._take_rest(rel, link)
        self._take_subclasses()
        return taken

    def _take_whole(self, taken: Taken) -> tuple[set[str], set[str]]:
        """Take an earlier graph whole: its users' tables and each link's `out` as they are, read when first
        asked (decoding every file's link and filling the tables from them was a sixth of a run after an
        edit); bases, mentions and dependencies now (subclasses and `_dependents` need every file's). The
        build's link pass then links the stale files and unlinks those without a view, as an update does,
        against the tables and outs taken here. Returns what `_take` does."""
        links, views = taken.links, self._views
        self._outs = {rel: link.out for rel, link in links.items()}
        for rel in links.keys() & views.keys():
            self._take_rest(rel, links[rel])
        self._later_users = dict(taken.users)
        self._take_subclasses()
        return (links.keys() & views.keys()) - taken.stale, links.keys() - views.keys()

    def _take_rest(self, rel: str, link: Link) -> None:
        """Take a link's bases, mentions and dependencies (its `out` is the caller's)."""
        if link.bases:
            self._classes[rel] = [(rel, qual) for qual in link.bases]
            self._bases.update(((rel, qual), bases) for qual, bases in link.bases.items())
        if link.mentioned:
            self._mentioned[rel] = link.mentioned
        self._deps[rel] = link.deps
        if self.updatable and link.mentioned:
            self._unmarked.add(rel)  # made when an update needs it (`_mark_before`)
        elif self.updatable:
            self._marks[rel] = self._mark(link.mentioned)

    def _take_subclasses(self) -> None:
        """The subclasses' tables, and the bases queries read, made from the bases taken."""
        subclasses: dict[Key, set[Key]] = {}
        for key, bases in self._bases.items():
            for base in bases:
                subclasses.setdefault(base, set()).add(key)
        self._subclasses = {base: frozenset(subs) for base, subs in subclasses.items()}
        self._shown_bases = dict(self._bases)

    def consulting(self, rels: Iterable[str]) -> set[str]:
        """The files whose last link consulted any of `rels` (their kept links hold no more once
        `rels` changed)."""
        return self._dependents(set(rels))

    # -- updates ------------------------------------------------------------------------
    def update(self, rel: str, facts: FileFacts | None) -> set[Key]:
        """Re-link one file (None: it is gone) whose module name did not change (files added or
        removed: `restructure`). Returns the definitions whose uses, bases or subclasses changed,
        and `(file, "")` of files whose docstring mentions resolve elsewhere."""
        return self.update_many({rel: facts})

    def update_many(self, files: Mapping[str, FileFacts | None]) -> set[Key]:
        """`update` of several files as one step (a checkout's changed files): the files that
        consulted any of them are found once and each re-linked once."""
        with self._lock:
            self._updatable()
            return self._update(files)

    def restructure(self, relations: Relations, changed: Mapping[str, FileFacts | None],
                    facts: Callable[[str], FileFacts | None]) -> set[Key]:
        """Files appeared or vanished: `relations` holds the workspace's new module names and
        `changed` the facts of every file added, changed or removed (None) since the graph last
        heard. Re-links those files, files whose module name changed (`facts` gives theirs),
        files that looked up a name now of another file (or of none) and files that consulted
        a file whose names changed; not the rest. Returns what `update` does."""
        with self._lock:
            self._updatable()
            old, self.relations = self.relations, relations
            renamed = [n for n in old.file_of.keys() | relations.file_of.keys()
                       if old.file_of.get(n) != relations.file_of.get(n)]
            # looked up as such, or (no workspace module started so) as their top level
            names = {NAME + n for n in renamed} | {NAME + top for n in renamed
                                                    if (top := n.partition(".")[0]) not in old.top_level}
            moved = {rel for rel in old.module_of.keys() | relations.module_of.keys()
                     if rel not in changed and old.module_of.get(rel) != relations.module_of.get(rel)}
            return self._update({**changed, **{rel: facts(rel) for rel in moved}}, names, moved)

    def _updatable(self) -> None:
        if not self.updatable:
            raise RuntimeError("this symbol graph was built without its dependencies: it cannot be updated")

    def _update(self, files: Mapping[str, FileFacts | None], names: Iterable[str] = (),
                moved: Iterable[str] = ()) -> set[Key]:
        relink: set[str] = set()
        asked = set(names)  # files and names whose dependents re-link
        if self._unmarked:
            self._mark_before(set(files) | self._dependents(set(files) | asked))
        moved = set(moved)
        gone = set()
        for rel, facts in files.items():
            old = self._views.get(rel)
            new = self._view(rel, facts)
            if new is None:
                self._views.pop(rel, None)
                if old is not None:
                    gone.add(rel)
            else:
                self._views[rel] = new
                relink.add(rel)
            if old is None or new is None or old.surface != new.surface or rel in moved:
                asked.add(rel)
        return self._relink((relink | self._dependents(asked)) - gone, gone)

    def _dependents(self, asked: set[str]) -> set[str]:
        """The files whose last link consulted any of `asked` (files, or NAME + module names): one
        pass over every file's dependencies, when a change asks (no reverse table is kept: memory)."""
        if not asked:
            return set()
        return {rel for rel, deps in self._deps.items() if not asked.isdisjoint(deps)}

    # -- a link pass -------------------------------------------------------------------
    def _relink(self, rels: set[str], gone: set[str]) -> set[Key]:
        """Link the files `rels` afresh and unlink `gone`, as one step: all are unlinked first
        (none reads another's stale bases), then linked in order, and the tables requests read
        (`_users`, `_subclasses`) are replaced once per definition that changed. Returns the
        definitions whose uses, bases or subclasses changed, and `(file, "")` of files whose
        docstring mentions resolve elsewhere."""
        rels = {rel for rel in rels if rel in self._views}
        self._forget_lookups()
        old_out = self._named_by(rels | gone)
        old_bases = self._unlink(rels | gone, gone)
        changed: set[Key] = set()
        users: Delta = {}
        pause, outs = self._pause, self._outs
        for rel in sorted(rels):
            if pause is not None:
                pause()
            linked = self._link(rel)
            if self._keep(rel, linked):
                changed.add((rel, ""))
            before = old_out.pop(rel, {})
            now = {key: sorted_lines(found) for key, found in linked.out.items()}
            for key, lines in now.items():
                if before.pop(key, None) != lines:
                    users.setdefault(key, {})[rel] = lines
            for key in before:  # named before, not now
                users.setdefault(key, {})[rel] = None
            if outs is not None:
                outs[rel] = now
        for rel, before in old_out.items():  # gone
            for key in before:
                users.setdefault(key, {})[rel] = None
        changed |= self._replace_users(users)
        changed |= self._replace_bases(old_bases, rels)
        self._forget_lookups()
        return changed

    def _unlink(self, rels: set[str], gone: set[str]) -> dict[Key, tuple[Key, ...]]:
        """Forget what linking `rels` kept (their classes' bases, returned; their dependencies), and
        everything of `gone`."""
        old_bases: dict[Key, tuple[Key, ...]] = {}
        for rel in rels:
            for key in self._classes.pop(rel, ()):
                old_bases[key] = self._bases.pop(key, ())
            self._deps.pop(rel, None)
        for rel in gone:
            if self._outs is not None:
                self._outs.pop(rel, None)
            self._mentioned.pop(rel, None)  # a re-linked file's are replaced by `_keep`
            self._marks.pop(rel, None)
            self._unmarked.discard(rel)
        return old_bases

    def _keep(self, rel: str, linked: Linked) -> bool:
        """Keep what linking `rel` found beside its users (its classes' bases, its mentions, what it
        consulted); True when the definitions its mentions resolve to, or their parts, changed."""
        if linked.classes:
            self._classes[rel] = linked.classes
        mentioned = linked.mentioned
        if mentioned:
            self._mentioned[rel] = mentioned
        else:
            self._mentioned.pop(rel, None)
        return self._remember(rel, linked)

    def _remember(self, rel: str, linked: Linked) -> bool:
        """Keep what an update compares and re-links by: the digest of the definitions (with their
        kinds and parts) the file's mentions name, and what its resolution consulted; True when the
        digest changed."""
        mark = self._mark(linked.mentioned)
        self._unmarked.discard(rel)  # marked before the update (`_mark_before`)
        moved = self._marks.get(rel) != mark
        self._marks[rel] = mark
        self._deps[rel] = tuple(linked.deps)
        return moved

    def _mark_before(self, rels: set[str]) -> None:
        """Make the marks of the files of `rels` whose links were taken, from the views as they are before
        an update (made for every taken link, they read every file's view: a sixth of a run after an edit)."""
        for rel in rels & self._unmarked:
            self._marks[rel] = self._mark(self._mentioned.get(rel, {}))
        self._unmarked -= rels

    def _mark(self, mentioned: Mapping[str, Key]) -> int:
        """A digest of the definitions (with their kinds and parts) a file's mentions name."""
        return hash(frozenset((name, key, self._kind(key), self.part(key)) for name, key in mentioned.items()))

    def _replace_users(self, users: Delta) -> set[Key]:
        """Apply a pass's changes of who names what: each changed definition's table replaced (one
        named by no file before takes its delta as its table). Returns those definitions."""
        for key, delta in users.items():
            old = self._users_of(key)
            if old is None and None not in delta.values():
                self._users[key] = cast(dict[str, tuple[int, ...]], delta)
                continue
            table = dict(old or {})
            for rel, now in delta.items():
                if now is None:
                    table.pop(rel, None)
                else:
                    table[rel] = now
            if table:
                self._users[key] = table
            else:
                self._users.pop(key, None)
        return set(users)

    def _replace_bases(self, old_bases: dict[Key, tuple[Key, ...]], rels: set[str]) -> set[Key]:
        """Apply a pass's changes of bases to the subclasses' tables; returns the classes whose
        bases changed and the bases they gained or lost."""
        changed: set[Key] = set()
        new_bases = {key: self._bases[key] for rel in rels for key in self._classes.get(rel, ())}
        subclasses: dict[Key, tuple[set[Key], set[Key]]] = {}  # base -> (subclasses gone, new)
        for key in old_bases.keys() | new_bases.keys():
            before, after = old_bases.get(key, ()), new_bases.get(key, ())
            if before == after:
                continue
            changed |= {key, *before, *after}
            for base in set(before) - set(after):
                subclasses.setdefault(base, (set(), set()))[0].add(key)
            for base in set(after) - set(before):
                subclasses.setdefault(base, (set(), set()))[1].add(key)
        for base, (lost, gained) in subclasses.items():
            subs = (self._subclasses.get(base, frozenset()) - lost) | gained
            if subs:
                self._subclasses[base] = subs
            else:
                self._subclasses.pop(base, None)
        if old_bases or new_bases:
            self._shown_bases = dict(self._bases)
        return changed

    def _users_of(self, key: Key) -> dict[str, tuple[int, ...]] | None:
        """Definition `key`'s users' table (None: named by no file), its file's saved tables taken into
        `_users` first if they are not yet (`Taken`)."""
        if key[0] in self._later_users:
            self._users_read(key[0])
        return self._users.get(key)

    def _users_read(self, rel: str) -> None:
        """Move `rel`'s users' tables taken from a `Taken` into `_users`, on first read (any thread)."""
        with self._later_lock:
            later = self._later_users.get(rel)
            if later is not None:
                self._users.update(((rel, qual), table) for qual, table in later.items())
                del self._later_users[rel]  # after: a reader not finding it here finds the tables there

    def _named_by(self, rels: set[str]) -> dict[str, dict[Key, tuple[int, ...]]]:
        """What each of `rels` names and on which lines: as the outs a `Taken` left say, else as the users'
        tables say, one pass over them (none while the graph is built)."""
        found: dict[str, dict[Key, tuple[int, ...]]] = {}
        if self._outs is not None:
            return {rel: dict(out) for rel in rels if (out := self._outs.get(rel))}
        if not rels or not self._users:
            return found
        if len(rels) <= 4:  # a save
            for key, table in self._users.items():
                for rel in rels:
                    lines = table.get(rel)
                    if lines is not None:
                        found.setdefault(rel, {})[key] = lines
        else:
            for key, table in self._users.items():
                for rel in table.keys() & rels:
                    found.setdefault(rel, {})[key] = table[rel]
        return found
