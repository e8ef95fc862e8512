"""The facts that analysis extracts from one file: plain, picklable data.

Nothing here knows about paths on disk, Markdown or LSP; the facts of a file
depend only on its content (so they can be cached by content digest).
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def pickled_by_fields(cls: type[_T]) -> type[_T]:
    """`cls` (a slots dataclass) pickled as a call with its fields' values in order. A frozen slots
    dataclass is otherwise pickled through `dataclasses`' own `__getstate__`/`__setstate__`, which
    call `fields()` for every object: the facts of every file go from the analysis workers to the
    parent and from it to the render workers, and that took about 5% of a cold run's CPU (bench/README.md
    "Figures"). The call is not of the class but of `_made_<class>` (`_maker`), which sets each slot
    directly: a frozen dataclass's `__init__` sets each field through `object.__setattr__`."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    values = operator.attrgetter(*names)
    made = _maker(cls, names)

    def __reduce__(self: Any) -> tuple[Callable[..., _T], tuple[Any, ...]]:
        return made, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    if cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        cls.__init__ = _slot_init(cls)  # type: ignore[method-assign]
    return cls


def _maker(cls: type[_T], names: list[str]) -> Callable[..., _T]:
    """A function of this module, `_made_<class>(*values)`, that makes an instance of `cls` (a slots
    class) with these fields' values, set through their slots' descriptors (no `__init__`)."""
    name = f"_made_{cls.__name__}"
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope.update({f"_set_{n}": getattr(cls, n).__set__ for n in names})
    body = "".join(f"    _set_{n}(_obj, {n})\n" for n in names)
    exec(f"def {name}({', '.join(names)}):\n    _obj = _new(_cls)\n{body}    return _obj\n", scope)
    made = scope[name]
    made.__module__, made.__qualname__ = __name__, name  # pickled by reference, as this module's
    globals()[name] = made
    return made


def _slot_init(cls: type) -> Any:
    """An `__init__` for the frozen slots dataclass `cls` that sets each field through its slot's
    descriptor: the one `dataclass` writes calls `object.__setattr__` per field, which looks the
    field up on the class each time (half the cost of making a `Symbol`, made for every definition
    by the analysis; unpickling goes through `_maker`'s function). Same parameters and defaults; no
    field of these classes has a default factory or skips `__init__`."""
    spec = fields(cls)
    assert all(f.init and f.default_factory is MISSING for f in spec) and not hasattr(cls, "__post_init__")
    scope: dict[str, Any] = {f"_set_{f.name}": getattr(cls, f.name).__set__ for f in spec}
    scope.update({f"_default_{f.name}": f.default for f in spec if f.default is not MISSING})
    params = ", ".join(f.name if f.default is MISSING else f"{f.name}=_default_{f.name}" for f in spec)
    body = "".join(f"    _set_{f.name}(self, {f.name})\n" for f in spec)
    exec(f"def __init__(self, {params}):\n{body}", scope)  # our own field names only
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    made = vars(cls)["__init__"]  # the one `dataclass` wrote
    init.__doc__, init.__annotations__ = made.__doc__, made.__annotations__
    return init


class KeywordKind(enum.Enum):
    """A kind of entry in a keyword index; `heading` is the section title it is listed under."""

    CLASS = "Classes"
    FUNCTION = "Functions"
    IMPORT = "Imports"
    HEADING = "Headings"
    IDENTIFIER = "Identifiers"

    @property
    def heading(self) -> str:
        return self.value


class SymbolKind(enum.Enum):
    """What a defined symbol is."""

    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    HEADING = "heading"


class FindingCategory(enum.Enum):
    """Which docs section a finding belongs to."""

    PATTERN = "Code Patterns & Idioms"
    PERFORMANCE = "Performance Considerations"
    SECURITY = "Security & Safety"


class Language(enum.Enum):
    PYTHON = "python"
    MARKDOWN = "markdown"
    TEXT = "text"
    # read with tree-sitter (`analysis/treesitter`)
    C = "c"
    CPP = "cpp"
    CUDA = "cuda"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    GO = "go"
    RUST = "rust"
    JAVA = "java"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Symbol:
    """A class, function, method or Markdown heading defined in the file.

    Lines are 1-based, columns 0-based code points (as Python's ast gives them).
    """

    name: str
    qualname: str
    kind: SymbolKind
    line: int
    col: int
    end_line: int
    anchor: str
    container: str = ""
    signature: str = ""
    is_async: bool = False
    decorators: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    docstring: str | None = None
    level: int = 0  # heading level for Markdown headings
    # classes, functions and methods of a file that parses: a digest of the definition's source
    # (its `def`/`class` line to its last line) with its own name blanked out, so a renamed
    # definition whose body is the same has the same digest (`render/anchors.py`); "" otherwise
    body: str = ""
    # what the definition's language calls this kind of definition, as its page shows it before the
    # name (`struct`, `fn`, `interface`, `namespace`, `#define`); "" for Python's (`class`, `def`)
    word: str = ""


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Import:
    """One imported module; `names` are the names taken from it (`from m import a, b`).

    `module` keeps relative dots (`..pkg`, `.`); `level` counts them. `asnames` are the
    local names bound (`import a.b as c`: ("c",); `from m import a as b, c`: ("b", "c")),
    empty from a file parso recovered; `star` marks `from m import *`.
    """

    module: str
    names: tuple[str, ...]
    line: int
    level: int = 0
    anchor: str = ""
    asnames: tuple[str, ...] = ()
    star: bool = False

    def bindings(self) -> list[tuple[str, str]]:
        """(local name, imported name) pairs; the imported name is "" for `import a.b` and
        `import a.b as c`, which bind `a` and `c` to a module."""
        if self.star:
            return []
        if not self.names:
            local = self.asnames[0] if self.asnames else self.module.split(".", 1)[0]
            return [(local, "")] if local else []
        locals_ = self.asnames if len(self.asnames) == len(self.names) else self.names
        return list(zip(locals_, self.names, strict=True))


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Attribute:
    """A name assigned at module level or in a class body (`x = 1`, `x: int = 1`, a dataclass
    field, an enum member), or `self.x = ...` at the top of `__init__`. `container` is the
    class's qualname ("" at module level); `annotation` and `value` are source text, shortened;
    `instance` marks `self.x` in `__init__`."""

    name: str
    container: str
    line: int
    annotation: str = ""
    value: str = ""
    instance: bool = False

    @property
    def qualname(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Finding:
    """Something found in the code, with the line it is on."""

    category: FindingCategory
    label: str
    line: int
    detail: str
    # security findings: "risky" (dangerous whatever the values at run time) or "check"
    # (the danger depends on a value known only at run time); "" elsewhere
    level: str = ""


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    line: int
    col: int
    message: str


# The keyword index's kind of each kind of symbol (`FileFacts.keywords`).
_KEYWORD_KIND = {SymbolKind.CLASS: KeywordKind.CLASS, SymbolKind.FUNCTION: KeywordKind.FUNCTION,
                 SymbolKind.METHOD: KeywordKind.FUNCTION, SymbolKind.HEADING: KeywordKind.HEADING}


@pickled_by_fields
@dataclass(slots=True)
class FileFacts:
    """Everything repodoc knows about one file's content."""

    language: Language
    lines: int
    encoding: str = "utf-8"
    encoding_note: str = ""
    module_doc: str | None = None
    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    findings: tuple[Finding, ...] = ()
    identifiers: tuple[str, ...] = ()
    identifiers_total: int = 0
    syntax_error: SyntaxProblem | None = None
    has_main_block: bool = False
    all_names: tuple[str, ...] = ()
    attributes: tuple[Attribute, ...] = ()
    # Dotted names the file reads whose first part is imported or defined at module level
    # (`nn.Linear`, `Linear`), with the lines they are on, one per text line:
    # "nn.Linear 8,12\nL 15" (one string: cheap to cache); `reference_lines` reads it.
    refs: str = ""

    def reference_lines(self) -> list[tuple[str, tuple[int, ...]]]:
        """`refs` as (dotted name, lines) pairs."""
        return reference_lines(self.refs)
    extra: dict[str, str] = field(default_factory=dict)

    def keywords(self) -> dict[KeywordKind, list[tuple[str, str]]]:
        """Keyword index entries by kind: sorted unique `(name, anchor)` pairs.

        A name's anchor is its first definition (or the import it comes from).
        """
        found: dict[KeywordKind, dict[str, str]] = {k: {} for k in KeywordKind}
        for sym in self.symbols:
            found[_KEYWORD_KIND[sym.kind]].setdefault(sym.name, sym.anchor)
        for imp in self.imports:
            found[KeywordKind.IMPORT].setdefault(imp.module, imp.anchor)
            for name in imp.names:
                found[KeywordKind.IMPORT].setdefault(name, imp.anchor)
        for ident in self.identifiers:
            found[KeywordKind.IDENTIFIER].setdefault(ident, "original-source")
        return {k: sorted(v.items()) for k, v in found.items() if v}

    def findings_in(self, category: FindingCategory) -> list[Finding]:
        return [f for f in self.findings if f.category is category]


# The fields of `FileFacts` that hold tuples of facts, and the class of those facts (`_reduce_rows`)
_ROWS = (("symbols", Symbol), ("imports", Import), ("findings", Finding), ("attributes", Attribute))
_FACTS_FIELDS = [f.name for f in fields(FileFacts)]
_FACTS_VALUES = operator.attrgetter(*_FACTS_FIELDS)
_MADE_FACTS: Callable[..., FileFacts] = globals()["_made_FileFacts"]
# (where in `FileFacts`' fields, a fact's fields' values, its `_maker`)
_ROW_FIELDS = [(_FACTS_FIELDS.index(name), operator.attrgetter(*[f.name for f in fields(kind)]),
                globals()[f"_made_{kind.__name__}"]) for name, kind in _ROWS]


def _reduce_rows(self: FileFacts) -> tuple[Callable[..., FileFacts], tuple[Any, ...]]:
    """`FileFacts` pickled as a call with its fields' values, each of its symbols, imports, findings and
    attributes as the tuple of its fields' values (its row), not as a call of its own: no `__reduce__` of
    Python per fact, and the rows are made by `operator.attrgetter`s in a `map` (half the instructions of
    pickling, bench/README.md "Figures"; unpickling as before, each fact made by its `_maker` from its row
    in an `itertools.starmap`, as the `REDUCE` of its call made it)."""
    values = list(_FACTS_VALUES(self))
    for at, row, _made in _ROW_FIELDS:
        if values[at]:
            values[at] = tuple(map(row, values[at]))
    return _made_FileFacts_rows, tuple(values)


def _made_FileFacts_rows(*values: Any) -> FileFacts:
    """The `FileFacts` that `_reduce_rows` pickled."""
    fields_ = list(values)
    for at, _row, made in _ROW_FIELDS:
        if fields_[at]:
            fields_[at] = tuple(itertools.starmap(made, fields_[at]))
    return _MADE_FACTS(*fields_)


FileFacts.__reduce__ = _reduce_rows  # type: ignore[method-assign,assignment]


def refs_text(named: Sequence[tuple[str, Sequence[int]]]) -> str:
    """`FileFacts.refs` of (dotted name, its sorted lines) pairs sorted by name: what `reference_lines` reads."""
    # a name on one line (most of them): no join of its lines
    return "\n".join([f"{name} {','.join(map(str, lines))}" if len(lines) > 1 else f"{name} {lines[0]}"
                      for name, lines in named])


def reference_lines(refs: str) -> list[tuple[str, tuple[int, ...]]]:
    """`FileFacts.refs` as (dotted name, lines) pairs."""
    found = []
    for row in refs.split("\n") if refs else ():
        name, _, lines = row.partition(" ")
        # most names are read on one line
        found.append((name, tuple(map(int, lines.split(","))) if "," in lines else (int(lines),)))
    return found
