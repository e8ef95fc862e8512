"""Rust: functions, methods (in `impl` and `trait` blocks), structs, enums, unions, traits, type
aliases, modules, `macro_rules!`, fields; `mod x;` as an import of its file; rustdoc comments."""

from __future__ import annotations

import tree_sitter_rust

from repodoc_lsp.analysis.model import Import, Language
from repodoc_lsp.analysis.treesitter import doccomments
from repodoc_lsp.analysis.treesitter.core import Node, Spec, text_of


def _name_parts(node: Node, data: bytes) -> list[str]:
    text = text_of(node, data)
    if node.type in ("generic_type", "scoped_type_identifier"):  # `impl<T> Foo<T>` -> Foo
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        text = text_of(inner, data) if inner is not None else text.split("<", 1)[0]
    return [text.rsplit("::", 1)[-1]]


def _import(node: Node, data: bytes) -> Import | None:
    """`mod name;` (a module in its own file)."""
    if node.type == "mod_item" and node.child_by_field_name("body") is None:
        name = node.child_by_field_name("name")
        if name is not None:
            return Import(module=text_of(name, data), names=(), line=node.start_point[0] + 1, level=-1)
    return None


def _doc(comments: list[str]) -> str | None:
    docs = [c for c in comments if c.startswith(("///", "/**")) and not c.startswith(("////", "/**/"))]
    return doccomments.tagged([line for c in docs for line in doccomments.strip(c)]) if docs else None


RUST = Spec(language=Language.RUST, grammar=tree_sitter_rust.language, query="rust.scm", import_of=_import,
            name_parts=_name_parts, doc=_doc, comments=frozenset({"line_comment", "block_comment"}),
            attribute_types=frozenset({"attribute_item"}))
