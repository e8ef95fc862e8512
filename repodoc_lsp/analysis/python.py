"""Python source -> facts, from an exact parse (`ast`); parso recovers broken files.

Every class and function at any depth is found (methods and nested functions
included), every import as its module and as each imported name, relative
imports with their dots. The walk is iterative, so deeply nested code cannot
exhaust the interpreter's stack here.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import itertools
import re
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
    call_findings,
    child_blocks,
    class_findings,
    concurrency_findings,
    def_findings,
    line_numbers,
    slots_finding,
)
from repodoc_lsp.analysis.signature import signature_text
from repodoc_lsp.analysis.xref import assigned, instance_attributes, references

# Lines that may hold a risky call; the syntax tree is searched only around them:
# `\b(?:eval|exec|...|loads?)\s*\(|\b(?:pickle|...|torch)\.(?:loads?|open|Unpickler)\b|\bshell\s*=`, written as one
# alternative per first letter of the words, the boundary before a word checked once it is matched
# (`e(?:val(?<!\weval)\s*\(|xec(?<!\wexec)...)`): the same matches, but the regex engine tries the pattern only
# where one of those letters is, not at every character with a boundary test (Unicode character tables) per
# alternative (a sixth of `_risky_lines`' instructions).
_RISKY_CALLS = ("eval", "exec", "exec_module", "__import__", "import_module", "system", "popen", "getoutput",
                "getstatusoutput", "mktemp", "unsafe_load", "Unpickler", "load")  # `load` and `loads`
_RISKY_MODULES = ("pickle", "cPickle", "dill", "marshal", "shelve", "yaml", "joblib", "torch")


def _risky_pattern() -> re.Pattern[str]:
    forms = [*((call, r"s?\s*\(" if call == "load" else r"\s*\(") for call in _RISKY_CALLS),
             *((module, r"\.(?:loads?|open|Unpickler)\b") for module in _RISKY_MODULES), ("shell", r"\s*=")]
    rests: dict[str, list[str]] = {}  # first letter -> what follows it in each form (no two match at one place)
    for word, after in forms:
        rests.setdefault(word[0], []).append(f"{word[1:]}(?<!\\w{word}){after}")
    return re.compile("|".join(f"{first}(?:{'|'.join(rest)})" for first, rest in rests.items()))


_RISKY_TEXT = _risky_pattern()


_DEF_NAME = re.compile(r"\b(?:def|class)\s+(\w+)")


def body_digest(lines: list[str], first: int, last: int, name: str) -> str:
    """A digest of the definition on lines `first`..`last` (1-based) of `lines` (the text split at
    its newlines) with its name blanked on its `def`/`class` line: a renamed definition whose source
    is otherwise the same has the same one. 32 bits: it is compared only with the other definitions
    of one file, and it is kept for each of them in the manifest."""
    return _Text("\n".join(lines)).body_digest(first, last, name)


class _Text:
    """A file's text, its lines (`text.split("\n")`) and, made on first use, its UTF-8 bytes and where
    each line starts in them: each definition's `body_digest` hashes a slice of those bytes, not a join
    of its lines encoded again (a class's lines once for it and once for each of its methods; a file
    that is not ASCII had each definition's text encoded apart: a third of the digests' time in a
    sample of PyTorch)."""

    __slots__ = ("_ascii", "_data", "_starts", "lines", "text")

    def __init__(self, text: str, lines: list[str] | None = None) -> None:
        self.text = text
        self.lines = text.split("\n") if lines is None else lines
        self._starts: list[int] = []
        self._data: memoryview | None = None
        self._ascii = True

    def body_digest(self, first: int, last: int, name: str) -> str:
        """`body_digest` of lines `first`..`last` of this text."""
        lines = self.lines
        if not 0 < first <= last <= len(lines):
            return ""
        data = self._data
        if data is None:
            # line i starts after lines 0..i-1 and their i newlines (a newline is one byte in UTF-8,
            # never part of another character's bytes: the bytes' lines are the text's)
            if self.text.isascii():
                raw = self.text.encode("ascii")
                lengths = map(len, lines)
            else:
                raw = self.text.encode("utf-8", "surrogatepass")
                lengths = map(len, raw.split(b"\n"))
                self._ascii = False
            # the lengths of the lines before each (its start less the newlines before it): `(1).__add__`
            # mapped over the lengths to count the newlines in took 4 times as long
            self._starts = list(itertools.accumulate(lengths, initial=0))
            data = self._data = memoryview(raw)
        starts = self._starts
        # the bytes of "\n".join(lines[first - 1 : last])
        start, end = starts[first - 1] + first - 1, starts[last] + last - 1
        line = lines[first - 1]
        m = _DEF_NAME.search(line)
        if m is None or m.group(1) != name:
            return hashlib.blake2b(data[start:end], digest_size=4).hexdigest()
        # hashed in parts: the digest of the text with the name replaced by a NUL
        at, after = m.start(1), m.end(1)
        if not self._ascii:  # code points -> bytes
            at = len(line[:at].encode("utf-8", "surrogatepass"))
            after = at + len(name.encode("utf-8", "surrogatepass"))
        h = hashlib.blake2b(data[start : start + at], digest_size=4)
        h.update(b"\0")
        h.update(data[start + after : end])
        return h.hexdigest()


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


def _unparse(node: ast.AST | None) -> str:
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


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    if node.body:
        first, last = node.lineno - 1, node.body[0].lineno - 1
        header = "\n".join(lines[first : last + 1])
        start = header.find("(", header.find(node.name, node.col_offset))
        if start >= 0:
            found = signature_text(header[start:])
            if found is not None:
                return found
    sig = f"({_unparse(node.args)})"
    if node.returns is not None:
        sig += f" -> {_unparse(node.returns)}"
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
        _from_parso(text, facts)
    return facts


# Comments that are no prose: tool pragmas, encodings, shebangs, licence and copyright lines
_PRAGMA = re.compile(r"^#\s*(?:!|-\*-|(?:mypy|flake8|noqa|type|pyre[-\w]*|usort|ruff|pylint|fmt|isort|pragma|nolint)\b"
                     r"|.*\b(?:copyright|spdx|licen[cs]e|all rights reserved|this source tree))", re.I)


_COMMENT_LINES = 12  # a leading comment speaks for the file in its first paragraph, of this many lines at most


def _leading_comment(lines: list[str]) -> str | None:
    """The first block of comment lines at a module's top (before its first statement) that holds
    prose of 5 words at least, pragmas and licence lines aside: what a file without a docstring
    says of itself."""
    block: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#") and not _PRAGMA.match(stripped):
            said = stripped.lstrip("#").strip()
            if said or not block:  # an empty comment line ends a paragraph of the block
                block.append(said)
                if len(block) < _COMMENT_LINES:
                    continue
            if len(" ".join(block).split()) >= 5:
                break
            block = []
            continue
        if len(" ".join(block).split()) >= 5:
            break
        block = []
        if stripped and not stripped.startswith("#"):
            break
    text = "\n".join(block).strip()
    return text if len(text.split()) >= 5 else None


def _from_ast(tree: ast.Module, text: str, facts: FileFacts) -> None:
    anchors = Anchors()
    symbols: list[Symbol] = []
    imports: list[Import] = []
    findings: list[Finding] = []
    attributes: list[Attribute] = []
    import_anchor: dict[str, str] = {}
    source = _Text(text)
    lines = source.lines
    # `count_lines(text)` without counting the newlines again: the split made one more line than them
    facts.lines = len(lines) - (not text or text.endswith("\n"))
    facts.module_doc = _docstring(tree) or _leading_comment(lines)

    # (statements, qualname prefix, enclosing class qualname or "" , is module level)
    stack: list[tuple[list[ast.stmt], str, str, bool]] = [(tree.body, "", "", True)]
    kinds, block_fields = _STATEMENT_KINDS, _BLOCK_FIELDS
    node: Any  # its type told by `kinds` (one dict lookup, not four `isinstance` calls per statement)
    while stack:
        body, prefix, class_qual, top = stack.pop()
        in_class = bool(class_qual) and prefix == class_qual + "."  # a class's own body
        for node in body:
            kind = type(node)
            what = kinds.get(kind)
            if what is None:  # any other statement: most of them, in functions' bodies
                if top:
                    if kind is ast.If and _is_main_guard(node):
                        facts.has_main_block = True
                    facts.all_names = facts.all_names or _all_names(node)
                    attributes.extend(assigned(node, "", lines))
                elif in_class:
                    findings.extend(slots_finding(node, class_qual))
                    attributes.extend(assigned(node, class_qual, lines))
                fields = block_fields.get(kind)
                if fields is not None:  # a compound statement: the blocks it holds, as `child_blocks` gives them
                    if fields:
                        for field in fields:
                            block = getattr(node, field)
                            if block:
                                stack.append((block, prefix, class_qual, top))
                    else:
                        for block in child_blocks(node):
                            stack.append((block, prefix, class_qual, top))
            elif what is _CLASS:
                qual = prefix + node.name
                decorators = tuple(_unparse(d) for d in node.decorator_list)
                bases = tuple(_unparse(b) for b in node.bases) + tuple(
                    f"{k.arg}={_unparse(k.value)}" for k in node.keywords if k.arg
                )
                end = node.end_lineno or node.lineno
                symbols.append(
                    Symbol(
                        name=node.name,
                        qualname=qual,
                        kind=SymbolKind.CLASS,
                        line=node.lineno,
                        col=node.col_offset,
                        end_line=end,
                        anchor="",  # given in line order below
                        container=prefix[:-1],
                        decorators=decorators,
                        bases=bases,
                        docstring=_docstring(node),
                        body=source.body_digest(node.lineno, end, node.name),
                    )
                )
                findings.extend(class_findings(node, qual, decorators, bases))
                stack.append((node.body, qual + ".", qual, False))
            elif what is _DEF:
                qual = prefix + node.name
                decorators = tuple(_unparse(d) for d in node.decorator_list) if node.decorator_list else ()
                is_async = kind is ast.AsyncFunctionDef
                end = node.end_lineno or node.lineno
                symbols.append(
                    Symbol(
                        name=node.name,
                        qualname=qual,
                        kind=SymbolKind.METHOD if in_class else SymbolKind.FUNCTION,
                        line=node.lineno,
                        col=node.col_offset,
                        end_line=end,
                        anchor="",
                        container=prefix[:-1],
                        signature=_signature(node, lines),
                        is_async=is_async,
                        decorators=decorators,
                        docstring=_docstring(node),
                        body=source.body_digest(node.lineno, end, node.name),
                    )
                )
                if decorators or is_async:
                    findings.extend(def_findings(node, qual, decorators, is_async))
                if in_class and node.name == "__init__":
                    attributes.extend(instance_attributes(node, class_qual, lines))
                stack.append((node.body, qual + ".", "", False))
            elif what is _IMPORT:
                for alias in node.names:
                    anchor = import_anchor.setdefault(alias.name, anchors.make(f"import-{alias.name}"))
                    asnames = (alias.asname,) if alias.asname else ()
                    imports.append(Import(alias.name, (), node.lineno, 0, anchor, asnames))
            else:
                module = "." * node.level + (node.module or "")
                taken = [a for a in node.names if a.name != "*"]
                names = tuple(a.name for a in taken)
                anchor = import_anchor.setdefault(module, anchors.make(f"import-{module}"))
                imports.append(Import(module, names, node.lineno, node.level, anchor,
                                      tuple(a.asname or a.name for a in taken), star=not taken))

    symbols.sort(key=lambda s: (s.line, s.col))
    # Anchors in line order, so the first definition of a qualname has the plain
    # `kind-qualname` (the graph's definition, which other pages link to).
    # Set in place: each Symbol was made just above and is not shared yet (a copy per symbol,
    # `dataclasses.replace`, was 2% of the analysis). An enum's `_value_` and `_name_` are what its `value` and
    # `name` give, read without their properties (two calls of Python functions each).
    symbol_anchors = Anchors()
    for s in symbols:
        object.__setattr__(s, "anchor", symbol_anchors.make(f"{s.kind._value_}-{s.qualname}"))
    imports.sort(key=lambda i: i.line)
    findings.extend(concurrency_findings(tree, imports, text))
    risky_lines = _risky_lines(text)
    if risky_lines:
        findings.extend(call_findings(tree, imports, risky_lines))
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


# Words one of which every _RISKY_TEXT match contains, at most _RISKY_LEAD characters
# after the match's start (`cPickle.` before `load`). Finding them with str.find and
# matching the pattern only around them is several times faster than a regex scan.
_RISKY_WORDS = ("eval", "exec", "__import__", "import_module", "system", "popen", "getoutput",
                "getstatusoutput", "mktemp", "load", "Unpickler", "open", "shell")
_RISKY_LEAD = 16
_RISKY_SPAN = 200  # how far past the word a match may end (spaces before `(` or `= True`)
# The words found by a scan of the text each (a scan of a whole file per word: three quarters of the time);
# the others are found by `_risky_lines` from two scans: `open` (and `popen` where a `p` precedes it),
# `import_` (`__import__` and `import_module`, in both).
_RISKY_SCANNED = tuple(w for w in _RISKY_WORDS if w not in ("open", "popen", "__import__", "import_module"))


def _risky_lines(text: str) -> list[int]:
    """Sorted line numbers (1-based) where the text looks like a risky call: every match of the pattern
    in a window around each place where one of `_RISKY_WORDS` is."""
    places: list[int] = []
    find = text.find
    for word in _RISKY_SCANNED:
        at = find(word)
        while at >= 0:
            places.append(at)
            at = find(word, at + 1)
    at = find("open")
    while at >= 0:
        places.append(at)
        if at and text[at - 1] == "p":  # `popen`
            places.append(at - 1)
        at = find("open", at + 1)
    at = find("import_")
    while at >= 0:
        if text.startswith("import_module", at):
            places.append(at)
        if at >= 2 and text.startswith("__import__", at - 2):
            places.append(at - 2)
        at = find("import_", at + 1)
    starts: set[int] = set()
    for at in places:
        for match in _RISKY_TEXT.finditer(text, max(0, at - _RISKY_LEAD), at + _RISKY_SPAN):
            starts.add(match.start())
    return line_numbers(text, starts)


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


def _from_parso(text: str, facts: FileFacts) -> None:
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
            try:
                paths = node.get_paths()  # type: ignore[attr-defined]
                line = node.start_pos[0]  # type: ignore[attr-defined]
                if ntype == "import_name":
                    for path in paths:
                        mod = ".".join(n.value for n in path)
                        anchor = import_anchor.setdefault(mod, anchors.make(f"import-{mod}"))
                        imports.append(Import(mod, (), line, 0, anchor))
                else:
                    level = node.level  # type: ignore[attr-defined]
                    from_names = node.get_from_names()  # type: ignore[attr-defined]
                    mod = "." * level + ".".join(n.value for n in from_names)
                    star = node.is_star_import()  # type: ignore[attr-defined]
                    names = () if star else tuple(p[-1].value for p in paths)
                    anchor = import_anchor.setdefault(mod, anchors.make(f"import-{mod}"))
                    imports.append(Import(mod, names, line, level, anchor, star=star))
            except (AttributeError, IndexError, TypeError):
                pass
            continue
        if ntype == "error_node":
            symbols.extend(_broken_defs(children, prefix, class_qual, anchors))
        stack.extend((c, prefix, class_qual) for c in reversed(children))
    symbols.sort(key=lambda s: (s.line, s.col))
    facts.symbols = tuple(symbols)
    facts.imports = tuple(sorted(imports, key=lambda i: i.line))
