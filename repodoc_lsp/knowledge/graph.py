"""The workspace symbol graph: every definition, who names it, its bases and subclasses.

Built from the analysis alone (nothing from the workspace is imported or run). A name is
resolved the way Python would bind it: a file's own definitions, then its imports, then its
star imports (a module's `__all__`, else its public names), then a submodule of a package;
so `from .linear import Linear` in `torch/nn/modules/__init__.py` and `from .modules import *`
in `torch/nn/__init__.py` make `torch.nn.Linear`, `nn.Linear` and `from torch.nn import
Linear` all name `torch/nn/modules/linear.py`'s class. Attribute chains follow modules and
classes (with members inherited from workspace classes); a value's type is never inferred.

Incremental: `update` re-links one file; when the names it offers changed, the files whose
resolution consulted it are re-linked too. Readers on other threads see whole values: the
per-definition tables are replaced, never changed in place, once the graph is built.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from sys import intern
from typing import cast

from repodoc_lsp.analysis.model import FileFacts, Import, Language, SymbolKind, reference_lines
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.signature import annotation_spans
from repodoc_lsp.render.parts import anchor_of, member_parts

Key = tuple[str, str]  # (file, qualname); qualname "" is the module itself
# A dependency on a module name (whichever file is that module, or none), beside the files a
# resolution consulted: files that appear or vanish re-link only the files that looked up
# their names. No file's path starts with it.
_NAME = "\x00"
_NOWHERE: Key = ("", "")
_NO_USERS: Mapping[str, tuple[int, ...]] = {}
_UNKNOWN: Key = ("", "\x00")  # not memoised (no definition is it)


@dataclass(frozen=True, slots=True)
class Def:
    """A definition: kind is class, function, method, attribute or module."""

    rel: str
    qualname: str
    kind: str
    line: int

    @property
    def key(self) -> Key:
        return (self.rel, self.qualname)

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2] if self.qualname else ""


@dataclass(frozen=True, slots=True)
class Use:
    """Where a definition is named: a file, a line, and the definition around it ("" at module level)."""

    rel: str
    line: int
    within: str


# A definition's kind as its code in `_View.defs` (the low bits, its line above them)
_KINDS = ("module", "class", "function", "method", "attribute")
_KIND_CODE = {kind: code for code, kind in enumerate(_KINDS)}
_KIND_BITS = 3
_KIND_MASK = (1 << _KIND_BITS) - 1


class _View:
    """What the graph keeps of one file. Compact (the views of the 17,150-file corpus's files took
    300 MB as Def objects and tuples of spans): a definition is its kind and line packed in an
    int (a `Def` is made when asked), the spans are arrays of lines beside a tuple of qualnames,
    and the names its imports bind are interned (the same module names in thousands of files)."""

    __slots__ = ("_members", "_names", "_order", "_ordered", "_public", "all_names", "bases", "bindings", "defs",
                 "ends", "imported", "mentions", "named", "parts", "quals", "refs", "rel", "stars", "starts", "surface")

    def __init__(self, rel: str, sketch: Sketch, relations: Relations, *, surface: bool = True) -> None:
        """`sketch`: what the view takes of the file's facts (`sketch_of`); `surface=False`: a graph
        that is never updated never compares surfaces (their digest is left empty)."""
        self.rel = rel
        self.defs, self.starts, self.ends, self.quals, self.bases, self.mentions, self.parts = sketch.own
        # local name -> (absolute module, imported name or "" for the module itself, line)
        self.bindings: dict[str, tuple[str, str, int]] = {}
        self.imported: list[tuple[str, str, int]] = []  # every (module, name, line) imported
        self.stars: list[str] = []
        for imp in sketch.imports:
            module = relations.absolute(rel, imp) if imp.level else imp.module  # most are absolute
            if module.startswith("."):
                continue
            if imp.star:
                self.stars.append(module)
                continue
            module = intern(module)
            for local, name in imp.bindings():
                local, name = intern(local), intern(name)
                self.imported.append((module, name, imp.line))
                if not name and not imp.asnames:  # import a.b binds a
                    self.bindings[local] = (local, "", imp.line)
                else:
                    self.bindings[local] = (module, name, imp.line)  # the last one binds, as in Python
        self.all_names = sketch.all_names
        self.refs = sketch.refs  # the facts' own string, read when the file is linked (23 MB less on PyTorch)
        self.named = sketch.named  # `refs` as read by an analysis worker: taken by the first link
        # what other files' resolutions can see of it, as a digest: only compared, and the values
        # themselves took 83 MB on the 17,150-file corpus
        self.surface = b"" if not surface else hashlib.blake2b(
            repr((sorted((q, _KINDS[c & _KIND_MASK]) for q, c in self.defs.items()), sorted(self.bindings.items()),
                  self.stars, sketch.all_names, sorted(self.bases.items()), sorted(self.parts.items()))).encode(),
            digest_size=16).digest()
        self._ordered: tuple[Def, ...] | None = None
        self._order: tuple[str, ...] | None = None
        self._members: dict[str, tuple[Def, ...]] | None = None
        self._names: dict[str, tuple[str, ...]] | None = None
        self._public: dict[str, list[str]] = {}

    def definition(self, qualname: str) -> Def | None:
        code = self.defs.get(qualname)
        return None if code is None else self._def(qualname, code)

    def _def(self, qualname: str, code: int) -> Def:
        """The definition `qualname` whose kind and line are packed in `code`."""
        return Def(self.rel, qualname, _KINDS[code & _KIND_MASK], code >> _KIND_BITS)

    def kind(self, qualname: str) -> str:
        code = self.defs.get(qualname)
        return "" if code is None else _KINDS[code & _KIND_MASK]

    def ordered(self) -> tuple[Def, ...]:
        """The definitions in line order (then by qualname), sorted once: pages ask for them per
        class and per ancestor (`Graph.members`)."""
        if self._ordered is None:
            defs = (self._def(q, c) for q, c in self.defs.items())
            self._ordered = tuple(sorted(defs, key=lambda d: (d.line, d.qualname)))
        return self._ordered

    def outline(self, kinds: Iterable[str] | None = None, top: bool = False) -> list[tuple[str, str]]:
        """(qualname, kind) of each definition in `ordered`'s order, made from the packed codes
        (gathering a page's inputs asked for 100,000 `Def`s on PyTorch, and their names 860,000 times);
        `kinds`: only those of these kinds, `top`: only those at module level. The order is sorted
        once (a page's inputs ask for three outlines of its file), kept as the qualnames."""
        order = self._ordered_names()
        defs, names = self.defs, _KINDS
        if kinds is None and not top:
            return [(q, names[defs[q] & _KIND_MASK]) for q in order]
        codes = set(range(len(_KINDS))) if kinds is None else {_KIND_CODE[k] for k in kinds}
        if top:
            return [(q, names[k]) for q in order if "." not in q and (k := defs[q] & _KIND_MASK) in codes]
        return [(q, names[k]) for q in order if (k := defs[q] & _KIND_MASK) in codes]

    def _ordered_names(self) -> tuple[str, ...]:
        """The qualnames of `ordered`, sorted once (by line, then qualname; each once)."""
        if self._order is None:
            lines = sorted([(c >> _KIND_BITS, q) for q, c in self.defs.items()])
            self._order = tuple([q for _line, q in lines])
        return self._order

    def member_names(self, qualname: str) -> tuple[str, ...]:
        """The names of `members(qualname)`, in the same order, kept once asked."""
        if self._names is None:
            names: dict[str, list[str]] = {}
            for q in self._ordered_names():
                if q:
                    owner, _, name = q.rpartition(".")
                    names.setdefault(owner, []).append(name)
            self._names = {q: tuple(ns) for q, ns in names.items()}
        return self._names.get(qualname, ())

    def public_member_names(self, qualname: str) -> list[str]:
        """`member_names(qualname)` not starting with `_`, each once, kept once asked: the view's own
        list (read it, never change it: pages list it as it is, `render.pages._inherited`)."""
        public = self._public.get(qualname)
        if public is None:
            public = self._public[qualname] = list(dict.fromkeys(
                n for n in self.member_names(qualname) if not n.startswith("_")))
        return public

    def members(self, qualname: str) -> tuple[Def, ...]:
        """The definitions directly inside `qualname`, in line order."""
        if self._members is None:
            members: dict[str, list[Def]] = {}
            for d in self.ordered():
                if d.qualname:
                    members.setdefault(d.qualname.rpartition(".")[0], []).append(d)
            self._members = {q: tuple(ds) for q, ds in members.items()}
        return self._members.get(qualname, ())

    def within(self, line: int) -> str:
        """The innermost definition around `line` ("" at module level): the last one starting
        at or before it that still holds it (spans nest)."""
        starts, ends = self.starts, self.ends
        for i in range(bisect.bisect_right(starts, line) - 1, -1, -1):  # most often the first or second
            if starts[i] <= line <= ends[i]:
                return self.quals[i]
        return ""


# What a view holds that one file's facts alone decide (`own_of`): its definitions (qualname -> line <<
# _KIND_BITS | kind's code), the spans' starts, ends and qualnames, its classes' base names, the names
# it mentions, and the anchors of its page that went to part pages.
Own = tuple[dict[str, int], "array[int]", "array[int]", tuple[str, ...], dict[str, tuple[str, ...]], tuple[str, ...],
            dict[str, int]]


def _sorted_lines(lines: tuple[int, ...] | set[int]) -> tuple[int, ...]:
    """The lines `_link` found naming a definition, as the users' tables keep them (sorted)."""
    return lines if isinstance(lines, tuple) else tuple(sorted(lines))


# A file's `refs` as `reference_lines` reads them: (dotted name, its lines)
Named = list[tuple[str, tuple[int, ...]]]


@dataclass(frozen=True, slots=True)
class Sketch:
    """What a file's view takes of its facts (`sketch_of`): its own half (`own_of`), its imports, its
    `__all__` and the names it reads. Made as each file's facts arrive from the analysis workers
    (`Workspace.scan`): the graph is then built without the facts, which the server forgot meanwhile
    (reading them back from the cache took about a tenth of its indexing)."""

    own: Own
    imports: tuple[Import, ...]
    all_names: tuple[str, ...]
    refs: str
    named: Named | None = None  # `refs` read (`reference_lines`) beforehand, by an analysis worker


def sketch_of(facts: FileFacts, marks: Marks | None = None, named: Named | None = None) -> Sketch:
    """`marks`: its `marks_of` and `named`: its `reference_lines`, made beforehand (by an analysis worker)."""
    return Sketch(own_of(facts, marks), facts.imports, facts.all_names, facts.refs, named)


# The names a file's docstrings and annotations mention (`mentions`) and the anchors of its page that
# went to part pages (`parts.member_parts`): the costly part of `own_of`, made by the analysis workers
# beside the facts (`facts.analyse_chunk`)
Marks = tuple[tuple[str, ...], dict[str, int]]


def marks_of(facts: FileFacts) -> Marks:
    return mentions(facts), member_parts(facts)


def own_of(facts: FileFacts, marks: Marks | None = None) -> Own:
    """The part of a file's view that needs no other file (no module names): a scan makes it as each
    file's facts arrive from the analysis workers, while the parent waits on them, so that less of
    the graph is left to build after the last file; `marks`: its `marks_of`, made beforehand."""
    defs: dict[str, int] = {"": 1 << _KIND_BITS | _KIND_CODE["module"]}
    spans: list[tuple[int, int, str]] = []
    bases: dict[str, tuple[str, ...]] = {}
    # kinds compared by identity, not looked up by their values (an enum's `value` and hash are Python
    # code: a third of this function's time, made for every file as its facts arrive)
    heading, cls, function = SymbolKind.HEADING, SymbolKind.CLASS, SymbolKind.FUNCTION
    class_code, function_code, method_code = _KIND_CODE["class"], _KIND_CODE["function"], _KIND_CODE["method"]
    for s in facts.symbols:
        kind = s.kind
        if kind is heading:
            continue
        qual = s.qualname
        defs.setdefault(qual, s.line << _KIND_BITS | (
            class_code if kind is cls else function_code if kind is function else method_code))
        spans.append((s.line, s.end_line, qual))
        if kind is cls:
            bases.setdefault(qual, tuple(b for b in (base_name(b) for b in s.bases) if b))
    attribute = _KIND_CODE["attribute"]
    for a in facts.attributes:
        container = a.container  # `a.qualname`, without a property's call
        defs.setdefault(f"{container}.{a.name}" if container else a.name, a.line << _KIND_BITS | attribute)
    spans.sort()
    # the anchors of its page that went to part pages (`parts.py`): links into the file name them, so
    # they are part of what a resolution that consulted this file depends on
    mentioned, parts = marks_of(facts) if marks is None else marks
    # the spans in order of (start, end, qualname): starts, ends and qualnames side by side
    return (defs, array("i", [start for start, _, _ in spans]), array("i", [end for _, end, _ in spans]),
            tuple(qual for _, _, qual in spans), bases, mentioned, parts)


# A Python role's target (`:class:`~a.B``) or a dotted name in backticks (``a.b``, `a.b`: a backtick
# not after another). Both branches start with a character (`:`, a backtick), not the look-behind: the
# regex engine skips to those characters instead of trying the pattern at every one of a docstring's
# (4 times as fast on PyTorch's docstrings)
_MENTION = re.compile(r":(?:[\w+-]+:)*(?:class|func|meth|mod|attr|exc|data|obj|const):`[~!]?([A-Za-z_][\w.]*)`"
                      r"|`(?<!``)`?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)``?(?!`)")


def mentions(facts: FileFacts) -> tuple[str, ...]:
    """The names a file's docstrings mention in roles or backticks and its signatures' annotations
    name (`def f(x: nn.Linear) -> Tensor`): a page links them."""
    found: set[str] = set()
    for doc in (facts.module_doc, *(s.docstring for s in facts.symbols)):
        if doc and "`" in doc:
            found.update(a or b for a, b in _MENTION.findall(doc))
    for s in facts.symbols:
        if s.signature:
            found.update(s.signature[a:b] for a, b in annotation_spans(s.signature))
    return tuple(sorted(n.rstrip(".") for n in found if n.rstrip(".")))


def base_name(text: str) -> str:
    """The dotted name of a base class expression (`nn.Module`, `Generic[T]` -> `Generic`)."""
    if "=" in text.split("[", 1)[0]:  # metaclass=..., total=False
        return ""
    name = text.split("[", 1)[0].split("(", 1)[0].strip()
    return name if all(p.isidentifier() for p in name.split(".")) else ""


class Graph:
    """Definitions, uses, bases and subclasses of one workspace's Python files."""

    def __init__(self, relations: Relations, facts: Iterable[tuple[str, FileFacts | Sketch]], *,
                 incremental: bool = True, pause: Callable[[], None] | None = None) -> None:
        """Each file's facts, or the sketch of its facts made beforehand (a Python file's); `pause`
        is called between every two files viewed or linked (the server's requests go first)."""
        self.relations = relations
        # False: a graph that is built once and never updated (`repodoc generate`): what each file's
        # resolution consulted is not kept (its dependency tables were the CLI's largest part of
        # the graph: 174 of 311 MB traced on a 5,096-file slice of the scale corpus)
        self.incremental = incremental
        self._views: dict[str, _View] = {}
        # file -> name -> what it names, the files consulted. Tuples, not sets: on the 17,150-file
        # corpus the memo peaked at 370,000 entries (328 MB as frozensets; a tuple is a fifth). A table
        # per file: no (file, name) tuple made and hashed per look-up (1.3 million on that corpus)
        self._memo: dict[str, dict[str, tuple[Key | None, tuple[str, ...]]]] = {}
        # definition -> file -> lines. What a file names is read from it when the file re-links
        # (`_named_by`): a table of that kept beside it took 84 MB on the 17,150-file corpus
        self._users: dict[Key, dict[str, tuple[int, ...]]] = {}
        self._bases: dict[Key, tuple[Key, ...]] = {}  # linking's own table (emptied while a file re-links)
        self._shown_bases: dict[Key, tuple[Key, ...]] = {}  # what queries read: replaced once a link step ends
        self._classes: dict[str, list[Key]] = {}  # file -> its classes with workspace bases
        self._subclasses: dict[Key, frozenset[Key]] = {}
        # file -> files (and _NAME + module names) its resolution consulted; only iterated (a change
        # finds the files that consulted it in one pass, `_dependents`), so a tuple (182 names a
        # file on that corpus: 173 MB as frozensets)
        self._deps: dict[str, tuple[str, ...]] = {}
        self._mentioned: dict[str, dict[str, Key]] = {}  # file -> name its docstrings mention -> definition
        self._marks: dict[str, int] = {}  # file -> digest of its mentions' definitions and kinds
        self._names: dict[str, str] = {}  # module name -> _NAME + module name
        # a graph built once: what each `from module import name` and each absolute dotted name
        # (`_absolute`) named, once known for good (a lookup memoised: `_import`); emptied with the memo
        self._imported: dict[str, dict[str, Key | None]] = {}  # module -> name -> what it names
        self._absolutes: dict[str, Key | None] = {}
        self._lock = threading.Lock()  # resolution and updates (both fill the memo)
        self._pause = pause
        for rel, f in facts:  # each file's facts are read here only: they may be streamed
            if isinstance(f, Sketch):
                self._views[rel] = _View(rel, f, relations, surface=incremental)
            elif f.language is Language.PYTHON:
                self._views[rel] = _View(rel, sketch_of(f), relations, surface=incremental)
            if pause is not None:
                pause()
        self._build()
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
        (its own included), and of each of kind `every` named or not, in `outline`'s order: a page's
        cross references looked up all 350,000 classes, functions and methods of the 17,150-file
        corpus one call at a time, for 59,000 tables (most definitions are named by none)."""
        view = self._views.get(rel)
        if view is None:
            return []
        defs, users, names = view.defs, self._users, _KINDS
        codes = {_KIND_CODE[k] for k in kinds}
        always = _KIND_CODE[every] if every else -1
        return [(q, names[k], table or _NO_USERS) for q in view._ordered_names()
                if (k := defs[q] & _KIND_MASK) in codes and ((table := users.get((rel, q))) is not None or k == always)]

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
                     if c >> _KIND_BITS == line and q and q.rpartition(".")[2] == name), None)

    def users_table(self, key: Key) -> Mapping[str, tuple[int, ...]]:
        """Every file that names the definition, its own included, with the lines: the graph's own
        table, not a copy (read it, never change it; `users` copies)."""
        return self._users.get(key) or _NO_USERS

    def users(self, key: Key, own: bool = False) -> dict[str, tuple[int, ...]]:
        """Files other than its own (`own`: and its own) that name the definition, with the lines."""
        table = self._users.get(key)
        if not table:  # most definitions (pages ask for each of PyTorch's 52,000)
            return {}
        if own or key[0] not in table:
            return dict(table)
        return {rel: lines for rel, lines in table.items() if rel != key[0]}

    def user_count(self, key: Key) -> int:
        """How many files other than its own name the definition (`len(users(key))`)."""
        table = self._users.get(key)
        return 0 if table is None else len(table) - (key[0] in table)

    def uses(self, key: Key) -> list[Use]:
        """Every place the definition is named, its own file included, in file and line order."""
        found = []
        for rel, lines in sorted(self._users.get(key, {}).items()):
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
        file (a page's inherited members ask for them of 96,000 ancestors on the 17,150-file corpus); the
        public names as the graph's own list, not a copy (read it, never change it)."""
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

    def part(self, key: Key) -> int:
        """The part of its file's page that holds definition `key` (1: the page itself; `parts.py`)."""
        view = self._views.get(key[0])
        kind = view.kind(key[1]) if view is not None else ""
        return view.parts.get(anchor_of(kind, key[1]), 1) if view is not None and kind else 1

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

    def resolve(self, rel: str, dotted: str) -> Key | None:
        """What a dotted name read in `rel` names (None: not a workspace definition)."""
        with self._lock:
            return self._resolve(rel, dotted, set())

    # -- changes --------------------------------------------------------------------
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
            names = {_NAME + n for n in renamed} | {_NAME + top for n in renamed
                                                     if (top := n.partition(".")[0]) not in old.top_level}
            moved = {rel for rel in old.module_of.keys() | relations.module_of.keys()
                     if rel not in changed and old.module_of.get(rel) != relations.module_of.get(rel)}
            return self._update({**changed, **{rel: facts(rel) for rel in moved}}, names, moved)

    def _updatable(self) -> None:
        if not self.incremental:
            raise RuntimeError("this symbol graph was built without its dependencies: it cannot be updated")

    def _update(self, files: Mapping[str, FileFacts | None], names: Iterable[str] = (),
                moved: Iterable[str] = ()) -> set[Key]:
        relink: set[str] = set()
        asked = set(names)  # files and names whose dependents re-link
        moved = set(moved)
        gone = set()
        for rel, facts in files.items():
            old = self._views.get(rel)
            new = _View(rel, sketch_of(facts), self.relations) \
                if facts is not None and facts.language is Language.PYTHON else None
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
        """The files whose last link consulted any of `asked` (files, or _NAME + module names): one
        pass over every file's dependencies, when a change asks (about 3 million names on the
        17,150-file corpus; a set of dependents kept per file and name took 195 MB there)."""
        if not asked:
            return set()
        return {rel for rel, deps in self._deps.items() if not asked.isdisjoint(deps)}

    # -- linking ----------------------------------------------------------------------
    def _relink(self, rels: set[str], gone: set[str]) -> set[Key]:
        """Link the files `rels` afresh and unlink `gone`, as one step: all are unlinked first
        (none reads another's stale bases), then linked in order, and the tables requests read
        (`_users`, `_subclasses`) are replaced once per definition that changed. Returns the
        definitions whose uses, bases or subclasses changed, and `(file, "")` of files whose
        docstring mentions resolve elsewhere."""
        rels = {rel for rel in rels if rel in self._views}
        self._forget_lookups()
        old_out = self._named_by(rels | gone)
        old_bases: dict[Key, tuple[Key, ...]] = {}
        for rel in rels | gone:
            for key in self._classes.pop(rel, ()):
                old_bases[key] = self._bases.pop(key, ())
            self._deps.pop(rel, None)
        for rel in gone:
            self._mentioned.pop(rel, None)  # a re-linked file's are replaced by `_link`
            self._marks.pop(rel, None)
        changed: set[Key] = set()
        users: dict[Key, dict[str, tuple[int, ...] | None]] = {}  # definition -> file -> lines now (None: none)
        pause = self._pause
        for rel in sorted(rels):
            if pause is not None:
                pause()
            moved, linked = self._link(rel)
            out = {k: _sorted_lines(v) for k, v in linked.items()}
            if moved:
                changed.add((rel, ""))
            before = old_out.pop(rel, {})
            for key, lines in out.items():
                if before.pop(key, None) != lines:
                    users.setdefault(key, {})[rel] = lines
            for key in before:  # named before, not now
                users.setdefault(key, {})[rel] = None
        for rel, before in old_out.items():  # gone
            for key in before:
                users.setdefault(key, {})[rel] = None
        for key, delta in users.items():
            old = self._users.get(key)
            if old is None and None not in delta.values():  # named by no file before: the delta is its table
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
        changed |= users.keys()
        new_bases = {key: self._bases[key] for rel in rels for key in self._classes.get(rel, ())}
        subclasses: dict[Key, tuple[set[Key], set[Key]]] = {}  # base -> (subclasses gone, new)
        for key in old_bases.keys() | new_bases.keys():
            before_bases, after_bases = old_bases.get(key, ()), new_bases.get(key, ())
            if before_bases == after_bases:
                continue
            changed |= {key, *before_bases, *after_bases}
            for base in set(before_bases) - set(after_bases):
                subclasses.setdefault(base, (set(), set()))[0].add(key)
            for base in set(after_bases) - set(before_bases):
                subclasses.setdefault(base, (set(), set()))[1].add(key)
        for base, (lost, gained) in subclasses.items():
            subs = (self._subclasses.get(base, frozenset()) - lost) | gained
            if subs:
                self._subclasses[base] = subs
            else:
                self._subclasses.pop(base, None)
        if old_bases or new_bases:
            self._shown_bases = dict(self._bases)
        self._forget_lookups()
        return changed

    def _build(self) -> None:
        """Link every file of a graph that holds no links yet: `_relink` of them all, without the
        deltas it works out against the tables before (none) and the changes it returns (a tenth of
        the build on PyTorch, when nothing asks for them)."""
        self._forget_lookups()
        users = self._users
        pause = self._pause
        for rel in sorted(self._views):
            if pause is not None:
                pause()
            for key, found in self._link(rel)[1].items():
                lines = found if found.__class__ is tuple else tuple(sorted(found))  # `_sorted_lines`, no call
                table = users.get(key)
                if table is None:
                    users[key] = {rel: lines}
                else:
                    table[rel] = lines
        subclasses: dict[Key, set[Key]] = {}
        for key, bases in self._bases.items():
            for base in bases:
                subclasses.setdefault(base, set()).add(key)
        self._subclasses = {base: frozenset(subs) for base, subs in subclasses.items()}
        if self._bases:
            self._shown_bases = dict(self._bases)
        self._forget_lookups()

    def _forget_lookups(self) -> None:
        """Forget what lookups answered (`_memo`, and a graph built once's `_imported`, `_absolutes`):
        before and after a link pass, which changes what they would answer."""
        self._memo.clear()
        self._imported.clear()
        self._absolutes.clear()

    def _named_by(self, rels: set[str]) -> dict[str, dict[Key, tuple[int, ...]]]:
        """What each of `rels` names and on which lines, as the users' tables say: one pass over
        them (on the 17,150-file corpus 130,000 definitions named; none while the graph is built)."""
        found: dict[str, dict[Key, tuple[int, ...]]] = {}
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

    def _link(self, rel: str) -> tuple[bool, dict[Key, tuple[int, ...] | set[int]]]:
        """Compute what the (unlinked) file `rel` names (returned, with the lines: a sorted tuple,
        or a set the caller sorts), its classes' bases and what its docstrings mention; True when
        the definitions those mentions resolve to changed."""
        view = self._views[rel]
        deps: set[str] = {rel}
        # definition -> the lines naming it: one name's lines as `reference_lines` gives them (sorted,
        # each once: most definitions are named by one name of the file), a set once there are more
        out: dict[Key, tuple[int, ...] | set[int]] = {}
        imported = self._imported  # a graph built once: what most imports name, known (`_import`)
        for module, name, line in view.imported:
            known = imported.get(module)
            target = _UNKNOWN if known is None else known.get(name, _UNKNOWN)
            if target is _UNKNOWN:
                target = self._import(module, name, deps, set())
            if target is not None:
                held = out.get(target)
                if held is None:
                    out[target] = (line,)  # most: no set made (nor sorted)
                elif isinstance(held, tuple):  # the imports' lines come first: always
                    out[target] = {*held, line}
                else:
                    held.add(line)
        # `_lookup` and `_member` (on a module: a lookup in its file) written out where the memo answers:
        # 92,000 dotted names read in PyTorch's files, of 166,000 steps. A name's head is a member of
        # its own file's module (`(rel, "")`): each step is one of the two, and each key found on the
        # way is named on the name's lines.
        memo = self._memo
        # its own file's table, looked up once: every name's head is looked up in it (`_lookup` fills it)
        own = memo.get(rel)
        if own is None:
            own = memo[rel] = {}
        named, view.named = view.named, None  # read by an analysis worker (a cold scan's), once
        for dotted, lines in reference_lines(view.refs) if named is None else named:
            key: Key = (rel, "")
            for part in dotted.split("."):
                if key[1]:
                    step = self._member(key, part, deps, set())
                else:
                    table = own if key[0] is rel else memo.get(key[0])
                    hit = None if table is None else table.get(part)
                    if hit is None:
                        step = self._lookup(key[0], part, deps, set())
                    else:
                        step = hit[0]
                        if hit[1]:
                            deps.update(hit[1])
                if step is None:
                    break
                key = step
                held = out.get(key)
                if held is None:
                    out[key] = lines
                elif isinstance(held, tuple):
                    out[key] = {*held, *lines}
                else:
                    held.update(lines)
        out.pop(_NOWHERE, None)
        for qual, names in view.bases.items():
            found = []
            for dotted in names:
                target = self._resolve(rel, dotted, deps)
                if target is not None and self._kind(target) == "class" and target != (rel, qual):
                    found.append(target)
            if found:
                key = (rel, qual)
                self._classes.setdefault(rel, []).append(key)
                self._bases[key] = tuple(dict.fromkeys(found))
        mentioned = {}
        for dotted in view.mentions:
            target = self._resolve(rel, dotted, deps) or self._absolute(dotted, deps)
            if target is not None and target != _NOWHERE:
                mentioned[dotted] = target
        if mentioned:
            self._mentioned[rel] = mentioned
        else:
            self._mentioned.pop(rel, None)
        moved = False
        if self.incremental:  # a graph built once is never linked again: nothing to compare with
            mark = hash(frozenset((name, key, self._kind(key), self.part(key)) for name, key in mentioned.items()))
            moved = self._marks.get(rel) != mark
            self._marks[rel] = mark
            self._deps[rel] = tuple(deps)
        return moved, out

    def _resolve(self, rel: str, dotted: str, deps: set[str]) -> Key | None:
        parts = dotted.split(".")
        key = self._lookup(rel, parts[0], deps, set())
        for part in parts[1:]:
            if key is None:
                return None
            key = self._member(key, part, deps, set())
        return key

    def _absolute(self, dotted: str, deps: set[str]) -> Key | None:
        """A dotted name read from the workspace's top: its longest module prefix, then members
        (a graph built once: memoised, as its every lookup is)."""
        if self.incremental:
            return self._absolute_fresh(dotted, deps)
        found = self._absolutes.get(dotted, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._absolutes[dotted] = self._absolute_fresh(dotted, deps)
        return found

    def _absolute_fresh(self, dotted: str, deps: set[str]) -> Key | None:
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            key = self._module(".".join(parts[:i]), deps)
            if key is None:
                continue
            for part in parts[i:]:
                key = self._member(key, part, deps, set()) if key is not None else None
            return key
        return None

    def _kind(self, key: Key) -> str:
        view = self._views.get(key[0])
        return view.kind(key[1]) if view else ""

    def _module(self, module: str, deps: set[str]) -> Key | None:
        """The module of that dotted name, if a workspace file is it; the name is a dependency
        either way (a file that appears or vanishes changes the answer), or, when no workspace
        module starts as it does, its top level (a tenth of the names on PyTorch)."""
        if self.incremental:  # a graph built once keeps no dependencies
            top = module.partition(".")[0]
            if top not in self.relations.top_level:  # `os.path`, `typing.Any`: its top level stands for it
                module = top
            name = self._names.get(module)
            if name is None:  # one string per name, however many files depend on it
                name = self._names[module] = _NAME + module
            deps.add(name)
        rel = self.relations.file_of.get(module)
        return (rel, "") if rel is not None and rel in self._views else None

    def _import(self, module: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """What `from module import name` (name "": `import module`) names: a name of the
        module, else its submodule."""
        if not name:
            return self._module(module, deps)
        if not self.incremental:  # no dependencies to gather: known once the module's lookup is memoised
            names = self._imported.get(module)
            known = _UNKNOWN if names is None else names.get(name, _UNKNOWN)
            if known is not _UNKNOWN:
                return known
        base = self._module(module, deps)
        found = None if base is None else self._lookup(base[0], name, deps, seen)
        if found is None:
            found = self._module(f"{module}.{name}" if module else name, deps)
        if not self.incremental and (base is None or name in self._memo.get(base[0], ())):  # not cut short by `seen`
            self._imported.setdefault(module, {})[name] = found
        return found

    def _lookup(self, rel: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """What `name` is in file `rel`'s namespace (a definition, an import, a star import,
        a submodule), memoised with the files consulted."""
        table = self._memo.get(rel)
        if table is None:
            table = self._memo[rel] = {}
        else:
            memo = table.get(name)
            if memo is not None:
                deps.update(memo[1])
                return memo[0]
        if (rel, name) in seen:
            return None
        seen.add((rel, name))
        if not self.incremental:  # no dependencies kept: none gathered
            found = self._lookup_fresh(rel, name, deps, seen)
            table[name] = (found, ())
            return found
        mine: set[str] = {rel}
        found = self._lookup_fresh(rel, name, mine, seen)
        deps |= mine
        table[name] = (found, tuple(mine))
        return found

    def _lookup_fresh(self, rel: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        view = self._views.get(rel)
        if view is None:
            return None
        if name in view.defs and name:
            return (rel, name)
        bound = view.bindings.get(name)
        if bound is not None:
            return self._import(bound[0], bound[1], deps, seen)
        for module in view.stars:
            star = self._module(module, deps)
            if star is None:
                continue
            deps.add(star[0])  # its `__all__` or names decide, even when `name` is not among them
            exported = self._views[star[0]].all_names
            if (name in exported) if exported else not name.startswith("_"):
                found = self._lookup(star[0], name, deps, seen)
                if found is not None:
                    return found
        if rel.endswith("__init__.py"):
            package = self.relations.module_of.get(rel)
            if package:
                return self._module(f"{package}.{name}", deps)
        return None

    def _member(self, key: Key, name: str, deps: set[str], seen: set[Key]) -> Key | None:
        """`name` looked up on a module or a class (members inherited from workspace classes)."""
        rel, qual = key
        if not qual:
            return self._lookup(rel, name, deps, set())
        if key in seen or self._kind(key) != "class":
            return None
        seen.add(key)
        deps.add(rel)
        view = self._views[rel]
        member = f"{qual}.{name}"
        if member in view.defs:
            return (rel, member)
        bases = self._bases.get(key)
        if bases is None:  # not linked yet (building): resolve the bases now
            bases = tuple(b for d in view.bases.get(qual, ())
                          if (b := self._resolve(rel, d, deps)) is not None and self._kind(b) == "class")
        for base in bases:
            found = self._member(base, name, deps, seen)
            if found is not None:
                return found
        return None


def files_of(keys: Iterable[Key]) -> set[str]:
    """The files that define these definitions."""
    return {rel for rel, _ in keys}
