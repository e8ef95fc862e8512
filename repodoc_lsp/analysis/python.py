"""Python source -> facts, from an exact parse (`ast`); parso recovers broken files.

Every class and function at any depth is found (methods and nested functions
included), every import as its module and as each imported name, relative
imports with their dots. The walk is iterative, so deeply nested code cannot
exhaust the interpreter's stack here.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import re
import zlib
from typing import Any

from repodoc_lsp.analysis.common import Anchors, TooComplex, count_lines
from repodoc_lsp.analysis.model import (
    Attribute,
    FileFacts,
    Finding,
    Import,
    Language,
    Symbol,
    SymbolKind,
    SyntaxProblem,
    refs_text,
)
from repodoc_lsp.analysis.patterns import (
    child_blocks,
    class_findings,
    concurrency_findings,
    def_findings,
    slots_finding,
)
from repodoc_lsp.analysis.recovery import MAX_NESTING, from_parso, nesting_depth
from repodoc_lsp.analysis.risky import call_findings, risky_lines
from repodoc_lsp.analysis.signature import signature_text
from repodoc_lsp.analysis.unparse import unparse
from repodoc_lsp.analysis.xref import assigned, instance_attributes, references

# the name on a definition's first line (`[async] def NAME`, `class NAME`)
_DEF_NAME = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")


def body_digest(lines: list[str], first: int, last: int, name: str) -> str:
    """A digest of the definition on lines `first`..`last` (1-based) of `lines` (the text split at
    its newlines) with its name blanked on its `def`/`class` line: a renamed definition whose source
    is otherwise the same has the same one. 32 bits: it is compared only with the other digests of
    one file's definitions (`render/anchors.py`, `refs/check.py`), and it is kept for each of them in
    the manifest.

    Speed: its lines joined and CRC-32, not blake2b over slices of the file's bytes by a table of
    line starts; the `def`/`class` matched where the line starts, not searched for:
    bench/README.md, "The analysis workers beyond `ast.parse`, a third time"."""
    if not 0 < first <= last <= len(lines):
        return ""
    head = lines[first - 1]
    m = _DEF_NAME.match(head)
    if m is not None and m.group(1) == name:
        head = f"{head[:m.start(1)]}\0{head[m.end(1):]}"
    body = "\n".join([head, *lines[first:last]]) if last > first else head
    return f"{zlib.crc32(body.encode('utf-8', 'surrogatepass')):08x}"


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    if node.body:
        first, last = node.lineno - 1, node.body[0].lineno - 1
        header = "\n".join(lines[first : last + 1])
        start = header.find("(", header.find(node.name, node.col_offset))
        if start >= 0:
            found = signature_text(header[start:])
            if found is not None:
                return found
    sig = f"({unparse(node.args)})"
    if node.returns is not None:
        sig += f" -> {unparse(node.returns)}"
    return sig


def _docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """`ast.get_docstring(node, clean=True)`, without its checks of the node's type (one of these)."""
    body = node.body
    if body and type(body[0]) is ast.Expr:
        value = body[0].value
        if type(value) is ast.Constant and type(value.value) is str:
            return inspect.cleandoc(value.value)
    return None


# What `_from_ast` does with a statement of each type (any other: none of these).
_CLASS, _DEF, _IMPORT, _IMPORT_FROM = range(4)
_STATEMENT_KINDS: dict[type, int] = {ast.ClassDef: _CLASS, ast.FunctionDef: _DEF, ast.AsyncFunctionDef: _DEF,
                                     ast.Import: _IMPORT, ast.ImportFrom: _IMPORT_FROM}
# Statements that hold other statements (where nested defs can hide), with the fields that hold
# them in `child_blocks`' order (empty: read by `child_blocks`, for their handlers or cases).
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: (), ast.Match: (),
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    _BLOCK_FIELDS[ast.TryStar] = ()


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    return any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts) and any(
        isinstance(p, ast.Constant) and p.value == "__main__" for p in parts
    )


def _all_names(node: ast.stmt) -> tuple[str, ...]:
    """The names of `__all__ = [...]` (annotated too: `__all__: list[str] = [...]`)."""
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return ()
    if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(value, ast.List | ast.Tuple):
        return tuple(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


def analyse_python(text: str) -> FileFacts:
    """The facts of Python source `text`; TooComplex when it does not parse and its brackets nest
    deeper than MAX_NESTING (parso's error recovery would take minutes and gigabytes)."""
    facts = FileFacts(language=Language.PYTHON, lines=0)  # counted from the text's lines by `_from_ast`
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        facts.syntax_error = SyntaxProblem(exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg)
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        facts.syntax_error = SyntaxProblem(1, 0, str(exc))
    except (RecursionError, MemoryError):
        facts.syntax_error = SyntaxProblem(1, 0, "nested too deeply for Python's parser")
    else:
        _from_ast(tree, text, facts)
        return facts
    if (depth := nesting_depth(text)) > MAX_NESTING:
        raise TooComplex(f"nesting too deep ({depth:,} levels; limit {MAX_NESTING})")
    facts.lines = count_lines(text)
    with contextlib.suppress(RecursionError, MemoryError):
        from_parso(text, facts)
    return facts


# Comments that are no prose: tool pragmas, encodings, shebangs; copyright and licence lines
_PRAGMA = re.compile(r"^#\s*(?:!|-\*-|(?:mypy|flake8|noqa|type|pyre[-\w]*|usort|ruff|pylint|fmt|isort|pragma"
                     r"|nolint)\b)", re.I)
_COPYRIGHT = re.compile(r"\b(?:copyright|spdx|licen[cs]e|all rights reserved|this source tree)", re.I)
# A line of a licence's own text: the paragraph holding one is the licence's, all of it (Apache's `Unless required
# by applicable law ...`, BSD's `modification, are permitted ...`, MIT's `copies or substantial portions ...`)
_LICENCE = re.compile(r"\b(?:applicable law|warrant|permission is hereby granted|permission notice|redistribution"
                      r"|free software)", re.I)


_COMMENT_LINES = 12  # a leading comment speaks for the file in its first paragraph, of this many lines at most


def _leading_comment(lines: list[str]) -> str | None:
    """The first block of comment lines at a module's top (before its first statement) that holds
    prose of 5 words at least, pragmas and licence paragraphs aside: what a file without a docstring
    says of itself."""
    block: list[str] = []
    licence = after = False  # the paragraph read holds a licence line; one did before
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#") and not _PRAGMA.match(stripped):
            said = stripped.lstrip("#").strip()
            # the licence's paragraph, all of it, and after it a paragraph with a copyright line (BSD's third clause)
            if said and (licence or _LICENCE.search(said) or (after and _COPYRIGHT.search(said))):
                block, licence, after = [], True, True
                continue
            licence = False
            if _COPYRIGHT.search(said):  # a line of its own, as a pragma
                if len(" ".join(block).split()) >= 5:
                    break
                block = []
                continue
            if said or not block:  # an empty comment line ends a paragraph of the block
                block.append(said)
                if len(block) < _COMMENT_LINES:
                    continue
            if len(" ".join(block).split()) >= 5:
                break
            block = []
            continue
        licence = licence and stripped.startswith("#")  # a pragma line leaves the paragraph open
        if len(" ".join(block).split()) >= 5:
            break
        block = []
        if stripped and not stripped.startswith("#"):
            break
    text = "\n".join(block).strip()
    return text if len(text.split()) >= 5 else None


def _from_ast(tree: ast.Module, text: str, facts: FileFacts) -> None:
    walk = _Walk(text, facts)
    walk.walk(tree)
    _finish(tree, text, facts, walk)


class _Walk:
    """What `_from_ast` gathers of a module, its statements visited without recursion: definitions,
    imports, attributes and the findings of each kind of statement (`_STATEMENT_KINDS`)."""

    def __init__(self, text: str, facts: FileFacts) -> None:
        self.facts = facts
        self.symbols: list[Symbol] = []
        self.imports: list[Import] = []
        self.findings: list[Finding] = []
        self.attributes: list[Attribute] = []
        self.anchors = Anchors()
        self.import_anchor: dict[str, str] = {}
        self.text = text
        self.lines = text.split("\n")
        # (statements, qualname prefix, enclosing class qualname or "" , is module level)
        self.stack: list[tuple[list[ast.stmt], str, str, bool]] = []

    def walk(self, tree: ast.Module) -> None:
        facts, lines, stack = self.facts, self.lines, self.stack
        # `count_lines(text)` without counting the newlines again: the split made one more line than them
        facts.lines = len(lines) - (not self.text or self.text.endswith("\n"))
        facts.module_doc = _docstring(tree) or _leading_comment(lines)
        stack.append((tree.body, "", "", True))
        kinds = _STATEMENT_KINDS
        node: Any  # its type told by `kinds` (one dict lookup, not four `isinstance` calls per statement)
        while stack:
            body, prefix, class_qual, top = stack.pop()
            in_class = bool(class_qual) and prefix == class_qual + "."  # a class's own body
            for node in body:
                what = kinds.get(type(node))
                if what is None:  # any other statement: most of them, in functions' bodies
                    self.statement(node, prefix, class_qual, top, in_class)
                elif what is _CLASS:
                    self.class_def(node, prefix)
                elif what is _DEF:
                    self.function_def(node, prefix, class_qual, in_class)
                elif what is _IMPORT:
                    self.import_names(node)
                else:
                    self.import_from(node)

    def statement(self, node: Any, prefix: str, class_qual: str, top: bool, in_class: bool) -> None:
        """A statement that defines and imports nothing: at the module's top or in a class's body, what it
        assigns; a compound statement, the blocks it holds (as `child_blocks` gives them) to visit."""
        kind = type(node)
        if top:
            if kind is ast.If and _is_main_guard(node):
                self.facts.has_main_block = True
            self.facts.all_names = self.facts.all_names or _all_names(node)
            self.attributes.extend(assigned(node, "", self.lines))
        elif in_class:
            self.findings.extend(slots_finding(node, class_qual))
            self.attributes.extend(assigned(node, class_qual, self.lines))
        fields = _BLOCK_FIELDS.get(kind)
        if fields is None:
            return
        if fields:
            for field in fields:
                block = getattr(node, field)
                if block:
                    self.stack.append((block, prefix, class_qual, top))
        else:
            for block in child_blocks(node):
                self.stack.append((block, prefix, class_qual, top))

    def class_def(self, node: ast.ClassDef, prefix: str) -> None:
        qual = prefix + node.name
        decorators = tuple(unparse(d) for d in node.decorator_list)
        bases = tuple(unparse(b) for b in node.bases) + tuple(
            f"{k.arg}={unparse(k.value)}" for k in node.keywords if k.arg
        )
        end = node.end_lineno or node.lineno
        self.symbols.append(
            Symbol(
                name=node.name,
                qualname=qual,
                kind=SymbolKind.CLASS,
                line=node.lineno,
                col=node.col_offset,
                end_line=end,
                anchor="",  # given in line order by `_finish`
                container=prefix[:-1],
                decorators=decorators,
                bases=bases,
                docstring=_docstring(node),
                body=body_digest(self.lines, node.lineno, end, node.name),
            )
        )
        self.findings.extend(class_findings(node, qual, decorators, bases))
        self.stack.append((node.body, qual + ".", qual, False))

    def function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, class_qual: str,
                     in_class: bool) -> None:
        qual = prefix + node.name
        decorators = tuple(unparse(d) for d in node.decorator_list) if node.decorator_list else ()
        is_async = type(node) is ast.AsyncFunctionDef
        end = node.end_lineno or node.lineno
        self.symbols.append(
            Symbol(
                name=node.name,
                qualname=qual,
                kind=SymbolKind.METHOD if in_class else SymbolKind.FUNCTION,
                line=node.lineno,
                col=node.col_offset,
                end_line=end,
                anchor="",
                container=prefix[:-1],
                signature=_signature(node, self.lines),
                is_async=is_async,
                decorators=decorators,
                docstring=_docstring(node),
                body=body_digest(self.lines, node.lineno, end, node.name),
            )
        )
        if decorators or is_async:
            self.findings.extend(def_findings(node, qual, decorators, is_async))
        if in_class and node.name == "__init__":
            self.attributes.extend(instance_attributes(node, class_qual, self.lines))
        self.stack.append((node.body, qual + ".", "", False))

    def import_names(self, node: ast.Import) -> None:
        for alias in node.names:
            anchor = self.import_anchor.setdefault(alias.name, self.anchors.make(f"import-{alias.name}"))
            asnames = (alias.asname,) if alias.asname else ()
            self.imports.append(Import(alias.name, (), node.lineno, 0, anchor, asnames))

    def import_from(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        taken = [a for a in node.names if a.name != "*"]
        names = tuple(a.name for a in taken)
        anchor = self.import_anchor.setdefault(module, self.anchors.make(f"import-{module}"))
        self.imports.append(Import(module, names, node.lineno, node.level, anchor,
                                   tuple(a.asname or a.name for a in taken), star=not taken))


def _finish(tree: ast.Module, text: str, facts: FileFacts, walk: _Walk) -> None:
    """The facts of what `walk` gathered: in line order, definitions anchored, the findings of the
    whole file, and the names the file reads."""
    symbols, imports, findings, attributes = walk.symbols, walk.imports, walk.findings, walk.attributes
    symbols.sort(key=lambda s: (s.line, s.col))
    # Anchors in line order, so the first definition of a qualname has the plain
    # `kind-qualname` (the graph's definition, which other pages link to).
    # Set in place: each Symbol was made by the walk and is not shared yet (a copy per symbol,
    # `dataclasses.replace`, was 2% of the analysis). An enum's `_value_` is what its `value`
    # gives, read without its property (a call of a Python function).
    symbol_anchors = Anchors()
    for s in symbols:
        object.__setattr__(s, "anchor", symbol_anchors.make(f"{s.kind._value_}-{s.qualname}"))
    imports.sort(key=lambda i: i.line)
    findings.extend(concurrency_findings(tree, imports, text))
    risky = risky_lines(text)
    if risky:
        findings.extend(call_findings(tree, imports, risky))
    findings.sort(key=lambda f: (f.category._name_, f.line, f.label))
    facts.symbols = tuple(symbols)
    facts.imports = tuple(imports)
    facts.findings = tuple(findings)
    attributes.sort(key=lambda a: a.line)
    facts.attributes = tuple(attributes)
    heads = {local for imp in imports for local, _ in imp.bindings()}
    heads.update(s.name for s in symbols if not s.container)
    heads.update(a.name for a in attributes if not a.container)
    # what a star import binds is known only to the graph: every name is kept
    named = references(tree, None if any(imp.star for imp in imports) else heads)
    facts.refs = refs_text(named)
