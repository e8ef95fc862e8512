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


# For each node type, the fields that may hold nodes (filled on first sight of the type);
# constants, contexts and operators have none.
_SKIP_FIELDS = frozenset(("ctx", "op", "ops", "kind", "type_comment", "conversion", "level", "is_async",
                          "name", "names", "arg", "asname", "module", "simple",
                          "lineno", "col_offset", "end_lineno", "end_col_offset"))
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Global: (), ast.Nonlocal: ()}


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SKIP_FIELDS)
    return fields


def references(tree: ast.AST, heads: set[str] | None) -> list[tuple[str, tuple[int, ...]]]:
    """Dotted names read anywhere in `tree` whose first part is in `heads` (None: any name,
    for a file with a star import), each with the sorted lines it is on, sorted by name: what
    `reference_lines` reads of the `FileFacts.refs` that `refs_text` writes of them.

    The hottest loop of the analysis after parsing: one pass, fields known per node type (the commonest
    read directly), lists pushed whole (a `str` pushed from `Import.names` and the like has no fields), an
    attribute of a name (`np.array`, most chains) written without a list of its parts."""
    found: dict[str, set[int]] = {}
    name_t, attr_t, store_t, list_t = ast.Name, ast.Attribute, ast.Store, list
    call_t, constant_t, expr_t = ast.Call, ast.Constant, ast.Expr
    assign_t, arg_t, subscript_t = ast.Assign, ast.arg, ast.Subscript
    if_t, compare_t, tuple_t, list_node_t, binop_t = ast.If, ast.Compare, ast.Tuple, ast.List, ast.BinOp
    fields_of = _FIELDS
    stack: list = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    try:
        while True:  # until `pop` finds the stack empty: no test of the stack per node
            node = pop()
            kind = type(node)
            if kind is name_t:
                ident = node.id
                if (heads is None or ident in heads) and type(node.ctx) is not store_t:
                    lines = found.get(ident)
                    if lines is None:
                        found[ident] = {node.lineno}
                    else:
                        lines.add(node.lineno)
                continue
            if kind is constant_t:
                continue
            if kind is attr_t:
                inner = node.value
                if type(inner) is name_t:  # `a.b`: most chains
                    head = inner.id
                    if heads is None or head in heads:
                        name = f"{head}.{node.attr}"
                        lines = found.get(name)
                        if lines is None:
                            found[name] = {node.lineno}
                        else:
                            lines.add(node.lineno)
                    continue
                parts = [node.attr]
                while type(inner) is attr_t:
                    parts.append(inner.attr)
                    inner = inner.value
                if type(inner) is name_t:
                    if heads is None or inner.id in heads:
                        parts.append(inner.id)
                        parts.reverse()
                        name = ".".join(parts if len(parts) <= MAX_CHAIN else parts[:MAX_CHAIN])
                        lines = found.get(name)
                        if lines is None:
                            found[name] = {node.lineno}
                        else:
                            lines.add(node.lineno)
                else:
                    push(inner)
                continue
            # the commonest nodes after names, constants and attributes, their fields read directly (not by
            # `getattr` of each of `_fields`)
            if kind is call_t:
                push(node.func)
                extend(node.args)
                if node.keywords:
                    for keyword in node.keywords:  # pushed as their values: each an iteration less
                        push(keyword.value)
                continue
            if kind is assign_t:
                extend(node.targets)
                push(node.value)
                continue
            if kind is arg_t:
                if node.annotation is not None:
                    push(node.annotation)
                continue
            if kind is subscript_t:
                push(node.value)
                push(node.slice)
                continue
            if kind is expr_t:
                push(node.value)
                continue
            if kind is if_t:
                push(node.test)
                extend(node.body)
                extend(node.orelse)
                continue
            if kind is compare_t:
                push(node.left)
                extend(node.comparators)
                continue
            if kind is tuple_t or kind is list_node_t:
                extend(node.elts)
                continue
            if kind is binop_t:
                push(node.left)
                push(node.right)
                continue
            fields = fields_of.get(kind)
            if fields is None:
                fields = _fields(kind)
            for field in fields:
                value = getattr(node, field)
                if value is None:
                    continue
                if type(value) is list_t:
                    extend(value)
                else:
                    push(value)
    except IndexError:  # the stack is empty
        pass
    # a name on one line (most of them): no sort
    return [(name, tuple(sorted(lines)) if len(lines) > 1 else (min(lines),)) for name, lines in sorted(found.items())]
