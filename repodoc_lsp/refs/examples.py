"""The example code of hand-written docs: the names its imports bring (`from pkg.mod import Name`)
and the names a star import alone can give it, which Python resolves exactly, checked as references."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from repodoc_lsp.refs.model import NAME, Ref

PYTHON_FENCES = frozenset({"", "python", "py", "python3", "py3", "pycon", "ipython", "ipython3", "pytb"})
# an import statement of example code (a doctest's `>>> ` or `... ` prompt aside)
_FROM_IMPORT = re.compile(r"^(\s*(?:(?:>>>|\.\.\.) )?from\s+)([A-Za-z_][\w.]*)(\s+import\s+)([^#;]+?)\s*(?:#.*)?$")
_IMPORT = re.compile(r"^\s*(?:(?:>>>|\.\.\.) )?import\s+([^#;]+?)\s*(?:#.*)?$")


def code_imports(lines: list[str], first: int) -> Iterator[Ref]:
    """The imports of example code (`from pkg.mod import Name`, `import pkg.mod`): names Python
    resolves exactly, checked as references (role `import`; the resolver judges only the project's
    own modules). A parenthesised list goes on over the next lines, as Python reads it.
    `first`: the 1-based line of `lines[0]`."""
    module = ""  # the module of a `from pkg import (` whose names go on below
    for i, line in enumerate(lines):
        if module:
            prompt = _PROMPT.match(line)
            at = prompt.end() if prompt else 0
            names = line[at:].split("#")[0]
            yield from _imported(line, at, names.split(")")[0], first + i, module)
            module = "" if ")" in names else module
            continue
        m = _FROM_IMPORT.match(line)
        if m:
            yield from _imported(line, m.start(4), m.group(4), first + i, m.group(2))
            module = m.group(2) if m.group(4).startswith("(") and ")" not in m.group(4) else ""
            continue
        m = _IMPORT.match(line)
        if m:
            at = m.start(1)
            for part in m.group(1).split(","):
                name = part.strip().split(" as ")[0].strip()
                if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", name):
                    yield Ref(NAME, name, first + i, line.find(name, at), explicit=True, role="import")
                at += len(part) + 1


_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.)(?: |$)")


def _imported(line: str, at: int, names: str, lineno: int, module: str) -> Iterator[Ref]:
    """The names of a `from module import` list (`names`, starting at column `at` of `line`)."""
    for part in names.split(","):
        name = part.strip().strip("()").split(" as ")[0].strip()
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            yield Ref(NAME, name, lineno, line.find(name, at), explicit=True, role="import", module=module)
        at += len(part) + 1


_STAR = re.compile(r"^\s*(?:(?:>>>|\.\.\.) )?from\s+([A-Za-z_][\w.]*)\s+import\s+\*")
_WORD = re.compile(r"[A-Za-z_]\w*")


def star_uses(runs: list[tuple[int, list[str]]]) -> list[Ref]:
    """The class-like names a page's example code uses that only its star import can give
    (`from tenacity import *` in a `testsetup`, then `raise TryAgain`): each is looked up in that
    module, as Python finds it there (role `import`). `runs`: (1-based first line, lines) of each
    code block of the page. Not judged: a name any block binds (a def, a class, an assignment, an
    import, a parameter; every word of a block that is not Python), and a page with no star import
    or more than one."""
    stars = {m.group(1) for _, lines in runs for line in lines if (m := _STAR.match(line))}
    if len(stars) != 1:
        return []
    bound: set[str] = set()
    uses: list[tuple[str, int, int]] = []
    for first, lines in runs:
        code, offsets = _plain(lines)
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            bound.update(_WORD.findall(code))  # not Python (a shell session, output): it may bind anything
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    uses.append((node.id, first + node.lineno - 1, offsets[node.lineno - 1] + node.col_offset))
                else:
                    bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
    (module,) = stars
    return [Ref(NAME, name, line, col, explicit=True, role="import", module=module) for name, line, col in sorted(uses)
            if name[:1].isupper() and not name.isupper() and name not in bound and name not in _BUILTINS]


_BUILTINS = frozenset(dir(builtins))


def _plain(lines: list[str]) -> tuple[str, list[int]]:
    """A block's code as Python reads it (its indent removed; in a doctest, the `>>> ` and `... `
    prompts removed and the output left out) and the column each line of it starts at."""
    doctest = any(line.lstrip().startswith(">>>") for line in lines)
    out, offsets = [], []
    for line in lines:
        if doctest:
            prompt = _PROMPT.match(line)
            out.append(line[prompt.end():] if prompt else "")
            offsets.append(prompt.end() if prompt else 0)
        else:
            out.append(line)
            offsets.append(0)
    indent = min((len(x) - len(x.lstrip()) for x in out if x.strip()), default=0)
    return "\n".join(x[indent:] for x in out), [o + indent for o in offsets]
