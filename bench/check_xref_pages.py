"""The "Used by" and "Subclassed by" claims of every `_docs.md` page against an independent
resolution of imports and names with `ast`.

    python bench/check_xref_pages.py [--docs DOCS --root ROOT] [--show N]

Without DOCS, PyTorch's corpus is hard-linked into a temporary folder and generated there once
with an empty cache (as check_pages.py does). Nothing of repodoc_lsp is imported: the reference
side is `ast` and the rules below, the page side reads the Markdown text.

Subjects: every class and function defined at module level (also under `if`/`try`) of a file
that `ast` parses. The rules, as the symbol graph documents them (static only, nothing run):

- A module is named by its path from its package root (the highest folder of a chain of
  `__init__.py` folders) and from the workspace root; the first file (in path order) of a name
  takes it.
- A name in a file is, in this order: a class, function or module-level assignment of the file;
  the last import that binds it (at any depth; `import a.b` binds `a`, `import a.b as c` binds `c`
  to `a.b`, `from m import x as y` binds `y` to `x` of `m`, else to the module `m.x`); the first
  star import whose module exports it (its `__all__`, else every name without a leading `_`);
  in an `__init__.py`, its submodule of that name.
- A use of a definition by a file: an import of it (`from m import X`), a name or a dotted name
  (up to six parts) of the file's code whose value, or the value of one of its prefixes, is it.
  Only dotted names whose first part the file binds at module level are read, unless the file
  has a star import. A bare name being assigned (`X = ...`) is not a use. The file defining
  it is not its user.
- A subclass: a class (any depth) whose base expression (the name before `[` or `(`) evaluates
  to a workspace class other than itself; of two classes of one qualified name, the last one's
  bases count.
- A method (a function in a class body, also under `if`/`try`) is used by a file whose dotted
  name evaluates to it: a class, then an attribute looked up as Python looks it up on the class
  (no instance): a name bound in the class body (a def, a class, an assignment), else in its
  workspace bases (their base expressions evaluated as above), depth first, left to right, each
  class once. Calls through an instance, `self` or `super()` are not uses. Subjects: the methods
  of classes whose module-level name is a class (as above: a name an assignment binds first,
  `triton = None` then `class triton:` under `else:`, is no subject).
Precision and recall of the (definition, user file) and (class, subclass) pairs; methods apart.
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from pathlib import Path
from urllib.parse import unquote

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _common import checked_tree, part_lists, with_lists  # noqa: E402

MAX_CHAIN = 6
Value = tuple[str, str, str]  # (kind, file, qualname): kind "def" (class/function), "attr", "mod", "member"


class Module:
    def __init__(self, rel: str, tree: ast.Module) -> None:
        self.rel = rel
        self.tree = tree
        self.defs: dict[str, str] = {}  # module-level name -> "class" | "function" | "attr"
        self.classes: dict[str, ast.ClassDef] = {}  # qualname -> the last ClassDef of that name
        self.kinds: dict[str, str] = {}  # qualname (any depth) -> "class" | "function": the first def's
        self.members: dict[str, set[str]] = {}  # class qualname -> names its body binds
        self.methods: set[str] = set()  # qualnames of functions in class bodies
        self.all_names: list[str] | None = None
        self.imports: list[tuple[int, int, ast.Import | ast.ImportFrom]] = []
        self.stars: list[ast.ImportFrom] = []
        self._walk(tree.body, "", True, "")
        self.imports.sort(key=lambda i: (i[0], i[1]))
        self.has_star = bool(self.stars)

    def _walk(self, body: list[ast.stmt], prefix: str, top: bool, owner: str) -> None:
        """`owner`: the class whose body (or a compound statement in it) `body` is."""
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                is_class = isinstance(node, ast.ClassDef)
                qual = prefix + node.name
                self.kinds.setdefault(qual, "class" if is_class else "function")
                if owner:
                    self.members.setdefault(owner, set()).add(node.name)
                    if not is_class:
                        self.methods.add(qual)
                if isinstance(node, ast.ClassDef):
                    self.classes[qual] = node
                if top:
                    self.defs.setdefault(node.name, "class" if is_class else "function")
                self._walk(node.body, qual + ".", False, qual if is_class else "")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    self.stars.append(node)
                else:
                    self.imports.append((node.lineno, len(self.imports), node))
            else:
                if owner:
                    for target in _targets(node):
                        names = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                        self.members.setdefault(owner, set()).update(t.id for t in names if isinstance(t, ast.Name))
                if top:
                    for target in _targets(node):
                        names = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
                        for t in names:
                            if isinstance(t, ast.Name):
                                self.defs.setdefault(t.id, "attr")
                    if self.all_names is None and isinstance(node, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) \
                            and isinstance(node.value, ast.List | ast.Tuple):
                        self.all_names = [e.value for e in node.value.elts
                                          if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                for field in ("body", "orelse", "finalbody"):
                    self._walk(getattr(node, field, None) or [], prefix, top, owner)
                for handler in getattr(node, "handlers", None) or []:
                    self._walk(handler.body, prefix, top, owner)
                for case in getattr(node, "cases", None) or []:
                    self._walk(case.body, prefix, top, owner)


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign):
        return [node.target]
    return []


def module_names(rel: str, files: set[str]) -> list[str]:
    parts = rel[: -len(posixpath.splitext(rel)[1])].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not parts[-1].isidentifier():
        return []
    folders = rel.split("/")[:-1]
    top = len(folders)
    while top > 0 and "/".join(folders[:top]) + "/__init__.py" in files:
        top -= 1
    names = []
    for start in (top, 0):
        tail = parts[start:]
        if tail and all(p.isidentifier() for p in tail):
            name = ".".join(tail)
            if name not in names:
                names.append(name)
    return names


class Oracle:
    def __init__(self, root: Path, rels: list[str]) -> None:
        self.mods: dict[str, Module] = {}
        self.unparsed: list[str] = []
        for rel in rels:
            try:
                self.mods[rel] = Module(rel, ast.parse((root / rel).read_bytes()))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.unparsed.append(rel)
        every = set(rels)
        self.file_of: dict[str, str] = {}
        self.name_of: dict[str, str] = {}
        for rel in sorted(rels):
            names = module_names(rel, every)
            if names:
                self.name_of[rel] = names[0]
            for name in names:
                self.file_of.setdefault(name, rel)
        self.bindings: dict[str, dict[str, tuple[str, str]]] = {}
        for rel, m in self.mods.items():
            bound: dict[str, tuple[str, str]] = {}
            for _line, _n, node in m.imports:
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname:
                            bound[a.asname] = (a.name, "")
                        else:
                            head = a.name.split(".")[0]
                            bound[head] = (head, "")
                else:
                    source = self.absolute(rel, node)
                    if source is None:
                        continue
                    for a in node.names:
                        bound[a.asname or a.name] = (source, a.name)
            self.bindings[rel] = bound
        self.memo: dict[tuple[str, str], Value | None] = {}
        self.base_memo: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}

    def absolute(self, rel: str, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module or ""
        base = self.name_of.get(rel, "")
        package = base.split(".") if base else []
        if not rel.endswith("__init__.py") and package:
            package = package[:-1]
        up = node.level - 1
        if up > len(package):
            return None
        package = package[: len(package) - up] if up else package
        return ".".join([*package, node.module] if node.module else package)

    def module(self, name: str) -> Value | None:
        rel = self.file_of.get(name)
        return ("mod", rel, "") if rel is not None and rel in self.mods else None

    def imported(self, module: str, name: str, seen: set) -> Value | None:
        if not name:
            return self.module(module)
        base = self.module(module)
        if base is not None:
            found = self.lookup(base[1], name, seen)
            if found is not None:
                return found
        return self.module(f"{module}.{name}" if module else name)

    def lookup(self, rel: str, name: str, seen: set | None = None) -> Value | None:
        key = (rel, name)
        if key in self.memo:
            return self.memo[key]
        seen = set() if seen is None else seen
        if key in seen:
            return None
        seen.add(key)
        found = self._lookup(rel, name, seen)
        self.memo[key] = found
        return found

    def _lookup(self, rel: str, name: str, seen: set) -> Value | None:
        m = self.mods.get(rel)
        if m is None:
            return None
        kind = m.defs.get(name)
        if kind is not None:
            return ("attr" if kind == "attr" else "def", rel, name)
        bound = self.bindings[rel].get(name)
        if bound is not None:
            return self.imported(bound[0], bound[1], seen)
        for node in m.stars:
            source = self.absolute(rel, node)
            star = self.module(source) if source is not None else None
            if star is None:
                continue
            exported = self.mods[star[1]].all_names
            if (name in exported) if exported else not name.startswith("_"):
                found = self.lookup(star[1], name, seen)
                if found is not None:
                    return found
        if rel.endswith("__init__.py") and self.name_of.get(rel):
            return self.module(f"{self.name_of[rel]}.{name}")
        return None

    def attr(self, value: Value | None, name: str) -> Value | None:
        if value is None:
            return None
        if value[0] == "mod":
            return self.lookup(value[1], name)
        if self.is_class(value):
            return self.member((value[1], value[2]), name, set())
        return None

    def is_class(self, value: Value) -> bool:
        return value[0] in ("def", "member") and value[1] in self.mods \
            and self.mods[value[1]].kinds.get(value[2]) == "class"

    def member(self, cls: tuple[str, str], name: str, seen: set) -> Value | None:
        """`name` looked up on the class (not an instance): its body, then its workspace bases."""
        if cls in seen:
            return None
        seen.add(cls)
        if name in self.mods[cls[0]].members.get(cls[1], ()):
            return ("member", cls[0], f"{cls[1]}.{name}")
        for base in self.bases(cls):
            found = self.member(base, name, seen)
            if found is not None:
                return found
        return None

    def bases(self, cls: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        """The workspace classes a class's base expressions evaluate to, in order, each once."""
        if cls in self.base_memo:
            return self.base_memo[cls]
        self.base_memo[cls] = ()  # a cycle ends here
        found: list[tuple[str, str]] = []
        node = self.mods[cls[0]].classes.get(cls[1])
        for base in node.bases if node is not None else ():
            text = ast.unparse(base)
            name = text.split("[", 1)[0].split("(", 1)[0].strip()
            if not name or not all(p.isidentifier() for p in name.split(".")):
                continue
            values = self.evaluate(cls[0], name.split("."))
            if len(values) == len(name.split(".")) and self.is_class(values[-1]) \
                    and (values[-1][1], values[-1][2]) != cls and (values[-1][1], values[-1][2]) not in found:
                found.append((values[-1][1], values[-1][2]))
        self.base_memo[cls] = tuple(found)
        return self.base_memo[cls]

    def chain(self, node: ast.expr) -> list[str] | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(node.id)
        return parts[::-1]

    def evaluate(self, rel: str, parts: list[str]) -> list[Value]:
        """The values of every prefix of a dotted name."""
        values = []
        value = self.lookup(rel, parts[0])
        for part in parts[1:]:
            if value is None:
                break
            values.append(value)
            value = self.attr(value, part)
        if value is not None:
            values.append(value)
        return values

    def heads(self, m: Module) -> set[str] | None:
        if m.has_star:
            return None
        return set(m.defs) | set(self.bindings[m.rel])

    def uses(self) -> set[tuple[tuple[str, str], str]]:
        found: set[tuple[tuple[str, str], str]] = set()
        for rel, m in self.mods.items():
            heads = self.heads(m)
            values: list[Value | None] = []
            for _line, _n, statement in m.imports:
                if isinstance(statement, ast.ImportFrom):
                    source = self.absolute(rel, statement)
                    if source is not None:
                        values += [self.imported(source, a.name, set()) for a in statement.names]
            for node in _dotted_names(m.tree):
                parts = self.chain(node)
                if parts is None or (heads is not None and parts[0] not in heads):
                    continue
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    continue
                values += self.evaluate(rel, parts[:MAX_CHAIN])
            for v in values:
                if v is not None and v[0] in ("def", "member") and v[1] != rel:
                    found.add(((v[1], v[2]), rel))
        return found

    def subclasses(self) -> set[tuple[tuple[str, str], tuple[str, str]]]:
        found = set()
        for rel, m in self.mods.items():
            for qual, node in m.classes.items():
                for base in node.bases:
                    text = ast.unparse(base)
                    name = text.split("[", 1)[0].split("(", 1)[0].strip()
                    if not name or not all(p.isidentifier() for p in name.split(".")):
                        continue
                    values = self.evaluate(rel, name.split("."))
                    if len(values) != len(name.split(".")):
                        continue
                    v = values[-1]
                    if v[0] == "def" and self.mods[v[1]].defs.get(v[2]) == "class" and (v[1], v[2]) != (rel, qual):
                        found.add(((v[1], v[2]), (rel, qual)))
        return found


def _dotted_names(tree: ast.AST) -> list[ast.expr]:
    """Every maximal dotted name (a Name, or an Attribute chain not inside a longer one)."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            found.append(node)
            continue
        if isinstance(node, ast.Attribute):
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                inner = inner.value
            if isinstance(inner, ast.Name):
                found.append(node)
            else:
                stack.append(inner)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


_ANCHOR = re.compile(r'^<a id="(class|function)-([^"]+)"></a>$', re.M)
_METHOD = re.compile(r'^\s*- <a id="method-([^"]+)"></a>', re.M)
_ANY_ANCHOR = re.compile(r'<a id="')
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_TITLE_END = re.compile(r"\n\*\*(?!Used by|Subclassed by)[^*\n]+\*\*|\n\*\*(?:Used by|Subclassed by)\*\*")


def _linked(block: str, page_dir: str, rel: str) -> list[tuple[str, str]]:
    """(source file, fragment) of each link to a `_docs.md` page in `block` (`#fragment` alone: an
    anchor of the page itself, the page of `rel`)."""
    found = []
    for href in _LINK.findall(block):
        path, _, fragment = unquote(href).partition("#")
        if not path and fragment:
            found.append((rel, fragment))
            continue
        if path.endswith("_docs.md"):
            found.append((posixpath.normpath(posixpath.join(page_dir, path))[: -len("_docs.md")], fragment))
    return found


def page_claims(docs: Path, rel: str) -> tuple[set, set, set, set]:
    """(definition, user file) pairs of classes and functions, (class, subclass) pairs, the
    definitions the page has an entry for, and (method, user file) pairs."""
    text = (docs / (rel + "_docs.md")).read_text(encoding="utf-8")
    chunks = [text.split("\n## Detailed Analysis\n", 1)[-1].split("\n## Architecture & Design\n", 1)[0]]
    n = 2  # the part pages' entries (`c.py_docs.part2.md`, ...: README, "Part pages"), each read alone
    parts = []
    while (part := docs / f"{rel}_docs.part{n}.md").exists():
        parts.append(part.read_text(encoding="utf-8"))
        chunks.append(parts[-1].split("\n## Detailed Analysis\n", 1)[-1].split("\n---\n")[0])
        n += 1
    lists = part_lists(parts)  # the complete lists a page over the budget links to
    uses: set = set()
    subs: set = set()
    entries: set = set()
    method_uses: set = set()
    page_dir = posixpath.dirname(rel)
    for detailed in chunks:
        _claims(detailed, rel, page_dir, uses, subs, entries, method_uses, lists)
    return uses, subs, entries, method_uses


def _claims(detailed: str, rel: str, page_dir: str, uses: set, subs: set, entries: set, method_uses: set,
            lists: dict[str, str]) -> None:
    """The claims of one page's (or part page's) Detailed Analysis, added to the sets."""
    marks = list(_ANCHOR.finditer(detailed))
    for i, mark in enumerate(marks):
        qual = mark.group(2)
        if "." in qual or re.search(r"-\d+$", qual):
            continue
        entries.add((rel, qual))
        body = detailed[mark.end(): marks[i + 1].start() if i + 1 < len(marks) else len(detailed)]
        for title, into in (("\n**Used by**", "uses"), ("\n**Subclassed by**", "subs")):  # a class's: not indented
            if title not in body:
                continue
            block = with_lists(_TITLE_END.split(body.split(title, 1)[1], maxsplit=1)[0], lists)
            for target, fragment in _linked(block, page_dir, rel):
                if into == "uses":
                    uses.add(((rel, qual), target))
                elif fragment.startswith("class-"):
                    subs.add(((rel, qual), (target, fragment[len("class-"):])))
    for mark in _METHOD.finditer(detailed):  # a method's Used by: indented in its entry
        qual = mark.group(1)
        if re.search(r"-\d+$", qual):
            continue
        nxt = _ANY_ANCHOR.search(detailed, mark.end())
        body = detailed[mark.end(): nxt.start() if nxt else len(detailed)]
        if "\n  **Used by**" not in body:
            continue
        block = with_lists(re.split(r"\n(?=[^ \n])", body.split("\n  **Used by**", 1)[1], maxsplit=1)[0], lists)
        method_uses.update(((rel, qual), target) for target, _ in _linked(block, page_dir, rel))


def score(found: set, expected: set) -> tuple[float, float]:
    hit = len(found & expected)
    return (hit / len(found) if found else 1.0, hit / len(expected) if expected else 1.0)


def main() -> int:
    with checked_tree(__doc__ or "", "repodoc-xref-") as (args, docs, root):
        rels = sorted(p.relative_to(docs).as_posix()[: -len("_docs.md")] for p in docs.rglob("*_docs.md"))
        python = [r for r in rels if r.endswith((".py", ".pyi"))]
        oracle = Oracle(root, python)
        skip = set(oracle.unparsed)
        claimed_uses, claimed_subs, entries, claimed_methods = set(), set(), set(), set()
        for rel in python:
            if rel in skip:
                continue
            u, s, e, m = page_claims(docs, rel)
            claimed_uses |= u
            claimed_subs |= s
            entries |= e
            claimed_methods |= m
    subjects = {(rel, name) for rel, m in oracle.mods.items() for name, kind in m.defs.items() if kind != "attr"}
    methods = {(rel, qual) for rel, m in oracle.mods.items() for qual in m.methods  # of module-level classes
               if m.defs.get(qual.split(".", 1)[0]) == "class"}
    uses = oracle.uses()
    expected_uses = {(d, u) for d, u in uses if d in subjects and u not in skip}
    expected_methods = {(d, u) for d, u in uses if d in methods and u not in skip}
    expected_subs = {(d, s) for d, s in oracle.subclasses() if d in subjects}
    claimed_uses = {(d, u) for d, u in claimed_uses if d in subjects}
    claimed_subs = {(d, s) for d, s in claimed_subs if d in subjects}
    claimed_methods = {(d, u) for d, u in claimed_methods if d in methods}
    print(f"{len(python):,} Python files ({len(skip)} not parsed by ast, left out), "
          f"{len(subjects):,} module-level classes and functions, {len(entries & subjects):,} with an entry, "
          f"{len(methods):,} methods")
    failed = False
    for kind, found, expected in (("used by", claimed_uses, expected_uses),
                                  ("subclassed by", claimed_subs, expected_subs),
                                  ("method used by", claimed_methods, expected_methods)):
        precision, recall = score(found, expected)
        print(f"{kind:14} claims {len(found):>7,}  expected {len(expected):>7,}  "
              f"precision {precision:.3f}  recall {recall:.3f}")
        for label, diff in (("claimed, not expected", found - expected), ("expected, not claimed", expected - found)):
            for item in sorted(diff)[: args.show]:
                print(f"    {label}: {item}")
        failed |= precision < 1 or recall < 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
