"""What the symbol graph keeps of each Python file (`View`), made from its facts alone.

A file's view is its own half (definitions, spans, bases, the names its docstrings mention and the
part map its caller gives: `own_of`), its imports as absolute module names and the names it reads.
Nothing here looks at another file: resolution is `resolution.py`'s, relations `graph.py`'s.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from sys import intern

from repodoc_lsp.analysis.model import FileFacts, Import, SymbolKind
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.signature import annotation_spans

Key = tuple[str, str]  # (file, qualname); qualname "" is the module itself
# The part of its file's page each definition went to, when not the page itself: (kind, qualname) ->
# part (2, 3, ...). Given by the graph's caller (`Graph(parts=...)`): the graph does not know how pages
# are split, only that a definition's part is part of what a link to it depends on.
PartMap = Mapping[tuple[str, str], int]
PartsOf = Callable[[FileFacts], PartMap]


def no_parts(facts: FileFacts) -> PartMap:
    """A caller's `PartsOf` when no page is ever split (every definition on its file's page)."""
    return {}


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



# A definition's kind as its code in `View.defs` (the low bits, its line above them)
KINDS = ("module", "class", "function", "method", "attribute")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
KIND_BITS = 3
KIND_MASK = (1 << KIND_BITS) - 1


class View:
    """What the graph keeps of one file, compact (memory: bench/README.md, "Symbol graph and keyword
    index: the figures"): a definition is its kind and line packed in an int (a `Def` is made when
    asked), the spans are arrays of lines beside a tuple of qualnames, and the names its imports
    bind are interned (the same module names in thousands of files)."""

    __slots__ = ("_members", "_names", "_order", "_ordered", "_public", "_surface", "all_names", "bases", "bindings",
                 "defs", "ends", "imported", "mentions", "parts", "quals", "refs", "rel", "stars", "starts")

    def __init__(self, rel: str, sketch: Sketch, relations: Relations) -> None:
        """`sketch`: what the view takes of the file's facts (`sketch_of`)."""
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
        self.refs = sketch.refs  # the facts' own string, read when the file is linked (not kept read)
        self._surface = b""
        self._ordered: tuple[Def, ...] | None = None
        self._order: tuple[str, ...] | None = None
        self._members: dict[str, tuple[Def, ...]] | None = None
        self._names: dict[str, tuple[str, ...]] | None = None
        self._public: dict[str, list[str]] = {}

    @property
    def surface(self) -> bytes:
        """What other files' resolutions can see of the file, as a digest (only compared: the values
        themselves are large), made when first asked (an update asks for the changed files' only: made
        for every file, it was a fifth of a graph's build)."""
        if not self._surface:
            self._surface = hashlib.blake2b(repr((
                sorted((q, KINDS[c & KIND_MASK]) for q, c in self.defs.items()), sorted(self.bindings.items()),
                self.stars, self.all_names, sorted(self.bases.items()), sorted(self.parts.items()))).encode(),
                digest_size=16).digest()
        return self._surface

    def definition(self, qualname: str) -> Def | None:
        code = self.defs.get(qualname)
        return None if code is None else self._def(qualname, code)

    def _def(self, qualname: str, code: int) -> Def:
        """The definition `qualname` whose kind and line are packed in `code`."""
        return Def(self.rel, qualname, KINDS[code & KIND_MASK], code >> KIND_BITS)

    def kind(self, qualname: str) -> str:
        code = self.defs.get(qualname)
        return "" if code is None else KINDS[code & KIND_MASK]

    def ordered(self) -> tuple[Def, ...]:
        """The definitions in line order (then by qualname), sorted once: pages ask for them per
        class and per ancestor (`Graph.members`)."""
        if self._ordered is None:
            defs = (self._def(q, c) for q, c in self.defs.items())
            self._ordered = tuple(sorted(defs, key=lambda d: (d.line, d.qualname)))
        return self._ordered

    def outline(self, kinds: Iterable[str] | None = None, top: bool = False) -> list[tuple[str, str]]:
        """(qualname, kind) of each definition in `ordered`'s order, made from the packed codes
        (gathering a page's inputs asks for many, and their names many more times);
        `kinds`: only those of these kinds, `top`: only those at module level. The order is sorted
        once (a page's inputs ask for three outlines of its file), kept as the qualnames."""
        order = self.ordered_names()
        defs, names = self.defs, KINDS
        if kinds is None and not top:
            return [(q, names[defs[q] & KIND_MASK]) for q in order]
        codes = set(range(len(KINDS))) if kinds is None else {KIND_CODE[k] for k in kinds}
        if top:
            return [(q, names[k]) for q in order if "." not in q and (k := defs[q] & KIND_MASK) in codes]
        return [(q, names[k]) for q in order if (k := defs[q] & KIND_MASK) in codes]

    def ordered_names(self) -> tuple[str, ...]:
        """The qualnames of `ordered`, sorted once (by line, then qualname; each once)."""
        if self._order is None:
            lines = sorted([(c >> KIND_BITS, q) for q, c in self.defs.items()])
            self._order = tuple([q for _line, q in lines])
        return self._order

    def member_names(self, qualname: str) -> tuple[str, ...]:
        """The names of `members(qualname)`, in the same order, kept once asked."""
        if self._names is None:
            names: dict[str, list[str]] = {}
            for q in self.ordered_names():
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


# What a view holds that one file's facts alone decide (`own_of`): its definitions (qualname -> line <<
# KIND_BITS | kind's code), the spans' starts, ends and qualnames, its classes' base names, the names
# it mentions, and the part of each definition that left its file's page (the caller's `PartsOf`).
Own = tuple[dict[str, int], "array[int]", "array[int]", tuple[str, ...], dict[str, tuple[str, ...]], tuple[str, ...],
            PartMap]


def sorted_lines(lines: tuple[int, ...] | set[int]) -> tuple[int, ...]:
    """The lines a link found naming a definition, as the users' tables keep them (sorted)."""
    return lines if isinstance(lines, tuple) else tuple(sorted(lines))


@dataclass(frozen=True, slots=True)
class Sketch:
    """What a file's view takes of its facts (`sketch_of`): its own half (`own_of`), its imports, its
    `__all__` and the names it reads. Made as each file's facts arrive from the analysis workers
    (`Workspace.scan`): the graph is then built without the facts, which the server forgot meanwhile."""

    own: Own
    imports: tuple[Import, ...]
    all_names: tuple[str, ...]
    refs: str


@dataclass(frozen=True, slots=True)
class LaterSketch:
    """A file's sketch made when its view is first read (`make`): a run after an edit reads a few hundred
    of thousands of views, and making every one was a sixth of that run."""

    make: Callable[[], Sketch]


class LaterView(View):
    """A `View` made from its `LaterSketch` when any of its fields is first read."""

    __slots__ = ("_later", "_relations")

    def __init__(self, rel: str, later: LaterSketch, relations: Relations) -> None:
        self.rel, self._later, self._relations = rel, later, relations

    @property
    def later(self) -> LaterSketch:
        """What the view is made from (`held.HeldViews` makes it again after dropping it)."""
        return self._later

    def __getattr__(self, name: str) -> object:
        """Called only for a field not set yet: the view is made, then the field read."""
        if name in ("_later", "_relations") or name not in View.__slots__:
            raise AttributeError(name)
        View.__init__(self, self.rel, self._later.make(), self._relations)
        return object.__getattribute__(self, name)


def sketch_of(facts: FileFacts, parts: PartMap) -> Sketch:
    """`parts`: the file's part map (the caller's `PartsOf`)."""
    return Sketch(own_of(facts, parts), facts.imports, facts.all_names, facts.refs)


def own_of(facts: FileFacts, parts: PartMap) -> Own:
    """The part of a file's view that needs no other file (no module names): a scan makes it as each
    file's facts arrive from the analysis workers, while the parent waits on them, so that less of
    the graph is left to build after the last file."""
    defs: dict[str, int] = {"": 1 << KIND_BITS | KIND_CODE["module"]}
    spans: list[tuple[int, int, str]] = []
    bases: dict[str, tuple[str, ...]] = {}
    # kinds compared by identity, not looked up by their values (an enum's `value` and hash are Python
    # code: a third of this function's time, made for every file as its facts arrive)
    heading, cls, function = SymbolKind.HEADING, SymbolKind.CLASS, SymbolKind.FUNCTION
    class_code, function_code, method_code = KIND_CODE["class"], KIND_CODE["function"], KIND_CODE["method"]
    for s in facts.symbols:
        kind = s.kind
        if kind is heading:
            continue
        qual = s.qualname
        defs.setdefault(qual, s.line << KIND_BITS | (
            class_code if kind is cls else function_code if kind is function else method_code))
        spans.append((s.line, s.end_line, qual))
        if kind is cls:
            bases.setdefault(qual, tuple(b for b in (base_name(b) for b in s.bases) if b))
    attribute = KIND_CODE["attribute"]
    for a in facts.attributes:
        container = a.container  # `a.qualname`, without a property's call
        defs.setdefault(f"{container}.{a.name}" if container else a.name, a.line << KIND_BITS | attribute)
    spans.sort()
    # the spans in order of (start, end, qualname): starts, ends and qualnames side by side
    return (defs, array("i", [start for start, _, _ in spans]), array("i", [end for _, end, _ in spans]),
            tuple(qual for _, _, qual in spans), bases, mentions(facts), parts)


# A Python role's target (`:class:`~a.B``) or a dotted name in backticks (``a.b``, `a.b`: a backtick
# not after another). Both branches start with a character (`:`, a backtick), not the look-behind: the
# regex engine skips to those characters instead of trying the pattern at every one of a docstring's
# characters (several times as fast)
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
