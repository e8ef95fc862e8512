"""What a parsed Python file gives the symbol graph: attributes and the dotted names it reads.

One iterative pass over the syntax tree (no recursion, no `ast.walk` generator): a name or an
attribute chain is kept only when its first part is bound at module level or by an import,
so `self.x` and local variables cost nothing to store.
"""

from __future__ import annotations

import ast

from repodoc_lsp.analysis.model import Attribute

MAX_CHAIN = 6  # parts of a dotted name kept (`a.b.c.d.e.f`)
MAX_TEXT = 80  # characters of an annotation or value kept

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _text(node: ast.AST | None) -> str:
    if node is None:
        return ""
    if isinstance(node, _CONTAINERS) and len(node.keys if isinstance(node, ast.Dict) else node.elts) > 8:
        return "…"
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError, AttributeError):
        return "…"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _targets(node: ast.stmt) -> list[tuple[ast.expr, ast.expr | None, ast.expr | None]]:
    """(target, annotation, value) of an assignment statement."""
    if isinstance(node, ast.Assign):
        return [(t, None, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.annotation, node.value)]
    return []


def assigned(node: ast.stmt, container: str) -> list[Attribute]:
    """Names an assignment binds in a module or class body (tuple targets unpacked)."""
    found = []
    for target, annotation, value in _targets(node):
        names = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        one = len(names) == 1
        for t in names:
            if isinstance(t, ast.Name):
                found.append(Attribute(t.id, container, node.lineno, _text(annotation),
                                       _text(value) if one else ""))
    return found


def instance_attributes(init: ast.FunctionDef | ast.AsyncFunctionDef, container: str) -> list[Attribute]:
    """`self.x = ...` statements directly in `__init__`'s body (first of each name)."""
    if not init.args.args:
        return []
    me = init.args.args[0].arg
    found: dict[str, Attribute] = {}
    for node in init.body:
        for target, annotation, value in _targets(node):
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == me and target.attr not in found):
                found[target.attr] = Attribute(target.attr, container, node.lineno, _text(annotation),
                                               _text(value))
    return list(found.values())


# For each node type, the fields that may hold nodes (filled on first sight of the type).
_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = (ast.Constant, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ())
                                       if f not in ("ctx", "op", "kind", "type_comment"))
    return fields


def references(tree: ast.AST, heads: set[str] | None) -> str:
    """Dotted names read anywhere in `tree` whose first part is in `heads` (None: any name,
    for a file with a star import), each with the sorted lines it is on (`FileFacts.refs`)."""
    found: dict[str, set[int]] = {}
    name_t, attr_t = ast.Name, ast.Attribute
    stack: list[ast.AST] = [tree]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        if kind is name_t:
            if (heads is None or node.id in heads) and type(node.ctx) is not ast.Store:  # type: ignore[attr-defined]
                found.setdefault(node.id, set()).add(node.lineno)  # type: ignore[attr-defined]
            continue
        if kind is attr_t:
            parts = []
            inner: ast.AST = node
            while type(inner) is attr_t:
                parts.append(inner.attr)
                inner = inner.value
            if type(inner) is name_t:
                if heads is None or inner.id in heads:
                    parts.append(inner.id)
                    parts.reverse()
                    dotted = ".".join(parts[:MAX_CHAIN])
                    found.setdefault(dotted, set()).add(node.lineno)  # type: ignore[attr-defined]
            else:
                push(inner)
            continue
        if isinstance(node, _LEAVES):
            continue
        for field in _fields(kind):
            value = getattr(node, field, None)
            if value is None:
                continue
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
            elif isinstance(value, ast.AST):
                push(value)
    return "\n".join(f"{name} {','.join(map(str, sorted(lines)))}" for name, lines in sorted(found.items()))
