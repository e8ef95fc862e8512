from __future__ import annotations

import pytest

from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.markdown import code, fence, href, inline, rel_link, size_human


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", "`plain`"), ("a`b", "``a`b``"), ("`x", "`` `x ``"), ("a\nb", "`a b`"), ("", "`  `"),
])
def test_code_span_holds_any_text(text: str, expected: str) -> None:
    assert code(text) == expected


def test_fence_is_longer_than_any_fence_inside() -> None:
    assert fence("a\n````\nb", "py") == "`````py\na\n````\nb\n`````"
    assert fence("x", "") == "```\nx\n```"
    assert fence("a\r  ~~~~~\nb") == "``````\na\r  ~~~~~\nb\n``````"  # tildes, after a lone CR, indented
    assert fence("a ```` b\n") == "```\na ```` b\n```"  # not at a line's start: no fence


def test_href_encodes_what_breaks_links() -> None:
    assert href("a b/c#d(1).py_docs.md", "class-X") == "a%20b/c%23d%281%29.py_docs.md#class-X"
    assert href("plain/path.md") == "plain/path.md"


def test_rel_link() -> None:
    assert rel_link("a/b/c.md", "a/d.md") == "../d.md"
    assert rel_link("a/b.md", "a/c.md") == "c.md"
    assert rel_link("index.md", "a/index.md") == "a/index.md"
    assert rel_link("/out/a/b.md", "/src/a/b.py") == "../../src/a/b.py"


def test_size_human() -> None:
    assert size_human(2520) == "2,520 bytes (2.46 KB)"
    assert size_human(52_428_800) == "52,428,800 bytes (50.00 MB)"
    assert size_human(12) == "12 bytes"


def test_inline_keeps_code_escapes_html_and_block_syntax() -> None:
    assert inline("use `a<b` not <b>") == "use `a<b` not &lt;b&gt;"
    assert inline("# not a heading") == "\\# not a heading"


def test_docstring_styles_become_markdown() -> None:
    google = "Sum.\n\nArgs:\n    x (int): first\n\nReturns:\n    int: the sum\n\nRaises:\n    ValueError: bad"
    assert docstring_markdown(google) == (
        "Sum.\n\n**Parameters**\n\n- `x` (`int`): first\n\n**Returns**: `int`: the sum\n\n"
        "**Raises**\n\n- `ValueError`: bad")
    numpy = "Sum.\n\nParameters\n----------\nx : int\n    first\n"
    assert "- `x` (`int`): first" in docstring_markdown(numpy)
    rest = "Sum.\n\n:param x: first\n:type x: int\n:returns: the sum\n"
    assert "- `x` (`int`): first" in docstring_markdown(rest)
    assert docstring_markdown("Example:\n\n>>> f(1)\n2") .count("```pycon") == 1
