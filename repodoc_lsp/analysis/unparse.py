"""Decorators, bases and annotations as `ast.unparse` writes them: the common forms (a dotted name, a call
of one with names and constants for arguments) written here, much faster; any other by `ast.unparse`."""

from __future__ import annotations

import ast
from typing import Any


def _dotted_text(node: ast.AST) -> str | None:
    """`ast.unparse` of a name or a dotted name (`a.b.c`), else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# Constants `ast.unparse` writes as their `repr` (a float too unless infinite: written otherwise)
_REPR_CONSTANTS = (str, int, bool, type(None), float)
_NUMBERS = (int, float)
# How deep `_simple_text` writes lists, tuples, dicts and calls in arguments (deeper: `ast.unparse`, whose own
# depth of recursion stays far from the limit here)
_SIMPLE_DEPTH = 8


def _simple_text(node: Any, depth: int = 0) -> str | None:
    """`ast.unparse` of an argument in a call, an item of a list, tuple or dict, or the operand of `not`
    (none is written in parentheses as such): a dotted name; a constant string, number, bool or None, or a
    negative number; `not` of one of these; a list, tuple or dict of them; a `_call_text`; else None."""
    kind = type(node)
    if kind is ast.Constant:
        # `u"..."` keeps its prefix; `repr` of an integer may raise ValueError, as `ast.unparse` does
        if type(node.value) not in _REPR_CONSTANTS or node.kind is not None:
            return None
        shown = repr(node.value)
        return None if type(node.value) is float and ("inf" in shown or "nan" in shown) else shown
    if kind is ast.Name or kind is ast.Attribute:
        return _dotted_text(node)
    if depth >= _SIMPLE_DEPTH:
        return None
    if kind is ast.Call:
        return _call_text(node, depth + 1)
    if kind is ast.List or kind is ast.Tuple:
        written = []
        for item in node.elts:
            text = _simple_text(item, depth + 1)
            if text is None:
                return None
            written.append(text)
        if kind is ast.List:
            return f"[{', '.join(written)}]"
        # a tuple in an argument or an item is written in parentheses, with a comma after a single item
        return f"({written[0]},)" if len(written) == 1 else f"({', '.join(written)})"
    if kind is ast.UnaryOp:
        op, operand = type(node.op), node.operand
        if op is ast.USub:  # `-1`, `-0.5`
            if type(operand) is not ast.Constant or type(operand.value) not in _NUMBERS:
                return None
            text = _simple_text(operand)
            return None if text is None else f"-{text}"
        if op is ast.Not:
            text = _simple_text(operand, depth + 1)
            return None if text is None else f"not {text}"
        return None
    if kind is ast.Dict:
        pairs = []
        for key, value in zip(node.keys, node.values, strict=True):
            key_text = None if key is None else _simple_text(key, depth + 1)  # None: `**m`
            value_text = None if key_text is None else _simple_text(value, depth + 1)
            if value_text is None:
                return None
            pairs.append(f"{key_text}: {value_text}")
        return f"{{{', '.join(pairs)}}}"
    return None


def _call_text(node: ast.Call, depth: int = 0) -> str | None:
    """`ast.unparse` of a call of a dotted name whose arguments are `_simple_text`s
    (`register(aten.add, "x", k=1)`, `parametrize("n", [1, -2])`), else None."""
    name = _dotted_text(node.func)
    if name is None:
        return None
    written = []
    for arg in node.args:
        text = _simple_text(arg, depth)
        if text is None:
            return None
        written.append(text)
    for keyword in node.keywords:
        text = _simple_text(keyword.value, depth) if keyword.arg is not None else None
        if text is None:
            return None
        written.append(f"{keyword.arg}={text}")
    return f"{name}({', '.join(written)})"


def unparse(node: ast.AST | None) -> str:
    """`ast.unparse(node)` ("" for None; "…" when it cannot be written)."""
    if node is None:
        return ""
    # most decorators and bases are a dotted name or a call of one with names and constants for arguments
    # (`@torch.no_grad()`, `@register_decomposition(aten.add)`): written here as `ast.unparse` writes
    # them, which takes 20 times as long
    try:
        text = _call_text(node) if type(node) is ast.Call else _dotted_text(node)
        return text if text is not None else ast.unparse(node)
    except (RecursionError, ValueError, AttributeError):
        return "…"
