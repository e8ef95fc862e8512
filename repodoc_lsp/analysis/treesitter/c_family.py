"""C, C++ and CUDA: functions (definitions and prototypes), classes, structs, unions, enums,
namespaces, typedefs and aliases, macros, fields; `#include`s; Doxygen comments.

Export and visibility macros that hide a definition from the grammar (`TORCH_API`, `C10_API`,
`__host__ __device__`) are blanked (same length: lines and columns stay) before parsing: `BLANK`,
set from the `blank_macros` setting.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

import re2
import tree_sitter_c
import tree_sitter_cpp

import repodoc_lsp.analysis.treesitter.doccomments as doccomments
from repodoc_lsp.analysis.model import Import, Language
from repodoc_lsp.analysis.treesitter.core import BLANK_MACROS_ENV as ENV
from repodoc_lsp.analysis.treesitter.core import Node, Spec, text_of

# the default of the `blank_macros` setting: `*_API`/`*_EXPORT`-style macros, CUDA's qualifiers, and
# deprecation attributes (`C10_DEPRECATED_MESSAGE("...")` before a member: the grammar reads no
# macro call there, and loses the class around it)
DEFAULT_BLANK = (r"\b(?:[A-Z][A-Z0-9_]*_(?:API|EXPORT|IMPORT|VISIBILITY|HIDDEN|EXTERN)(?:_ENUM)?)\b"
                 r"|\b[A-Z][A-Z0-9_]*_DEPRECATED(?:_MESSAGE|_MSG)?\s*\(\s*\"(?:[^\"\\]|\\.)*\"\s*\)"
                 r"|\b__(?:host|device|global|forceinline|noinline)__\b"
                 r"|\bC10_(?:HOST_DEVICE|DEVICE|HOST|ALWAYS_INLINE|NODISCARD|UNUSED|NOINLINE)\b")
@functools.cache
def _compiled(pattern: str) -> Any:
    """RE2 (linear time: the pattern may come from a workspace's pyproject.toml); None for none or a
    pattern RE2 rejects."""
    if pattern == "-":
        return None
    try:
        return re2.compile(pattern or DEFAULT_BLANK)
    except re2.error:
        return None


_NOT_NEWLINE = re.compile(r"[^\n]")
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(?:define|undef|ifn?def|if|elif)\b")


def blank(text: str) -> str:
    """`text` with what the pattern matches as spaces, but a macro's own `#define`, `#ifdef`...
    (so `#define TORCH_API ...` still defines `TORCH_API`)."""
    pattern = _compiled(os.environ.get(ENV, ""))
    if pattern is None:
        return text

    def spaces(match: Any) -> str:
        line = text.rfind("\n", 0, match.start()) + 1
        found = str(match.group(0))
        return found if _DIRECTIVE.match(text, line) else _NOT_NEWLINE.sub(" ", found)  # lines stay

    return str(pattern.sub(spaces, text))


_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator", "attributed_declarator",
                          "parenthesized_declarator"})
_HOLDERS = frozenset({"function_definition", "declaration", "field_declaration"})


def _lift(node: Node) -> Node | None:
    """A `function_declarator` -> the definition or prototype it declares (None: a function pointer,
    a parameter, a local declaration)."""
    if node.type != "function_declarator":
        return node
    parent = node.parent
    while parent is not None and parent.type in _DECLARATORS:
        parent = parent.parent
    if parent is None or parent.type not in _HOLDERS:
        return None
    if parent.type == "declaration" and parent.parent is not None and parent.parent.type == "compound_statement":
        return None
    return parent


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def _name_parts(node: Node, data: bytes) -> list[str]:
    if node.type == "operator_cast":  # `operator bool() const` -> `operator bool`
        target = node.child_by_field_name("type")
        return [f"operator {text_of(target, data)}" if target is not None else "operator"]
    text = text_of(node, data)
    if node.type in ("qualified_identifier", "template_function", "template_type", "nested_namespace_specifier"):
        while "<" in text and _TEMPLATE_ARGS.search(text):
            text = _TEMPLATE_ARGS.sub("", text)
        text = re.sub(r"\s+", "", text)
        return [p for p in text.split("::") if p] or [text]
    return [re.sub(r"\s+", " ", text)]


def _include(node: Node, data: bytes) -> Import | None:
    path = text_of(node, data).strip()
    if len(path) < 3 or path[0] not in "\"<":
        return None
    return Import(module=path[1:-1], names=(), line=node.start_point[0] + 1, level=-1)


def _doc(comments: list[str]) -> str | None:
    docs = [c for c in comments if doccomments.is_doc(c)]
    return doccomments.docstring(docs) if docs else None


_WORDS = {"macro": "#define", "type_definition": "typedef", "alias_declaration": "using"}
_COMMON = dict(import_of=_include, lift=_lift, name_parts=_name_parts, body_fields=("body", "value"),
               doc=_doc, trailing_doc=True, words=_WORDS, line_of_name=True)

C = Spec(language=Language.C, grammar=tree_sitter_c.language, query="c.scm", **_COMMON)  # type: ignore[arg-type]
CPP = Spec(language=Language.CPP, grammar=tree_sitter_cpp.language, query="cpp.scm",
           wrappers=frozenset({"template_declaration"}), **_COMMON)  # type: ignore[arg-type]


def _cuda_grammar() -> object:
    import tree_sitter_cuda

    return tree_sitter_cuda.language()


CUDA = Spec(language=Language.CUDA, grammar=_cuda_grammar, query="cpp.scm",
            wrappers=frozenset({"template_declaration"}), **_COMMON)  # type: ignore[arg-type]
