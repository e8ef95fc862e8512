"""The one analyser of every tree-sitter language: a query finds the definitions, this module turns
them into the same `FileFacts` Python's analyser makes.

A language is a `Spec` (one module per language family names its grammar, its query file in
`queries/`, the node types that hold members, how to read its imports and doc comments). The query's
captures are `@definition.<kind>` on the node that is the definition (its lines, its signature) and,
optionally, `@name` on its name (else the spec's `name_of` finds it). Kinds: class, struct, union,
enum, namespace, interface, trait, type, module, impl (containers or types: `SymbolKind.CLASS`),
function, macro (`SymbolKind.FUNCTION`, `METHOD` inside a type), field (an `Attribute`). Every walk
over the tree is iterative: deep nesting does not reach Python's recursion limit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Query, QueryCursor

from repodoc_lsp.analysis.model import Attribute, FileFacts, Import, Language, Symbol, SymbolKind, refs_text

# how the `blank_macros` setting reaches the analysis, in this process and in the worker processes it
# starts (`treesitter.set_blank_macros`): the pattern, "-" for none; unset: `c_family.DEFAULT_BLANK`
BLANK_MACROS_ENV = "REPODOC_BLANK_MACROS"

MAX_IDENTIFIERS = 500
# names used (`FileFacts.refs`): the first lines of each, and at most this many names a file
MAX_USE_LINES = 3
MAX_USED_NAMES = 5000
# the node types of names as each grammar calls them (those a grammar lacks are left out of its query)
_NAME_NODES = ("identifier", "type_identifier", "field_identifier", "namespace_identifier", "property_identifier",
               "package_identifier")
MAX_SIGNATURE = 240
# a file whose lines average more than this is a minified or generated bundle: not analysed
MAX_AVERAGE_LINE = 1000

TYPE_KINDS = frozenset({"class", "struct", "union", "enum", "namespace", "interface", "trait", "type",
                        "module", "impl"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_SPACES = re.compile(r"\s+")


class Skipped(Exception):
    """The file is not analysed (a minified bundle); `str(exc)` is the reason."""


@dataclass(frozen=True)
class Spec:
    """One tree-sitter language."""

    language: Language
    grammar: Callable[[], Any]  # the grammar package's `language()` (a capsule)
    query: str  # file name in `queries/`
    # node types of comments (doc comments are comments above a definition)
    comments: frozenset[str] = frozenset({"comment"})
    # an `@import` capture -> its `Import` (None: not one)
    import_of: Callable[[Node, bytes], Import | None] = lambda node, data: None
    # a `@definition.<kind>` node -> the node that is the whole definition (None: not a definition here)
    lift: Callable[[Node], Node | None] = lambda node: node
    # the name node of a definition node without an `@name` capture
    name_of: Callable[[Node], Node | None] = lambda node: node.child_by_field_name("name")
    # the qualified name's parts of a name node (`ns::Foo::bar` -> ["ns", "Foo", "bar"])
    name_parts: Callable[[Node, bytes], list[str]] = lambda node, data: [text_of(node, data)]
    # where a definition's signature stops: the start of this field's node (its body)
    body_fields: tuple[str, ...] = ("body",)
    # a node that wraps a definition and starts where its doc comment must end (`template <...>`,
    # `export`, Rust attributes are siblings, handled by `attribute_types`)
    wrappers: frozenset[str] = frozenset()
    attribute_types: frozenset[str] = frozenset()  # siblings between a doc comment and its definition
    doc: Callable[[list[str]], str | None] = lambda comments: None
    trailing_doc: bool = False  # `///<` after a member documents it
    # a `/** */` block one blank line above a definition documents it (JSDoc's rule)
    doc_gap: bool = False
    # a definition's line is its name's, not that of the annotations before it (Java's `@Override`)
    line_of_name: bool = False
    # node types whose text after the name is their body, not a signature (Rust's `macro_rules!`)
    bare: frozenset[str] = frozenset()
    # what the language calls a definition (`Symbol.word`), by the node type of the definition, else
    # by the query's kind; the kind itself when neither is here (`struct`, `enum`, `interface`)
    words: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    def word(self, node: Node, kind: str) -> str:
        return self.words.get(node.type) or self.words.get(kind) or kind


def text_of(node: Node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _start(node: Node) -> int:
    return node.start_byte


@functools.cache
def _names_query(spec: Spec) -> Query:
    """A query capturing every name node of the language (`_NAME_NODES`)."""
    language = TSLanguage(spec.grammar())
    kinds = [k for k in _NAME_NODES if language.id_for_node_kind(k, True)]
    return Query(language, "[" + " ".join(f"({k})" for k in kinds) + "] @n")


def used_names(spec: Spec, root: Node, data: bytes, defined_at: set[int]) -> str:
    """`FileFacts.refs` of a tree-sitter file: each name it uses (a name node not at a definition's
    name, `defined_at`: their end bytes, where `ns::f`'s `f` ends too; comments and strings hold no
    name node), with its first
    `MAX_USE_LINES` lines; names of fewer than 3 characters left out (too many matches by name)."""
    lines_of: dict[str, list[int]] = {}
    # in the text's order: the captures of a query of several node kinds come in no fixed order
    nodes = sorted(QueryCursor(_names_query(spec)).captures(root).get("n", ()), key=_start)
    for node in nodes:
        start, end = node.start_byte, node.end_byte
        if end - start < 3 or end in defined_at:
            continue
        name = data[start:end].decode("utf-8", "replace")
        lines = lines_of.get(name)
        if lines is None:
            if len(lines_of) < MAX_USED_NAMES:
                lines_of[name] = [node.start_point[0] + 1]
        elif len(lines) < MAX_USE_LINES and lines[-1] != node.start_point[0] + 1:
            lines.append(node.start_point[0] + 1)
    return refs_text([(name, tuple(sorted(lines))) for name, lines in sorted(lines_of.items())])


@functools.cache
def _parser_and_query(spec: Spec) -> tuple[Parser, Query]:
    language = TSLanguage(spec.grammar())
    source = resources.files(__package__).joinpath("queries", spec.query).read_text("utf-8")
    return Parser(language), Query(language, source)


def parse(spec: Spec, data: bytes) -> Node:
    parser, _ = _parser_and_query(spec)
    return parser.parse(data).root_node


def _signature(node: Node, name: Node, data: bytes, spec: Spec) -> str:
    """What follows the name up to the body, as Python's signatures are: `(int x) const`."""
    if node.type in spec.bare:
        return ""
    end = node.end_byte
    for body_field in spec.body_fields:
        body = node.child_by_field_name(body_field)
        if body is not None and body.start_byte > node.start_byte:
            end = min(end, body.start_byte)
            break
    start = name.end_byte
    if not node.start_byte <= name.end_byte <= end:  # the name is outside (`x.f = function (a) {`)
        params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        if params is None:
            return ""
        start = params.start_byte
    text = data[start:min(end, start + 4 * MAX_SIGNATURE)].decode("utf-8", "replace")
    text = _SPACES.sub(" ", text).strip().rstrip(";{ ").strip().removesuffix("=>").rstrip()
    return text if len(text) <= MAX_SIGNATURE else text[:MAX_SIGNATURE - 1] + "…"


def _outer(node: Node, spec: Spec) -> Node:
    """The node a definition's doc comment is above: its wrappers (`template <...>`, `export`)."""
    while node.parent is not None and node.parent.type in spec.wrappers:
        node = node.parent
    return node


def _doc_above(node: Node, data: bytes, spec: Spec) -> str | None:
    """The doc comment right above a definition (comments with no blank line between them and it; or
    one blank line after a block doc comment where the language's tools allow it: `Spec.doc_gap`)."""
    comments: list[str] = []
    row = node.start_point[0]
    sibling = node.prev_sibling
    while sibling is not None and sibling.type in spec.attribute_types and sibling.end_point[0] >= row - 1:
        row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    if (spec.doc_gap and sibling is not None and sibling.type in spec.comments and sibling.end_point[0] == row - 2
            and text_of(sibling, data).startswith("/**")):
        row -= 1
    while sibling is not None and sibling.type in spec.comments and sibling.end_point[0] >= row - 1:
        if sibling.end_point[0] == sibling.start_point[0] and _code_before(sibling, data):
            break  # a trailing comment of the line above
        comments.append(text_of(sibling, data))
        row = sibling.start_point[0]
        sibling = sibling.prev_sibling
    comments.reverse()
    return spec.doc(comments) if comments else None


def _code_before(comment: Node, data: bytes) -> bool:
    start = data.rfind(b"\n", 0, comment.start_byte) + 1
    return bool(data[start:comment.start_byte].strip())


def _doc_after(node: Node, data: bytes, spec: Spec) -> str | None:
    """A trailing `///<` or `/**<` on a member's line."""
    sibling = node.next_sibling
    while sibling is not None and sibling.type in (",", ";"):
        sibling = sibling.next_sibling
    if sibling is not None and sibling.type in spec.comments and sibling.start_point[0] == node.end_point[0]:
        text = text_of(sibling, data)
        if text.startswith(("///<", "//!<", "/**<", "/*!<")):
            return spec.doc([text])
    return None


def _captures(spec: Spec, root: Node, data: bytes) -> tuple[dict[tuple[int, int, str], tuple[Node, str, Node]],
                                                               list[Import]]:
    """The query's definitions, (start, -end, name) -> (node, kind, name node), and imports."""
    _, query = _parser_and_query(spec)
    found: dict[tuple[int, int, str], tuple[Node, str, Node]] = {}
    imports: list[Import] = []
    for _, captures in QueryCursor(query).matches(root):
        name_nodes = captures.get("name", [])
        for capture, nodes in captures.items():
            if capture == "import":
                imports.extend(i for i in (spec.import_of(n, data) for n in nodes) if i is not None)
            if not capture.startswith("definition."):
                continue
            kind = capture.split(".", 1)[1]
            for node in nodes:
                lifted = spec.lift(node)
                if lifted is None:
                    continue
                node = lifted
                name_node = name_nodes[0] if name_nodes else spec.name_of(node)
                if name_node is None:
                    continue
                key = (node.start_byte, -node.end_byte, text_of(name_node, data))
                if key not in found or found[key][1] == "type":  # `type` of Go's `type T struct`: struct
                    found[key] = (node, kind, name_node)
    return found, imports


def analyse(spec: Spec, text: str) -> FileFacts:
    """The facts of `text` in the language of `spec`: partial facts from a file with syntax errors."""
    from repodoc_lsp.analysis.common import Anchors, count_lines

    lines = count_lines(text)
    if lines and len(text) / lines > MAX_AVERAGE_LINE and len(text) > 100_000:
        raise Skipped(f"minified or generated ({len(text) // lines:,} characters a line on average)")
    data = text.encode("utf-8", "surrogatepass")
    parser, _ = _parser_and_query(spec)
    root = parser.parse(data).root_node
    found, imports = _captures(spec, root, data)
    symbols: list[Symbol] = []
    attributes: list[Attribute] = []
    # containers: (end byte, qualname parts, kind) of the type definitions enclosing the current one
    stack: list[tuple[int, list[str], str]] = []
    anchors = Anchors()
    for (start, _, _), (node, kind, name_at) in sorted(found.items(), key=lambda item: item[0]):
        while stack and stack[-1][0] <= start:
            stack.pop()
        parts = spec.name_parts(name_at, data)
        if not parts or not parts[-1]:
            continue
        outer = stack[-1][1] if stack and kind != "macro" else []  # a macro is in no namespace
        inner_kind = stack[-1][2] if stack else ""
        scope = [*outer, *parts[:-1]]
        name = parts[-1]
        container = ".".join(scope)
        qualname = ".".join([*scope, name])
        line, col = (name_at if spec.line_of_name else node).start_point
        line += 1
        if kind == "field":
            attributes.append(Attribute(name=name, container=container, line=line))
            continue
        if kind == "namespace":  # `namespace a::b {`: `a` too
            for depth in range(len(outer), len(scope)):
                prefix = ".".join(scope[:depth + 1])
                symbols.append(Symbol(
                    name=scope[depth], qualname=prefix, kind=SymbolKind.CLASS, line=node.start_point[0] + 1,
                    col=node.start_point[1], end_line=_last_row(node) + 1,
                    anchor=anchors.make(f"class-{prefix}"), container=".".join(scope[:depth]),
                    signature="", word="namespace"))
        if kind in TYPE_KINDS:
            symbol_kind = SymbolKind.CLASS
            stack.append((node.end_byte, [*scope, name], kind))
            if kind == "impl":  # Rust's `impl T`: its functions are T's methods; not a definition itself
                continue
        elif kind == "method" or (scope and (inner_kind not in ("namespace", "module") or len(parts) > 1)):
            symbol_kind = SymbolKind.METHOD
        else:
            symbol_kind = SymbolKind.FUNCTION
        outer_node = _outer(node, spec)
        doc = _doc_above(outer_node, data, spec)
        if doc is None and spec.trailing_doc:
            doc = _doc_after(node, data, spec)
        symbols.append(Symbol(
            name=name, qualname=qualname, kind=symbol_kind, line=line, col=col, end_line=_last_row(node) + 1,
            anchor=anchors.make(f"{symbol_kind.value}-{qualname}"), container=container,
            signature=_signature(node, name_at, data, spec), docstring=doc, word=spec.word(node, kind)))
    facts = FileFacts(language=spec.language, lines=lines)
    facts.symbols = _away_methods_as_functions(symbols, anchors)
    facts.attributes = tuple(attributes)
    import_anchor: dict[str, str] = {}
    facts.imports = tuple(replace(i, anchor=import_anchor.setdefault(i.module, anchors.make(f"import-{i.module}")))
                          for i in sorted(imports, key=lambda i: i.line))
    facts.module_doc = _file_doc(root, data, spec)
    facts.refs = used_names(spec, root, data, {name_at.end_byte for _node, _kind, name_at in found.values()})
    words = sorted(set(_WORD.findall(text)))
    facts.identifiers, facts.identifiers_total = tuple(words[:MAX_IDENTIFIERS]), len(words)
    if root.has_error:
        from repodoc_lsp.analysis.model import SyntaxProblem

        bad = _first_error(root)
        if bad is not None:
            facts.syntax_error = SyntaxProblem(bad.start_point[0] + 1, bad.start_point[1], "syntax error")
    return facts


def _away_methods_as_functions(symbols: list[Symbol], anchors: Any) -> tuple[Symbol, ...]:
    """A method of a type this file does not define (C++'s `void Foo::bar() {}` in a `.cpp`, Go's
    methods beside their type's file, Rust's `impl Display for Foo`, JS's `req.param = function`) is a
    function of this file with that container: pages list a method under its class only."""
    types = {s.qualname for s in symbols if s.kind is SymbolKind.CLASS}
    return tuple(replace(s, kind=SymbolKind.FUNCTION, anchor=anchors.make(f"function-{s.qualname}"))
                 if s.kind is SymbolKind.METHOD and s.container not in types else s for s in symbols)


def _last_row(node: Node) -> int:
    """The node's last line (0-based), not the next one when it ends with its newline (`#define`)."""
    return max(node.start_point[0], node.end_point[0] - (node.end_point[1] == 0))


def _first_error(root: Node) -> Node | None:
    todo = [root]
    while todo:
        node = todo.pop()
        if node.is_error or node.is_missing:
            return node
        if node.has_error:
            todo.extend(reversed(node.children))
    return None


def _file_doc(root: Node, data: bytes, spec: Spec) -> str | None:
    """A file's doc comment: `//!` / `/*!` / `@file` comments at its top (before any code)."""
    comments = []
    for child in root.children:
        if child.type not in spec.comments:
            break
        comments.append(text_of(child, data))
    inner = [c for c in comments if c.startswith(("//!", "/*!")) or "@file" in c or "\\file" in c]
    return spec.doc(inner) if inner else None
