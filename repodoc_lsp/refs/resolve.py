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
import importlib.util
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.index import MODULE, Entry, KeywordIndex
from repodoc_lsp.refs.extract import HISTORY as _HISTORY
from repodoc_lsp.refs.extract import LINK, NAME, PATH, Ref, markdown_anchors
from repodoc_lsp.workspace import Workspace

_BUILTINS = frozenset(dir(builtins))
_CLASS, _FUNCTION, _METHOD = SymbolKind.CLASS.value, SymbolKind.FUNCTION.value, SymbolKind.METHOD.value
_LOOSE_ROLES = frozenset({"attr", "attribute", "data", "const", "obj"})
_NO_MEMBERS = frozenset({"object", "Generic", "Protocol", "ABC"})  # bases that add no members worth naming
_DYNAMIC = re.compile(r"import \*|^def __getattr__|globals\(\)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a reference is stale, and the replacement for its text when there is one."""

    message: str
    suggestion: str = ""
    about: str = ""  # the workspace file the name was looked up in (for --since)


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


@lru_cache(maxsize=4096)
def external(top: str) -> bool:
    """True when `top` is an importable module outside the workspace (found, never imported)."""
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

    # -- names -----------------------------------------------------------------------------
    def name(self, ref: Ref, place: str = "") -> Verdict | None:
        """None when `ref` resolves (or is not the workspace's); `place`: the file it is written in."""
        target = ref.text
        parts = target.split(".")
        if parts[0] in _BUILTINS and len(parts) <= 2:
            return None
        for full in ([f"{ref.module}.{target}"] if ref.module else []) + [target]:
            module, rest = self._module_prefix(full.split("."))
            if module:
                if ref.module and full != target and rest and self._attr(module, rest) is not None:
                    continue  # not under the current module: try the name as written
                return self._attr(module, rest, target)
        if parts[0] in self.top_level and not external(parts[0]):
            return self._missing_module(target)
        entries = [e for e in self.index.lookup(parts[0]) if e.kind != SymbolKind.HEADING.value]
        if entries:
            if len(parts) == 1 or len(parts[0]) < 2 or not parts[0][0].isupper() \
                    or (place.endswith(".py") and self._mentions(place, parts[0])):
                return None  # `F.pad` after `import torch.nn.functional as F`, `tl.x`: not the index's class
            return self._member(entries, parts[1:], target)
        if len(parts) == 1 and ref.role.split(":")[-1] in _LOOSE_ROLES:
            return None  # `:attr:`dim``: a parameter or an instance attribute, which the index does not hold
        # unknown anywhere: code-looking text (``FDCapture``, `self.x`) may name anything; a role
        # or directive says it is code: judged unless it is importable or bound somewhere
        if not ref.explicit or external(parts[0]) or (len(parts) > 1 and not parts[0][:1].isupper()) \
                or parts[0] in self._imported() or self._bound_near(parts[0], place):
            return None  # (a lower-case dotted head is a module: of another Python version, say)
        near = self._same_place(parts[0], place, 0.5) or self._closest(parts[0], 0.6)
        suggestion = ".".join([near, *parts[1:]]) if near else ""
        what = f"`{target}`" if len(parts) == 1 else f"`{target}`: `{parts[0]}`"
        return Verdict(f"{what} is not defined in the workspace", suggestion)

    def _module_prefix(self, parts: list[str]) -> tuple[str, list[str]]:
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.file_of:
                return name, parts[i:]
        return "", parts

    def _attr(self, module: str, rest: list[str], target: str = "") -> Verdict | None:
        if not rest:
            return None
        rel = self.file_of[module]
        head = rest[0]
        top = {e.name: e for e in self.index.file_entries(rel) if not e.container and e.kind != MODULE}
        if head in top:
            entry = top[head]
            if len(rest) > 1 and entry.kind == _CLASS:
                return self._member([entry], rest[1:], target)
            return None
        facts = self.ws.facts.one(rel)
        if facts is not None and (head in facts.all_names or any(head in i.names or i.module == head
                                                                  for i in facts.imports)):
            return None
        if f"{module}.{head}" in self.file_of or self._mentions(rel, head):
            return None
        near = difflib.get_close_matches(head, list(top), n=1, cutoff=0.5) or _only_one_like(head, top)
        suggestion = target.replace(head, near[0], 1) if near and target else ""
        return Verdict(f"`{target}`: `{head}` is not defined in {module} ({rel})", suggestion, rel)

    def _member(self, entries: list[Entry], rest: list[str], target: str) -> Verdict | None:
        classes = [e for e in entries if e.kind == _CLASS]
        member = rest[0]
        if len(classes) < len(entries) or (member.startswith("__") and member.endswith("__")):
            return None  # a function's or module's attribute, or a special method: not followed
        methods: list[str] = []
        for cls in classes:
            files: set[str] = set()
            names = self._members(cls, methods, files, depth=0)
            if names is None or member in names or any(self._mentions(rel, member) for rel in files) \
                    or self._bound_near(member, cls.rel):  # set from outside (`env.extend(x=...)`)
                return None
        near = difflib.get_close_matches(member, methods, n=1, cutoff=0.5)
        at = target.rfind(member)
        suggestion = target[:at] + near[0] + target[at + len(member):] if near and at >= 0 else ""
        return Verdict(f"`{target}`: `{member}` is not a member of {classes[0].name} ({classes[0].rel})",
                       suggestion, classes[0].rel)

    def _members(self, cls: Entry, into: list[str], files: set[str], depth: int) -> set[str] | None:
        """Names defined in `cls` and its workspace bases (None: a base is not the workspace's,
        or the class file binds names dynamically: anything may be a member)."""
        qual = f"{cls.container}.{cls.name}" if cls.container else cls.name
        names = {e.name for e in self.index.file_entries(cls.rel) if e.container == qual}
        into.extend(sorted(names))
        files.add(cls.rel)
        facts = self.ws.facts.one(cls.rel)
        symbol = next((s for s in facts.symbols if s.qualname == qual), None) if facts else None
        for base in symbol.bases if symbol else ():
            last = base.split("[")[0].split(".")[-1]
            if last in _NO_MEMBERS or "=" in base:
                continue
            found = [e for e in self.index.lookup(last) if e.kind == _CLASS]
            if not found or depth > 8:
                return None  # `object` aside, a base from elsewhere (or too deep): not judged
            for b in found:
                more = self._members(b, into, files, depth + 1)
                if more is None:
                    return None
                names |= more
        return names

    def _missing_module(self, target: str) -> Verdict:
        parts = target.split(".")
        names = [m for m in self.file_of if m.split(".")[0] == parts[0]]
        for i in range(len(parts), 1, -1):
            near = difflib.get_close_matches(".".join(parts[:i]), names, n=1, cutoff=0.6)
            if near:
                return Verdict(f"`{target}`: no module {'.'.join(parts[:i])} in the workspace",
                               ".".join([near[0], *parts[i:]]))
        return Verdict(f"`{target}`: no such module in the workspace")

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
        names = {e.name for e in self.index.file_entries(place) if e.kind in (_CLASS, _FUNCTION, _METHOD)}
        near = difflib.get_close_matches(name, sorted(names), n=1, cutoff=cutoff)
        return near[0] if near else ""

    def _closest(self, name: str, cutoff: float) -> str:
        if self._names_by_len is None:
            by_len: dict[int, set[str]] = {}
            for e in self.index.search("", limit=10**7):
                if e.kind in (_CLASS, _FUNCTION):
                    by_len.setdefault(len(e.name), set()).add(e.name)
            self._names_by_len = {n: sorted(v) for n, v in by_len.items()}
        spread = max(1, len(name) // 4)
        pool = [n for k in range(len(name) - spread, len(name) + spread + 1) for n in self._names_by_len.get(k, ())]
        near = difflib.get_close_matches(name, pool, n=1, cutoff=cutoff)
        return near[0] if near else ""

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
            return Verdict(f"link `{ref.text}`: {target} does not exist", self._near_path(ref.text, target))
        if anchor and full.is_file() and target.lower().endswith((".md", ".markdown")):
            anchors = self._anchors_of(full.relative_to(self.ws.root).as_posix())
            if anchor not in anchors and anchor.lower() not in anchors:
                # an anchor with capitals is an HTML id (heading slugs are lower case): ids first
                ids = sorted(a for a in anchors if a != a.lower()) if anchor != anchor.lower() else []
                near = (difflib.get_close_matches(anchor, ids, n=1, cutoff=0.6)
                        or difflib.get_close_matches(anchor.lower(), sorted(anchors), n=1, cutoff=0.6))
                return Verdict(f"link `{ref.text}`: no heading `#{anchor}` in {target}",
                               f"{ref.text.partition('#')[0]}#{near[0]}" if near else "")
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
        return Verdict(f"`{ref.text}` does not exist in the workspace", self._near_path(ref.text, text))

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
