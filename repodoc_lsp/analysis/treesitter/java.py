"""Java: classes, records, interfaces, enums, annotation types, methods, constructors, fields;
imports; Javadoc comments."""

from __future__ import annotations

import tree_sitter_java

from repodoc_lsp.analysis.model import Import, Language
from repodoc_lsp.analysis.treesitter import doccomments
from repodoc_lsp.analysis.treesitter.core import Node, Spec, text_of


def _import(node: Node, data: bytes) -> Import | None:
    path = text_of(node, data).strip()
    return Import(module=path, names=(), line=node.start_point[0] + 1) if path else None


# a definition inside one of these is local: a class in a method, an anonymous class's or an enum
# constant's body (its methods are not the enclosing class's)
_LOCAL = frozenset({"block", "constructor_body", "object_creation_expression", "enum_constant", "lambda_expression"})


def _lift(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None:
        if parent.type in _LOCAL:
            return None
        parent = parent.parent
    return node


def _doc(comments: list[str]) -> str | None:
    docs = [c for c in comments if c.startswith("/**")]
    return doccomments.docstring(docs[-1:]) if docs else None


JAVA = Spec(language=Language.JAVA, grammar=tree_sitter_java.language, query="java.scm", import_of=_import,
            lift=_lift, line_of_name=True,
            doc=_doc, comments=frozenset({"line_comment", "block_comment"}),
            words={"record_declaration": "record", "annotation_type_declaration": "@interface",
                   "constructor_declaration": "constructor"})
