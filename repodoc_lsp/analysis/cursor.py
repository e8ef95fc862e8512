"""What is under the cursor: the only module that talks to jedi.

jedi resolves names statically (it parses, it never runs the project's code);
it is not thread safe, so callers run every function here on one thread.
Lines are 1-based and columns are code points, as jedi counts them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import jedi


@dataclass(frozen=True, slots=True)
class CursorInfo:
    name: str
    full_name: str
    kind: str  # jedi's type: class, function, module, instance, statement, param, keyword, ...
    signatures: tuple[str, ...]
    docstring: str
    module_path: Path | None
    line: int | None  # of the definition, 1-based
    column: int | None


_ENVIRONMENTS: dict[str, object] = {}
_PROJECTS: dict[str, jedi.Project] = {}


def environment(python_path: str) -> object:
    """The Python environment whose libraries jedi resolves (default: the server's own)."""
    if python_path not in _ENVIRONMENTS:
        if python_path:
            _ENVIRONMENTS[python_path] = jedi.create_environment(python_path, safe=True)
        else:
            _ENVIRONMENTS[python_path] = jedi.InterpreterEnvironment()
    return _ENVIRONMENTS[python_path]


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def word_at(source: str, line: int, column: int) -> str:
    """The identifier at (line, column) of `source` (1-based line, code-point column), or ""."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    start = end = min(column, len(text))
    while start > 0 and _is_ident_char(text[start - 1]):
        start -= 1
    while end < len(text) and _is_ident_char(text[end]):
        end += 1
    word = text[start:end]
    return word if word.isidentifier() else ""


def _identifier_at(line_text: str, column: int) -> bool:
    return any(0 <= i < len(line_text) and _is_ident_char(line_text[i]) for i in (column, column - 1))


def _script(source: str, path: Path, root: Path, python_path: str) -> jedi.Script:
    project = _PROJECTS.get(str(root))
    if project is None:  # one per root: jedi keeps its caches on it
        project = _PROJECTS[str(root)] = jedi.Project(path=str(root), smart_sys_path=True)
    return jedi.Script(code=source, path=str(path), project=project, environment=environment(python_path))


def prepare(source: str, path: Path, root: Path, python_path: str = "") -> None:
    """Parse a file jedi will be asked about (an editor opened it), so that its first hover
    does not pay for the parse: jedi keeps the tree in its cache (100-600 ms on PyTorch's
    large modules, then a hover takes 10-20 ms)."""
    with contextlib.suppress(Exception):  # best effort: a hover reports its own failures
        _script(source, path, root, python_path).get_names(all_scopes=False)


def describe(source: str, path: Path, line: int, column: int, root: Path, python_path: str = "") -> CursorInfo | None:
    """The definition of the name at (line, column) of `source`, or None."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines) or column > len(lines[line - 1]) or not _identifier_at(lines[line - 1], column):
        return None
    script = _script(source, path, root, python_path)
    try:
        names = script.infer(line, column) or script.goto(line, column, follow_imports=True)
    except (ValueError, RecursionError, AttributeError, KeyError):
        return None
    if not names:
        return None
    name = names[0]
    try:
        signatures = tuple(s.to_string() for s in name.get_signatures())
    except Exception:
        signatures = ()
    try:
        docstring = name.docstring(raw=True)
    except Exception:
        docstring = ""
    return CursorInfo(name=name.name, full_name=name.full_name or name.name, kind=name.type,
                      signatures=signatures, docstring=docstring, module_path=name.module_path,
                      line=name.line, column=name.column)
