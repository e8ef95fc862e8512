"""Go: functions, methods (their receiver's type is their container), structs, interfaces, type
definitions and aliases, struct fields; imports; doc comments (the `//` lines right above)."""

from __future__ import annotations

import tree_sitter_go

from repodoc_lsp.analysis.model import Import, Language
from repodoc_lsp.analysis.treesitter import doccomments
from repodoc_lsp.analysis.treesitter.core import Node, Spec, text_of


def _name_parts(node: Node, data: bytes) -> list[str]:
    name = text_of(node, data)
    method = node.parent
    if method is not None and method.type == "method_declaration":
        receiver = method.child_by_field_name("receiver")
        todo = [receiver] if receiver is not None else []
        while todo:  # the receiver's type name: `(s *Server[T])` -> Server
            current = todo.pop()
            if current.type == "type_identifier":
                return [text_of(current, data), name]
            todo.extend(reversed(current.named_children))
    return [name]


def _import(node: Node, data: bytes) -> Import | None:
    path = text_of(node, data).strip().strip('"`')
    return Import(module=path, names=(), line=node.start_point[0] + 1) if path else None


def _doc(comments: list[str]) -> str | None:
    lines = [line for c in comments for line in doccomments.strip(c)]
    return doccomments.tagged(lines)


GO = Spec(language=Language.GO, grammar=tree_sitter_go.language, query="go.scm", import_of=_import,
          name_parts=_name_parts, doc=_doc, wrappers=frozenset({"type_declaration"}),
          words={"function": "func", "method": "func"})
