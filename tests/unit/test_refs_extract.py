"""What counts as a reference in Markdown, reST and docstrings (and what never does)."""

from __future__ import annotations

from repodoc_lsp.refs.extract import LINK, NAME, PATH, markdown_anchors, markdown_refs, rest_refs


def _texts(refs: list) -> list[tuple[str, str, int, int]]:
    return [(r.kind, r.text, r.line, r.col) for r in refs]


def test_markdown_code_spans_roles_links_and_paths() -> None:
    text = ("# Title\n\n"
            "Use `pkg.mod.Thing` and {class}`Other` and [the guide](docs/guide.md#setup).\n"
            "Files: `pkg/mod.py`; words: `--verbose`, `True`, `pip install x`, `a b`, `Thing`.\n\n"
            "```python\npkg.mod.Hidden()\n```\n\n"
            "    pkg.indented.Code\n\n"
            "<div>`pkg.html.Block`</div>\n\n"
            "[web](https://example.invalid/x) [page](api.html) [label](attrs.frozen) [self](#title)\n")
    assert _texts(markdown_refs(text)) == [
        (NAME, "pkg.mod.Thing", 3, 5), (NAME, "Other", 3, 32), (LINK, "docs/guide.md#setup", 3, 55),
        (PATH, "pkg/mod.py", 4, 8), (NAME, "True", 4, 42), (NAME, "Thing", 4, 74), (LINK, "#title", 14, 79)]
    refs = markdown_refs(text)
    assert refs[1].explicit and refs[1].role == "class" and not refs[0].explicit


def test_placeholders_and_file_names_are_not_names() -> None:
    assert markdown_refs("`attrs.Foo`, `mod.func()`, `setup.py`, `conf.py`\n") == []


def test_markdown_anchors_are_githubs_slugs_and_labels() -> None:
    text = "# The `repodoc` CLI!\n\n## Usage\n\n## Usage\n\n(my-label)=\n\n<a id=\"here\"></a>\n"
    assert markdown_anchors(text) == {"the-repodoc-cli", "usage", "usage-1", "my-label", "here"}


def test_rest_roles_literals_and_blocks() -> None:
    text = (".. currentmodule:: pkg.mod\n\n"
            "See :class:`Thing`, :meth:`~pkg.mod.Thing.run`, :func:`title <pkg.f>` and ``pkg.mod.Other``.\n"
            ":ref:`label` and :doc:`guide` are not names; `pkg.Default` is (the default role).\n\n"
            "Example::\n\n    pkg.literal.Block()\n\n"
            ".. code-block:: python\n\n    pkg.code.Block()\n\n"
            ">>> pkg.doctest.Line()\n\n"
            ".. autoclass:: pkg.mod.Thing\n"
            "   :members:\n\n"
            ".. a comment naming :class:`pkg.Commented`\n")
    refs = rest_refs(text)
    assert _texts(refs) == [
        (NAME, "Thing", 3, 12), (NAME, "pkg.mod.Thing.run", 3, 28), (NAME, "pkg.f", 3, 62),
        (NAME, "pkg.mod.Other", 3, 76), (NAME, "pkg.Default", 4, 46), (NAME, "pkg.mod.Thing", 16, 15)]
    assert all(r.module == "pkg.mod" for r in refs)
    assert [r.explicit for r in refs] == [True, True, True, False, False, True]


def test_positions_in_one_long_paragraph() -> None:
    """Each span and link found where it is written, in a paragraph of many: the name written as
    text before its span, spans across line breaks (markdown-it's text is not the source's),
    escaped and doubled backticks, a link in a block quote (positions computed here as the text
    is built)."""
    parts: list[str] = []
    expected: list[tuple[str, str, int, int]] = []

    def add(before: str, kind: str, name: str, written: str, after: str) -> None:
        text = "".join(parts) + before
        line, col = text.count("\n") + 1, len(text) - (text.rfind("\n") + 1)
        expected.append((kind, name, line, col))
        parts.append(before + written + after)

    parts.append("# Title\n\n")
    for i in range(300):
        add(f"Widget{i} and `", NAME, f"Widget{i}", f"Widget{i}", "`, ")
        add("then \\`not a span\\` and ``", NAME, f"pkg.mod.Double{i}", f"pkg.mod.Double{i}", "`` and `")
        add("", NAME, f"pkg.mod.Split{i}", f"pkg.mod.Split{i}", "`\n")  # the next one starts a line
        add(f"  see `pkg.mod.\nAcross{i}` (a space: no name) and `", NAME, f"Widget{i}", f"Widget{i}", "`, ")
        add("[x](", LINK, f"docs/page{i}.md", f"docs/page{i}.md", ") ok.\n")
    text = "".join(parts) + "\n> quoted `pkg.mod.Quoted` and [y](docs/q.md)\n"
    expected += [(NAME, "pkg.mod.Quoted", text.count("\n"), 10), (LINK, "docs/q.md", text.count("\n"), 34)]
    assert _texts(markdown_refs(text)) == expected


def test_rest_positions_on_one_long_line() -> None:
    line = "".join(f":class:`Thing{i}` and ``pkg.mod.L{i}`` and `pkg.D{i}` " for i in range(500))
    refs = rest_refs(line)
    assert len(refs) == 1500
    for ref in refs:
        assert line[ref.col:ref.col + len(ref.text)] == ref.text and ref.line == 1
