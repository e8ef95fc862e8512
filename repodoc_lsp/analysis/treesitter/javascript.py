"""JavaScript and TypeScript (and JSX/TSX): functions, classes, methods, interfaces, enums, type
aliases, namespaces, fields; `import`/`require`/`export ... from`; JSDoc comments."""

from __future__ import annotations

import tree_sitter_javascript
import tree_sitter_typescript

from repodoc_lsp.analysis.model import Import, Language
from repodoc_lsp.analysis.treesitter import doccomments
from repodoc_lsp.analysis.treesitter.core import Node, Spec, text_of


def _import(node: Node, data: bytes) -> Import | None:
    spec = text_of(node, data).strip()[1:-1]
    if not spec:
        return None
    relative = spec.startswith(".")
    return Import(module=spec, names=(), line=node.start_point[0] + 1, level=-1 if relative else 0)


def _name_parts(node: Node, data: bytes) -> list[str]:
    """`Layer.prototype.match` -> ["Layer", "match"]; `exports.f`, `module.exports.f` -> ["f"]."""
    if node.type != "member_expression":
        return [text_of(node, data)]
    parts = [p for p in "".join(text_of(node, data).split()).split(".") if p != "prototype"]
    for head in (["module", "exports"], ["exports"]):
        if parts[:len(head)] == head:
            return parts[len(head):]
    return parts


def _doc(comments: list[str]) -> str | None:
    docs = [c for c in comments if c.startswith("/**")]
    return doccomments.docstring(docs[-1:]) if docs else None


_WORDS = {"generator_function_declaration": "function*", "abstract_class_declaration": "abstract class",
          "internal_module": "namespace", "module": "module", "construct_signature": "constructor"}
# a function assigned at the top level (`app.handle = function`): its doc comment is above the statement;
# and one assigned to a variable (`const f = () => {}`) or passed (`defineGetter(req, 'ip', function ip() {})`)
_WRAPPERS = frozenset({"export_statement", "assignment_expression", "expression_statement", "variable_declarator",
                       "lexical_declaration", "variable_declaration", "arguments", "call_expression"})
_COMMON = dict(import_of=_import, doc=_doc, name_parts=_name_parts, wrappers=_WRAPPERS, words=_WORDS, doc_gap=True)
JAVASCRIPT = Spec(language=Language.JAVASCRIPT, grammar=tree_sitter_javascript.language,
                  query="javascript.scm", **_COMMON)  # type: ignore[arg-type]
TYPESCRIPT = Spec(language=Language.TYPESCRIPT, grammar=tree_sitter_typescript.language_typescript,
                  query="typescript.scm", **_COMMON)  # type: ignore[arg-type]
TSX = Spec(language=Language.TYPESCRIPT, grammar=tree_sitter_typescript.language_tsx,
           query="typescript.scm", **_COMMON)  # type: ignore[arg-type]
