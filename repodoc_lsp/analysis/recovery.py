"""Python source that does not parse (a file being edited): its definitions and imports from parso's
error recovery, and the bound past which that is not tried (`nesting_depth`)."""

from __future__ import annotations

import contextlib
import itertools
import re
from typing import Any

from repodoc_lsp.analysis.common import Anchors
from repodoc_lsp.analysis.model import FileFacts, Import, Symbol, SymbolKind

# Python's parser stops at 200 levels of brackets; parso, which reads a file that does not parse,
# does not, and nested brackets cost it ~1.5 MB of memory and 50 ms per KB (300 KB: 471 MB, 13 s).
MAX_NESTING = 200
# a comment, a string literal (one left open runs to the end of its line, or of the text if triple
# quoted), an opening bracket (group 1) or a closing one
_BRACKETS = re.compile(
    r"#[^\n]*"
    r"|'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)"
    r'|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'
    r"|'(?:[^'\\\n]|\\.)*'?"
    r'|"(?:[^"\\\n]|\\.)*"?'
    r"|([(\[{])|[)\]}]",
    re.DOTALL,
)


def nesting_depth(text: str) -> int:
    """The deepest nesting of brackets in `text`, outside comments and string literals; a closing
    bracket closes whichever is open."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(text):
        if m.group(1):
            depth += 1
            deepest = max(deepest, depth)
        elif m.group() in (")", "]", "}"):
            depth = max(0, depth - 1)
    return deepest


def _broken_defs(children: list, prefix: str, class_qual: str, anchors: Anchors) -> list[Symbol]:
    """`def name(` or `class Name` whose statement parso could not complete (an error node)."""
    found: list[Symbol] = []
    for keyword, name in itertools.pairwise(children):
        if getattr(keyword, "type", "") != "keyword" or getattr(name, "type", "") != "name":
            continue
        if keyword.value not in ("def", "class"):
            continue
        qual = prefix + name.value
        if keyword.value == "class":
            kind = SymbolKind.CLASS
        else:
            is_method = bool(class_qual) and prefix == class_qual + "."
            kind = SymbolKind.METHOD if is_method else SymbolKind.FUNCTION
        line, col = keyword.start_pos
        found.append(Symbol(name=name.value, qualname=qual, kind=kind, line=line, col=col, end_line=line,
                            anchor=anchors.make(f"{kind.value}-{qual}"), container=prefix[:-1]))
    return found


def _parso_version() -> str | None:
    """The newest grammar parso knows: it also reads older code, and newer syntax
    (`def f[T]()`) than the running Python's parser."""
    import parso

    for version in ("3.14", "3.13", "3.12"):
        try:
            parso.load_grammar(version=version)
            return version
        except (NotImplementedError, FileNotFoundError, ValueError):
            continue
    return None


def from_parso(text: str, facts: FileFacts) -> None:
    """Error-tolerant extraction for files that do not parse (a file being edited)."""
    import parso

    module = parso.parse(text, error_recovery=True, version=_parso_version())
    anchors = Anchors()
    symbols: list[Symbol] = []
    imports: list[Import] = []
    import_anchor: dict[str, str] = {}
    stack: list[tuple[object, str, str]] = [(module, "", "")]
    while stack:
        node, prefix, class_qual = stack.pop()
        children = getattr(node, "children", None)
        if children is None:
            continue
        ntype = getattr(node, "type", "")
        if ntype == "classdef":
            name = node.name.value  # type: ignore[attr-defined]
            qual = prefix + name
            line, col = node.start_pos  # type: ignore[attr-defined]
            symbols.append(
                Symbol(
                    name=name,
                    qualname=qual,
                    kind=SymbolKind.CLASS,
                    line=line,
                    col=col,
                    end_line=node.end_pos[0],  # type: ignore[attr-defined]
                    anchor=anchors.make(f"class-{qual}"),
                    container=prefix[:-1],
                )
            )
            stack.extend((c, qual + ".", qual) for c in reversed(children))
            continue
        if ntype == "funcdef":
            name = node.name.value  # type: ignore[attr-defined]
            qual = prefix + name
            line, col = node.start_pos  # type: ignore[attr-defined]
            is_method = bool(class_qual) and prefix == class_qual + "."
            kind = SymbolKind.METHOD if is_method else SymbolKind.FUNCTION
            params = next((c.get_code(include_prefix=False) for c in children
                           if getattr(c, "type", "") == "parameters"), "()")
            symbols.append(
                Symbol(
                    name=name,
                    qualname=qual,
                    kind=kind,
                    line=line,
                    col=col,
                    end_line=node.end_pos[0],  # type: ignore[attr-defined]
                    anchor=anchors.make(f"{kind.value}-{qual}"),
                    container=prefix[:-1],
                    signature=params,
                )
            )
            stack.extend((c, qual + ".", "") for c in reversed(children))
            continue
        if ntype in ("import_name", "import_from"):
            with contextlib.suppress(AttributeError, IndexError, TypeError):
                _parso_imports(node, anchors, import_anchor, imports)
            continue
        if ntype == "error_node":
            symbols.extend(_broken_defs(children, prefix, class_qual, anchors))
        stack.extend((c, prefix, class_qual) for c in reversed(children))
    symbols.sort(key=lambda s: (s.line, s.col))
    facts.symbols = tuple(symbols)
    facts.imports = tuple(sorted(imports, key=lambda i: i.line))


def _parso_imports(node: Any, anchors: Anchors, import_anchor: dict[str, str], found: list[Import]) -> None:
    """The imports of an `import_name` or `import_from` node of parso's tree, appended to `found`."""
    paths = node.get_paths()
    line = node.start_pos[0]
    if node.type == "import_name":
        for path in paths:
            mod = ".".join(n.value for n in path)
            anchor = import_anchor.setdefault(mod, anchors.make(f"import-{mod}"))
            found.append(Import(mod, (), line, 0, anchor))
        return
    level = node.level
    mod = "." * level + ".".join(n.value for n in node.get_from_names())
    star = node.is_star_import()
    names = () if star else tuple(p[-1].value for p in paths)
    anchor = import_anchor.setdefault(mod, anchors.make(f"import-{mod}"))
    found.append(Import(mod, names, line, level, anchor, star=star))
