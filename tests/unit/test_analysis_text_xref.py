"""analysis.text (Markdown and text files -> headings and identifiers) and analysis.xref (what a
parsed Python file gives the symbol graph: attributes and the dotted names it reads)."""

from __future__ import annotations

import ast
from pathlib import Path

from repodoc_lsp.analysis import text, xref
from repodoc_lsp.analysis.model import Language, SymbolKind, refs_text
from repodoc_lsp.analysis.text import analyse_text

MARKDOWN = """# Guide

Prose with snake_case_word, camelCase, Plain words and `code_span Thing`.

## Install `pkg`

```python
# not a heading
inside_fence = 1
```

### Details ###

## Install `pkg`

# Other
"""


def test_markdown_headings_nest_with_unique_anchors() -> None:
    facts = analyse_text(MARKDOWN, Language.MARKDOWN)
    got = [(s.name, s.level, s.line, s.container, s.anchor) for s in facts.symbols]
    assert got == [
        ("Guide", 1, 1, "", "heading-guide"),
        ("Install `pkg`", 2, 5, "Guide", "heading-install-pkg"),
        ("Details", 3, 12, "Install `pkg`", "heading-details"),  # closing #s dropped
        ("Install `pkg`", 2, 14, "Guide", "heading-install-pkg-2"),  # the same title: its own anchor
        ("Other", 1, 16, "", "heading-other"),
    ]
    assert all(s.kind is SymbolKind.HEADING for s in facts.symbols)
    assert facts.lines == MARKDOWN.count("\n")


def test_markdown_identifiers_are_code_like_words_spans_and_fences() -> None:
    facts = analyse_text(MARKDOWN, Language.MARKDOWN)
    found = set(facts.identifiers)
    assert {"snake_case_word", "camelCase", "code_span", "Thing", "inside_fence"} <= found
    assert not {"Prose", "Plain", "words", "with", "python"} & found  # prose: code-like words only; no fence info
    assert facts.identifiers_total == len(facts.identifiers)


def test_text_files_keep_every_word_capped() -> None:
    words = [f"word{i:04d}" for i in range(text.MAX_IDENTIFIERS + 20)]
    facts = analyse_text(" ".join(reversed(words)) + " ab x\n", Language.TEXT)
    assert facts.symbols == ()
    assert facts.identifiers == tuple(words[: text.MAX_IDENTIFIERS])  # sorted, the first ones kept
    assert facts.identifiers_total == len(words)  # words of 3+ characters only ("ab", "x" are not)


def test_a_heading_without_words_gets_an_anchor_still() -> None:
    facts = analyse_text("# !!!\n\n# ???\n", Language.MARKDOWN)
    assert [s.anchor for s in facts.symbols] == ["heading-section", "heading-section-2"]


# -- xref ---------------------------------------------------------------------------------


def _module(source: str) -> tuple[ast.Module, list[str]]:
    return ast.parse(source), source.split("\n")


def test_assignments_bind_names_with_annotation_and_value() -> None:
    tree, lines = _module("LIMIT: int = 10\nA, B = 1, 2\nx = y = 'both'\nobj.attr = 3\n")
    found = [(a.name, a.container, a.line, a.annotation, a.value)
             for node in tree.body for a in xref.assigned(node, "", lines)]
    assert found == [("LIMIT", "", 1, "int", "10"), ("A", "", 2, "", ""), ("B", "", 2, "", ""),
                     ("x", "", 3, "", "'both'"), ("y", "", 3, "", "'both'")]  # unpacked: no value; attributes: none


def test_values_are_shortened_and_multi_line_ones_marked() -> None:
    long = "x = " + "+".join(["1"] * 60) + "\n"
    tree, lines = _module(long + "y = [\n    1,\n]\nz = 'caf\u00e9'\n")
    values = {a.name: a.value for node in tree.body for a in xref.assigned(node, "", lines)}
    assert len(values["x"]) == xref.MAX_TEXT and values["x"].endswith("…")
    assert values["y"] == "[ …"  # the first line of a value that spans several
    assert values["z"] == "'caf\u00e9'"  # offsets count UTF-8 bytes


def test_instance_attributes_are_self_assignments_anywhere_in_init() -> None:
    tree, lines = _module("class K:\n    def __init__(me, size):\n        me.size: int = size\n"
                          "        me.size = 2\n        other.x = 1\n        if size:\n            me.hidden = 1\n")
    init = tree.body[0].body[0]  # type: ignore[attr-defined]
    found = [(a.name, a.container, a.line, a.annotation, a.value, a.instance)
             for a in xref.instance_attributes(init, "K", lines)]
    # the first of each name, under an `if` too (issue 35: `Linear.bias`); `other.x` is not `me`'s
    assert found == [("size", "K", 3, "int", "size", True), ("hidden", "K", 7, "", "1", True)]
    tree, lines = _module("def __init__():\n    pass\n")
    assert xref.instance_attributes(tree.body[0], "K", lines) == []  # type: ignore[arg-type]


def _refs(tree: ast.AST, heads: set[str] | None) -> str:
    """`xref.references` as `FileFacts.refs` holds them (`refs_text`)."""
    return refs_text(xref.references(tree, heads))


def test_references_keep_names_bound_by_heads_with_their_lines() -> None:
    source = ("import os\nfrom pkg import mod\n\nos.path.join('a')\nmod.Thing()\n"
              "def f(local):\n    local.x = os.sep\n    return mod.Thing, a.b.c.d.e.f.g.h\nmod = None\n")
    tree = ast.parse(source)
    got = dict(line.rsplit(" ", 1) for line in _refs(tree, {"os", "mod", "a"}).split("\n"))
    assert got == {"os.path.join": "4", "mod.Thing": "5,8", "os.sep": "7", "a.b.c.d.e.f": "8"}  # MAX_CHAIN parts
    # a star import: any name; a chain assigned to reads its head (`local.x =`), a plain name
    # assigned to (`mod = None`, line 9) is not a read, nor are parameters and definitions
    assert _refs(tree, None).split("\n") == [
        "a.b.c.d.e.f 8", "local.x 7", "mod.Thing 5,8", "os.path.join 4", "os.sep 7"]
    assert xref.references(ast.parse("x = 1\n"), set()) == []


def _references_walked(tree: ast.AST, heads: set[str] | None) -> str:
    """`xref.references` written plainly over `ast.walk`: what the fast loop must equal."""
    found: dict[str, set[int]] = {}
    inside: set[int] = set()  # attributes and names within a chain already counted whole
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Attribute):
            parts, inner = [], node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inside.add(id(inner))
                inner = inner.value
            if isinstance(inner, ast.Name):
                inside.add(id(inner))
                if heads is None or inner.id in heads:
                    name = ".".join([inner.id, *reversed(parts)][: xref.MAX_CHAIN])
                    found.setdefault(name, set()).add(node.lineno)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store) and (heads is None or node.id in heads):
            found.setdefault(node.id, set()).add(node.lineno)
    return "\n".join(f"{name} {','.join(str(n) for n in sorted(lines))}" for name, lines in sorted(found.items()))


def test_references_equal_a_plain_walk_of_the_tree() -> None:
    """Every source file of this package, with the names each file binds at module level as heads
    and with any name (a star import)."""
    import repodoc_lsp

    root = Path(repodoc_lsp.__file__).parent
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        heads = {a.asname or a.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                 for a in node.names} | {"a"}
        for wanted in (heads, None):
            assert _refs(tree, wanted) == _references_walked(tree, wanted), path
    tree = ast.parse("a.b.c.d.e.f.g.h\na.b.c.d.e.f.g\nx = a\nf().a.b\na.b = a[a.c]\n" * 2)
    assert _refs(tree, {"a"}) == _references_walked(tree, {"a"}) == (
        "a 3,5,8,10\na.b 5,10\na.b.c.d.e.f 1,2,6,7\na.c 5,10")
    # fields holding values that are no nodes: `case True:`'s value, `{**d}`'s missing key
    tree = ast.parse("match a.b:\n    case True:\n        a.c\nx = {**a.d, 'k': a}\n")
    assert _refs(tree, {"a"}) == _references_walked(tree, {"a"}) == "a 4\na.b 1\na.c 3\na.d 4"
