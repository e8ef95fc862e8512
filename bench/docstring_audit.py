"""Docstrings of real projects as their pages show them: what is left raw, lost or misread.

    python bench/docstring_audit.py [--examples N] [--stride N] ROOT...

Every module, class and function docstring under each ROOT (read with `ast`) is rendered by
`repodoc_lsp.render.docstrings.docstring_markdown` and checked independently of the renderer's parse;
a docstring counts once under each defect it has:

- `raw-fields`: a field of any style left as a line of text: Sphinx (`:param x:`), epytext (`@param x:`),
  a Google section title (`Args:` over indented entries) or a NumPy one (`Parameters` over `-----`);
- `roles`: a reST role (`:class:`x``) or directive (`.. note::`) left as text;
- `epytext`: epytext markup (`C{x}`, `L{x}`, `I{x}`, `B{x}`, `U{x}`) left as text;
- `lost`: a word of the docstring missing from the Markdown (markup words aside);
- `structure`: the Markdown as CommonMark (markdown-it-py) reads it holds a heading, a rule, raw HTML or
  an indented code block, no fenced block where the docstring has a Markdown fence (```` ```py ````), or
  a paragraph with a line that was a list item in the docstring (a list swallowed into a paragraph).

Text inside code spans and fences is not looked at. Prints, per ROOT, the docstrings, each defect's
count and rate, and the first examples of each (`--examples`).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import warnings
from collections import Counter, defaultdict

from markdown_it import MarkdownIt

from repodoc_lsp.render.docstrings import docstring_markdown

_SPHINX_FIELD = re.compile(r"^\s*:(?:param|parameter|arg|argument|type|rtype|returns?|raises?|except|exception|ivar"
                           r"|var|cvar|vartype|keyword|kwarg|key|yields?)\b[^:\n]*:", re.M)
_EPY_FIELD = re.compile(r"^\s*@(?:param|type|returns?|rtype|raises?|ivar|cvar|var|keyword|see|since|note)\b[^:\n]*:",
                        re.M)
_GOOGLE = re.compile(r"^\s*(?:Args|Arguments|Parameters|Returns|Yields|Raises|Attributes|Keyword Args):\s*\n\s+\S",
                     re.M)
_NUMPY = re.compile(r"^\s*(?:Parameters|Returns|Yields|Raises|Attributes|Other Parameters)\s*\n\s*-{3,}\s*$", re.M)
_ROLE = re.compile(r":[a-z][\w:.+-]*:`[^`]+`")
_DIRECTIVE = re.compile(r"^\s*\.\. [\w:-]+::", re.M)
_EPY_MARKUP = re.compile(r"(?<![\w\\$])[CLIBU]\{[^{}]+\}")
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_FENCED = re.compile(r"^(```+|~~~+)[^\n]*\n.*?^\1\s*$", re.S | re.M)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[\w+-]*[ \t]*$", re.M)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S")
# Markup words (field and role names, epytext's markup letters, doctest flags) and what griffe rightly
# rewrites (a reST link's `_`, a type's `or` written `|`), in lower case
_MARKUP_WORDS = {"param", "parameter", "arg", "argument", "key", "keyword", "type", "rtype", "returns", "return",
                 "raises", "raise", "except", "exception", "yields", "yield", "ivar", "cvar", "var", "vartype",
                 "class", "func", "meth", "attr", "mod", "obj", "data", "exc", "ref", "math", "doc", "py", "note",
                 "warning", "seealso", "see", "deprecated", "versionadded", "versionchanged", "since", "code", "block",
                 "optional", "args", "arguments", "parameters", "attributes", "kwarg", "_", "__", "c", "l", "i", "b",
                 "u", "e", "lb", "rb", "const", "term", "envvar", "any", "sourcecode", "or", "returntype", "doctest",
                 "skip", "ellipsis", "normalize_whitespace", "blankline", "rst", "highlight"}
_MD = MarkdownIt("commonmark")


def _outside_code(md: str) -> str:
    """`md` without its fences and code spans (their text is code, not prose)."""
    return _CODE.sub(" ", _FENCED.sub("\n", md))


def _source_items(doc: str) -> set[str]:
    """The text of each list item of `doc` outside doctests and literal blocks, a few words of it."""
    items = set()
    for line in doc.splitlines():
        if _LIST_ITEM.match(line) and not line.lstrip().startswith((">>>", "...")):
            words = re.findall(r"\w+", line)[:4]
            if len(words) >= 2:
                items.add(" ".join(words))
    return items


def _structure(md: str, doc: str) -> str:
    """The first CommonMark problem of `md`, or ""."""
    tokens = _MD.parse(md)
    for t in tokens:
        if t.type in ("heading_open", "hr", "html_block", "code_block"):
            return t.type
        if t.type == "inline" and any(c.type == "html_inline" for c in t.children or ()):
            return "html_inline"
    if _FENCE_LINE.search(doc) and not any(t.type == "fence" for t in tokens):
        return "fence escaped"
    items = _source_items(doc)
    if not items:
        return ""
    for i, t in enumerate(tokens):
        if t.type != "inline" or i == 0 or tokens[i - 1].type != "paragraph_open":
            continue
        for line in t.content.split("\n")[1:]:
            if _LIST_ITEM.match(line.replace("\\", "")) and " ".join(re.findall(r"\w+", line)[:4]) in items:
                return "list swallowed"
    return ""


def _lost(doc: str, md: str) -> set[str]:
    words = set(re.findall(r"\w+", doc.lower())) - set(re.findall(r"\w+", md.lower()))
    return words - _MARKUP_WORDS


def audit(root: str, stride: int) -> tuple[int, Counter[str], dict[str, list[str]]]:
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))[::stride]
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    total = 0
    for path in files:
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                continue
            doc = ast.get_docstring(node)
            if not doc or not doc.strip():
                continue
            total += 1
            md = docstring_markdown(doc)
            prose = _outside_code(md)
            found = []
            if _SPHINX_FIELD.search(prose) or _EPY_FIELD.search(prose) or _GOOGLE.search(prose) \
                    or _NUMPY.search(prose):
                found.append("raw-fields")
            if _ROLE.search(prose) or _DIRECTIVE.search(prose):
                found.append("roles")
            if _EPY_MARKUP.search(prose):
                found.append("epytext")
            if _lost(doc, md):
                found.append("lost")
            if _structure(md, doc):
                found.append("structure")
            where = f"{os.path.relpath(path, root)}:{node.lineno if hasattr(node, 'lineno') else 1}"
            for kind in found:
                counts[kind] += 1
                examples[kind].append(where + (f" {sorted(_lost(doc, md))[:5]}" if kind == "lost" else
                                               f" ({_structure(md, doc)})" if kind == "structure" else ""))
    return total, counts, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--stride", type=int, default=1, help="every Nth file")
    parser.add_argument("--examples", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for root in args.roots:
        total, counts, examples = audit(root, args.stride)
        name = os.path.basename(root.rstrip("/"))
        rates = ", ".join(f"{k} {counts[k]} ({100 * counts[k] / max(total, 1):.1f}%)"
                          for k in ("raw-fields", "roles", "epytext", "lost", "structure"))
        print(f"{name}: {total} docstrings; {rates}")
        for kind in ("raw-fields", "roles", "epytext", "lost", "structure"):
            for e in examples[kind][:args.examples]:
                print(f"    {kind}: {e}")


if __name__ == "__main__":
    main()
