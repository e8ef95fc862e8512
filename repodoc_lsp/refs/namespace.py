"""Python's namespaces read from the facts, as Python resolves names: what a name is in a
workspace module (definitions, imports and re-exports, star imports, submodules, what a dynamic
module offers) and whether a workspace class or a base defines, assigns or declares a member.
Nothing of the workspace is imported or run; a standard-library base class is (it is Python's own).
"""

from __future__ import annotations

import builtins
import importlib
import re
import typing
from typing import TYPE_CHECKING

from repodoc_lsp.analysis.model import FileFacts, Symbol, SymbolKind
from repodoc_lsp.analysis.relations import STDLIB
from repodoc_lsp.refs.model import CLASS_, MODULE_, OTHER_, UNKNOWN_, Found
from repodoc_lsp.refs.outside import NOT_IMPORTED, from_stdlib
from repodoc_lsp.refs.project import Project

if TYPE_CHECKING:
    from repodoc_lsp.store.workspace import Workspace

_NO_MEMBERS = frozenset({"object", "Generic", "Protocol", "ABC"})  # bases that add no members worth naming
_DOTTED_STRING = re.compile(r"""(["'])([A-Za-z_]\w*(?:\.\w+)+)\1""")
_DYNAMIC = re.compile(r"^def __getattr__|globals\(\)", re.MULTILINE)

_BINDER = re.compile(r"\b(?:as|global|nonlocal|def|class|for)\s+(?:\w+\s*,\s*)*$")
_AFTER_ASSIGN = re.compile(r"\s*(?::[^=\n]*)?=(?!=)")
_AFTER_ANNOTATION = re.compile(r"\s*:\s*\S")
_KEY = re.compile(r"""["']\s*[,:)\]]""")


def dotted_strings(text: str) -> set[str]:
    """The dotted names a Python text spells as whole string literals."""
    return {m.group(2) for m in _DOTTED_STRING.finditer(text)}


def binds(text: str, word: str, attributes: bool = False) -> bool:
    """True when `text` binds `word` somewhere (see `Namespaces.mentions`): each occurrence is
    judged by the line around it. `attributes`: an attribute set on any object (`t.word =`, an
    instance a class method makes; `wrapper.word =`, a function's attribute) counts too."""
    at = text.find(word)
    n = len(word)
    while at >= 0:
        end = at + n
        if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")) and \
                (end == len(text) or not (text[end].isalnum() or text[end] == "_")):
            start = text.rfind("\n", 0, at) + 1
            before = text[start:at]
            if _BINDER.search(before):
                return True
            if before.endswith(("'", '"')) and _KEY.match(text, end):
                return True
            plain = not before or not (before[-1].isalnum() or before[-1] in "_.") \
                or before.endswith(("self.", "cls.")) or (attributes and before[-2:] != ".." and before[-1] == ".")
            if plain and _AFTER_ASSIGN.match(text, end):
                return True
            if not before.strip() and _AFTER_ANNOTATION.match(text, end):
                return True
        at = text.find(word, at + 1)
    return False


class Namespaces:
    """Lookups in the workspace's modules and classes, remembered for one check."""

    def __init__(self, ws: Workspace, project: Project) -> None:
        self.ws = ws
        self.project = project
        self._texts: dict[str, str] = {}
        self._dynamic_files: dict[str, bool] = {}
        self._looked: dict[tuple[str, str], Found | None] = {}
        self._bound: dict[tuple[str, str], bool] = {}
        self._strings: frozenset[str] | None = None

    def lookup(self, rel: str, name: str, depth: int = 0) -> Found | None:
        """What `name` is in the namespace of the workspace module `rel` (None: not there)."""
        key = (rel, name)
        if key in self._looked:
            return self._looked[key]
        self._looked[key] = Found(UNKNOWN_)  # a cycle of imports: undecidable
        found = self._lookup(rel, name, depth)
        self._looked[key] = found
        return found

    def _lookup(self, rel: str, name: str, depth: int) -> Found | None:
        facts = self.ws.facts.one(rel)
        if facts is None or depth > 20:
            return Found(UNKNOWN_)
        for sym in facts.symbols:
            if not sym.container and sym.name == name and sym.kind in (SymbolKind.CLASS, SymbolKind.FUNCTION):
                return Found(CLASS_, rel, name) if sym.kind is SymbolKind.CLASS else Found(OTHER_, rel, name)
        if any(not a.container and a.name == name for a in facts.attributes):
            return Found(OTHER_, rel, name)
        for imp in facts.imports:
            if imp.star:
                continue
            for local, imported in imp.bindings():
                if local != name:
                    continue
                module = self.project.absolute(rel, imp)
                if not imported:  # `import a.b` binds `a`; `import a.b as c` binds `c` to a.b
                    bound = self.project.file_of(module if imp.asnames else local)
                    return Found(MODULE_, bound) if bound else Found(OTHER_)
                source = self.project.file_of(module)
                if source:
                    found = self.lookup(source, imported, depth + 1)
                    if found is not None:
                        return found
                sub = self.project.file_of(f"{module}.{imported}")
                if sub:
                    return Found(MODULE_, sub)
                return Found(UNKNOWN_ if source else OTHER_)  # broken, or an external name
        for imp in facts.imports:
            if imp.star:
                source = self.project.file_of(self.project.absolute(rel, imp))
                if not source:
                    return Found(UNKNOWN_)  # `from somewhere_else import *`: anything
                found = self.lookup(source, name, depth + 1)
                if found is not None:
                    return found
        sub = self.project.file_of(f"{self.project.module_name(rel)}.{name}")
        if sub:
            return Found(MODULE_, sub)
        if name in facts.all_names:
            return Found(UNKNOWN_)  # listed in `__all__`, made some way not followed
        text = self.text(rel)
        if self.dynamic(rel) and re.search(rf"""['"]{re.escape(name)}['"]""", text):
            return Found(UNKNOWN_)  # a module `__getattr__` or `globals()` fed from a table naming it
        if binds(text, name):
            return Found(OTHER_)  # bound some other way (in an `if`, a `try`, a loop)
        return None

    def symbol(self, cls: Found) -> tuple[FileFacts | None, Symbol | None]:
        facts = self.ws.facts.one(cls.rel)
        if facts is None:
            return None, None
        return facts, next((s for s in facts.symbols if s.qualname == cls.qual and s.kind is SymbolKind.CLASS), None)

    def nested_class(self, cls: Found, name: str) -> Found | None:
        facts, _ = self.symbol(cls)
        qual = f"{cls.qual}.{name}"
        if facts is not None and any(s.qualname == qual and s.kind is SymbolKind.CLASS for s in facts.symbols):
            return Found(CLASS_, cls.rel, qual)
        return None

    def has_member(self, cls: Found, member: str, seen: set[Found], forwarded: bool = True) -> bool | None:
        """Whether the workspace class `cls` or a base defines, assigns or declares `member`
        (None: undecidable, as with a base from elsewhere or, with `forwarded`, a class `__getattr__`:
        a Sphinx cross-reference names a member documented on the class, never one it forwards)."""
        if cls in seen or len(seen) > 30:
            return None
        seen.add(cls)
        facts, symbol = self.symbol(cls)
        if facts is None or symbol is None:
            return None
        qual = cls.qual
        if any(s.container == qual and s.name == member for s in facts.symbols) \
                or any(a.container == qual and a.name == member for a in facts.attributes):
            return True
        if forwarded and any(s.container == qual and s.name in ("__getattr__", "__getattribute__")
                             for s in facts.symbols):
            return None
        lines = self.text(cls.rel).split("\n")[symbol.line - 1 : symbol.end_line]
        if binds("\n".join(lines), member, attributes=True):  # `self.x =`, `t.x =`, `__slots__ = ("x",)`, ...
            return True
        unknown = False
        for base in symbol.bases:
            name = base.split("[")[0].strip()
            if "=" in name or name.split(".")[-1] in _NO_MEMBERS:
                continue  # `metaclass=...`; `object`, `Generic[T]`: nothing to name
            found = self.resolve_in(cls.rel, name)
            if found is not None and found.kind == CLASS_:
                has = self.has_member(found, member, seen, forwarded)
                if has:
                    return True
                unknown = unknown or has is None
                continue
            python = self._python_class(cls.rel, name)
            if python is not None:
                if hasattr(python, member):
                    return True
                continue
            unknown = True  # a base from elsewhere: it may define anything
        return None if unknown else False

    def resolve_in(self, rel: str, dotted: str) -> Found | None:
        """A dotted name as read in module `rel` (a base class written there)."""
        parts = dotted.split(".")
        found = self.lookup(rel, parts[0])
        for part in parts[1:]:
            if found is None:
                return None
            if found.kind == MODULE_:
                found = self.lookup(found.rel, part)
            elif found.kind == CLASS_:
                found = self.nested_class(found, part) or Found(UNKNOWN_)
            else:
                return found
        return found

    def _python_class(self, rel: str, dotted: str) -> type | None:
        """A builtin or standard-library class a base names (imported: it is Python's own)."""
        parts = dotted.split(".")
        if len(parts) == 1 and isinstance(getattr(builtins, dotted, None), type):
            facts = self.ws.facts.one(rel)
            if facts is None or not any(dotted == local for i in facts.imports for local, _ in i.bindings()):
                return getattr(builtins, dotted)
        facts = self.ws.facts.one(rel)
        if facts is None:
            return None
        for imp in facts.imports:
            for local, imported in imp.bindings():
                top = imp.module.split(".")[0]
                if local != parts[0] or imp.level or top not in STDLIB or top in NOT_IMPORTED \
                        or not from_stdlib(top):
                    continue
                path = [imported, *parts[1:]] if imported else parts[1:]
                module = imp.module if imported or imp.asnames else local
                try:
                    value: object = importlib.import_module(module)
                    for p in path:
                        value = getattr(value, p)
                except Exception:
                    return None
                origin = typing.get_origin(value)  # `typing.Mapping` stands for `collections.abc.Mapping`
                return value if isinstance(value, type) else origin if isinstance(origin, type) else None
        return None

    def class_names(self, cls: Found, into: dict[str, str], seen: set[Found]) -> None:
        """Every member name of `cls` and its workspace bases, with its kind (for suggestions)."""
        if cls in seen:
            return
        seen.add(cls)
        facts, symbol = self.symbol(cls)
        if facts is None or symbol is None:
            return
        for s in facts.symbols:
            if s.container == cls.qual:
                into.setdefault(s.name, s.kind.value)
        for a in facts.attributes:
            if a.container == cls.qual:
                into.setdefault(a.name, "attribute")
        for base in symbol.bases:
            found = self.resolve_in(cls.rel, base.split("[")[0].strip())
            if found is not None and found.kind == CLASS_:
                self.class_names(found, into, seen)

    def text(self, rel: str) -> str:
        text = self._texts.get(rel)
        if text is None:
            text = self._texts[rel] = self.ws.read_text(rel) or ""
        return text

    def dynamic(self, rel: str) -> bool:
        found = self._dynamic_files.get(rel)
        if found is None:
            found = self._dynamic_files[rel] = bool(_DYNAMIC.search(self.text(rel)))
        return found

    def mentions(self, rel: str, word: str, dynamic: bool = True) -> bool:
        """True when the file binds `word` other than by a def or class the index knows (an
        assignment or keyword `word =`, `self.word =`, `word: int`, `as word`, `global word`,
        `for word in`, a string key `"word":`) or (dynamic=True) makes names dynamically (a star
        import, a module `__getattr__`, `globals()`). Assignments and attributes are not in the
        index, so such a name is taken as defined (precision first). Each occurrence of the word
        is judged by its line around it: no pattern runs over whole files."""
        key = (rel, word)
        found = self._bound.get(key)
        if found is None:
            text = self.text(rel)
            found = self._bound[key] = binds(text, word, attributes=True)
        return found or (dynamic and self.dynamic(rel))

    def strings(self) -> frozenset[str]:
        """Every dotted name the workspace's Python files spell as a whole string literal (read once)."""
        if self._strings is None:
            found: set[str] = set()
            for rel in self.ws.facts:
                if rel.endswith((".py", ".pyi")):
                    found.update(dotted_strings(self.text(rel)))
            self._strings = frozenset(found)
        return self._strings

    def known_strings(self, strings: frozenset[str]) -> None:
        """Take the workspace's dotted strings as gathered elsewhere (a check's kept table)."""
        self._strings = strings
