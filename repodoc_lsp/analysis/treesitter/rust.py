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
    """`mod name;` (a module in its own file; module `name`), `use a::b::{C, D};` (module `a::b`,
    names C and D; a path import when it starts with `crate`, `self` or `super`)."""
    if node.type == "mod_item":
        name = node.child_by_field_name("name")
        if node.child_by_field_name("body") is None and name is not None:
            return Import(module=text_of(name, data), names=(), line=node.start_point[0] + 1, level=-1)
        return None
    text = "".join(text_of(node, data).split())
    module, _, rest = text.partition("::{")
    if rest:
        names = tuple(n.split("as")[0] for n in rest.rstrip("}").split(",") if n and "{" not in n)
    else:
        module, _, last = text.rpartition("::")
        names = (last.split(" as ")[0],) if module else ()
        module = module or text
    local = module.split("::", 1)[0] in ("crate", "self", "super")
    if module in ("crate", "self", "super") and len(names) == 1:  # `use super::util;`: the module util
        module, names = f"{module}::{names[0]}", ()
    return Import(module=module, names=tuple(n for n in names if n != "self"),
                  line=node.start_point[0] + 1, level=-1 if local else 0)


def _doc(comments: list[str]) -> str | None:
    docs = [c for c in comments if c.startswith(("///", "/**")) and not c.startswith(("////", "/**/"))]
    return doccomments.tagged([line for c in docs for line in doccomments.strip(c)]) if docs else None


RUST = Spec(language=Language.RUST, grammar=tree_sitter_rust.language, query="rust.scm", import_of=_import,
            name_parts=_name_parts, doc=_doc, comments=frozenset({"line_comment", "block_comment"}),
            attribute_types=frozenset({"attribute_item"}), bare=frozenset({"macro_definition"}),
            words={"function": "fn", "module": "mod", "macro": "macro_rules!"})
