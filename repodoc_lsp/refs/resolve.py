"""A reference -> resolved, or stale with a "did you mean", against the workspace's facts and files.

A dotted name whose head is one of the project's own packages is followed as Python imports it
(`namespace.py`: re-exports, star imports, submodules, dynamic modules) to the defining class,
whose members (and its workspace bases') are checked; Sphinx's current module applies to roles.
A bare name is looked up in the keyword index. Precision first: a name whose head is importable
from elsewhere (the standard library, an installed package, a declared dependency: `outside.py`)
is not the workspace's, nor is a dotted name that starts with anything else unknown (`self.x`,
`response.json`); nothing of the workspace is imported or run. Links and paths: `paths.py`.
"""

from __future__ import annotations

import builtins
import posixpath
import re
from typing import TYPE_CHECKING

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.knowledge.index import Entry
from repodoc_lsp.refs.extract import CAMEL, DESCRIBED, LINK, NAME, PATH, PY_ROLES, Ref
from repodoc_lsp.refs.model import CLASS_, MODULE_, Found, NameLookup, Verdict
from repodoc_lsp.refs.namespace import Namespaces
from repodoc_lsp.refs.outside import sphinx_default_role
from repodoc_lsp.refs.paths import Paths
from repodoc_lsp.refs.project import Modules, Project
from repodoc_lsp.refs.suggest import CONFIDENT, ROLE_KINDS, confident

if TYPE_CHECKING:
    from repodoc_lsp.store.workspace import Workspace

_BUILTINS = frozenset(dir(builtins))
_CLASS, _FUNCTION, _METHOD = SymbolKind.CLASS.value, SymbolKind.FUNCTION.value, SymbolKind.METHOD.value
_LOOSE_ROLES = frozenset({"attr", "attribute", "data", "const", "obj"})
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)*")  # `NEED_DATA`: a module's constant, not a parameter


class Resolver:
    """The references of one check (or one editor request) against one state of the workspace."""

    def __init__(self, ws: Workspace, index: NameLookup, modules: Modules | None = None) -> None:
        self.ws = ws
        self.index = index
        self.project = Project(ws, modules)
        self.names = Namespaces(ws, self.project)
        self.paths = Paths(ws)
        self._imports: frozenset[str] | None = None
        self._names_by_len: dict[int, list[str]] | None = None
        self.renames: dict[str, str] = {}  # old name -> new name, of a change being checked
        self._role = ""  # the role of the reference being resolved (what kind of name it wants)
        self._xref = False
        self._default_role: str | None = None
        self._words: dict[str, bool] = {}

    def check(self, ref: Ref, place: str) -> Verdict | None:
        """None when `ref` resolves (or is not the workspace's); `place`: the file it is written in."""
        if ref.kind == NAME:
            return self.name(ref, place)
        if ref.kind == LINK:
            return self.paths.link(ref, place)
        if ref.kind == PATH:
            return self.paths.path(ref, place)
        return None

    def default_role(self) -> str:
        """The Sphinx project's `default_role` when it is a Python role (read once)."""
        if self._default_role is None:
            self._default_role = sphinx_default_role(self.ws.root)
        return self._default_role

    def project_tops(self) -> frozenset[str]:
        return self.project.tops()

    def in_project(self, rel: str) -> bool:
        return self.project.owns(rel)

    # -- names -----------------------------------------------------------------------------
    def name(self, ref: Ref, place: str = "") -> Verdict | None:
        """A name: through the project's modules (the current module first), else the keyword index."""
        target = ref.text
        parts = target.split(".")
        if parts[0] in _BUILTINS and len(parts) <= 2:
            return None
        self._role = ref.role.split(":")[-1]
        self._xref = ref.explicit and self._role in PY_ROLES  # a Sphinx cross-reference (a role, the default role)
        if ref.role == "import":
            return self._imported_by_example(ref)
        verdict = self._name(ref, parts, place)
        if verdict is not None and verdict.member and ref.role.startswith(DESCRIBED) and self._in_code(parts[-1]):
            return None  # a member described by hand, named in the code: one added at run time (`env.extend(...)`)
        return verdict

    def _name(self, ref: Ref, parts: list[str], place: str) -> Verdict | None:
        target = ref.text
        done, pending = self._in_modules(ref)
        if done:
            return None if pending is not None and self._quoted(target) else pending
        if self.project.external_top(parts[0]) and parts[0] not in self.project.tops():
            return None
        entries = [e for e in self.index.lookup(parts[0]) if e.kind != SymbolKind.HEADING.value]
        own = [e for e in entries if self.project.owns(e.rel)]
        entries = own or entries  # a class of the same name in the tests does not stand in for it
        if pending is not None and not entries:
            loose = len(parts) == 1 and ((self._role in _LOOSE_ROLES and not CAMEL.fullmatch(parts[0])
                                          and not _CONSTANT.fullmatch(parts[0])) or parts[0].startswith("__"))
            variable = len(parts) > 1 and not parts[0][:1].isupper()  # `self.popitem`, `webob.Response`
            bound = len(parts) == 1 and (parts[0] in self._imported() or self._bound_near(parts[0], place))
            return None if loose or variable or bound or self._quoted(target) else pending
        if entries:
            if len(parts) == 1 or len(parts[0]) < 2 or not parts[0][0].isupper() \
                    or (place.endswith(".py") and self.names.mentions(place, parts[0])):
                return None  # `F.pad` after `import torch.nn.functional as F`, `tl.x`: not the index's class
            return self._member(entries, parts[1:], target)
        return self._unknown(ref, parts, place)

    def _in_modules(self, ref: Ref) -> tuple[bool, Verdict | None]:
        """(decided, verdict) of a name whose head is one of the project's modules; a name missing
        right under the current module is pending (decided: False): it may be found elsewhere."""
        target = ref.text
        in_class = self._in_class(ref) if ref.cls and ref.explicit else None
        if in_class is False:
            return True, None  # a member of the class the description is about
        pending = in_class if isinstance(in_class, Verdict) else None
        # the current module applies to roles, as in Sphinx (``loop.index`` in prose is not jinja2's); a name
        # from one of the project's packages (`pytest.File` under `_pytest.hookspec`) is taken as written
        tries = [f"{ref.module}.{target}"] if ref.explicit and ref.module \
            and not target.startswith(f"{ref.module}.") \
            and not ("." in target and target.split(".")[0] in self.project.tops()) else []
        tries.append(target)
        for i, full in enumerate(tries):
            module, rest = self.project.module_prefix(full.split("."))
            if not module:
                continue
            verdict, at_first = self._walk(Found(MODULE_, self.project.file_of(module) or ""), module, rest, target)
            if verdict is not None and at_first and i < len(tries) - 1:
                pending = pending or verdict
                continue  # not under the current module: try the name as written
            return True, verdict
        return False, pending

    def _imported_by_example(self, ref: Ref) -> Verdict | None:
        """An import of a doc's example code, resolved as Python imports it (the project's own
        modules only: anything else is another library's)."""
        full = f"{ref.module}.{ref.text}" if ref.module else ref.text
        module, rest = self.project.module_prefix(full.split("."))
        if not module:
            return None
        if not rest:
            return None
        verdict, _ = self._walk(Found(MODULE_, self.project.file_of(module) or ""), module, rest, ref.text)
        return verdict

    def _in_class(self, ref: Ref) -> Verdict | bool | None:
        """A role's name inside a class's description (`.. class:: Template`, `.. method::
        Template.render`) looked up on that class first, as Sphinx does: False when the class
        has it, the verdict when it lacks it, None when the class is not the workspace's."""
        context = ref.cls if not ref.module or ref.cls.startswith(f"{ref.module}.") else f"{ref.module}.{ref.cls}"
        module, rest = self.project.module_prefix(context.split("."))
        rel = self.project.file_of(module) if module else None
        found = self.names.resolve_in(rel, ".".join(rest)) if rel and rest else None
        if found is None or found.kind != CLASS_:
            return None
        verdict, _ = self._walk(found, "", ref.text.split("."), ref.text)
        return verdict or False

    def _unknown(self, ref: Ref, parts: list[str], place: str) -> Verdict | None:
        """A name the index does not know: code-looking text (``FDCapture``, `self.x`) may name
        anything; a role or directive says it is code: judged unless importable or bound somewhere."""
        target = ref.text
        if len(parts) == 1 and self._role in _LOOSE_ROLES and not CAMEL.fullmatch(parts[0]):
            return None  # `:attr:`dim``: a parameter or an instance attribute, which the index does not hold
        if not ref.explicit or self.project.external_top(parts[0]) \
                or (len(parts) > 1 and not parts[0][:1].isupper()) \
                or parts[0] in self._imported() or self._bound_near(parts[0], place):
            return None  # (a lower-case dotted head is a module: of another Python version, say)
        near = self._renamed(parts[0]) or self._same_place(parts[0], place, CONFIDENT) \
            or self._closest(parts[0], CONFIDENT)
        suggestion = ".".join([near, *parts[1:]]) if near else ""
        what = f"`{target}`" if len(parts) == 1 else f"`{target}`: `{parts[0]}`"
        return Verdict(f"{what} is not defined in the workspace", suggestion)

    # -- following a dotted name ---------------------------------------------------------
    def _walk(self, here: Found, where: str, rest: list[str], target: str) -> tuple[Verdict | None, bool]:
        """Each part of `rest` looked up from `here` (a module named `where`, or a class) on: (the
        verdict, whether the first part is the one missing)."""
        for i, part in enumerate(rest):
            if here.kind == MODULE_:
                found = self.names.lookup(here.rel, part)
                if found is None:
                    return self._not_in_module(where, here.rel, part, target), i == 0
                here, where = found, f"{where}.{part}"
            elif here.kind == CLASS_:
                if part.startswith("__") and part.endswith("__"):
                    return None, False  # a special method: not followed
                if self.names.has_member(here, part, set(), forwarded=not self._xref) is False:
                    return self._not_member(here, part, target), i == 0
                nested = self.names.nested_class(here, part)
                if nested is None:
                    return None, False  # a method or attribute (or undecidable): what follows is not followed
                here = nested
            else:
                return None, False
        return None, False

    def _member(self, entries: list[Entry], rest: list[str], target: str) -> Verdict | None:
        """A member of a class found by its bare name (the index's): stale only when every class
        of that name (the project's own, when it has one) lacks it."""
        classes = [e for e in entries if e.kind == _CLASS]
        if len(classes) < len(entries):
            return None  # a function's or module's attribute: not followed
        verdict: Verdict | None = None
        for cls in classes:
            qual = f"{cls.container}.{cls.name}" if cls.container else cls.name
            found, _ = self._walk(Found(CLASS_, cls.rel, qual), "", rest, target)
            if found is None:
                return None
            verdict = verdict or found
        return verdict

    # -- verdicts and suggestions -----------------------------------------------------------
    def _not_in_module(self, module: str, rel: str, head: str, target: str) -> Verdict:
        facts = self.ws.facts.one(rel)
        names: dict[str, str] = {}
        if facts is not None:
            for s in facts.symbols:
                if not s.container and s.kind in (SymbolKind.CLASS, SymbolKind.FUNCTION):
                    names[s.name] = s.kind.value
            for a in facts.attributes:
                if not a.container:
                    names.setdefault(a.name, "attribute")
        near = self._renamed(head) or confident(head, names, kinds=ROLE_KINDS.get(self._role, frozenset()))
        at = target.rfind(head)
        suggestion = target[:at] + near + target[at + len(head):] if near and at >= 0 else ""
        return Verdict(f"`{target}`: `{head}` is not defined in {module} ({rel})", suggestion, rel)

    def _not_member(self, cls: Found, member: str, target: str) -> Verdict:
        names: dict[str, str] = {}
        self.names.class_names(cls, names, set())
        near = self._renamed(member) or confident(member, names, kinds=ROLE_KINDS.get(self._role, frozenset()))
        at = target.rfind(member)
        suggestion = target[:at] + near + target[at + len(member):] if near and at >= 0 else ""
        name = cls.qual.rsplit(".", 1)[-1]
        return Verdict(f"`{target}`: `{member}` is not a member of {name} ({cls.rel})", suggestion, cls.rel,
                       member=True)

    def _renamed(self, name: str) -> str:
        """The new name of a definition renamed in the change being checked (`--since`), if one."""
        return self.renames.get(name, "")

    def _imported(self) -> frozenset[str]:
        """Every name some workspace file imports (`from ._utils import UNSET`): defined somewhere."""
        if self._imports is None:
            names = {n for imps in self.ws.facts.imports().values() for i in imps for n in i.names}
            self._imports = frozenset(names)
        return self._imports

    def _bound_near(self, word: str, place: str) -> bool:
        """True when a Python file of `place`'s folder (a doc or a file outside packages: every
        Python file of the workspace) binds `word`."""
        folder = posixpath.dirname(place) if place.endswith(".py") else None
        rels = [r for r in self.ws.facts if r.endswith((".py", ".pyi"))
                and (folder is None or posixpath.dirname(r) == folder)]
        return any(self.names.mentions(r, word, dynamic=False) for r in rels)

    def _in_code(self, word: str) -> bool:
        """True when some Python file of the workspace holds `word` as a whole word (read once a word)."""
        found = self._words.get(word)
        if found is None:
            pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")
            found = self._words[word] = any(pattern.search(self.names.text(rel)) for rel in self.ws.facts
                                            if rel.endswith((".py", ".pyi")))
        return found

    def _quoted(self, target: str) -> bool:
        """True when the workspace's code spells a dotted name as a string: a logger's name, an
        entry-point group, an environ key (`"werkzeug.proxy_fix.orig"`), not a Python name."""
        return "." in target and target in self.names.strings()

    def _same_place(self, name: str, place: str, cutoff: float) -> str:
        """A near name defined in the file the reference is written in (a docstring's module)."""
        if not place.endswith(".py"):
            return ""
        names = {e.name: "" for e in self.index.file_entries(place) if e.kind in (_CLASS, _FUNCTION, _METHOD)}
        return confident(name, names, cutoff)

    def _closest(self, name: str, cutoff: float) -> str:
        if self._names_by_len is None:
            by_len: dict[int, set[str]] = {}
            for rel in self.ws.facts:
                if not self.project.owns(rel):
                    continue
                for e in self.index.file_entries(rel):
                    if e.kind in (_CLASS, _FUNCTION):
                        by_len.setdefault(len(e.name), set()).add(e.name)
            self._names_by_len = {n: sorted(v) for n, v in by_len.items()}
        spread = max(1, len(name) // 4)
        pool = [n for k in range(len(name) - spread, len(name) + spread + 1) for n in self._names_by_len.get(k, ())]
        return confident(name, dict.fromkeys(pool, ""), cutoff)
