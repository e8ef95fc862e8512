"""A reference -> resolved, or stale with a "did you mean", against the workspace's facts and files.

Names resolve through the module table (`Relations.file_of`), the definitions in the facts and the
keyword index. Precision first: a name whose top-level package is not a workspace module but is
importable (the standard library, an installed package: `importlib.util.find_spec`, which finds
without importing) is not the workspace's, nor is a dotted name that starts with anything else
unknown (`self.x`, `response.json`); nothing of the workspace is imported or run.
"""

from __future__ import annotations

import builtins
import difflib
import importlib
import importlib.util
import os
import posixpath
import re
import stat
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repodoc_lsp.analysis.model import FileFacts, Import, Symbol, SymbolKind
from repodoc_lsp.analysis.relations import STDLIB, absolute_module, is_test_file
from repodoc_lsp.knowledge.index import Entry, KeywordIndex
from repodoc_lsp.refs.extract import CAMEL, LINK, NAME, PATH, PY_ROLES, Ref, markdown_anchors
from repodoc_lsp.refs.extract import HISTORY as _HISTORY
from repodoc_lsp.store.workspace import Workspace

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_BUILTINS = frozenset(dir(builtins))
_CLASS, _FUNCTION, _METHOD = SymbolKind.CLASS.value, SymbolKind.FUNCTION.value, SymbolKind.METHOD.value
_LOOSE_ROLES = frozenset({"attr", "attribute", "data", "const", "obj"})
_NO_MEMBERS = frozenset({"object", "Generic", "Protocol", "ABC"})  # bases that add no members worth naming
_DYNAMIC = re.compile(r"^def __getattr__|globals\(\)", re.MULTILINE)
# folders a project's importable packages live in (besides its root); others hold tests, examples
_PACKAGE_ROOTS = frozenset({"", "src", "lib", "python"})
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_NOT_PROJECT = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "example", "conftest", "setup",
                          "noxfile", "tasks", "benchmarks", "bench", "scripts", "fabfile", "conf"})
# standard-library modules whose import does something (a browser, a window, a print): never imported
_NOT_IMPORTED = frozenset({"antigravity", "this", "idlelib", "turtle", "turtledemo", "tkinter", "webbrowser"})
CONFIDENT = 0.8  # how close a name must be to another to be suggested for it
_ROLE_KINDS = {  # the kinds of definition a role names (suggestions keep to them)
    **dict.fromkeys(("meth", "method", "func", "function"), frozenset({"method", "function"})),
    **dict.fromkeys(("attr", "attribute", "data", "const"), frozenset({"attribute"})),
    **dict.fromkeys(("class", "exc", "exception"), frozenset({"class"})),
}

# what a name is, looked up in a module's namespace or on a class
MODULE_, CLASS_, OTHER_, UNKNOWN_ = "module", "class", "other", "unknown"


@dataclass(frozen=True, slots=True)
class Found:
    """A name found: a workspace module or class (followed further), something else defined
    (a function, a variable, an external name: not followed) or something not decidable."""

    kind: str
    rel: str = ""
    qual: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a reference is stale, and the replacement for its text when there is one."""

    message: str
    suggestion: str = ""
    about: str = ""  # the workspace file the name was looked up in (for --since)
    sure: bool = True  # the suggestion is a rename seen in git or a close name of the same kind


_BINDER = re.compile(r"\b(?:as|global|nonlocal|def|class|for)\s+(?:\w+\s*,\s*)*$")
_AFTER_ASSIGN = re.compile(r"\s*(?::[^=\n]*)?=(?!=)")
_AFTER_ANNOTATION = re.compile(r"\s*:\s*\S")
_KEY = re.compile(r"""["']\s*[,:)\]]""")


def binds(text: str, word: str) -> bool:
    """True when `text` binds `word` somewhere (see `Resolver._mentions`): each occurrence is
    judged by the line around it."""
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
            plain = not before or not (before[-1].isalnum() or before[-1] in "_.") or before.endswith(("self.", "cls."))
            if plain and _AFTER_ASSIGN.match(text, end):
                return True
            if not before.strip() and _AFTER_ANNOTATION.match(text, end):
                return True
        at = text.find(word, at + 1)
    return False


def _only_one_like(name: str, defined: dict[str, Entry]) -> list[str]:
    """A renamed definition found at the same place: the module's only class (for a CamelCase
    name) or only function (for a lower-case one), when no name is near enough."""
    kind = _CLASS if name[:1].isupper() else _FUNCTION
    same = [n for n, e in defined.items() if e.kind == kind]
    return same if len(same) == 1 else []


# Python 2's standard-library modules that Python 3 renamed: docs of old still name them
_PYTHON2 = frozenset({"BaseHTTPServer", "SimpleHTTPServer", "CGIHTTPServer", "SocketServer", "ConfigParser",
                      "Queue", "StringIO", "cStringIO", "cPickle", "urllib2", "urlparse", "HTMLParser", "Cookie",
                      "cookielib", "httplib", "Tkinter", "__builtin__", "UserDict", "thread", "xmlrpclib"})


_STDLIB_DIRS = tuple({os.path.join(sysconfig.get_paths()[key], "") for key in ("stdlib", "platstdlib")})


def from_stdlib(top: str) -> bool:
    """True when the module `top` that an import would load is Python's own (built in, frozen, or a
    file of the standard library's folders), found without running anything: a checkout's `json.py`
    or `turtle.py` on the path (`python -m` from its root) is not, and is never imported."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    origin = (spec.origin or "") if spec is not None else ""
    return origin in ("built-in", "frozen") or origin.startswith(_STDLIB_DIRS)


@lru_cache(maxsize=4096)
def external(top: str) -> bool:
    """True when `top` is an importable module outside the workspace (found, never imported), or
    one of Python 2's standard library."""
    if top in _PYTHON2:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return True  # something is there; not ours to judge


def inside(root: Path, rel: str) -> Path | None:
    """`root / rel` (root resolved) with its symbolic links resolved, or None when a step of it
    leaves `root` (`..` above it, a link to outside): each component is looked at (lstat,
    readlink) only once the path to it is known to stay inside, so nothing outside is ever
    stat'ed or read. A missing component ends the walk: the rest is joined as written."""
    base = str(root)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    current, links = base, 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if current == base:
                return None
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(step).st_mode)
        except OSError:  # missing (or not a folder): nothing further to follow
            rest = os.path.normpath(os.path.join(step, *parts))
            return Path(rest) if rest == base or rest.startswith(base + os.sep) else None
        if not is_link:
            current = step
            continue
        links += 1
        try:
            target = os.readlink(step)
        except OSError:
            return None
        if links > 40:
            return None  # a loop
        if os.path.isabs(target):
            if target != base and not target.startswith(base + os.sep):
                return None
            current, target = base, os.path.relpath(target, base)
        parts = [p for p in target.split(os.sep) if p not in ("", ".")] + parts
    return Path(current)


def _confident(name: str, names: dict[str, str], cutoff: float = CONFIDENT, kinds: frozenset[str] = frozenset()) -> str:
    """A name of `names` (name -> kind) near enough to `name` to be suggested for it, as a typo's fix
    is: one edit away (`namedtuple_dict_structure_factory` is not its `unstructure` twin), of the kind its spelling says
    (a CamelCase name for a class, a lower-case one for anything else), as public or private as it,
    of the kind its role says (`kinds`, when known), and no other as near. A rename is not guessed
    (`from_pyfile` is not `from_file`): `--since` takes renames from git."""
    public = name.lstrip("_")
    pool = sorted(n for n, kind in names.items() if n.lstrip("_")[:1].isupper() == public[:1].isupper()
                  and n.startswith("_") == name.startswith("_") and n != name  # not a private twin
                  and (not kinds or not kind or kind in kinds))
    near = [n for n in difflib.get_close_matches(name, pool, n=5, cutoff=cutoff) if _edits(name, n) <= 1]
    return near[0] if len(near) == 1 else ""


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions; a swap of neighbours is one)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def declared_dependencies(root: Path) -> set[str]:
    """Import names (normalised distribution names) of what the project at `root` declares it
    needs: pyproject.toml's dependencies and optional dependencies (and Poetry's), requirements
    files (`requirements*.txt`, `requirements/*.txt`, `*.in`) and setup.cfg's install_requires."""
    specs: list[str] = []
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        data = {}
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    specs += [d for d in project.get("dependencies", ()) if isinstance(d, str)]
    for extra in (project.get("optional-dependencies") or {}).values():
        specs += [d for d in extra if isinstance(d, str)]
    for group in (data.get("dependency-groups") or {}).values():
        specs += [d for d in group if isinstance(d, str)]
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    for table in (poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})):
        specs += [str(k) for k in table] if isinstance(table, dict) else []
    files = [*root.glob("requirements*.txt"), *root.glob("requirements/*.txt"), *root.glob("requirements/*.in"),
             *root.glob("requirements*.in")]
    for path in files:
        try:
            specs += [line for line in path.read_text(encoding="utf-8").splitlines()
                      if line.strip() and not line.lstrip().startswith(("#", "-"))]
        except (OSError, UnicodeDecodeError):
            continue
    try:
        cfg = (root / "setup.cfg").read_text(encoding="utf-8")
        block = re.search(r"install_requires\s*=\s*\n((?:[ \t]+\S.*\n?)+)", cfg)
        specs += block.group(1).splitlines() if block else []
    except (OSError, UnicodeDecodeError):
        pass
    names = set()
    for spec in specs:
        m = _REQUIREMENT.match(spec)
        if m:
            names.add(re.sub(r"[-.]+", "_", m.group(1)).lower())
    return names


_CONF = ("docs/conf.py", "doc/conf.py", "docs/source/conf.py", "doc/source/conf.py", "doc/en/conf.py", "conf.py")
_DEFAULT_ROLE = re.compile(r"""^default_role\s*=\s*["']([\w:]+)["']""", re.MULTILINE)


def sphinx_default_role(ws: Workspace) -> str:
    """The Python role Sphinx gives interpreted text without one (`default_role` in the Sphinx
    project's conf.py: `any`, `obj`, `py:class`...); "" when it is `code`, `literal` or unset."""
    for rel in _CONF:
        try:  # (the docs folder is often the output folder: its files are not the workspace's facts)
            text = (ws.root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = _DEFAULT_ROLE.search(text)
        role = m.group(1) if m else ""
        name = role.split(":")[-1]
        return "obj" if name == "any" else role if name in PY_ROLES else ""
    return ""


class Resolver:
    def __init__(self, ws: Workspace, index: KeywordIndex) -> None:
        self.ws = ws
        self.index = index
        self.file_of = ws.relations.file_of
        self.top_level = ws.relations.top_level
        self._texts: dict[str, str] = {}
        self._anchors: dict[str, set[str]] = {}
        self._bound: dict[tuple[str, str], bool] = {}
        self._dynamic_files: dict[str, bool] = {}
        self._imports: frozenset[str] | None = None
        self._names_by_len: dict[int, list[str]] | None = None
        self._tops: frozenset[str] | None = None
        self._own: frozenset[str] | None = None
        self._deps: frozenset[str] | None = None
        self._looked: dict[tuple[str, str], Found | None] = {}
        self._module_of_rel: dict[str, str] = {}
        self._rel_of_module: dict[str, str] = {}
        self.renames: dict[str, str] = {}  # old name -> new name, of a change being checked
        self._role = ""  # the role of the reference being resolved (what kind of name it wants)
        self._default_role: str | None = None

    # -- names -----------------------------------------------------------------------------
    def name(self, ref: Ref, place: str = "") -> Verdict | None:
        """None when `ref` resolves (or is not the workspace's); `place`: the file it is written in.
        A dotted name is the workspace's when its head is one of the project's own top-level
        packages or modules; it is followed as Python imports it (re-exports, star imports,
        submodules) to the defining class, whose members (and its workspace bases') are checked."""
        target = ref.text
        parts = target.split(".")
        if parts[0] in _BUILTINS and len(parts) <= 2:
            return None
        self._role = ref.role.split(":")[-1]
        # the current module applies to roles, as in Sphinx (``loop.index`` in prose is not jinja2's)
        tries = [f"{ref.module}.{target}"] if ref.explicit and ref.module \
            and not target.startswith(f"{ref.module}.") else []
        tries.append(target)
        pending: Verdict | None = None  # missing from the current module: unless it is found elsewhere
        for i, full in enumerate(tries):
            module, rest = self._module_prefix(full.split("."))
            if not module:
                continue
            verdict, at_first = self._walk(module, rest, target)
            if verdict is not None and at_first and i < len(tries) - 1:
                pending = verdict
                continue  # not under the current module: try the name as written
            return verdict
        if self._external_top(parts[0]) and parts[0] not in self.project_tops():
            return None
        entries = [e for e in self.index.lookup(parts[0]) if e.kind != SymbolKind.HEADING.value]
        own = [e for e in entries if self.in_project(e.rel)]
        entries = own or entries  # a class of the same name in the tests does not stand in for it
        if pending is not None and not entries:
            loose = len(parts) == 1 and ((self._role in _LOOSE_ROLES and not CAMEL.fullmatch(parts[0]))
                                         or parts[0].startswith("__"))
            variable = len(parts) > 1 and not parts[0][:1].isupper()  # `self.popitem`, `webob.Response`
            return None if loose or variable else pending
        if entries:
            if len(parts) == 1 or len(parts[0]) < 2 or not parts[0][0].isupper() \
                    or (place.endswith(".py") and self._mentions(place, parts[0])):
                return None  # `F.pad` after `import torch.nn.functional as F`, `tl.x`: not the index's class
            return self._member(entries, parts[1:], target)
        if len(parts) == 1 and ref.role.split(":")[-1] in _LOOSE_ROLES and not CAMEL.fullmatch(parts[0]):
            return None  # `:attr:`dim``: a parameter or an instance attribute, which the index does not hold
        # unknown anywhere: code-looking text (``FDCapture``, `self.x`) may name anything; a role
        # or directive says it is code: judged unless it is importable or bound somewhere
        if not ref.explicit or self._external_top(parts[0]) or (len(parts) > 1 and not parts[0][:1].isupper()) \
                or parts[0] in self._imported() or self._bound_near(parts[0], place):
            return None  # (a lower-case dotted head is a module: of another Python version, say)
        near = self._renamed(parts[0]) or self._same_place(parts[0], place, CONFIDENT) \
            or self._closest(parts[0], CONFIDENT)
        suggestion = ".".join([near, *parts[1:]]) if near else ""
        what = f"`{target}`" if len(parts) == 1 else f"`{target}`: `{parts[0]}`"
        return Verdict(f"{what} is not defined in the workspace", suggestion)

    def default_role(self) -> str:
        """The Sphinx project's `default_role` when it is a Python role (read once)."""
        if self._default_role is None:
            self._default_role = sphinx_default_role(self.ws)
        return self._default_role

    # -- the project's modules -------------------------------------------------------------
    def project_tops(self) -> frozenset[str]:
        """The project's own top-level importable names: packages and modules at its root or in
        `src/` (or `lib/`, `python/`), not a test's folder of loose files nor an example project."""
        if self._tops is None:
            self._own_files()
            self._tops = frozenset({module.split(".")[0] for module in self._module_of_rel.values()})
        return self._tops

    def in_project(self, rel: str) -> bool:
        """Whether `rel` is a module of the project's own packages (not a test file)."""
        return rel in self._own_files()

    def _own_files(self) -> frozenset[str]:
        """The files of the project's own packages, with their module names as Python imports them
        (a folder without `__init__.py` inside a package is a namespace package: `flask.sansio.app`)."""
        if self._own is None:
            tops: dict[str, str] = {}  # top-level name -> its package folder, or its module file
            for relaxed in (False, True):  # relaxed: no package at the root, in sub-projects' folders
                for rel, module in self.ws.relations.module_of.items():
                    names = module.split(".")
                    depth = len(names) - (0 if rel.endswith(("__init__.py", "__init__.pyi")) else 1)
                    folders = rel.split("/")[:-1]
                    holder = "/".join(folders[: len(folders) - depth]) if depth <= len(folders) else "?"
                    if names[0] in _NOT_PROJECT or is_test_file(rel) or names[0].startswith("test_"):
                        continue
                    if holder in _PACKAGE_ROOTS or (relaxed and any(
                            (self.ws.root / holder / marker).is_file() for marker in _PROJECT_FILES)):
                        place = posixpath.join(holder, names[0])
                        tops.setdefault(names[0], place if depth else rel)
                if tops:
                    break
            for top, place in tops.items():
                for rel in self.ws.relations.module_of:
                    if rel == place:
                        self._module_of_rel[rel] = top
                    elif rel.startswith(place + "/") and not is_test_file(rel):
                        tail = rel[len(place) + 1:].rsplit(".", 1)[0].split("/")
                        if tail[-1] == "__init__":
                            tail = tail[:-1]
                        if all(t.isidentifier() for t in tail):
                            self._module_of_rel[rel] = ".".join([top, *tail])
            self._rel_of_module = {m: r for r, m in sorted(self._module_of_rel.items(), reverse=True)}
            self._own = frozenset(self._module_of_rel)
        return self._own

    def _file_of(self, module: str) -> str | None:
        self._own_files()
        return self._rel_of_module.get(module) or self.file_of.get(module)

    def _module_name(self, rel: str) -> str:
        self._own_files()
        return self._module_of_rel.get(rel) or self.ws.relations.module_of.get(rel, "")

    def _absolute(self, rel: str, imp: Import) -> str:
        """An import's absolute module, relative ones resolved against the file's module name."""
        if not imp.level:
            return imp.module
        return absolute_module(self._module_name(rel), rel.endswith(("__init__.py", "__init__.pyi")), imp)

    def _external_top(self, top: str) -> bool:
        """A module that is not the project's: importable here, or a declared dependency."""
        return top in self._declared() or external(top)

    def _declared(self) -> frozenset[str]:
        """The import names of the project's declared dependencies (pyproject dependencies and
        extras, requirements files, setup.cfg), as distribution names normalised (`-` -> `_`)."""
        if self._deps is None:
            self._deps = frozenset(declared_dependencies(self.ws.root))
        return self._deps

    def _module_prefix(self, parts: list[str]) -> tuple[str, list[str]]:
        if parts[0] not in self.project_tops():
            return "", parts
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if self._file_of(name):
                return name, parts[i:]
        return "", parts

    # -- following a dotted name ---------------------------------------------------------
    def _walk(self, module: str, rest: list[str], target: str) -> tuple[Verdict | None, bool]:
        """Each part of `rest` looked up from `module` on: (the verdict, whether the first part
        is the one missing)."""
        here = Found(MODULE_, self._file_of(module) or "")
        where = module
        for i, part in enumerate(rest):
            if here.kind == MODULE_:
                found = self.lookup(here.rel, part)
                if found is None:
                    return self._not_in_module(where, here.rel, part, target), i == 0
                here, where = found, f"{where}.{part}"
            elif here.kind == CLASS_:
                if part.startswith("__") and part.endswith("__"):
                    return None, False  # a special method: not followed
                has = self.has_member(here, part, set())
                if has is False:
                    return self._not_member(here, part, target), i == 0
                nested = self._nested_class(here, part)
                if nested is None:
                    return None, False  # a method or attribute (or undecidable): what follows is not followed
                here = nested
            else:
                return None, False
        return None, False

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
                module = self._absolute(rel, imp)
                if not imported:  # `import a.b` binds `a`; `import a.b as c` binds `c` to a.b
                    bound = self._file_of(module if imp.asnames else local)
                    return Found(MODULE_, bound) if bound else Found(OTHER_)
                source = self._file_of(module)
                if source:
                    found = self.lookup(source, imported, depth + 1)
                    if found is not None:
                        return found
                sub = self._file_of(f"{module}.{imported}")
                if sub:
                    return Found(MODULE_, sub)
                return Found(UNKNOWN_ if source else OTHER_)  # broken, or an external name
        for imp in facts.imports:
            if imp.star:
                source = self._file_of(self._absolute(rel, imp))
                if not source:
                    return Found(UNKNOWN_)  # `from somewhere_else import *`: anything
                found = self.lookup(source, name, depth + 1)
                if found is not None:
                    return found
        sub = self._file_of(f"{self._module_name(rel)}.{name}")
        if sub:
            return Found(MODULE_, sub)
        if name in facts.all_names:
            return Found(UNKNOWN_)  # listed in `__all__`, made some way not followed
        text = self._text(rel)
        if self._dynamic(rel) and re.search(rf"""['"]{re.escape(name)}['"]""", text):
            return Found(UNKNOWN_)  # a module `__getattr__` or `globals()` fed from a table naming it
        if binds(text, name):
            return Found(OTHER_)  # bound some other way (in an `if`, a `try`, a loop)
        return None

    def _symbol(self, cls: Found) -> tuple[FileFacts | None, Symbol | None]:
        facts = self.ws.facts.one(cls.rel)
        if facts is None:
            return None, None
        return facts, next((s for s in facts.symbols if s.qualname == cls.qual and s.kind is SymbolKind.CLASS), None)

    def _nested_class(self, cls: Found, name: str) -> Found | None:
        facts, _ = self._symbol(cls)
        qual = f"{cls.qual}.{name}"
        if facts is not None and any(s.qualname == qual and s.kind is SymbolKind.CLASS for s in facts.symbols):
            return Found(CLASS_, cls.rel, qual)
        return None

    def has_member(self, cls: Found, member: str, seen: set[Found]) -> bool | None:
        """Whether the workspace class `cls` or a base defines, assigns or declares `member`
        (None: undecidable, as with a base from elsewhere or a class `__getattr__`)."""
        if cls in seen or len(seen) > 30:
            return None
        seen.add(cls)
        facts, symbol = self._symbol(cls)
        if facts is None or symbol is None:
            return None
        qual = cls.qual
        if any(s.container == qual and s.name == member for s in facts.symbols) \
                or any(a.container == qual and a.name == member for a in facts.attributes):
            return True
        if any(s.container == qual and s.name in ("__getattr__", "__getattribute__") for s in facts.symbols):
            return None
        lines = self._text(cls.rel).split("\n")[symbol.line - 1 : symbol.end_line]
        if binds("\n".join(lines), member):  # `self.x =` in any method, `__slots__ = ("x",)`, ...
            return True
        unknown = False
        for base in symbol.bases:
            name = base.split("[")[0].strip()
            if "=" in name or name.split(".")[-1] in _NO_MEMBERS:
                continue  # `metaclass=...`; `object`, `Generic[T]`: nothing to name
            found = self._resolve_in(cls.rel, name)
            if found is not None and found.kind == CLASS_:
                has = self.has_member(found, member, seen)
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

    def _resolve_in(self, rel: str, dotted: str) -> Found | None:
        """A dotted name as read in module `rel` (a base class written there)."""
        parts = dotted.split(".")
        found = self.lookup(rel, parts[0])
        for part in parts[1:]:
            if found is None:
                return None
            if found.kind == MODULE_:
                found = self.lookup(found.rel, part)
            elif found.kind == CLASS_:
                found = self._nested_class(found, part) or Found(UNKNOWN_)
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
                if local != parts[0] or imp.level or top not in STDLIB or top in _NOT_IMPORTED \
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
                return value if isinstance(value, type) else None
        return None

    def _class_names(self, cls: Found, into: dict[str, str], seen: set[Found]) -> None:
        """Every member name of `cls` and its workspace bases, with its kind (for suggestions)."""
        if cls in seen:
            return
        seen.add(cls)
        facts, symbol = self._symbol(cls)
        if facts is None or symbol is None:
            return
        for s in facts.symbols:
            if s.container == cls.qual:
                into.setdefault(s.name, s.kind.value)
        for a in facts.attributes:
            if a.container == cls.qual:
                into.setdefault(a.name, "attribute")
        for base in symbol.bases:
            found = self._resolve_in(cls.rel, base.split("[")[0].strip())
            if found is not None and found.kind == CLASS_:
                self._class_names(found, into, seen)

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
        near = self._renamed(head) or _confident(head, names, kinds=_ROLE_KINDS.get(self._role, frozenset()))
        at = target.rfind(head)
        suggestion = target[:at] + near + target[at + len(head):] if near and at >= 0 else ""
        return Verdict(f"`{target}`: `{head}` is not defined in {module} ({rel})", suggestion, rel)

    def _not_member(self, cls: Found, member: str, target: str) -> Verdict:
        names: dict[str, str] = {}
        self._class_names(cls, names, set())
        near = self._renamed(member) or _confident(member, names, kinds=_ROLE_KINDS.get(self._role, frozenset()))
        at = target.rfind(member)
        suggestion = target[:at] + near + target[at + len(member):] if near and at >= 0 else ""
        name = cls.qual.rsplit(".", 1)[-1]
        return Verdict(f"`{target}`: `{member}` is not a member of {name} ({cls.rel})", suggestion, cls.rel)

    def _renamed(self, name: str) -> str:
        """The new name of a definition renamed in the change being checked (`--since`), if one."""
        return self.renames.get(name, "")

    def _member(self, entries: list[Entry], rest: list[str], target: str) -> Verdict | None:
        """A member of a class found by its bare name (the index's): stale only when every class
        of that name (the project's own, when it has one) lacks it."""
        classes = [e for e in entries if e.kind == _CLASS]
        if len(classes) < len(entries):
            return None  # a function's or module's attribute: not followed
        verdict: Verdict | None = None
        for cls in classes:
            qual = f"{cls.container}.{cls.name}" if cls.container else cls.name
            found, _ = self._walk_class(Found(CLASS_, cls.rel, qual), rest, target)
            if found is None:
                return None
            verdict = verdict or found
        return verdict

    def _walk_class(self, cls: Found, rest: list[str], target: str) -> tuple[Verdict | None, bool]:
        here = cls
        for i, part in enumerate(rest):
            if part.startswith("__") and part.endswith("__"):
                return None, False
            has = self.has_member(here, part, set())
            if has is False:
                return self._not_member(here, part, target), i == 0
            nested = self._nested_class(here, part)
            if nested is None:
                return None, False
            here = nested
        return None, False

    def _text(self, rel: str) -> str:
        text = self._texts.get(rel)
        if text is None:
            text = self._texts[rel] = self.ws.read_text(rel) or ""
        return text

    def _mentions(self, rel: str, word: str, dynamic: bool = True) -> bool:
        """True when the file binds `word` other than by a def or class the index knows (an
        assignment or keyword `word =`, `self.word =`, `word: int`, `as word`, `global word`,
        `for word in`, a string key `"word":`) or (dynamic=True) makes names dynamically (a star
        import, a module `__getattr__`, `globals()`). Assignments and attributes are not in the
        index, so such a name is taken as defined (precision first). Each occurrence of the word
        is judged by its line around it: no pattern runs over whole files."""
        key = (rel, word)
        found = self._bound.get(key)
        if found is None:
            text = self._text(rel)
            found = self._bound[key] = binds(text, word)
        return found or (dynamic and self._dynamic(rel))

    def _dynamic(self, rel: str) -> bool:
        found = self._dynamic_files.get(rel)
        if found is None:
            found = self._dynamic_files[rel] = bool(_DYNAMIC.search(self._text(rel)))
        return found

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
        return any(self._mentions(r, word, dynamic=False) for r in rels)

    def _same_place(self, name: str, place: str, cutoff: float) -> str:
        """A near name defined in the file the reference is written in (a docstring's module)."""
        if not place.endswith(".py"):
            return ""
        names = {e.name: "" for e in self.index.file_entries(place) if e.kind in (_CLASS, _FUNCTION, _METHOD)}
        return _confident(name, names, cutoff)

    def _closest(self, name: str, cutoff: float) -> str:
        if self._names_by_len is None:
            by_len: dict[int, set[str]] = {}
            for e in self.index.search("", limit=10**7):
                if e.kind in (_CLASS, _FUNCTION) and self.in_project(e.rel):
                    by_len.setdefault(len(e.name), set()).add(e.name)
            self._names_by_len = {n: sorted(v) for n, v in by_len.items()}
        spread = max(1, len(name) // 4)
        pool = [n for k in range(len(name) - spread, len(name) + spread + 1) for n in self._names_by_len.get(k, ())]
        return _confident(name, dict.fromkeys(pool, ""), cutoff)

    # -- links and paths ---------------------------------------------------------------------
    def link(self, ref: Ref, place: str) -> Verdict | None:
        path, _, anchor = ref.text.partition("#")
        from urllib.parse import unquote

        path = unquote(path)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(place), path)) if path else place
        if target.startswith("../") or target == "..":
            return None  # outside the workspace: not ours to judge
        full = inside(self.ws.root, target)
        if full is None:
            return None  # through a link out of the workspace: not ours to judge (nor to look at)
        if path and not full.exists():
            if not path.endswith("/") and (md := inside(self.ws.root, target + ".md")) is not None and md.exists():
                return None
            return Verdict(f"link `{ref.text}`: {target} does not exist", self._near_path(ref.text, target), sure=False)
        if anchor and full.is_file() and target.lower().endswith((".md", ".markdown")):
            anchors = self._anchors_of(full.relative_to(self.ws.root).as_posix())
            if anchor not in anchors and anchor.lower() not in anchors:
                # an anchor with capitals is an HTML id (heading slugs are lower case): ids first
                ids = sorted(a for a in anchors if a != a.lower()) if anchor != anchor.lower() else []
                near = (difflib.get_close_matches(anchor, ids, n=1, cutoff=0.6)
                        or difflib.get_close_matches(anchor.lower(), sorted(anchors), n=1, cutoff=0.6))
                return Verdict(f"link `{ref.text}`: no heading `#{anchor}` in {target}",
                               f"{ref.text.partition('#')[0]}#{near[0]}" if near else "", sure=False)
        return None

    def path(self, ref: Ref, place: str) -> Verdict | None:
        text = ref.text.removeprefix("./")
        here = posixpath.normpath(posixpath.join(posixpath.dirname(place), text))
        if text.startswith("../"):  # relative to the doc only
            if here.startswith("../") or _HISTORY.search(here):
                return None  # outside the workspace: not ours to judge
            text = here
        root = self.ws.root
        first, as_written, beside = inside(root, text.split("/", 1)[0]), inside(root, text), inside(root, here)
        if first is None or as_written is None or beside is None:
            return None  # through a link out of the workspace: not ours to judge (nor to look at)
        if not first.is_dir() or _HISTORY.search(text):
            return None  # a path of some other tree (the reader's project, a URL path)
        if as_written.exists() or beside.exists():
            return None
        folder = inside(root, posixpath.dirname(text))
        if folder is None or not folder.is_dir():
            return None  # a folder the workspace does not have (`torch/csrc/...` of a wheel): another tree
        return Verdict(f"`{ref.text}` does not exist in the workspace", self._near_path(ref.text, text), sure=False)

    def _near_path(self, written: str, target: str) -> str:
        base = posixpath.basename(target)
        same = [r for r in self.ws.digests if posixpath.basename(r) == base]
        pool = same or list(self.ws.digests)
        near = difflib.get_close_matches(target, pool, n=1, cutoff=0.6)
        if not near:
            return ""
        _, hash_, anchor = written.partition("#")
        return near[0] + (f"#{anchor}" if hash_ else "")

    def _anchors_of(self, rel: str) -> set[str]:
        if rel not in self._anchors:
            self._anchors[rel] = markdown_anchors(self.ws.read_text(rel) or "")
        return self._anchors[rel]

    def check(self, ref: Ref, place: str) -> Verdict | None:
        if ref.kind == NAME:
            return self.name(ref, place)
        if ref.kind == LINK:
            return self.link(ref, place)
        if ref.kind == PATH:
            return self.path(ref, place)
        return None
