"""What a parsed Python file gives the symbol graph: attributes and the dotted names it reads.

A name or an attribute chain read is kept only when its first part is bound at module level or
by an import (`references`), so `self.x` and local variables cost nothing to store.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any

from repodoc_lsp.analysis.model import Attribute

MAX_CHAIN = 6  # parts of a dotted name kept (`a.b.c.d.e.f`)
MAX_TEXT = 80  # characters of an annotation or value kept

def _text(node: ast.expr | None, lines: list[str]) -> str:
    """The source text of an expression (its first line), shortened: slicing the line costs
    a fraction of `ast.unparse`."""
    if node is None or node.end_col_offset is None:
        return ""
    line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    end = node.end_col_offset if node.end_lineno == node.lineno else None
    if line.isascii():
        text = line[node.col_offset : end]
    else:  # offsets count UTF-8 bytes
        text = line.encode("utf-8")[node.col_offset : end].decode("utf-8", "replace")
    text = text.strip()
    if end is None:
        text += " …"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


_SEQUENCES = (ast.Tuple, ast.List)  # a union written in `isinstance` is made at each call


def _targets(node: ast.stmt) -> list[tuple[ast.expr, ast.expr | None, ast.expr | None]]:
    """(target, annotation, value) of an assignment statement."""
    if isinstance(node, ast.Assign):
        return [(t, None, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.annotation, node.value)]
    return []


def assigned(node: ast.stmt, container: str, lines: list[str]) -> list[Attribute]:
    """Names an assignment binds in a module or class body (tuple targets unpacked)."""
    found = []
    for target, annotation, value in _targets(node):
        names = target.elts if isinstance(target, _SEQUENCES) else [target]
        one = len(names) == 1
        for t in names:
            if isinstance(t, ast.Name):
                found.append(Attribute(t.id, container, node.lineno, _text(annotation, lines),
                                       _text(value, lines) if one else ""))
    return found


def instance_attributes(init: ast.FunctionDef | ast.AsyncFunctionDef, container: str,
                        lines: list[str]) -> list[Attribute]:
    """`self.x = ...` statements anywhere in `__init__`'s body (under `if`, `for`, `with`, `try`;
    not in nested functions or classes), tuple targets unpacked (`self.a, self.b = ...`): the first
    of each name."""
    if not init.args.args:
        return []
    me = init.args.args[0].arg
    found: dict[str, Attribute] = {}
    stack: list[ast.stmt] = list(reversed(init.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for target, annotation, value in _targets(node):
            names = _unpacked(target)
            one = len(names) == 1
            for t in names:
                if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                        and t.value.id == me and t.attr not in found):
                    found[t.attr] = Attribute(t.attr, container, node.lineno, _text(annotation, lines),
                                              _text(value, lines) if one else "", instance=True)
        inner: list[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            inner += getattr(node, field, None) or []
        for handler in getattr(node, "handlers", None) or []:
            inner += handler.body
        for case in getattr(node, "cases", None) or []:
            inner += case.body
        stack.extend(reversed(inner))
    return list(found.values())


def _unpacked(target: ast.expr) -> list[ast.expr]:
    """The targets of an assignment, tuples and lists (and starred ones) unpacked."""
    if isinstance(target, _SEQUENCES):
        return [t for e in target.elts for t in _unpacked(e)]
    if isinstance(target, ast.Starred):
        return _unpacked(target.value)
    return [target]


# Fields whose values name nothing: identifiers, flags, contexts and operators.
_NOT_NAMING = frozenset(("ctx", "op", "ops", "kind", "type_comment", "type_ignores", "conversion", "level",
                         "is_async", "simple", "id", "attr", "name", "names", "arg", "asname", "module",
                         "kwd_attrs", "rest", "tag"))


def _node_types(kind: type[ast.AST]) -> list[type[ast.AST]]:
    return [kind, *(sub for child in kind.__subclasses__() for sub in _node_types(child))]


# For each node type, the fields that may hold a node naming something (a constant's value is data);
# any other value in a field read (None in `{**d}`'s keys, `case True:`'s True) has none (added when met).
_CHILD_FIELDS: defaultdict[type, tuple[str, ...]] = defaultdict(tuple, {
    kind: () if kind is ast.Constant else tuple(f for f in kind._fields if f not in _NOT_NAMING)
    for kind in _node_types(ast.AST)
})


def references(tree: ast.AST, heads: set[str] | None) -> list[tuple[str, list[int]]]:
    """Dotted names read anywhere in `tree` whose first part is in `heads` (None: any name,
    for a file with a star import), each with the sorted lines it is on, sorted by name: what
    `reference_lines` reads of the `FileFacts.refs` that `refs_text` writes of them."""
    found = _names_read(tree, heads)
    return [(name, sorted(found[name])) for name in sorted(found)]  # the names sorted, not (name, lines) pairs


def _names_read(tree: ast.AST, heads: set[str] | None) -> dict[str, set[int]]:
    """Name or dotted name -> the lines it is read on: names stored to are not reads, a chain
    (`a.b.c`) counts once, whole, for its first `MAX_CHAIN` parts.

    Speed: the tree visited a level at a time (a `for` over each level's list, not a pop per node) by
    `_CHILD_FIELDS`, not `ast.walk` (this visits every node of every Python file): bench/README.md,
    "`xref.references` written plainly" and "The analysis workers beyond `ast.parse`, again"."""
    found: defaultdict[str, set[int]] = defaultdict(set)
    level: list[ast.AST] = [tree]
    node: Any  # its type read once, as `kind`
    while level:
        below: list[ast.AST] = []
        for node in level:
            kind = type(node)
            if kind is ast.Name:
                if (heads is None or node.id in heads) and type(node.ctx) is not ast.Store:
                    found[node.id].add(node.lineno)
            elif kind is ast.Attribute:
                name, rest = _chain(node, heads)
                if name is not None:
                    found[name].add(node.lineno)
                elif rest is not None:
                    below.append(rest)
            else:
                for field in _CHILD_FIELDS[kind]:
                    value = getattr(node, field)
                    if type(value) is list:
                        below += value
                    elif value is not None:
                        below.append(value)
        level = below
    return found


def _chain(node: ast.Attribute, heads: set[str] | None) -> tuple[str | None, ast.expr | None]:
    """The dotted name an attribute chain reads, if its head is a name in `heads`; else the
    chain's innermost value when that is not a name (`f().a`: the call reads names), else None."""
    parts = [node.attr]
    inner = node.value
    while type(inner) is ast.Attribute:
        parts.append(inner.attr)
        inner = inner.value
    if type(inner) is not ast.Name:
        return None, inner
    if heads is not None and inner.id not in heads:
        return None, None
    parts.append(inner.id)
    return ".".join(reversed(parts[-MAX_CHAIN:])), None
